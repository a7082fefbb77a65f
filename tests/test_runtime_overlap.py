"""The observer's overlap test (watch.overlap on events.span): element-exact for strided views,
checked against the bytes each view really covers."""

from __future__ import annotations

import itertools
import random

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("detachlint_runtime")

from detachlint_runtime.events import span as _span  # noqa: E402
from detachlint_runtime.watch import overlap  # noqa: E402


def covered(t) -> set:
    """The byte addresses of every element of ``t``, enumerated."""
    base = t.untyped_storage().data_ptr()
    size = t.element_size()
    out = set()
    for index in itertools.product(*(range(n) for n in t.shape)):
        start = (t.storage_offset() + sum(i * s for i, s in zip(index, t.stride()))) * size
        out.update(range(base + start, base + start + size))
    return out


def check(a, b) -> bool:
    got = overlap(_span(a), _span(b))
    assert got == overlap(_span(b), _span(a))
    assert got == bool(covered(a) & covered(b)), (a.shape, a.stride(), a.storage_offset(),
                                                   b.shape, b.stride(), b.storage_offset())
    return got


def test_column_chunks_of_a_row_major_tensor_do_not_overlap():
    gates = torch.zeros(5, 32)
    chunks = gates.unsafe_chunk(4, 1)  # what nn.LSTMCell does with its gates
    for a, b in itertools.combinations(chunks, 2):
        assert not check(a, b)
    assert check(chunks[1], gates) and check(chunks[2], gates[2])  # a chunk and its rows do
    assert check(chunks[0], gates[:, 7:9]) and not check(chunks[0], gates[:, 8:16])


def test_interleaved_views_and_truly_overlapping_ones():
    x = torch.zeros(6, 8)
    assert not check(x[:, 0::2], x[:, 1::2])  # interleaved columns
    assert not check(x[0::2], x[1::2])  # interleaved rows
    assert not check(x.t()[0], x.t()[1])  # columns through a transpose
    assert check(x[:, 0::2], x[:, 2::4])  # every 4th column is every other one too
    assert check(x[1:3, 1:3], x[2:4, 2:4])  # blocks sharing one element
    assert not check(x[0:2, 0:2], x[2:4, 2:4])
    assert check(x.diagonal(), x[:, 3])  # the diagonal meets column 3 at (3, 3)
    assert not check(x.diagonal(), x[0, 1:])
    assert check(x[0].expand(3, 8), x[0, 5])  # expand: stride 0 adds no memory
    assert not check(x[0].expand(3, 8), x[1])


def test_different_element_sizes_and_partial_bytes():
    raw = torch.zeros(16, dtype=torch.uint8)
    wide = raw.view(torch.int32)  # 4 elements of 4 bytes
    assert check(wide[1], raw[7]) and not check(wide[1], raw[8])
    assert check(wide[0::2], raw[8:9]) and not check(wide[0::2], raw[4:8])


def test_random_strided_views_match_the_bytes_they_cover():
    rng = random.Random(0)
    base = torch.zeros(200)
    for _ in range(400):
        views = []
        for _ in range(2):
            dims = rng.randint(1, 3)
            shape = [rng.randint(1, 4) for _ in range(dims)]
            strides = [rng.choice([0, 1, 2, 3, 5, 8, 13]) for _ in range(dims)]
            offset = rng.randint(0, 60)
            views.append(base.as_strided(shape, strides, offset))
        check(*views)

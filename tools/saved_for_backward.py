#!/usr/bin/env python3
"""Which ops save their result or their first input for backward, measured with the installed torch.

Each op is run on inputs that require grad under ``torch.autograd.graph.saved_tensors_hooks``; a
saved tensor that shares storage with the result (or with the first input) is what an in-place
write to it before ``backward()`` breaks ("one of the variables needed for gradient computation has
been modified by an inplace operation"). The answer is written, as data, to
``detachlint/analysis/saved_ops.py``, which rule TAL202 reads; ``tests/test_catalog.py`` runs
``measure()`` again and compares, so a torch that saves differently fails the test.

    python tools/saved_for_backward.py            # rewrite detachlint/analysis/saved_ops.py
    python tools/saved_for_backward.py --check    # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Dict, List, Tuple

OUT = Path(__file__).resolve().parents[1] / "detachlint" / "analysis" / "saved_ops.py"

# name -> how to call it on (x, other): one input, or two (``other`` a second tensor that does not
# require grad, so that what is saved is saved because of ``x`` alone: ``x * w`` saves ``x`` only
# when ``w`` requires grad, which a linter cannot know). Names are the member names of ``torch`` /
# ``torch.nn.functional`` / ``Tensor``.
UNARY = """
    sigmoid tanh exp expm1 exp2 log log1p log2 log10 sqrt rsqrt reciprocal sin cos tan asin acos
    atan sinh cosh asinh atanh erf erfc erfinv abs neg relu square sign trunc floor ceil round frac
    logit sinc digamma lgamma
""".split()
FUNCTIONAL_UNARY = """
    gelu silu mish softplus elu selu celu leaky_relu relu6 hardtanh hardswish hardsigmoid
    logsigmoid softsign tanhshrink
""".split()
DIM = "softmax log_softmax cumsum cumprod logsumexp".split()  # called with dim=-1
BINARY = "mul div matmul atan2 hypot pow maximum minimum add sub".split()


def _cases(torch) -> Dict[str, Callable]:
    F = torch.nn.functional
    cases: Dict[str, Callable] = {}
    for name in UNARY:
        cases[name] = lambda x, o, n=name: getattr(torch, n)(x)
    for name in FUNCTIONAL_UNARY:
        cases[name] = lambda x, o, n=name: getattr(F, n)(x)
    for name in DIM:
        cases[name] = lambda x, o, n=name: getattr(torch, n)(x, dim=-1)
    for name in BINARY:
        cases[name] = lambda x, o, n=name: getattr(torch, n)(x, o)
    cases["clamp"] = lambda x, o: torch.clamp(x, -0.5, 0.5)
    cases["linear"] = lambda x, o: F.linear(x, o)
    cases["normalize"] = lambda x, o: F.normalize(x, dim=-1)
    cases["layer_norm"] = lambda x, o: F.layer_norm(x, x.shape[-1:])
    return cases


def measure() -> Tuple[List[str], List[str]]:
    """(ops that save their result, ops that save their first input), sorted, when the first input
    requires grad and any other does not."""
    import torch

    result, first = [], []
    for name, op in sorted(_cases(torch).items()):
        x = (torch.rand(3, 3, dtype=torch.float64) + 0.5).requires_grad_()
        other = torch.rand(3, 3, dtype=torch.float64) + 0.5  # a constant: what x alone makes the op save
        saved: List[torch.Tensor] = []
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
            out = op(x, other)
        ptrs = {t.untyped_storage().data_ptr() for t in saved}
        if out.untyped_storage().data_ptr() in ptrs:
            result.append(name)
        if x.untyped_storage().data_ptr() in ptrs:
            first.append(name)
    return result, first


def render() -> str:
    import torch

    result, first = measure()

    def block(names: List[str]) -> str:
        lines, line = [], "   "
        for name in names:
            if len(line) + len(name) + 1 > 96:
                lines.append(line)
                line = "   "
            line += " " + name
        lines.append(line)
        return "\n".join(lines)

    version = torch.__version__.split("+")[0]
    return (f'"""Ops that save tensors for backward, measured with torch {version} by\n'
            '``tools/saved_for_backward.py`` (do not edit: run it again). Names are members of ``torch``,\n'
            '``torch.nn.functional`` or ``Tensor``; the first input required grad, any other did not."""\n\n'
            "# The op saves its result: writing the result in place before backward() raises there.\n"
            f'SAVES_RESULT = frozenset(\n    """\n{block(result)}\n    """.split()\n)\n\n'
            "# The op saves its first input: writing that input in place before backward() raises there.\n"
            f'SAVES_INPUT = frozenset(\n    """\n{block(first)}\n    """.split()\n)\n')


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only say whether the data file is up to date")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = OUT.read_text() if OUT.exists() else ""
        print("up to date" if current == text else f"{OUT} is out of date")
        return 0 if current == text else 1
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""TAL201/TAL301/TAL401 findings carry what reporters and the runtime companion need: a message
naming the other alias, related locations (origin, write, read) and a faithful signature."""

from __future__ import annotations

import textwrap

from detachlint.engine import lint_source
from detachlint.signature import Side

CODES = ["TAL201", "TAL301", "TAL401"]


def findings(source: str):
    return lint_source(textwrap.dedent(source), "t.py", CODES)


def full(f) -> str:
    """The message and its notes: the evidence a finding states (notes hold what the sentence leaves out)."""
    return " ".join((f.message, *f.notes))


def test_detach_conversion_chain_signature_and_related():
    (f,) = findings("""
        import torch

        def to_images(batch: torch.Tensor):
            images = batch.detach().cpu().float().numpy()
            images *= 255
            return images
    """)
    assert f.code == "TAL201" and f.severity.value == "error"
    assert "`batch`" in full(f) and "line 5" in full(f) and ".detach().clone()" in full(f)
    assert [(r.location.row, r.message) for r in f.related] == [
        (5, "`images` made here shares storage with `batch`"),
        (7, "`batch` still held by the caller"),
    ]
    assert f.signature.to_json() == {
        "rule": "TAL201", "ops": ["detach", "cpu", "float", "numpy", "mul_"],
        "source": {"parameter": True, "module_state": False, "pending_graph": False, "cpu_float": True,
                   "dtype": "float32"},
        "args": ["", "", "", "", "255"],  # each op's literal arguments, for the runtime's reproducer
    }


def test_pending_graph_makes_a_direct_detach_write_an_error():
    (f,) = findings("""
        import torch as T

        def step(x: T.Tensor, w: T.Tensor):
            loss = (x * w).sum()
            w.detach().mul_(0.5)
            loss.backward()
    """)
    assert f.code == "TAL201" and f.severity.value == "error"
    assert f.signature.source.pending_graph is True
    assert f.related[-1].location.row == 7


def test_stale_alias_names_the_alias_and_the_read():
    (f,) = findings("""
        from torch import Tensor

        def step_state(state: Tensor, delta: Tensor):
            prev = state
            state += delta
            return state - prev
    """)
    assert f.code == "TAL301" and f.location.row == 6
    assert "`prev`" in full(f) and "line 7" in full(f)
    assert [r.location.row for r in f.related] == [5, 7]
    assert f.signature.ops == ("alias", "add_") and f.signature.written is Side.SOURCE


def test_state_dict_snapshot_reported_at_the_snapshot_with_the_update():
    (f,) = findings("""
        import torch

        def fit(model, loader):
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            best = None
            for x, y in loader:
                loss = (model(x) - y).pow(2).mean()
                loss.backward()
                optimizer.step()
                if loss.item() < 0.1:
                    best = model.state_dict()
            model.load_state_dict(best)
    """)
    assert f.code == "TAL401" and f.location.row == 12
    assert "`optimizer.step()` (line 10)" in full(f) and "next iteration" in full(f)
    assert [r.location.row for r in f.related] == [10, 13]
    assert f.signature.ops == ("state_dict", "step") and f.signature.source.module_state is True


def test_unknown_stays_silent():
    assert findings("""
        def f(a, b):
            c = a
            a += b
            d = b.numpy()
            return c, d
    """) == []


TWO_STEPS = """\
import torch


class Trainer:
    def fit(self, loader):
        for batch in loader:
            self.d_opt.zero_grad()
            self.model(batch).sum().backward()
            self.d_opt.step()
            self.g_opt.zero_grad()
            self.model(batch).mean().backward()
            self.g_opt.step()
            if self.better():
                self.best = self.model.state_dict()
        return self.best
"""


def test_a_message_names_the_earliest_update_whatever_the_hash_seed():
    """Two updates reach the snapshot; the analysis finds them in an order that depends on where
    objects lie in memory. The message names the first in the code, in every process."""
    import subprocess
    import sys

    script = ("import sys; from detachlint.engine import lint_source; "
              "print([' '.join((f.message, *f.notes)) for f in lint_source(sys.stdin.read(), 't.py', ['TAL401'])])")
    messages = {subprocess.run([sys.executable, "-c", script], input=TWO_STEPS, capture_output=True, text=True,
                               env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)}, check=True).stdout
                for seed in range(6)}
    assert len(messages) == 1
    (message,) = messages
    assert "`self.d_opt.step()` (line 9)" in message

"""`detachlint run` verdicts on the shapes of issue 43: recurrent cells, two findings on one alias
line, writes meant to reach their views, hazards that must not be cleared, and the output a run
leaves unchanged. Each program runs plainly and under `detachlint run` (real torch, subprocess)."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

pytest.importorskip("torch")
pytest.importorskip("detachlint_runtime")

from test_runtime_run import own_lines, run  # noqa: E402


def observe(tmp_path, source: str, *options: str, name: str = "prog.py"):
    """(plain run, observed run, findings by (row, code)); stdout, exit status and the program's own
    stderr must be the same in both."""
    prog = tmp_path / name
    prog.write_text(textwrap.dedent(source).lstrip("\n"))
    plain = run([sys.executable, str(prog)], tmp_path)
    observed = run([sys.executable, "-m", "detachlint", "run", "--select", "ALL", *options, "--output", "r.json",
                    "--output-format", "json", str(prog)], tmp_path)
    assert observed.stdout == plain.stdout, (observed.stdout, plain.stdout, observed.stderr)
    assert observed.returncode == plain.returncode, observed.stderr
    assert own_lines(observed.stderr) == plain.stderr.rstrip("\n"), (observed.stderr, plain.stderr)
    report = json.loads((tmp_path / "r.json").read_text())
    return plain, observed, {(f["location"]["row"], f["code"]): f["confirmation"] for f in report}


def test_recurrent_cells_train_without_a_false_confirmation(tmp_path):
    # nn.LSTMCell / nn.GRUCell split their gates with unsafe_chunk and write the chunks in place:
    # column chunks of a row-major tensor share no element with what autograd saved of the others.
    plain, _, found = observe(tmp_path, """
        import torch
        from torch import nn
        torch.manual_seed(0)
        lstm, gru = nn.LSTMCell(4, 8), nn.GRUCell(4, 8)
        opt = torch.optim.SGD(list(lstm.parameters()) + list(gru.parameters()), lr=0.1)
        h = torch.zeros(5, 8)
        for step in range(3):
            x = torch.randn(5, 4)
            h, c = lstm(x)
            g = gru(x, h)
            opt.zero_grad()
            (h.pow(2).sum() + c.pow(2).sum() + g.pow(2).sum()).backward()
            opt.step()
        print(round(lstm.weight_ih.sum().item(), 4), round(gru.weight_hh.sum().item(), 4))
        """, "--watch", "all")
    assert plain.returncode == 0, plain.stderr
    assert not [c for c in found.values() if c["verdict"] == "confirmed"], found


def test_two_findings_on_one_alias_line_are_judged_separately(tmp_path):
    # `best` is read after its own source's write; `low`'s source is written too, but `low` is only
    # viewed (making a view is not a read) and the view is never read.
    _, _, found = observe(tmp_path, """
        import torch


        def pick(scores: torch.Tensor, other: torch.Tensor, use_low: bool):
            best, low = scores[0], other[0]
            scores.mul_(0.5)
            other.mul_(0.5)
            tail = low[1:]
            if use_low:
                return tail.sum()
            return best.sum()


        print(pick(torch.ones(2, 3), torch.ones(2, 3), False).item())
        """)
    best, low = found[(6, "TAL301")], found[(7, "TAL301")]
    assert best["verdict"] == "confirmed", best
    assert all("line 7" not in e for e in best["evidence"]), best
    assert low["verdict"] == "harmless-in-run", low
    assert "1 alias made here" in low["why"] and "1 changed by the other side" in low["why"], low

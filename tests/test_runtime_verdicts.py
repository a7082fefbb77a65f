"""`detachlint run` verdicts on the shapes of issue 43: recurrent cells, two findings on one alias
line, writes meant to reach their views, hazards that must not be cleared, and the output a run
leaves unchanged. Each program runs plainly and under `detachlint run` (real torch, subprocess)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

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
    assert best["verdict"] == "observed", best
    assert all("line 7" not in e for e in best["evidence"]), best
    assert low["verdict"] == "harmless-in-run", low
    assert "1 alias made here" in low["why"] and "1 changed by the other side" in low["why"], low


def test_each_alias_is_counted_for_the_finding_whose_alias_it_is(tmp_path):
    # Both findings' aliases are made on line 5; only `scores` is written. `other[0]` is the alias
    # of the finding that writes `other` (line 8, never ran): it is not one of line 6's aliases
    # (before: "2 aliases made here" for line 6's finding, one of them `low`).
    _, _, found = observe(tmp_path, """
        import torch


        def pick(scores: torch.Tensor, other: torch.Tensor, mode: str):
            best, low = scores[0], other[0]
            scores.mul_(0.5)
            if mode == "both":
                other.mul_(0.5)
            if mode == "best":
                return best.sum()
            if mode == "low":
                return low.sum()
            return scores.sum()


        print(pick(torch.ones(2, 3), torch.ones(2, 3), "neither").item())
        """)
    best = found[(6, "TAL301")]
    assert best["verdict"] == "harmless-in-run", best
    assert "1 alias made here, watched to the end (1 died)" in best["why"], best
    assert found[(8, "TAL301")]["verdict"] == "not-run"


# The corpus program whose buffer is written so that its views see it (eval/runtime/README.md).
WRITE_THROUGH = Path(__file__).resolve().parents[1] / "eval" / "runtime" / "programs" / "68_buffer_written_for_its_views.py"


def test_a_write_meant_to_reach_its_views_is_observed_not_confirmed(tmp_path):
    # The caller's accumulator is written so that its views see it: the read the findings describe
    # happens, and the program is right. `observed` says the first; `--fail-on confirmed` does not
    # fail it. (The accumulator comes from the caller: a constant-filled buffer made in the function
    # is taken statically as windows to fill, issue 41, and gets no finding.)
    plain, _, found = observe(tmp_path, WRITE_THROUGH.read_text(), "--fail-on", "confirmed")
    assert plain.stdout.endswith("truth: harmless\n") and plain.returncode == 0
    for row in (17, 20):
        assert found[(row, "TAL301")]["verdict"] == "observed", found
        assert "cannot tell" in found[(row, "TAL301")]["why"]
    strict = run([sys.executable, "-m", "detachlint", "run", "--select", "ALL", "--fail-on", "observed",
                  "prog.py"], tmp_path)
    assert strict.returncode == 1 and strict.stdout == plain.stdout, strict.stderr
    assert "TAL301 observed: `add_` at line 17 changed the alias made at line 14" in strict.stderr


def test_hazards_that_were_not_watched_to_the_end_are_not_cleared(tmp_path):
    _, _, found = observe(tmp_path, """
        import torch
        from torch import nn


        def tile(prior: torch.Tensor, n: int):
            grid = prior.expand(n, -1)
            first = grid[0]
            try:
                grid.mul_(2)
            except RuntimeError as exc:
                print("refused:", str(exc)[:40])
            return first.sum()


        def bump(prior: torch.Tensor, n: int):
            w = prior.data.expand(n, -1)
            try:
                w.add_(1)
            except RuntimeError as exc:
                print("refused:", str(exc)[:40])


        def counts_view(t: torch.Tensor):
            arr = t.numpy()
            t.add_(1)
            return arr


        def weights_before(m: nn.Module):
            before = m.weight.data
            return before


        print(tile(torch.ones(1, 3), 2).item())
        bump(torch.ones(1, 3, requires_grad=True), 2)
        print(counts_view(torch.zeros(3)).sum())  # the caller reads the NumPy alias
        model = nn.Linear(3, 1)
        start = weights_before(model)
        with torch.no_grad():
            model.weight.add_(1)
        print((model.weight - start).abs().sum().item())  # the caller reads the `.data` alias
        """)
    # writes through an `expand`ed alias raised: torch refused them, nothing was written
    for row in (9, 16):
        assert found[(row, "TAL301" if row == 9 else "TAL002")]["verdict"] == "confirmed", found
    assert "raised RuntimeError: unsupported operation" in found[(9, "TAL301")]["evidence"][0]
    numpy_alias = found[(25, "TAL301")]
    assert numpy_alias["verdict"] == "unobservable" and "NumPy array" in numpy_alias["why"], numpy_alias
    data_alias = found[(30, "TAL002")]
    assert data_alias["verdict"] == "unobservable" and "read afterwards" in data_alias["why"], data_alias


def test_output_and_run_counts_are_as_without_detachlint(tmp_path):
    # A warning given once per location inside a loop that calls a wrapped function (torch.tensor)
    # is printed once, as in the plain run (`observe` compares stderr); a statement over several
    # lines ran once per run whatever --select says.
    source = """
        import warnings

        import torch

        warnings.simplefilter("default")  # the tests run with PYTHONWARNINGS=ignore


        def scale(values: torch.Tensor, factor: float):
            warnings.warn("scale is deprecated")
            out = torch.tensor(
                values
            ) * factor
            view = values[0]
            values.mul_(
                factor
            )
            return out, view


        x = torch.ones(2)
        for _ in range(3):
            out, view = scale(x, 2.0)
        print(out.tolist())
        """
    plain, observed, found = observe(tmp_path, source)
    assert plain.stderr.count("scale is deprecated") == 2  # the warning and its source line, once
    assert found[(10, "TAL101")]["counts"]["ran"] == 3 and "line ran 3 times" in found[(10, "TAL101")]["why"]
    assert found[(14, "TAL301")]["counts"]["ran"] == 3
    _, _, alone = observe(tmp_path, source, "--select", "TAL101")
    assert alone[(10, "TAL101")]["counts"]["ran"] == 3


def test_the_confirm_cache_does_not_keep_a_verdict_from_a_missing_package(tmp_path):
    # An interpreter whose site-packages are this one's without numpy (symlinks), then with it: the
    # reproducer's `no-reproducer` (numpy is not installed) must not be served from the cache once
    # numpy is there.
    import sysconfig

    venv = tmp_path / "venv"
    subprocess_run = __import__("subprocess").run
    subprocess_run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    site = Path(subprocess_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    real = Path(sysconfig.get_paths()["purelib"])
    numpy = [e for e in real.iterdir() if e.name.split("-")[0].split(".")[0] in ("numpy", "numpy_libs")
             or e.name == "numpy.libs"]
    assert numpy, "numpy is installed where the tests run"
    for entry in real.iterdir():
        if entry not in numpy and not (site / entry.name).exists():
            (site / entry.name).symlink_to(entry)
    (tmp_path / "prog.py").write_text(textwrap.dedent("""\
        import torch


        def show(t: torch.Tensor):
            img = t.detach().cpu().numpy()
            img *= 255
            return img
        """))

    def confirm():
        out = subprocess_run([python, "-m", "detachlint", "check", "--select", "ALL", "--confirm",
                              "--confirm-backends", "eager", "--output-format", "json", "prog.py"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300)
        (finding,) = json.loads(out.stdout)
        return finding["confirmation"]

    without = confirm()
    assert without["verdict"] == "no-reproducer" and "numpy is not installed" in json.dumps(without), without
    for entry in numpy:
        (site / entry.name).symlink_to(entry)
    assert confirm()["verdict"] == "reproduced"

"""The line counter of `detachlint run` (torch-free): flagged lines are counted in every frame."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("detachlint_runtime")

PROGRAM = textwrap.dedent("""\
    def gen(n):
        for i in range(n):
            yield i * 2
    init = [x + 1 for x in range(3)]
    f = lambda v: v * 3
    total = sum(gen(4))
    vals = {i: f(i) for i in range(2)}
    def deco(fn):
        return fn
    @deco
    def g():
        return 1
    g(); g()
    def never():
        return 0
    def first(v):
        v.append(1)
    first([])
    """)
DRIVER = textwrap.dedent("""\
    import sys
    from detachlint_runtime.lines import LineCounter
    path, flagged, probes = sys.argv[1], {3, 4, 5, 7, 12, 15, 17}, sys.argv[2] == "probes"
    counter = LineCounter(lambda name: (path, flagged, {4}) if name == path else None, instrument=probes)
    events = []
    counter.on_flagged = lambda: events.append("on")
    counter.on_idle = lambda: events.append("off")
    counter.start()
    assert counter.active, counter.why_off
    code = counter.compile(open(path, "rb").read(), path)
    exec(code, {"__name__": "__main__"})
    tracing = sys.gettrace() is not None
    counter.stop()
    print(sorted(row for (_, row), n in counter.counts.items() if n), "on" in events, "off" in events)
    print({row: n for (_, row), n in sorted(counter.counts.items())}, "tracing" if tracing else "not-tracing")
    """)


def count(tmp_path, how: str):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    out = subprocess.run([sys.executable, str(driver), str(prog), how], capture_output=True, text=True, timeout=60,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_flagged_lines_are_counted_in_every_frame_and_only_there(tmp_path):
    first, _ = count(tmp_path, "trace")
    # generator body, comprehension, lambda, dict comprehension calling it, decorated function, a
    # function's first statement; not the function that never ran
    assert first.split() == ["[3,", "4,", "5,", "7,", "12,", "17]", "True", "True"], first


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the probes are for Python before 3.12")
def test_probes_count_what_the_trace_function_counts(tmp_path):
    """`detachlint run` before 3.12 compiles probes into the flagged statements (no trace function):
    the same runs of each row, the lambda's calls from another line included, a function's first
    statement (no docstring) too, and no tracer."""
    traced, probed = count(tmp_path, "trace"), count(tmp_path, "probes")
    assert probed[0] == traced[0]
    assert traced[1] == "{3: 4, 4: 1, 5: 3, 7: 1, 12: 2, 17: 1} tracing", traced
    assert probed[1] == "{3: 4, 4: 1, 5: 3, 7: 1, 12: 2, 17: 1} not-tracing", probed


def test_another_tracer_is_left_alone(tmp_path):
    if sys.version_info >= (3, 12):
        pytest.skip("sys.monitoring tools coexist with sys.settrace")  # the settrace fallback only
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent("""\
        import sys
        from detachlint_runtime.lines import LineCounter
        mine = lambda *a: None
        sys.settrace(mine)
        counter = LineCounter(lambda name: None)
        counter.start()
        print(counter.active, sys.gettrace() is mine, bool(counter.why_off))
        """))
    out = subprocess.run([sys.executable, str(driver)], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "True", "True"], out.stderr


def test_statements_over_several_lines_map_to_their_first_row():
    from detachlint_runtime.lines import statements

    source = textwrap.dedent("""\
        x = f(
            1,
        )
        y = 2
        for i in range(
                3):
            z = [
                i]
        """)
    # the call's rows (flagged: 2), the loop header's (flagged: 6); not a one-line statement, not the
    # comprehension whose rows hold nothing flagged
    assert statements(source, {2, 4, 6}) == {1: 1, 2: 1, 3: 1, 5: 5, 6: 5}

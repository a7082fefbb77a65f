"""Fuzzing the engine: generated programs and mutated real files never make it raise, and every
finding stays inside the file.

The suite runs a short fuzz (a few seconds). The long one is the same tests with more examples:

    DETACHLINT_FUZZ_EXAMPLES=2000 python -m pytest -q tests/test_fuzz.py
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from detachlint import runner
from detachlint.engine import lint_source
from detachlint.pipeline import Task, lint_bytes
from detachlint.findings import PARSE_ERROR_CODE

from test_robustness import ALL, assert_inside

ROOT = Path(__file__).parents[1]
EXAMPLES = int(os.environ.get("DETACHLINT_FUZZ_EXAMPLES", "15"))
SEEDS = sorted((ROOT / "tests" / "fixtures").glob("*.py")) + [ROOT / "demo" / "train.py"]
TEXTS = [p.read_text(encoding="utf-8") for p in SEEDS]

FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("DETACHLINT_FUZZ_EXAMPLES"),
                suppress_health_check=list(HealthCheck))


def lint_checked(source: str):
    findings = lint_source(source, "fuzz.py", ALL)
    assert_inside(findings, source)
    # With the pre-check off the findings are the same (the pre-check is sound on this input too),
    # and so they are without the screen on the tree built from Python's.
    assert findings == lint_source(source, "fuzz.py", ALL, precheck=False)
    assert findings == lint_source(source, "fuzz.py", ALL, screen=False)
    return findings


@FUZZ
@given(hypothesmith.from_grammar())
def test_generated_programs(source):
    lint_checked(source)


@FUZZ
@given(hypothesmith.from_node())
def test_generated_syntax_trees(source):
    lint_checked(source)


def _mutate(text: str, kind: str, rng: random.Random) -> str:
    n = len(text)
    if kind == "truncate":
        return text[: rng.randrange(n + 1)]
    if kind == "delete":
        out = text
        for _ in range(rng.randint(1, 8)):
            if not out:
                break
            i = rng.randrange(len(out))
            out = out[:i] + out[i + rng.randint(1, 20):]
        return out
    lines = text.splitlines(keepends=True)
    if kind == "indent":
        for _ in range(rng.randint(1, 6)):
            i = rng.randrange(len(lines))
            lines[i] = " " * rng.randint(0, 12) + lines[i].lstrip(" ")
        return "".join(lines)
    if kind == "tabs":
        return "".join(line.replace("    ", "\t", 1) if rng.random() < 0.3 else line for line in lines)
    if kind == "long_line":
        i = rng.randrange(len(lines))
        return "".join(lines[:i]) + "x = " + " + ".join(["p.data"] * rng.randint(100, 3000)) + "\n" + "".join(lines[i:])
    if kind == "nesting":
        depth = rng.choice([50, 150, 300, 1000, 10000])
        opener, closer = rng.choice([("(", ")"), ("[", "]"), ("{", "}"), ("f(", ")")])
        i = rng.randrange(len(lines))
        return "".join(lines[:i]) + "y = " + opener * depth + "p" + closer * depth + "\n" + "".join(lines[i:])
    if kind == "splice":
        a, b = sorted(rng.randrange(n + 1) for _ in range(2))
        other = rng.choice(TEXTS)
        c = rng.randrange(len(other) + 1)
        return text[:a] + other[c:c + (b - a)] + text[b:]
    if kind == "bytes":
        chars = list(text)
        for _ in range(rng.randint(1, 10)):
            chars[rng.randrange(len(chars))] = rng.choice(["\x0c", "\\", "'", '"', "\u00e9", "\ufeff", "#", ":", "\r"])
        return "".join(chars)
    raise AssertionError(kind)


KINDS = ["truncate", "delete", "indent", "tabs", "long_line", "nesting", "splice", "bytes"]


@FUZZ
@given(st.sampled_from(range(len(TEXTS))), st.sampled_from(KINDS), st.integers(0, 2**32 - 1))
def test_mutated_real_files(index, kind, seed):
    source = _mutate(TEXTS[index], kind, random.Random(seed))
    lint_checked(source)


@FUZZ
@given(st.binary(max_size=400), st.sampled_from(range(len(TEXTS))), st.integers(0, 2**32 - 1))
def test_random_bytes_spliced_into_real_files(junk, index, seed):
    data = TEXTS[index].encode()
    i = random.Random(seed).randrange(len(data) + 1)
    mutated = data[:i] + junk + data[i:]
    findings = lint_bytes(mutated, "fuzz.py", ALL)
    if findings and findings[0].code != PARSE_ERROR_CODE:
        assert_inside(findings, mutated.decode("utf-8", "replace"))


def test_the_run_continues_past_bad_files(tmp_path):
    rng = random.Random(7)
    tasks = []
    for i in range(12):
        path = tmp_path / f"f{i:02}.py"
        text = TEXTS[i % len(TEXTS)]
        path.write_text(text if i % 3 == 0 else _mutate(text, KINDS[i % len(KINDS)], rng), encoding="utf-8")
        tasks.append(Task(str(path), path.name, frozenset(ALL)))
    results = runner.run(tasks, jobs=2)
    assert all(r.internal_error is None for r in results)
    for i, result in enumerate(results):
        if i % 3 == 0:  # the intact files keep all their findings
            assert result.findings == lint_source(TEXTS[i % len(TEXTS)], f"f{i:02}.py", ALL)

"""The parallel runner and its cache: same findings as the engine, stable order, safe cache."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from detachlint import runner
from detachlint.cache import Cache
from detachlint.files import file_digest
from detachlint.config import parse_size
from detachlint.findings import PARSE_ERROR_CODE, finding_from_dict, finding_to_dict
from detachlint.pipeline import Task, lint_path
from detachlint.rules import ALL_RULES

ROOT = Path(__file__).parents[1]
FIXTURES = sorted((ROOT / "tests" / "fixtures").glob("*.py")) + [ROOT / "demo" / "train.py"]
ALL = frozenset([r.code for r in ALL_RULES] + [PARSE_ERROR_CODE])


def _tasks(paths, codes=ALL):
    return [Task(str(p), p.name, codes) for p in paths]


def _expected(paths, codes=ALL):
    return [lint_path(p, codes, p.name) for p in paths]


def test_findings_roundtrip_losslessly():
    findings = [f for p in FIXTURES for f in lint_path(p, ALL, p.name)]
    assert any(f.fix for f in findings) and any(f.related for f in findings)
    for f in findings:
        back = finding_from_dict(json.loads(json.dumps(finding_to_dict(f))))
        assert back == f
        assert back.signature == f.signature


@pytest.mark.parametrize("jobs", [1, 2])
def test_same_findings_in_input_order(jobs):
    paths = list(reversed(FIXTURES))  # not sorted: the result order must follow the input
    results = runner.run(_tasks(paths), jobs=jobs)
    assert [r.findings for r in results] == _expected(paths)


def test_cache_hits_return_the_same_findings(tmp_path):
    cache = tmp_path / "cache"
    first = runner.run(_tasks(FIXTURES), jobs=2, cache_dir=cache)
    stats = runner.RunStats()
    second = runner.run(_tasks(FIXTURES), jobs=2, cache_dir=cache, stats=stats)
    assert [r.findings for r in first] == [r.findings for r in second] == _expected(FIXTURES)
    assert stats.cache_hits == len(FIXTURES)
    assert (cache / ".gitignore").read_text().strip().splitlines()[-1] == "*"


def test_cache_key_follows_content_codes_and_name(tmp_path):
    cache = Cache(tmp_path)
    a, b = file_digest(b"a"), file_digest(b"b")
    key = cache.key("x.py", frozenset({"TAL001"}), "", a)
    assert key != cache.key("x.py", frozenset({"TAL001"}), "", b)
    assert key != cache.key("x.py", frozenset({"TAL001", "TAL002"}), "", a)
    assert key != cache.key("y.py", frozenset({"TAL001"}), "", a)
    assert key != cache.key("x.py", frozenset({"TAL001"}), "strict", a)
    assert key == Cache(tmp_path).key("x.py", frozenset({"TAL001"}), "", a)


def test_corrupt_entries_are_misses_and_get_rewritten(tmp_path):
    cache_dir = tmp_path / "cache"
    runner.run(_tasks(FIXTURES[:2]), jobs=1, cache_dir=cache_dir)
    (pack,) = cache_dir.glob("lint-*.json")  # one file for every entry
    entries = json.loads(pack.read_text())
    assert len(entries) == 2
    first, second = sorted(entries)
    entries[first] = [{"code": "TAL001"}]  # an entry this version did not write
    entries[second] = "garbage"
    pack.write_text(json.dumps(entries))

    def hits(jobs: int) -> int:
        stats = runner.RunStats()
        results = runner.run(_tasks(FIXTURES[:2]), jobs=jobs, cache_dir=cache_dir, stats=stats)
        assert [r.findings for r in results] == _expected(FIXTURES[:2])
        return stats.cache_hits

    assert hits(1) == 0
    assert hits(1) == 2  # rewritten
    pack.write_bytes(b'{"findings": [{"code": ')  # a truncated file: every entry a miss
    assert hits(2) == 0
    assert hits(2) == 2
    assert len(json.loads(pack.read_text())) == 2


def test_a_run_keeps_the_entries_another_run_saved_meanwhile(tmp_path):
    """Every entry lives in one file: a run saves its own entries with those on disk when it
    saves, not with those it read when it started."""
    first, second = Cache(tmp_path), Cache(tmp_path)
    assert first.get("a") is None and second.get("b") is None  # both have read the (empty) file
    finding = _expected(FIXTURES[:1])[0][0]
    first.put("a", [finding])
    first.save()
    second.put("b", [])
    second.save()
    again = Cache(tmp_path)
    assert again.get("a") == [finding] and again.get("b") == []


def test_unwritable_cache_does_not_fail_the_run(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    results = runner.run(_tasks(FIXTURES[:1]), jobs=1, cache_dir=blocker / "cache")
    assert [r.findings for r in results] == _expected(FIXTURES[:1])


_CONCURRENT = """
import sys
from pathlib import Path
from detachlint import runner
from detachlint.pipeline import Task
paths = [Path(p) for p in sys.argv[2:]]
for _ in range(3):
    res = runner.run([Task(str(p), p.name, None) for p in paths], jobs=2, cache_dir=sys.argv[1])
print(sum(len(r.findings) for r in res), sum(1 for r in res if r.internal_error))
"""


def test_two_processes_sharing_a_cache(tmp_path):
    cache = tmp_path / "cache"
    cmd = [sys.executable, "-c", _CONCURRENT, str(cache), *map(str, FIXTURES)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    expected = sum(len(f) for f in (lint_path(p, None, p.name) for p in FIXTURES))
    assert [o[0].split() for o in outs] == [[str(expected).encode(), b"0"]] * 2
    assert not list(cache.rglob("*.part"))


def test_file_over_the_size_limit_is_skipped_with_a_notice(tmp_path):
    big = tmp_path / "big.py"
    big.write_text("x = 1\n" * 1000)
    small = tmp_path / "small.py"
    small.write_text("import torch\nt = torch.tensor(torch.ones(2))\n")
    tasks = [Task(str(big), "big.py", None, max_file_size=1000),
             Task(str(small), "small.py", None, max_file_size=1000)]
    big_result, small_result = runner.run(tasks, jobs=1)
    assert big_result.findings == [] and "max-file-size" in big_result.skipped
    assert [f.code for f in small_result.findings] == ["TAL101"]


@pytest.mark.parametrize("text, expected", [(0, 0), (123, 123), ("10MB", 10 << 20), ("512kb", 512 << 10),
                                            ("1.5M", int(1.5 * (1 << 20))), ("2G", 2 << 30), ("77", 77)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", [-1, "ten", "-5MB", True, None, 1.5])
def test_parse_size_rejects(bad):
    with pytest.raises(ValueError):
        parse_size(bad)


def test_an_internal_error_in_one_file_does_not_stop_the_run(tmp_path, monkeypatch):
    import detachlint.engine as engine

    real = engine.lint_source

    def flaky(source, filename, codes=None, **options):
        if filename == "boom.py":
            raise RuntimeError("rule bug")
        return real(source, filename, codes, **options)

    monkeypatch.setattr(engine, "lint_source", flaky)
    boom = tmp_path / "boom.py"
    boom.write_text("import torch\n")
    tasks = [Task(str(boom), "boom.py", None), *_tasks(FIXTURES[:1], None)]
    first, second = runner.run(tasks, jobs=1)
    assert first.internal_error == "RuntimeError: rule bug"
    assert second.findings == _expected(FIXTURES[:1], None)[0]


def test_a_run_with_an_internal_error_does_not_say_all_checks_passed(tmp_path, monkeypatch, capsys):
    """The file an internal error stopped was not checked: exit 2, and the summary says so."""
    import detachlint.engine as engine
    from detachlint.cli import main

    real = engine.lint_source

    def flaky(source, filename, codes=None, **options):
        if filename.endswith("boom.py"):
            raise RuntimeError("rule bug")
        return real(source, filename, codes, **options)

    monkeypatch.setattr(engine, "lint_source", flaky)
    (tmp_path / "boom.py").write_text("import torch\n")
    (tmp_path / "fine.py").write_text("x = 1\n")
    code = main(["check", "--no-cache", "--jobs", "1", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 2 and "internal error while checking" in err and "RuntimeError: rule bug" in err
    assert "All checks passed!" not in out
    assert "No findings in the files checked; 1 file could not be checked (see above)." in out


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="injecting a crash needs fork")
def test_a_crashing_worker_costs_only_its_file(tmp_path, monkeypatch):
    real = runner.lint_file

    def crashing(task, cache, fix, indexes):
        if task.display == "crash.py":
            os._exit(3)  # as a segfault in native code would
        return real(task, cache, fix, indexes)

    monkeypatch.setattr(runner, "lint_file", crashing)
    crash = tmp_path / "crash.py"
    crash.write_text("import torch\n")
    tasks = [*_tasks(FIXTURES[:2], None), Task(str(crash), "crash.py", None), *_tasks(FIXTURES[2:4], None)]
    results = runner.run(tasks, jobs=2)
    assert [f.code for f in results[2].findings] == [PARSE_ERROR_CODE]
    assert "crashed" in results[2].findings[0].message
    others = [r.findings for i, r in enumerate(results) if i != 2]
    assert others == _expected(FIXTURES[:2] + FIXTURES[2:4], None)


def test_discovery_errors_become_findings_when_wanted():
    task = Task("loop.py", "loop.py", None, error="symlink loop")
    (result,) = runner.run([task], jobs=1)
    assert [f.message for f in result.findings] == ["symlink loop"]
    (quiet,) = runner.run([Task("loop.py", "loop.py", frozenset({"TAL001"}), error="x")], jobs=1)
    assert quiet.findings == []


def test_a_run_the_cache_serves_whole_imports_no_parser(tmp_path):
    """LibCST is a third of such a run's time: the cached run reads the registry's data, the
    file cache and the remembered digest of the project index, and prints the findings; nor does
    it import what starting workers needs, or the runtime companion's runner (its options alone)."""
    import subprocess
    import sys

    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("")
    (project / "train.py").write_text(FIXTURES[0].read_text(encoding="utf-8"), encoding="utf-8")
    script = ("import sys\nfrom detachlint.cli import main\nrc = main(['check', sys.argv[1], '--cache-dir', sys.argv[2],"
              " '--output-format', 'full', '--exit-zero'])\n"
              "print([m for m in ('libcst', 'multiprocessing', 'concurrent.futures', 'detachlint_runtime.runner')\n"
              "       if m in sys.modules], rc)\n")
    runs = [subprocess.run([sys.executable, "-c", script, str(project), str(tmp_path / "cache")],
                           capture_output=True, text=True, timeout=120) for _ in range(2)]
    assert [r.stdout.splitlines()[-1] for r in runs] == ["['libcst'] 0", "[] 0"]
    assert runs[0].stdout.splitlines()[:-1] == runs[1].stdout.splitlines()[:-1] and "TAL" in runs[0].stdout


# --- file stamps: a warm run reads no unchanged file ---------------------------------------------

FLAGGED = "import torch\n\n\ndef f(w: torch.Tensor):\n    w.data.add_(1)\n    return w\n"
CLEAN = "import torch\n\n\ndef f(w: torch.Tensor):\n    w22 = w.add(1)\n    return w\n"  # same size


def _aged(path, seconds=3600):
    """Modified an hour ago: out of the window in which a stat cannot be trusted (racily clean)."""
    then = path.stat().st_mtime_ns - seconds * 10**9
    os.utime(path, ns=(then, then))


def _check(project, cache, capsys):
    from detachlint.cli import main

    rc = main(["check", str(project), "--cache-dir", str(cache), "--jobs", "1", "--output-format", "concise"])
    return rc, capsys.readouterr().out


def _project(tmp_path, text):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("")
    for name in ("a.py", "b.py"):
        (project / name).write_text(text)
        _aged(project / name)
    return project


def test_a_warm_run_reads_no_unchanged_file(tmp_path, capsys, monkeypatch):
    project = _project(tmp_path, FLAGGED)
    first = _check(project, tmp_path / "cache", capsys)
    assert first[0] == 1 and first[1].count("TAL003") == 2
    reads = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(self.name) or real(self))
    assert _check(project, tmp_path / "cache", capsys) == first
    assert reads == []


def test_a_rewrite_that_keeps_size_and_mtime_is_read_again(tmp_path, capsys):
    project = _project(tmp_path, FLAGGED)
    assert _check(project, tmp_path / "cache", capsys)[1].count("TAL003") == 2
    target = project / "a.py"
    st = target.stat()
    target.write_text(CLEAN)  # the same size; the mtime put back: the ctime (or inode) differs
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert target.stat().st_size == st.st_size and target.stat().st_mtime_ns == st.st_mtime_ns
    rc, out = _check(project, tmp_path / "cache", capsys)
    assert out.count("TAL003") == 1 and "b.py" in out and "a.py" not in out


def test_a_file_modified_just_now_is_not_remembered(tmp_path):
    from detachlint.cache import FileStamps

    path = tmp_path / "m.py"
    path.write_text(FLAGGED)
    stamps = FileStamps(tmp_path / "cache")
    stamps.put(str(path), path.stat(), file_digest(path.read_bytes()), True)
    assert stamps.get(str(path), path.stat()) is None  # a second write this instant could keep the stat
    _aged(path)
    stamps.put(str(path), path.stat(), file_digest(path.read_bytes()), True)
    stamps.save()
    again = FileStamps(tmp_path / "cache")
    assert again.get(str(path), path.stat()) == (file_digest(FLAGGED.encode()), True)
    path.write_text(CLEAN)
    assert again.get(str(path), path.stat()) is None


def test_the_index_reads_a_rewritten_file_again(tmp_path):
    """The project index takes unchanged files from the stamps, and a rewritten one from disk."""
    from detachlint.cache import FileStamps
    from detachlint.config import SettingsResolver
    from detachlint.pipeline import build_project

    project = _project(tmp_path, FLAGGED)
    cache = tmp_path / "cache"

    def keys():
        stamps = FileStamps(cache)
        index = build_project(project, SettingsResolver(), cache, stamps=stamps)
        stamps.save()
        return index.keys

    first = keys()
    assert keys() == first
    target = project / "b.py"
    st = target.stat()
    target.write_text(CLEAN)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    second = keys()
    assert second["a"] == first["a"] and second["b"] != first["b"]


def test_a_corrupt_stamps_file_is_read_as_unknown(tmp_path, capsys):
    project = _project(tmp_path, FLAGGED)
    cache = tmp_path / "cache"
    first = _check(project, cache, capsys)
    stamps = next(cache.glob("stamps-*.json"))
    entries = json.loads(stamps.read_text())
    assert len(entries) == 2
    for i, entry in enumerate(entries.values()):
        entry[4:] = [None, "yes"] if i else [{"not": "a digest"}, True]
    stamps.write_text(json.dumps(entries))
    assert _check(project, cache, capsys) == first
    stamps.write_text("[not json")
    assert _check(project, cache, capsys) == first

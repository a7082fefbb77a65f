"""Pattern mode's safety: isolated workers and a cache that is never trusted as found."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("detachlint_runtime")

from detachlint_runtime import Confirmer  # noqa: E402
from detachlint_runtime.runner import RECIPE_MODULES_ENV  # noqa: E402

SIG = {"rule": "TAL103", "ops": ["Tensor"]}


def test_project_local_modules_never_run_in_the_worker(tmp_path, monkeypatch):
    """A json.py (and a torch.py) in the working directory or on PYTHONPATH is not what the worker imports."""
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "ran"
    for name in ("json", "torch", "numpy"):
        (project / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("PYTHONPATH", str(project))
    confirmer = Confirmer(cache_dir=None, backends=("eager",), devices=("cpu",))
    (result,) = confirmer.confirm([SIG])
    assert result["verdict"] == "reproduced", result["summary"]
    assert not marker.exists(), marker.read_text()


def test_hand_edited_or_foreign_cache_entries_are_recomputed(tmp_path):
    first = Confirmer(cache_dir=tmp_path, backends=("eager",), devices=("cpu",))
    (original,) = first.confirm([SIG])
    assert first.reproductions == 1
    (entry,) = (tmp_path / "runtime").rglob("*.json")
    data = json.loads(entry.read_text())
    assert data["checksum"] and data["fingerprint"] and data["torch"]

    data["result"]["status"] = "not-reproduced"  # a hand edit: the checksum no longer matches
    data["result"]["seen"] = "copy"
    entry.write_text(json.dumps(data))
    again = Confirmer(cache_dir=tmp_path, backends=("eager",), devices=("cpu",))
    (result,) = again.confirm([SIG])
    assert again.reproductions == 1 and again.cache.rejected == 1
    assert result["verdict"] == original["verdict"] == "reproduced"

    entry.write_text("{ truncated")  # a corrupt file
    third = Confirmer(cache_dir=tmp_path, backends=("eager",), devices=("cpu",))
    assert third.confirm([SIG])[0]["verdict"] == "reproduced" and third.reproductions == 1

    fourth = Confirmer(cache_dir=tmp_path, backends=("eager",), devices=("cpu",))  # now valid again: a hit
    fourth.confirm([SIG])
    assert fourth.reproductions == 0 and fourth.cache_hits == 1


def test_recipe_modules_from_the_environment_are_part_of_the_key(tmp_path, monkeypatch):
    extra = tmp_path / "extra_recipes.py"
    extra.write_text("from detachlint_runtime.recipes import recipe, reproduced\n\n"
                     "@recipe('TEST950')\ndef r(sig, config):\n    return reproduced('one', 'version one')\n")
    monkeypatch.setenv(RECIPE_MODULES_ENV, str(extra))
    sig = {"rule": "TEST950", "ops": []}
    one = Confirmer(cache_dir=tmp_path / "cache", backends=("eager",), devices=("cpu",))
    assert one.confirm([sig])[0]["configurations"][0]["hazard"] == "one"
    st = extra.stat()
    extra.write_text(extra.read_text().replace("'one', 'version one'", "'two', 'version two'"))
    os.utime(extra, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same mtime: an edit within the second
    two = Confirmer(cache_dir=tmp_path / "cache", backends=("eager",), devices=("cpu",))
    assert two.confirm([sig])[0]["configurations"][0]["hazard"] == "two"  # not the cached "one"
    assert two.reproductions == 1
    assert not (tmp_path / "__pycache__").exists()  # nothing written beside the user's file


def test_a_recipe_that_raises_is_no_reproducer_with_the_error(tmp_path):
    extra = tmp_path / "broken.py"
    extra.write_text("from detachlint_runtime.recipes import recipe\n\n"
                     "@recipe('TEST951')\ndef r(sig, config):\n    raise TypeError('as_strided() missing 2 arguments')\n")
    confirmer = Confirmer(cache_dir=None, backends=("eager",), devices=("cpu",), recipe_modules=(str(extra),))
    (result,) = confirmer.confirm([{"rule": "TEST951", "ops": []}])
    assert result["verdict"] == "no-reproducer"
    assert "TypeError: as_strided() missing 2 arguments" in result["configurations"][0]["observed"]


def test_every_rule_with_a_pattern_has_its_runtime_module():
    """One module per rule code (``detachlint_runtime/rules/talXXX.py``) holds its recipe, its verdict
    wording and what the observer watches for it; the noqa rules (TAL9xx) have no pattern."""
    from detachlint.rules import ALL_RULES
    from detachlint_runtime.rules import RULES

    assert set(RULES) == {r.code for r in ALL_RULES if not r.code.startswith("TAL9")}
    for code, rule in RULES.items():
        assert rule.code == code and rule.recipe.__module__ == f"detachlint_runtime.rules.{code.lower()}"
        assert rule.harmless

"""The project index: local facts per file, composed across functions, classes and modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from detachlint.analysis.project import ModuleFacts, build_index, module_facts, module_name


def _project(tmp_path: Path, files: dict) -> list:
    out = []
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        out.append((path, path.read_text()))
    return out


UTILS = """
    def normalize_(x, mean):
        x.sub_(mean)
        return x

    def scale(batch):
        normalize_(batch, 0.5)

    def reads_only(x):
        return x.sum()

    def rebinds(x):
        x = x + 1          # a new tensor: the caller's is untouched
        x.add_(1)
        return x
"""

TRAINER = """
    import torch
    from torch import nn
    from .utils import scale
    from . import utils
    from .base import Base

    class Trainer(Base):
        def __init__(self, model, optimizer):
            self.model = model
            self.optimizer = optimizer
            self.best = None

        def train_epoch(self, loader):
            for x, y in loader:
                self.model(x).sum().backward()
                self.optimizer.step()

        def validate(self):
            self.best = self.model.state_dict()
            self.current = self.model.state_dict()   # never used as a snapshot

        def fit(self, loader):
            for epoch in range(3):
                self.train_epoch(loader)
                self.validate()
            self.model.load_state_dict(self.best)

    class Safe(Base):
        def train_epoch(self):
            self.optimizer.step()

        def validate(self):
            self.best = copy.deepcopy(self.model.state_dict())

        def fit(self):
            self.model.load_state_dict(self.best)

    class EarlyStopping:
        def __call__(self, val_loss, model):
            self.best_state = model.state_dict()

        def restore(self, model):
            model.load_state_dict(self.best_state)

    class Logger:
        def log(self, model):
            self.last = model.state_dict()

        def dump(self):
            torch.save(self.last, "x.pt")

    class Net(Base):
        pass

    def run(b):
        utils.scale(b)

    def run_direct(b, c):
        scale(c)
"""

BASE = """
    import torch.nn as nn

    class Base(nn.Module):
        pass
"""


def test_writes_follow_calls_across_modules(tmp_path):
    files = _project(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/trainer.py": TRAINER,
                                "pkg/base.py": BASE})
    index = build_index(files)
    assert index.summary("pkg.utils.normalize_").writes == {0}
    assert index.summary("pkg.utils.scale").writes == {0}
    assert index.summary("pkg.utils.reads_only").writes == set()
    assert index.summary("pkg.trainer.run").writes == {0}
    assert index.summary("pkg.trainer.run_direct").writes == {1}
    assert index.function("pkg.trainer", "scale").writes == {0}
    assert index.function("pkg.trainer", "utils.normalize_").writes == {0}


def test_a_rebound_parameter_is_not_the_callers(tmp_path):
    files = _project(tmp_path, {"m.py": UTILS})
    assert build_index(files).summary("m.rebinds").writes == set()


def test_steps_and_backward_compose_through_self_methods(tmp_path):
    files = _project(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/trainer.py": TRAINER,
                                "pkg/base.py": BASE})
    index = build_index(files)
    fit = index.summary("pkg.trainer.Trainer.fit")
    assert "train_epoch" in fit.steps and "train_epoch" in fit.backward
    assert index.summary("pkg.trainer.Trainer.validate").steps is None


def test_class_hierarchy_across_files(tmp_path):
    files = _project(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/trainer.py": TRAINER,
                                "pkg/base.py": BASE})
    index = build_index(files)
    assert index.is_module_class("pkg.trainer.Net")
    assert index.is_module_class("pkg.base.Base")
    assert not index.is_module_class("pkg.trainer.EarlyStopping")


def test_snapshot_hazards_across_methods(tmp_path):
    files = _project(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/trainer.py": TRAINER,
                                "pkg/base.py": BASE})
    hazards = {(h.cls.rsplit(".", 1)[-1], h.attr): h for h in build_index(files).snapshot_hazards("pkg.trainer")}
    assert set(hazards) == {("Trainer", "best"), ("EarlyStopping", "best_state")}
    trainer = hazards["Trainer", "best"]
    assert trainer.method == "validate" and trainer.line == 20 and trainer.of == "self.model"
    assert "train_epoch" in trainer.update and "load_state_dict" in trainer.use
    assert "callback" in hazards["EarlyStopping", "best_state"].update
    # traps: a deep copy (Safe), a snapshot never used as one (Trainer.current), a logger whose
    # class neither steps nor is a callback (Logger)


def test_local_facts_round_trip_through_json(tmp_path):
    facts = module_facts(textwrap.dedent(TRAINER), "pkg.trainer")
    again = ModuleFacts.from_json(json.loads(json.dumps(facts.to_json())))
    assert again == facts


def test_cache_is_used_and_filled(tmp_path):
    files = _project(tmp_path, {"m.py": UTILS})
    cache: dict = {}
    first = build_index(files, cache)
    assert not cache  # read when the index is first used
    assert first.summary("m.normalize_") is not None and len(cache) == 1
    key = next(iter(cache))
    cache[key]["functions"]["normalize_"][3] = []  # a cached fact wins over the source
    second = build_index(files, cache)
    assert second.summary("m.normalize_").writes == set()
    assert first.digest != second.digest


def test_facts_from_worker_processes_equal_facts_computed_here(tmp_path):
    from detachlint.pipeline import facts_with_sites
    from detachlint.runner import facts_in_parallel

    root = Path(__file__).resolve().parents[1]
    sources = sorted((root / "tests" / "fixtures").rglob("*.py")) + sorted((root / "detachlint").rglob("*.py"))
    files = [(path, path.read_text(encoding="utf-8")) for path in sources]
    here, there = build_index(files, facts_of=facts_with_sites), build_index(files, facts_of=facts_in_parallel(2))
    assert len(files) >= 8 and here.modules.keys() == there.modules.keys()
    assert all(here.modules[m] == there.modules[m] for m in here.modules)
    assert any(facts.quiet for facts in here.modules.values())  # with the quiet code for every rule's sites
    assert here.digest == there.digest


def test_unparsable_files_are_left_out(tmp_path):
    files = _project(tmp_path, {"bad.py": "def f(:\n", "ok.py": UTILS})
    index = build_index(files)
    assert index.summary("ok.normalize_") is not None and "bad" not in index.modules


def test_module_names(tmp_path):
    _project(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/m.py": "", "script.py": ""})
    assert module_name(tmp_path / "pkg" / "sub" / "m.py") == ("pkg.sub.m", False)
    assert module_name(tmp_path / "pkg" / "sub" / "__init__.py") == ("pkg.sub", True)
    assert module_name(tmp_path / "script.py") == ("script", False)


def test_a_broken_configuration_elsewhere_in_the_tree_does_not_fail_the_run(tmp_path):
    """The index walks the whole project root (here the working directory, no marker); a
    sibling directory nobody named with a broken ``[tool.detachlint]`` is left out of it."""
    import os
    import subprocess
    import sys

    (tmp_path / "train.py").write_text("import torch\n\n\ndef f(w: torch.Tensor):\n    w.data.zero_()\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "pyproject.toml").write_text("[tool.detachlint]\nselct = ['TAL']\n")
    proc = subprocess.run([sys.executable, "-m", "detachlint", "check", "--no-cache", "train.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1])))
    assert proc.returncode == 1 and "TAL003" in proc.stdout and "error" not in proc.stderr, proc.stderr


def test_instance_of_a_project_class_in_a_namespace_package_steps(tmp_path):
    """dvgodoy/PyTorchStepByStep's shape: a trainer class in a directory without __init__.py
    (whose stem another file shares), constructed with the optimizer and trained by a method."""
    import os
    import subprocess
    import sys

    files = {
        "pyproject.toml": "[project]\nname = 'research'\n",
        "trainer/engine.py": """
            class Trainer:
                def __init__(self, model, optimizer):
                    self.model = model
                    self.optimizer = optimizer

                def fit(self, batches):
                    for x in batches:
                        self.model(x).sum().backward()
                        self.optimizer.step()
            """,
        "data/engine.py": """
            class Loader:
                pass
            """,
        "plots/compare.py": """
            import torch
            from trainer.engine import Trainer


            def compare(model: torch.nn.Module, makers, batches):
                initial = model.state_dict()
                for make in makers:
                    model.load_state_dict(initial)
                    optimizer = make(model.parameters())
                    trainer = Trainer(model, optimizer)
                    trainer.fit(batches)
            """,
    }
    _project(tmp_path, files)
    proc = subprocess.run([sys.executable, "-m", "detachlint", "check", "--no-cache", "--output-format", "concise",
                           "plots/compare.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1])))
    assert "plots/compare.py:7:15: TAL401" in proc.stdout, proc.stdout + proc.stderr
    assert "`trainer.fit(batches)` (line 12)" in _notes(tmp_path, "plots/compare.py")


def _notes(root, path) -> str:
    """The evidence of the file's findings: their notes in the JSON report (the message is one sentence)."""
    proc = subprocess.run([sys.executable, "-m", "detachlint", "check", "--no-cache", "--output-format", "json", path],
                          cwd=root, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1])))
    return " ".join(note for f in json.loads(proc.stdout) for note in f["notes"])


def test_helper_returning_an_array_of_its_argument(tmp_path):
    """fgnt/padertorch's shape: ``signal = to_numpy(signal)`` (a project helper returning
    ``np.asarray`` of its argument, moved to CPU) then normalised in place; a helper returning a
    view of an ``out`` argument is written through on purpose."""
    import os
    import subprocess
    import sys

    _project(tmp_path, {
        "pyproject.toml": "[project]\nname = 'audio'\n",
        "pkg/__init__.py": "",
        "pkg/utils.py": """
            import numpy as np
            import torch


            def to_numpy(array, detach=False):
                if isinstance(array, torch.Tensor):
                    array = array.cpu()
                    if detach:
                        array = array.detach()
                return np.asarray(array)


            def to_copy(array):
                return np.array(array)


            def as_batch(t):
                return t.view(-1, *t.shape[-2:])
            """,
        "pkg/summary.py": """
            import numpy as np
            from pkg.utils import as_batch, to_copy, to_numpy


            def audio(signal):
                signal = to_numpy(signal, detach=True)
                signal /= np.max(np.abs(signal))
                return signal


            def audio_copy(signal):
                signal = to_copy(signal)
                signal /= np.max(np.abs(signal))
                return signal


            def fill(out):
                out = as_batch(out)  # trap (torch/sparse/_triton_ops.py): a view, written on purpose
                out.zero_()
            """,
    })
    proc = subprocess.run([sys.executable, "-m", "detachlint", "check", "--no-cache", "--output-format", "concise",
                           "pkg/summary.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1])))
    lines = [line for line in proc.stdout.splitlines() if ": TAL" in line]
    assert len(lines) == 1 and lines[0].startswith("pkg/summary.py:8:5: TAL301"), proc.stdout + proc.stderr
    assert "`to_numpy(signal, detach=True)` (line 7)" in _notes(tmp_path, "pkg/summary.py")


CLOSURE_TRAINER = """
    class StepByStep:
        def __init__(self, model, optimizer):
            self.model = model
            self.optimizer = optimizer
            self.train_step_fn = self._make_train_step_fn()
            self.val_step_fn = self._make_val_step_fn()

        def _make_train_step_fn(self):
            def perform_train_step_fn(x):
                self.model(x).sum().backward()
                self.optimizer.step()
            return perform_train_step_fn

        def _make_val_step_fn(self):
            def perform_val_step_fn(x):
                return self.model(x)
            return perform_val_step_fn

        def _mini_batch(self, loader, validation=False):
            if not validation:
                step_fn = self.train_step_fn
            else:
                step_fn = self.val_step_fn  # the other branch: step_fn may be either
            for x in loader:
                step_fn(x)

        def train(self, loader):
            self._mini_batch(loader)

        def validate(self, loader):
            for x in loader:
                self.val_step_fn(x)
"""


def test_a_stored_closure_that_steps(tmp_path):
    """dvgodoy/PyTorchStepByStep: the optimizer step is in a closure a method returns, stored on
    ``self`` and called (through a local name) from the method the training loop calls."""
    index = build_index(_project(tmp_path, {"sbs.py": CLOSURE_TRAINER}))
    facts = index.modules["sbs"].functions
    assert facts["StepByStep._make_train_step_fn"].makes_steps == 12
    assert facts["StepByStep._make_val_step_fn"].makes_steps is None
    assert facts["StepByStep.__init__"].callables["train_step_fn"] == "self._make_train_step_fn"
    assert facts["StepByStep._make_train_step_fn"].steps is None  # making it does not step
    assert "_make_train_step_fn" in index.summary("sbs.StepByStep._mini_batch").steps
    assert index.summary("sbs.StepByStep.train").steps is not None
    assert index.summary("sbs.StepByStep.validate").steps is None
    again = ModuleFacts.from_json(json.loads(json.dumps(index.modules["sbs"].to_json())))
    assert again == index.modules["sbs"]


def test_a_run_over_unchanged_files_loads_and_composes_nothing(tmp_path):
    """The composed digest is remembered for the inputs it came from: the second index over the
    same files has it without reading a fact; an edit that changes a summary changes it."""
    from detachlint.config import SettingsResolver
    from detachlint.pipeline import build_project

    _project(tmp_path, {"pyproject.toml": "", "m.py": UTILS})
    cache = tmp_path / "cache"
    first = build_project(tmp_path, SettingsResolver(), cache)
    assert "modules" in first.__dict__  # composed, to learn its digest
    second = build_project(tmp_path, SettingsResolver(), cache)
    assert second.digest == first.digest and "modules" not in second.__dict__
    assert second.summary("m.normalize_").writes == first.summary("m.normalize_").writes  # loads when asked
    (tmp_path / "m.py").write_text(textwrap.dedent(UTILS).replace("x.sub_(mean)", "x = x - mean"), encoding="utf-8")
    third = build_project(tmp_path, SettingsResolver(), cache)
    assert third.digest != first.digest and "modules" in third.__dict__
    assert third.summary("m.normalize_").writes == set()


def test_a_remembered_digest_whose_facts_are_gone_is_not_trusted(tmp_path):
    """The facts file deleted (or never written), the digest file kept: the index loads now, and
    writes the facts back for the next run."""
    from detachlint.cache import FactsCache
    from detachlint.config import SettingsResolver
    from detachlint.pipeline import build_project

    _project(tmp_path, {"pyproject.toml": "", "m.py": UTILS})
    cache = tmp_path / "cache"
    first = build_project(tmp_path, SettingsResolver(), cache)
    FactsCache(cache).path.unlink()
    second = build_project(tmp_path, SettingsResolver(), cache)
    assert second.digest == first.digest and "modules" in second.__dict__
    assert FactsCache(cache).path.is_file()
    third = build_project(tmp_path, SettingsResolver(), cache)
    assert third.digest == first.digest and "modules" not in third.__dict__


def test_optimizer_names_and_names_of_things_about_an_optimizer():
    from detachlint.analysis.project import is_optimizer_name

    for name in ("opt", "optimizer", "optimizer_g", "self.optim", "g_optimizer", "optimiser"):
        assert is_optimizer_name(name), name
    # a path, a class or a state of an optimizer steps nothing (``ensure_dir(optim_checkpoint_name)``)
    for name in ("optim_checkpoint_name", "optimizer_path", "optimizer_cls", "optimizer_state", "opt_kwargs",
                 "options", "optional", "adopt"):
        assert not is_optimizer_name(name), name


CALLERS = """
    import torch

    def clamp(x, hi):
        x.clamp_(max=hi)
        return x.mean()

    def reads_after(logits):
        m = clamp(logits, 5.0)
        return m, logits.max()

    def rebinds(logits):
        logits = clamp(logits, 5.0)
        return logits

    def rebinds_in_a_tuple(logits):
        logits, n = clamp(logits, 5.0), 1
        return logits + n

    def reads_before(logits):
        top = logits.max()
        clamp(logits, 5.0)
        return top

    class Net:
        def helper(self, x):
            x.add_(1)
            return x.sum()

        def forward(self, x):
            s = self.helper(x)
            return s + x
"""


def test_a_name_read_again_after_a_call_that_may_write_it(tmp_path):
    index = build_index(_project(tmp_path, {"m.py": CALLERS}))
    assert index.read_after_call("m.clamp", 0) == ("reads_after", 9, 10)
    assert index.read_after_call("m.clamp", 1) is None  # a literal, not a name
    assert index.read_after_call("m.Net.helper", 1) == ("Net.forward", 31, 32)
    facts = module_facts(textwrap.dedent(CALLERS), "m", rereads=True)
    assert facts.functions["reads_after"].rereads == (("clamp", 0, 9, 10),)
    # rebound by the very statement that calls, or read only before the call: no read after it
    for name in ("rebinds", "rebinds_in_a_tuple", "reads_before"):
        assert facts.functions[name].rereads == (), name
    again = ModuleFacts.from_json(json.loads(json.dumps(facts.to_json())))
    assert again == facts
    # the index's own scan leaves them out: they are read again from the file when a lint asks
    assert all(f.rereads == () for f in module_facts(textwrap.dedent(CALLERS), "m").functions.values())


def test_reads_after_a_call_are_not_taken_from_a_file_changed_since_it_was_indexed(tmp_path):
    files = _project(tmp_path, {"m.py": CALLERS})
    index = build_index(files)
    index.modules  # the facts, loaded from the text as it was
    (tmp_path / "m.py").write_text(textwrap.dedent(CALLERS).replace("return m, logits.max()", "return m"),
                                   encoding="utf-8")
    assert index.read_after_call("m.clamp", 0) is None  # not a read the index's text (its key) shows
    assert build_index(_project(tmp_path, {"m.py": CALLERS})).read_after_call("m.clamp", 0) == ("reads_after", 9, 10)


BRANCHES = """
    def gate(logits):
        logits += 1
        return logits.sum()

    def route(logits, k):
        if k == 1:
            out = gate(logits)
        else:
            out = other(logits)
        return out

    def other(x):
        return x
"""


def test_a_read_in_the_other_branch_is_not_after_the_call(tmp_path):
    index = build_index(_project(tmp_path, {"m.py": BRANCHES}))
    assert index.read_after_call("m.gate", 0) is None


def test_the_digest_changes_when_a_caller_starts_passing_no_tensor(tmp_path):
    """``non_tensor_parameters`` decides TAL101 in the callee's file: a caller elsewhere that now
    passes a shape must change every file's cache key, as a caller passing a tensor does."""
    callee = """
        import torch

        def as_size(size: torch.Tensor):
            return torch.tensor(size)
    """
    caller = "from m import as_size\n\ndef f(img):\n    return as_size({})\n"
    first = build_index(_project(tmp_path, {"m.py": callee, "c.py": caller.format("img")}))
    second = build_index(_project(tmp_path, {"m.py": callee, "c.py": caller.format("img.shape")}))
    assert not first.non_tensor_parameters("m.as_size") and second.non_tensor_parameters("m.as_size") == {0}
    assert first.digest != second.digest


def test_a_loop_rebinding_a_shape_name_passes_what_it_iterates(tmp_path):
    """A name bound to a shape and then rebound by a loop over tensors is no longer a shape."""
    files = _project(tmp_path, {"m.py": """
        import torch

        def as_size(size: torch.Tensor):
            return torch.tensor(size)

        def sizes(img, tensors):
            size = img.shape
            for size in tensors:
                as_size(size)
    """})
    assert not build_index(files).non_tensor_parameters("m.as_size")

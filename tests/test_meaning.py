"""What a user acts on (issue 42, points 1-4), through the real ``detachlint`` command: one code per
meaning (TAL001 the hazard, TAL003 the nudge), advice that is right for a dtype or device change,
safe fixes for ``nn.init`` in a function handed to ``Module.apply``, short messages with the
evidence in notes."""

from __future__ import annotations

import ast
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# A nudge (weight initialisation, line 9) before a hazard (a write between forward and backward).
HAZARD_AND_NUDGE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def init(model: nn.Module, x: torch.Tensor):
        for p in model.parameters():
            p.data.normal_(0.0, 0.02)
        loss = model(x).sum()
        model.fc.weight.data.mul_(0.5)
        loss.backward()
    """)


def detachlint(*args, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "detachlint", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def findings(*args, cwd):
    proc = detachlint("check", "--no-cache", "--output-format", "json", *args, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def fixture_findings(name, cwd):
    """TAL001 and TAL003 on a fixture: ``at(code)``, the finding on the line that starts with ``code``,
    and the findings by row."""
    fixture = REPO / "tests" / "fixtures" / name
    lines = fixture.read_text(encoding="utf-8").splitlines()
    found = {f["location"]["row"]: f for f in findings("--select", "TAL001,TAL003", str(fixture), cwd=cwd)}

    def at(code):
        return found[next(i for i, line in enumerate(lines, 1) if line.strip().startswith(code))]
    return at, found


def test_the_nudge_has_its_own_code_that_one_line_of_configuration_drops(tmp_path):
    (tmp_path / "train.py").write_text(HAZARD_AND_NUDGE)
    got = [(f["code"], f["severity"], f["location"]["row"]) for f in findings(cwd=tmp_path)]
    assert got == [("TAL003", "warning", 7), ("TAL001", "error", 9)]
    assert [f["code"] for f in findings("--ignore", "TAL003", cwd=tmp_path)] == ["TAL001"]
    (tmp_path / "pyproject.toml").write_text('[tool.detachlint]\nextend-ignore = ["TAL003"]\n')
    assert [(f["code"], f["severity"]) for f in findings(cwd=tmp_path)] == [("TAL001", "error")]
    # and the other way round: the hazards off, the idiom kept
    assert [f["code"] for f in findings("--isolated", "--ignore", "TAL001", cwd=tmp_path)] == ["TAL003"]


def test_the_default_output_leads_with_the_hazards(tmp_path):
    (tmp_path / "train.py").write_text(HAZARD_AND_NUDGE)
    proc = detachlint("check", "--no-cache", cwd=tmp_path)
    heads = [line for line in proc.stdout.splitlines() if line.startswith("TAL")]
    assert [h.split()[0] for h in heads] == ["TAL001", "TAL003"]  # the error first, though it comes later
    assert "Found 2 findings (1 error, 1 warning)." in proc.stdout


CONVERSIONS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def convert(model: nn.Module, device: torch.device, q: torch.Tensor):
        for p in model.parameters():
            p.data = p.data.to(torch.bfloat16)
            p.data = p.data.half()
            p.data = p.data.float()
            p.data = p.data.cuda()
            p.data = p.data.to(device)
            p.data = p.data.type(torch.float16)
        model.fc.weight.data = q
    """)


def test_a_dtype_or_device_change_through_data_is_not_told_to_copy(tmp_path):
    (tmp_path / "convert.py").write_text(CONVERSIONS)
    found = findings(cwd=tmp_path)
    assert [(f["code"], f["location"]["row"]) for f in found] == [("TAL003", row) for row in range(7, 14)]
    # what each conversion may change, never that it did (the source may already have that dtype or device)
    changes = ["dtype or device", "dtype", "dtype", "device", "dtype or device", "dtype or device"]
    for f, change in zip(found[:-1], changes):
        assert "copy_" not in f["message"], f
        assert f["message"].endswith(f"result may change its {change} behind autograd's back"), f
        notes = " ".join(f["notes"])
        assert "would keep the old dtype and device" in notes and "module.to(...)" in notes, f
        assert "copy_(...)` (same shape" not in notes
        assert f["fix"] is None  # nothing that would change what the program computes is offered
    same_shape = found[-1]  # a same-shape rebinding: `copy_` is the tracked equivalent
    assert "with torch.no_grad(): model.fc.weight.copy_(...)" in " ".join(same_shape["notes"])


INIT = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)
            self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, nn.Conv2d):
                nn.init.normal_(module.weight.data, 0.0, 0.02)
                module.bias.data.zero_()


    def weights_init_normal(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            torch.nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm2d") != -1:
            torch.nn.init.normal_(m.weight.data, 1.0, 0.02)
            torch.nn.init.constant_(m.bias.data, 0.0)


    def reset(m):
        nn.init.zeros_(m.weight.data)


    def reinitialise(model):
        model.apply(reset)


    generator = Generator()
    generator.apply(weights_init_normal)
    discriminator = Generator().apply(lambda m: nn.init.zeros_(m.conv.weight.data))
    """)


def test_nn_init_in_a_function_given_to_module_apply_is_fixed_safely(tmp_path):
    path = tmp_path / "gan.py"
    path.write_text(INIT)
    before = findings(cwd=tmp_path)
    assert {f["code"] for f in before} == {"TAL003"} and len(before) == 7
    init = [f for f in before if f["location"]["row"] == 20][0]
    # the message and its note agree with the fix: nn.init needs no `no_grad` block, only `.data` gone
    assert "torch.nn.init` already writes under `no_grad`: drop `.data`" in " ".join(init["notes"])
    assert "with torch.no_grad()" not in init["message"] + " ".join(init["notes"])
    assert init["fix"]["applicability"] == "safe" and init["fix"]["message"].startswith("Remove `.data`")
    unsafe = {f["location"]["row"]: f["fix"]["message"] for f in before if f["fix"]["applicability"] == "unsafe"}
    assert list(unsafe) == [27] and "`Module.apply` hands this function a module" in unsafe[27]

    proc = detachlint("check", "--no-cache", "--fix", cwd=tmp_path)
    assert "Found 7 findings (6 fixed, 1 remaining" in proc.stdout, proc.stdout
    text = path.read_text()
    ast.parse(text)
    assert "torch.nn.init.normal_(m.weight, 0.0, 0.02)" in text and "lambda m: nn.init.zeros_(m.conv.weight)" in text
    after = findings(cwd=tmp_path)
    assert [(f["code"], f["location"]["row"]) for f in after] == [("TAL003", 28)]  # `reset`, moved by a line


def test_messages_are_one_short_sentence_with_the_evidence_in_notes(tmp_path):
    found = findings("--select", "ALL", str(REPO / "demo"), str(REPO / "tests" / "fixtures"), cwd=tmp_path)
    lengths = [len(f["message"]) for f in found]
    assert len(found) > 200 and statistics.median(lengths) < 80, statistics.median(lengths)
    assert max(lengths) <= 140, max(found, key=lambda f: len(f["message"]))["message"]
    assert all(f["notes"] for f in found if f["code"] in ("TAL001", "TAL003")), "the evidence went missing"
    # the full output shows the evidence: the pending backward and why the gradient is wrong
    (tmp_path / "train.py").write_text(HAZARD_AND_NUDGE)
    full = detachlint("check", "--no-cache", "train.py", cwd=tmp_path).stdout
    assert "TAL001 [error] `.mul_()` on `model.fc.weight.data` changes `model.fc.weight` before a pending " \
           "backward()\n" in full
    assert "note: train.py:10:5: the pending backward() that reads the changed values" in full
    assert "note: A graph is pending until `loss.backward()` (line 10): autograd cannot see the write, so the " \
           "gradient will be silently wrong." in full


def test_an_argument_only_arrays_and_tensors_share_ops_with_is_not_called_a_tensor(tmp_path):
    """A write into the caller's argument names what the evidence shows: ``m.shape`` shows an array
    or a tensor (a NumPy helper is as likely), ``t.detach()`` a tensor (issue 41, point 3)."""
    (tmp_path / "m.py").write_text(textwrap.dedent("""\
        def scaled_total(m):
            n = m.shape[0]
            m *= 2
            return m.sum() / n


        def scaled_sum(t):
            t.detach()
            t *= 2
            return t.sum()
        """))
    proc = detachlint("check", "--no-cache", "--output-format", "json", "m.py", cwd=tmp_path)
    related = {f["location"]["row"]: [r["message"] for r in f["related"]] for f in json.loads(proc.stdout)}
    assert related == {3: ["`m` is the caller's array or tensor"], 9: ["`t` is the caller's tensor"]}


def test_a_resize_or_set_through_data_says_the_tensor_keeps_its_shape_or_storage(tmp_path):
    """faster-rcnn's ``im_data.data.resize_(s).copy_(t)`` (issue 40; its issues #483, #543): the op
    changes only the ``.data`` alias, so the message says what ``im_data`` keeps, not that a
    version counter is bypassed; no fix is offered (dropping ``.data`` would resize the tensor)."""
    at, found = fixture_findings("tal003_alias_only_metadata.py", tmp_path)

    resized = at("im_data.data.resize_(")
    assert resized["message"] == "`.resize_()` on `im_data.data` changes only the `.data` alias: `im_data` keeps its shape"
    notes = " ".join(resized["notes"])
    assert "`.copy_()` then writes into the storage `im_data` shares" in notes
    assert "sees only the values within its own shape" in notes and "cannot be resized" in notes
    assert "no_grad():` without `.data` gives identical values" not in notes
    assert at("w.data.set_(other)")["message"].endswith("`w` keeps its storage")
    assert "lands in that other storage, not in `w`" in " ".join(at("w.data.set_(other).fill_(5)")["notes"])
    assert at("w.data.t_()")["message"].endswith("`w` keeps its shape and strides")
    assert "under `torch.no_grad()` where it requires grad" in " ".join(at("w.data.t_()")["notes"])
    # value writes reach the tensor: the old message, and its safe fix's advice
    assert at("x.data.copy_(y)")["message"] == "`.copy_()` on `x.data` bypasses autograd's version counter"
    assert at("x.data.zero_()")["message"] == "`.zero_()` on `x.data` bypasses autograd's version counter"
    # before a pending backward: a resize alone changes no value; the copy after it does
    assert at("buf.data.resize_(3)  #")["severity"] == "warning"
    copied = at("buf.data.resize_(3).copy_(src)")
    assert copied["message"] == "`.copy_()` after `.resize_()` on `buf.data` changes `buf` before a pending backward()"
    assert "`buf` keeps its shape" in copied["notes"][0]
    alias_only = [f for f in found.values() if "changes only the `.data` alias" in f["message"]]
    assert len(alias_only) == 13 and all(f["fix"] is None for f in alias_only)


def test_a_shape_op_on_an_alias_of_a_saved_tensor_says_it_moves_the_version_counter(tmp_path):
    """``v = y.view(-1); v.t_()`` (or ``y.detach()``): ``y`` keeps its shape and values, but the op
    moves the version counter ``v`` shares with ``y``, so the backward that saved ``y`` raises
    (tests/test_catalog.py measures both): the message says so, not that ``y`` is written."""
    fixture = REPO / "tests" / "fixtures" / "tal201_alias_only_metadata.py"
    lines = fixture.read_text(encoding="utf-8").splitlines()
    found = {f["location"]["row"]: f for f in findings("--select", "TAL201,TAL202", str(fixture), cwd=tmp_path)}

    def at(code, after):
        start = next(i for i, line in enumerate(lines, 1) if line.startswith(f"def {after}("))
        return found[next(i for i, line in enumerate(lines, 1) if i > start and line.strip() == code)]

    viewed = at("v.t_()  # expect: TAL202 error", "saved_then_view_transposed")
    assert viewed["message"] == ("`v.t_()` changes only `v`'s shape, but moves the version counter it shares "
                                 "with `y`, which `sigmoid` saved for backward")
    assert "Reshape out of place (`v = v.t()`)" in " ".join(viewed["notes"])
    detached = at("d.unsqueeze_(0)  # expect: TAL202 error", "saved_then_detached_transposed")
    assert detached["code"] == "TAL202" and "`d = d.unsqueeze(0)`" in " ".join(detached["notes"])
    itself = at("y.t_()  # expect: TAL202 error", "saved_then_itself_transposed")
    assert itself["message"] == "`y.t_()` writes `y` in place, which `sigmoid` saved for backward"


def test_a_neg_inf_mask_before_log_softmax_says_which_loss_could_see_it(tmp_path):
    """The DrQA shape (fresh set 39): a -inf mask through ``.data`` read by ``log_softmax`` is the
    idiom, and its note states the evidence (the op, its line, which loss could tell), no more; a
    -1e9 mask before it stays a hazard."""
    found = findings("--select", "TAL001,TAL003", str(REPO / "tests" / "fixtures" / "tal001_fresh39_traps.py"),
                     cwd=tmp_path)
    by_row = {f["location"]["row"]: f for f in found}
    drqa = by_row[24]
    assert (drqa["code"], drqa["severity"]) == ("TAL003", "warning")
    assert drqa["notes"][0] == ("The write sets cells to -inf before `log_softmax` (line 26): only a loss that reads "
                                "a masked cell's log-probability, which is then infinite, sees a gradient other "
                                "than that of a write autograd tracks.")
    large = by_row[76]
    assert (large["code"], large["severity"]) == ("TAL001", "error")
    assert "-inf" not in " ".join(large["notes"])


def test_a_write_into_a_weight_norm_weight_says_it_is_lost(tmp_path):
    """locuslab/TCN's ``init_weights`` (issue 40): ``self.conv1 = weight_norm(nn.Conv1d(...))`` then
    ``self.conv1.weight.data.normal_(0, 0.01)``. The weight is recomputed from ``weight_g`` and
    ``weight_v``, so the message says the write is lost, not that a version counter is bypassed,
    and no fix (dropping ``.data``) is offered: it would be lost as well."""
    at, _ = fixture_findings("tal001_weight_norm.py", tmp_path)
    lines = (REPO / "tests" / "fixtures" / "tal001_weight_norm.py").read_text(encoding="utf-8").splitlines()
    row = {text: next(i for i, line in enumerate(lines, 1) if text in line)
           for text in ("self.conv1 = weight_norm(", "self.fc = torch.nn.utils", "WNConv1d(80, ngf")}

    first = at("self.conv1.weight.data.normal_(0, 0.01)  # expect: TAL001")
    assert first["message"] == (f"`self.conv1` is wrapped by weight_norm (line {row['self.conv1 = weight_norm(']}), "
                                f"which recomputes its `weight` at each forward: `.normal_()` is lost")
    assert "a forward pre-hook recomputes it before every call" in first["notes"][0]
    assert "Initialise the module before wrapping it" in first["notes"][1] and first["fix"] is None
    fc = at("nn.init.xavier_uniform_(self.fc.weight.data)")
    assert fc["message"].startswith(f"`self.fc` is wrapped by weight_norm (line {row['self.fc = torch.nn.utils']})")
    assert "`parametrizations.weight_norm` computes `weight` from `parametrizations.weight.original0` and `parametrizations.weight.original1` each time it is read" \
        in fc["notes"][0]
    applied = at("m.weight.data.normal_(0.0, 0.02)  # expect: TAL001")
    assert applied["message"] == (f"`.normal_()` is lost on the modules `Generator` wraps with weight_norm (line "
                                  f"{row['WNConv1d(80, ngf']}): it recomputes their `weight` at each forward")
    # what reaches the module keeps the idiom's message
    assert at("self.conv1.weight_v.data")["message"] == "`.normal_()` on `self.conv1.weight_v.data` bypasses autograd's version counter"

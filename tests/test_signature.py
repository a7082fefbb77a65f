"""The rule -> runtime contract: one typed Signature, one spelling per op, the documented contract
generated from it, and no signature spelled as a dict literal in the rules or the runtime."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from detachlint.docs import SIGNATURE_END, SIGNATURE_START
from detachlint.engine import lint_source
from detachlint.findings import finding_from_dict, finding_to_dict
from detachlint.rules import ALL_RULES
from detachlint.signature import RETIRED, Side, Signature, SignatureError, Source, Syntax, Write, contract_markdown

ROOT = Path(__file__).resolve().parents[1]


def test_the_documented_contract_is_the_generated_one():
    text = (ROOT / "docs" / "runtime.md").read_text(encoding="utf-8")
    start, end = text.index(SIGNATURE_START) + len(SIGNATURE_START), text.index(SIGNATURE_END)
    assert text[start:end].strip("\n") == contract_markdown().rstrip("\n"), "run `python -m detachlint.docs`"
    for name in ("dtype_known", "pending_graph", "written", "__getitem__", "(inplace=True)"):
        assert f"`{name}`" in text[start:end]


def test_serialised_in_field_order_without_unknowns_and_parsed_back():
    sig = Signature("TAL301", ("__getitem__", "mul_"), args=("[0]", None), written=Side.SOURCE,
                    source=Source(parameter=False, pending_graph=False, dtype="float32"))
    data = sig.to_json()
    assert json.dumps(data) == ('{"rule": "TAL301", "ops": ["__getitem__", "mul_"], "source": {"parameter": false, '
                                '"pending_graph": false, "dtype": "float32"}, "args": ["[0]", null], '
                                '"written": "source"}')
    assert Signature.from_json(json.loads(json.dumps(data))) == sig
    assert Signature.from_json({"rule": "TAL001", "write": "assign"}).write is Write.ASSIGN


@pytest.mark.parametrize("old", sorted(RETIRED))
def test_every_retired_spelling_is_rejected_naming_the_one(old):
    with pytest.raises(SignatureError, match=f"the contract spells it '{RETIRED[old]}'"):
        Signature("TAL301", (old,))
    assert RETIRED[old] not in RETIRED  # the named spelling is accepted
    Signature("TAL301", (RETIRED[old],))


@pytest.mark.parametrize("data, message", [
    ({"rule": "TAL301", "ops": ["torch.clone"]}, "unknown op spelling 'torch.clone'"),
    ({"rule": "TAL301", "ops": "mul_"}, "ops is a sequence"),
    ({"rule": "TAL301", "ops": [], "written": "both"}, "unknown written 'both'; one of 'alias', 'source'"),
    ({"rule": "TAL301", "source": {"mutated": "source"}}, "unknown signature.source field 'mutated'"),
    ({"rule": "TAL001", "pending_graph": True}, "unknown signature field 'pending_graph'"),
    ({"rule": "TAL001", "source": {"pending_graph": "yes"}}, "pending_graph is a bool"),
    ({"rule": "tal001"}, "a rule is a code"),
])
def test_outside_the_contract_is_an_error_that_says_why(data, message):
    with pytest.raises(SignatureError, match=message.replace("(", r"\(")):
        Signature.from_json(data)


def test_syntax_names_and_call_forms_are_accepted():
    ops = tuple(s.value for s in Syntax) + ("relu(inplace=True)", "add(out=)", "fill_rows()", "Tensor")
    assert Signature("TAL201", ops).ops == ops


def test_rules_build_signatures_that_survive_the_cache_and_the_json_report():
    findings = lint_source("import torch\n\ndef f(x: torch.Tensor, w: torch.Tensor):\n"
                           "    loss = (x * w).sum()\n    w.data.mul_(2)\n    v = x[0]\n    x += 1\n"
                           "    w.data = x\n    return v, loss\n", "m.py", [r.code for r in ALL_RULES])
    signed = [f for f in findings if f.signature is not None]
    assert {f.code for f in signed} >= {"TAL003", "TAL301"}
    for f in signed:
        assert isinstance(f.signature, Signature)
        assert finding_from_dict(json.loads(json.dumps(finding_to_dict(f)))).signature == f.signature
    assert [f.signature for f in signed] == [
        Signature("TAL003", ("mul_",), write=Write.INPLACE, source=Source(pending_graph=False)),
        Signature("TAL301", ("__getitem__", "add_"), args=("[0]", "1"), written=Side.SOURCE,
                  source=Source(parameter=True, module_state=False, pending_graph=False, cpu_float=False)),
        Signature("TAL003", (), write=Write.ASSIGN, source=Source(pending_graph=False)),  # the form is `write`
    ]


def _signature_dicts(path: Path):
    """``{"rule": ...}`` literals, ``signature["..."]`` and ``sig.get(...)``: a signature handled as a dict."""
    where = f"{path.parent.name}/{path.name}"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value in ("rule", "ops")
                                              for k in node.keys):
            yield f"{where}:{node.lineno}"
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id in ("signature", "sig", "facts") and isinstance(node.slice, ast.Constant):
            yield f"{where}:{node.lineno}"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in ("signature", "sig", "facts"):
            yield f"{where}:{node.lineno}"


def test_no_signature_dict_in_the_rules_or_the_runtime():
    paths = sorted((ROOT / "detachlint" / "rules").rglob("*.py")) + sorted(
        (ROOT / "runtime" / "detachlint_runtime").rglob("*.py"))
    assert [hit for path in paths for hit in _signature_dicts(path)] == []


def test_the_search_for_signature_dicts_finds_them(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text('sig = {"rule": "TAL001", "ops": []}\nsig["written"] = "alias"\nfacts.get("dtype")\n')
    assert len(list(_signature_dicts(bad))) == 3

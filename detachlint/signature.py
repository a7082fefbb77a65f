"""The rule -> runtime contract: a finding's pattern, typed, in one spelling.

Rules build a :class:`Signature`; findings serialise it (``to_json``, a stable key order);
the runtime companion parses it with the same class (``from_json``) and reproduces it. A
value outside the vocabulary is rejected on construction with a message that names the one
spelling, never mapped to a guess. ``docs/runtime.md`` describes the contract with the text
:func:`contract_markdown` makes from this module (``python -m detachlint.docs``).
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass, field, fields
from typing import Any, Dict, Optional, Tuple, Type, TypeVar


class SignatureError(ValueError):
    """A signature outside the contract: an unknown field, spelling or value."""


class _Vocabulary(str, enum.Enum):
    """A closed vocabulary; a member prints as its spelling."""

    def __str__(self) -> str:
        return self.value


class Syntax(_Vocabulary):
    """Ops that are syntax rather than a named function, each with its one spelling."""

    GETITEM = "__getitem__"
    SETITEM = "__setitem__"
    ALIAS = "alias"
    IOP = "iop"

    @property
    def doc(self) -> str:
        return _SYNTAX_DOCS[self]


_SYNTAX_DOCS = {
    Syntax.GETITEM: "a subscript, `t[i]`, `t[:, 1:]` (a view of a tensor, or a sample of a dataset)",
    Syntax.SETITEM: "an item assignment, `t[i] = v` (a write)",
    Syntax.ALIAS: "a plain assignment, `b = a` (a second name for the same object)",
    Syntax.IOP: "an augmented assignment whose operator has no in-place tensor method (`a @= b`); "
                "`a *= b` is `mul_`, `a += b` is `add_`, and so on",
}

# How a named op may be called, when that is part of the pattern.
CALL_FORMS = {
    "(inplace=True)": "`relu(inplace=True)`: a functional op writing its argument",
    "(out=)": "`add(out=)`: a function writing the tensor given as `out=`",
    "()": "`fill_rows()`: a function of the project that writes its argument in place",
}

# Spellings earlier versions sent or accepted, rejected with the one that replaced them.
RETIRED = {
    "getitem": "__getitem__", "subscript": "__getitem__", "slice": "__getitem__", "[]": "__getitem__",
    "index": "__getitem__", "setitem": "__setitem__", "[]=": "__setitem__",
    "*=": "mul_", "imul": "mul_", "__imul__": "mul_", "augassign": "mul_", "+=": "add_", "iadd": "add_",
    "__iadd__": "add_", "-=": "sub_", "isub": "sub_", "__isub__": "sub_", "/=": "div_", "itruediv": "div_",
    "idiv": "div_", "__itruediv__": "div_", "**=": "pow_", "ipow": "pow_", "__ipow__": "pow_",
    "fill": "fill_", "fill0": "zero_", "assign": "alias", "name": "alias", "identity": "alias",
    "optimizer_state_dict": "state_dict",
}

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RULE = re.compile(r"[A-Z]+[0-9]+")


def check_op(op: Any) -> str:
    """``op`` when it is a spelling of the contract, else :class:`SignatureError`."""
    if not isinstance(op, str):
        raise SignatureError(f"an op is a string, got {op!r}")
    if op in RETIRED:
        raise SignatureError(f"unknown op spelling {op!r}: the contract spells it {RETIRED[op]!r}")
    if any(s.value == op for s in Syntax):
        return op
    name = next((op[: -len(form)] for form in CALL_FORMS if op.endswith(form)), op)
    if _NAME.fullmatch(name) is None:
        raise SignatureError(
            f"unknown op spelling {op!r}: an op is the name of a function, method or attribute as the code "
            f"spells it without its module (`mul_`, `detach`, `deepcopy`), optionally with a call form "
            f"({', '.join(repr(f) for f in CALL_FORMS)}), or one of "
            f"{', '.join(repr(s.value) for s in Syntax)}")
    return op


class Write(_Vocabulary):
    """How ``.data`` is written (TAL001, TAL003)."""

    INPLACE = "inplace"
    ASSIGN = "assign"
    SETITEM = "setitem"
    AUGASSIGN = "augassign"
    INIT = "init"
    COLLECTIVE = "collective"
    OUT = "out"


class Side(_Vocabulary):
    """Which side of an alias pair is written (TAL301)."""

    ALIAS = "alias"
    SOURCE = "source"


class Saved(_Vocabulary):
    """What the saving op kept for backward (TAL202)."""

    RESULT = "result"
    INPUT = "input"


class Elements(_Vocabulary):
    """The elements of a list handed to a constructor (TAL102)."""

    ZERO_D = "0d"
    ONE = "one"
    MULTI = "multi"


class Kind(_Vocabulary):
    """What a constructor's argument really is (TAL101)."""

    TENSOR = "tensor"
    NDARRAY = "ndarray"
    LIST = "list"


def _doc(text: str) -> Dict[str, str]:
    return {"doc": text}


@dataclass(frozen=True)
class Source:
    """What is known of the source tensor. Every field is optional: None means unknown, and the
    recipe picks the common case and says so."""

    parameter: Optional[bool] = field(default=None, metadata=_doc(
        "held by the caller, a function parameter (informational)"))
    module_state: Optional[bool] = field(default=None, metadata=_doc(
        "a module's parameter or buffer, reproduced as an `nn.Parameter`"))
    requires_grad: Optional[bool] = field(default=None, metadata=_doc("the tensor requires grad"))
    pending_graph: Optional[bool] = field(default=None, metadata=_doc(
        "a graph that may have saved the tensor is waiting for `backward()` when the write runs"))
    cpu_float: Optional[bool] = field(default=None, metadata=_doc(
        "the chain makes a CPU float tensor (informational: the configuration decides the device, and "
        "`.cpu()` copies a CUDA tensor)"))
    leaf: Optional[bool] = field(default=None, metadata=_doc("a leaf of the graph"))
    dtype: Optional[str] = field(default=None, metadata=_doc(
        "`float32`, `float64`, `int64`, ...; for a conversion chain, the dtype under which the conversion "
        "is a no-op"))
    dtype_known: Optional[bool] = field(default=None, metadata=_doc(
        "`dtype` is the tensor's real dtype: only that case runs (otherwise a conversion chain runs both "
        "the no-op and the converting case)"))
    contiguous: Optional[bool] = field(default=None, metadata=_doc("the tensor is contiguous"))
    calls_backward: Optional[bool] = field(default=None, metadata=_doc(
        "the function calls `backward()` (TAL102)"))
    elements: Optional[Elements] = field(default=None, metadata=_doc(
        "the list elements' shape (TAL102)"))
    type: Optional[Kind] = field(default=None, metadata=_doc(
        "what the constructor's argument really is (TAL101)"))
    optimizer: Optional[bool] = field(default=None, metadata=_doc(
        "the snapshot is of optimizer state (TAL401)"))

    def __post_init__(self) -> None:
        _check_fields(self)


@dataclass(frozen=True)
class Signature:
    """A finding's pattern: what the runtime companion needs to reproduce it."""

    rule: str = field(metadata=_doc("the rule code, e.g. `TAL001`: it picks the recipe"))
    ops: Tuple[str, ...] = field(default=(), metadata=_doc(
        "the concrete ops the static side saw, in program order, from the source to the hazard (the "
        "vocabulary is below); a trailing write (an in-place method, `__setitem__`) is the write, what "
        "comes before it the alias chain"))
    write: Optional[Write] = field(default=None, metadata=_doc("how `.data` is written (TAL001, TAL003)"))
    saved: Optional[Saved] = field(default=None, metadata=_doc(
        "what the saving op (the first op) kept for backward (TAL202)"))
    source: Optional[Source] = field(default=None, metadata=_doc(
        "what is known of the source tensor (below)"))
    args: Optional[Tuple[Optional[str], ...]] = field(default=None, metadata=_doc(
        "one entry per op: its arguments as literal source text (`\"0, 0, 2\"`, `\"[:, 1:]\"` for a "
        "subscript, `\"\"` for none), or null where they are not literals"))
    written: Optional[Side] = field(default=None, metadata=_doc(
        "which side of the alias pair is written (TAL301)"))

    def __post_init__(self) -> None:
        if not isinstance(self.rule, str) or _RULE.fullmatch(self.rule) is None:
            raise SignatureError(f"a rule is a code such as 'TAL001', got {self.rule!r}")
        if isinstance(self.ops, str) or not isinstance(self.ops, (tuple, list)):
            raise SignatureError(f"ops is a sequence of op names, got {self.ops!r}")
        object.__setattr__(self, "ops", tuple(check_op(op) for op in self.ops))
        if self.args is not None:
            if isinstance(self.args, str) or not isinstance(self.args, (tuple, list)) \
                    or not all(a is None or isinstance(a, str) for a in self.args):
                raise SignatureError(f"args is a sequence of source texts or nulls, got {self.args!r}")
            object.__setattr__(self, "args", tuple(self.args))
        if self.source is not None and not isinstance(self.source, Source):
            raise SignatureError(f"source is a Source, got {self.source!r}")
        _check_fields(self, skip=("rule", "ops", "args", "source"))

    @property
    def facts(self) -> Source:
        """``source``, or an empty one (everything unknown)."""
        return self.source if self.source is not None else _UNKNOWN

    def to_json(self) -> Dict[str, Any]:
        """A JSON-able dict in field order, without the unknown (None) fields."""
        out: Dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if f.name == "source":
                value = _plain(value)
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, enum.Enum):
                value = value.value
            out[f.name] = value
        return out

    @classmethod
    def from_json(cls, data: Any) -> "Signature":
        """The signature ``to_json`` made; :class:`SignatureError` for anything outside the contract."""
        if not isinstance(data, dict):
            raise SignatureError(f"a signature is a JSON object, got {data!r}")
        _known_keys(cls, data, "signature")
        source = data.get("source")
        if source is not None:
            if not isinstance(source, dict):
                raise SignatureError(f"signature.source is a JSON object, got {source!r}")
            _known_keys(Source, source, "signature.source")
            source = Source(**source)
        return cls(**dict(data, source=source))


def _plain(source: Source) -> Dict[str, Any]:
    return {f.name: (v.value if isinstance(v, enum.Enum) else v)
            for f in fields(source) for v in (getattr(source, f.name),) if v is not None}


def _known_keys(cls: type, data: Dict[str, Any], where: str) -> None:
    names = [f.name for f in fields(cls)]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise SignatureError(f"unknown {where} field {unknown[0]!r}; the fields are {', '.join(names)}")


E = TypeVar("E", bound=enum.Enum)


def _check_fields(obj: Any, skip: Tuple[str, ...] = ()) -> None:
    """Each optional field None or of its type; a vocabulary field given as a string becomes its
    member, or :class:`SignatureError` that lists the vocabulary."""
    hints = _value_types(type(obj))
    for f in fields(obj):
        value = getattr(obj, f.name)
        if f.name in skip or value is None:
            continue
        kind = hints[f.name]
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            object.__setattr__(obj, f.name, _member(kind, value, f.name))
        elif type(value) is not kind:
            raise SignatureError(f"{f.name} is a {kind.__name__}, got {value!r}")


@functools.lru_cache(maxsize=None)
def _value_types(cls: type) -> Dict[str, type]:
    """The value type of each optional field: bool, str or a vocabulary."""
    types = {"Optional[bool]": bool, "Optional[str]": str}
    out = {}
    for f in fields(cls):
        inner = f.type[len("Optional["):-1] if isinstance(f.type, str) else ""
        out[f.name] = types.get(f.type) or _VOCABULARIES.get(inner, object)
    return out


def _member(kind: Type[E], value: Any, name: str) -> E:
    if isinstance(value, kind):
        return value
    try:
        return kind(value)
    except ValueError:
        raise SignatureError(f"unknown {name} {value!r}; one of {', '.join(repr(m.value) for m in kind)}") from None


_VOCABULARIES: Dict[str, type] = {k.__name__: k for k in (Write, Side, Saved, Elements, Kind)}
_UNKNOWN = Source()


# --------------------------------------------------------------------------------------------
# The documented contract, made from the classes above (docs/runtime.md)

def _type_text(cls: type, name: str) -> str:
    kind = _value_types(cls).get(name)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return " \\| ".join(f"`{m.value!r}`".replace("'", '"') for m in kind)
    return {bool: "bool", str: "str"}.get(kind, "")


def contract_markdown() -> str:
    """The "pattern signature" section of ``docs/runtime.md``."""
    top = {"rule": "str (required)", "ops": "list of str", "source": "object",
           "args": "list of (str or null)"}
    lines = ["Every finding a rule can confirm carries `signature`, a JSON object. Its fields, in the order "
             "they are written (an unknown field is left out):", "",
             "| field | type | meaning |", "| --- | --- | --- |"]
    for f in fields(Signature):
        lines.append(f"| `{f.name}` | {top.get(f.name) or _type_text(Signature, f.name)} | {f.metadata['doc']} |")
    lines += ["", "`source`, each field optional (unknown when absent):", "",
              "| field | type | meaning |", "| --- | --- | --- |"]
    for f in fields(Source):
        lines.append(f"| `{f.name}` | {_type_text(Source, f.name)} | {f.metadata['doc']} |")
    lines += ["", "An op has one spelling. It is the name of the function, method or attribute as the code "
              "spells it without its module: tensor methods and attributes (`detach`, `cpu`, `numpy`, `view`, "
              "`mul_`, `data`), torch and NumPy functions (`from_numpy`, `asarray`), constructors (`tensor`, "
              "`new_tensor`, `Tensor`, `FloatTensor`), `torch.nn.init` functions (`normal_`), state ops "
              "(`state_dict`, `copy`, `deepcopy`, `parameters`, `step`). A call form may follow the name:", ""]
    lines += [f"- `{form}`: {doc}" for form, doc in CALL_FORMS.items()]
    lines += ["", "Syntax has these names:", ""]
    lines += [f"- `{s.value}`: {s.doc}" for s in Syntax]
    lines += ["", "Any other spelling is rejected with a message naming the right one; these were accepted "
              "once: " + ", ".join(f"`{old}` (`{new}`)" for old, new in RETIRED.items()) + ".", "",
              "Equal signatures (compared by their canonical JSON, key order ignored) are reproduced once."]
    return "\n".join(lines) + "\n"

"""Signature -> minimal reproducer, run in one configuration, observed directly: what the rules'
recipes (``rules/tal*.py``) share.

This module imports torch at module level: it is imported inside the reproduction worker
(``detachlint_runtime.worker``) and, through the rules' modules, by ``detachlint run`` (which has
torch already), never by the linter process.

A recipe is a function ``(Signature, config) -> result dict``: each rule's module holds its own
(``rules.RULES``), and an extra recipe module registers more with ``@recipe("TAL001")``;
``rules.reproduce`` picks one (this module is below the rules: it never imports them). It builds
the smallest program that has the signature's pattern, runs the pattern's body eagerly or under
``torch.compile`` (``config.backend``) on ``config.device``, and reports what it *saw*: a gradient
that differs from the tracked reference, a source whose values changed behind its back, shared
storage, the version-counter error, the copy-construct warning.
A recipe raises :class:`NoReproducer` for ops it has no table entry for; the worker turns any
other exception into an ``error`` result, so a broken recipe never passes for an observation.

The knowledge lives in tables (``INPLACE_ARGS``, ``CHAIN_OPS``, ``ARRAY_WRITES``, ``ERROR_KINDS``,
a rule's own such as TAL401's ``SNAPSHOT_OPS``); the recipe functions only wire them together.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from detachlint.signature import Signature, Source, Syntax

try:  # torch runs without numpy; then numpy ops have no reproducer
    import numpy as np
except ImportError:  # pragma: no cover - numpy is installed wherever the tests run
    np = None

# --------------------------------------------------------------------------------------------
# Results


class NoReproducer(Exception):
    """The signature names an op (or a combination) that no recipe table covers."""


class NotApplicable(Exception):
    """The pattern cannot happen on this configuration's device (the reason says why): reported
    as ``not-applicable``, never as a failed recipe."""


NUMPY_OPS = frozenset({"numpy", "array", "asarray", "from_numpy", "__array__"})


@dataclass(frozen=True)
class Config:
    device: str  # "cpu" | "cuda"
    backend: str  # "eager" (no compile) | "aot_eager" | "inductor" | any torch.compile backend

    @property
    def name(self) -> str:
        return f"{self.device}-{self.backend}"

    @property
    def compiled(self) -> bool:
        return self.backend != "eager"


def reproduced(hazard: str, observed: str, **details: Any) -> dict:
    return {"status": "reproduced", "hazard": hazard, "observed": observed, "details": details}


def not_reproduced(observed: str, seen: str = "harmless", **details: Any) -> dict:
    return {"status": "not-reproduced", "hazard": None, "seen": seen, "observed": observed, "details": details}


RECIPES: Dict[str, Callable[[Signature, Config], dict]] = {}  # from extra recipe modules


def recipe(*rules: str):
    def register(fn):
        for rule in rules:
            RECIPES[rule] = fn
        return fn

    return register


# --------------------------------------------------------------------------------------------
# Errors: matched on stable message substrings, never on exception types (compiled mode wraps
# them in BackendCompilerFailed / TorchRuntimeError and moves them to the first forward call).

ERROR_KINDS: Sequence[Tuple[str, str]] = (
    ("one of the variables needed for gradient computation has been modified by an inplace operation",
     "version-error"),
    ("more than one element of the written-to tensor refers to a single memory location", "overlap-error"),
    ("some elements of the input tensor and the written-to tensor refer to a single memory location",
     "overlap-error"),
    ("a view of a leaf Variable that requires grad is being used in an in-place operation", "leaf-view-inplace-error"),
    ("a leaf Variable that requires grad is being used in an in-place operation", "leaf-inplace-error"),
    ("is a view and is being modified inplace", "multi-output-view-inplace-error"),
    ("A view was created in no_grad mode and is being modified inplace", "nograd-view-inplace-error"),
    ("Trying to use a saved tensor that has been detached in-place", "detached-saved-tensor-error"),
    ("only one element tensors can be converted to Python scalars", "multi-element-error"),
    ("only integer tensors of a single element can be converted to an index", "multi-element-error"),
    ("Can't call numpy() on Tensor that requires grad", "numpy-requires-grad-error"),
    ("can't convert cuda", "numpy-cuda-error"),
    ("expected TensorOptions(", "legacy-dtype-error"),
    ("view size is not compatible with input tensor's size and stride", "view-stride-error"),
    # Dynamo cannot trace torch.as_tensor([0-d tensors, ...]) with fake tensors (torch 2.13).
    ("but its data is not allocated yet", "compile-fake-tensor-error"),
)
# Errors that are the hazard the rules describe, surfacing loudly (confirmations, not failures).
HAZARD_ERRORS = {"version-error", "overlap-error", "detached-saved-tensor-error", "multi-element-error"}


def error_kind(exc: BaseException) -> Optional[str]:
    text = f"{exc}"
    for needle, kind in ERROR_KINDS:
        if needle in text:
            return kind
    return None


def short(exc: BaseException, limit: int = 240) -> str:
    """The first line that carries the original error (compiled wrappers put it on line 2-3)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    kind = error_kind(exc)
    picked = lines[0] if lines else ""
    if kind is not None:
        for needle, k in ERROR_KINDS:
            if k == kind:
                picked = next((ln for ln in lines if needle in ln), picked)
                break
    text = f"{type(exc).__name__}: {picked}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Raised(Exception):
    """An error the pattern itself raised, with the phase it surfaced in."""

    def __init__(self, exc: BaseException, phase: str) -> None:
        super().__init__(str(exc))
        self.exc = exc
        self.phase = phase
        self.kind = error_kind(exc)


def run_body(fn: Callable, args: Sequence[Any], config: Config):
    """Run the pattern's body eagerly or compiled; an error becomes :class:`Raised`."""
    body = torch.compile(fn, backend=config.backend) if config.compiled else fn
    try:
        return body(*args)
    except NoReproducer:
        raise
    except Exception as exc:  # noqa: BLE001 - observed, classified by message
        phase = "first compiled call" if config.compiled else "forward"
        raise Raised(exc, phase) from None


def raised_result(r: Raised, context: str, loud_is_hazard: bool = True) -> dict:
    observed = f"{context}: raised at {r.phase}: {short(r.exc)}"
    if r.kind in HAZARD_ERRORS and loud_is_hazard:
        return reproduced(r.kind, observed, phase=r.phase, error=r.kind)
    return not_reproduced(observed, seen=r.kind or "error", phase=r.phase, error=r.kind)


# --------------------------------------------------------------------------------------------
# Sources: the tensor the signature talks about, built from what the static side knows.

FLOAT_VALUES = [[-1.5, 0.25, 2.0], [0.5, -0.75, 1.25]]
INT_VALUES = [[-2, 1, 3], [4, -5, 6]]


def dtype_of(name: Optional[str], default: torch.dtype = torch.float32) -> torch.dtype:
    if not name:
        return default
    name = str(name).replace("torch.", "")
    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype):
        raise NoReproducer(f"unknown dtype {name!r}")
    return dt


def known(value: Optional[Any], default: Any) -> Any:
    """A source fact, or ``default`` where the static side did not know it (None)."""
    return default if value is None else value


def make_source(facts: Source, device: str, requires_grad: bool = False, dtype: Optional[torch.dtype] = None):
    dt = dtype if dtype is not None else dtype_of(facts.dtype)
    values = FLOAT_VALUES if dt.is_floating_point or dt.is_complex else INT_VALUES
    if facts.contiguous is False:
        t = torch.tensor(values, dtype=dt, device=device).t().contiguous().t()  # strides (1, 2)
    else:
        t = torch.tensor(values, dtype=dt, device=device)
    if facts.module_state:  # a module's parameter: an nn.Parameter, a leaf that requires grad
        return torch.nn.Parameter(t, requires_grad=bool(requires_grad or known(facts.requires_grad, True)))
    if requires_grad:
        if not dt.is_floating_point:
            raise NoReproducer(f"a {dt} tensor cannot require grad")
        t.requires_grad_(True)
    return t


def storage_span(x) -> Optional[Tuple[int, int]]:
    if isinstance(x, torch.Tensor):
        if x.layout is not torch.strided:
            return None
        s = x.untyped_storage()
        return s.data_ptr(), s.data_ptr() + s.nbytes()
    if is_array(x):
        return x.ctypes.data, x.ctypes.data + max(x.nbytes, 1)
    return None


def is_array(x) -> bool:
    return np is not None and isinstance(x, np.ndarray)


def shares_storage(a, b) -> bool:
    """Storage identity (``untyped_storage().data_ptr()``, numpy ``ctypes.data``): over-approximates
    overlap for disjoint slices, which is what "aliases" means here."""
    sa, sb = storage_span(a), storage_span(b)
    if sa is None or sb is None:
        return False
    return sa[0] < sb[1] and sb[0] < sa[1]


def values(x) -> list:
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        return [round(v, 4) if isinstance(v, float) else v for v in x.flatten().tolist()][:6]
    if is_array(x):
        return [round(float(v), 4) for v in x.reshape(-1)[:6]]
    return x


def leaves(obj) -> List[Any]:
    """The values inside nested dicts, lists and tuples (a state_dict, an op's results), in order."""
    if isinstance(obj, dict):
        return [v for x in obj.values() for v in leaves(x)]
    if isinstance(obj, (list, tuple)):
        return [v for x in obj for v in leaves(x)]
    return [obj]


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    a, b = a.detach().cpu(), b.detach().cpu()
    return a.shape == b.shape and bool(torch.equal(a, b))


def leaf_clone(x: torch.Tensor) -> torch.Tensor:
    """The tracked reference: ``x.detach().clone()``, requiring grad like ``x``."""
    return x.detach().clone().requires_grad_(x.requires_grad)


# --------------------------------------------------------------------------------------------
# In-place ops: arguments that change our source values. Unknown in-place methods are tried with
# ARG_CANDIDATES; a name that is not an in-place tensor method has no reproducer.

def _full(v):
    return lambda t: torch.full_like(t, v)


INPLACE_ARGS: Dict[str, Callable[[torch.Tensor], tuple]] = {
    "mul_": lambda t: (10,), "multiply_": lambda t: (10,), "div_": lambda t: (10,), "divide_": lambda t: (10,),
    "true_divide_": lambda t: (10,), "add_": lambda t: (1,), "sub_": lambda t: (1,), "subtract_": lambda t: (1,),
    "clamp_": lambda t: (-0.5, 0.5), "clip_": lambda t: (-0.5, 0.5), "clamp_min_": lambda t: (0.5,),
    "clamp_max_": lambda t: (0.5,), "fill_": lambda t: (7,), "pow_": lambda t: (2,), "copy_": lambda t: (_full(7)(t),),
    "lerp_": lambda t: (torch.zeros_like(t), 0.5), "addcmul_": lambda t: (torch.ones_like(t), torch.ones_like(t)),
    "addcdiv_": lambda t: (torch.ones_like(t), torch.full_like(t, 2)), "masked_fill_": lambda t: (t > 0, 0),
    "normal_": lambda t: (0.0, 0.02), "uniform_": lambda t: (-0.1, 0.1), "renorm_": lambda t: (2, 0, 0.5),
    "index_fill_": lambda t: (0, torch.tensor([0], device=t.device), 0), "fmod_": lambda t: (0.7,),
    "remainder_": lambda t: (0.7,), "copysign_": lambda t: (-1,), "float_power_": lambda t: (2,),
    "scatter_": lambda t: (0, torch.zeros_like(t, dtype=torch.long), 9.0),
    "exponential_": lambda t: (), "bernoulli_": lambda t: (0.5,), "random_": lambda t: (0, 9),
    "mul": lambda t: (10,),
}
ARG_CANDIDATES: Sequence[Callable[[torch.Tensor], tuple]] = (
    lambda t: (), lambda t: (0.5,), lambda t: (torch.full_like(t, 0.5),), lambda t: (t > 0, 0.5),
    lambda t: (torch.full_like(t, 0.5), 0.5),
)

# nn.init functions: the arguments they need beyond the tensor.
INIT_ARGS: Dict[str, tuple] = {"constant_": (0.5,), "sparse_": (0.5,)}


def call_text(op: str) -> str:
    """``.mul_(10)``: the call as the recipe makes it, for the account of what ran."""
    make = INPLACE_ARGS.get(op)
    if make is None:
        return f".{op}(...)"
    args = make(torch.zeros(1))
    return f".{op}({', '.join(repr(a) if isinstance(a, (int, float)) else '…' for a in args)})"


def is_inplace_method(op: str) -> bool:
    return op.endswith("_") and not op.startswith("_") and callable(getattr(torch.Tensor, op, None)) \
        and op not in ("requires_grad_", "share_memory_", "detach_", "retain_grad")


def apply_inplace(t: torch.Tensor, op: str):
    """``t.<op>(...)`` with arguments that change our source values."""
    if not is_inplace_method(op):
        raise NoReproducer(f"`{op}` is not an in-place tensor method")
    method = getattr(t, op)
    if op in INPLACE_ARGS:
        return method(*INPLACE_ARGS[op](t))
    last: Optional[BaseException] = None
    for make in ARG_CANDIDATES:
        try:
            return method(*make(t))
        except TypeError as exc:  # signature mismatch: try the next argument shape
            last = exc
        except RuntimeError as exc:
            if error_kind(exc) is not None:
                raise
            last = exc
    raise NoReproducer(f"no argument shape works for `{op}`: {last}")


SETITEM = Syntax.SETITEM.value  # ``r[0] = 5``, on tensors and numpy arrays alike

# ``a *= 2`` is reported as ``mul_`` whatever ``a`` is (catalog.AUGMENTED_INPLACE): on a numpy
# array the in-place method is the operator (or the array's own method), done and spelled so.
ARRAY_WRITES: Dict[str, Tuple[Callable[[Any], Any], str]] = {}
for _names, _fn, _text in (
    (("mul_", "multiply_"), lambda r: r.__imul__(10), " *= 10"),
    (("add_",), lambda r: r.__iadd__(1), " += 1"),
    (("sub_", "subtract_"), lambda r: r.__isub__(1), " -= 1"),
    (("div_", "divide_", "true_divide_"), lambda r: r.__itruediv__(10), " /= 10"),
    (("pow_",), lambda r: r.__ipow__(2), " **= 2"),
    (("fill_",), lambda r: r.fill(7), ".fill(7)"),
    (("zero_",), lambda r: r.fill(0), ".fill(0)"),
):
    for _n in _names:
        ARRAY_WRITES[_n] = (_fn, _text)


def is_write(op: str) -> bool:
    return op == SETITEM or is_inplace_method(op)


def apply_write(r, op: str, args: Optional[str] = None):
    given = literal_args(args)
    if given and not is_array(r) and is_inplace_method(op):
        return getattr(r, op)(*given)  # the static side's own arguments, e.g. clamp_(0, 1)
    if op == SETITEM:
        return r.__setitem__(0, 5)
    if is_array(r):
        if op in ARRAY_WRITES:
            return ARRAY_WRITES[op][0](r)
        raise NoReproducer(f"`{op}` on a numpy array")
    return apply_inplace(r, op)


def write_text(op: str, args: Optional[str] = None, array: bool = False) -> str:
    """How :func:`apply_write` writes, as code: ``.clamp_(0, 1)``, `` *= 10``, ``[0] = 5``."""
    if literal_args(args) and not array:
        return f".{op}({args})"
    if op == SETITEM:
        return "[0] = 5"
    if array and op in ARRAY_WRITES:
        return ARRAY_WRITES[op][1]
    return call_text(op)


# --------------------------------------------------------------------------------------------
# Chains: the conversions, views and aliases between a source and what gets written or kept.

def need_numpy() -> bool:
    if np is None:
        raise NoReproducer("numpy is not installed")
    return True


def _expand(t):
    row = t[:1] if t.dim() and t.shape[0] != 1 else t
    return row.expand(4, *row.shape[1:])


GETITEM, ALIAS = Syntax.GETITEM.value, Syntax.ALIAS.value

CHAIN_OPS: Dict[str, Callable[[Any], Any]] = {
    "data": lambda t: t.data, "detach": lambda t: t.detach(), "cpu": lambda t: t.cpu(),
    "cuda": lambda t: t.cuda(), "float": lambda t: t.float(), "double": lambda t: t.double(),
    "half": lambda t: t.half(), "bfloat16": lambda t: t.bfloat16(), "long": lambda t: t.long(),
    "int": lambda t: t.int(), "to": lambda t: t.to(t.dtype), "type_as": lambda t: t.type_as(t),
    "contiguous": lambda t: t.contiguous(),
    "numpy": lambda t: need_numpy() and t.numpy(), "from_numpy": lambda a: torch.from_numpy(a),
    "as_tensor": lambda t: torch.as_tensor(t),
    "asarray": lambda t: np.asarray(t) if is_array(t) else torch.asarray(t),
    "array": lambda t: need_numpy() and np.array(t), "OrderedDict": lambda t: t,
    "view": lambda t: t.view(-1), "view_as": lambda t: t.view_as(t), "reshape": lambda t: t.reshape(-1),
    "reshape_as": lambda t: t.reshape_as(t), "flatten": lambda t: t.flatten(), "ravel": lambda t: t.ravel(),
    "t": lambda t: t.t(), "T": lambda t: t.T, "mT": lambda t: t.mT, "H": lambda t: t.H, "mH": lambda t: t.mH,
    "transpose": lambda t: t.transpose(0, -1), "swapaxes": lambda t: t.swapaxes(0, -1),
    "swapdims": lambda t: t.swapdims(0, -1), "permute": lambda t: t.permute(*reversed(range(t.dim()))),
    "movedim": lambda t: t.movedim(0, -1), "moveaxis": lambda t: t.moveaxis(0, -1),
    "squeeze": lambda t: t.squeeze(), "unsqueeze": lambda t: t.unsqueeze(0),
    "narrow": lambda t: t.narrow(0, 0, 1), "select": lambda t: t.select(0, 0),
    GETITEM: lambda t: t[:1], "diagonal": lambda t: t.diagonal(), "expand": _expand,
    "expand_as": lambda t: t[:1].expand_as(t) if t.dim() else t,
    "unbind": lambda t: t.unbind(0)[0], "split": lambda t: t.split(1)[0], "chunk": lambda t: t.chunk(2)[0],
    "tensor_split": lambda t: t.tensor_split(2)[0], "unflatten": lambda t: t.unflatten(-1, (1, -1)),
    "real": lambda t: t.real, "positive": lambda t: t.positive(), "resolve_conj": lambda t: t.resolve_conj(),
    "resolve_neg": lambda t: t.resolve_neg(), ALIAS: lambda t: t,
    "dropout": lambda t: torch.nn.functional.dropout(t, 0.5, training=False),
    "clone": lambda t: t.clone(), "copy": lambda t: t.copy() if is_array(t) else copy.copy(t),
    "deepcopy": lambda t: copy.deepcopy(t), "tensor": lambda t: torch.tensor(t),
}


_INDEX_CHARS = set("0123456789:, -[]")


def literal_args(text: Optional[str]) -> Optional[tuple]:
    """The arguments the static side saw (``"0, 0, 2"``), or None when unknown / not literal."""
    if text is None:
        return None
    import ast

    try:
        return ast.literal_eval(f"({text},)") if text.strip() else ()
    except (ValueError, SyntaxError):
        return None


def _index(t, text: str):
    """``t[<text>]`` for a subscript made only of integers, slices, ``None`` and ``...``."""
    if not set(text.replace("None", "").replace("...", "")) <= _INDEX_CHARS:
        raise NoReproducer(f"the index `{text}` is not literal")
    return eval(f"t{text}", {"__builtins__": {}}, {"t": t})  # noqa: S307 - characters checked above


def apply_chain(x, ops: Sequence[str], args: Optional[Sequence[Optional[str]]] = None):
    """Apply the chain with the static side's own arguments where it knew them (``narrow(0, 0, 2)``
    stays ``narrow(0, 0, 2)``), the table's defaults where it did not."""
    r = x
    for i, op in enumerate(ops):
        text = args[i] if args is not None and i < len(args) else None
        if text and op == GETITEM and text.startswith("["):
            r = _arg_call(op, lambda: _index(r, text))
            continue
        given = literal_args(text) if op not in WRAPPING_OPS else None
        if given and isinstance(r, torch.Tensor) and callable(getattr(torch.Tensor, op, None)):
            r = _arg_call(op, lambda: getattr(r, op)(*given))
            continue
        fn = CHAIN_OPS.get(op)
        if fn is None:
            if isinstance(r, torch.Tensor) and not op.startswith("_") and not op.endswith("_") \
                    and callable(getattr(torch.Tensor, op, None)):
                r = _arg_call(op, lambda: getattr(r, op)())  # an argument-free tensor method we have no entry for
                continue
            raise NoReproducer(f"no recipe for the op `{op}`")
        r = fn(r)
    return r


def _arg_call(op: str, call: Callable[[], Any]):
    """A chain op with arguments: arguments that do not fit (``as_strided()`` with none, an index
    out of the reproducer's 2x3 range) mean there is no reproducer, not that the pattern is safe."""
    try:
        return call()
    except NoReproducer:
        raise
    except (TypeError, IndexError, RuntimeError) as exc:
        if error_kind(exc) is not None:
            raise
        raise NoReproducer(f"`{op}` cannot be reproduced with these arguments: {type(exc).__name__}: {exc}"[:300]) \
            from None


CHAIN_TEXT: Dict[str, str] = {
    GETITEM: "[:1]", "T": ".T", "mT": ".mT", "H": ".H", "mH": ".mH", "real": ".real", "data": ".data", ALIAS: "",
    "view": ".view(-1)", "reshape": ".reshape(-1)", "transpose": ".transpose(0, -1)",
    "expand": "[:1].expand(4, -1)", "narrow": ".narrow(0, 0, 1)", "select": ".select(0, 0)",
    "unsqueeze": ".unsqueeze(0)", "unbind": ".unbind(0)[0]", "split": ".split(1)[0]", "chunk": ".chunk(2)[0]",
    "to": ".to(x.dtype)", "movedim": ".movedim(0, -1)", "swapaxes": ".swapaxes(0, -1)",
    "weight": ".weight", "bias": ".bias",
}


WRAPPING_OPS = {"deepcopy": "copy.deepcopy", "dict": "dict", "list": "list", "tuple": "tuple",
                "as_tensor": "torch.as_tensor", "asarray": "torch.asarray", "array": "numpy.array",
                "from_numpy": "torch.from_numpy", "tensor": "torch.tensor"}


def describe(source: str, ops: Sequence[str], args: Optional[Sequence[Optional[str]]] = None) -> str:
    text = source
    for i, op in enumerate(ops):
        given = args[i] if args is not None and i < len(args) else None
        if op in WRAPPING_OPS:
            text = f"{WRAPPING_OPS[op]}({text})"
        elif given and op == GETITEM and given.startswith("["):
            text += given
        elif given and literal_args(given):
            text += f".{op}({given})"
        else:
            text += CHAIN_TEXT.get(op, f".{op}()")
    return text


def try_write(attempt: Callable[[], Any]) -> None:
    """Perform a write once on a scratch tensor: a write the tables cannot perform (unknown op,
    arguments that do not fit) is a missing recipe, found before anything is observed."""
    try:
        attempt()
    except NoReproducer:
        raise
    except Exception as exc:  # noqa: BLE001
        if error_kind(exc) is None:
            raise NoReproducer(f"the write cannot be reproduced: {short(exc)}") from None


# --------------------------------------------------------------------------------------------
# Gradients

def grad_of(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    ref = leaf_clone(x)
    fn(ref).backward()
    return ref.grad


def square_sum(x):
    return (x * x).sum()  # MulBackward0 saves x: a later write to x's memory matters


def backward_outcome(x: torch.Tensor, y: torch.Tensor, reference: torch.Tensor, context: str, config: Config):
    """Run the pending backward and compare ``x.grad`` with the tracked reference."""
    try:
        y.backward()
    except Exception as exc:  # noqa: BLE001
        return raised_result(Raised(exc, "backward"), context)
    got = x.grad
    if got is None:
        return not_reproduced(f"{context}: no gradient reached the source", seen="no-gradient")
    if same(got, reference):
        return not_reproduced(f"{context}: gradient {values(got)} equals the tracked reference", seen="gradient-correct",
                             grad=values(got), reference=values(reference))
    return reproduced("silent-wrong-gradient",
                     f"{context}: no error, gradient {values(got)} but the tracked reference is {values(reference)}",
                     grad=values(got), reference=values(reference))


# --------------------------------------------------------------------------------------------
# An alias chain and a write through one side of it (TAL002, TAL201, TAL301)

def split_write(ops: Sequence[str]) -> Tuple[List[str], Optional[str]]:
    ops = list(ops)
    if ops and is_write(ops[-1]):
        return ops[:-1], ops[-1]
    return ops, None


def _snapshot(v):
    return v.copy() if is_array(v) else v.detach().clone()


def _same_values(a, b) -> bool:
    a, b = torch.as_tensor(a).detach().cpu(), torch.as_tensor(b).detach().cpu()
    return a.shape == b.shape and bool(torch.equal(a, b))


# Conversions that copy or not depending on the source's dtype: (dtype where it is a no-op, one where it converts).
DTYPE_CASES = {"float": ("float32", "float64"), "double": ("float64", "float32"), "half": ("float16", "float32"),
               "bfloat16": ("bfloat16", "float32"), "long": ("int64", "float32"), "int": ("int32", "float32")}


def alias_write(sig: Signature, config: Config, **options) -> dict:
    """:func:`alias_write_case`, once per dtype when the dtype decides whether a conversion in the
    chain copies: the static side rarely knows the dtype (its ``dtype`` names the no-op case), so
    both the no-op and the converting case run, and the result says which one showed the hazard."""
    facts = sig.facts
    convs = [op for op in sig.ops if op in DTYPE_CASES]
    if not convs or facts.dtype_known:
        return alias_write_case(sig, config, **options)
    noop, converting = DTYPE_CASES[convs[-1]]
    results = {}
    for dtype in (noop, converting):
        case = dataclasses.replace(sig, source=dataclasses.replace(facts, dtype=dtype))
        try:
            results[dtype] = alias_write_case(case, config, **options)
        except NoReproducer as exc:
            results[dtype] = {"status": "no-reproducer", "observed": str(exc)}
    first = results[noop]
    if first["status"] == "no-reproducer":
        raise NoReproducer(first["observed"])
    out = dict(first)
    other = results[converting]
    out["observed"] = (f"as {noop} (`.{convs[-1]}()` is a no-op): {first['observed']} | as {converting} (it converts):"
                       f" {other.get('status')}: {other.get('observed')}")
    out["details"] = dict(first.get("details") or {}, dtype_cases={noop: first["status"], converting: other.get("status")},
                          seen_when=noop if first["status"] == "reproduced" else None)
    return out


def alias_write_case(sig: Signature, config: Config, *, default_write: Optional[str], default_pending: bool,
                default_requires_grad: bool, no_grad_write: bool = False) -> dict:
    """Make the source, derive the alias through the signature's chain, write through one side
    and watch the other. ``no_grad_write``: the write runs under ``torch.no_grad()`` (TAL301 asks
    whether the write reaches the other name, not what autograd thinks of it)."""
    facts = sig.facts
    chain, write = split_write(sig.ops)
    all_args = list(sig.args or ())
    chain_args = all_args[:len(chain)]
    write_args = all_args[len(chain)] if write is not None and len(all_args) > len(chain) else None
    write = write or default_write
    pending = bool(known(facts.pending_graph, default_pending))
    from_array = bool(chain) and chain[0] == "from_numpy" or facts.type == "ndarray"
    requires_grad = not from_array and bool(
        pending or known(facts.requires_grad, known(facts.leaf, default_requires_grad)) or facts.module_state)
    # which side is written: the chain's result or the source
    mutated = sig.written or "alias"
    if config.device != "cpu" and (from_array or any(op in NUMPY_OPS for op in chain)):
        raise NotApplicable(f"on {config.device} a NumPy array cannot share the tensor's memory (`.cpu()` copies "
                            f"and `.numpy()` needs a CPU tensor), so this alias cannot happen there")

    def source():
        t = make_source(facts, config.device, requires_grad=requires_grad)
        return t.numpy() if from_array and need_numpy() else t

    x = source()
    name = "arr" if from_array else "x"
    alias_text = describe(name, chain, chain_args)
    # Eager, outside the body: does the chain hand out the source's storage?
    try:
        probe = apply_chain(x, chain, chain_args)
        aliases = shares_storage(x, probe)
        same_object = probe is x
    except NoReproducer:
        raise
    except Exception as exc:  # noqa: BLE001
        kind = error_kind(exc)
        return not_reproduced(f"`{alias_text}` raised: {short(exc)}", seen=kind or "error", error=kind)
    array = is_array(probe)
    del probe
    if write is None:
        if aliases:
            return reproduced("shared-storage", f"`{alias_text}` shares {name}'s storage" +
                             (" (the same object)" if same_object else ""), shares_storage=True)
        return not_reproduced(f"`{alias_text}` is a copy: storage not shared", seen="copy", shares_storage=False)
    # An op the tables cannot perform is a missing recipe, found before anything runs.
    try_write(lambda: apply_write(_plain(apply_chain(source(), chain, chain_args)) if mutated != "source" else _plain(source()),
                                  write, write_args))

    write_code = write_text(write, write_args, array if mutated != "source" else from_array)
    guard = torch.no_grad if (no_grad_write or mutated == "source") else _nothing
    before = _snapshot(x)
    reference = grad_of(square_sum, x) if pending else None

    if mutated == "source":
        def body(x):
            y = square_sum(x) if pending else None
            r = apply_chain(x, chain, chain_args)
            kept = _snapshot(r)
            with guard():
                apply_write(x, write, write_args)
            return y, kept, _snapshot(r)

        context = f"r = {alias_text}; {name}{write_code}; read r"
        try:
            y, kept, after = run_body(body, (x,), config)
        except Raised as r:
            return raised_result(r, context)
        if _same_values(kept, after):
            return not_reproduced(f"{context}: r kept its values {values(kept)}: `{alias_text}` is a copy",
                                 seen="copy", shares_storage=aliases)
        return reproduced("alias-mutated", f"{context}: r changed {values(kept)} -> {values(after)} through {name}",
                         shares_storage=aliases)

    def body(x):
        y = square_sum(x) if pending else None
        r = apply_chain(x, chain, chain_args)
        with guard():
            apply_write(r, write, write_args)
        return y

    context = (f"y = (x*x).sum(); r = {alias_text}; r{write_code}; y.backward()" if pending
               else f"r = {alias_text}; r{write_code}")
    try:
        y = run_body(body, (x,), config)
    except Raised as r:
        return raised_result(r, context)
    changed = not _same_values(x, before)
    if pending:
        outcome = backward_outcome(x, y, reference, context, config)
        outcome["details"]["source_changed"] = changed
        if outcome["status"] == "not-reproduced" and changed:
            return reproduced("source-mutated", f"{context}: gradient correct, but x changed behind its back "
                             f"{values(before)} -> {values(x)}", shares_storage=aliases)
        return outcome
    if changed:
        return reproduced("source-mutated", f"{context}: {name} changed behind its back {values(before)} -> {values(x)}",
                         shares_storage=aliases)
    return not_reproduced(f"{context}: {name} unchanged {values(x)}: `{alias_text}` is a copy here", seen="copy",
                         shares_storage=aliases)


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _plain(v):
    """A scratch value for trying a write: detached from any graph."""
    return v.detach() if isinstance(v, torch.Tensor) else v

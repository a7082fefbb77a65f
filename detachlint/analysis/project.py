"""The project index: what each function and method of the linted project does to its inputs and
to ``self``, across functions, classes and modules.

Real bugs rarely sit in one function: the "best" snapshot is stored on ``self`` in one method while
the optimizer steps in another; an in-place helper lives in another module. One cheap pass with
Python's own parser (``ast``, no LibCST) over every file being linted gives each file's *local*
facts (``ModuleFacts``: imports, classes and their bases, and per function which parameters it
writes in place, whether it steps an optimizer or calls backward, which live-state snapshots it
stores on ``self`` and where it uses them, whom it calls). ``ProjectIndex`` then composes them:
calls are resolved through the project's own imports, ``self.method()`` through the class and its
bases (in other files too), and the facts flow through calls to a bounded fixpoint.

Local facts depend only on a file's text, so they are cached per content (``to_json`` /
``from_json``); composing is cheap and always redone, so an edit in one file reaches its callers.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, List, Mapping, MutableMapping, Optional, Sequence, Set, Tuple, Union

from ..knowledge import catalog
from ..knowledge.torch_facts import (LIST_MARK, MODULE_LISTS, SEQUENTIAL, UNKNOWN_MODULE, ModuleEffect, converts_argument,
                          copies_after_reordering, element_effect, is_copy_intent_conversion, is_optimizer_class, is_optimizer_name, is_view_attribute,
                          flipped, module_effect, module_entry, reorders_dimensions, shares_receiver_memory, stepped_optimizer,
                          writes_first_argument, writes_own_metadata, writes_receiver)
from ..files import SourceError, decode_source, file_digest
from ..frontend.firstpass import PIECES_SIZE, FirstPass, TooDeep, first_pass_in_pieces, gc_paused, too_deep
from ..frontend.sites import Sites
from ..frontend.units import Span, Unit, child_nodes, quiet_code, source_lines, statements
from ..frontend.units import dotted as _dotted

FORMAT = "28"
_FIXPOINT_ROUNDS = 8  # call chains deeper than this are not followed (summaries stay sound: fewer facts)

# Framework callbacks that run over and over between training steps (Lightning, Keras-style,
# Hugging Face ``TrainerCallback``, hand-written early stopping): state stored there is taken
# before the next steps run.
_CALLBACK_METHOD = re.compile(r"^on_\w+$|^__call__$|^step$")
_CALLBACK_CLASS = re.compile(r"callback|early_?stop|checkpoint|stopper|saver|tracker", re.IGNORECASE)


_CALLED_NAME = re.compile(r"\b(\w+)\s*\(")  # a name called: ``f(``, ``mod.f (``
_MODEL_NAME = re.compile(r"model|net|module|encoder|decoder|policy|critic|actor|generator|discriminator",
                         re.IGNORECASE)


def _trained(receiver: str, params: Sequence[str]) -> bool:
    """Whether a callback's ``<receiver>.state_dict()`` is of what the training loop trains: the
    model it is handed (``model``, ``pl_module.model``) or one it keeps (``self.model``), not an
    object of its own such as a sparsifier or a scheduler."""
    root, _, rest = receiver.partition(".")
    if root in params[1:]:
        return True
    return bool(rest) and bool(_MODEL_NAME.search(rest.rsplit(".", 1)[-1]))


def _last_name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _last_name(node.func)
    return ""


def _live_state_receiver(node: ast.AST) -> Optional[str]:
    """``<x>.state_dict()`` whose result holds the live tensors of ``x`` (a model or an
    optimizer, not a scheduler/scaler/sampler, whose state dicts are fresh numbers)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in catalog.STATE_SNAPSHOT_METHODS and not node.args):
        return None
    receiver = _dotted(node.func.value)
    if receiver is None:
        return None
    last = receiver.rsplit(".", 1)[-1].lower()
    if any(h in last for h in catalog.NOT_PARAMETER_STATE_HINTS):
        return None
    return receiver


def _snapshot_of(node: ast.AST) -> Optional[str]:
    """The receiver when ``node`` keeps live state by reference: ``x.state_dict()``, its shallow
    copies (``.copy()``, ``dict(...)``, ``OrderedDict(...)``, ``copy.copy(...)``)."""
    receiver = _live_state_receiver(node)
    if receiver is not None:
        return receiver
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr == "copy" and not node.args:
            return _live_state_receiver(node.func.value)
        name = _dotted(node.func) or ""
        if name.rsplit(".", 1)[-1] in ("dict", "OrderedDict") or name == "copy.copy":
            if len(node.args) == 1 and not node.keywords:
                return _live_state_receiver(node.args[0])
    return None


@dataclass
class CallSite:
    """A call the function makes: the callee as written (``helper``, ``utils.helper``,
    ``self.step``) and, per positional argument, the caller's parameter it passes (or -1)."""

    callee: str
    args: Tuple[int, ...]
    line: int


@dataclass
class FunctionFacts:
    name: str  # qualified within the module: ``f`` or ``Class.method``
    params: Tuple[str, ...]
    line: int
    is_method: bool = False
    writes: Tuple[int, ...] = ()  # parameters written in place here
    steps: Optional[int] = None  # line of an optimizer step
    backward: Optional[int] = None  # line of a backward call
    stores: Dict[str, Tuple[int, str]] = field(default_factory=dict)  # self attr -> (line, snapshot of what)
    uses: Dict[str, Tuple[int, str]] = field(default_factory=dict)  # self attr -> (line, how it is used)
    calls: List[CallSite] = field(default_factory=list)
    returns: Tuple[int, ...] = ()  # parameters whose memory the returned value may share
    returns_kind: Optional[str] = None  # "ndarray" or "tensor" when every return says so
    returns_converted: bool = False  # the shared memory comes back through a conversion (``.cpu()``, ``np.asarray``)
    # line of an optimizer step in a closure this function defines and returns (``def step(x): ...
    # self.optimizer.step()`` ... ``return step``): calling the result steps
    makes_steps: Optional[int] = None
    callables: Dict[str, str] = field(default_factory=dict)  # self attr -> the call it is set from
    # parameters written by ``p op= v`` on the bare name: in place when the caller passes a tensor
    # or an array, a new value bound to the local name when it passes a number
    array_writes: Tuple[int, ...] = ()
    # (parameter, line): written in place through its own name or a view of it, with no
    # conversion between (``val.clamp_()``, ``x[0] = v``), on a path where it is still the
    # caller's value: the function fills its argument on purpose
    fills: Tuple[Tuple[int, int], ...] = ()
    # parameters (of ``writes``) written here only through ``.data`` (``p.data.mul_(d)``): writes
    # that bump no version counter, so no backward raises over them
    untracked: Tuple[int, ...] = ()
    # every return that shares a parameter's memory returns a name a loop swaps with another
    # (``x, c = c, x``): the caller's memory only for some iteration counts
    returns_partial: bool = False
    # (callee as written, line): a call whose result reaches a backward here (``f(x).backward()``,
    # ``loss = f(x) + r; loss.backward()``), and the callees whose results are returned
    backprops: Tuple[Tuple[str, int], ...] = ()
    returns_calls: Tuple[str, ...] = ()
    # (callee as written, positions): a call that passes a tensor (made by torch here) at these positions
    tensor_args: Tuple[Tuple[str, Tuple[int, ...]], ...] = ()
    # in a method ``forward``: the callees its returned value is computed from (through arguments too)
    forward_from: Tuple[str, ...] = ()
    # (callee as written, argument position or keyword, line of the call, line of a later read): a local name
    # passed to ``f(...)`` or ``self.f(...)`` and read again after the call (issue 40: what a
    # callee writing that argument in place changes under the caller); only from ``module_facts(...,
    # rereads=True)``, which ``ProjectIndex.read_after_call`` asks for: the index's own facts hold none
    rereads: Tuple[Tuple[str, Union[int, str], int, int], ...] = ()
    # parameters no op here computes a value from: read only for metadata (``w.shape``,
    # ``w.data.storage().data_ptr()``, ``w is None``) or handed on as a bare positional argument
    # (``ProjectIndex.graph_parameters`` asks the callee): a graph built here saves nothing of them
    inert: Tuple[int, ...] = ()
    # how many positional arguments a call passes it, ``self`` counted: (least, most; -1 for ``*args``)
    arity: Tuple[int, int] = (0, -1)
    # (callee as written, positions): a call that passes no tensor at these positions (a shape, a
    # tuple or list display, a number, a NumPy array, a parameter annotated ``tuple``)
    other_args: Tuple[Tuple[str, Tuple[int, ...]], ...] = ()
    # (callee as written, position or keyword, line): a call of the module's own function that passes
    # there a local name (not a parameter: the caller's caller may hold that) or an arithmetic result
    temporaries: Tuple[Tuple[str, Union[int, str], int], ...] = ()
    # parameters (of ``writes``) written here only in part, through an index (``x[..., -1] += eps``):
    # a caller's view of another part of the argument is not known to see the write
    partial_writes: Tuple[int, ...] = ()


@dataclass
class ClassFacts:
    name: str
    bases: Tuple[str, ...]  # as written, resolved through imports by the index
    line: int
    # ``self.<attr>`` -> the ``torch.nn`` modules it holds, in call order (``torch_facts.held_module``
    # entries: ``ReLU!`` for ``nn.ReLU(inplace=True)``, an ``nn.Sequential``'s contents, ``?``)
    modules: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    # the ``torch.nn`` classes (``*``: any) whose ``inplace`` flag a loop over ``self.modules()`` sets,
    # also on the modules of the project classes held (``children``: attribute -> the class as called),
    # and ``.attr`` for ``self.attr.inplace = True`` (subclasses set it on what a base class made)
    flips: Tuple[str, ...] = ()
    children: Dict[str, str] = field(default_factory=dict)
    # an ``autograd.Function``: the ``apply`` arguments its ``forward`` keeps by ``ctx.save_for_backward``
    saved: Tuple[int, ...] = ()
    # the ``apply`` arguments its ``forward`` keeps for backward at all: ``saved``, and those (or
    # locals computed from them) stored on ``ctx`` where ``backward`` reads more than their shape
    kept: Tuple[int, ...] = ()
    # ``self.<attr>`` -> (the wrapper, the parameter it recomputes, the line, the module class
    # wrapped) for ``self.conv = weight_norm(nn.Conv1d(...))`` (``catalog.RECOMPUTED_PARAMETERS``);
    # ``*``: the first such wrapping anywhere in ``__init__`` (a module ``self.apply(f)`` hands ``f``)
    wrapped: Dict[str, Tuple[str, str, int, str]] = field(default_factory=dict)


@dataclass
class ModuleFacts:
    imports: Dict[str, str] = field(default_factory=dict)  # local name -> dotted target
    classes: Dict[str, ClassFacts] = field(default_factory=dict)
    functions: Dict[str, FunctionFacts] = field(default_factory=dict)
    # What the engine's first pass would find on the same tree (``firstpass.too_deep``), so that
    # a linted file is not parsed by Python a second time.
    deep: Optional[TooDeep] = None
    quiet: List[Unit] = field(default_factory=list)  # ``units.quiet_units``: bodies the engine blanks
    elements: List[Span] = field(default_factory=list)  # ``units.quiet_elements``: and table elements
    sites: Optional[Sites] = None  # the rules' sites ``quiet`` and ``elements`` were decided for (None: none found)
    # (callee as written, line): a call whose result the module's own code (a script's body, an
    # ``if __name__ == "__main__":`` block) backpropagates: ``loss = f(x); loss.backward()``
    backprops: Tuple[Tuple[str, int], ...] = ()
    tensor_args: Tuple[Tuple[str, Tuple[int, ...]], ...] = ()  # ``FunctionFacts.tensor_args`` of that code
    other_args: Tuple[Tuple[str, Tuple[int, ...]], ...] = ()  # ``FunctionFacts.other_args`` of that code

    def to_json(self) -> dict:
        return {
            "deep": [self.deep.message, self.deep.row, self.deep.column] if self.deep is not None else None,
            "quiet": [[u.first, u.last, u.indent] for u in self.quiet],
            "elements": [[s.row, s.column, s.end_row, s.end_column, s.calls] for s in self.elements],
            "sites": self.sites.to_json() if self.sites is not None else None,
            "imports": self.imports,
            "backprops": self.backprops,
            "tensor_args": self.tensor_args,
            "other_args": self.other_args,
            "classes": {k: [c.bases, c.line, c.modules, c.flips, c.children, c.saved, c.kept, c.wrapped]
                        for k, c in self.classes.items()},
            "functions": {k: [f.params, f.line, f.is_method, f.writes, f.steps, f.backward,
                              {a: list(v) for a, v in f.stores.items()}, {a: list(v) for a, v in f.uses.items()},
                              [[c.callee, c.args, c.line] for c in f.calls], f.returns, f.returns_kind,
                              f.returns_converted, f.makes_steps, f.callables, f.array_writes, f.fills, f.untracked,
                              f.returns_partial, f.backprops, f.returns_calls, f.tensor_args, f.forward_from,
                              f.rereads, f.inert, f.arity, f.other_args, f.temporaries, f.partial_writes]
                          for k, f in self.functions.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping) -> "ModuleFacts":
        facts = cls(dict(data["imports"]), deep=TooDeep(*data["deep"]) if data["deep"] is not None else None,
                    quiet=[Unit(*u) for u in data["quiet"]],
                    elements=[Span(*s[:4], tuple(s[4])) for s in data["elements"]],
                    sites=Sites.from_json(data["sites"]) if data["sites"] is not None else None,
                    backprops=tuple((c, ln) for c, ln in data["backprops"]),
                    tensor_args=tuple((c, tuple(a)) for c, a in data["tensor_args"]),
                    other_args=tuple((c, tuple(a)) for c, a in data["other_args"]))
        for name, (bases, line, modules, flips, children, saved, kept, wrapped) in data["classes"].items():
            facts.classes[name] = ClassFacts(name, tuple(bases), line, {a: tuple(m) for a, m in modules.items()},
                                             tuple(flips), dict(children), tuple(saved), tuple(kept),
                                             {a: tuple(w) for a, w in wrapped.items()})
        for name, row in data["functions"].items():
            (params, line, is_method, writes, steps, backward, stores, uses, calls, returns, returns_kind, converted,
             makes_steps, callables, array_writes, fills, untracked, partial, backprops, returns_calls,
             tensor_args, forward_from, rereads, inert, arity, other_args, temporaries, partial_writes) = row
            facts.functions[name] = FunctionFacts(
                name, tuple(params), line, is_method, tuple(writes), steps, backward,
                {a: (v[0], v[1]) for a, v in stores.items()}, {a: (v[0], v[1]) for a, v in uses.items()},
                [CallSite(c, tuple(a), ln) for c, a, ln in calls], tuple(returns), returns_kind, converted,
                makes_steps, dict(callables), tuple(array_writes), tuple((i, ln) for i, ln in fills), tuple(untracked),
                partial, tuple((c, ln) for c, ln in backprops), tuple(returns_calls),
                tuple((c, tuple(a)) for c, a in tensor_args), tuple(forward_from),
                tuple((c, i, ln, r) for c, i, ln, r in rereads), tuple(inert), (arity[0], arity[1]),
                other_args=tuple((c, tuple(a)) for c, a in other_args),
                temporaries=tuple((c, i, ln) for c, i, ln in temporaries), partial_writes=tuple(partial_writes))
        return facts


# --- local facts --------------------------------------------------------------------------------

# node class -> the scanner's (unbound) ``visit_`` method for it, or ``generic_visit``: looked up
# once per class rather than by name at every node
_VISIT_METHODS: Dict[type, Callable] = {}


def _visit_method(cls: type) -> Callable:
    method = _VISIT_METHODS[cls] = getattr(_FunctionScanner, "visit_" + cls.__name__, _FunctionScanner.generic_visit)
    return method


_RANKED_FACTORIES = catalog.ONE_D_FACTORIES | catalog.RANKED_RESULTS  # torch functions whose result has a dimension


class _IndexRanks:
    """What makes an index advanced, for ``_FunctionScanner``: lists, and tensors of one dimension or
    more (``copies.Indexing`` decides the same on the lint's side, from the same catalogue)."""

    lists: Set[str]  # names every binding of which (so far) is a Python list
    ranked: Set[str]  # names every binding of which (so far) is a tensor of one dimension or more
    least: Dict[str, int]  # list names -> the least length the code so far shows (``L[0] = 1`` ran)
    shares: Dict[str, Set[int]]
    imports: Mapping[str, str]
    _in_branch: bool

    def _advanced(self, index: ast.AST) -> bool:
        """An index that is surely advanced, so that the result is a copy: a list (a display, a
        comprehension, or a name only ever bound to one: ``data[ranges]``) or a tensor of one
        dimension or more (``arange(b).to(d).view(shape).repeat(shape)``), alone or in a tuple."""
        return any(e.__class__ in (ast.List, ast.ListComp) or (e.__class__ is ast.Name and e.id in self.lists)
                   or self._ranked(e)
                   for e in (index.elts if index.__class__ is ast.Tuple else (index,)))  # type: ignore[attr-defined]

    def _ranked(self, node: ast.AST, depth: int = 0) -> bool:
        """A tensor the code shows to have a dimension or more (``copies.Indexing._ranked``)."""
        if isinstance(node, ast.Name):
            return node.id in self.ranked
        if not isinstance(node, ast.Call) or depth > 4 or any(k.arg == "as_tuple" for k in node.keywords):
            return False
        name = _dotted(node.func)
        q = (_qualified_name(name, self.imports) if name else _qualified(node.func, self.imports)) or ""
        if q.startswith("torch.") and q.rpartition(".")[2] in _RANKED_FACTORIES:
            return True
        if not isinstance(node.func, ast.Attribute) or (name or "").partition(".")[0] in self.imports:
            return False  # a function of a module (``np.repeat``), not a tensor's method
        method = node.func.attr
        if method in catalog.RANK_ADDING_METHODS or method in catalog.RANKED_RESULTS:
            return True
        if method in catalog.RANK_KEEPING_METHODS:
            return self._ranked(node.func.value, depth + 1)
        if method not in catalog.RANK_SETTING_METHODS or not node.args \
                or any(isinstance(a, ast.Starred) for a in node.args):
            return False
        size = node.args[0]
        return len(node.args) >= 2 or _literal_int(size) is not None or self._least_length(size) >= 1

    def _least_length(self, node: ast.AST) -> int:
        if isinstance(node, (ast.Tuple, ast.List)):
            return 0 if any(isinstance(e, ast.Starred) for e in node.elts) else len(node.elts)
        return self.least.get(node.id, 0) if isinstance(node, ast.Name) and node.id in self.lists else 0

    def _bound_only_to(self, names: Set[str], name: str, holds: bool) -> None:
        """Keep ``names`` (``lists``, ``plain``, ``ranked``: names every binding of which so far is
        such a value) as ``name`` is bound to a value that is one (``holds``) or not. Called before
        ``shares`` records the binding: in a branch, ``name`` stays one only where it was one
        before as well, or was not bound before."""
        if holds and (not self._in_branch or name in names or name not in self.shares):
            names.add(name)
        else:
            names.discard(name)

    def _bind_rank(self, name: str, value: ast.AST) -> None:
        """``name = value``: whether ``name`` stays a tensor of a dimension or more, and a list of a
        known least length (only outside branches: in one, the other path keeps the old value)."""
        self._bound_only_to(self.ranked, name, self._ranked(value))
        self.least.pop(name, None)
        if not self._in_branch and isinstance(value, ast.List):
            self.least[name] = self._least_length(value)

    def _item_written(self, target: ast.AST) -> None:
        """``L[k] = v`` ran (outside branches): ``L`` has more than ``k`` items (IndexError otherwise)."""
        if self._in_branch or not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
            return
        k = _literal_int(target.slice)
        if k is not None and target.value.id in self.lists:
            name = target.value.id
            self.least[name] = max(self.least.get(name, 0), k + 1 if k >= 0 else -k)


class _InertReads:
    """``FunctionFacts.inert`` judged during ``_FunctionScanner``'s own walk: each name read is
    judged where the walk meets it, with the nodes above it."""

    inert: Set[str]  # parameters that may still be inert (``_inert_candidates``)
    _above: List[ast.AST]  # while ``inert`` holds any: the nodes above the one visited

    def visit_Name(self, node: ast.Name) -> None:
        # a name visited on its own (an ``if`` test): nothing above it climbs to a metadata read
        if node.id in self.inert:
            self._judge(node, None)

    def _judge(self, name: ast.Name, parent: Optional[ast.AST]) -> None:
        """``FunctionFacts.inert``: a parameter read other than for its metadata or as a bare
        positional argument (or bound anew) is not inert."""
        if name.ctx.__class__ is ast.Load:
            if parent.__class__ is ast.Call and name in parent.args:  # type: ignore[union-attr]
                return
            above = self._above
            parents: Dict[int, Optional[ast.AST]] = {id(above[i]): above[i - 1] for i in range(len(above) - 1, 0, -1)}
            parents[id(name)] = parent
            if _metadata_read(name, parents):  # type: ignore[arg-type]
                return
        self.inert.discard(name.id)


class _Callees:
    """The project functions a value is computed from, for ``_FunctionScanner``."""

    bound: List[Tuple[Set[str], ast.AST]]
    self_name: Optional[str]
    shares: Dict[str, Set[int]]
    imports: Mapping[str, str]

    def _callees_in(self, node: Optional[ast.AST], through: bool = True) -> Set[str]:
        """The functions and methods (as written) whose results the value of ``node`` is computed
        from, directly or (``through``) through the local names bound so far: the project's
        candidates, not torch's functions nor methods of local values. Asked at a backward call
        (rare), so the bindings' values are walked only then."""
        out: Set[str] = set()
        if node is None:
            return out
        names: Set[str] = set()
        self._calls_in(node, names, out)
        if through:
            for targets, value in reversed(self.bound):
                if targets & names:
                    self._calls_in(value, names, out)
        return out

    def _calls_in(self, node: ast.AST, names: Set[str], out: Set[str]) -> None:
        # ``ast.walk``'s nodes (sets: the order is not kept) through ``child_nodes``: asked at every
        # return, the walk with ``ast.iter_child_nodes`` cost a fifth of the index's scan
        stack = [node]
        while stack:
            sub = stack.pop()
            if sub.__class__ is ast.Name:
                names.add(sub.id)
                continue
            stack.extend(child_nodes(sub))
            if sub.__class__ is ast.Call:
                name = _dotted(sub.func)
                head = (name or "").partition(".")[0]
                if name and (head == self.self_name or head not in self.shares) \
                        and not (_qualified(sub.func, self.imports) or "").startswith(("torch.", "numpy.")):
                    out.add(name)

    def _returned_calls(self, node: ast.AST) -> Set[str]:
        """The callees whose results ``return <node>`` hands back: called in it, or bound, by a call
        alone, to a name it returns (``h = f(x); return h.mean()``); cheaper than ``_callees_in``,
        asked at every return."""
        names: Set[str] = set()
        out: Set[str] = set()
        self._calls_in(node, names, out)
        for targets, value in self.bound:
            if value.__class__ is ast.Call and targets & names:
                self._calls_in(value.func, set(), out)
                name = _dotted(value.func)
                if name and name not in out and (name.partition(".")[0] == self.self_name
                                                 or name.partition(".")[0] not in self.shares):
                    out.add(name)
        return out


class _FunctionScanner(_IndexRanks, _InertReads, _Callees, ast.NodeVisitor):
    """One function body (nested functions and classes are scanned on their own)."""

    def __init__(self, facts: FunctionFacts, self_name: Optional[str], imports: Mapping[str, str],
                 optimizers: Iterable[str] = ()) -> None:
        self.facts = facts
        self.self_name = self_name
        self.imports = imports
        # names known to hold an optimizer by kind: annotated with, or bound to a call of, an
        # optimizer class (the name alone decides only for the others)
        self.optimizers: Set[str] = set(optimizers)
        self.param_index = {p: i for i, p in enumerate(facts.params)}
        self.writes: Set[int] = set()
        self.tracked: Set[int] = set()  # of ``writes``, those written other than through ``.data``
        self.whole: Set[int] = set()  # of ``writes``, those written whole somewhere (not through an index)
        self.array_writes: Set[int] = set()
        self.fills: Dict[int, int] = {}
        self.rebound: Set[str] = set()  # parameters assigned a new value: no longer the caller's
        self.snapshot_names: Dict[str, Tuple[int, str]] = {}  # local name -> (line, of what)
        # local name -> the parameters whose memory it may share (``x = p.cpu()``, ``x = p[0]``)
        self.shares: Dict[str, Set[int]] = {p: {i} for p, i in self.param_index.items()}
        self.returns: Set[int] = set()
        self.kinds: Dict[str, Optional[str]] = {}  # local name -> "ndarray" / "tensor" / None
        self.converted: Dict[str, bool] = {}  # local name -> shares a parameter through a conversion
        self.returns_converted = False
        self.returned_kinds: Set[Optional[str]] = set()
        self.closures: Dict[str, int] = {}  # nested function -> line of the optimizer step in it
        self.attr_names: Dict[str, Set[str]] = {}  # local name -> ``self.<attr>`` it may be read from (``f = self.fn``)
        # local names bound so far, with the values bound (``_callees_in`` walks them only when asked)
        self.bound: List[Tuple[Set[str], ast.AST]] = []
        self.backprops: Dict[str, int] = {}
        self.returns_calls: Set[str] = set()
        self.tensor_args: Dict[str, Set[int]] = {}
        self.other_args: Dict[str, Set[int]] = {}
        self.plain: Set[str] = set()  # names holding no tensor (``_plain``; ``size: tuple`` parameters)
        self.forward_from: Set[str] = set()
        self._branches = 0  # inside if/for/while/try: a rebinding adds a possibility, replaces none
        self._loops = 0
        self.swapped: Set[str] = set()  # names a loop swaps with another (``x, c = c, x``)
        self.partial: List[bool] = []  # per return sharing a parameter: whether only through a swapped name
        # names shown to hold a dict or a list (``isinstance(obj, dict)``, ``obj.items()``): an
        # item write through one writes no tensor (a helper that moves a structure to a device)
        self.containers: Set[str] = set()
        # names every binding of which (so far) is a Python list: as an index, advanced (a copy)
        self.lists: Set[str] = set()
        self.ranked: Set[str] = set()
        self.least: Dict[str, int] = {}
        # calls of ``f(...)``/``self.f(...)`` with local names among their positional arguments:
        # (callee, ((position, name), ...), line, where the call ends)
        self.passed: List[Tuple[str, Tuple[Tuple[int, str], ...], int, ast.Call]] = []
        self.defined: FrozenSet[str] = frozenset()  # the module's functions and methods, by name
        self.follow = False  # whether ``passed`` is kept (for ``rereads``: asked only where a lint needs them)
        self.inert: Set[str] = set()  # parameters that may still be inert (``_inert_candidates``)
        self._above: List[ast.AST] = []  # while ``inert`` holds any: the nodes above the one visited

    @property
    def _in_branch(self) -> bool:
        return self._branches > 0

    def _branch(self, node: ast.AST) -> None:
        self._branches += 1
        self.generic_visit(node)
        self._branches -= 1

    visit_Try = visit_With = _branch

    def _loop(self, node: ast.AST) -> None:
        self._loops += 1
        self._branch(node)
        self._loops -= 1

    visit_While = _loop

    def visit_If(self, node: ast.If) -> None:
        """Under ``isinstance(obj, dict)`` (or after ``if not isinstance(obj, list): return``),
        ``obj`` is a container until it is rebound."""
        before = set(self.containers)
        self._branches += 1
        self.visit(node.test)
        for holds, body in ((True, node.body), (False, node.orelse)):
            self.containers = before | _container_names(node.test, holds)
            for statement in body:
                self.visit(statement)
        self._branches -= 1
        self.containers = before
        if node.body and isinstance(node.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            self.containers |= _container_names(node.test, False)

    def visit(self, node: ast.AST) -> None:
        method = _VISIT_METHODS.get(node.__class__)
        if method is None:
            method = _visit_method(node.__class__)
        method(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        # ``ast.NodeVisitor``'s, in the same order, without the contexts and operators no
        # ``visit_`` method here looks at (a third of the scan), nor names and constants: no
        # ``visit_`` method for them, and nothing below them. While a parameter may still be inert
        # (``inert``), each name is judged here instead, with the nodes above it (``_above``).
        methods = _VISIT_METHODS
        judging = bool(self.inert)
        if not judging:  # the nodes no ``visit_`` method looks at walked off a stack, not a call each
            stack = child_nodes(node)
            stack.reverse()
            pop, generic = stack.pop, _GENERIC_VISIT
            while stack:
                child = pop()
                cls = child.__class__
                if cls is ast.Name or cls is ast.Constant:
                    continue
                method = methods.get(cls)
                if method is None:
                    method = _visit_method(cls)
                if method is generic:
                    below = child_nodes(child)
                    below.reverse()
                    stack += below
                else:
                    method(self, child)
            return
        self._above.append(node)
        for child in child_nodes(node):
            cls = child.__class__
            if cls is ast.Name:
                if judging and child.id in self.inert:  # type: ignore[attr-defined]
                    self._judge(child, node)
            elif cls is not ast.Constant:
                method = methods.get(cls)
                if method is None:
                    method = _visit_method(cls)
                method(self, child)
        self._above.pop()

    def scan(self, body: Sequence[ast.stmt]) -> None:
        for stmt in body:
            self.visit(stmt)
        self.facts.writes = tuple(sorted(self.writes))
        self.facts.untracked = tuple(sorted(self.writes - self.tracked))
        self.facts.partial_writes = tuple(sorted(self.writes - self.whole))
        self.facts.array_writes = tuple(sorted(self.array_writes - self.writes))
        self.facts.fills = tuple(sorted(self.fills.items()))
        self.facts.returns = tuple(sorted(self.returns - ({0} if self.facts.is_method else set())))
        if len(self.returned_kinds) == 1:
            self.facts.returns_kind = next(iter(self.returned_kinds))
        self.facts.returns_converted = self.returns_converted
        self.facts.returns_partial = bool(self.partial) and all(self.partial)
        self.facts.backprops = tuple(sorted(self.backprops.items()))
        self.facts.returns_calls = tuple(sorted(self.returns_calls))
        self.facts.tensor_args = tuple((c, tuple(sorted(a))) for c, a in sorted(self.tensor_args.items()))
        self.facts.other_args = tuple((c, tuple(sorted(a))) for c, a in sorted(self.other_args.items()))
        self.facts.forward_from = tuple(sorted(self.forward_from))
        if self.passed:
            self.facts.rereads = _rereads(body, self.passed)

    def _through_conversion(self, node: Optional[ast.AST]) -> bool:
        """Whether the memory ``_shared`` finds comes through a conversion a caller means as a copy
        (``.cpu()``, ``.numpy()``, ``np.asarray``), not through views or the value itself."""
        if isinstance(node, ast.Name):
            return self.converted.get(node.id, False)
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            return self._through_conversion(node.value)
        if isinstance(node, ast.Call):
            func = node.func
            name = _dotted(func) or ""
            if converts_argument(name.rsplit(".", 1)[-1]) and node.args:
                return True
            if isinstance(func, ast.Attribute):
                if is_copy_intent_conversion(func.attr):
                    return True
                return self._through_conversion(func.value)
        if isinstance(node, ast.IfExp):
            return self._through_conversion(node.body) or self._through_conversion(node.orelse)
        return False

    def _value_kind(self, node: Optional[ast.AST]) -> Optional[str]:
        """``np.asarray(x)``, ``x.numpy()``: an ndarray; ``torch.zeros(...)``: a tensor."""
        cls = node.__class__  # the parser makes no subclasses of its node classes
        if cls is ast.Name:
            return self.kinds.get(node.id)
        if cls is ast.Call:
            name = _dotted(node.func) or ""
            head, _, last = name.rpartition(".")
            if head in ("np", "numpy") and f"numpy.{last}" in catalog.NDARRAY_FUNCTIONS:
                return "ndarray"
            if node.func.__class__ is ast.Attribute and node.func.attr == "numpy":
                return "ndarray"
            if head == "torch" and last in catalog.TENSOR_FUNCTIONS:
                return "tensor"
        if cls is ast.Subscript:
            return self._value_kind(node.value)
        if cls is ast.BinOp and not isinstance(node.op, ast.MatMult):  # ``x * 1.5``: a new tensor
            kinds = {self._value_kind(node.left), self._value_kind(node.right)}
            return "tensor" if kinds == {"tensor"} or kinds == {"tensor", None} and _numeric(node) else None
        return None

    def _plain(self, node: ast.AST, kind: Optional[str] = "?") -> bool:
        """A value that is no tensor: ``img.shape[:2]``, ``x.size()``, ``(h, w)``, ``3``, an ndarray,
        a name bound to one (``self.plain``). ``kind``: its ``_value_kind``, when known."""
        if node.__class__ is ast.Subscript:
            node = node.value  # type: ignore[attr-defined]
        if node.__class__ is ast.Name:
            return node.id in self.plain  # type: ignore[attr-defined]
        if node.__class__ is ast.Attribute:
            return node.attr == "shape"  # type: ignore[attr-defined]
        if node.__class__ in (ast.Tuple, ast.List) or node.__class__ is ast.Call and not node.args \
                and getattr(node.func, "attr", None) in ("size", "tolist"):  # type: ignore[attr-defined]
            return True
        if node.__class__ is ast.Constant:
            return node.value.__class__ in (int, float, str)  # type: ignore[attr-defined]
        return (self._value_kind(node) if kind == "?" else kind) == "ndarray"

    def _shared(self, node: Optional[ast.AST]) -> Set[int]:
        """The parameters whose memory the value of ``node`` may share: the parameter itself,
        an item or slice of it, a view, ``.detach()``/``.data``, a conversion that is a no-op
        when nothing needs converting (``.cpu()``, ``.numpy()``, ``np.asarray``)."""
        if isinstance(node, ast.Name):
            return set(self.shares.get(node.id, ()))
        if isinstance(node, ast.Subscript):
            return set() if self._advanced(node.slice) else self._shared(node.value)
        if isinstance(node, ast.Attribute) and (node.attr in catalog.UNTRACKED_ALIAS_ATTRIBUTES
                                                or is_view_attribute(node.attr)):
            return self._shared(node.value)
        if isinstance(node, ast.Call):
            func = node.func
            name = _dotted(func) or ""
            if converts_argument(name.rsplit(".", 1)[-1]) and node.args:
                return self._shared(node.args[0])  # np.asarray(x), torch.as_tensor(x)
            if isinstance(func, ast.Attribute) and copies_after_reordering(func.attr) and _reordered(func.value):
                return set()  # ``x.permute(0, 2, 1).contiguous()``: a copy (``alias_calls._reordered``)
            if isinstance(func, ast.Attribute) and (
                    shares_receiver_memory(func.attr) or func.attr == "detach"):
                return self._shared(func.value)
        if isinstance(node, ast.IfExp):
            return self._shared(node.body) | self._shared(node.orelse)
        return set()

    # nested scopes have their own facts
    def visit_FunctionDef(self, node: ast.AST) -> None:
        """A closure over ``self`` that steps an optimizer (``_make_train_step_fn``'s
        ``perform_train_step_fn``): remembered, so that returning it makes this function a maker
        of a stepping callable."""
        if self.inert:  # reads in nested scopes count as reads
            _judge_names(node, self.inert)
        if self.self_name is None or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        inner = FunctionFacts(node.name, _params(node), node.lineno)
        _FunctionScanner(inner, self.self_name, self.imports, self.optimizers).scan(node.body)
        if inner.steps is not None:
            self.closures[node.name] = inner.steps

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.AST) -> None:
        if self.inert:
            _judge_names(node, self.inert)

    visit_Lambda = visit_ClassDef

    def _param(self, node: ast.AST) -> int:
        """The parameter a written expression belongs to: ``p``, ``p.data``, ``p[i]``, ``p.grad``."""
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            if isinstance(node, ast.Attribute) and node.attr not in ("data", "grad", "weight", "bias"):
                return -1
            node = node.value
        if isinstance(node, ast.Name) and node.id not in self.rebound:
            return self.param_index.get(node.id, -1)
        return -1

    def _self_attr(self, node: ast.AST) -> Optional[str]:
        if (self.self_name and isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id == self.self_name):
            return node.attr
        return None

    def _write(self, target: ast.AST) -> None:
        if isinstance(target, ast.Name) and target.id in self.containers:
            return  # ``obj[key] = v`` into a dict or a list
        index = self._param(target)
        if index >= 0 and not (self.facts.is_method and index == 0):
            self.writes.add(index)
            if not _through_data(target):
                self.tracked.add(index)
            if not _through_index(target):
                self.whole.add(index)
        self._fill(target)

    def _fill(self, target: ast.AST) -> None:
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            if isinstance(target, ast.Attribute) and target.attr not in ("data", "grad"):
                return
            target = target.value
        if isinstance(target, ast.Name) and not self.converted.get(target.id, False):
            for index in self.shares.get(target.id, ()):
                if not (self.facts.is_method and index == 0):
                    self.fills.setdefault(index, target.lineno)

    def _swap(self, node: ast.Assign) -> None:
        """``x, c = c, x`` in a loop: each name now holds what the other held, on alternate
        iterations; both keep what they may share (the join of a loop)."""
        target, value = node.targets[0], node.value
        if not (len(node.targets) == 1 and isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                and len(target.elts) == len(value.elts)
                and all(isinstance(e, ast.Name) for e in (*target.elts, *value.elts))):
            return
        names = [e.id for e in target.elts]
        values = [e.id for e in value.elts]
        if sorted(names) != sorted(values) or names == values:
            return
        shared = {v: self.shares.get(v, set()) for v in values}
        for name, old in zip(names, values):
            self.shares[name] = shared[old] | shared[name]
            self.rebound.add(name)
            self.swapped.add(name)

    def visit_Assign(self, node: ast.Assign) -> None:
        if self._loops:
            self._swap(node)
        bound = {n.id for t in node.targets for n in _target_names(t)}  # ``loss, logs = f(x)`` too
        if bound:
            self.bound.append((bound, node.value))
        snapshot = _snapshot_of(node.value)
        if snapshot is None and isinstance(node.value, ast.Name):
            snapshot_line = self.snapshot_names.get(node.value.id)
            snapshot = snapshot_line[1] if snapshot_line else None
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                self._write(target.value)
                self._item_written(target)
            attr = self._self_attr(target)
            if attr is not None and snapshot is not None:
                self.facts.stores.setdefault(attr, (node.lineno, snapshot))
            if attr is not None and isinstance(node.value, ast.Call) and not node.value.args:
                maker = _dotted(node.value.func)
                if maker is not None:
                    self.facts.callables.setdefault(attr, maker)  # ``self.train_step_fn = self._make_...()``
            if isinstance(target, ast.Name):
                self.rebound.add(target.id)
                self.containers.discard(target.id)
                self._bound_only_to(self.lists, target.id, _is_list(node.value))
                self._bind_rank(target.id, node.value)
                if isinstance(node.value, ast.Call) and is_optimizer_class(_qualified(node.value.func, self.imports)):
                    self.optimizers.add(target.id)
                elif not self._in_branch:
                    self.optimizers.discard(target.id)
                kind = self._value_kind(node.value)
                self.kinds[target.id] = kind if not self._in_branch or self.kinds.get(target.id) == kind else None
                self._bound_only_to(self.plain, target.id, self._plain(node.value, kind))
                self.converted[target.id] = self._through_conversion(node.value) or (
                    self._in_branch and self.converted.get(target.id, False))
                self.shares[target.id] = self._shared(node.value) | (
                    self.shares.get(target.id, set()) if self._in_branch else set())
                if snapshot is not None:
                    self.snapshot_names[target.id] = (node.lineno, snapshot)
                else:
                    self.snapshot_names.pop(target.id, None)
                read = self._self_attr(node.value)
                kept = self.attr_names.get(target.id, set()) if self._in_branch else set()
                if read is not None:  # ``step_fn = self.train_step_fn`` (or, in another branch, ``self.val_step_fn``)
                    kept = kept | {f"{self.self_name}.{read}"}
                if kept:
                    self.attr_names[target.id] = kept
                else:
                    self.attr_names.pop(target.id, None)
        self.generic_visit(node)

    def visit_For(self, node: ast.AST) -> None:
        for name in ast.walk(node.target):  # type: ignore[attr-defined]
            if isinstance(name, ast.Name):
                self.rebound.add(name.id)
                self.shares[name.id] = set()
                self.containers.discard(name.id)
                self.lists.discard(name.id)
                self.ranked.discard(name.id)
                self.plain.discard(name.id)
        self._loop(node)

    visit_AsyncFor = visit_For

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        # ``p += x`` writes a tensor parameter in place, but rebinds a number: only through
        # ``.data``/subscripts, which only containers and tensors have, is it surely a write.
        if isinstance(node.target, (ast.Subscript, ast.Attribute)):
            self._write(node.target)
            self._item_written(node.target)
        elif isinstance(node.target, ast.Name):
            self.bound.append(({node.target.id}, node.value))  # ``loss += f(x)``
            index = self._param(node.target)
            if index >= 0 and not (self.facts.is_method and index == 0):
                self.array_writes.add(index)
            if self._value_kind(node.target) is not None:
                self._fill(node.target)  # ``p -= m`` writes in place only where ``p`` is a tensor or an array
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.closures:
            self._first("makes_steps", self.closures[node.value.id])
        shared = self._shared(node.value)
        if shared:
            self.partial.append(all(n.id in self.swapped for n in ast.walk(node.value)
                                    if isinstance(n, ast.Name) and self.shares.get(n.id)))
        self.returns |= shared
        if node.value is not None:
            self.returns_calls |= self._returned_calls(node.value)
            if self.facts.is_method and self.facts.name.rpartition(".")[2] == "forward":
                self.forward_from |= self._callees_in(node.value)
        self.returns_converted |= bool(shared) and self._through_conversion(node.value)
        self.returned_kinds.add(self._value_kind(node.value))
        if node.value is not None:
            attr = self._self_attr(node.value)
            if attr is not None:
                self.facts.uses.setdefault(attr, (node.lineno, "returned"))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        line = node.lineno
        name = _dotted(func) or ""
        if func.__class__ is ast.Attribute:
            method = func.attr
            receiver = func.value
            if method in catalog.CONTAINER_ONLY_METHODS and isinstance(receiver, ast.Name):
                self.containers.add(receiver.id)
            if writes_receiver(method) and not (writes_own_metadata(method) and (
                    _another_object(receiver) or self._param(receiver) < 0)):
                self._write(receiver)  # (``t[0].t_()``, ``v.t_()`` of ``v = t[0]``: only the alias changes shape)
            elif stepped_optimizer(method, receiver, node.args, self._is_optimizer) is not None:
                self._first("steps", line)
            elif method == "backward":
                self._first("backward", line)  # loss.backward(), accelerator/fabric.backward(loss)
                for callee in self._callees_in(receiver) | set().union(*map(self._callees_in, node.args[:1])):
                    self.backprops.setdefault(callee, line)
            elif method in catalog.STATE_LOAD_METHODS and node.args:
                self._use(node.args[0], line, f"restored by `{name or method}()`")
            if method == "save" and _dotted(receiver) == "torch" and node.args:
                self._use(node.args[0], line, "saved by `torch.save()`")
        if node.args and writes_first_argument(_qualified_name(name, self.imports) if name
                                               else _qualified(func, self.imports)):
            self._write(node.args[0])
        for keyword in node.keywords:
            if keyword.arg == "out":
                self._write(keyword.value)
        if name and ((func.__class__ is ast.Name and func.id in self.defined)
                     or (func.__class__ is ast.Attribute and func.attr in self.defined and self.self_name is not None
                         and func.value.__class__ is ast.Name and func.value.id == self.self_name)):
            # each argument by its position, or by its keyword (``f(predictions=p)``)
            given = [*enumerate(node.args), *((k.arg, k.value) for k in node.keywords if k.arg is not None)]
            named = tuple((i, a.id) for i, a in given if a.__class__ is ast.Name)
            if self.follow and named and not any(isinstance(a, ast.Starred) for a in node.args):
                self.passed.append((name, named, line, node))
            self.facts.temporaries += _temporaries(name, given, self.param_index, line)
        if name:
            args = tuple([self._param_arg(a) for a in node.args if a.__class__ is not ast.Starred]) if node.args else ()
            # ``step_fn(x, y)`` after ``step_fn = self.train_step_fn``: a call of what it may be
            read_from = self.attr_names.get(name)
            for callee in sorted(read_from) if read_from else (name,):
                self.facts.calls.append(CallSite(callee, args, line))
            if not name.startswith(("torch.", "np.", "numpy.")):
                for i, a in enumerate(node.args):
                    if a.__class__ is not ast.Starred:
                        kind = self._value_kind(a)
                        if kind == "tensor":
                            self.tensor_args.setdefault(name, set()).add(i)
                        if self._plain(a, kind):
                            self.other_args.setdefault(name, set()).add(i)
        self.generic_visit(node)

    def _is_optimizer(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name) and node.id in self.optimizers:
            return True
        return is_optimizer_name(_last_name(node))

    def _param_arg(self, node: ast.AST) -> int:
        if isinstance(node, ast.Name) and node.id not in self.rebound:
            return self.param_index.get(node.id, -1)
        if isinstance(node, ast.Attribute) and node.attr == "data":
            return self._param_arg(node.value)
        return -1

    def _use(self, node: ast.AST, line: int, how: str) -> None:
        attr = self._self_attr(node)
        if attr is None and isinstance(node, ast.Name) and self.self_name is None:
            return
        if attr is not None:
            self.facts.uses.setdefault(attr, (line, how))

    def _first(self, what: str, line: int) -> None:
        if getattr(self.facts, what) is None:
            setattr(self.facts, what, line)


_GENERIC_VISIT = _FunctionScanner.generic_visit


def _numeric(node: ast.BinOp) -> bool:
    """Whether the operand that is not the tensor is a number literal (``x * 1.5``, ``2 * x``)."""
    return any(isinstance(o, ast.Constant) and isinstance(o.value, (int, float)) for o in (node.left, node.right))


def _is_list(value: ast.AST) -> bool:
    """A Python list: a display, a comprehension or ``list(...)``."""
    return value.__class__ in (ast.List, ast.ListComp) or (
        value.__class__ is ast.Call and value.func.__class__ is ast.Name and value.func.id == "list")  # type: ignore[attr-defined]


def _target_names(target: ast.AST) -> List[ast.Name]:
    """The names an assignment target binds: ``x``, ``a, (b, *c)``."""
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _target_names(e)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def _own_module_calls(module_of: Mapping[str, str], functions: Mapping[str, FunctionFacts], qualname: str,
                      index: int):
    """``ProjectIndex``'s callers of ``qualname`` in its own module: per function there, its name in
    the module, its facts, whether a callee as it writes one (``f``, ``self.f``) is ``qualname``,
    and how a call passes parameter ``index``: its argument position, or its keyword."""
    module = module_of.get(qualname)
    facts = functions.get(qualname)
    if module is None or facts is None:
        return
    prefix = f"{module}." if module else ""
    owner, _, name = qualname[len(prefix):].rpartition(".")
    for other, fn in functions.items():
        if module_of.get(other) != module:
            continue
        local = other[len(prefix):]

        def calls(callee: str, local: str = local) -> bool:
            head, _, called = callee.rpartition(".")
            return called == name and bool(head) == bool(owner) and (not owner or local.rpartition(".")[0] == owner)
        yield local, fn, calls, (index - (1 if facts.is_method else 0), facts.params[index])


def _temporaries(callee: str, given, params, line: int) -> Tuple[Tuple[str, Union[int, str], int], ...]:
    """``FunctionFacts.temporaries`` of one call, whose arguments ``given`` are (position or
    keyword, value): those passing a local name (no parameter of the caller, ``params``) or an
    arithmetic result."""
    return tuple((callee, i, line) for i, a in given
                 if a.__class__ is ast.BinOp or (a.__class__ is ast.Name and a.id not in params))


def _through_index(target: ast.AST) -> bool:
    """Whether ``target`` is a part of what it is taken of: an index other than ``:`` or ``...``
    on the way (``x[..., -1]``, ``x.data[0]``, ``x[i].view(-1)``)."""
    while True:
        if isinstance(target, ast.Subscript):
            index = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
            if not all((isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None)
                       or (isinstance(i, ast.Constant) and i.value is Ellipsis) for i in index):
                return True
            target = target.value
        elif isinstance(target, ast.Attribute):
            target = target.value
        elif isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute):
            target = target.func.value
        else:
            return False


# What reads a tensor's metadata, not its values: attributes (``x.shape``; not ``_base`` or
# ``grad_fn``, which hand out tensors of the graph) and methods (``x.size()``).
_METADATA_FIELDS = catalog.NON_TENSOR_ATTRIBUTES - {"_base", "grad_fn"}
_METADATA_NAMES = _METADATA_FIELDS | catalog.METADATA_METHODS


def _rereads(body: Sequence[ast.stmt], passed) -> Tuple[Tuple[str, int, int, int], ...]:
    """Of the names passed to calls (``_FunctionScanner.passed``), those read again after the call,
    before anything binds them anew, in the order of the code (a loop's back edge not counted),
    on a path the call is on (not in the other branch of an ``if`` around it)."""
    wanted = {n for _, named, _, _ in passed for _, n in named}
    # a node that ends before the first call does holds neither a call nor anything after one
    first = min((call.end_lineno or line, call.end_col_offset or 0) for _, _, line, call in passed)
    first_line, first_column = first
    events: Dict[str, List[Tuple[Tuple[int, int], bool, ast.AST]]] = {}  # name -> (position, is a read, node)
    # node id -> the ifs around it, with the branch: of the names wanted and the calls, the nodes asked about
    branches: Dict[int, Tuple[Tuple[int, bool], ...]] = {}
    stack: List[Tuple[ast.AST, Tuple[Tuple[int, bool], ...]]] = [(s, ()) for s in reversed(body)]
    pop, push = stack.pop, stack.append
    while stack:  # depth first, in the code's order, without recursion (expressions nest deep)
        node, around = pop()
        end_line = getattr(node, "end_lineno", None)
        if end_line is not None and end_line <= first_line and (
                end_line < first_line or node.end_col_offset < first_column):
            continue
        cls = node.__class__
        if cls is ast.Name:
            if node.id in wanted:
                branches[id(node)] = around
                events.setdefault(node.id, []).append(((node.lineno, node.col_offset), node.ctx.__class__ is ast.Load, node))
            continue
        if cls is ast.Call:
            branches[id(node)] = around
        elif cls is ast.Attribute and node.value.__class__ is ast.Name and node.attr in _METADATA_NAMES:
            continue  # ``x.shape``, ``x.size()``: no value of ``x`` is read, so no write is seen
        if (cls is ast.Assign or cls is ast.AnnAssign) and node.value is not None:
            # ``x = f(x)``: the target is bound after the call, though it is written before it
            after = (node.value.end_lineno or node.value.lineno, node.value.end_col_offset or 0)
            for target in (node.targets if cls is ast.Assign else [node.target]):
                for name in ((target,) if target.__class__ is ast.Name else ast.walk(target)):
                    if name.__class__ is ast.Name and name.id in wanted:
                        branches[id(name)] = around  # also where the target ends before the call
                        events.setdefault(name.id, []).append((after, False, name))
        if cls is ast.If:
            stack.extend((child, around + ((id(node), False),)) for child in reversed(node.orelse))
            stack.extend((child, around + ((id(node), True),)) for child in reversed(node.body))
            push((node.test, around))
            continue
        for child in reversed(child_nodes(node)):
            child_class = child.__class__
            if child_class is ast.Name:  # what popping it would do, without the push
                if child.id in wanted and (child.end_lineno > first_line or child.end_lineno == first_line
                                           and child.end_col_offset >= first_column):
                    branches[id(child)] = around
                    events.setdefault(child.id, []).append(
                        ((child.lineno, child.col_offset), child.ctx.__class__ is ast.Load, child))
            elif child_class is not ast.Constant:  # nothing in a constant is looked at
                push((child, around))
    out = []
    for callee, named, line, call in passed:
        end = (call.end_lineno or line, call.end_col_offset or 0)
        mine = dict(branches.get(id(call), ()))
        for position, name in named:
            later = sorted(((at, read) for at, read, node in events.get(name, ()) if at >= end
                            and not any(mine.get(i, branch) != branch for i, branch in branches.get(id(node), ()))),
                           key=lambda e: e[0])
            if later and later[0][1]:
                out.append((callee, position, line, later[0][0][0]))
    return tuple(out)


def _another_object(target: ast.AST) -> bool:
    """``p[0]``, ``p.data``, ``p.detach()``: a tensor object other than the one the name holds
    (over the same memory); ``p`` and ``p.weight`` are the held objects themselves."""
    while isinstance(target, ast.Attribute) and target.attr != "data":
        target = target.value
    return not isinstance(target, ast.Name)


def _through_data(target: ast.AST) -> bool:
    """``p.data``, ``p.data[i]``, ``p.grad.data``: a written expression reached through ``.data``."""
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        if isinstance(target, ast.Attribute) and target.attr == "data":
            return True
        target = target.value
    return False


def _container_names(test: ast.AST, holds: bool) -> Set[str]:
    """The names an ``if`` test with outcome ``holds`` shows to be containers: ``isinstance(obj,
    (list, tuple))`` holding, through ``not``, ``and`` (holding) and ``or`` (failing)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _container_names(test.operand, not holds)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if holds else ast.Or):
        return set().union(*(_container_names(v, holds) for v in test.values))
    if holds and isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
            and len(test.args) == 2 and isinstance(test.args[0], ast.Name):
        kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
        names = [(_dotted(k) or "").rpartition(".")[2] for k in kinds]
        if names and all(n in catalog.CONTAINER_TYPES for n in names):
            return {test.args[0].id}
    return set()


def _params(node: ast.AST) -> Tuple[str, ...]:
    args = node.args  # type: ignore[attr-defined]
    return tuple(a.arg for a in list(args.posonlyargs) + list(args.args))


def _scan_function(node: ast.AST, qualname: str, in_class: bool, facts: ModuleFacts,
                   defined: FrozenSet[str] = frozenset(), rereads: bool = False) -> None:
    decorators = {_dotted(d) for d in node.decorator_list}  # type: ignore[attr-defined]
    params = _params(node)
    is_method = in_class and "staticmethod" not in decorators and bool(params)
    summary = FunctionFacts(qualname, params, node.lineno, is_method)  # type: ignore[attr-defined]
    self_name = params[0] if is_method and "classmethod" not in decorators else None
    args = node.args  # type: ignore[attr-defined]
    optimizers = [a.arg for a in list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)
                  if is_optimizer_class(_qualified(a.annotation, facts.imports))]
    scanner = _FunctionScanner(summary, self_name, facts.imports, optimizers)
    scanner.defined = defined
    scanner.follow = rereads
    scanner.plain = {a.arg for a in list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)
                     if _annotated_plain(a.annotation, facts.imports)}
    scanner.inert = _inert_candidates(node, params)
    scanner.scan(node.body)  # type: ignore[attr-defined]
    summary.inert = tuple(i for i, name in enumerate(params) if name in scanner.inert)
    summary.arity = (len(params) - len(args.defaults), -1 if args.vararg is not None else len(params))
    if summary.returns_kind is None and _annotated_tensor(node.returns, facts.imports):  # type: ignore[attr-defined]
        summary.returns_kind = "tensor"
    facts.functions[qualname] = summary


def _module_code(body: Sequence[ast.stmt]) -> List[ast.stmt]:
    """The statements of a module body that are its own code (not definitions or imports)."""
    return [s for s in body if not isinstance(
        s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))]


def _scan_module_code(body: Sequence[ast.stmt], facts: ModuleFacts) -> None:
    """The calls whose results the module's own code backpropagates (its functions and classes are
    scanned on their own): a script that calls ``loss_of(x).backward()`` at its top level."""
    code = FunctionFacts("", (), 0)
    try:
        _FunctionScanner(code, None, facts.imports).scan(_module_code(body))
    except RecursionError:  # an expression nested thousands deep at top level: the rest of the facts stand
        return
    facts.backprops += code.backprops
    facts.tensor_args += code.tensor_args
    facts.other_args += code.other_args


def _qualified(node: Optional[ast.AST], imports: Mapping[str, str]) -> Optional[str]:
    """A name or a string annotation, qualified through the module's imports (``optim.SGD`` after
    ``from torch import optim``: ``torch.optim.SGD``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        name = node.value.strip()
    else:
        name = _dotted(node) if node is not None else None
    return _qualified_name(name, imports)


def _qualified_name(name: Optional[str], imports: Mapping[str, str]) -> Optional[str]:
    """``_qualified`` of a dotted name already read."""
    if not name:
        return None
    head, dot, rest = name.partition(".")
    full = imports.get(head, head) + dot + rest
    return catalog.CANONICAL_NAMES.get(full, full)


def _annotated_tensor(annotation: Optional[ast.AST], imports: Mapping[str, str]) -> bool:
    """``-> torch.Tensor``, ``-> "Tensor"`` (imported from torch), ``-> nn.Parameter``."""
    full = _qualified(annotation, imports)
    return full is not None and (full in catalog.TENSOR_TYPES or full in catalog.TENSOR_CLASSES)


def _annotated_plain(annotation: Optional[ast.AST], imports: Mapping[str, str]) -> bool:
    """``size: tuple``, ``Tuple[int, int]``, ``list | tuple``, ``np.ndarray``: an annotation of
    values none of which is a tensor."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _annotated_plain(annotation.left, imports) and _annotated_plain(annotation.right, imports)
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    full = _qualified(annotation, imports)
    return full is not None and full in catalog.PLAIN_ANNOTATIONS


def _makers(body: Sequence[ast.stmt]) -> Dict[str, ast.AST]:
    """The module's functions that return one expression made by a call (``def conv_block(c): return
    nn.Sequential(...)``, ``WNConv1d = lambda *a, **k: weight_norm(nn.Conv1d(*a, **k))``), by name:
    what a class's ``self.x = conv_block(c)`` holds."""
    out = {}
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef):
            returns = [s for s in stmt.body if isinstance(s, ast.Return)]
            if len(returns) == 1 and isinstance(returns[0].value, ast.Call):
                out[stmt.name] = returns[0].value
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, ast.Lambda) and isinstance(stmt.value.body, ast.Call):
            out[stmt.targets[0].id] = stmt.value.body
    return out


def _scan_body(body: Sequence[ast.stmt], prefix: str, in_class: bool, facts: ModuleFacts,
               makers: Optional[Mapping[str, ast.AST]] = None, defined: FrozenSet[str] = frozenset(),
               wraps: bool = True, rereads: bool = False) -> None:
    """``defined``: the names of the functions and methods the module defines (``_defined_names``); only
    calls of these are followed for reads after the call, and only with ``rereads``
    (``FunctionFacts.rereads``). ``wraps``: whether the module's text names a wrapper of
    ``catalog.RECOMPUTED_PARAMETERS`` (``_names_wrapper``): else no class wraps a module."""
    makers = _makers(body) if makers is None else makers
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _scan_function(stmt, prefix + stmt.name, in_class, facts, defined, rereads)
        elif isinstance(stmt, ast.ClassDef):
            bases = tuple(b for b in (_dotted(base) for base in stmt.bases) if b)
            facts.classes[prefix + stmt.name] = ClassFacts(prefix + stmt.name, bases, stmt.lineno,
                                                           *_held_modules(stmt, facts.imports, makers),
                                                           saved=_saved_for_backward(stmt), kept=_kept_for_backward(stmt),
                                                           wrapped=_wrapped_modules(stmt, facts.imports, makers)
                                                           if wraps else {})
            _scan_body(stmt.body, prefix + stmt.name + ".", True, facts, makers, defined, wraps, rereads)
        elif isinstance(stmt, (ast.If, ast.Try)) and not in_class:
            # ``try: import x`` / ``if TYPE_CHECKING:`` at module level
            for block in (stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])):
                _scan_body(block, prefix, in_class, facts, makers, defined, wraps, rereads)
            for handler in getattr(stmt, "handlers", []):
                _scan_body(handler.body, prefix, in_class, facts, makers, defined, wraps, rereads)


def _held_modules(cls: ast.ClassDef, imports: Mapping[str, str], makers: Mapping[str, ast.AST] = {}
                  ) -> Tuple[Dict[str, Tuple[str, ...]], Tuple[str, ...], Dict[str, str]]:
    """``self.<attr> = <module>`` in the methods of ``cls`` (``torch_facts.held_module``); an
    attribute assigned different modules holds ``?``. With the classes whose ``inplace`` flag is set
    on submodules (``for m in self.modules(): if isinstance(m, nn.ReLU): m.inplace = True``; ``*``
    without such a test) and the attributes made by calling anything else (a project class, maybe)."""
    held: Dict[str, Tuple[str, ...]] = {}
    children: Dict[str, str] = {}
    flips: Set[str] = set()
    own: Set[str] = set()  # ``self.act.inplace = True``: that attribute's modules only
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
            continue
        self_name = method.args.args[0].arg
        defaults = None
        for node, kinds in _assignments(method.body, imports):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == "inplace" \
                        and isinstance(node.value, ast.Constant) and node.value.value is True:
                    owner = target.value
                    if isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) \
                            and owner.value.id == self_name:
                        own.add(owner.attr)
                    else:
                        flips |= kinds
                elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == self_name and isinstance(node.value, (ast.Call, ast.Name)):
                    defaults = _defaults(method) if defaults is None else defaults
                    modules = _modules_made(node.value, imports, defaults, makers=makers)
                    if modules is not None:
                        known = held.get(target.attr)
                        held[target.attr] = modules if known in (None, modules) else (UNKNOWN_MODULE,)
                    if modules == (UNKNOWN_MODULE,) and isinstance(node.value, ast.Call) and _dotted(node.value.func):
                        children[target.attr] = _dotted(node.value.func)  # ``self.ff = FeedForward(d)``
    if flips or own:
        held = {a: flipped(ms, flips | ({"*"} if a in own else set())) for a, ms in held.items()}
    return held, tuple(sorted(flips | {"." + a for a in own})), children


_WRAPPER_NAMES = frozenset(w.rpartition(".")[2] for w in catalog.RECOMPUTED_PARAMETERS)


def _names_wrapper(source: str) -> bool:
    """Whether the text names a ``catalog.RECOMPUTED_PARAMETERS`` wrapper (``weight_norm``): a cheap
    test before walking every ``__init__``."""
    return any(name in source for name in _WRAPPER_NAMES)


def _wrapped_modules(cls: ast.ClassDef, imports: Mapping[str, str], makers: Mapping[str, ast.AST]
                     ) -> Dict[str, Tuple[str, str, int, str]]:
    """``ClassFacts.wrapped``: the attributes every assignment in the class's methods binds to a
    module wrapped by a ``catalog.RECOMPUTED_PARAMETERS`` wrapper, and (``*``) the first wrapping
    in ``__init__``."""
    seen: Dict[str, Set[Optional[Tuple[str, str, int, str]]]] = {}
    out: Dict[str, Tuple[str, str, int, str]] = {}
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
            continue
        self_name = method.args.args[0].arg
        for node, _ in _assignments(method.body, imports):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == self_name:
                    seen.setdefault(target.attr, set()).add(_wrapping(node.value, imports, makers))
        if method.name == "__init__" and "*" not in out:
            first = next((w for w in (_wrapping(n, imports, makers) for n in ast.walk(method)
                                      if isinstance(n, ast.Call)) if w is not None), None)
            if first is not None:
                out["*"] = first
    out.update({a: next(iter(ws)) for a, ws in seen.items() if len(ws) == 1 and None not in ws})
    return out


def _wrapping(node: ast.AST, imports: Mapping[str, str], makers: Mapping[str, ast.AST], depth: int = 0
              ) -> Optional[Tuple[str, str, int, str]]:
    """For ``weight_norm(nn.Conv1d(...), name="weight")`` (or a call of a maker that returns one): the
    wrapper, the parameter it recomputes, the line of the call and the module class wrapped (``?``)."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Name) and node.func.id in makers and depth < 2:
        inner = _wrapping(makers[node.func.id], imports, makers, depth + 1)
        return inner[:2] + (node.lineno,) + inner[3:] if inner is not None else None
    wrapper = _qualified(node.func, imports)
    if wrapper not in catalog.RECOMPUTED_PARAMETERS:
        return None
    name = next((k.value for k in node.keywords if k.arg == "name"), node.args[1] if len(node.args) > 1 else None)
    if name is not None and not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        return None  # a parameter named by a variable: which one is not known
    module = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "module"), None)
    made = _qualified(module.func, imports) if isinstance(module, ast.Call) else None
    return wrapper, name.value if name is not None else "weight", node.lineno, made or UNKNOWN_MODULE


def _saved_for_backward(cls: ast.ClassDef) -> Tuple[int, ...]:
    """The ``apply`` arguments that a ``forward(ctx, ...)`` of ``cls`` (an ``autograd.Function``)
    hands to ``ctx.save_for_backward`` itself: ``Function.apply`` keeps them until backward."""
    forward = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "forward"), None)
    if forward is None or len(forward.args.args) < 2:
        return ()
    ctx, *params = [a.arg for a in forward.args.args]
    out: Set[int] = set()
    for node in ast.walk(forward):
        if isinstance(node, ast.Call) and _dotted(node.func) == f"{ctx}.save_for_backward":
            out.update(params.index(a.id) for a in node.args if isinstance(a, ast.Name) and a.id in params)
    return tuple(sorted(out))


def _kept_for_backward(cls: ast.ClassDef) -> Tuple[int, ...]:
    """The ``apply`` arguments a ``forward(ctx, ...)`` of ``cls`` keeps for backward: named (or
    named by a local computed from them) in ``ctx.save_for_backward(...)`` or in a value stored on
    ``ctx`` that ``backward`` reads for more than its shape (``torch.zeros_like(ctx.b)`` reads none
    of ``b``'s values). Every argument where ``ctx`` is handed to anything else. What the forward
    stores on another object (``state.sub = b[:, i]``) is not followed."""
    methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
    forward = methods.get("forward")
    # a Function's forward is a staticmethod (torch refuses any other): an ``nn.Module``'s
    # ``forward(self, x)``, asked here for every class, is not walked
    if forward is None or len(forward.args.args) < 2 \
            or not any(_dotted(d) == "staticmethod" for d in forward.decorator_list):
        return ()
    ctx, *params = [a.arg for a in forward.args.args]
    every = tuple(range(len(params)))
    parents = _parents(forward)
    if any(isinstance(n, ast.Name) and n.id == ctx and not isinstance(parents.get(id(n)), ast.Attribute)
           for n in ast.walk(forward)):
        return every  # ``helper(ctx, b)``: what it keeps is unseen
    values = _value_reads(methods.get("backward"))
    taint: Dict[str, Set[int]] = {p: {i} for i, p in enumerate(params)}

    def of(node: ast.AST) -> Set[int]:
        return set().union(*(taint.get(n.id, set()) for n in ast.walk(node)
                             if isinstance(n, ast.Name) and not _metadata_read(n, parents)))  # not ``b.dtype``

    kept: Set[int] = set()
    for _ in range(2):  # twice: a loop's later statement may feed an earlier one
        for node in ast.walk(forward):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    for name in (n for n in ast.walk(target) if isinstance(n, ast.Name) and n.id != ctx):
                        if isinstance(parents.get(id(name)), (ast.Assign, ast.Tuple, ast.List, ast.Starred)):
                            taint[name.id] = taint.get(name.id, set()) | of(node.value)
                    stored = [t for t in ast.walk(target) if isinstance(t, ast.Attribute) and _dotted(t.value) == ctx]
                    if any(values is None or t.attr in values for t in stored):
                        kept |= of(node.value)
            elif isinstance(node, ast.Call) and _dotted(node.func) == f"{ctx}.save_for_backward":
                kept |= set().union(*(of(a) for a in node.args))
    return tuple(sorted(kept))


def _value_reads(backward: Optional[ast.FunctionDef]) -> Optional[Set[str]]:
    """The ``ctx`` attributes a ``backward(ctx, ...)`` reads values of: all but those read only
    for metadata (``ctx.b.shape``, ``torch.zeros_like(ctx.b)``, ``ctx.b is None``); None where
    there is no such backward (anything may be read)."""
    if backward is None or not backward.args.args:
        return None
    ctx = backward.args.args[0].arg
    parents = _parents(backward)
    out: Set[str] = set()
    for node in ast.walk(backward):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == ctx \
                and not _metadata_read(node, parents):
            out.add(node.attr)
    return out


def _parents(tree: ast.AST) -> Dict[int, ast.AST]:
    """Each node's parent, by the node's id."""
    return {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}


def _metadata_read(node: ast.AST, parents: Mapping[int, ast.AST]) -> bool:
    """Whether the value of ``node`` is read only for its metadata: ``x.shape``, ``x.size()``,
    ``x.data.storage().data_ptr()``, ``x is None``, ``isinstance(x, T)``, ``torch.zeros_like(x)``."""
    parent = parents.get(id(node))
    while isinstance(parent, ast.Attribute) and parent.value is node:
        call = parents.get(id(parent))
        is_call = isinstance(call, ast.Call) and call.func is parent
        if parent.attr in _METADATA_FIELDS and not is_call:
            return True
        if is_call and parent.attr in catalog.METADATA_METHODS:
            return True
        if parent.attr not in catalog.METADATA_PASSAGES:
            return False
        node = call if is_call else parent
        parent = parents.get(id(node))
    if isinstance(parent, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops):
        return True
    if isinstance(parent, ast.Call) and node in parent.args:
        name = _dotted(parent.func) or ""
        return name in ("isinstance", "len", "type") or name.rpartition(".")[2] in catalog.SHAPE_READING_FACTORIES
    return False


_CHAIN_NODES = frozenset({ast.Name, ast.Attribute, ast.Call})


def _inert_candidates(function: ast.AST, params: Sequence[str]) -> Set[str]:
    """``FunctionFacts.inert`` before the body: the parameters, never rebound, whose every read is
    for metadata or a bare positional argument of a call (nested functions count as reads). The
    function's decorators, defaults and annotations are judged here, its body by the scan
    (``_FunctionScanner._judge``)."""
    if not params:
        return set()
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]  # type: ignore[attr-defined]
    if len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.dump(body[0]):
        return set()  # an abstract method: what its overrides compute from the arguments is unseen
    candidates = set(params)
    for part in (*function.decorator_list, function.args, function.returns):  # type: ignore[attr-defined]
        if part is not None and candidates:
            _judge_names(part, candidates)
    return candidates


def _judge_names(root: ast.AST, candidates: Set[str]) -> None:
    """``_FunctionScanner._judge`` for every name under ``root`` (a part the scan does not walk:
    a nested scope, a default), in a walk of its own: top down, so that a name's parents are known
    when it is reached, stopping once no candidate is left."""
    parents: Dict[int, ast.AST] = {}
    stack: List[ast.AST] = [root]
    while stack and candidates:
        node = stack.pop()
        if node.__class__ is ast.Name:
            if node.id in candidates and (  # type: ignore[attr-defined]
                    node.ctx.__class__ is not ast.Load or not (  # type: ignore[attr-defined]
                        _metadata_read(node, parents) or (parents.get(id(node)).__class__ is ast.Call
                                                           and node in parents[id(node)].args))):  # type: ignore[attr-defined]
                candidates.discard(node.id)  # type: ignore[attr-defined]
            continue
        for child in child_nodes(node):
            if child.__class__ in _CHAIN_NODES:  # what ``_metadata_read`` climbs from a name
                parents[id(child)] = node
            stack.append(child)


def _assignments(body: Sequence[ast.stmt], imports: Mapping[str, str],
                 kinds: FrozenSet[str] = frozenset("*")) -> Iterable[Tuple[ast.Assign, FrozenSet[str]]]:
    """The assignment statements of a block and of the blocks in it (not of nested functions and
    classes), without walking expressions; each with the ``torch.nn`` classes an enclosing
    ``if isinstance(m, (nn.ReLU, nn.Dropout)):`` restricts its object to (``*``: any)."""
    for stmt in body:
        if stmt.__class__ is ast.Assign:
            yield stmt, kinds  # type: ignore[misc]
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = _isinstance_kinds(stmt.test, imports) if isinstance(stmt, ast.If) else None
            for block in ("body", "orelse", "finalbody"):
                yield from _assignments(getattr(stmt, block, ()), imports,
                                        inner if inner is not None and block == "body" else kinds)
            for handler in getattr(stmt, "handlers", ()):
                yield from _assignments(handler.body, imports, kinds)


def _isinstance_kinds(test: ast.AST, imports: Mapping[str, str]) -> Optional[FrozenSet[str]]:
    """``isinstance(m, (nn.ReLU, nn.Dropout))``: the ``torch.nn`` members tested for; None otherwise."""
    if not (isinstance(test, ast.Call) and _dotted(test.func) == "isinstance" and len(test.args) == 2):
        return None
    kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    names = [_qualified(k, imports) or "" for k in kinds]
    return frozenset(n.rpartition(".")[2] for n in names if n.startswith("torch.nn."))


def _defaults(method: ast.AST) -> Dict[str, ast.AST]:
    """A function's parameters with a default value: ``act=nn.ReLU()``, ``act_layer=nn.GELU``."""
    args = method.args  # type: ignore[attr-defined]
    positional = list(args.posonlyargs) + list(args.args)
    out = {a.arg: d for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults)}
    out.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return out


def _modules_made(node: ast.AST, imports: Mapping[str, str], defaults: Mapping[str, ast.AST],
                  depth: int = 0, makers: Mapping[str, ast.AST] = {}) -> Optional[Tuple[str, ...]]:
    """The modules an expression makes (``torch_facts.held_module`` entries), ``(?,)`` for a call
    of anything else; None for what is surely no module (a literal, a plain name)."""
    if isinstance(node, ast.Name) and node.id in defaults and depth == 0:
        return _modules_made(defaults[node.id], imports, defaults, depth + 1)  # ``act=nn.ReLU()``
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name) and func.id in defaults and depth == 0:
        func = defaults[func.id]  # ``act_layer(inplace=True)`` with ``act_layer=nn.ReLU``
    if isinstance(func, ast.Call) and _dotted(func.func) == "getattr" and len(func.args) == 2 \
            and isinstance(func.args[1], ast.Constant) and isinstance(func.args[1].value, str):
        owner = _qualified(func.args[0], imports)  # ``getattr(nn, "ReLU")()``
        qualified = f"{owner}.{func.args[1].value}" if owner else None
    else:
        qualified = _qualified(func, imports)
    if isinstance(func, ast.Name) and func.id in makers and depth < 2:  # ``conv_block(c)`` returns ``nn.Sequential(...)``
        return _modules_made(makers[func.id], imports, {}, depth + 1)
    if qualified in MODULE_LISTS:  # ``nn.ModuleList(conv_block(c) for _ in range(n))``: like elements
        return _list_made(node, imports, defaults, depth, makers)
    if qualified == SEQUENTIAL:
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return (UNKNOWN_MODULE,)
        out: Tuple[str, ...] = ()
        for arg in node.args:
            out += _modules_made(arg, imports, defaults, depth + 1) or (UNKNOWN_MODULE,)
        return out or (UNKNOWN_MODULE,)
    return (module_entry(qualified, {k.arg: _true(k.value) for k in node.keywords if k.arg},
                         [_true(a) for a in node.args]),)


def _reordered(node: ast.AST) -> bool:
    """``x.permute(0, 2, 1)``, ``x.mT``: a reordering of dimensions other than the identity
    (``torch_facts.reorders_dimensions``; ``alias_calls._reordered`` on the lint's side)."""
    if isinstance(node, ast.Attribute):
        return reorders_dimensions(node.attr, [])
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)) or node.keywords \
            or any(isinstance(a, ast.Starred) for a in node.args):
        return False
    args = node.args[0].elts if len(node.args) == 1 and isinstance(node.args[0], (ast.Tuple, ast.List)) else node.args
    return reorders_dimensions(node.func.attr, [_literal_int(a) for a in args])


def _literal_int(node: ast.AST) -> Optional[int]:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal_int(node.operand)
        return None if inner is None else -inner
    value = getattr(node, "value", None) if isinstance(node, ast.Constant) else None
    return value if value.__class__ is int else None


def _true(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _list_made(node: ast.Call, imports: Mapping[str, str], defaults: Mapping[str, ast.AST], depth: int,
               makers: Mapping[str, ast.AST]) -> Tuple[str, ...]:
    """``nn.ModuleList``'s entry: ``[]`` and what every element holds, when they are alike."""
    arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
    if isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
        elements = [arg.elt]
    elif isinstance(arg, (ast.List, ast.Tuple)) and arg.elts:
        elements = list(arg.elts)
    else:
        return (UNKNOWN_MODULE,)
    made = {_modules_made(e, imports, defaults, depth + 1, makers) for e in elements}
    element = made.pop() if len(made) == 1 else None
    return (LIST_MARK, *element) if element and UNKNOWN_MODULE not in element else (UNKNOWN_MODULE,)


def _imports(tree: ast.Module, module: str, is_package: bool) -> Dict[str, str]:
    out: Dict[str, str] = {}
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = alias.name
                else:
                    out[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = f"{prefix}.{alias.name}" if prefix else alias.name
    return out


# ``def name`` found by its keyword (a literal the regex engine looks for fast), then kept where
# only indentation or ``async`` precede it on its line: a seventh of the time of a pattern
# anchored at every line's start
_DEF_RE = re.compile(r"def[ \t]+(\w+)")
_DEF_PREFIX_RE = re.compile(r"[ \t]*(?:async[ \t]+)?\Z")


def _defined_names(source: str) -> FrozenSet[str]:
    """The names of the functions and methods ``source`` defines, from its text."""
    return frozenset(m.group(1) for m in _DEF_RE.finditer(source)
                     if _DEF_PREFIX_RE.match(source, source.rfind("\n", 0, m.start()) + 1, m.start()))


def module_facts(source: str, module: str, is_package: bool = False,
                 vocabulary: Optional[Sites] = None, rereads: bool = False) -> Optional[ModuleFacts]:
    """The local facts of one file; None when Python cannot parse it. With ``vocabulary`` (the
    sites of every rule that may be selected), also the code the engine may blank; with
    ``rereads``, also ``FunctionFacts.rereads`` (a walk of every function that passes a local
    name to one of the module's: what only a lint that finds an argument written asks,
    ``ProjectIndex.read_after_call``)."""
    with gc_paused():
        return _module_facts(source, module, is_package, vocabulary, rereads)


def _module_facts(source: str, module: str, is_package: bool, vocabulary: Optional[Sites],
                  rereads: bool = False) -> Optional[ModuleFacts]:
    # the module's functions and methods by name, from the text: the same whether the module is
    # scanned whole or a piece at a time (a call of one is followed for reads after it)
    defined = _defined_names(source)
    if len(source) > PIECES_SIZE:  # a piece at a time: no tree of the whole module
        facts = ModuleFacts()

        top: List[ast.stmt] = []  # the module's own code, scanned as one after the last piece
        # module functions that return a module, from this piece and those before it (one defined
        # after the class that calls it, in a later piece, is not seen: a module this large only)
        makers: Dict[str, ast.AST] = {}
        wraps = _names_wrapper(source)

        def scan(tree: ast.Module) -> None:
            facts.imports.update(_imports(tree, module, is_package))
            makers.update(_makers(tree.body))
            _scan_body(tree.body, "", False, facts, makers, defined, wraps, rereads)
            top.extend(_module_code(tree.body))

        try:
            first = first_pass_in_pieces(source, vocabulary, scan)
        except RecursionError:
            return None
        if first is not None:
            _scan_module_code(top, facts)
            facts.deep, facts.quiet, facts.elements = first.deep, first.quiet or [], first.elements or []
            facts.sites = first.sites
            return facts
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        lines = source_lines(source)
        deep = too_deep(tree, lines)
        facts = ModuleFacts(_imports(tree, module, is_package), deep=deep)
        if deep is None and vocabulary is not None:
            facts.quiet, facts.elements = quiet_code(tree, lines, vocabulary)
            facts.sites = vocabulary
        _scan_body(tree.body, "", False, facts, defined=defined, wraps=_names_wrapper(source), rereads=rereads)
        _scan_module_code(tree.body, facts)
    except RecursionError:  # an expression nested thousands deep: no facts rather than a crash
        return None
    return facts


def module_name(path: Path, root: Optional[Path] = None) -> Tuple[str, bool]:
    """The dotted name Python would import ``path`` as: packages (directories with an
    ``__init__.py``) above it, else its stem (a script imports its siblings by stem)."""
    path = Path(path)
    is_package = path.name == "__init__.py"
    parts = [] if is_package else [path.stem]
    directory = path.parent
    while (directory / "__init__.py").is_file() and directory != root:
        parts.append(directory.name)
        if directory.parent == directory:
            break
        directory = directory.parent
    return ".".join(reversed(parts)), is_package


def content_key(digest: str, module: str) -> str:
    """A module's facts' key: its name and its content's digest (``Source.digest``)."""
    return hashlib.sha256(f"{FORMAT}\0{module}\0{digest}".encode("utf-8", "surrogatepass")).hexdigest()


def text_digest(text: str) -> str:
    """The digest of a text not read from disk (an editor's buffer): that of its UTF-8 bytes,
    which is the file's own digest when the file is that text in UTF-8."""
    return file_digest(text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class Source:
    """A module's content as the index takes it: the digest of its bytes (``files.file_digest``)
    and its text, or None while no fact has to be computed from it (read from the path then)."""

    digest: str
    text: Optional[str] = None


# --- the composed index -------------------------------------------------------------------------

@dataclass(frozen=True)
class Summary:
    """What a function does, through everything it calls."""

    qualname: str
    params: Tuple[str, ...]
    writes: FrozenSet[int]  # parameters written in place, directly or through calls
    steps: Optional[str]  # where an optimizer step happens: "train_epoch (line 40)"
    backward: Optional[str]
    returns: FrozenSet[int] = frozenset()  # parameters whose memory the result may share (direct)
    returns_kind: Optional[str] = None  # "ndarray" / "tensor"
    returns_converted: bool = False
    is_method: bool = False  # ``writes`` and ``returns`` count ``self`` as parameter 0
    array_writes: FrozenSet[int] = frozenset()  # written in place when a tensor or an array (``p -= m``)
    untracked: FrozenSet[int] = frozenset()  # of ``writes``, those written only through ``.data``
    returns_partial: bool = False  # ``returns`` holds only for some iteration counts of a swapping loop
    partial: FrozenSet[int] = frozenset()  # of ``writes``, those written only in part (through an index)

    def written_arguments(self, bound: bool, array: bool = False) -> FrozenSet[int]:
        """The positions of the call's arguments this function writes in place (``array``: those
        it writes when they are tensors or arrays); ``bound``: called through an instance or
        ``self`` (``obj.fill(x)``), so ``self`` is not among the arguments."""
        offset = 1 if self.is_method and bound else 0
        return frozenset(i - offset for i in (self.array_writes if array else self.writes) if i >= offset)

    def untracked_arguments(self, bound: bool) -> FrozenSet[int]:
        """The positions of the call's arguments this function writes only through ``.data``."""
        offset = 1 if self.is_method and bound else 0
        return frozenset(i - offset for i in self.untracked if i >= offset)

    def partial_arguments(self, bound: bool) -> FrozenSet[int]:
        """The positions of the call's arguments this function writes only in part."""
        offset = 1 if self.is_method and bound else 0
        return frozenset(i - offset for i in self.partial if i >= offset)


@dataclass(frozen=True)
class SnapshotHazard:
    """A live-state snapshot stored on ``self`` in one method and used as a snapshot in another,
    while something between calls updates the live state."""

    cls: str
    attr: str
    method: str  # where it is stored
    line: int
    of: str  # the receiver of ``state_dict()``
    update: str  # what updates the live state (names the method and line, or the framework loop)
    use: Optional[str]  # how the snapshot is used afterwards (restored, saved, returned)


class _HeldModules:
    """What the ``torch.nn`` modules a project class holds do when called (a part of
    ``ProjectIndex``: it uses the index's classes, ``ancestors`` and ``resolve``)."""

    def held_module(self, cls: str, attr: str) -> Optional[ModuleEffect]:
        """What calling ``self.<attr>`` does, in a method of the project class ``cls``: the
        ``torch.nn`` modules the class (or the nearest base that assigns it) holds there; None when
        it holds something else or is not known."""
        key = (cls, attr)
        if key not in self._held:
            maker = next((a for a in self.ancestors(cls) if a in self._classes and attr in self._classes[a].modules), None)
            held = self._classes[maker].modules[attr] if maker is not None else None
            flips = set(self._flipped_from_above.get(cls, ()))
            for a in self.ancestors(cls):  # a subclass sets the flag on what its base made, after ``super().__init__()``
                own = self._classes[a].flips if a in self._classes else ()
                flips.update(k for k in own if not k.startswith("."))
                flips.update("*" for k in own if k == "." + attr)
                if a == maker:
                    break  # a base's flags were set before this class made the module
            self._held[key] = module_effect(flipped(held, flips) if flips else held) if held is not None else None
        return self._held[key]

    def wrapped(self, cls: str, attr: str) -> Optional[Tuple[str, str, str, int, str]]:
        """For ``self.<attr>`` in a method of the project class ``cls`` (``*``: any module it builds in
        ``__init__``): the module of the class that wraps it with a ``catalog.RECOMPUTED_PARAMETERS``
        wrapper, and ``ClassFacts.wrapped``'s entry; None when the nearest class that assigns it does not."""
        for a in self.ancestors(cls):
            facts = self._classes.get(a)
            if facts is not None and attr in facts.wrapped:
                return (self._module_of[a], *facts.wrapped[attr])
            if facts is not None and attr in facts.modules:
                return None  # assigned something else, nearer
        return None

    @functools.cached_property
    def _flipped_from_above(self) -> Dict[str, FrozenSet[str]]:
        """The classes whose ``inplace`` flags a class holding them sets (``self.ff = FeedForward(d)``,
        then ``for m in self.modules(): m.inplace = True``), with the module classes it sets them on."""
        out: Dict[str, Set[str]] = {}
        todo = [(c, frozenset(k for k in f.flips if not k.startswith("."))) for c, f in self._classes.items()]
        todo = [(c, kinds) for c, kinds in todo if kinds]
        for _ in range(_FIXPOINT_ROUNDS):
            later = []
            for holder, kinds in todo:
                for cls in {a for a in self.ancestors(holder) if a in self._classes}:
                    for called in self._classes[cls].children.values():
                        child = self.resolve(self._module_of[cls], called)
                        if child in self._classes and not kinds <= out.get(child, set()):
                            out.setdefault(child, set()).update(kinds)
                            later.append((child, kinds))
            if not later:
                break
            todo = later
        return {c: frozenset(k) for c, k in out.items()}

    def held_element(self, cls: str, attr: str) -> Optional[ModuleEffect]:
        """What calling an element of ``self.<attr>`` does (``self.blocks[i](x)``), where it holds an
        ``nn.ModuleList`` of like ``torch.nn`` modules."""
        return next((element_effect(self._classes[a].modules[attr]) for a in self.ancestors(cls)
                     if a in self._classes and attr in self._classes[a].modules), None)


class _GraphReach:
    """Which functions' results the project backpropagates, which reach a module's ``forward``,
    and which parameters its callers give tensors (a part of ``ProjectIndex``: it uses the index's
    functions and name resolution)."""

    def backpropagated(self, qualname: str) -> Optional[str]:
        """Where a caller runs backward on the result of the project function ``qualname``
        (``loss = f(x); loss.backward()``, also through callers that return it): the graph its
        result belongs to is still to be backpropagated when it returns."""
        where = self._backpropagated.get(qualname)
        return where + ")" if where is not None else None  # "`train` (line 40, through `loss_of`)"

    @functools.cached_property
    def _backpropagated(self) -> Dict[str, str]:
        out: Dict[str, str] = {}
        todo: List[str] = []
        for q, fn in self._functions.items():
            for callee, line in fn.backprops:
                target = self._callee(q, CallSite(callee, (), line))
                if target in self._functions and target not in out:
                    caller = fn.name if self._module_of[q] == self._module_of[target] else q
                    out[target] = f"`{caller}` (line {line}"
                    todo.append(target)
        for module, facts in self.modules.items():  # a script's own code: ``loss = f(x)``, ``loss.backward()``
            for callee, line in facts.backprops:
                target = self.resolve(module, callee)
                if target in self._functions and target not in out:
                    out[target] = f"the code of `{module or 'the module'}` (line {line}"
                    todo.append(target)
        for _ in range(_FIXPOINT_ROUNDS):  # ``def loss(...): return f(...) * w`` returns f's result up
            todo, current = [], todo
            for q in current:
                for callee in self._functions[q].returns_calls:
                    target = self._callee(q, CallSite(callee, (), 0))
                    if target in self._functions and target not in out:
                        out[target] = f"{out[q]}, through `{self._functions[q].name}`"
                        todo.append(target)
            if not todo:
                break
        return out

    def reaches_forward(self, qualname: str) -> Optional[str]:
        """Where the result of the project function ``qualname`` goes into what ``forward`` of a
        module class returns (``bf = self.vector(x); return self.apply(bf, mix)``): the module's
        caller backpropagates it, though no backward is seen. "`GEV.forward` (line 12)"."""
        return self._forward_reached.get(qualname)

    @functools.cached_property
    def _forward_reached(self) -> Dict[str, str]:
        out: Dict[str, str] = {}
        for q, fn in self._functions.items():
            cls = self.class_of(q)
            if not fn.forward_from or cls is None or not self.is_module_class(cls):
                continue
            for callee in fn.forward_from:
                target = self._callee(q, CallSite(callee, (), 0))
                if target in self._functions and target != q:
                    out.setdefault(target, f"`{fn.name}` (line {fn.line})")
        return out

    def tensor_parameters(self, qualname: str) -> FrozenSet[int]:
        """The parameters of the project function ``qualname`` (counting ``self``) that a call in the
        project passes a tensor it made (``f(torch.randn(3))``, ``h = x * 1.5; f(h)``): evidence that
        the function's parameter holds a tensor, where nothing in the function says so."""
        return self._tensor_parameters.get(qualname, frozenset())

    def non_tensor_parameters(self, qualname: str) -> FrozenSet[int]:
        """The parameters of the project function ``qualname`` (counting ``self``) that a call in the
        project passes no tensor (``f(img.shape[:2])``, ``f(np.zeros(3))``): an annotation
        ``torch.Tensor`` there is not all the function takes."""
        return self._other_parameters.get(qualname, frozenset())

    @functools.cached_property
    def _tensor_parameters(self) -> Dict[str, FrozenSet[int]]:
        return self._passed_parameters("tensor_args")

    @functools.cached_property
    def _other_parameters(self) -> Dict[str, FrozenSet[int]]:
        return self._passed_parameters("other_args")

    def _passed_parameters(self, table: str) -> Dict[str, FrozenSet[int]]:
        """Per project function, the parameters that calls in the project pass the values their
        facts' ``table`` (``tensor_args``, ``other_args``) lists."""
        out: Dict[str, Set[int]] = {}

        def add(module_or_caller: Tuple[str, Optional[str]], callee: str, positions: Tuple[int, ...]) -> None:
            module, caller = module_or_caller
            target = self._callee(caller, CallSite(callee, (), 0)) if caller else self.resolve(module, callee)
            fn = self._functions.get(target) if target else None
            if fn is None:
                return
            offset = 1 if fn.is_method and "." in callee else 0  # ``obj.m(x)``: ``x`` is parameter 1
            out.setdefault(target, set()).update(p + offset for p in positions if p + offset < len(fn.params))

        for q, fn in self._functions.items():
            for callee, positions in getattr(fn, table):
                add((self._module_of[q], q), callee, positions)
        for module, facts in self.modules.items():
            for callee, positions in getattr(facts, table):
                add((module, None), callee, positions)
        return {q: frozenset(v) for q, v in out.items() if v}


class _WrittenArguments:
    """What the project shows around a function that writes its argument in place: the callers of
    its own module that read the argument again after the call or pass it temporaries, and the other
    overrides that fill the parameter as their contract (a part of ``ProjectIndex``: it uses
    ``_functions``, ``_module_of``, ``class_of``, ``ancestors`` and the files it was made from),
    asked by the rules that find an argument written."""

    def filled_by_override(self, qualname: str, index: int) -> Optional[Tuple[str, int]]:
        """Another override of the method ``qualname`` (in a class below the highest project class
        that declares it) that writes its parameter ``index`` in place through that parameter
        itself, as ``(Class.method, line)``: writing the caller's value is then the method's
        contract, not a copy gone wrong."""
        cls = self.class_of(qualname)
        if cls is None:
            return None
        name = qualname.rpartition(".")[2]
        declaring = [a for a in self.ancestors(cls) if f"{a}.{name}" in self._functions]
        root = declaring[-1]
        for other, facts in self._functions.items():
            if other == qualname or not other.endswith("." + name):
                continue
            owner = self.class_of(other)
            line = dict(facts.fills).get(index) if owner is not None and root in self.ancestors(owner) else None
            if line is not None:
                return facts.name, line
        return None

    def read_after_call(self, qualname: str, index: int) -> Optional[Tuple[str, int, int]]:
        """A function of ``qualname``'s own module that passes a local name as parameter ``index``
        of ``qualname`` (``f(x)``, or ``self.f(x)`` in the same class) and reads that name again
        after the call, as ``(caller, line of the call, line of the read)``; None where none does."""
        module = self._module_of.get(qualname)
        rereads = self._rereads_in(module) if module is not None else {}
        for local, fn, calls, passed_as in _own_module_calls(self._module_of, self._functions, qualname, index):
            for callee, at, line, read in rereads.get(local, ()):
                if calls(callee) and at in passed_as:
                    return local, line, read
        return None

    def _rereads_in(self, module: str) -> Dict[str, Tuple[Tuple[str, Union[int, str], int, int], ...]]:
        """``FunctionFacts.rereads`` of ``module``'s functions by their names there: from its file
        read and scanned again when first asked (the index's scan leaves them out: a lint asks
        only where it finds an argument written); none where the file changed since it was indexed."""
        found = self._rereads.get(module)
        if found is None:
            path, digest, is_package = self._files.get(module, (None, "", False))
            text = _read_unchanged(path, digest) if path is not None else None
            facts = module_facts(text, module, is_package, rereads=True) if text is not None else None
            found = self._rereads[module] = {q: f.rereads for q, f in facts.functions.items()} if facts else {}
        return found

    def passed_temporaries(self, qualname: str, index: int) -> Optional[int]:
        """The line of the first call of ``qualname`` in its own module's functions where every such
        call passes as parameter ``index`` a local name or an arithmetic result
        (``FunctionFacts.temporaries``); None where one passes something else, or none calls it."""
        lines = []
        for _, fn, calls, passed_as in _own_module_calls(self._module_of, self._functions, qualname, index):
            for site in fn.calls:
                if calls(site.callee):
                    if not any((site.callee, at, site.line) in fn.temporaries for at in passed_as):
                        return None
                    lines.append(site.line)
        return min(lines) if lines else None


class _SavedArguments:
    """What the project's functions and ``autograd.Function`` classes may save of their arguments
    for backward (a part of ``ProjectIndex``: it uses ``_functions``, ``_classes``, ``_edges``,
    ``resolve`` and ``ancestors``), asked by TAL001 before it counts a project call as an op that
    saved the tensor."""

    def graph_parameters(self, qualname: str) -> FrozenSet[int]:
        """The parameters of the project function ``qualname`` that an op of it (or of what it
        calls) may compute a value from, and so save for backward: all but those ``inert`` here
        and, where handed on, in the callee (a project ``autograd.Function``'s ``apply``: not
        ``kept``). Unknown callees count as using them."""
        return self._graph_parameters.get(qualname, frozenset())

    def apply_keeps(self, cls: Optional[str]) -> Optional[Tuple[int, ...]]:
        """The arguments a project ``autograd.Function`` ``cls`` keeps for backward (None: not one)."""
        facts = self._classes.get(cls) if cls is not None else None
        if facts is None or not any(a.endswith(("autograd.Function", "autograd.function.Function"))
                                    for a in self.ancestors(cls)[1:]):  # type: ignore[arg-type]
            return None
        return tuple(sorted(set(facts.saved) | set(facts.kept)))

    @functools.cached_property
    def _graph_parameters(self) -> Dict[str, FrozenSet[int]]:
        carries = {q: set(range(len(f.params))) - set(f.inert) for q, f in self._functions.items()}
        changed = True
        while changed:  # monotone: each round only adds parameters
            changed = False
            for q, calls in self._edges.items():
                for site, callee in calls:
                    for position, index in enumerate(site.args):
                        if index < 0 or index in carries[q] or self._hands_on_inert(q, site, callee, position, carries):
                            continue
                        carries[q].add(index)
                        changed = True
        return {q: frozenset(c) for q, c in carries.items()}

    def _hands_on_inert(self, qualname: str, site: CallSite, callee: Optional[str], position: int,
                        carries: Mapping[str, Set[int]]) -> bool:
        if callee is None and site.callee.endswith(".apply"):
            kept = self.apply_keeps(self.resolve(self._module_of[qualname], site.callee[:-len(".apply")]))
            return kept is not None and position not in kept
        if callee is None or callee not in self._functions:
            return False
        offset = 1 if self._functions[callee].is_method and "." in site.callee else 0
        return position + offset not in carries[callee]


# Bases of Python's own (a builtin or a standard module's): they never make a class a tensor or a module.
_PYTHON_BASES = frozenset("object abc typing typing_extensions enum collections dataclasses".split())


class ProjectIndex(_GraphReach, _HeldModules, _SavedArguments, _WrittenArguments):
    """Composed summaries of every function of the linted files, keyed by qualified name.

    ``modules``: the local facts by module, or what loads them; nothing is loaded or composed
    before a lint asks. ``digest`` may be set when it is known already (a run over unchanged
    files, ``FactsCache.digest_of``): every file's cache key asks for it, and nothing else."""

    def __init__(self, modules: "Mapping[str, ModuleFacts] | Callable[[], Mapping[str, ModuleFacts]]",
                 aliases: Optional[Mapping[str, str]] = None, paths: Optional[Mapping[str, str]] = None,
                 keys: Optional[Mapping[str, str]] = None,
                 files: Optional[Mapping[str, Tuple[Path, str, bool]]] = None) -> None:
        self._loader: Optional[Callable[[], Mapping[str, ModuleFacts]]] = None
        if callable(modules):
            self._loader = modules
        else:
            self.modules = dict(modules)
        self.keys = dict(keys or {})  # module -> ``content_key`` of the text its facts come from
        # module -> (its file, the digest of the bytes its facts come from, whether a package):
        # what ``read_after_call`` reads again, not the text (the index keeps no text)
        self._files = dict(files or {})
        self._rereads: Dict[str, Dict[str, Tuple[Tuple[str, Union[int, str], int, int], ...]]] = {}
        self._paths = dict(paths or {})  # absolute path -> its module's key here
        # ``stepbystep.v2`` -> ``v2``: a module in a directory without ``__init__.py`` (a namespace
        # package, the usual layout of research code run from its root) under its dotted path.
        self.aliases = dict(aliases or {})
        self._resolved: Dict[Tuple[str, str], Optional[str]] = {}
        self._held: Dict[Tuple[str, str], Optional[ModuleEffect]] = {}  # ``held_module``, once per attribute
        self._ancestors: Dict[str, List[str]] = {}

    def load(self) -> "ProjectIndex":
        """Load the facts and compose them now: before worker processes are made (each would
        do it again, and the loader may start processes of its own)."""
        with gc_paused():  # composing makes no cycles; a full collection here would scan all the facts
            self._summaries
            self._effect_modules  # every lint asks (``calls_effects``): once here, not once per worker
        return self

    def __getstate__(self) -> dict:
        return {**self.load().__dict__, "_loader": None}

    @functools.cached_property
    def modules(self) -> Dict[str, ModuleFacts]:  # type: ignore[override]
        assert self._loader is not None
        loaded, self._loader = dict(self._loader()), None  # the loader holds the project's texts
        return loaded

    @functools.cached_property
    def inputs(self) -> str:
        """What the composed facts are made from: every module's name and text (its content key),
        and the names modules are imported by."""
        text = repr((sorted(self.keys.items()), sorted(self.aliases.items())))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    @functools.cached_property
    def _tables(self) -> Tuple[Dict[str, FunctionFacts], Dict[str, ClassFacts], Dict[str, str], Dict[str, List[str]]]:
        functions: Dict[str, FunctionFacts] = {}
        classes: Dict[str, ClassFacts] = {}
        module_of: Dict[str, str] = {}
        for module, facts in self.modules.items():
            for name, fn in facts.functions.items():
                functions[f"{module}.{name}" if module else name] = fn
                module_of[f"{module}.{name}" if module else name] = module
            for name, cls in facts.classes.items():
                classes[f"{module}.{name}" if module else name] = cls
                module_of[f"{module}.{name}" if module else name] = module
        members: Dict[str, List[str]] = {}  # class -> its functions' qualified names
        for qualname in functions:
            members.setdefault(qualname.rpartition(".")[0], []).append(qualname)
        return functions, classes, module_of, members

    _functions = functools.cached_property(lambda self: self._tables[0])
    _classes = functools.cached_property(lambda self: self._tables[1])
    _module_of = functools.cached_property(lambda self: self._tables[2])
    _members = functools.cached_property(lambda self: self._tables[3])
    _summaries = functools.cached_property(lambda self: self._compose())

    @functools.cached_property
    def digest(self) -> str:
        """Changes whenever a composed fact changes (part of every file's lint cache key); computed
        once (every file's cache key asks for it)."""
        text = repr(sorted((k, sorted(s.writes), s.steps, s.backward, sorted(s.returns), s.returns_kind,
                            s.returns_converted, sorted(s.array_writes), sorted(s.untracked),
                            s.returns_partial, sorted(s.partial))
                           for k, s in self._summaries.items()))
        text += repr(sorted((k, c.bases, sorted(c.modules.items()), c.flips, sorted(c.children.items()), c.saved)
                            for k, c in self._classes.items()))
        text += repr(sorted(self.aliases.items()))
        text += repr(sorted((k, f.fills) for k, f in self._functions.items() if f.fills))
        text += repr(sorted((k, f.inert) for k, f in self._functions.items() if f.inert))
        text += repr(sorted((k, c.kept) for k, c in self._classes.items() if c.kept))
        text += repr(sorted(self._backpropagated.items()))
        text += repr(sorted((k, sorted(v)) for k, v in self._tensor_parameters.items()))
        text += repr(sorted((k, sorted(v)) for k, v in self._other_parameters.items()))
        text += repr(sorted(self._forward_reached.items()))
        text += repr(sorted(self.inplace_named_methods.items()))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    # resolution

    def resolve(self, module: str, dotted: str) -> Optional[str]:
        """The qualified name of the project function or class that ``dotted``, written in
        ``module``, refers to (through its imports); None outside the project. Resolved once per
        name: composition asks for every call site of the project."""
        key = (module, dotted)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(module, dotted)
        return self._resolved[key]

    def _resolve(self, module: str, dotted: str) -> Optional[str]:
        facts = self.modules.get(module)
        if facts is None:
            return None
        head, _, rest = dotted.partition(".")
        candidates = []
        if head in facts.imports:
            target = facts.imports[head] + (f".{rest}" if rest else "")
            candidates.append(target)
            # a script's ``from utils import f`` where utils.py sits beside it, in a package
            package = module.rpartition(".")[0]
            if package:
                candidates.append(f"{package}.{target}")
        candidates.append(f"{module}.{dotted}" if module else dotted)
        for candidate in candidates:
            if candidate in self._functions or candidate in self._classes:
                return candidate
        return next((a for a in map(self._aliased, candidates) if a is not None), None)

    def reexported(self, module: str, dotted: str) -> Optional[str]:
        """``resolve``, also through a package that re-exports the name (``import pkg as p;
        p.matmul(...)`` with ``from .ops import matmul`` in ``pkg/__init__.py``), a few hops deep."""
        found = self.resolve(module, dotted)
        head, _, rest = dotted.partition(".")
        target = self.modules[module].imports.get(head) if module in self.modules else None
        for _ in range(4):
            if found is not None or target is None or not rest:
                return found
            package, _, member = f"{target}.{rest}".rpartition(".")
            facts = self.modules.get(package)
            if facts is None:  # a package ``__init__`` the index holds no facts of (it defines nothing):
                # the one project function of that name inside the package, if only one
                inside = [q for q, f in self._functions.items() if q.startswith(package + ".")
                          and q.rpartition(".")[2] == member and not f.is_method]
                return inside[0] if len(inside) == 1 else None
            if member not in facts.imports:
                return None
            target, rest = facts.imports[member], ""
            found = self.lookup(target)
            if found is None and "." in target:  # ``from .ops import f``: ``ops`` relative to the package
                found = self.lookup(f"{package}.{target}")
        return found

    def _aliased(self, candidate: str) -> Optional[str]:
        """``candidate`` through a namespace package: ``stepbystep.v2.StepByStep``."""
        prefix, _, member = candidate.rpartition(".")
        if prefix in self.aliases:
            aliased = f"{self.aliases[prefix]}.{member}"
            if aliased in self._functions or aliased in self._classes:
                return aliased
        return None

    def lookup(self, qualified: Optional[str]) -> Optional[str]:
        """The project function or class a fully qualified name (``pkg.engine.train``, as the
        linted module's own imports spell it) refers to, also through a namespace package; None
        outside the project. For a module the index holds no facts of (a script that defines
        nothing), whose imports ``resolve`` cannot read."""
        if not qualified:
            return None
        if qualified in self._functions or qualified in self._classes:
            return qualified
        return self._aliased(qualified)

    def module_of(self, path: "os.PathLike[str] | str") -> str:
        """The key of the module at ``path`` (its import name; a namespace path when two files
        share a stem), as every surface must name it to find its facts."""
        return self._paths.get(os.path.abspath(path)) or module_name(Path(path))[0]

    def is_class(self, qualname: str) -> bool:
        return qualname in self._classes

    def class_of(self, qualname: str) -> Optional[str]:
        owner = qualname.rpartition(".")[0]
        return owner if owner in self._classes else None

    def bases(self, cls: str) -> List[str]:
        """Base classes as qualified names (project classes resolved, others as imported)."""
        facts = self._classes.get(cls)
        if facts is None:
            return []
        module = self._module_of[cls]
        out = []
        for base in facts.bases:
            resolved = self.resolve(module, base)
            if resolved is None:
                imports = self.modules[module].imports
                head, _, rest = base.partition(".")
                resolved = imports[head] + (f".{rest}" if rest else "") if head in imports else base
            out.append(resolved)
        return out

    def ancestors(self, cls: str) -> List[str]:
        """``cls`` and its bases, nearest first, each once (project classes and external names);
        once per class (asked for every class of the project by ``_writing_attributes``, and for
        every held module, method and subclass question). Callers only read the list."""
        found = self._ancestors.get(cls)
        if found is None:
            found = self._ancestors[cls] = self._ancestors_of(cls)
        return found

    def _ancestors_of(self, cls: str) -> List[str]:
        out: List[str] = []
        todo = [cls]
        while todo and len(out) < 64:
            current = todo.pop(0)
            if current in out:
                continue
            out.append(current)
            todo.extend(self.bases(current))
        return out

    def is_module_class(self, cls: str) -> bool:
        """An ``nn.Module`` subclass, also when the base class lives in another file."""
        return any(a.startswith("torch.nn.") and a.rsplit(".", 1)[-1][:1].isupper() and "utils" not in a
                   or a in ("pytorch_lightning.LightningModule", "lightning.LightningModule",
                            "lightning.pytorch.LightningModule")
                   for a in self.ancestors(cls))

    def is_tensor_class(self, cls: str) -> bool:
        """A subclass of ``torch.Tensor`` or ``nn.Parameter``, also when its bases live in another file."""
        return self.is_class(cls) and any(a in catalog.TENSOR_TYPES for a in self.ancestors(cls)[1:])

    def is_plain_class(self, cls: str) -> bool:
        """A project class none of whose bases can make it a tensor or a module: each is a project
        class or Python's own (``object``, ``abc.ABC``, ``typing.Generic``): ``ProxMap(ABC)``."""
        return self.is_class(cls) and all(a in self._classes or a.partition(".")[0] in _PYTHON_BASES
                                          for a in self.ancestors(cls)[1:])

    @functools.cached_property
    def inplace_named_methods(self) -> Dict[str, Tuple[Tuple[int, int], ...]]:
        """The methods named as a tensor's in-place op (``ProxMap.apply_(p, gamma)``) that plain
        project classes define (``is_plain_class``), with the number of arguments each takes
        besides ``self`` (least, most; -1: any): a call one can take shows no tensor."""
        out: Dict[str, List[Tuple[int, int]]] = {}
        for cls, members in self._members.items():
            if self.is_plain_class(cls):
                for q in members:
                    if q.rpartition(".")[2] not in catalog.INPLACE_METHODS:
                        continue
                    fn = self._functions[q]
                    least, most = fn.arity
                    own = 1 if fn.is_method else 0  # ``self``, which the call's receiver is
                    out.setdefault(q.rpartition(".")[2], []).append((max(least - own, 0), most - own if most >= 0 else -1))
        return {name: tuple(arities) for name, arities in out.items()}

    def class_facts(self, cls: str) -> Optional[ClassFacts]:
        return self._classes.get(cls)

    def method(self, cls: str, name: str) -> Optional[str]:
        for ancestor in self.ancestors(cls):
            candidate = f"{ancestor}.{name}"
            if candidate in self._functions:
                return candidate
        return None

    def summary(self, qualname: str) -> Optional[Summary]:
        return self._summaries.get(qualname)

    def function(self, module: str, dotted: str, qualified: Optional[str] = None) -> Optional[Summary]:
        """The summary of what ``dotted``, called in ``module``, refers to (asked for every call
        the analyses see: resolved once per name); ``qualified``: the name through the linted
        module's own imports, for a module the index has no facts of (``lookup``)."""
        resolved = self.resolve(module, dotted) or self.lookup(qualified)
        return self._summaries.get(resolved) if resolved else None

    @functools.cached_property
    def _effect_modules(self) -> FrozenSet[str]:
        """The modules with a function that calls a project function writing an argument in place
        or stepping an optimizer (computed once per index, not per linted file)."""
        out = set()
        for qualname, calls in self._edges.items():
            for _, callee in calls:
                summary = self._summaries.get(callee) if callee is not None else None
                if summary is not None and (summary.writes or summary.array_writes or summary.steps):
                    out.add(self._module_of[qualname])
                    break
        out.update(self._module_of[cls] for cls in self._writing_attributes)
        return frozenset(out)

    @functools.cached_property
    def _writing_attributes(self) -> Dict[str, FrozenSet[str]]:
        """The classes whose methods call a module they hold (or a base holds) that writes its input
        in place (``self.act = nn.ReLU(inplace=True)``), with those attributes."""
        out = {}
        for cls in self._classes:
            attrs = {attr for ancestor in self.ancestors(cls) if ancestor in self._classes
                     for attr in self._classes[ancestor].modules}
            writing = frozenset(a for a in attrs if getattr(self.held_module(cls, a), "writes_input", False))
            if writing:
                out[cls] = writing
        return out

    @functools.cached_property
    def roots(self) -> FrozenSet[str]:
        """The first parts of the project's module names (and of the names modules are imported
        by): a qualified name that starts with none of them is outside the project."""
        return frozenset(m.partition(".")[0] for m in (*self.modules, *self.aliases))

    @functools.cached_property
    def writing_names(self) -> FrozenSet[str]:
        """The last names of the project functions that write an argument in place: a call whose
        name ends in one of them may be such a write (a cheap filter before resolving it)."""
        return frozenset(q.rpartition(".")[2] for q, s in self._summaries.items() if s.writes or s.array_writes)

    def writing_calls(self, text: str) -> List[int]:
        """Where ``text`` spells a call of one of ``writing_names`` (a body that may hold such a
        write): one pass of a simple pattern, the names looked up in a set (an alternation of
        hundreds of names costs a second on a large module)."""
        names = self.writing_names.union(*self._writing_attributes.values())  # ``self.act(x)`` too
        return [m.start() for m in _CALLED_NAME.finditer(text) if m.group(1) in names] if names else []

    def calls_effects(self, module: str) -> bool:
        """Whether ``module`` calls a project function that writes an argument in place or steps
        an optimizer, or has a class holding a module that writes its input in place: a write its
        own text does not spell (``normalize(x)``, ``self.act(x)``)."""
        return module in self._effect_modules

    # composition

    def _callee(self, qualname: str, site: CallSite) -> Optional[str]:
        module = self._module_of[qualname]
        fn = self._functions[qualname]
        head, _, rest = site.callee.partition(".")
        cls = self.class_of(qualname)
        if cls is not None and fn.is_method and head == fn.params[0] and rest and "." not in rest:
            return self.method(cls, rest)
        return self.resolve(module, site.callee)

    def _stored_stepper(self, qualname: str, site: CallSite) -> Optional[str]:
        """Where the callable stored on ``self`` that ``site`` calls (``self.train_step_fn(x, y)``)
        steps an optimizer: a method of the class set the attribute from a method of the class
        that returns a closure stepping one (``self.train_step_fn = self._make_train_step_fn()``)."""
        fn = self._functions[qualname]
        cls = self.class_of(qualname)
        head, _, attr = site.callee.partition(".")
        if cls is None or not fn.is_method or head != fn.params[0] or not attr or "." in attr \
                or self.method(cls, attr) is not None:
            return None
        for ancestor in self.ancestors(cls):
            for member in self._members.get(ancestor, ()):
                setter = self._functions[member]
                maker = setter.callables.get(attr)
                if maker is None or not setter.is_method:
                    continue
                maker_head, _, maker_name = maker.partition(".")
                if maker_head != setter.params[0] or "." in maker_name:
                    continue
                made = self.method(cls, maker_name)
                line = self._functions[made].makes_steps if made is not None else None
                if line is not None:
                    return f"the closure `{self._functions[made].name}` returns (line {line})"
        return None

    @functools.cached_property
    def _edges(self) -> Dict[str, List[Tuple[CallSite, Optional[str]]]]:
        """Every function's call sites, each with the project function it calls (or None)."""
        return {q: [(c, self._callee(q, c)) for c in f.calls] for q, f in self._functions.items()}

    def _compose(self) -> Dict[str, Summary]:
        writes = {q: set(f.writes) for q, f in self._functions.items()}
        # written other than through ``.data``, here or by a callee (whose ``.data`` writes stay untracked)
        tracked = {q: set(f.writes) - set(f.untracked) for q, f in self._functions.items()}
        whole = {q: set(f.writes) - set(f.partial_writes) for q, f in self._functions.items()}  # and by a callee
        array_writes = {q: set(f.array_writes) for q, f in self._functions.items()}
        steps = {q: (f"`{f.name}` (line {f.steps})" if f.steps else None) for q, f in self._functions.items()}
        backward = {q: (f"`{f.name}` (line {f.backward})" if f.backward else None) for q, f in self._functions.items()}
        edges = self._edges
        for q, calls in edges.items():  # ``self.train_step_fn(x, y)``: a stored closure that steps
            if steps[q] is None:
                for site, callee in calls:
                    made = self._stored_stepper(q, site) if callee is None else None
                    if made is not None:
                        steps[q] = f"`{self._functions[q].name}` (line {site.line}, through {made})"
                        break
        for _ in range(_FIXPOINT_ROUNDS):
            changed = False
            for q, calls in edges.items():
                for site, callee in calls:
                    if callee is None or callee not in self._functions:
                        continue
                    offset = 1 if self._functions[callee].is_method and not site.callee.count(".") == 0 else 0
                    for table in (writes, array_writes, tracked, whole):
                        for index in table[callee]:
                            position = index - offset
                            if 0 <= position < len(site.args) and site.args[position] >= 0 \
                                    and site.args[position] not in table[q]:
                                table[q].add(site.args[position])
                                changed = True
                    if steps[q] is None and steps[callee] is not None:
                        steps[q] = f"`{self._functions[q].name}` (line {site.line}, through {steps[callee]})"
                        changed = True
                    if backward[q] is None and backward[callee] is not None:
                        backward[q] = f"`{self._functions[q].name}` (line {site.line}, through {backward[callee]})"
                        changed = True
            if not changed:
                break
        return {q: Summary(q, f.params, frozenset(writes[q]), steps[q], backward[q], frozenset(f.returns), f.returns_kind,
                           f.returns_converted, f.is_method, frozenset(array_writes[q] - writes[q]),
                           frozenset(writes[q] - tracked[q]), f.returns_partial, frozenset(writes[q] - whole[q]))
                for q, f in self._functions.items()}

    # class state across methods

    def snapshot_hazards(self, module: str) -> List[SnapshotHazard]:
        """Live state snapshots stored on ``self`` by a method of a class in ``module`` and used
        as snapshots (restored, saved, returned) by the class, while the live state is updated
        between: by a method of the class that steps an optimizer, or by the training loop that
        calls a callback hook over and over."""
        out = []
        facts = self.modules.get(module)
        if facts is None:
            return out
        for cls_name in facts.classes:
            cls = f"{module}.{cls_name}" if module else cls_name
            methods = {q.rpartition(".")[2]: q for a in reversed(self.ancestors(cls))
                       for q in self._members.get(a, ())}
            # methods that step themselves first: they name the update most directly
            stepping = sorted(((name, self._summaries[q].steps) for name, q in methods.items()
                               if self._summaries[q].steps), key=lambda s: "through" in (s[1] or ""))
            for name, q in methods.items():
                if q.rpartition(".")[0] != cls:
                    continue
                fn = self._functions[q]
                for attr, (line, of) in fn.stores.items():
                    use = next((f"`{self._functions[u].name}` (line {self._functions[u].uses[attr][0]}): "
                                f"{self._functions[u].uses[attr][1]}"
                                for u in methods.values() if attr in self._functions[u].uses), None)
                    if use is None:
                        continue  # never used as a snapshot: maybe read for its current values on purpose
                    update = None
                    others = [(n, s) for n, s in stepping if n != name]
                    if others:
                        update = f"the optimizer step in {others[0][1]}"
                    elif _CALLBACK_METHOD.match(name) and _trained(of, fn.params) and (
                            _CALLBACK_CLASS.search(cls_name)
                            or any(_CALLBACK_CLASS.search(a.rsplit(".", 1)[-1]) for a in self.ancestors(cls)[1:])):
                        update = f"the training loop (it steps between calls of the callback `{name}`)"
                    if update is not None:
                        out.append(SnapshotHazard(cls, attr, name, line, of, update, use))
        return out


@dataclass(frozen=True)
class ModuleView:
    """What one module's lint sees of the project: the index and the module's own name."""

    index: ProjectIndex
    module: str

    def calls_effects(self) -> bool:
        return self.index.calls_effects(self.module)

    def held_module(self, cls: str, attr: str) -> Optional[ModuleEffect]:
        """``ProjectIndex.held_module`` for a class of this module, by its name here."""
        return self.index.held_module(f"{self.module}.{cls}" if self.module else cls, attr)

    def wrapped(self, cls: str, attr: str) -> Optional[Tuple[str, str, str, int, str]]:
        """``ProjectIndex.wrapped`` for a class of this module, by its name here."""
        return self.index.wrapped(f"{self.module}.{cls}" if self.module else cls, attr)

    def builds_wrapped(self, dotted: str) -> Optional[Tuple[str, str, str, int, str]]:
        """``ProjectIndex.wrapped(cls, "*")`` for the project class ``dotted`` names here
        (``Generator``, ``models.Generator``): a module it wraps in ``__init__``."""
        cls = self.index.resolve(self.module, dotted)
        return self.index.wrapped(cls, "*") if cls is not None and self.index.class_facts(cls) is not None else None

    def apply_saves(self, dotted: str) -> Tuple[int, ...]:
        """``Cube.apply(h)``, written here: the arguments that the project ``autograd.Function``
        ``Cube`` keeps for backward (``ctx.save_for_backward`` in its ``forward``)."""
        cls = self.index.resolve(self.module, dotted)
        return self.index.class_facts(cls).saved if cls is not None and self.index.class_facts(cls) else ()

    def call_keeps(self, dotted: str, position: int) -> bool:
        """Whether ``dotted(...)``, a call written here, may save its positional argument ``position`` for backward:
        False only where the index knows the callee (a project function, each project method of
        that name for a call on an object it cannot type, a project ``Function``'s ``apply``) and
        it computes nothing from that argument."""
        index = self.index
        head, _, last = dotted.rpartition(".")
        if last == "apply" and head:
            kept = index.apply_keeps(index.resolve(self.module, head))
            if kept is not None:
                return position in kept
        resolved = index.reexported(self.module, dotted)
        if resolved is not None and resolved in index._functions:
            candidates = [resolved]
        elif head:  # ``tracer.get_outliers(w)``, ``self.quantize(w)``: every method of that name (overrides too)
            candidates = [q for q, f in index._functions.items() if f.is_method and q.rpartition(".")[2] == last]
        else:
            return True
        if not candidates:
            return True
        return any(position + (1 if index._functions[q].is_method and head else 0) in index.graph_parameters(q)
                   for q in candidates)

    def held_element(self, cls: str, attr: str) -> Optional[ModuleEffect]:
        """``ProjectIndex.held_element`` for a class of this module, by its name here."""
        return self.index.held_element(f"{self.module}.{cls}" if self.module else cls, attr)

    def first_pass(self, source: str) -> Optional[FirstPass]:
        """The first pass of ``source``, known without parsing it when the index read this very
        text (not an editor's unsaved buffer, not a file changed since); else None."""
        facts = self.index.modules.get(self.module)
        if facts is None or self.index.keys.get(self.module) != content_key(text_digest(source), self.module):
            return None
        return FirstPass(None, measured=True, deep=facts.deep, quiet=facts.quiet, elements=facts.elements,
                         sites=facts.sites)


FactsOf = Callable[[Sequence[Tuple[str, str, bool]]], List[Optional[ModuleFacts]]]


def facts_here(items: Sequence[Tuple[str, str, bool]],
               vocabulary: Optional[Sites] = None) -> List[Optional[ModuleFacts]]:
    """``module_facts`` of each item; ``vocabulary``: the sites of every rule that may be selected."""
    return [module_facts(*item, vocabulary) for item in items]


@dataclass
class Layout:
    """What each file of a project is imported as: its module key (``module_name``; a second file
    of the same name gets a namespace name) and whether it is a package, by absolute path; and the
    names modules are imported by through directories without ``__init__.py`` (``aliases``)."""

    modules: Dict[str, Tuple[str, bool]]
    aliases: Dict[str, str]


def module_layout(paths: Iterable["os.PathLike[str] | str"]) -> Layout:
    """The ``Layout`` of ``paths``, in their order (the first file of a name keeps it)."""
    modules: Dict[str, Tuple[str, bool]] = {}
    aliases: Dict[str, str] = {}
    taken: Set[str] = set()
    for path in paths:
        absolute = os.path.abspath(path)
        if absolute in modules:
            continue
        module, is_package = module_name(Path(path))
        names = _namespace_names(Path(path), module)
        if module in taken:  # ``data/v2.py`` and ``stepbystep/v2.py`` are both ``v2`` by stem
            module = next((n for n in names if n not in taken), module)
        taken.add(module)
        modules[absolute] = (module, is_package)
        for dotted in names:
            aliases.setdefault(dotted, module)
    return Layout(modules, aliases)


def build_index(files: Iterable[Tuple[Path, "str | Source"]], cache: Optional[MutableMapping[str, dict]] = None,
                used: Optional[Set[str]] = None, facts_of: FactsOf = facts_here,
                layout: Optional[Layout] = None) -> ProjectIndex:
    """The index of ``files`` (path, source text or ``Source``), which loads their facts when first
    asked. ``cache`` maps content keys to local facts (``ModuleFacts.to_json``); it is read and
    filled in place then, and ``used`` gets the keys this index needs (what is worth keeping).
    ``facts_of`` computes the local facts of the files not in the cache, ``(source, module,
    is_package)`` each, in order (``runner.facts_in_parallel``). ``layout``: the names of a larger
    set of files these are part of (``module_layout``), so that a file is named here as it is in
    the index of that whole set; by default the names among ``files``."""
    files = list(files)
    if layout is None:
        layout = module_layout([path for path, _ in files])
    paths: Dict[str, str] = {}
    keys: Dict[str, str] = {}
    wanted: List[Tuple[str, str, Path, Source, bool]] = []  # module, content key, path, source, is_package
    for path, source in files:
        if isinstance(source, str):
            source = Source(text_digest(source), source)
        module, is_package = layout.modules[os.path.abspath(path)]
        paths[os.path.abspath(path)] = module
        key = content_key(source.digest, module)
        if used is not None:
            used.add(key)
        if module not in keys:
            keys[module] = key
            wanted.append((module, key, Path(path), source, is_package))
    indexed = set(keys)
    aliases = {dotted: module for dotted, module in layout.aliases.items() if module in indexed}

    def load() -> Dict[str, ModuleFacts]:
        found = load_facts([(key, path, source, module, is_package) for module, key, path, source, is_package
                            in wanted], cache, facts_of)
        return {item[0]: facts for item, facts in zip(wanted, found) if facts is not None}

    files = {module: (path, source.digest, is_package) for module, _, path, source, is_package in wanted}
    return ProjectIndex(load, aliases, paths, keys, files)


def load_facts(items: Sequence[Tuple[str, Path, Source, str, bool]], cache: Optional[MutableMapping[str, dict]],
               facts_of: FactsOf) -> List[Optional[ModuleFacts]]:
    """The local facts of each ``(content key, path, source, module, is_package)``: from ``cache``,
    else computed together (in worker processes, with ``facts_of``) and put in it; None for a
    file Python cannot parse, or one that changed since its digest was taken."""
    found: List[Optional[ModuleFacts]] = []
    missing: Dict[str, Tuple[int, Tuple[str, str, bool]]] = {}  # not cached, or a corrupt entry
    for i, (key, path, source, module, is_package) in enumerate(items):
        found.append(_cached_facts(cache.get(key)) if cache is not None else None)
        if found[-1] is None and key not in missing:
            text = source.text if source.text is not None else _read_unchanged(path, source.digest)
            if text is not None:
                missing[key] = (i, (text, module, is_package))
    computed = facts_of([item for _, item in missing.values()]) if missing else []
    for (key, (i, _)), facts in zip(missing.items(), computed):
        found[i] = facts
        if cache is not None and facts is not None:
            cache[key] = facts.to_json()
    for i, (key, *_rest) in enumerate(items):  # a second file of the same text and name
        if found[i] is None and key in missing:
            found[i] = found[missing[key][0]]
    return found


def _read_unchanged(path: Path, digest: str) -> Optional[str]:
    """The text of ``path`` if its bytes still have ``digest``; else None: a file changed since the
    index was made is left out of it rather than known by facts that its key does not name."""
    try:
        data = path.read_bytes()
        return decode_source(data) if file_digest(data) == digest else None
    except (OSError, SourceError):
        return None


def _cached_facts(entry: Optional[dict]) -> Optional[ModuleFacts]:
    try:
        return ModuleFacts.from_json(entry) if entry is not None else None
    except (KeyError, TypeError, ValueError):
        return None


def _namespace_names(path: Path, module: str, depth: int = 3) -> List[str]:
    """The dotted names ``path`` is imported by through directories without ``__init__.py``
    above the package (or the script) ``module`` names: ``pkg/sub/m.py`` -> ``sub.m``, ``pkg.sub.m``."""
    parts = module.split(".")
    directory = path.parent
    for _ in range(len(parts) - (0 if path.name == "__init__.py" else 1)):
        directory = directory.parent
    out = []
    for _ in range(depth):
        if directory.parent == directory or not directory.name.isidentifier():
            break
        parts = [directory.name, *parts]
        out.append(".".join(parts))
        directory = directory.parent
    return out

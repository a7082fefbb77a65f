"""Which names share storage, which statements write it, and which reads see the write.

One ``AliasAnalysis`` per function (or module body), built lazily the first time a rule asks about
a node in it, by a single abstract-interpretation walk of the body in statement order:

- every name (and dotted name such as ``self.best``) maps to the *origins* of what it may hold:
  how the value came to share storage with something else (``.detach()``, ``.data``, a view,
  slicing, a may-alias conversion such as ``.cpu()``/``.float()``/``.numpy()``, plain assignment,
  ``state_dict()``, a list comprehension of such aliases), or that it owns its storage (a parameter,
  a fresh result: arithmetic, ``.clone()``, ``copy.deepcopy``, ``torch.tensor``, unknown calls);
- an in-place write through one name (in-place methods, ``op=`` on a tensor, item assignment,
  ``out=``, ``nn.init.*_``) or an update of live state (``optimizer.step()``, ``load_state_dict``)
  marks every *other* alias of that storage stale; reading a stale alias afterwards is recorded as
  a ``StaleRead`` of that ``Mutation``;
- branches join (a may-analysis), loops run their body again with the state at the end of the
  body (a statement later in a loop body also precedes earlier ones on the next iteration),
  ``break``/``continue``/``return``/``raise`` end a path, and function parameters and ``self``
  attributes are read once more at every return: the caller still holds them.

Rules ask questions (``mutation(node)``, ``stale_reads(mutation)``, ``stale_reads_of(origin)``,
``origins_at(name_node)``); they never walk statements themselves. Tensor kinds come from the map
``TensorFacts.scope_kinds`` makes of the scope: each expression's kind where it is evaluated.

The interpreter is one class in parts, one concern each: statements and expressions (here), calls
(``alias_calls.py``: a transfer function per effect of the catalogue), branches and loops
(``alias_flow.py``), and what names hold and what writes change (``alias_state.py``).
"""

from __future__ import annotations

from typing import AbstractSet, Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

import libcst as cst

from ..knowledge import catalog
from .alias_calls import CallTransfer, fed_to_torch_op, surely_tensor
from .alias_flow import ControlFlow, Loop, ScopeBindings
from .alias_state import NameState
from .alias_model import (HANDLES, Mutation, Origin, Relation, StaleRead, State, Storage, Values,
                          join_states)
from .base import Analysis, AnalysisContext
from .copies import COPY, VIEW, multi_dimensional, written_back
from .project import ModuleView
from ..knowledge.torch_facts import is_optimizer_name, is_view_attribute
from .tensors import Kind, ScopeKinds, TensorFacts
from .torchnames import TorchNames, dotted_name


_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def _is_basic_index(sl: Tuple[cst.SubscriptElement, ...], kind_of: Callable[[cst.BaseExpression], Kind],
                    int_names: FrozenSet[str] = frozenset()) -> bool:
    """Basic indexing (ints, slices, None, ...) gives a view; tensors and lists give a copy."""
    for element in sl:
        inner = element.slice
        if isinstance(inner, cst.Slice):
            continue
        value = inner.value
        if isinstance(value, (cst.Integer, cst.Ellipsis)):
            continue
        if isinstance(value, cst.Name) and value.value == "None":
            continue
        if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer):
            continue
        if isinstance(value, cst.Name) and value.value in int_names:
            continue
        if kind_of(value) is Kind.OTHER and not isinstance(value, (cst.List, cst.Tuple, cst.ListComp)):
            continue
        return False
    return True


class AliasAnalysis(CallTransfer, ControlFlow, NameState, Analysis):
    """The alias and mutation dataflow of one scope; see the module docstring."""

    per_scope = True
    requires = (TensorFacts, TorchNames)  # the scope's kinds, and torch's names

    @classmethod
    def build(cls, ctx: AnalysisContext, scope: Optional[cst.CSTNode]) -> "AliasAnalysis":
        """Built the first time a rule asks about the scope being visited, from the kinds TensorFacts
        finds for the scope."""
        scope = scope if scope is not None else ctx.module
        tensors = ctx.get(TensorFacts)
        owner = tensors.current_class if isinstance(scope, cst.FunctionDef) else None
        bindings = ScopeBindings()  # the names the scope binds, read in the same walk as its kinds
        return cls(scope, ctx.get(TorchNames), tensors.scope_kinds(scope, also=(bindings,)), ctx.project,
                   owner.name if owner is not None else None, bindings)

    def __init__(self, scope: cst.CSTNode, names: TorchNames, kinds: ScopeKinds,
                 project: Optional[ModuleView] = None, cls: Optional[str] = None,
                 bindings: Optional[ScopeBindings] = None) -> None:
        self.scope = scope
        self._scope_bindings = bindings  # ``bindings_in(scope)``, but for what the kinds' walk left out
        self.names = names
        self.project = project  # calls into the project are followed through their summaries
        self.cls = cls  # the class whose method this is (for ``self.method()`` calls)
        self._kinds = kinds
        self._origins: Dict[Tuple, Origin] = {}
        self._storages: Dict[str, Storage] = {}
        self._fresh_storages: Dict[int, Storage] = {}
        self._mutations: Dict[int, Mutation] = {}
        self._stale: Dict[int, Dict[Tuple[int, int], StaleRead]] = {}  # mutation id -> reads
        self._stale_by_origin: Dict[int, List[StaleRead]] = {}
        self._reads: Dict[int, Set[Origin]] = {}  # Name/Attribute node -> origins it may hold
        self.item_targets: Set[int] = set()  # ``x`` of ``x[i] = v``: written in part, its values unread
        self._loops: List[Loop] = []
        self._statement: Optional[cst.CSTNode] = None
        # The ``if`` conditions a statement runs under, as (condition text, holds): an alias made
        # under ``if flag:`` and a write under ``if not flag:`` never meet (``exclusive``).
        self._guard: Tuple[Tuple[str, bool], ...] = ()
        self._tests: Tuple[Tuple[cst.BaseExpression, bool], ...] = ()  # every ``if`` test around, with its outcome
        # statement ids by a condition they run under (``_feasible``)
        self._made_under: Dict[Tuple[str, bool], Set[int]] = {}
        self._compared: Dict[str, Tuple[str, object]] = {}  # ``m == "a"`` -> (``m``, "a"), ``_covered``
        self._domains: Dict[str, List[object]] = {}  # a validated name -> the literals it may be
        self._subjects: Dict[str, str] = {}  # a condition's text -> the name it tests (``_rebound``)
        self._rebound_texts: Dict[str, bool] = {}  # ``_rebound``'s answers
        self._dtype_names: Optional[Dict[str, str]] = None  # ``dtype = x.dtype``: name -> ``x``
        self._classes = None  # the scope's dtype classes (``dtypes.DtypeClasses``), made when a conversion asks
        self._guards: Dict[int, Tuple[Tuple[str, bool], ...]] = {}  # statement / read id -> its guard
        self._bound: Optional[AbstractSet[str]] = None  # names bound anywhere in the scope (``_rebound``)
        self._entries: Dict[Tuple[str, str], Set[Origin]] = {}  # (container, "key") -> what was stored there
        self._bound_in: Dict[int, Dict[str, int]] = {}  # ``bindings_in`` by node
        self._parents: Set[str] = set()  # ``self`` and ``self.x`` once ``self.x.y`` was bound
        self._comp_depth = 0
        self.model_roots: Set[str] = set()  # modules whose live state was taken (state_dict, parameters)
        self.optimizer_links: Dict[str, Set[str]] = {}  # optimizer key -> module keys it updates
        # name -> the calls of ops that save that name for backward (TAL202): first input, or ``b`` of ``mm(w, b)``
        self.saving_calls: Dict[str, List[cst.Call]] = {}
        # calls of project functions whose result is an argument's memory only for some iteration
        # counts of a loop that swaps buffers (``Summary.returns_partial``), by ``id``
        self.partial_returns: Set[int] = set()
        # name -> (project class, constructor call): ``sbs = Trainer(model, loss_fn, optimizer)``
        self._instances: Dict[str, Tuple[str, cst.Call]] = {}
        self.params: List[str] = []
        self._int_names: FrozenSet[str] = frozenset()  # the index parameter of __getitem__
        self.self_name: Optional[str] = kinds.self_name
        self.state: Optional[State] = {}
        if isinstance(scope, cst.FunctionDef):
            self._enter_function(scope)
            self._block(scope.body)
            self._escape(scope.name)
        else:
            self._block(scope)

    # ================================================================== questions

    def mutation(self, node: cst.CSTNode) -> Optional[Mutation]:
        """The in-place write or state update made at ``node``, if any."""
        return self._mutations.get(id(node))

    def mutations(self) -> List[Mutation]:
        return list(self._mutations.values())

    def stale_reads(self, mutation: Mutation) -> List[StaleRead]:
        """Reads, after ``mutation``, of another name whose storage it changed (code order)."""
        return list(self._stale.get(id(mutation), {}).values())

    def stale_reads_of(self, origin: Origin) -> List[StaleRead]:
        """Reads of a value made by ``origin`` (or derived from it) after its storage changed."""
        return list(self._stale_by_origin.get(id(origin), ()))

    def origins_made_at(self, node: cst.CSTNode) -> List[Origin]:
        """The aliases the expression ``node`` created (``p.detach()``, ``model.state_dict()``)."""
        return [o for key, o in self._origins.items() if key[0] == id(node)]

    def origins_at(self, node: cst.CSTNode) -> Set[Origin]:
        """What the name read at ``node`` may hold: its origins (empty when untracked)."""
        return self._reads.get(id(node), set())

    def aliases_of(self, node: cst.CSTNode) -> Set[str]:
        """Sources the name read at ``node`` may share storage with (``{"x"}`` for ``x.detach()``)."""
        return {o.root.source for o in self.origins_at(node) if o.relation not in HANDLES}

    def is_optimizer_key(self, key: str) -> bool:
        """Whether ``key`` names an optimizer (by construction here, or by name)."""
        return key in self.optimizer_links or is_optimizer_name(key)

    def _kind(self, node: cst.BaseExpression) -> Kind:
        return self._kinds.kind(node)

    kind_of = _kind  # for rules: the kind of ``node`` where the scope evaluates it

    # ================================================================== kinds, receivers by kind or name

    def _is_optimizer(self, node: cst.BaseExpression) -> bool:
        kind = self._kind(node)
        if kind is Kind.OPTIMIZER:
            return True
        if kind in (Kind.TENSOR, Kind.NDARRAY, Kind.MODULE, Kind.TENSOR_MODULE, Kind.STATE_DICT, Kind.OTHER):
            return False
        name = dotted_name(node)
        return name is not None and is_optimizer_name(name)

    def _holds_parameters(self, node: cst.BaseExpression) -> bool:
        """A module-like receiver of ``state_dict()``: not an optimizer, scheduler, scaler, ..."""
        kind = self._kind(node)
        if kind.is_module:
            return True
        if kind is not Kind.UNKNOWN:
            return False
        name = dotted_name(node)
        if name is None or self._is_optimizer(node):
            return False
        last = name.rsplit(".", 1)[-1].lower()
        return not any(h in last for h in catalog.NOT_PARAMETER_STATE_HINTS)

    # ================================================================== statements

    def _block(self, body) -> None:
        if isinstance(body, cst.SimpleStatementSuite):
            for small in body.body:
                if self.state is None:
                    return
                self._statement = small
                self._note_guard(small)
                self._small(small)
            return
        for statement in body.body:
            if self.state is None:
                return
            self._stmt(statement)

    def _stmt(self, node: cst.CSTNode) -> None:
        if node.__class__ is cst.SimpleStatementLine:
            for small in node.body:
                if self.state is None:
                    return
                self._statement = small
                self._note_guard(small)
                self._small(small)
            return
        self._statement = node
        self._note_guard(node)
        if node.__class__ is cst.If:
            self._if(node)
        elif node.__class__ is cst.For:
            self._for(node)
        elif node.__class__ is cst.While:
            self._while(node)
        elif node.__class__ in (cst.Try, cst.TryStar):
            self._try(node)
        elif node.__class__ is cst.With:
            for item in node.items:
                origins = self._eval(item.item)
                if item.asname is not None:
                    self._assign(item.asname.name, set() if not origins else origins, item.item)
            self._block(node.body)
        elif node.__class__ in (cst.FunctionDef, cst.ClassDef):
            if self.state is not None:
                self.state.pop(node.name.value, None)
        elif node.__class__ is cst.Match:
            self._eval(node.subject)
            start = self.state
            ends = [start]
            for case in node.cases:
                self.state = dict(start) if start is not None else None
                self._block(case.body)
                ends.append(self.state)
            self.state = join_states(ends)

    def _small(self, node: cst.BaseSmallStatement) -> None:
        if node.__class__ is cst.Expr:
            self._eval(node.value)
        elif node.__class__ is cst.Assign:
            self._assignment(node)
        elif node.__class__ is cst.AnnAssign:
            if node.value is not None:
                origins = self._eval(node.value)
                self._assign(node.target, origins, node.value)
        elif node.__class__ is cst.AugAssign:
            self._augassign(node)
        elif node.__class__ is cst.Return:
            if node.value is not None:
                self._eval(node.value)
            self._escape(node)
            self.state = None
        elif node.__class__ is cst.Raise:
            if node.exc is not None:
                self._eval(node.exc)
            self.state = None
        elif node.__class__ is cst.Break:
            if self._loops and self.state is not None:
                self._loops[-1].breaks.append(self.state)
            self.state = None
        elif node.__class__ is cst.Continue:
            if self._loops and self.state is not None:
                self._loops[-1].continues.append(self.state)
            self.state = None
        elif node.__class__ is cst.Del:
            self._delete(node.target)
        elif node.__class__ is cst.Assert:
            self._eval(node.test)

    def _assignment(self, node: cst.Assign) -> None:
        value = node.value
        targets = [t.target for t in node.targets]
        if (isinstance(value, (cst.Tuple, cst.List)) and len(targets) == 1
                and isinstance(targets[0], (cst.Tuple, cst.List))
                and len(targets[0].elements) == len(value.elements)
                and not any(isinstance(e, cst.StarredElement) for e in [*value.elements, *targets[0].elements])):
            # ``X, C = C, X``: all the right side is read before any name is bound.
            moved = [self._moved(e.value) for e in value.elements]
            parts = [self._eval(e.value) if m is None else set(m) for e, m in zip(value.elements, moved)]
            for element, origins, part, values in zip(targets[0].elements, parts, value.elements, moved):
                self._assign(element.value, origins, part.value)
                self._keep_staleness(element.value, values)
        elif len(targets) == 1 and (values := self._moved(value, targets[0])) is not None:
            self._assign(targets[0], set(values), value)
            self._keep_staleness(targets[0], values)
        else:
            origins = self._eval(value)
            for target in targets:
                self._assign(target, origins, value)

    def _moved(self, value: cst.BaseExpression, into: Optional[cst.BaseExpression] = None) -> Optional[Values]:
        """A bare name on the right of ``=`` moves a reference: nothing reads its values there,
        so it is no stale read (double buffering, ``X, C = C, X``, swaps names on purpose); the
        values it holds, stale or not, move to the target. ``x[i] = name`` reads, unless written back."""
        key = dotted_name(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
        if key is None or self.state is None or key not in self.state \
                or (into.__class__ is cst.Subscript and not written_back(self.state[key], into)):
            return None
        values = self.state[key]
        if any(o.relation not in HANDLES for o in values):
            self._reads.setdefault(id(value), set()).update(values)
        return dict(values)

    def _keep_staleness(self, target: cst.BaseExpression, values: Optional[Values]) -> None:
        """After ``_assign`` bound ``target`` to (aliases of) the moved ``values``, each keeps the
        mutations its source had seen: a later read of the new name is the stale read."""
        key = dotted_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if not values or key is None or self.state is None or key not in self.state:
            return
        bound = self.state[key]
        for origin in list(bound):
            source = origin if origin in values else origin.parent
            if source in values and values[source]:
                bound[origin] = bound[origin] | values[source]

    def _augassign(self, node: cst.AugAssign) -> None:
        self._eval(node.value)
        target = node.target
        kind = self._kind(target)
        origins = self._entry_origins(target, self._eval(target))
        if kind in (Kind.TENSOR, Kind.NDARRAY) or (kind is Kind.UNKNOWN and (
                surely_tensor(origins) or fed_to_torch_op(target, node.value, self.names))):
            op = catalog.AUGMENTED_INPLACE.get(type(node.operator).__name__, "iop")
            self._mutate(target, node, op, origins)
        elif isinstance(target, (cst.Name, cst.Attribute)) and dotted_name(target) is not None:
            self._assign(target, set(), node)

    def _delete(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._delete(element.value)
            return
        key = dotted_name(target)
        if key is not None and self.state is not None:
            self.state.pop(key, None)

    # ------------------------------------------------------------------ iteration

    def _iterate(self, iterable: cst.BaseExpression) -> Tuple[Set[Origin], ...]:
        """What iterating ``iterable`` yields: one set of origins, or one per element of a pair."""
        if isinstance(iterable, cst.Call):
            func = iterable.func
            args = [a.value for a in iterable.args if a.keyword is None and not a.star]
            if isinstance(func, cst.Name) and func.value not in self.names.bindings:
                if func.value == "zip":
                    parts = [self._iterate(a) for a in args]
                    return tuple(p[0] if len(p) == 1 else set() for p in parts)
                if func.value == "enumerate" and args:
                    inner = self._iterate(args[0])
                    return (set(), inner[0] if len(inner) == 1 else set())
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                if method in catalog.NAMED_PARAMETER_ITERATORS or method == "items":
                    return (set(), self._eval(iterable))
        return (self._eval(iterable),)

    def _bind_target(self, target: cst.BaseExpression, elements: Tuple[Set[Origin], ...],
                     node: cst.CSTNode) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and len(elements) > 1:
            if len(target.elements) == len(elements):
                for element, origins in zip(target.elements, elements):
                    self._bind_element(element.value, origins, node)
                return
            elements = (set(),)
        self._bind_element(target, elements[0] if len(elements) == 1 else set(), node)

    def _bind_element(self, target: cst.BaseExpression, origins: Set[Origin], node: cst.CSTNode) -> None:
        """A loop or comprehension variable: an element of a container of aliases is one of them;
        an element of anything else owns its storage as far as we can tell."""
        kept = {o for o in origins if o.relation is not Relation.ENTRY and o.relation is not Relation.FRESH}
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind_element(element.value, set(), node)
            return
        key = dotted_name(target)
        if key is None:
            return
        self._bind(key, kept or {self._fresh(target, key)})
        self._forget_below(key)  # a new ``p`` each iteration: last iteration's ``p.grad`` is not this one

    # ================================================================== expressions

    def _eval_slice(self, sl) -> None:
        for element in sl:
            inner = element.slice
            if isinstance(inner, cst.Index):
                self._eval(inner.value)
            elif isinstance(inner, cst.Slice):
                for part in (inner.lower, inner.upper, inner.step):
                    if part is not None:
                        self._eval(part)

    def _eval(self, node: cst.CSTNode) -> Set[Origin]:
        """The origins of the value of ``node``; records reads and writes on the way."""
        cls = node.__class__  # ``isinstance`` on LibCST's classes is ABCMeta's, slow
        if cls is cst.Name:
            if node.value in ("None", "True", "False") or self.state is None:
                return set()
            if node.value in self.state:
                return self._read_key(node.value, node)
            if node.value in self.names.bindings:
                return set()
            return {self._entry(node.value)}
        if cls is cst.Attribute:
            return self._attribute(node)
        if cls is cst.Call:
            return self._call(node)
        if cls is cst.Subscript:
            return self._subscript(node)
        if cls in (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis):
            return set()
        if cls is cst.BinaryOperation:
            self._eval(node.left)
            self._eval(node.right)
            return set()
        if cls is cst.UnaryOperation:
            self._eval(node.expression)
            return set()
        if cls is cst.BooleanOperation:
            return self._eval(node.left) | self._eval(node.right)
        if cls is cst.Comparison:
            # ``x is None`` / ``x is not y`` test identity: they read no values, so a write before
            # them is seen by no read there (a name or attribute alone is not even evaluated)
            identity = all(c.operator.__class__ in (cst.Is, cst.IsNot) for c in node.comparisons)
            for operand in (node.left, *(c.comparator for c in node.comparisons)):
                if not (identity and operand.__class__ in (cst.Name, cst.Attribute)):
                    self._eval(operand)
            return set()
        if cls is cst.IfExp:
            self._eval(node.test)
            return self._arm(node.body, node.test, True) | self._arm(node.orelse, node.test, False)
        if cls in (cst.Tuple, cst.List, cst.Set):
            out: Set[Origin] = set()
            for element in node.elements:
                out |= {o for o in self._eval(element.value) if o.relation not in HANDLES}
            return out
        if cls is cst.Dict:
            out = set()
            for element in node.elements:
                if element.__class__ is cst.DictElement:
                    self._eval(element.key)
                out |= {o for o in self._eval(element.value) if o.relation not in HANDLES}
            return out
        if cls in (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp):
            return self._comprehension(node)
        if cls is cst.NamedExpr:
            origins = self._eval(node.value)
            self._assign(node.target, origins, node.value)
            return origins
        if cls in (cst.Await, cst.Yield):
            inner = getattr(node, "expression", None) or getattr(node, "value", None)
            if inner.__class__ is cst.From:
                inner = inner.item
            return self._eval(inner) if isinstance(inner, cst.BaseExpression) else set()
        if cls is cst.FormattedString:
            for part in node.parts:
                if part.__class__ is cst.FormattedStringExpression:
                    self._eval(part.expression)
            return set()
        if cls is cst.ConcatenatedString:
            self._eval(node.left)
            self._eval(node.right)
            return set()
        if cls is cst.StarredElement:
            return self._eval(node.value)
        if isinstance(node, _NESTED):
            return set()
        for child in node.children:
            if isinstance(child, cst.BaseExpression):
                self._eval(child)
        return set()

    def _attribute(self, node: cst.Attribute) -> Set[Origin]:
        attr = node.attr.value
        key = dotted_name(node)
        if key is not None and self.state is not None and key in self.state:
            return self._read_key(key, node)
        if attr in catalog.NON_TENSOR_ATTRIBUTES:
            return set()
        if attr in catalog.UNTRACKED_ALIAS_ATTRIBUTES:
            base = self._eval(node.value)
            kind = self._kind(node.value)
            owner = node.value.attr.value if isinstance(node.value, cst.Attribute) else None
            if kind is Kind.TENSOR or (kind is Kind.UNKNOWN and (
                    surely_tensor(base) or any(o.relation is Relation.PARAMS for o in base)
                    or owner == "grad" or owner in catalog.MODULE_TENSOR_ATTRIBUTES)):
                return self._derive(base, Relation.DATA, attr, node)
            return {self._entry(key)} if key is not None else set()
        if is_view_attribute(attr) and self._kind(node.value) in (Kind.TENSOR, Kind.NDARRAY):
            return self._derive(self._eval(node.value), Relation.VIEW, attr, node)
        self._eval(node.value)
        if key is not None and key.split(".", 1)[0] not in self.names.bindings:
            return {self._entry(key)}
        return set()

    def _subscript(self, node: cst.Subscript) -> Set[Origin]:
        base = self._eval(node.value)
        self._eval_slice(node.slice)
        kind = self._kind(node.value)
        if kind is Kind.NDARRAY and all(isinstance(e.slice, cst.Index) and not _is_view_marker(e.slice.value)
                                        for e in node.slice):
            return set()  # ``a[i]`` of an array of unknown rank: a scalar copy when it is 1-D
        if kind in (Kind.TENSOR, Kind.NDARRAY) or (kind is Kind.UNKNOWN and multi_dimensional(node)):
            given = self.indexing.of(node.slice)
            if given != COPY and (_is_basic_index(node.slice, self._kind, self._int_names) or given == VIEW):
                return self._derive(base, Relation.VIEW, "__getitem__", node)
            return set()
        # An element of a container of aliases (a state_dict snapshot, a list of detached params).
        return {o for o in base if o.relation not in (Relation.ENTRY, Relation.FRESH)} - self._other_entries(node)

    def _comprehension(self, node) -> Set[Origin]:
        saved: Dict[str, Optional[Values]] = {}
        comp: Optional[cst.CompFor] = node.for_in
        bound: List[str] = []
        while comp is not None:
            elements = self._iterate(comp.iter)
            for name in _target_keys(comp.target):
                if name not in saved and self.state is not None:
                    saved[name] = self.state.get(name)
                    bound.append(name)
            self._bind_target(comp.target, elements, comp.iter)
            comp = comp.inner_for_in
        self._comp_depth += 1
        try:
            comp = node.for_in
            while comp is not None:
                for cond in comp.ifs:
                    self._eval(cond.test)
                comp = comp.inner_for_in
            if isinstance(node, cst.DictComp):
                self._eval(node.key)
                result = self._eval(node.value)
            else:
                result = self._eval(node.elt)
        finally:
            self._comp_depth -= 1
        if self.state is not None:
            for name in bound:
                if saved[name] is None:
                    self.state.pop(name, None)
                else:
                    self.state[name] = saved[name]
        return {o for o in result if o.relation not in HANDLES or o.relation is Relation.PARAMS}


def _target_keys(target: cst.BaseExpression) -> Iterable[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_keys(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_keys(target.value)
    else:
        key = dotted_name(target)
        if key is not None:
            yield key


# ====================================================================== engine glue


def _is_view_marker(value: cst.BaseExpression) -> bool:
    """``...`` or ``None`` in an index: the result keeps dimensions, so it is a view."""
    return isinstance(value, cst.Ellipsis) or (isinstance(value, cst.Name) and value.value == "None")



"""Is this expression a tensor? Three-valued (and a little richer), flow-sensitive by statement order.

``TensorFacts`` takes part in the engine's single traversal: it binds names as assignments are
left, narrows on ``isinstance`` tests, joins branches and loops, and answers ``kind(expr)`` for the
statement being visited. Only ``Kind.TENSOR`` ever makes a rule fire; anything it cannot prove is
``Kind.UNKNOWN``, and rules stay silent on that.

For an analysis that needs the kinds of a whole scope at once (``AliasAnalysis``, built when a rule
first asks about a node of the scope), ``scope_kinds(scope)`` walks the scope with the same hooks
and returns a map from every expression of the scope the alias analysis asks about to its kind
where it is evaluated (``ScopeKinds``), as LibCST's metadata providers do for a module.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ..knowledge import catalog
from .base import Analysis, AnalysisContext
from .project import ModuleView
from ..knowledge.torch_facts import ModuleEffect, is_optimizer_class
from .param_evidence import TENSOR, Shared, evidenced_kinds
from .torchnames import TorchNames, dotted_name, target_names
from ..walk import STATEMENTS_ONLY, Walker, walk


class Kind(enum.Enum):
    TENSOR = "tensor"
    TENSOR_SEQ = "sequence of tensors"  # list/tuple/iterator whose elements are tensors
    EMPTY_LIST = "empty list"  # ``[]``: becomes TENSOR_SEQ when tensors are appended
    NDARRAY = "numpy array"
    MODULE = "module"
    TENSOR_MODULE = "module returning a tensor"  # nn.Linear and friends
    OPTIMIZER = "optimizer"
    STATE_DICT = "state dict"
    OTHER = "not a tensor"  # literals, strings, containers, user objects
    UNKNOWN = "unknown"

    @property
    def is_module(self) -> bool:
        return self in (Kind.MODULE, Kind.TENSOR_MODULE)


def join(a: Kind, b: Kind) -> Kind:
    if a is b:
        return a
    pair = {a, b}
    if pair == {Kind.EMPTY_LIST, Kind.TENSOR_SEQ}:
        return Kind.TENSOR_SEQ
    if pair == {Kind.EMPTY_LIST, Kind.OTHER}:
        return Kind.OTHER
    if pair == {Kind.MODULE, Kind.TENSOR_MODULE}:
        return Kind.MODULE
    return Kind.UNKNOWN


_NOT_TENSOR_BUILTINS = frozenset(
    "len int float str bool range dict set repr print isinstance hasattr type id hash "
    "round enumerate zip map filter open format ord chr bytes frozenset callable".split()
)
_SEQUENCE_BUILTINS = frozenset({"list", "tuple", "sorted", "reversed"})
# Literals and displays that are never a tensor (concrete classes: none has a subclass).
_NOT_TENSOR_NODES = frozenset({cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
                               cst.FormattedString, cst.Dict, cst.DictComp, cst.Set, cst.SetComp, cst.Lambda})
_MODULE_SELF_METHODS = frozenset(
    "to cuda cpu float double half bfloat16 train eval requires_grad_ zero_grad_ apply".split()
)


@dataclass
class ClassInfo:
    name: str
    is_module: bool
    attributes: Dict[str, Kind] = field(default_factory=dict)
    # a module's registered buffers and parameters: nn.Module's __setattr__ accepts only a tensor
    # (or None) for them afterwards, whatever else the class assigns
    pinned: Set[str] = field(default_factory=set)
    forward_returns_tensor: bool = False  # ``def forward(...) -> torch.Tensor``
    is_tensor: bool = False  # a subclass of torch.Tensor / nn.Parameter: ``self`` is a tensor
    is_optimizer: bool = False  # a subclass of a ``torch.optim`` optimizer: its methods update its parameters

    @property
    def self_kind(self) -> Kind:
        if self.is_tensor:
            return Kind.TENSOR
        if not self.is_module:
            return Kind.OTHER
        return Kind.TENSOR_MODULE if self.forward_returns_tensor else Kind.MODULE


@dataclass
class Frame:
    vars: Dict[str, Kind]
    parent: Optional["Frame"] = None
    function: Optional[cst.FunctionDef] = None
    cls: Optional[ClassInfo] = None
    self_name: Optional[str] = None
    class_body: Optional[ClassInfo] = None  # set on the frame of a class body

    def lookup(self, name: str) -> Optional[Kind]:
        frame: Optional[Frame] = self
        while frame is not None:
            kind = frame.vars.get(name)
            if kind is not None:
                return kind
            frame = frame.parent
        return None


class ScopeKinds:
    """``TensorFacts.scope_kinds``: the kinds of one scope's expressions, each where it is evaluated
    (names bound later in the scope do not change it), and the name of the scope's ``self``."""

    __slots__ = ("_kinds", "self_name", "_default")

    def __init__(self, kinds: Dict[int, Kind], self_name: Optional[str], default: Kind = Kind.UNKNOWN) -> None:
        self._kinds = kinds  # by node id; ``default``, most expressions' kind, is not stored
        self.self_name = self_name
        self._default = default

    def kind(self, node: cst.CSTNode) -> Kind:
        return self._kinds.get(id(node), self._default)


def _exact_type_test(test: cst.BaseExpression):
    """``type(x) is T`` / ``type(x) == T`` (holds: True) or ``is not`` / ``!=`` (False), as (the
    ``type(x)`` call, ``T``, holds); None for any other test."""
    if test.__class__ is not cst.Comparison or len(test.comparisons) != 1:
        return None
    left, target = test.left, test.comparisons[0]
    if left.__class__ is not cst.Call or len(left.args) != 1 or left.args[0].value.__class__ is not cst.Name:
        return None
    operator = target.operator.__class__
    if operator in (cst.Is, cst.Equal):
        return left, target.comparator, True
    if operator in (cst.IsNot, cst.NotEqual):
        return left, target.comparator, False
    return None


# What a scope's walk binds without entering it.
_NOT_ENTERED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


class _KindRecorder:
    """Records, as the walk leaves it, the kind of every expression in a place where the alias
    analysis asks for one: what an attribute or an item is taken of (a method's receiver
    included), an index, an argument, the target of ``x op= v`` (before ``op=`` rebinds it)."""

    def __init__(self, facts: "TensorFacts") -> None:
        self.facts = facts
        self.kinds: Dict[int, Kind] = {}

    def _record(self, node: cst.BaseExpression) -> None:
        kind = self.facts.kind(node)
        if kind is not self.facts.unknown:
            self.kinds[id(node)] = kind

    def leave_Attribute(self, node: cst.Attribute) -> None:
        self._record(node.value)

    def leave_Subscript(self, node: cst.Subscript) -> None:
        self._record(node.value)
        for element in node.slice:
            if element.slice.__class__ is cst.Index:
                self._record(element.slice.value)

    def leave_Arg(self, node: cst.Arg) -> None:
        self._record(node.value)

    def leave_AugAssign_target(self, node: cst.AugAssign) -> None:
        self._record(node.target)


def _terminates(body: cst.BaseSuite) -> bool:
    """True when a block always leaves (return/raise/continue/break as its last statement)."""
    if body.__class__ is not cst.IndentedBlock or not body.body:
        if body.__class__ is cst.SimpleStatementSuite and body.body:
            return isinstance(body.body[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break))
        return False
    last = body.body[-1]
    if last.__class__ is cst.SimpleStatementLine and last.body:
        return isinstance(last.body[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break))
    return False


class _KindFlow:
    """How kinds flow through a walk: binding names at assignments, narrowing on ``isinstance``
    tests, joining branches and loops, entering and leaving scopes (the traversal hooks of
    ``TensorFacts``, which holds the ``frame`` and answers ``kind``)."""

    frame: Frame
    classes: Dict[str, ClassInfo]
    names: TorchNames
    _branch_stack: List[Tuple[Dict[str, Kind], Optional[Dict[str, Kind]], bool]]
    _loop_stack: List[Dict[str, Kind]]

    # ------------------------------------------------------------------ binding

    def bind(self, target: cst.BaseExpression, kind: Kind) -> None:
        if target.__class__ is cst.Name:
            self.frame.vars[target.value] = kind
        elif target.__class__ in (cst.Tuple, cst.List):
            elem = Kind.TENSOR if kind in (Kind.TENSOR, Kind.TENSOR_SEQ) else Kind.UNKNOWN
            for el in target.elements:
                if el.__class__ is cst.StarredElement:
                    self.bind(el.value, Kind.TENSOR_SEQ if elem is Kind.TENSOR else Kind.UNKNOWN)
                else:
                    self.bind(el.value, elem)

    def bind_pairwise(self, target: cst.BaseExpression, kinds: Sequence[Kind]) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and len(kinds) > 1:
            if len(target.elements) == len(kinds):
                for el, k in zip(target.elements, kinds):
                    self.bind(el.value, k)
                return
            kinds = (Kind.UNKNOWN,)
        if len(kinds) == 1:
            self.bind(target, kinds[0])
        else:
            for name in target_names(target):
                self.frame.vars[name] = Kind.UNKNOWN

    def _bind_assignment(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if target.__class__ in (cst.Tuple, cst.List) and value.__class__ in (cst.Tuple, cst.List) \
                and len(target.elements) == len(value.elements) \
                and not any(e.__class__ is cst.StarredElement for e in target.elements):
            kinds = [self.kind(e.value) for e in value.elements]
            for el, k in zip(target.elements, kinds):
                self.bind(el.value, k)
        else:
            self.bind(target, self.kind(value))

    def _comprehension_bindings(self, comp_for: cst.CompFor) -> Dict[str, Kind]:
        saved = self.frame
        bound: Dict[str, Kind] = {}
        try:
            node: Optional[cst.CompFor] = comp_for
            while node is not None:
                kinds = self.element_kinds(node.iter)
                self.frame = Frame(bound, saved)
                self.bind_pairwise(node.target, kinds)
                node = node.inner_for_in
        finally:
            self.frame = saved
        return bound

    def _narrowings(self, test: cst.BaseExpression, positive: bool) -> Dict[str, Kind]:
        """Names whose kind a true (or false) ``test`` settles."""
        if test.__class__ is cst.UnaryOperation and test.operator.__class__ is cst.Not:
            return self._narrowings(test.expression, not positive)
        if test.__class__ is cst.BooleanOperation:
            both_hold = test.operator.__class__ is cst.And == positive
            if both_hold:
                out = self._narrowings(test.left, positive)
                out.update(self._narrowings(test.right, positive))
                return out
            return {}
        tested = self._type_test(test)
        if tested is None:
            return {}
        subject, named, kind, holds = tested
        if positive == holds:
            return {subject: kind}
        current = self.frame.lookup(subject)
        if kind is Kind.TENSOR and not self._names_tensor_itself(named):
            return {}  # not a ``ShardedParam`` (a Parameter subclass): still maybe a tensor
        if kind is Kind.TENSOR:
            return {subject: Kind.OTHER if current in (None, Kind.UNKNOWN, Kind.TENSOR) else current}
        if current is kind:
            return {subject: Kind.UNKNOWN}
        return {}

    def _type_test(self, test: cst.BaseExpression):
        """``isinstance(x, T)``, ``torch.is_tensor(x)``, ``type(x) is T`` and ``type(x) is not T``
        (``==``, ``!=``) as (``x``, ``T`` or None, ``T``'s kind, whether the test holds where ``x`` is
        a ``T``); None for any other test. The exact-type test reads as ``isinstance``: a subclass
        (a Parameter) passes ``type(x) is not torch.Tensor``, which such code does not expect."""
        exact = _exact_type_test(test)
        if exact is not None:
            call, named, holds = exact
            if self._builtin(call.func) != "type":
                return None
            return call.args[0].value.value, named, self.type_kind(named), holds
        if test.__class__ is not cst.Call or not test.args or test.args[0].value.__class__ is not cst.Name:
            return None
        subject = test.args[0].value.value
        if self._builtin(test.func) == "isinstance" and len(test.args) == 2:
            return subject, test.args[1].value, self.type_kind(test.args[1].value), True
        if self.names.is_torch(test.func, "is_tensor"):
            return subject, None, Kind.TENSOR, True
        return None

    # ------------------------------------------------------------------ traversal hooks

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        info = self.classes.get(node.name.value) or ClassInfo(node.name.value, False)
        self.frame = Frame({}, self.frame, class_body=info)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.frame = self.frame.parent or Frame({})
        self.frame.vars[node.name.value] = Kind.OTHER

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        cls = self.frame.class_body
        frame = Frame({}, self.frame, function=node, cls=cls)
        params = list(node.params.posonly_params) + list(node.params.params)
        decorators = {d.decorator.value for d in node.decorators if d.decorator.__class__ is cst.Name}
        if cls is not None and params and "staticmethod" not in decorators:
            frame.self_name = params[0].name.value
            frame.vars[frame.self_name] = cls.self_kind if "classmethod" not in decorators else Kind.OTHER
            params = params[1:]
        all_params = params + list(node.params.kwonly_params)
        self.frame = frame  # ``function_qualname`` asks for it
        passed = self._passed_tensors(len(list(node.params.posonly_params) + list(node.params.params)) - len(params))
        for position, param in enumerate(all_params):
            kind = Kind.UNKNOWN
            if param.annotation is not None:
                kind = self.annotation_kind(param.annotation.annotation)
            elif position in passed:
                kind = Kind.TENSOR  # the project's callers pass a tensor here
            frame.vars[param.name.value] = kind
        for star in (node.params.star_arg, node.params.star_kwarg):
            if star.__class__ is cst.Param:
                frame.vars[star.name.value] = Kind.OTHER
        self.frame = frame

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.frame = self.frame.parent or Frame({})
        self.frame.vars[node.name.value] = Kind.OTHER

    def visit_Lambda(self, node: cst.Lambda) -> None:
        frame = Frame({}, self.frame)
        for param in node.params.params:
            frame.vars[param.name.value] = Kind.UNKNOWN
        self.frame = frame

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.frame = self.frame.parent or Frame({})

    def _visit_comprehension(self, node) -> None:
        self.frame = Frame(self._comprehension_bindings(node.for_in), self.frame)

    def _leave_comprehension(self, node) -> None:
        self.frame = self.frame.parent or Frame({})

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension
    leave_ListComp = leave_SetComp = leave_GeneratorExp = leave_DictComp = _leave_comprehension

    def leave_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_assignment(target.target, node.value)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        kind = self.annotation_kind(node.annotation.annotation)
        if kind is Kind.UNKNOWN and node.value is not None:
            kind = self.kind(node.value)
        self.bind(node.target, kind)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            old = self.kind(node.target)
            if old in (Kind.TENSOR, Kind.NDARRAY):
                return
            value = self.kind(node.value)
            if old is Kind.EMPTY_LIST or old is Kind.TENSOR_SEQ:
                new = Kind.TENSOR_SEQ if value is Kind.TENSOR_SEQ else join(old, value)
            else:
                new = Kind.OTHER if (old, value) == (Kind.OTHER, Kind.OTHER) else Kind.UNKNOWN
            self.frame.vars[node.target.value] = new

    def leave_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.bind(node.target, self.kind(node.value))

    def leave_Call(self, node: cst.Call) -> None:
        # ``losses.append(loss)``: a list that only ever receives tensors is a sequence of tensors.
        func = node.func
        if (func.__class__ is cst.Attribute and func.value.__class__ is cst.Name
                and (func.attr.value in catalog.CONTAINER_ADD_METHODS
                     or func.attr.value in catalog.CONTAINER_EXTEND_METHODS) and node.args):
            name = func.value.value
            current = self.frame.lookup(name)
            if current in (Kind.EMPTY_LIST, Kind.TENSOR_SEQ):
                added = self.kind(node.args[-1].value)
                ok = (added is Kind.TENSOR_SEQ if func.attr.value in catalog.CONTAINER_EXTEND_METHODS
                      else added is Kind.TENSOR)
                self.frame.vars[name] = Kind.TENSOR_SEQ if ok else Kind.OTHER

    def leave_Del(self, node: cst.Del) -> None:
        for name in target_names(node.target):
            self.frame.vars[name] = Kind.UNKNOWN

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self.frame.vars[node.name.name.value] = Kind.OTHER

    def leave_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            for name in target_names(node.asname.name):
                self.frame.vars[name] = Kind.UNKNOWN

    # Branches: snapshot before the body, join after; a body that always leaves adds nothing.
    def leave_Assert(self, node: cst.Assert) -> None:
        # ``assert isinstance(x, TensorBox)``: what follows runs only where it held
        self.frame.vars.update(self._narrowings(node.test, True))

    def visit_If_body(self, node: cst.If) -> None:
        snapshot = dict(self.frame.vars)
        self._branch_stack.append((snapshot, None, False))
        self.frame.vars.update(self._narrowings(node.test, True))

    def leave_If_body(self, node: cst.If) -> None:
        snapshot, _, _ = self._branch_stack.pop()
        body_vars = dict(self.frame.vars)
        self.frame.vars.clear()
        self.frame.vars.update(snapshot)
        self.frame.vars.update(self._narrowings(node.test, False))
        self._branch_stack.append((snapshot, body_vars, _terminates(node.body)))

    def leave_If(self, node: cst.If) -> None:
        snapshot, body_vars, body_leaves = self._branch_stack.pop()
        else_leaves = node.orelse is not None and isinstance(node.orelse, cst.Else) and _terminates(node.orelse.body)
        if body_leaves:
            return  # only the else path (already in place) continues
        assert body_vars is not None
        if else_leaves:
            self.frame.vars.clear()
            self.frame.vars.update(body_vars)
            return
        self._join_into(body_vars)

    def _join_into(self, other: Dict[str, Kind]) -> None:
        current = self.frame.vars
        for name in set(current) | set(other):
            a, b = current.get(name), other.get(name)
            if a is b and a is not None:
                continue  # the same on both paths: already so
            if a is None or b is None:
                outer = self.frame.parent.lookup(name) if self.frame.parent else None
                a = a or outer or Kind.UNKNOWN
                b = b or outer or Kind.UNKNOWN
            current[name] = join(a, b)

    def _enter_loop(self) -> None:
        self._loop_stack.append(dict(self.frame.vars))

    def _leave_loop(self) -> None:
        before = self._loop_stack.pop()
        self._join_into(before)

    def visit_For_body(self, node: cst.For) -> None:
        self._enter_loop()
        self.bind_pairwise(node.target, self.element_kinds(node.iter))

    def leave_For_body(self, node: cst.For) -> None:
        self._leave_loop()

    def visit_While_body(self, node: cst.While) -> None:
        self._enter_loop()

    def leave_While_body(self, node: cst.While) -> None:
        self._leave_loop()


class _AnnotationKinds:
    """What annotations and type names say a value is (a part of ``TensorFacts``: it uses the
    scope's imports, names and the project index)."""

    def type_kind(self, node: cst.BaseExpression) -> Kind:
        """What ``isinstance(x, node)`` being true says about ``x``."""
        if isinstance(node, cst.Tuple):
            kinds = [self.type_kind(el.value) for el in node.elements]
            result = kinds[0] if kinds else Kind.UNKNOWN
            for k in kinds[1:]:
                result = join(result, k)
            return result
        q = self.names.qualified(node)
        if q is not None:
            if q in catalog.TENSOR_TYPES or q in catalog.TENSOR_CLASSES:
                return Kind.TENSOR
            if q == "numpy.ndarray":
                return Kind.NDARRAY
            if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper():
                return Kind.MODULE
            if is_optimizer_class(q):
                return Kind.OPTIMIZER
            if self._project_tensor_class(q):
                return Kind.TENSOR  # ``isinstance(p, ShardedParam)``: a Parameter subclass of the project
            return Kind.OTHER if not q.startswith("torch") else Kind.UNKNOWN
        if isinstance(node, cst.Name):
            if self._builtin(node) in ("list", "tuple", "dict", "set", "int", "float", "str", "bool", "bytes"):
                return Kind.OTHER
            info = self.classes.get(node.value)
            if info is not None:
                return Kind.TENSOR if self._project_tensor_class(node.value) else info.self_kind
            if self.project is not None and node.value not in self.names.bindings:
                # a class of the project (``from .ir import TensorBox``: relative imports are not
                # torch's, so ``names`` leaves them out)
                index = self.project.index
                resolved = index.resolve(self.project.module, node.value)
                if resolved is not None and index.is_class(resolved):
                    return Kind.TENSOR if index.is_tensor_class(resolved) else \
                        Kind.MODULE if index.is_module_class(resolved) else Kind.OTHER
        return Kind.UNKNOWN

    def _names_tensor_itself(self, node: Optional[cst.BaseExpression]) -> bool:
        """``torch.Tensor`` / ``nn.Parameter`` (or a tuple holding one), not a subclass of them: what
        failing ``isinstance`` says is not a tensor (``torch.is_tensor`` has no class: None)."""
        if node is None:
            return True
        if isinstance(node, cst.Tuple):
            return any(self._names_tensor_itself(el.value) for el in node.elements)
        return self.names.qualified(node) in catalog.TENSOR_TYPES

    def _project_tensor_class(self, name: str) -> bool:
        """Whether ``name`` (as imported or defined here) is a class of the project that subclasses
        ``torch.Tensor`` or ``nn.Parameter``."""
        project = self.project
        if project is None:
            return False
        index = project.index
        resolved = index.resolve(project.module, name) or index.lookup(name)
        return resolved is not None and index.is_tensor_class(resolved)

    def annotation_kind(self, node: cst.BaseExpression) -> Kind:
        q = self.names.qualified(node)
        if q in catalog.TENSOR_TYPES:
            return Kind.TENSOR
        if q == "numpy.ndarray":
            return Kind.NDARRAY
        if node.__class__ is cst.Name and node.value in self.classes and node.value not in self.names.bindings:
            return self.classes[node.value].self_kind  # a class of this module: a module, or not a tensor
        if node.__class__ is cst.SimpleString and node.value.strip("'\"") in ("Tensor", "torch.Tensor"):
            return Kind.TENSOR if "Tensor" in self.names.bindings or "torch" in self.names.bindings else Kind.UNKNOWN
        if q is not None and q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper():
            return Kind.MODULE
        if is_optimizer_class(q):
            return Kind.OPTIMIZER
        if node.__class__ is cst.Name and self._builtin(node) in ("int", "float", "str", "bool", "list", "dict", "tuple"):
            return Kind.OTHER
        if self._plain_project_class(node):
            return Kind.OTHER  # ``prox_map: ProxMap``: an object of the project, not a tensor
        if node.__class__ is cst.Subscript:
            base = self.names.qualified(node.value) or (node.value.value if node.value.__class__ is cst.Name else "")
            inner = node.slice[0].slice if node.slice else None
            if base.rsplit(".", 1)[-1] in catalog.SEQUENCE_ANNOTATIONS and inner.__class__ is cst.Index:
                if self.annotation_kind(inner.value) is Kind.TENSOR:
                    return Kind.TENSOR_SEQ
            return Kind.OTHER if base.rsplit(".", 1)[-1] in ("List", "list", "Dict", "dict") else Kind.UNKNOWN
        return Kind.UNKNOWN

    def _plain_project_class(self, node: cst.BaseExpression) -> bool:
        """Whether ``node`` names a class of the project that nothing makes a tensor or a module
        (``ProjectIndex.is_plain_class``), imported from another of its modules."""
        if self.project is None or node.__class__ not in (cst.Name, cst.Attribute):
            return False
        dotted = dotted_name(node)
        index = self.project.index
        resolved = index.resolve(self.project.module, dotted) if dotted is not None else None
        return resolved is not None and index.is_plain_class(resolved)

    def _names_a_class(self, func: cst.BaseExpression) -> bool:
        """Whether the called ``func`` may name a class of the project: a name, or an attribute of
        an imported module (not of a local value, ``x.permute``, nor of torch or numpy)."""
        root = func
        while root.__class__ is cst.Attribute:
            root = root.value
        if root.__class__ is not cst.Name:
            return False
        if root is func:
            return True
        return self.frame.lookup(root.value) is None and \
            self.names.bindings.get(root.value, "").partition(".")[0] not in ("torch", "numpy")

    def _builtin(self, node: cst.BaseExpression) -> Optional[str]:
        if isinstance(node, cst.Name) and node.value not in self.names.bindings and self.frame.lookup(node.value) is None:
            return node.value
        return None


class TensorFacts(_AnnotationKinds, _KindFlow, Analysis):
    """Flow-sensitive kinds of names and expressions; a participant in the engine traversal."""

    walks = True
    requires = (TorchNames,)

    @classmethod
    def build(cls, ctx: AnalysisContext, scope: Optional[cst.CSTNode]) -> "TensorFacts":
        return cls(ctx.get(TorchNames), ctx.module, ctx.project)

    def __init__(self, names: TorchNames, module: Optional[cst.Module], project: Optional["ModuleView"] = None,
                 classes: Optional[Dict[str, ClassInfo]] = None) -> None:
        self.names = names
        self.project = project
        self.classes: Dict[str, ClassInfo] = classes if classes is not None else {}
        self.frame = Frame({})
        self._branch_stack: List[Tuple[Dict[str, Kind], Optional[Dict[str, Kind]], bool]] = []
        self._loop_stack: List[Dict[str, Kind]] = []
        self._parameter_names: Dict[cst.FunctionDef, Dict[str, str]] = {}
        # In a module of another tensor library (``TorchNames.foreign``) a value nothing shows to be
        # a torch tensor or a NumPy array (an annotation, the project's callers or functions, torch
        # and numpy calls) is that library's or Python's: never a tensor by an op's name alone.
        self.unknown = Kind.OTHER if names.foreign else Kind.UNKNOWN
        if names.foreign:
            self.kind = self._known_kind  # type: ignore[method-assign]
        if module is not None:
            self._collect_classes(module)

    def scope_kinds(self, scope: cst.CSTNode, also: Sequence[object] = ()) -> "ScopeKinds":
        """The kind of every expression of ``scope`` (a function, or the module) that the alias
        analysis asks about (``_KindRecorder``), where the scope evaluates it, by a walk of the
        scope's own (nested functions, classes and lambdas are bound, not entered). A function starts from the bindings its enclosing scopes have where
        this facts' walk is now: asked while the engine visits the function, at its definition.
        ``also``: visitors that take part in the same walk (read-only, after these hooks)."""
        walker = TensorFacts(self.names, None, self.project, self.classes)
        walker._parameter_names = self._parameter_names
        if isinstance(scope, cst.FunctionDef):
            frame = self.frame
            while frame is not None and frame.function is not scope:
                frame = frame.parent
            outer = frame.parent if frame is not None and frame.parent is not None else Frame({})
            walker.frame = Frame(dict(outer.vars), outer.parent, outer.function, outer.cls, outer.self_name,
                                 outer.class_body)
            walker.visit_FunctionDef(scope)
            walker._evidenced_parameters(scope)
            root: cst.CSTNode = scope.body
        else:
            root = scope
        recorder = _KindRecorder(walker)
        # the recorder leaves a node after the facts did: a comprehension's kind outside its own bindings
        Walker([recorder, walker, *also], prune=_NOT_ENTERED).walk(root)
        return ScopeKinds(recorder.kinds, walker.frame.self_name, self.unknown)

    def _evidenced_parameters(self, scope: cst.FunctionDef) -> None:
        """Unannotated parameters the body shows to be tensors or arrays (``param_evidence``) start
        the scope's kinds as such: ``out = tensor.squeeze(0).detach().clamp_(0, 1)`` writes one."""
        unknown = [n for n, k in self.frame.vars.items() if k is Kind.UNKNOWN and n != self.frame.self_name]
        for name, kind in evidenced_kinds(scope, unknown, self.names, self.shared_methods).items():
            self.frame.vars[name] = Kind.TENSOR if kind == TENSOR else Kind.NDARRAY
        for param in (*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params):
            name = param.name.value
            if param.annotation is not None and self.frame.vars.get(name) is Kind.UNKNOWN \
                    and self.optional_kind(param.annotation.annotation) is Kind.TENSOR:
                self.frame.vars[name] = Kind.TENSOR  # ``mask: Optional[torch.Tensor] = None``

    @property
    def shared_methods(self) -> "Shared":
        """Tensors' in-place ops that a plain class of the project defines as a method of its own
        (``ProjectIndex.inplace_named_methods``: ``ProxMap.apply_``): a call it can take shows no tensor."""
        return self.project.index.inplace_named_methods if self.project is not None else {}

    def optional_kind(self, node: cst.BaseExpression) -> Kind:
        """The kind of ``X`` in ``Optional[X]``, ``Union[X, None]`` or ``X | None`` (else UNKNOWN)."""
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            sides = [node.left, node.right]
        elif isinstance(node, cst.Subscript) and (self.names.qualified(node.value) or dotted_name(node.value) or "") \
                .rsplit(".", 1)[-1] in ("Optional", "Union"):
            sides = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
        else:
            return Kind.UNKNOWN
        kinds = {self.annotation_kind(s) for s in sides if not (isinstance(s, cst.Name) and s.value == "None")}
        return kinds.pop() if len(kinds) == 1 else Kind.UNKNOWN

    # ------------------------------------------------------------------ queries

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        return self.kind(node) is Kind.TENSOR

    @property
    def function(self) -> Optional[cst.FunctionDef]:
        frame: Optional[Frame] = self.frame
        while frame is not None:
            if frame.function is not None:
                return frame.function
            frame = frame.parent
        return None

    def _passed_tensors(self, offset: int) -> FrozenSet[int]:
        """The positions (``self`` not counted: ``offset`` 1 in a method) of the current function's
        parameters that a call in the project passes a tensor (``ProjectIndex.tensor_parameters``)."""
        name = self.function_qualname if self.project is not None else None
        if name is None:
            return frozenset()
        module = self.project.module
        passed = self.project.index.tensor_parameters(f"{module}.{name}" if module else name)
        return frozenset(p - offset for p in passed if p >= offset)

    def passed_to(self, name: str) -> Optional[Tuple[bool, bool]]:
        """For ``name`` an annotated positional parameter of the current function: whether a call in
        the project passes it a tensor, and whether one passes it no tensor
        (``ProjectIndex.tensor_parameters``, ``non_tensor_parameters``); None for any other name."""
        function = self.function
        if function is None:
            return None
        params = [*function.params.posonly_params, *function.params.params]
        position = next((i for i, p in enumerate(params) if p.name.value == name), None)
        if position is None or params[position].annotation is None:
            return None
        qualname = self.function_qualname if self.project is not None else None
        if qualname is None:
            return (False, False)
        module = self.project.module
        key = f"{module}.{qualname}" if module else qualname
        index = self.project.index
        return position in index.tensor_parameters(key), position in index.non_tensor_parameters(key)

    @property
    def function_qualname(self) -> Optional[str]:
        """The innermost function's name as the project index keys it within the module (``f``,
        ``Class.method``); None for a function nested in another or in a nested class."""
        frame: Optional[Frame] = self.frame
        while frame is not None and frame.function is None:
            frame = frame.parent
        outer = frame.parent if frame is not None else None
        if outer is None or outer.function is not None:
            return None
        name = frame.function.name.value
        if outer.class_body is not None:
            top = outer.parent
            return f"{outer.class_body.name}.{name}" if top is not None and top.parent is None \
                and top.function is None and top.class_body is None else None
        return name if outer.parent is None and outer.class_body is None else None

    @property
    def current_class(self) -> Optional[ClassInfo]:
        frame: Optional[Frame] = self.frame
        while frame is not None:
            if frame.function is not None:
                return frame.cls
            frame = frame.parent
        return None

    def held_module(self, func: cst.BaseExpression) -> Optional[ModuleEffect]:
        """What calling ``func`` does when it is ``self.<attr>`` holding ``torch.nn`` modules
        (``ProjectIndex.held_module``), in a method of a class of this module."""
        if self.project is not None and func.__class__ is cst.Subscript and func.value.__class__ is cst.Attribute:
            cls = self._self_class(func.value.value)  # ``self.blocks[i](x)``: an element of an ``nn.ModuleList``
            return self.project.held_element(cls.name, func.value.attr.value) if cls is not None else None
        if self.project is None or func.__class__ is not cst.Attribute:
            return None
        cls = self._self_class(func.value)
        return self.project.held_module(cls.name, func.attr.value) if cls is not None else None

    def kind(self, node: cst.BaseExpression) -> Kind:
        cls = node.__class__  # ``isinstance`` on LibCST's classes is ABCMeta's, slow
        if cls is cst.Name:
            if node.value in ("None", "True", "False"):
                return Kind.OTHER
            found = self.frame.lookup(node.value)
            return found if found is not None else Kind.UNKNOWN
        if cls in _NOT_TENSOR_NODES:
            return Kind.OTHER
        if cls in (cst.List, cst.Tuple):
            if not node.elements:
                return Kind.EMPTY_LIST if cls is cst.List else Kind.OTHER
            kinds = [self.kind(el.value) for el in node.elements if el.__class__ is cst.Element]
            if kinds and len(kinds) == len(node.elements) and all(k is Kind.TENSOR for k in kinds):
                return Kind.TENSOR_SEQ
            return Kind.OTHER
        if cls in (cst.ListComp, cst.GeneratorExp):
            # The element is judged with the comprehension's own bindings.
            saved = self.frame
            self.frame = Frame(self._comprehension_bindings(node.for_in), saved)
            try:
                elt = self.kind(node.elt)
            finally:
                self.frame = saved
            return Kind.TENSOR_SEQ if elt is Kind.TENSOR else Kind.OTHER
        if cls is cst.Attribute:
            return self._attribute_kind(node)
        if cls is cst.Subscript:
            base = self.kind(node.value)
            if base is Kind.TENSOR or base is Kind.NDARRAY:
                return base
            if base is Kind.STATE_DICT:
                return Kind.TENSOR
            if base is Kind.TENSOR_SEQ:
                sl = node.slice
                if len(sl) == 1 and sl[0].slice.__class__ is cst.Index:
                    return Kind.TENSOR
                return Kind.TENSOR_SEQ
            return Kind.UNKNOWN
        if cls is cst.Call:
            return self._call_kind(node)
        if cls is cst.BinaryOperation:
            left, right = self.kind(node.left), self.kind(node.right)
            if node.operator.__class__ is cst.MatrixMultiply and left is not Kind.TENSOR and right is Kind.TENSOR:
                # the left operand's ``__matmul__`` runs first: a scipy.sparse matrix's returns an
                # ndarray, an ndarray's raises; only a tensor on the left makes it torch's
                return Kind.UNKNOWN
            if Kind.TENSOR in (left, right):
                return Kind.TENSOR
            if Kind.NDARRAY in (left, right):
                return Kind.NDARRAY
            if left is Kind.OTHER and right is Kind.OTHER:
                return Kind.OTHER
            return Kind.UNKNOWN
        if cls is cst.UnaryOperation:
            if node.operator.__class__ is cst.Not:
                return Kind.OTHER
            return self.kind(node.expression)
        if cls is cst.Comparison:
            kinds = {self.kind(node.left)} | {self.kind(c.comparator) for c in node.comparisons}
            if any(c.operator.__class__ in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in node.comparisons):
                return Kind.OTHER
            return Kind.TENSOR if Kind.TENSOR in kinds else Kind.UNKNOWN
        if cls is cst.BooleanOperation:
            return join(self.kind(node.left), self.kind(node.right))
        if cls is cst.IfExp:
            return join(self.kind(node.body), self.kind(node.orelse))
        if cls is cst.NamedExpr:
            return self.kind(node.value)
        return Kind.UNKNOWN

    def _known_kind(self, node: cst.BaseExpression) -> Kind:
        """``kind`` in a module of another tensor library: what is unknown there is not torch's."""
        kind = TensorFacts.kind(self, node)
        return Kind.OTHER if kind is Kind.UNKNOWN else kind

    def element_kinds(self, iterable: cst.BaseExpression) -> Tuple[Kind, ...]:
        """The kind of what iterating ``iterable`` yields; a tuple when it yields pairs."""
        if (iterable.__class__ is cst.Subscript and len(iterable.slice) == 1
                and iterable.slice[0].slice.__class__ is cst.Index
                and iterable.slice[0].slice.value.__class__ is cst.SimpleString
                and iterable.slice[0].slice.value.evaluated_value == "params"):
            return (Kind.TENSOR,)  # ``for p in group["params"]``: an optimizer's parameter group
        if iterable.__class__ is cst.Call and iterable.func.__class__ is cst.Attribute:
            method = iterable.func.attr.value
            if method in catalog.PARAMETER_ITERATORS:
                return (Kind.TENSOR,)
            if method in catalog.NAMED_PARAMETER_ITERATORS:
                return (Kind.OTHER, Kind.TENSOR)
            if method in ("modules", "children"):
                return (Kind.MODULE,)
            if method in ("named_modules", "named_children"):
                return (Kind.OTHER, Kind.MODULE)
            receiver = self.kind(iterable.func.value)
            if receiver is Kind.STATE_DICT:
                if method == "values":
                    return (Kind.TENSOR,)
                if method == "items":
                    return (Kind.OTHER, Kind.TENSOR)
                return (Kind.OTHER,)
        if iterable.__class__ is cst.Call and iterable.func.__class__ is cst.Name:
            builtin = self._builtin(iterable.func)
            args = [a.value for a in iterable.args if a.keyword is None and not a.star]
            if builtin == "enumerate" and args:
                inner = self.element_kinds(args[0])
                return (Kind.OTHER, inner[0] if len(inner) == 1 else Kind.UNKNOWN)
            if builtin == "zip" and args:
                out = []
                for arg in args:
                    inner = self.element_kinds(arg)
                    out.append(inner[0] if len(inner) == 1 else Kind.UNKNOWN)
                return tuple(out)
            if builtin == "range":
                return (Kind.OTHER,)
        kind = self.kind(iterable)
        if kind in (Kind.TENSOR_SEQ, Kind.TENSOR):
            return (Kind.TENSOR,)
        if kind is Kind.NDARRAY:
            return (Kind.NDARRAY,)
        if kind is Kind.STATE_DICT:
            return (Kind.OTHER,)
        return (Kind.UNKNOWN,)

    # ------------------------------------------------------------------ expression helpers

    def _root_kind(self, node: cst.BaseExpression) -> Kind:
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        return self.kind(node) if isinstance(node, cst.Name) else Kind.UNKNOWN

    def _self_class(self, node: cst.BaseExpression) -> Optional[ClassInfo]:
        frame: Optional[Frame] = self.frame
        while frame is not None:
            if frame.function is not None:
                if frame.cls is not None and isinstance(node, cst.Name) and node.value == frame.self_name:
                    return frame.cls
                return None
            frame = frame.parent
        return None

    def _attribute_kind(self, node: cst.Attribute) -> Kind:
        attr = node.attr.value
        q = self.names.qualified(node)
        if q is not None:
            return Kind.UNKNOWN  # a module member such as torch.float32
        cls = self._self_class(node.value)
        if cls is not None:
            known = Kind.TENSOR if attr in cls.pinned else cls.attributes.get(attr)
            if known is not None:
                return known
            if cls.is_module and attr in catalog.MODULE_TENSOR_ATTRIBUTES:
                return Kind.TENSOR
            return Kind.UNKNOWN
        base = self.kind(node.value)
        if base is Kind.TENSOR:
            if attr in catalog.TENSOR_ATTRIBUTES:
                return Kind.TENSOR
            if attr in catalog.NON_TENSOR_ATTRIBUTES:
                return Kind.OTHER
            return Kind.UNKNOWN
        if base is Kind.NDARRAY:
            return Kind.NDARRAY if attr == "T" else Kind.OTHER
        if attr in catalog.MODULE_TENSOR_ATTRIBUTES and self._root_kind(node.value).is_module:
            return Kind.TENSOR
        return Kind.UNKNOWN

    def _call_kind(self, node: cst.Call) -> Kind:
        func = node.func
        summarised = self._project_return_kind(func)
        if summarised is not None:
            return summarised
        if self._names_a_class(func) and self._plain_project_class(func):
            return Kind.OTHER  # ``ProxGroupLasso(reg_lambda)``: an object of the project
        q = self.names.qualified(func)
        if q is not None:
            return self._qualified_call_kind(q, node)
        if func.__class__ is cst.Subscript and self.held_module(func) is not None:
            return Kind.TENSOR  # ``self.blocks[i](x)``
        if func.__class__ is cst.Name:
            builtin = self._builtin(func)
            if builtin == "getattr" and self._parameter_getattr(node):
                return Kind.TENSOR
            if builtin in _NOT_TENSOR_BUILTINS:
                return Kind.OTHER
            if builtin in _SEQUENCE_BUILTINS:
                args = [a.value for a in node.args if a.keyword is None and not a.star]
                if len(args) == 1 and self.element_kinds(args[0]) == (Kind.TENSOR,):
                    return Kind.TENSOR_SEQ
                return Kind.OTHER
            info = self.classes.get(func.value)
            if info is not None and self.frame.lookup(func.value) in (None, Kind.OTHER):
                return info.self_kind
            callee = self.kind(func)
            if callee is Kind.TENSOR_MODULE:
                return Kind.TENSOR
            return Kind.UNKNOWN
        if func.__class__ is cst.Attribute:
            method = func.attr.value
            receiver = self.kind(func.value)
            if receiver is Kind.TENSOR:
                return self._tensor_method_kind(method, node)
            if receiver is Kind.NDARRAY:
                return Kind.OTHER if method in ("item", "tolist") else Kind.NDARRAY
            if receiver.is_module:
                if self._attribute_kind(func) is Kind.TENSOR_MODULE or self.held_module(func) is not None:  # self.fc(x)
                    return Kind.TENSOR
                if method in catalog.PARAMETER_ITERATORS:
                    return Kind.TENSOR_SEQ
                if method == "state_dict":
                    return Kind.STATE_DICT
                if method in _MODULE_SELF_METHODS:
                    return receiver
                return Kind.UNKNOWN
            if receiver is Kind.STATE_DICT:
                return Kind.STATE_DICT if method == "copy" else Kind.UNKNOWN
            if receiver is Kind.OPTIMIZER:
                return Kind.OTHER
            if method in catalog.TENSOR_ONLY_METHODS and not self.names.foreign:
                return Kind.TENSOR
            if method in catalog.PARAMETER_ITERATORS:
                return Kind.TENSOR_SEQ
            if method == "numpy":
                return Kind.NDARRAY
            if method in catalog.SPARSE_MATRIX_METHODS:
                return Kind.OTHER
            if method == "state_dict" and receiver is not Kind.OPTIMIZER:
                return Kind.STATE_DICT if receiver is not Kind.OTHER else Kind.UNKNOWN
            callee = self._attribute_kind(func)
            if callee is Kind.TENSOR_MODULE:
                return Kind.TENSOR
        return Kind.UNKNOWN

    def _parameter_getattr(self, node: cst.Call) -> bool:
        """``getattr(m, key)`` where ``key`` holds the name of a parameter or buffer of ``m``
        (``parameter_name_variables``): a tensor (or None, which a rule's receiver never is)."""
        args = node.args
        if len(args) != 2 or any(a.keyword is not None or a.star for a in args) \
                or not isinstance(args[1].value, cst.Name):
            return False
        function = self.function
        receiver = dotted_name(args[0].value)
        if function is None or receiver is None:
            return False
        names = self._parameter_names.get(function)
        if names is None:
            names = self._parameter_names[function] = parameter_name_variables(function)
        return names.get(args[1].value.value) == receiver

    def _project_return_kind(self, func: cst.BaseExpression) -> Optional[Kind]:
        """What a project function returns, from its summary (``to_numpy(x)``: an ndarray)."""
        name = dotted_name(func)
        if self.project is None or name is None:
            return None
        index, module = self.project.index, self.project.module
        cls = self._self_class(func.value) if func.__class__ is cst.Attribute else None
        if cls is not None:  # ``self.shared_weight()``: through the class and its bases
            qualname = index.method(f"{module}.{cls.name}" if module else cls.name, func.attr.value)
            summary = index.summary(qualname) if qualname is not None else None
        else:
            summary = index.function(module, name)
        kind = summary.returns_kind if summary is not None else None
        return {"ndarray": Kind.NDARRAY, "tensor": Kind.TENSOR}.get(kind) if kind else None

    def _tensor_method_kind(self, method: str, node: cst.Call) -> Kind:
        if method.startswith("_"):
            return Kind.UNKNOWN
        if method == "numpy":
            return Kind.NDARRAY
        if method in catalog.NON_TENSOR_METHODS or method.startswith(catalog.NON_TENSOR_METHOD_PREFIX):
            return Kind.OTHER
        if method in catalog.TENSOR_SEQUENCE_METHODS:
            return Kind.TENSOR_SEQ
        if method in catalog.AMBIGUOUS_METHODS:
            return Kind.TENSOR if not node.args else Kind.UNKNOWN
        if method in catalog.NAMING_WITHOUT_ARGUMENTS:
            return Kind.TENSOR if node.args else Kind.OTHER
        return Kind.TENSOR

    def _qualified_call_kind(self, q: str, node: cst.Call) -> Kind:
        head, _, member = q.rpartition(".")
        if q.startswith("numpy."):
            return Kind.NDARRAY
        if q in catalog.LEGACY_CONSTRUCTOR_NAMES or q == "torch.autograd.Variable":
            return Kind.TENSOR
        if head == "torch":
            if member in catalog.TENSOR_FUNCTIONS:
                return Kind.TENSOR
            if member in catalog.TENSOR_SEQUENCE_FUNCTIONS:
                return Kind.TENSOR_SEQ
            return Kind.UNKNOWN
        if head == "torch.nn.functional":
            return Kind.TENSOR if member in catalog.FUNCTIONAL_TENSOR_FUNCTIONS else Kind.UNKNOWN
        if q in catalog.TENSOR_CLASSES:
            return Kind.TENSOR
        if head.startswith("torch.nn") and member[:1].isupper() and not head.startswith("torch.nn.utils"):
            return Kind.TENSOR_MODULE if member in catalog.NN_TENSOR_MODULES else Kind.MODULE
        if is_optimizer_class(q):
            return Kind.OPTIMIZER
        if q in ("copy.deepcopy", "copy.copy") and node.args:
            inner = self.kind(node.args[0].value)
            return inner if inner is not Kind.EMPTY_LIST else Kind.OTHER
        if q in catalog.CONTAINER_CLASSES:  # ``OrderedDict([("loss", arr)])``: a dict, its items replaced whole
            inner = self.kind(node.args[0].value) if node.args else Kind.OTHER
            return Kind.STATE_DICT if inner is Kind.STATE_DICT else Kind.OTHER
        return Kind.UNKNOWN

    # ------------------------------------------------------------------ classes

    def _collect_classes(self, module: cst.Module) -> None:
        # = module.visit(_ClassCollector(self)), without rebuilding the tree; everything collected is a
        # statement read from its own fields, so nothing inside a statement but its blocks is walked
        walk(module, _ClassCollector(self), prune=STATEMENTS_ONLY)


_PARAMETER_DICTS = frozenset({"_parameters", "_buffers"})


def _parameter_names_source(node: cst.BaseExpression) -> Optional[str]:
    """The module (dotted) whose parameter *names* iterating ``node`` yields, when it says so:
    ``m._parameters`` / ``m._parameters.keys()``; for ``m.named_parameters()`` (pairs) see
    ``_named_pairs_source``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "keys" \
            and not node.args:
        node = node.func.value
    if isinstance(node, cst.Attribute) and node.attr.value in _PARAMETER_DICTS:
        return dotted_name(node.value)
    return None


def _named_pairs_source(node: cst.BaseExpression) -> Optional[str]:
    """``m.named_parameters(...)`` / ``m._parameters.items()``: the module whose (name, tensor)
    pairs iterating ``node`` yields."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method = node.func.attr.value
        if method in catalog.NAMED_PARAMETER_ITERATORS:
            return dotted_name(node.func.value)
        if method == "items" and not node.args and isinstance(node.func.value, cst.Attribute) \
                and node.func.value.attr.value in _PARAMETER_DICTS:
            return dotted_name(node.func.value.value)
    return None


def parameter_name_variables(function: cst.FunctionDef) -> Dict[str, str]:
    """Names that, wherever they are bound in ``function``, hold the name of a parameter (or
    buffer) of one module: loop variables over ``m.named_parameters()`` names, over
    ``m._parameters``, over a list the function fills with those names (``keys = [n for n, _ in
    m.named_parameters()]``, also when the same variable may instead hold the caller's list: the
    function treats both alike), or over the keys of a dict indexed only by such names. Maps the
    name to the module's dotted name, so that ``getattr(m, key)`` is a tensor (or None)."""
    scan = _ParameterNameBindings(function)
    walk(function, scan)
    lists, loops, other, dict_keys = scan.lists, scan.loops, scan.other, scan.dict_keys
    found: Dict[str, str] = {}
    for last in (False, True):  # a dict indexed by loop variables found in the first round
        for target, iterable in loops:
            source = None
            key: Optional[cst.BaseExpression] = None
            if isinstance(iterable, cst.Name) and lists.get(iterable.value) and iterable.value not in other:
                source, key = lists[iterable.value], target
            elif _parameter_names_source(iterable) is not None:
                source, key = _parameter_names_source(iterable), target
            elif _named_pairs_source(iterable) is not None and isinstance(target, cst.Tuple) and target.elements:
                source, key = _named_pairs_source(iterable), target.elements[0].value
            elif isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
                    and isinstance(iterable.func.value, cst.Name) and iterable.func.attr.value in ("items", "keys") \
                    and not iterable.args:
                keys = dict_keys.get(iterable.func.value.value, [])
                sources = {found.get(k.value) if isinstance(k, cst.Name) else None for k in keys}
                if len(sources) == 1 and None not in sources and iterable.func.value.value not in other:
                    source = next(iter(sources))
                    key = target.elements[0].value if iterable.func.attr.value == "items" and isinstance(
                        target, cst.Tuple) and target.elements else target
            if source is not None and isinstance(key, cst.Name):
                if found.get(key.value, source) != source:
                    other.add(key.value)
                found[key.value] = source
            elif last:
                other.update(target_names(target))
    return {name: source for name, source in found.items() if name not in other}


_REGISTERING_METHODS = frozenset({"register_buffer", "register_parameter"})


def _converts_itself(value: cst.BaseExpression, attribute: str) -> bool:
    """``torch.tensor(self.ids)``, also further along a chain (``torch.tensor(self.ids).unsqueeze(1)``):
    a value made from the attribute it is assigned to."""
    while isinstance(value, cst.Call):
        if value.args and dotted_name(value.args[0].value) == attribute:
            return True
        if not isinstance(value.func, cst.Attribute):
            return False
        value = value.func.value
    return False


class _ClassCollector(cst.CSTVisitor):
    """TensorFacts' class table (at module level: a class made per call is a reference cycle that
    would keep the facts, and the tree they point into, alive until the cyclic GC runs)."""

    def __init__(self, facts: "TensorFacts") -> None:
        self.facts = facts
        self.stack: List[ClassInfo] = []
        self.registers: List[bool] = []  # per class on the stack: its ``register_buffer`` is nn.Module's

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        facts = self.facts
        is_module = is_tensor = is_optimizer = False
        for base in node.bases:
            q = facts.names.qualified(base.value) or ""
            if q in catalog.TENSOR_TYPES or q in catalog.TENSOR_CLASSES:
                is_tensor = True
            elif is_optimizer_class(q):
                is_optimizer = True
            elif q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() or q in catalog.MODULE_BASE_CLASSES:
                is_module = True
            elif isinstance(base.value, cst.Name) and base.value.value in facts.classes:
                is_module = is_module or facts.classes[base.value.value].is_module
                is_tensor = is_tensor or facts.classes[base.value.value].is_tensor
                is_optimizer = is_optimizer or facts.classes[base.value.value].is_optimizer
            elif facts.project is not None:  # a base class defined in another file of the project
                index = facts.project.index
                resolved = index.resolve(facts.project.module, dotted_name(base.value) or "")
                is_module = is_module or (resolved is not None and index.is_module_class(resolved))
                is_tensor = is_tensor or (resolved is not None and index.is_tensor_class(resolved))
                is_optimizer = is_optimizer or (resolved is not None and any(
                    is_optimizer_class(a) for a in index.ancestors(resolved)))
        info = ClassInfo(node.name.value, is_module, is_tensor=is_tensor, is_optimizer=is_optimizer)
        facts.classes[node.name.value] = info
        self.stack.append(info)
        # ``self.register_buffer(name, value)`` registers a tensor only as nn.Module's method: not
        # in a class of no base but ``object``, nor one that defines the method itself (a sampler's
        # own ``register_buffer`` that sets any attribute, NumPy arrays included)
        own = {s.name.value for s in node.body.body if isinstance(s, cst.FunctionDef)} \
            if isinstance(node.body, cst.IndentedBlock) else set()
        plain = all((facts.names.qualified(b.value) or dotted_name(b.value)) in ("object", "builtins.object")
                    for b in node.bases)
        self.registers.append(not plain and not own & _REGISTERING_METHODS)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.stack.pop()
        self.registers.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        return bool(self.stack)  # outside a class a simple statement holds nothing collected here

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.stack and node.name.value == "forward" and node.returns is not None:
            returns = self.facts.annotation_kind(node.returns.annotation)
            self.stack[-1].forward_returns_tensor = returns is Kind.TENSOR

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.stack or (isinstance(node.value, cst.Name) and node.value.value == "None"):
            return  # ``self.model = None``: a placeholder says nothing of the attribute's kind
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                value = node.value
                self._record(t.attr.value, self.facts.kind(value))
                if _converts_itself(value, f"self.{t.attr.value}"):
                    # ``self.ids = torch.tensor(self.ids)``: what the field becomes, not what it held
                    self._record(t.attr.value, Kind.UNKNOWN)
                if self.stack[-1].is_module and isinstance(node.value, cst.Call) \
                        and self.facts.names.qualified(node.value.func) in catalog.TENSOR_CLASSES:
                    self.stack[-1].pinned.add(t.attr.value)  # ``self.w = nn.Parameter(...)``

    def visit_Expr(self, statement: cst.Expr) -> None:
        # self.register_buffer("name", tensor) / self.register_parameter("name", param),
        # a statement of its own (a literal name is what makes it an attribute here)
        node = statement.value
        if not isinstance(node, cst.Call):
            return
        func = node.func
        if (self.stack and self.registers[-1] and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value == "self"
                and func.attr.value in _REGISTERING_METHODS
                and node.args and isinstance(node.args[0].value, cst.SimpleString)):
            name = node.args[0].value.evaluated_value
            if isinstance(name, str):
                self.stack[-1].pinned.add(name)

    def _record(self, attr: str, kind: Kind) -> None:
        attributes = self.stack[-1].attributes
        attributes[attr] = join(attributes[attr], kind) if attr in attributes else kind


def _names_of(comp: cst.BaseExpression) -> Optional[str]:
    """The module whose parameter names a comprehension lists (``[n for n, _ in m.named_parameters()]``)."""
    if not isinstance(comp, (cst.ListComp, cst.GeneratorExp)) or comp.for_in.inner_for_in is not None \
            or comp.for_in.ifs or not isinstance(comp.elt, cst.Name):
        return None
    target, iterable = comp.for_in.target, comp.for_in.iter
    source = _named_pairs_source(iterable)
    if source is not None and isinstance(target, cst.Tuple) and target.elements \
            and isinstance(target.elements[0].value, cst.Name) \
            and target.elements[0].value.value == comp.elt.value:
        return source
    source = _parameter_names_source(iterable)
    if source is not None and isinstance(target, cst.Name) and target.value == comp.elt.value:
        return source
    return None


class _ParameterNameBindings(cst.CSTVisitor):
    """How a function binds its names (``parameter_name_variables``), nested scopes left out."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.function = function
        self.lists: Dict[str, Optional[str]] = {}  # list name -> module (None: also bound to other names)
        self.loops: List[Tuple[cst.BaseExpression, cst.BaseExpression]] = []  # (target, iterable)
        self.other: set = set()  # names bound some other way
        self.dict_keys: Dict[str, List[cst.BaseExpression]] = {}  # dict name -> the keys it is indexed by

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.function

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Name):
                source = _names_of(node.value)
                if source is not None and self.lists.get(target.value, source) == source:
                    self.lists[target.value] = source
                elif not (isinstance(node.value, cst.Dict) and not node.value.elements):  # ``d = {}``
                    self.other.add(target.value)
            elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) \
                    and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
                self.dict_keys.setdefault(target.value.value, []).append(target.slice[0].slice.value)
            else:
                self.other.update(target_names(target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.other.update(target_names(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.other.update(target_names(node.target))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.other.update(target_names(node.target))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.other.update(target_names(node.asname.name))

    def visit_For(self, node: cst.For) -> None:
        self.loops.append((node.target, node.iter))

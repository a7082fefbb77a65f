"""The alias interpreter's bookkeeping (``aliases.py``): the storage each name refers to, the
origins that derive one value from another, what each name holds (binding, rebinding, items and
attributes below it), the writes (``Mutation``) and the stale reads they cause, and what escapes
the scope at a return.
"""

from __future__ import annotations

import functools
from typing import Iterable, Optional, Sequence, Set

import libcst as cst

from ..knowledge import catalog
from .alias_calls import surely_tensor
from .alias_model import EMPTY, HANDLES, Mutation, Origin, Relation, StaleRead, Storage, tensor_object
from .copies import Indexing, multi_dimensional
from .tensors import Kind
from ..knowledge.torch_facts import (is_view_attribute, is_view_method, may_alias_conversion, may_return_receiver,
                                     writes_own_metadata, writes_receiver)
from .torchnames import dotted_name
from ..walk import walk


class NameState:
    """What names hold and what writes change (a part of ``AliasAnalysis``: it uses the
    interpreter's ``state``, ``_kind`` and the receivers' tests ``_is_optimizer``)."""

    # what the scope's indexes give (a 0-d tensor index: a view), and its certain copies
    # (``self._kinds.kind``, not the bound ``self._kind``: that would make a cycle through the nodes)
    indexing = functools.cached_property(lambda self: Indexing(self.scope, self.names, self._kinds.kind))

    def _storage(self, key: str) -> Storage:
        storage = self._storages.get(key)
        if storage is None:
            head, dot, _ = key.rpartition(".")
            storage = Storage(key, self._storage(head) if dot else None)
            self._storages[key] = storage
        return storage

    def _enter_function(self, node: cst.FunctionDef) -> None:
        params = node.params
        if self.self_name is None and params.params and params.params[0].name.value == "self":
            self.self_name = "self"
        positional = [*params.posonly_params, *params.params]
        if node.name.value == "__getitem__" and len(positional) == 2 and positional[1].annotation is None:
            self._int_names = frozenset({positional[1].name.value})
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            name = param.name.value
            self.params.append(name)
            entry = self._entry(name)
            self.state[name] = {entry: EMPTY}
            self.state["^" + name] = {entry: EMPTY}  # what the caller holds, even after rebinding

    def _entry(self, key: str) -> Origin:
        cache = ("entry", key)
        origin = self._origins.get(cache)
        if origin is None:
            origin = Origin(Relation.ENTRY, None, None, None, self._storage(key), None, key)
            self._origins[cache] = origin
        return origin

    def _fresh(self, node: cst.CSTNode, key: str) -> Origin:
        cache = (id(node), "fresh", key)
        origin = self._origins.get(cache)
        if origin is None:
            storage = Storage(f"{key}@{id(node)}")
            origin = Origin(Relation.FRESH, None, node, self._statement, storage, None, key)
            self._origins[cache] = origin
        return origin

    def _derive(self, parents: Iterable[Origin], relation: Relation, op: Optional[str],
                node: cst.CSTNode, storage: Optional[Storage] = None, source: Optional[str] = None) -> Set[Origin]:
        out = set()
        for parent in parents:
            cache = (id(node), id(parent), relation)
            origin = self._origins.get(cache)
            if origin is None:
                origin = Origin(relation, op, node, self._statement, storage or parent.storage, parent,
                                source or parent.source)
                self._origins[cache] = origin
            out.add(origin)
        return out

    def _module_state(self, receiver: cst.BaseExpression, node: cst.CSTNode, relation: Relation,
                      op: str) -> Set[Origin]:
        """``model.state_dict()`` / ``model.parameters()``: the module's live tensors."""
        key = dotted_name(receiver)
        if key is None:
            return set()
        if not self._is_optimizer(receiver):
            self.model_roots.add(key)
        return self._derive(self._handles(key), relation, op, node)

    def _handles(self, key: str) -> Set[Origin]:
        """What ``key`` refers to now, as the object itself: its parameter or local value."""
        values = self.state.get(key) if self.state is not None else None
        if not values:
            head = key.rpartition(".")[0]
            made = self.state.get(head) if head and self.state is not None else None
            if made and all(o.relation is Relation.FRESH for o in made):
                # ``model = make_model()``: ``model.module`` is a member of the new object now
                return {self._member(o, key) for o in made}
            return {self._entry(key)}
        handles = {o for o in values if o.relation in (Relation.ENTRY, Relation.FRESH)}
        return handles or set(values)

    def _member(self, owner: Origin, key: str) -> Origin:
        """``key`` below an object made in this scope: its own storage under the object's, made
        when the object was (``_update_state`` orders it against an optimizer's binding)."""
        cache = (id(owner), "member", key)
        origin = self._origins.get(cache)
        if origin is None:
            storage = Storage(f"{key}@{id(owner)}", owner.storage)
            origin = Origin(Relation.FRESH, None, owner.node, owner.statement, storage, None, key)
            origin.serial = owner.serial
            self._origins[cache] = origin
        return origin

    def _read_key(self, key: str, node: cst.CSTNode) -> Set[Origin]:
        state = self.state
        if state is None:
            return set()
        values = state.get(key)
        if values is None:
            return {self._entry(key)}
        for origin, stale in values.items():
            for mutation in stale:
                self._record_stale(node, key, origin, mutation, escape=False)
        origins = set(values)
        if any(o.relation not in HANDLES for o in origins):
            self._reads.setdefault(id(node), set()).update(origins)
        return origins

    def _record_stale(self, node: cst.CSTNode, key: str, origin: Origin, mutation: Mutation, escape: bool) -> None:
        reads = self._stale.setdefault(id(mutation), {})
        dedupe = (id(node), id(origin))
        if dedupe in reads:
            return
        read = StaleRead(node, key, origin, mutation, escape)
        self._guards[id(read)] = self._guard
        reads[dedupe] = read
        for o in origin.chain():
            self._stale_by_origin.setdefault(id(o), []).append(read)

    def _bind(self, key: str, origins: Set[Origin]) -> None:
        if self.state is None:
            return
        if self._loops:
            for origin in origins:
                if origin.relation is Relation.FRESH:
                    self._rebirth(origin.storage, key)
        self.state[key] = {o: EMPTY for o in origins}
        self._note_parents(key)
        for origin in origins:  # the source must be in the state to go stale when written through us
            root = origin.root
            if root.relation is Relation.ENTRY and root.source not in self.state:
                self.state[root.source] = {root: EMPTY}
                self._note_parents(root.source)

    def _note_parents(self, key: str) -> None:
        while "." in key:
            key = key.rpartition(".")[0]
            self._parents.add(key)

    def _assign(self, target: cst.BaseExpression, origins: Set[Origin], value: Optional[cst.CSTNode]) -> None:
        """Bind ``target`` to a value with ``origins`` (made by ``value``)."""
        key = dotted_name(target) if target.__class__ in (cst.Name, cst.Attribute) else None
        if key is not None:
            self._note_instance(key, value)
            if value.__class__ in (cst.Name, cst.Attribute) and origins \
                    and all(o.node is not value for o in origins):
                origins = self._derive(origins, Relation.PLAIN, "alias", value)
            if not origins:
                origins = {self._fresh(value if value is not None else target, key)}
            self._bind(key, origins)
            self._forget_below(key)
            self._keep_keywords(key, value)
        elif target.__class__ in (cst.Tuple, cst.List):
            kept = {o for o in origins if o.relation not in HANDLES}
            for element in target.elements:
                self._assign(element.value, kept, None)
        elif target.__class__ is cst.StarredElement:
            self._assign(target.value, origins, None)
        elif target.__class__ is cst.Subscript:
            self._store_item(target, origins, value)
        elif target.__class__ is cst.Attribute:
            self._eval(target.value)

    def _keep_keywords(self, key: str, value: Optional[cst.CSTNode]) -> None:
        """``rec = Record(orig=batch.rew)``: a record-like class (not torch's or numpy's) called with
        a name as a keyword argument keeps it as the attribute of that name, as dataclasses,
        namedtuples and ``SimpleNamespace`` do; ``op`` "keyword" says the code does not show it."""
        if value.__class__ is not cst.Call or self.state is None:
            return
        callee = dotted_name(value.func) or ""
        q = self.names.qualified(value.func) or callee
        if not callee.rpartition(".")[2][:1].isupper() or q.split(".", 1)[0] in ("torch", "numpy"):
            return
        for arg in value.args:
            source = dotted_name(arg.value) if arg.keyword is not None else None
            if source is None or source.split(".", 1)[0] in self.names.bindings:
                continue
            held = set(self.state[source]) if source in self.state else {self._entry(source)}
            self._bind(f"{key}.{arg.keyword.value}", self._derive(held, Relation.PLAIN, "keyword", arg.value))

    def _rebirth(self, storage: Storage, key: str) -> None:
        """An allocation runs again in a loop: what other names kept from the previous iteration
        is another object now, which writes to the new one do not reach."""
        state = self.state
        for k, values in list(state.items()):
            if k == key:
                continue
            for o in values:  # a loop, not ``any(...)``: no generator per name of the state
                if o.storage is storage:
                    state[k] = {(self._previous(o) if o.storage is storage else o): stale
                                for o, stale in values.items()}
                    break

    def _previous(self, origin: Origin) -> Origin:
        cache = (id(origin), "previous")
        clone = self._origins.get(cache)
        if clone is None:
            storage = self._storages.get(origin.storage.key + "'")
            if storage is None:
                storage = self._storages[origin.storage.key + "'"] = Storage(origin.storage.key + "'")
            clone = Origin(origin.relation, origin.op, origin.node, origin.statement, storage, origin.parent,
                           origin.source)
            self._origins[cache] = clone
        return clone

    def _forget_below(self, key: str) -> None:
        """Rebinding ``self.x`` ends what ``self.x.y`` held."""
        if self.state is None or key not in self._parents:
            return  # nothing below it was ever bound: no walk over the state (a module of many names)
        prefix = key + "."
        for k in [k for k in self.state if k.startswith(prefix)]:
            del self.state[k]

    def _store_item(self, target: cst.Subscript, origins: Set[Origin], value: Optional[cst.CSTNode]) -> None:
        base_kind = self._kind(target.value)
        base = self._eval(target.value)
        self.item_targets.add(id(target.value))
        self._eval_slice(target.slice)
        if base_kind in (Kind.TENSOR, Kind.NDARRAY) or (base_kind is Kind.UNKNOWN and (
                surely_tensor(base) or multi_dimensional(target))):
            self._mutate(target.value, self._statement, "__setitem__", base)
            return
        key = dotted_name(target.value)
        entry = _entry_key(target)
        if key is not None and entry is not None and origins:
            self._entries.setdefault((key, entry), set()).update(origins)
        # ``best["model"] = model.state_dict()``: the container now holds the alias too.
        if key is not None and self.state is not None and key in self.state and origins:
            merged = dict(self.state[key])
            for origin in origins:
                merged.setdefault(origin, EMPTY)
            self.state[key] = merged

    def _other_entries(self, target: cst.Subscript) -> Set[Origin]:
        """What the scope stored in ``d`` under keys other than ``d["key"]``'s, and never under it:
        ``state["exp_avg"]`` does not hold what ``state["fp32_p"] = p.data.float()`` stored."""
        entry = _entry_key(target)
        key = dotted_name(target.value) if entry is not None else None
        if key is None:
            return set()
        mine = self._entries.get((key, entry), set())
        return {o for (k, e), stored in self._entries.items() if k == key and e != entry for o in stored} - mine

    def _entry_origins(self, target: cst.BaseExpression, origins: Set[Origin]) -> Set[Origin]:
        """What ``d["key"]`` may hold: what the scope stored under that key, not every value of
        the container (``state["step"] += 1`` beside ``state["buf"] = x.detach()`` adds to an int)."""
        entry = _entry_key(target) if isinstance(target, cst.Subscript) else None
        key = dotted_name(target.value) if entry is not None else None  # type: ignore[attr-defined]
        if key is None or self._kind(target.value) in (Kind.TENSOR, Kind.NDARRAY):  # type: ignore[attr-defined]
            return origins
        return origins & self._entries.get((key, entry), set())

    def _mutate(self, target: cst.BaseExpression, node: cst.CSTNode, op: str,
                origins: Optional[Set[Origin]] = None) -> None:
        if origins is None:
            origins = self._eval(target)
        key = dotted_name(strip_aliases(target))
        head = key.split(".", 1)[0] if key is not None else None
        if head in self.names.bindings and (self.state is None or head not in self.state):
            key = None  # ``torch.from_numpy(a)`` strips to ``torch``: a module, never the written tensor
        mutation = self._mutation(node, op, "inplace", target, key)
        mutation.origins |= origins
        self._apply(mutation, origins, key)

    def _mutation(self, node: cst.CSTNode, op: str, kind: str, target: Optional[cst.BaseExpression],
                  key: Optional[str]) -> Mutation:
        mutation = self._mutations.get(id(node))
        if mutation is None:
            mutation = Mutation(node, self._statement or node, op, kind, target, key,
                                metadata=kind == "inplace" and writes_own_metadata(op))
            self._mutations[id(node)] = mutation
        return mutation

    def _apply(self, mutation: Mutation, written: Set[Origin], key: Optional[str]) -> None:
        """Mark stale every other alias of the written storage."""
        state = self.state
        if state is None or not written:
            return
        for k, values in list(state.items()):
            if k == key:
                continue
            changed = None
            for origin, stale in values.items():
                if mutation in stale or not self._reaches(origin, written, mutation):
                    continue
                if changed is None:
                    changed = dict(values)
                changed[origin] = stale | {mutation}
            if changed is not None:
                state[k] = changed

    @staticmethod
    def _reaches(origin: Origin, written: Set[Origin], mutation: Mutation) -> bool:
        for w in written:
            if origin is w:
                continue
            if not mutation.reaches(origin, w) and not (tensor_object(w) is w and origin.find(Relation.SNAPSHOT)):
                continue  # ``v = x.view(-1); v.t_()``: only ``v`` changes shape (a snapshot holds the object)
            if origin.storage is w.storage:
                if origin.relation in HANDLES and (w.relation in HANDLES or w.find(Relation.PARAMS)):
                    continue  # the same thing written through itself; a module is not its parameters
                return True
            if origin.storage.is_ancestor_of(w.storage):
                if origin.find(Relation.SNAPSHOT) is not None:
                    return True  # a state_dict() covers every tensor of the module
            elif w.storage.is_ancestor_of(origin.storage):
                if origin.relation not in HANDLES:
                    return True  # a snapshot of one parameter, updated with the whole module
        return False

    def _update_state(self, node: cst.Call, keys: Iterable[str], op: str, born: Optional[int] = None,
                      optimizer: Optional[str] = None, reach: Optional[Set[str]] = None) -> None:
        """``born``: the creation order of the stepped ``optimizer``, when it is not known which modules
        it updates: it cannot update a module made after it (``model = make_model()`` after it).
        ``reach``: the names the stepping code was handed (``_reached``), None when it may reach any."""
        mutation = self._mutation(node, op, "update", None, None)
        written = {o for k in keys for o in self._handles(k)
                   if (born is None or k == optimizer or o.relation is not Relation.FRESH or o.serial < born)
                   and (reach is None or k == optimizer or self._reached(o, reach))}
        mutation.origins |= written
        self._apply(mutation, written, None)

    def _optimizer_step(self, node: cst.Call, optimizer: Optional[cst.BaseExpression],
                        handed: Optional[Sequence[cst.CSTNode]] = None) -> None:
        """``handed``: what the stepping call was given (its arguments, receiver), when it steps an
        optimizer that is not known (a project function's, or one handed to it)."""
        keys: Set[str] = set()
        opt_key = dotted_name(optimizer) if optimizer is not None else None
        born = None
        made = [o for o in (self.state or {}).get(opt_key, ()) if o.relation is Relation.FRESH] if opt_key else []
        if opt_key is not None:
            keys.add(opt_key)
            linked = self.optimizer_links.get(opt_key)
            keys |= linked if linked else set(self.model_roots)
            if not linked:  # an optimizer of the caller's (or made here before): not of a module made later
                born = min(o.serial for o in made) if made else -1
        else:
            keys |= set(self.model_roots)
        if not keys:
            return
        reach = None
        if (handed is not None or made) and (opt_key is None or not self.optimizer_links.get(opt_key)):
            # which modules it updates is not known: of those made here, the ones it was handed, or
            # that the call making its optimizer was handed or made (``m2, opt2 = make()``: not ``m1``)
            reach = self._names_handed([*(handed or ()), *(o.statement for o in made)])
        self._update_state(node, keys, "step", born, opt_key, reach)

    def _names_handed(self, nodes: Sequence[Optional[cst.CSTNode]]) -> Optional[Set[str]]:
        """The names in ``nodes`` (a call's arguments and receiver, the statement that made an
        optimizer) and, through the function's bindings, the names they were made from
        (``params = filter(..., model.parameters())`` hands ``model``); None at module level, where
        any function reads the module's names."""
        if not isinstance(self.scope, cst.FunctionDef) or any(n is None for n in nodes):
            return None
        finder = _Names()
        for n in nodes:
            walk(n, finder)
        bindings = self._bindings
        reach, todo = set(finder.names), list(finder.names)
        while todo:
            for name in bindings.get(todo.pop(), ()):
                if name not in reach:
                    reach.add(name)
                    todo.append(name)
        return reach

    @functools.cached_property
    def _bindings(self):
        """Each name of the function: the names read where it is bound."""
        finder = _Bindings()
        walk(self.scope.body, finder)
        return finder.made_from

    def _reached(self, handle: Origin, reach: Set[str]) -> bool:
        """Whether stepping code handed the names ``reach`` can update the module ``handle``: one
        made in this function (``m1 = make()``) only when a handed name holds it, a member or owner
        of it, or its parameters; a ``state_dict()`` of it is not the module (loading copies it in)."""
        if handle.relation is not Relation.FRESH:
            return True  # the caller's, or a global: reachable from anywhere
        storage = handle.storage
        for key, values in (self.state or {}).items():
            if key.lstrip("^").partition(".")[0] not in reach:
                continue
            for o in values:
                if (o.storage is storage or o.storage.is_ancestor_of(storage) or storage.is_ancestor_of(o.storage)) \
                        and o.find(Relation.SNAPSHOT) is None:
                    return True
        return False

    def _escape(self, node: cst.CSTNode) -> None:
        """Parameters and ``self`` attributes outlive the function: a last read at every exit."""
        state = self.state
        if state is None or not isinstance(self.scope, cst.FunctionDef):
            return
        prefix = (self.self_name + ".") if self.self_name else None
        for key, values in state.items():
            if not (key.startswith("^") or (prefix is not None and key.startswith(prefix)) or kept_by_caller(key, self.params)):
                continue
            for origin, stale in values.items():
                for mutation in stale:
                    self._record_stale(node, key.lstrip("^"), origin, mutation, escape=True)


def kept_by_caller(key: str, params) -> bool:
    """``batch.policy.orig_rew`` of a parameter ``batch``: the caller holds it, and its name says it
    keeps a value as it was, to be read later."""
    head, _, rest = key.partition(".")
    return bool(rest) and head in params and bool(
        set(key.rpartition(".")[2].lower().split("_")) & catalog.KEPT_AS_COPY_WORDS)


def strip_aliases(node: cst.BaseExpression) -> cst.BaseExpression:
    """``x.detach().cpu()[0]`` -> ``x``: the name a write through an alias chain starts from."""
    while True:
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Attribute) and (is_view_attribute(node.attr.value)
                                                  or node.attr.value in catalog.UNTRACKED_ALIAS_ATTRIBUTES):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
                is_view_method(node.func.attr.value) or may_return_receiver(node.func.attr.value)
                or may_alias_conversion(node.func.attr.value) or writes_receiver(node.func.attr.value)):
            node = node.func.value
        else:
            return node


def _entry_key(target: cst.Subscript) -> Optional[str]:
    """The string literal of ``d["key"]`` (a mapping's entry, never a tensor's index), else None."""
    if len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index) \
            and isinstance(target.slice[0].slice.value, cst.SimpleString):
        return target.slice[0].slice.value.value
    return None


class _Names(cst.CSTVisitor):
    """The names read in an expression or statement (its targets included: ``m, opt = make()``);
    not those of a ``state_dict()``: handing the values over is not handing the module (loading
    them copies them in)."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)  # ``a.fit``: the name ``a``, not ``fit``
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        return not (node.func.__class__ is cst.Attribute and node.func.attr.value in catalog.STATE_SNAPSHOT_METHODS)


class _Bindings(cst.CSTVisitor):
    """A function's names, each with the names read where it is bound (assignments, loop targets,
    ``with ... as``; ``decay.append(p)`` binds ``decay`` to ``p`` too), nested scopes left out."""

    def __init__(self) -> None:
        self.made_from: dict = {}

    def _bind(self, targets: Iterable[cst.CSTNode], value: Optional[cst.CSTNode]) -> None:
        if value is None:
            return
        read, bound = _Names(), _Names()
        walk(value, read)
        for target in targets:
            walk(target, bound)
        for name in bound.names:
            self.made_from.setdefault(name, set()).update(read.names)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._bind([t.target for t in node.targets], node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind([node.target], node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind([node.target], node.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind([node.target], node.value)

    def visit_For(self, node: cst.For) -> None:
        self._bind([node.target], node.iter)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind([node.asname.name], node.item)

    def visit_Call(self, node: cst.Call) -> None:
        if node.func.__class__ is cst.Attribute and node.func.value.__class__ is cst.Name \
                and node.func.attr.value in ("append", "extend", "add", "update", "insert"):
            self._bind([node.func.value], cst.Tuple([cst.Element(a.value) for a in node.args]))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    visit_ClassDef = visit_Lambda = visit_FunctionDef  # type: ignore[assignment]

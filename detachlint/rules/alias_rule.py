"""What the alias rules (TAL201, TAL301, TAL401) share: the scope's alias analysis, where writes
happen, and how a finding's pattern signature and wording are made."""

from __future__ import annotations

import ast

from typing import Any, Callable, List, Optional, Sequence, Set

import libcst as cst

from ..knowledge import catalog
from ..analysis.alias_model import HANDLES, Mutation, Origin, Relation, StaleRead
from ..analysis.alias_state import strip_aliases
from ..analysis.aliases import AliasAnalysis
from ..analysis.order import ScopeOrder
from ..analysis.tensors import Kind, TensorFacts
from ..knowledge.torch_facts import is_view_attribute, is_view_method, writes_first_argument, writes_receiver
from ..analysis.torchnames import TorchNames, dotted_name, target_names
from ..signature import Side, Signature, Source
from .base import Rule
from ..walk import walk


# What an augmented or item assignment may write in place (``AliasAnalysis._augassign``, ``_store_item``)
_WRITABLE = (Kind.TENSOR, Kind.NDARRAY, Kind.UNKNOWN)


def _writes_keyword(node: cst.Call) -> bool:
    """``out=`` or ``inplace=`` among the arguments (a loop: every call, for each alias rule)."""
    for a in node.args:
        if a.keyword is not None and a.keyword.value in ("out", "inplace"):
            return True
    return False


class AliasRule(Rule):
    """Shared plumbing: find the write (or snapshot) at a node, describe origins and reads."""

    requires = (TensorFacts, TorchNames, ScopeOrder, AliasAnalysis)

    def _analysis(self) -> Optional[AliasAnalysis]:
        return self.analysis(AliasAnalysis)

    def _mutation_at(self, node: cst.CSTNode) -> Optional[Mutation]:
        analysis = self._analysis()
        if analysis is None:
            return None
        mutation = analysis.mutation(node)
        return mutation if mutation is not None and mutation.kind == "inplace" else None

    # visit hooks: the nodes a write can be recorded at (cheap syntactic filters first; what costs a
    # look-up is decided once per node for all the alias rules, ``Context.memo``)
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if func.__class__ is cst.Attribute and writes_receiver(func.attr.value):
            self._check_write(node)
        elif _writes_keyword(node):
            self._check_write(node)
        elif node.args and func.__class__ in (cst.Name, cst.Attribute) and self._site(node, self._write_call):
            self._check_write(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self._site(node, self._write_augassign):
            self._check_write(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        # An item assignment is a write only into a tensor or an array (``AliasAnalysis._store_item``):
        # ``d[k] = v`` into a dict, a list or a module builds no alias analysis of the scope
        if any(t.target.__class__ is cst.Subscript for t in node.targets) and self._site(node, self._write_item):
            self._check_write(node)

    def _site(self, node: cst.CSTNode, decide: Callable[[Any], bool]) -> bool:
        key = (decide.__name__, id(node))
        site = self.ctx.memo.get(key)
        if site is None:
            site = self.ctx.memo[key] = decide(node)
        return bool(site)

    def _write_call(self, node: cst.Call) -> bool:
        """A torch function that writes its argument, a module held by ``self`` that does, or a
        function of the project that writes one in place (here or imported)."""
        func = node.func
        if func.__class__ is cst.Name and writes_first_argument(self.analysis(TorchNames).qualified(func)):
            return True
        # ``self.act(x)``, ``nn.ReLU(inplace=True)``: only an attribute (``held_module`` says None to
        # the rest), asked without the facts' look-up for every other call
        held = self.analysis(TensorFacts).held_module(func) if func.__class__ is cst.Attribute else None
        if held is not None and held.writes_input:
            return True
        return self.ctx.project is not None \
            and (func.attr if func.__class__ is cst.Attribute else func).value in self.ctx.project.index.writing_names

    def _write_augassign(self, node: cst.AugAssign) -> bool:
        return self.analysis(TensorFacts).kind(node.target) in _WRITABLE \
            and not isinstance(node.value, (cst.SimpleString, cst.FormattedString))

    def _write_item(self, node: cst.Assign) -> bool:
        return any(t.target.__class__ is cst.Subscript and self.analysis(TensorFacts).kind(t.target.value) in _WRITABLE
                   for t in node.targets)  # the kind asked only of an item assignment, not of every assignment

    def _check_write(self, node: cst.CSTNode) -> None:
        pass

    # descriptions
    def _text(self, node: Optional[cst.CSTNode], limit: int = 60) -> str:
        if node is None:
            return ""
        text = " ".join(self.ctx.code_for(node).split())
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def _made(self, origin: Origin) -> cst.CSTNode:
        """The node that shows where an alias was made: its statement, else its expression."""
        return origin.statement or origin.node or self.ctx.scope

    def _pending(self, node: cst.CSTNode) -> Optional[cst.Call]:
        order = self.analysis(ScopeOrder)
        return order.pending_backward(node)

    def _seeing_reads(self, mutation: Mutation, analysis: AliasAnalysis) -> List[StaleRead]:
        """The stale reads of ``mutation`` that see a changed value, on a path through the alias,
        the write and the read. Not a name whose every value is replaced (``p.copy_(...)``, ``.fill_``, ``.zero_``), nor one the written alias is copied
        back into: ``p_fp32 = p.float(); p_fp32.add_(u); p.copy_(p_fp32)`` means the write for ``p``
        (optimizer code keeping an fp32 working copy, the same memory when ``p`` is fp32)."""
        # a name written whole or in part reads nothing there: ``p.copy_(...)``, ``.fill_``,
        # ``.zero_``, ``torch.mul(a, b, out=p)``, ``p[i] = v``
        overwritten = {id(m.target) for m in analysis.mutations()
                       if m.op in catalog.OVERWRITING_METHODS or m.op.endswith("(out=)")} | analysis.item_targets
        copied_back = self._copied_back(mutation, analysis)
        # ``dst.copy_(src)`` writes src's own values: what is read through src is unchanged
        source = set()
        if mutation.op == "copy_" and isinstance(mutation.node, cst.Call) and mutation.node.args:
            source = analysis.origins_at(mutation.node.args[0].value)
        # a read under ``if flag:`` never sees a write under ``if not flag:``, nor a write or an
        # alias made under the opposite condition
        return [r for r in analysis.stale_reads(mutation) if id(r.node) not in overwritten and r.key not in copied_back
                and not analysis.exclusive(mutation.statement, r)
                and not any(analysis.exclusive(mutation.statement, o) or analysis.exclusive(o, r)
                            or o.statement is not None and (analysis.exclusive(mutation.statement, o.statement)
                                                            or analysis.exclusive(o.statement, r))
                            for o in r.origin.chain())
                and not any(o in source for o in r.origin.chain())
                and not self._carried_over(mutation, r, analysis)
                and not self._read_ahead(mutation, r, analysis)
                and not self._last_iteration(mutation, r, analysis)
                and not _chosen_elsewhere(mutation, r, analysis)
                and not self._key_lookup(r, analysis)]

    def _carried_over(self, mutation: Mutation, read: StaleRead, analysis: AliasAnalysis) -> bool:
        """The read sees the write only through the loop's back edge (the alias was made after the
        write in the loop body) while the name the alias was made from is bound anew in the loop:
        the next iteration's write may hit another object (``a, b = b, new``), which the analysis
        does not tell apart from the last one, so there is no evidence of a shared write. The loop
        is the innermost one around the write that holds the alias too: a swap after an inner loop
        (``for j: outs[j] = f(inps[j])`` then ``inps, outs = outs, inps``) hands over by the outer one."""
        loops = [p for p in reversed(self.ctx.parents) if p.__class__ in (cst.For, cst.While)]
        if not loops:
            return False
        order = self.analysis(ScopeOrder)
        written_at = order.position(mutation.statement)
        for o in read.origin.chain():
            if o.statement is None or o.relation in HANDLES or order.position(o.statement) <= written_at:
                continue
            operand = dotted_name(strip_aliases(o.node)) if o.node is not None else None  # ``bip``, ``x`` of ``x[0]``
            loop = next((p for p in loops if self._inside(o.statement, p)), None)
            if operand is not None and loop is not None and operand in analysis.bound_in(loop):
                return True
        return False

    def _inside(self, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
        span, place = self.ctx.position(outer), self.ctx.position(node)
        return (span.start.line, span.start.column) <= (place.start.line, place.start.column) \
            and (place.end.line, place.end.column) <= (span.end.line, span.end.column)

    def _read_ahead(self, mutation: Mutation, read: StaleRead, analysis: AliasAnalysis) -> bool:
        """``for j in range(n): a, b = points[j], points[j + 1]; racines[j] = f(a, b)``: each
        iteration reads only elements at or past the one it writes, before writing it, so no
        read sees an earlier iteration's write (an ascending ``range`` or ``enumerate`` loop, first
        indices ``j + c`` read with ``c`` at least the written ``j + w``'s ``w``). The element
        written may be a view's: ``img = imgs[j, ...]; img.mul_(s)`` writes row ``j`` only. Not
        when the index is bound in the body, a loop inside that one holds the read (it reads the
        row again), or a loop around it does not bind the name read anew (its next pass would)."""
        loops = self._scope_loops()
        order = self.analysis(ScopeOrder)
        for at, loop in enumerate(loops):
            index = _ascending_index(loop)
            if index is None or not isinstance(loop, cst.For) or index in analysis.bound_in(loop.body):
                continue
            offsets = self._written_offsets(mutation, read, index, loop, analysis)
            if not offsets or None in offsets:
                continue
            subscripts = _Subscripts(read.node)
            walk(loop.body, subscripts)
            if subscripts.found is None or not 0 <= order.position(subscripts.found) < order.position(mutation.node) \
                    or any(self._inside(read.node, inner) for inner in loops[:at]) \
                    or any(read.key not in analysis.bound_in(outer) for outer in loops[at + 1:]):
                return False
            ahead = _offset(subscripts.found.slice[0].slice, index)
            return ahead is not None and ahead >= max(offsets)
        return False

    def _written_offsets(self, mutation: Mutation, read: StaleRead, index: str,
                         loop: cst.For, analysis: AliasAnalysis) -> List[Optional[int]]:
        """The ``w`` of each first index ``index + w`` that the write reaches the read's value at:
        of ``racines[j] = ...``'s targets, or of the row ``imgs[j, ...]`` the written name is."""
        statement = mutation.statement
        if mutation.op == "__setitem__":
            if not isinstance(statement, (cst.Assign, cst.AugAssign)):
                return []
            targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
            return [_offset(t.slice[0].slice, index) for t in targets if isinstance(t, cst.Subscript)]
        written = strip_aliases(mutation.target) if mutation.target is not None else None
        return self._rows(written.value, read, index, loop, analysis) if isinstance(written, cst.Name) else []

    def _rows(self, name: str, read: StaleRead, index: str, loop: cst.For, analysis: AliasAnalysis,
              depth: int = 0) -> List[Optional[int]]:
        """The ``w`` of the rows ``X[index + w, ...]`` that ``name`` is made from, where every
        binding of ``name`` in the scope is in the loop's body and is such a row (``X`` holding the
        value read, or one made from it without a change of shape), or an element of one
        (``for t in img``, ``zip(img, ...)``): a part of that row. Empty when one is something else."""
        if depth > 3:
            return []
        sites = _RowBindings(name)
        walk(loop.body, sites)
        if not sites.found or len(sites.found) != analysis.bindings_in(analysis.scope).get(name):
            return []
        rows: List[Optional[int]] = []
        for site in sites.found:
            if isinstance(site, cst.Subscript):
                base = analysis.origins_at(site.value)
                shaped = base and all(read.origin in o.chain() and all(
                    p.relation in _SAME_SHAPE for p in o.chain()[o.chain().index(read.origin) + 1:]) for o in base)
                rows.append(_offset(site.slice[0].slice, index) if shaped else None)
            elif isinstance(site, cst.Name):
                rows.extend(self._rows(site.value, read, index, loop, analysis, depth + 1) or [None])
            else:
                rows.append(None)
        return rows

    def _scope_loops(self) -> List[cst.CSTNode]:
        """The loops around the node being visited in this scope, innermost first."""
        loops: List[cst.CSTNode] = []
        for parent in reversed(self.ctx.parents):
            if isinstance(parent, (cst.FunctionDef, cst.Lambda)):
                break
            if isinstance(parent, (cst.For, cst.While)):
                loops.append(parent)
        return loops

    def _last_iteration(self, mutation: Mutation, read: StaleRead, analysis: AliasAnalysis) -> bool:
        """``for step in range(n)[::-1]: x = model(cur); cur = x; if step == 0: x *= s``: the
        write runs only on the loop's last iteration (its index equals the range's last value),
        so a read of the body that comes before it, which sees it only on a next iteration,
        never does. Only for a loop in no other loop of the scope (else the body runs again)."""
        loops = self._scope_loops()
        loop = loops[0] if len(loops) == 1 else None
        if read.escape or not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name):
            return False
        last = _last_value(loop.iter)
        index = loop.target.value
        if last is None or (f"{index} == {last}", True) not in analysis.conditions_of(mutation.statement) \
                or index in analysis.bound_in(loop.body):
            return False
        order = self.analysis(ScopeOrder)
        return order.position(loop) < order.position(read.node) < order.position(mutation.node)

    def _key_lookup(self, read: StaleRead, analysis: AliasAnalysis) -> bool:
        """No value of the name is read there: ``self.state[param]`` or ``cache[t]`` (a tensor used
        whole as a container's key is looked up by identity), or ``buf = param.detach().view(-1)``
        (a new name for the live tensor, made after the write: what it reads later is current)."""
        keys = self.ctx.memo.get(("no_value_reads", id(analysis.scope)))
        if keys is None:
            finder = _NoValueReads(analysis)
            walk(analysis.scope, finder)
            keys = self.ctx.memo[("no_value_reads", id(analysis.scope))] = finder.keys
        return id(read.node) in keys

    def _copied_back(self, mutation: Mutation, analysis: AliasAnalysis) -> Set[str]:
        """The names that the written alias is copied back into: later (``p.copy_(p_fp32)``), or
        by the statement that writes it (``x.copy_(x.cpu().normal_())``, ``x.data = x.cpu().mul_(2)``,
        ``x[:] = ...``), whose name then ends with the written values whether or not it shared them."""
        names = set()
        if mutation.key is not None:
            names = {m.key for m in analysis.mutations() if m.op == "copy_" and m.key is not None
                     and isinstance(m.node, cst.Call) and m.node.args
                     and dotted_name(m.node.args[0].value) == mutation.key}
        refilled = self._refilled_with(mutation.node)
        if refilled is not None:
            names.add(refilled)
        return names

    def _refilled_with(self, write: cst.CSTNode) -> Optional[str]:
        """The name a write's own result is stored into whole, in the same statement: ``K`` of
        ``K.copy_(<write>)``, ``K.data = <write>``, ``K[:] = <write>`` or ``K[...] = <write>``."""
        parents = self.ctx.parents  # those of the write being visited: ``parent.value is write`` checks it
        if not parents:
            return None
        parent = parents[-1]
        if isinstance(parent, cst.Arg) and len(parents) > 1 and parent.value is write:
            call = parents[-2]
            if isinstance(call, cst.Call) and call.args and call.args[0] is parent \
                    and isinstance(call.func, cst.Attribute) and call.func.attr.value == "copy_":
                return dotted_name(call.func.value)
        if isinstance(parent, cst.Assign) and parent.value is write and len(parent.targets) == 1:
            target = parent.targets[0].target
            if isinstance(target, cst.Attribute) and target.attr.value == "data":
                return dotted_name(target.value)
            if isinstance(target, cst.Subscript) and all(whole_index(e.slice) for e in target.slice):
                return dotted_name(target.value)  # ``x[:]``, ``x[...]``: every element; ``x[0]`` leaves the rest written
        return None

    def _value_use_after(self, mutation: Mutation) -> Optional[cst.CSTNode]:
        """The first use of the written name as a value after ``mutation`` in this scope (passed
        on, returned, computed with), not a further in-place write into it nor a rebinding: what
        shows that the author took the alias for a value of its own, a copy."""
        key = mutation.key
        if key is None or "." in key:
            return None
        order = self.analysis(ScopeOrder)
        after = order.position(mutation.node)
        if after < 0:
            return None
        uses = _NameUses(key)
        walk(self.ctx.scope.body if isinstance(self.ctx.scope, cst.FunctionDef) else self.ctx.scope, uses)
        later = [(order.position(n), n) for n in uses.values if order.position(n) > after]
        rebound = [a for a in order.assignments.get(key, []) if a > after]
        later = [(at, n) for at, n in later if not any(r < at for r in rebound)]
        return min(later, key=lambda p: p[0])[1] if later else None

    def _op_args(self, node: Optional[cst.CSTNode]) -> Optional[str]:
        """An op's arguments as source text for the runtime companion's reproducer, when they are
        all literals (``"0, 0, 2"``, ``"[:, 1:]"`` for a subscript); ``""`` for none; else None."""
        if isinstance(node, cst.Subscript):
            text = "[" + self.ctx.code_for(node).split("[", 1)[-1] if "[" in self.ctx.code_for(node) else ""
            return text if text and all(c in "0123456789:, -.[]" or c.isspace() for c in text.replace("None", "")
                                        .replace("...", "")) else None
        if isinstance(node, cst.AugAssign):
            node = node.value
            return self.ctx.code_for(node) if _literal(self.ctx.code_for(node)) else None
        if not isinstance(node, cst.Call):
            return None
        text = ", ".join(self.ctx.code_for(a).strip().rstrip(",") for a in node.args)
        return text if not node.args or (all(a.keyword is None and a.star == "" for a in node.args)
                                         and _literal(text)) else None

    def _signature(self, ops: List[str], origin: Origin, analysis: AliasAnalysis, pending: bool,
                   mutation: Optional[Mutation] = None, written: Optional[Side] = None) -> Signature:
        root = origin.root
        module_state = any(o.relation in (Relation.PARAMS, Relation.SNAPSHOT) for o in origin.chain()) \
            or root.source.rsplit(".", 1)[-1] in catalog.MODULE_TENSOR_ATTRIBUTES
        dtypes = [catalog.DTYPE_METHODS[op] for op in ops if op in catalog.DTYPE_METHODS]
        source = Source(
            parameter=root.relation is Relation.ENTRY and (
                root.source in analysis.params
                or (analysis.self_name is not None and root.source.startswith(analysis.self_name + "."))),
            module_state=module_state, pending_graph=pending,
            cpu_float="cpu" in ops and any(op in ("float", "numpy") for op in ops),
            leaf=True if module_state else None, dtype=dtypes[-1] if dtypes else None)
        chain = [o for o in origin.chain() if o.op is not None]
        args = None
        if mutation is not None and len(ops) == len(chain) + 1:
            args = tuple(self._op_args(o.node) for o in chain) + (self._op_args(mutation.node),)
        return Signature(self.code, tuple(ops), source=source, args=args, written=written)

    @staticmethod
    def _first(reads: Sequence[StaleRead], rank: Callable[[StaleRead], int] = lambda r: 0) -> Optional[StaleRead]:
        """The read a message names: a read in the code before an escape at the function's end,
        then the lowest ``rank``, then the read of the write the analysis met first (it lists
        the reads of several writes in an order that depends on where objects lie in memory); of
        one write's reads, the first it met, in the order the code runs."""
        return min(reads, key=lambda r: (r.escape, rank(r), r.mutation.serial), default=None)

    def _where(self, read: StaleRead) -> str:
        if read.escape and "." in read.key:
            return f"`{read.key}` keeps it after the method returns"
        if read.escape:  # the caller may have passed a temporary: what it holds afterwards is not shown
            return f"what the caller passed as `{read.key}` changes with it"
        line = self.ctx.cited_line(read.node)
        later = " on the next iteration of the loop" if line <= self.ctx.cited_line(read.mutation.node) else ""
        return f"`{read.key}` is read at line {line}{later}"


# relations that keep a value's shape: an index into the value is one into what it was made from
_SAME_SHAPE = frozenset({Relation.PLAIN, Relation.CONVERSION, Relation.DETACH, Relation.DATA})


class _NameUses(cst.CSTVisitor):
    """Where ``key`` is read as a value: not as the receiver of an in-place method (``w.mul_()``,
    a write), not as a target, not inside nested scopes."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.values: List[cst.Name] = []
        self._skip: Set[int] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    visit_ClassDef = visit_Lambda = visit_FunctionDef  # type: ignore[assignment]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if func.__class__ is cst.Attribute and func.value.__class__ is cst.Name \
                and (func.attr.value in catalog.INPLACE_METHODS or func.attr.value in catalog.METADATA_METHODS):
            self._skip.add(id(func.value))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        return node.target.__class__ is not cst.Name  # ``w[i] = v`` reads ``w``'s storage; ``w = v`` does not

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._skip.add(id(node.target))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.key and id(node) not in self._skip:
            self.values.append(node)


class _NoValueReads(cst.CSTVisitor):
    """The names used whole as the one index of a container that is no tensor (an optimizer's
    ``self.state``, or a base whose kind is known and not a tensor or an array), and the names
    only given a new name through ``.detach()``, ``.data`` or views (``b = a.detach().view(-1)``)."""

    _NOT_INDEXED_BY_VALUE = (Kind.OTHER, Kind.STATE_DICT, Kind.OPTIMIZER, Kind.MODULE, Kind.TENSOR_MODULE)

    def __init__(self, analysis: AliasAnalysis) -> None:
        self.analysis = analysis
        self.keys: Set[int] = set()

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return
        index = node.slice[0].slice.value
        if not isinstance(index, (cst.Name, cst.Attribute)):
            return
        self_name = self.analysis.self_name
        if (self_name is not None and dotted_name(node.value) == f"{self_name}.state") \
                or self.analysis.kind_of(node.value) in self._NOT_INDEXED_BY_VALUE:
            self.keys.add(id(index))

    def visit_Assign(self, node: cst.Assign) -> None:
        value, renamed = node.value, False
        while True:
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and (
                    value.func.attr.value == "detach" or is_view_method(value.func.attr.value)):
                value, renamed = value.func.value, True
            elif isinstance(value, cst.Attribute) and (value.attr.value == "data" or is_view_attribute(value.attr.value)):
                value, renamed = value.value, True
            else:
                break
        if renamed and isinstance(value, (cst.Name, cst.Attribute)):
            self.keys.add(id(value))


class _Subscripts(cst.CSTVisitor):
    """The subscript whose value is the node ``of`` (``points[j + 1]`` of a read of ``points``)."""

    def __init__(self, of: cst.CSTNode) -> None:
        self.of = of
        self.found: Optional[cst.Subscript] = None

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if node.value is self.of:
            self.found = node


class _RowBindings(cst.CSTVisitor):
    """What each binding of ``name`` binds it to: ``img = X[...]`` gives the subscript,
    ``for t in img`` and ``for t, m in zip(img, ...)`` the name iterated, anything else None."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.found: List[Optional[cst.CSTNode]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Name) and t.target.value == self.name:
                self.found.append(node.value if len(node.targets) == 1 and isinstance(node.value, cst.Subscript) else None)
            elif self.name in target_names(t.target):
                self.found.append(None)

    def visit_For(self, node: cst.For) -> None:
        target, iterable = node.target, node.iter
        if isinstance(target, cst.Name) and target.value == self.name:
            self.found.append(iterable if isinstance(iterable, cst.Name) else None)
        elif isinstance(target, cst.Tuple) and isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
                and iterable.func.value == "zip" and len(iterable.args) == len(target.elements):
            for element, arg in zip(target.elements, iterable.args):
                if isinstance(element.value, cst.Name) and element.value.value == self.name:
                    self.found.append(arg.value if isinstance(arg.value, cst.Name) and not arg.star else None)
        elif self.name in target_names(target):
            self.found.append(None)

    def _other(self, node: cst.CSTNode) -> None:
        if self.name in target_names(node.target):  # type: ignore[attr-defined]
            self.found.append(None)

    visit_AugAssign = visit_AnnAssign = visit_CompFor = visit_NamedExpr = _other


def whole_index(index: cst.BaseSlice) -> bool:
    """``:`` or ``...`` in an index: every element along the dimensions it covers."""
    if isinstance(index, cst.Slice):
        return index.lower is None and index.upper is None and index.step is None
    return isinstance(index, cst.Index) and isinstance(index.value, cst.Ellipsis)


def _ascending_range(iterable: cst.BaseExpression) -> bool:
    """``range(n)``, ``range(a, b)``, ``range(a, b, k)`` with a positive literal ``k``."""
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range"):
        return False
    args = iterable.args
    if any(a.keyword is not None or a.star for a in args) or not 1 <= len(args) <= 3:
        return False
    return len(args) < 3 or (isinstance(args[2].value, cst.Integer) and int(args[2].value.value, 0) > 0)


def _ascending_index(loop: cst.CSTNode) -> Optional[str]:
    """The index of ``for j in range(...)`` (ascending) or ``for j, x in enumerate(...)``."""
    if not isinstance(loop, cst.For):
        return None
    if isinstance(loop.target, cst.Name) and _ascending_range(loop.iter):
        return loop.target.value
    iterable, target = loop.iter, loop.target
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "enumerate" \
            and isinstance(target, cst.Tuple) and target.elements and isinstance(target.elements[0].value, cst.Name):
        return target.elements[0].value.value
    return None


def _chosen_elsewhere(mutation: Mutation, read: StaleRead, analysis: AliasAnalysis) -> bool:
    """``expected = -grad if flag else grad``: the code chose the alias for one outcome of the test,
    where it means to write nothing; unless the write runs under that outcome (``if flag:``), no
    evidence says they meet (a helper may test the same flag)."""
    chains = [read.origin.chain(), *(o.chain() for o in mutation.origins)]
    return any(analysis.conditions_of(o) and not analysis.implies(o, mutation.statement)
               for chain in chains for o in chain)


def _last_value(iterable: cst.BaseExpression) -> Optional[str]:
    """The last index of a range loop as literal text: ``"0"`` for ``range(n)[::-1]``,
    ``reversed(range(n))`` and ``range(n, -1, -1)``; ``"4"`` for ``range(5)``; else None."""
    def is_range(node: cst.BaseExpression, count: int) -> bool:
        return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range" \
            and len(node.args) == count and all(a.keyword is None and not a.star for a in node.args)

    if isinstance(iterable, cst.Subscript) and is_range(iterable.value, 1) and len(iterable.slice) == 1:
        part = iterable.slice[0].slice
        if isinstance(part, cst.Slice) and part.lower is None and part.upper is None and int_literal(part.step) == -1:
            return "0"
    elif isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "reversed" \
            and len(iterable.args) == 1 and is_range(iterable.args[0].value, 1):
        return "0"
    elif is_range(iterable, 3) and int_literal(iterable.args[1].value) == -1 and int_literal(iterable.args[2].value) == -1:
        return "0"
    elif is_range(iterable, 1) and int_literal(iterable.args[0].value) is not None and int_literal(iterable.args[0].value) > 0:
        return str(int_literal(iterable.args[0].value) - 1)
    return None


def int_literal(node: Optional[cst.BaseExpression]) -> Optional[int]:
    """An integer literal's value, ``-1`` included."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = int_literal(node.expression)
        return -inner if inner is not None else None
    return int(node.value, 0) if isinstance(node, cst.Integer) else None


def _offset(index: cst.BaseSlice, name: str) -> Optional[int]:
    """``c`` of an index ``name``, ``name + c`` or ``c + name`` (``c`` an integer literal); None otherwise."""
    if not isinstance(index, cst.Index):
        return None
    value = index.value
    if isinstance(value, cst.Name):
        return 0 if value.value == name else None
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        for a, b in ((value.left, value.right), (value.right, value.left)):
            if isinstance(a, cst.Name) and a.value == name and isinstance(b, cst.Integer):
                return int(b.value, 0)
    return None


def mutation_ops(mutation: Mutation, origin: Origin) -> List[str]:
    return origin.ops() + [mutation.op]


def _literal(text: str) -> bool:
    try:
        ast.literal_eval(f"({text},)")
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True

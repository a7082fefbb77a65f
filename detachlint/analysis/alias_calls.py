"""The alias interpreter's calls (``aliases.py``): what a call does to storage, read from the
catalogue's effect of the function (by qualified name) or method called (``catalog.FUNCTION_EFFECTS``,
``catalog.METHOD_EFFECTS``), through one transfer function per effect (``_FUNCTION_TRANSFER``,
``_METHOD_TRANSFER``); and calls into the project, through the project index's summaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set

import libcst as cst

from ..knowledge import catalog
from .alias_flow import atoms
from .alias_model import EMPTY, Origin, Relation
from .copies import literal_int as _literal_int
from .dtypes import KEEP, DtypeClasses
from .project import Summary
from .tensors import Kind, target_names
from ..knowledge.torch_facts import (ModuleEffect, copies_after_reordering, is_optimizer_class, kept_through_data,
                          reorders_dimensions, saves_for_backward, saves_input, saves_other, stepped_optimizer,
                          writes_own_metadata, writes_receiver)
from .torchnames import TorchNames, dotted_name, sliced_name
from ..walk import walk


@dataclass
class _Call:
    """A call being interpreted: its arguments, what each holds, the positional ones, and what the
    receiver holds (of a method call)."""

    node: cst.Call
    args: Sequence[cst.Arg]
    values: Sequence[Set[Origin]]
    positional: Sequence[cst.BaseExpression]
    recv: Set[Origin] = field(default_factory=set)

    @property
    def first(self) -> Set[Origin]:
        """What the first argument holds, when it is positional."""
        return self.values[0] if self.values and self.args[0].keyword is None else set()


class CallTransfer:
    """The calls of ``AliasAnalysis`` (a part of it: it uses the interpreter's state, ``_eval``,
    ``_kind``, ``_derive``, ``_mutate`` and the live-state bookkeeping)."""

    def _call(self, node: cst.Call) -> Set[Origin]:
        func = node.func
        last = func.attr.value if func.__class__ is cst.Attribute else func.value if func.__class__ is cst.Name else None
        if saves_input(last):
            op, given = self.names.tensor_op(node, self.self_name)
            key = sliced_name(given) if saves_input(op) and given is not None else None
            if key is not None:
                self.saving_calls.setdefault(key, []).append(node)
        for i in self.project.apply_saves(dotted_name(func.value) or "") \
                if func.__class__ is cst.Attribute and func.attr.value == "apply" and self.project is not None else ():
            key = sliced_name(node.args[i].value) if i < len(node.args) else None  # ``Cube.apply(h)`` keeps ``h``
            if key is not None:
                self.saving_calls.setdefault(key, []).append(node)
        if saves_other(last) and self.names.tensor_op(node, self.self_name)[0] is not None:  # ``mm(w, b)`` keeps b
            for given in self.names.other_operands(node):
                key = sliced_name(given)
                if key is not None:
                    self.saving_calls.setdefault(key, []).append(node)
        held = self.held_module(func)
        if held is not None and held.saves_input and node.args and node.args[0].keyword is None:
            key = sliced_name(node.args[0].value)  # ``self.fc(h)``: nn.Linear saves ``h``
            if key is not None:
                self.saving_calls.setdefault(key, []).append(node)
        q = self.names.qualified(func)
        if q is None and func.__class__ is cst.Attribute:
            return self._method_call(node, func)
        args = [a for a in node.args]
        positional = [a.value for a in args if a.keyword is None and not a.star]
        if func.__class__ is cst.Name and q is None and func.value in ("len", "isinstance", "id", "type") \
                and self.state is not None and func.value not in self.state:
            return set()  # metadata, not values
        values = [self._eval(a.value) for a in args]
        self._out_argument(node)
        returned = self._returned_by_project(node, args, values)
        if returned:
            self._project_call(node, values)
            return returned
        call = _Call(node, args, values, positional)
        if func.__class__ is cst.Name and q is None:
            name = func.value
            if self.state is not None and name in self.state:
                self._read_key(name, func)
                return set()
            if name in ("dict", "list", "tuple") and len(positional) == 1:
                return self._shallow_copy(call, name)
            if not self._training_call(node, name, args):
                self._project_call(node, values)
            return set()
        if q is None:
            self._eval(func)
            return set()
        effect = catalog.FUNCTION_EFFECTS.get(q)
        if effect is None and self.project is not None and q.partition(".")[0] in self.project.index.roots:
            self._project_call(node, values)  # ``from pkg.engine import train_one_epoch``: the project's
        if is_optimizer_class(q):  # no optimizer class has an effect of its own
            self._link_optimizer(node)
            return set()
        head, _, member = q.rpartition(".")
        if head == "torch.nn.functional" and positional and any(
                a.keyword is not None and a.keyword.value == "inplace"
                and a.value.__class__ is cst.Name and a.value.value == "True" for a in args):
            self._mutate(positional[0], node, f"{member}(inplace=True)", call.first)
            return call.first
        transfer = _FUNCTION_TRANSFER.get(effect)
        return transfer(self, call, q) if transfer is not None and positional else set()

    # What each effect of the catalogue does to the origins, for a function called by its qualified
    # name ``q`` with at least one positional argument (``call.first`` is what the first one holds).

    def _shallow_copy(self, call: "_Call", q: str) -> Set[Origin]:
        if len(call.positional) != 1:
            return set()
        return {o for o in call.first if o.relation not in (Relation.ENTRY, Relation.FRESH)}

    def _function_writes(self, call: "_Call", q: str) -> Set[Origin]:
        head, _, member = q.rpartition(".")
        self._mutate(call.positional[0], call.node, member, call.first)
        return call.first if head == "torch" else set()

    def _function_converts(self, call: "_Call", q: str) -> Set[Origin]:
        if q == "torch.nn.functional.dropout":
            return set()  # the same object only in eval mode or with p=0
        if q in catalog.LIST_ACCEPTING_CONVERSIONS \
                and self._kind(call.positional[0]) not in (Kind.TENSOR, Kind.NDARRAY):
            return set()  # ``np.asarray(a_list)``, ``torch.as_tensor(rows)``: a new array or tensor
        if q.rpartition(".")[2] in catalog.LAYOUT_CONVERSIONS and _reversed(call.positional[0]):
            return set()  # ``np.ascontiguousarray(im[::-1])``: a negative stride is never contiguous: a copy
        return self._derive(call.first, Relation.CONVERSION, q.rpartition(".")[2], call.node)

    def _function_views(self, call: "_Call", q: str) -> Set[Origin]:
        return self._derive(call.first, Relation.VIEW, q.rpartition(".")[2], call.node)

    def _function_detaches(self, call: "_Call", q: str) -> Set[Origin]:
        return self._derive(call.first, Relation.DETACH, q.rpartition(".")[2], call.node)

    def _legacy_constructor(self, call: "_Call", q: str) -> Set[Origin]:
        if len(call.args) == 1 and self._kind(call.positional[0]) is Kind.TENSOR:
            return self._derive(call.first, Relation.CONVERSION, q.rpartition(".")[2], call.node)
        return set()

    def held_module(self, func: cst.BaseExpression) -> Optional[ModuleEffect]:
        """What the module ``self.<attr>`` called here does (``ProjectIndex.held_module``)."""
        if self.project is None or self.cls is None or func.__class__ is not cst.Attribute \
                or func.value.__class__ is not cst.Name or func.value.value != self.self_name:
            return None
        return self.project.held_module(self.cls, func.attr.value)

    def _held_module_call(self, node: cst.Call, effect: ModuleEffect) -> Set[Origin]:
        """``out = self.act(out)`` with ``self.act = nn.ReLU(inplace=True)``: writes its input in
        place and returns it; with ``nn.Identity()``: returns it."""
        values = [self._eval(a.value) for a in node.args]
        if not node.args or node.args[0].keyword is not None or node.args[0].star:
            return set()
        if effect.writes_input:
            self._mutate(node.args[0].value, node, effect.write_op, values[0])
        return values[0] if effect.returns_input else set()

    def _method_call(self, node: cst.Call, func: cst.Attribute) -> Set[Origin]:
        method = func.attr.value
        receiver = func.value
        held = self.held_module(func)
        if held is not None and (held.writes_input or held.returns_input):
            return self._held_module_call(node, held)
        key = dotted_name(func)
        if key is not None and self.state is not None and key in self.state:
            # a stored callable (self.fn = ...): a read, nothing more
            self._read_key(key, func)
            for arg in node.args:
                self._eval(arg.value)
            return set()
        effect = catalog.METHOD_EFFECTS.get(method)
        if effect == catalog.METADATA:
            for arg in node.args:
                self._eval(arg.value)
            return set()  # x.size(), sd.keys(): no tensor values read
        rkey = dotted_name(receiver)
        if (effect == catalog.ADD or method in catalog.CONTAINER_EXTEND_METHODS) and rkey is not None \
                and self.state is not None and rkey in self.state:
            recv = set()  # adding to a container does not read what it holds
        else:
            recv = self._eval(receiver)
        args = [a for a in node.args]
        values = [self._eval(a.value) for a in args]
        self._out_argument(node)
        if effect == catalog.DETACH and args:
            effect = catalog.MAY_ALIAS  # not Tensor.detach(): some other object's method
        call = _Call(node, args, values, [a.value for a in args if a.keyword is None and not a.star], recv)
        transfer = _METHOD_TRANSFER.get(effect)
        out = transfer(self, call, method, receiver) if transfer is not None else None
        if out is not None:
            return out
        if not (any(isinstance(a.value, (cst.Name, cst.Attribute)) for a in args)
                and self._training_call(node, method, args)):
            self._project_call(node, values)
        return set()

    # What each effect of the catalogue does to the origins, for ``receiver.<method>(...)``
    # (``call.recv``: what the receiver holds). None: nothing of its own, a call like any other.

    def _writes_receiver(self, call: "_Call", method: str, receiver: cst.BaseExpression) -> Optional[Set[Origin]]:
        if self._kind(receiver) is Kind.OTHER and (self.names.foreign or (
                self.project is not None and method in self.project.index.inplace_named_methods)):
            return None  # ``pm = ProxGroupLasso(l); pm.apply_(p, g)``: a project class's own method
        if not _writes_values_in_place(receiver):  # x.mul_(a).add_(b): one write, recorded at the first call
            self._mutate(receiver, call.node, method, call.recv)  # (``d.t_().add_(b)``: the add_ writes values)
        if kept_through_data(method) == "storage" and receiver.__class__ is cst.Name and self.state is not None:
            # ``d.set_(other)``: ``d`` now holds ``other``'s storage (or none); it aliases what it held no more
            held = self._derive(call.values[0], Relation.VIEW, method, call.node) if call.values else set()
            self._bind(receiver.value, held or {self._fresh(call.node, receiver.value)})
            return set(self.state[receiver.value])
        return call.recv

    def _returns_receiver(self, call: "_Call", method: str, receiver: cst.BaseExpression) -> Optional[Set[Origin]]:
        return call.recv

    def _detaches(self, call: "_Call", method: str, receiver: cst.BaseExpression) -> Optional[Set[Origin]]:
        return self._derive(call.recv, Relation.DETACH, method, call.node)

    def _copies(self, call: "_Call", method: str, receiver: cst.BaseExpression) -> Optional[Set[Origin]]:
        if method == "copy" and (self._kind(receiver) is Kind.STATE_DICT
                                 or any(o.find(Relation.SNAPSHOT) for o in call.recv)):
            return {o for o in call.recv if o.relation not in (Relation.ENTRY, Relation.FRESH)}
        return set()

    def _snapshot(self, call: "_Call", method: str, receiver: cst.BaseExpression) -> Optional[Set[Origin]]:
        if self._holds_parameters(receiver) or self._is_optimizer(receiver):
            return self._module_state(receiver, call.node, Relation.SNAPSHOT, method)
        return set()

    def _parameters(self, call: "_Call", method: str, receiver: cst.BaseExpression) -> Optional[Set[Origin]]:
        if self._holds_parameters(receiver):
            return self._module_state(receiver, call.node, Relation.PARAMS, method)
        return set()

    def _steps(self, call: "_Call", method: str, receiver: cst.BaseExpression) -> Optional[Set[Origin]]:
        stepped = stepped_optimizer(method, receiver, call.positional, self._is_optimizer)
        if stepped is not None:
            self._optimizer_step(call.node, stepped)
        return set()

    def _loads(self, call: "_Call", method: str, receiver: cst.BaseExpression) -> Optional[Set[Origin]]:
        rkey = dotted_name(receiver)
        if rkey is not None:
            self._update_state(call.node, [rkey], method)
        return set()

    def _adds(self, call: "_Call", method: str, receiver: cst.BaseExpression) -> Optional[Set[Origin]]:
        if not call.values:
            return None
        rkey = dotted_name(receiver)
        if rkey is not None and self.state is not None and rkey in self.state:
            added = {o for o in call.values[-1] if o.relation not in (Relation.ENTRY, Relation.FRESH)}
            if added:
                merged = dict(self.state[rkey])
                for origin in added:
                    merged.setdefault(origin, EMPTY)
                self.state[rkey] = merged
        return set()

    def _values(self, call: "_Call", method: str, receiver: cst.BaseExpression) -> Optional[Set[Origin]]:
        return {o for o in call.recv if o.relation not in (Relation.ENTRY, Relation.FRESH)}

    def _views(self, call: "_Call", method: str, receiver: cst.BaseExpression) -> Optional[Set[Origin]]:
        kind = self._kind(receiver)
        if kind in (Kind.TENSOR, Kind.NDARRAY) or (kind is Kind.UNKNOWN and surely_tensor(call.recv)):
            return self._derive(call.recv, Relation.VIEW, method, call.node)
        return set()

    def _converts(self, call: "_Call", method: str, receiver: cst.BaseExpression) -> Optional[Set[Origin]]:
        if method in catalog.NAMING_WITHOUT_ARGUMENTS and not call.args:
            return set()  # ``t.type()`` names the type: a string, no memory of ``t``
        if copies_after_reordering(method) and _reordered(receiver):
            return set()  # ``x.permute(0, 2, 1).contiguous()``: non-contiguous before, so a copy
        kind = self._kind(receiver)
        args = call.args
        dtype = next((a.value for a in args if a.keyword is not None and a.keyword.value == "dtype"), None)
        if self._surely_converts(receiver, method, call.positional, dtype):
            return set()  # ``if x.is_cuda: x = x.cpu()``: a copy on every path that reaches it
        if kind is not Kind.TENSOR and method in catalog.NDARRAY_COPY_METHODS:
            return set()  # ndarray.flatten() copies
        if method == "to" and any(a.keyword is not None and a.keyword.value == "copy" for a in args):
            return set()
        if kind not in (Kind.TENSOR, Kind.NDARRAY, Kind.UNKNOWN):
            return set()
        crossing = self._crossing(receiver, method, call.positional, dtype) if kind is not Kind.NDARRAY else None
        if crossing == "copy":
            return set()  # ``grid.to(ddf)`` of an int grid to a float tensor, ``.float()`` of a long one
        origins = self._derive(call.recv, Relation.CONVERSION, method, call.node)
        if crossing == "unsure":
            for origin in origins:
                origin.unsure = True
        return origins

    def _crossing(self, receiver: cst.BaseExpression, method: str, positional: Sequence[cst.BaseExpression],
                  dtype: Optional[cst.BaseExpression]) -> Optional[str]:
        """``"copy"`` where the conversion goes between dtype classes the code shows (int to float),
        ``"unsure"`` where the receiver's class is known but not the float default and the target's
        is not known, else None."""
        if method not in catalog.DTYPE_ARGUMENT_METHODS and method not in catalog.CLASS_METHODS:
            return None
        if self._classes is None:
            self._classes = DtypeClasses(self.scope, self.names)
        source = self._classes.of(receiver)
        if source is None:
            return None
        target = self._classes.target(method, list(positional), dtype)
        if target == KEEP or target == source:
            return None
        return "copy" if target is not None else ("unsure" if source != "float" else None)

    def _surely_converts(self, receiver: cst.BaseExpression, method: str,
                         positional: Sequence[cst.BaseExpression], dtype: Optional[cst.BaseExpression] = None) -> bool:
        """Whether an ``if`` around the conversion ``receiver.<method>(...)`` makes it change the
        device or the dtype, so that it copies: ``.cpu()`` under ``x.is_cuda``, ``.cuda()`` under
        ``not x.is_cuda``, ``.to(d)``/``.to(dtype=d)``/``.type(d)``/``.float()`` under ``x.dtype != d``,
        ``x.dtype not in (d,)``, or under ``x.dtype == e`` or ``x.dtype in (e, f)`` for other dtypes
        (``x.dtype`` or a name bound to it once); an early exit's test counts for what follows."""
        if not self._tests:
            return False
        # ``x.detach()`` and ``x.data`` have ``x``'s dtype and device
        while True:
            if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                    and receiver.func.attr.value == "detach" and not receiver.args:
                receiver = receiver.func.value
            elif isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
                receiver = receiver.value
            else:
                break
        r = dotted_name(receiver)
        if r is None:
            return False
        tests = [atom for test, holds in self._tests for atom in atoms(test, holds)]
        if method in catalog.DEVICE_METHODS:
            wanted = catalog.DEVICE_METHODS[method] == "cpu"
            return any(dotted_name(test) == f"{r}.is_cuda" and holds is wanted for test, holds in tests)
        if method in catalog.DTYPE_METHODS:
            target = catalog.DTYPE_METHODS[method]
        elif method in ("to", "type") and (len(positional) == 1 or dtype is not None):
            given = dtype if dtype is not None else positional[0]
            target = _dtype(given) or dotted_name(given)
        else:
            return False
        if target is None:
            return False
        for test, holds in tests:
            if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
                continue
            left, right = test.left, test.comparisons[0].comparator
            if self._dtype_of(right) == r:
                left, right = right, left
            if self._dtype_of(left) != r:
                continue
            op = test.comparisons[0].operator
            if isinstance(op, (cst.In, cst.NotIn)):
                if _converts_from(right, isinstance(op, cst.In) == holds, target):
                    return True
                continue
            equal = isinstance(op, (cst.Equal, cst.Is))
            if not equal and not isinstance(op, (cst.NotEqual, cst.IsNot)):
                continue
            known = _dtype(right)
            if equal != holds and (known or dotted_name(right)) == target:
                return True  # ``x.dtype != d``: converting to ``d`` changes it
            if equal == holds and known not in (None, target) and target in catalog.DTYPE_NAMES.values():
                return True  # ``x.dtype == torch.float16`` (or ``!=`` failing), converted to float32
        return False

    def _dtype_of(self, node: cst.BaseExpression) -> Optional[str]:
        """``x`` for ``x.dtype``, or for a name bound once in the scope to ``x.dtype``."""
        name = dotted_name(node)
        if name is None:
            return None
        if name.endswith(".dtype"):
            return name[: -len(".dtype")]
        if self._dtype_names is None:
            finder = _DtypeNames()
            walk(self.scope, finder)
            self._dtype_names = {k: v for k, v in finder.bound.items() if v is not None}
        return self._dtype_names.get(name)

    def _out_argument(self, node: cst.Call) -> None:
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "out":
                name = dotted_name(node.func) or "call"
                self._mutate(arg.value, node, f"{name.rsplit('.', 1)[-1]}(out=)")

    def _link_optimizer(self, node: cst.Call) -> None:
        """Remember which modules an optimizer built here updates (from ``X.parameters()``)."""
        statement = self._statement
        if not isinstance(statement, cst.Assign) or statement.value is not node:
            return
        key = dotted_name(statement.targets[0].target)
        if key is None:
            return
        finder = _ParameterOwners()
        for arg in node.args:
            walk(arg.value, finder)
        modules = finder.modules
        if modules:
            self.optimizer_links[key] = modules
            self.model_roots |= modules

    def _training_call(self, node: cst.Call, name: str, args) -> bool:
        """``train_one_epoch(model, optimizer, loader)``: a call given an optimizer trains (True)."""
        lowered = name.lower()
        if name[:1].isupper() or any(h in lowered for h in catalog.NOT_TRAINING_CALL_HINTS):
            return False
        for arg in args:
            if isinstance(arg.value, (cst.Name, cst.Attribute)) and self._is_optimizer(arg.value):
                self._optimizer_step(node, arg.value, _handed(node))
                return True
        return False

    def _returned_by_project(self, node: cst.Call, args: Sequence[cst.Arg], values: Sequence[Set[Origin]]) -> Set[Origin]:
        """``signal = to_numpy(signal)`` where the project's ``to_numpy`` returns (a conversion of)
        its argument: the result shares the argument's memory when nothing needs converting."""
        name = dotted_name(node.func)
        if self.project is None or name is None or (self.self_name and name.startswith(self.self_name + ".")):
            return set()
        summary = self.project.index.function(self.project.module, name, self.names.qualified(node.func))
        if summary is None or not summary.returns:
            return set()
        # A helper that converts its argument (``.cpu()``, ``np.asarray``) returns the caller's memory
        # when nothing needs converting, as ``.numpy()`` / ``.to()`` do; one that reshapes or
        # indexes it returns a view (writing through it is writing the caller's, on purpose).
        if summary.returns_partial:
            self.partial_returns.add(id(node))
        if summary.returns_converted:
            relation, op = Relation.CONVERSION, ("numpy" if summary.returns_kind == "ndarray" else "to")
        else:
            relation, op = Relation.VIEW, "view"
        out: Set[Origin] = set()
        for i, (arg, origins) in enumerate(zip(args, values)):
            if arg.keyword is not None or arg.star:
                break
            if i in summary.returns:
                out |= self._derive(origins, relation, op, node)
        return out

    def _note_instance(self, key: str, value: Optional[cst.CSTNode]) -> None:
        """Remember (or forget) that ``key`` holds an instance of a class of the project."""
        self._instances.pop(key, None)
        if self.project is None or not isinstance(value, cst.Call):
            return
        name = dotted_name(value.func)
        cls = self.project.index.resolve(self.project.module, name) if name is not None else None
        if cls is not None and self.project.index.is_class(cls):
            self._instances[key] = (cls, value)

    def _project_call(self, node: cst.Call, values: Optional[Sequence[Set[Origin]]] = None) -> None:
        """A call of a project function (defined here or imported from another module of the
        project), of a method of this class (``self.train_one_step()``), or of a method of an
        instance of a project class made here (``sbs.train()`` after ``sbs = StepByStep(model,
        loss_fn, optimizer)``): when its summary steps an optimizer, it updates the live state, as
        ``optimizer.step()`` (of the optimizer handed to the instance); when it writes an argument
        in place (``normalize(states)`` doing ``states -= mean``), the call writes what the caller
        passed, as an in-place method would. ``values``: the origins of ``node.args``."""
        if self.project is None:
            return
        name = dotted_name(node.func)
        if name is None:
            return
        index, module = self.project.index, self.project.module
        head, _, rest = name.partition(".")
        handed: List[cst.BaseExpression] = []
        made_with: List[cst.BaseExpression] = []
        bound = False
        if head in self._instances and rest and "." not in rest:
            cls, made = self._instances[head]
            made_with = [a.value for a in made.args]
            qualname = index.method(cls, rest)
            handed = [a.value for a in made.args if isinstance(a.value, (cst.Name, cst.Attribute))
                      and self._is_optimizer(a.value)]
            bound = True
        elif self.self_name is not None and head == self.self_name:
            if self.cls is None or not rest or "." in rest:
                return
            qualname = index.method(f"{module}.{self.cls}" if module else self.cls, rest)
            bound = True
        else:
            qualname = index.resolve(module, name) or index.lookup(self.names.qualified(node.func))
        summary = index.summary(qualname) if qualname is not None else None
        if summary is None:
            return
        if summary.steps is not None:
            # it reaches what it is handed: its arguments, the receiver and what that was made with
            self._optimizer_step(node, handed[0] if handed else None, [*_handed(node), *made_with])
        elif (summary.writes or summary.array_writes) and values is not None:
            self._written_by_callee(node, summary, bound, values, name)

    def _written_by_callee(self, node: cst.Call, summary: Summary, bound: bool, values: Sequence[Set[Origin]],
                           name: str) -> None:
        """The arguments of the call ``node`` that the callee writes in place: those it writes
        whatever they are (``x.sub_(m)``, ``x[i] = v``) when the caller passes a tensor or an array
        (or what is surely one), and those it writes with ``x -= m`` when the caller passes a tensor
        or an array (a number is rebound in the callee, not written)."""
        always, arrays = summary.written_arguments(bound), summary.written_arguments(bound, array=True)
        untracked, written = summary.untracked_arguments(bound), set()
        op = f"{name.rpartition('.')[2]}()"  # ``helper()``: a write its summary says it makes
        for i, (arg, origins) in enumerate(zip(node.args, values)):
            if arg.keyword is not None or arg.star:
                break
            if not origins or (i not in always and i not in arrays):
                continue
            kind = self._kind(arg.value)
            # of unknown kind, only what is surely a tensor: the callee's ``x[k] = v`` also fills dicts
            if kind in (Kind.TENSOR, Kind.NDARRAY) or (kind is Kind.UNKNOWN and i in always and surely_tensor(origins)):
                self._mutate(arg.value, node, op, origins)
                written.add(i)
        if not written:
            return
        mutation = self._mutation(node, op, "inplace", None, None)
        if written <= untracked:
            mutation.untracked = True
        if written <= summary.partial_arguments(bound):
            mutation.partly_by = name


_FunctionTransfer = Callable[[CallTransfer, _Call, str], Set[Origin]]
_MethodTransfer = Callable[[CallTransfer, _Call, str, cst.BaseExpression], Optional[Set[Origin]]]
# Effects absent here (``COPY``: fresh memory) make a call return fresh storage.
_FUNCTION_TRANSFER: Dict[str, _FunctionTransfer] = {
    catalog.SHALLOW_COPY: CallTransfer._shallow_copy,
    catalog.WRITE: CallTransfer._function_writes,
    catalog.MAY_ALIAS: CallTransfer._function_converts,
    catalog.VIEW: CallTransfer._function_views,
    catalog.DETACH: CallTransfer._function_detaches,
    catalog.LEGACY: CallTransfer._legacy_constructor,
}
_METHOD_TRANSFER: Dict[str, _MethodTransfer] = {
    catalog.WRITE: CallTransfer._writes_receiver,
    catalog.SELF: CallTransfer._returns_receiver,
    catalog.DETACH: CallTransfer._detaches,
    catalog.COPY: CallTransfer._copies,
    catalog.SNAPSHOT: CallTransfer._snapshot,
    catalog.PARAMS: CallTransfer._parameters,
    catalog.UPDATE: CallTransfer._steps,
    catalog.LOAD: CallTransfer._loads,
    catalog.ADD: CallTransfer._adds,
    catalog.VALUES: CallTransfer._values,
    catalog.VIEW: CallTransfer._views,
    catalog.MAY_ALIAS: CallTransfer._converts,
}


class _DtypeNames(cst.CSTVisitor):
    """Names bound in a scope: to ``x.dtype`` (the value ``x``) when that is their only binding,
    else to None."""

    def __init__(self) -> None:
        self.bound: Dict[str, Optional[str]] = {}

    def _bind(self, name: str, dtype_of: Optional[str]) -> None:
        self.bound[name] = dtype_of if name not in self.bound else None

    def visit_Assign(self, node: cst.Assign) -> None:
        value = dotted_name(node.value) if len(node.targets) == 1 else None
        of = value[: -len(".dtype")] if value is not None and value.endswith(".dtype") else None
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._bind(target.target.value, of)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, None)

    def visit_For(self, node: cst.For) -> None:
        for name in target_names(node.target):
            self._bind(name, None)


def _converts_from(dtypes: cst.BaseExpression, inside: bool, target: str) -> bool:
    """Whether converting to ``target`` changes a dtype that is (``inside``) or is not one of
    ``dtypes``, a tuple, list or set of dtypes: ``x.dtype in (torch.int8, torch.bool)``, to float32."""
    if not isinstance(dtypes, (cst.Tuple, cst.List, cst.Set)) or not dtypes.elements:
        return False
    known = [_dtype(e.value) for e in dtypes.elements if not isinstance(e, cst.StarredElement)]
    if len(known) != len(dtypes.elements) or None in known or target not in catalog.DTYPE_NAMES.values():
        return False
    return (target not in known) if inside else (target in known)


def _dtype(node: cst.BaseExpression) -> Optional[str]:
    """The canonical name of ``torch.float16``, ``torch.half`` (any spelling of ``torch``): ``float16``."""
    name = dotted_name(node)
    if name is None or "." not in name:
        return None
    return catalog.DTYPE_NAMES.get(name.rsplit(".", 1)[1])


def _handed(node: cst.Call) -> List[cst.BaseExpression]:
    """What a call hands the code it runs: its arguments and, of a method, the receiver."""
    receiver = [node.func.value] if isinstance(node.func, cst.Attribute) else []
    return [*receiver, *(a.value for a in node.args)]


def surely_tensor(origins: Set[Origin]) -> bool:
    """A value of unknown kind is surely a tensor or an array when every way it was made went
    through an op only tensors have (``.detach()``, ``.numpy()``, ``.contiguous()``, ``.view()``)."""
    if not origins:
        return False
    return all(any(op in catalog.TENSOR_EVIDENCE_OPS for op in o.ops()) for o in origins)


def fed_to_torch_op(target: cst.BaseExpression, value: cst.BaseExpression, names: TorchNames) -> bool:
    """``h /= torch.norm(h)``: the written name is the first input of a torch op that takes only
    tensors (``torch_facts.saves_for_backward``, ``saves_other``) in the same statement, so it holds a tensor."""
    key = dotted_name(target)
    if key is None:
        return False
    finder = _TorchInputs(names, key)
    walk(value, finder)
    return finder.found


class _TorchInputs(cst.CSTVisitor):
    def __init__(self, names: TorchNames, key: str) -> None:
        self.names, self.key, self.found = names, key, False

    def visit_Call(self, node: cst.Call) -> None:
        op, first = self.names.op(node)
        if first is not None and (self.names.qualified(node.func) or "").startswith("torch.") \
                and (saves_for_backward(op) or saves_other(op)) and dotted_name(first) == self.key:
            self.found = True


def _reversed(node: cst.BaseExpression) -> bool:
    """``a[::-1]``, ``a.transpose(...)[::-1]``: a slice with a negative literal step, outermost."""
    return isinstance(node, cst.Subscript) and any(
        isinstance(e.slice, cst.Slice) and isinstance(e.slice.step, cst.UnaryOperation)
        and isinstance(e.slice.step.operator, cst.Minus) for e in node.slice)


def _reordered(node: cst.BaseExpression) -> bool:
    """``x.permute(0, 2, 1)``, ``x.transpose(1, 2)``, ``x.mT``: a reordering of dimensions other than
    the identity (``torch_facts.reorders_dimensions``)."""
    if isinstance(node, cst.Attribute):
        return reorders_dimensions(node.attr.value, [])
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return False
    args = [a.value for a in node.args]
    if any(a.keyword is not None or a.star for a in node.args):
        return False
    if len(args) == 1 and isinstance(args[0], (cst.Tuple, cst.List)):
        args = [e.value for e in args[0].elements]  # ``x.permute((0, 2, 1))``
    return reorders_dimensions(node.func.attr.value, [_literal_int(a) for a in args])


def _writes_values_in_place(node: cst.BaseExpression) -> bool:
    """An in-place call chain with a value write in it (``x.mul_(a)``, ``x.t_().mul_(a)``; not
    ``x.t_()``, which changes only the object's shape)."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and writes_receiver(node.func.attr.value):
        if not writes_own_metadata(node.func.attr.value):
            return True
        node = node.func.value
    return False


class _ParameterOwners(cst.CSTVisitor):
    """The modules whose parameters an expression iterates (``X.parameters()``)."""

    def __init__(self) -> None:
        self.modules: Set[str] = set()

    def visit_Call(self, call: cst.Call) -> None:
        f = call.func
        if isinstance(f, cst.Attribute) and f.attr.value in (
                catalog.PARAMETER_ITERATORS | catalog.NAMED_PARAMETER_ITERATORS):
            name = dotted_name(f.value)
            if name is not None:
                self.modules.add(name)

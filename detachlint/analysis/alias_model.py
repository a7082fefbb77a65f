"""The alias analysis's data model: what a value may be (``Origin``: how it came to share storage
with something else), the storage identities, the writes (``Mutation``) and the reads that see
them (``StaleRead``), and the abstract state the interpreter (``aliases.py``) carries through a
function, with its join at branch and loop merges.
"""

from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Set

import libcst as cst

from ..knowledge.torch_facts import returns_same_object


class Relation(enum.Enum):
    ENTRY = "entry"  # what a parameter, global or attribute holds when the scope starts
    FRESH = "fresh"  # storage created in this scope and owned by the name it is bound to
    PARAMS = "params"  # the live parameters of a module (``model.parameters()`` and its elements)
    PLAIN = "plain"  # ``b = a``: the same object
    VIEW = "view"  # slicing, indexing, ``view``/``transpose``/``T``...: a window on the storage
    CONVERSION = "conversion"  # ``.cpu()``, ``.float()``, ``.to()``, ``.numpy()``, ``as_tensor``: same memory when nothing changes
    DETACH = "detach"  # ``.detach()``: same memory, cut from the graph
    DATA = "data"  # ``.data``: same memory, invisible to the version counter
    SNAPSHOT = "snapshot"  # ``state_dict()``: references to every live tensor of the module


# Relations of a value that *is* the thing itself rather than a second name for it.
HANDLES = frozenset({Relation.ENTRY, Relation.FRESH, Relation.PARAMS})
def tensor_object(origin: "Origin") -> "Origin":
    """The origin that made the tensor object ``origin`` may be: up through plain names (``b = a``)
    and conversions that return their receiver when nothing converts (``a.cpu()``); a view,
    ``.detach()``, ``.data`` or ``torch.from_numpy`` is another object over the same memory."""
    while origin.parent is not None and (origin.relation is Relation.PLAIN or (
            origin.relation is Relation.CONVERSION and returns_same_object(origin.op or ""))):
        origin = origin.parent
    return origin


def _strict_ancestor(ancestor: object, node: object) -> bool:
    """Whether ``ancestor`` is on ``node``'s chain of ``.parent`` links (``node`` itself excluded)."""
    current = node.parent  # type: ignore[attr-defined]
    while current is not None:
        if current is ancestor:
            return True
        current = current.parent
    return False


class Storage:
    """An identity for memory. Attribute storages hang under their object's (``model.fc.weight``
    under ``model``), so an update of the whole module reaches a snapshot of one parameter."""

    __slots__ = ("key", "parent")

    def __init__(self, key: str, parent: Optional["Storage"] = None) -> None:
        self.key = key
        self.parent = parent

    def is_ancestor_of(self, other: "Storage") -> bool:
        return _strict_ancestor(self, other)

    def __repr__(self) -> str:
        return f"Storage({self.key})"


_SERIALS = itertools.count()


class Origin:
    """How a value came to be: one expression (or parameter) and the origin it was derived from."""

    __slots__ = ("relation", "op", "node", "statement", "storage", "parent", "source", "serial", "unsure")

    def __init__(self, relation: Relation, op: Optional[str], node: Optional[cst.CSTNode],
                 statement: Optional[cst.CSTNode], storage: Storage, parent: Optional["Origin"],
                 source: str) -> None:
        self.relation = relation
        self.op = op  # the concrete op: "detach", "cpu", "numpy", "__getitem__", "state_dict", ...
        self.node = node  # the expression that made it (None for an entry)
        self.statement = statement  # the statement holding ``node``
        self.storage = storage
        self.parent = parent
        self.source = source  # the name it was derived from, or its own name for handles
        self.serial = next(_SERIALS)  # creation order: sets of origins are read in this order
        # a conversion of a value of a known dtype class to one not known (``grid.to(other)`` of an
        # int grid): whether it shares memory rests on what the code does not show
        self.unsure = False

    def chain(self) -> List["Origin"]:
        """From the owning handle down to this origin."""
        out = []
        node: Optional[Origin] = self
        while node is not None:
            out.append(node)
            node = node.parent
        out.reverse()
        return out

    @property
    def root(self) -> "Origin":
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def ops(self) -> List[str]:
        return [o.op for o in self.chain() if o.op is not None]

    def relations(self) -> List[Relation]:
        return [o.relation for o in self.chain()]

    def derives_from(self, other: "Origin") -> bool:
        """True when ``other`` is a strict ancestor: this value was made from it."""
        return _strict_ancestor(other, self)

    def find(self, *relations: Relation) -> Optional["Origin"]:
        """The nearest origin along the chain (this one first) with one of ``relations``."""
        node: Optional[Origin] = self
        while node is not None:
            if node.relation in relations:
                return node
            node = node.parent
        return None

    def __repr__(self) -> str:
        return f"Origin({self.relation.value}, {self.op}, {self.source})"


@dataclass(eq=False)
class Mutation:
    """A statement that changes storage: an in-place write or an update of live state."""

    node: cst.CSTNode  # the call, the augmented assignment or the item assignment
    statement: cst.CSTNode
    op: str  # "mul_", "__setitem__", "step", "load_state_dict", "xavier_uniform_", ...
    kind: str  # "inplace" (a write through an expression) or "update" (optimizer step, load_state_dict)
    target: Optional[cst.BaseExpression]  # the written expression (None for an update)
    key: Optional[str]  # the name written through, after stripping views and conversions
    origins: Set[Origin] = field(default_factory=set)  # what the written expression may be
    untracked: bool = False  # a callee writes it only through ``.data``: no version counter moves
    partly_by: Optional[str] = None  # the project function that writes it only in part, at elements not kept
    # ``t_``, ``resize_``, ``set_`` (``torch_facts.writes_own_metadata``): it changes the written
    # tensor object's shape, strides or storage, no values; another object over the same memory (a
    # view, a ``.detach()``) keeps its own, yet shares the version counter the op moves
    metadata: bool = False
    serial: int = field(default_factory=lambda: next(_SERIALS))  # creation order, as ``Origin.serial``

    def reaches(self, origin: Origin, written: Origin) -> bool:
        """Whether this write, through ``written``, changes what ``origin`` holds: a value write
        reaches every alias of the memory, a metadata op only the same tensor object."""
        return not self.metadata or tensor_object(origin) is tensor_object(written)

    def ordered_origins(self) -> List[Origin]:
        """``origins`` in the order they were made: a set of objects iterates by their addresses,
        which would make the reported origin differ from run to run."""
        return sorted(self.origins, key=lambda o: o.serial)


@dataclass(frozen=True, eq=False)
class StaleRead:
    """``key`` holding ``origin`` is read at ``node`` after ``mutation`` changed its storage through
    another name. ``escape``: not a read in the code but the end of the function, with the value
    still held by the caller (a parameter) or by the object (``self.x``)."""

    node: cst.CSTNode
    key: str
    origin: Origin
    mutation: Mutation
    escape: bool = False


Values = Dict[Origin, FrozenSet[Mutation]]  # origin -> the mutations that made it stale
State = Dict[str, Values]
EMPTY: FrozenSet[Mutation] = frozenset()


def join_states(states: Iterable[Optional[State]]) -> Optional[State]:
    live = [s for s in states if s is not None]
    if not live:
        return None
    out: State = dict(live[0])
    for state in live[1:]:
        for key, values in state.items():
            mine = out.get(key)
            if mine is None:
                out[key] = values
            elif mine is not values:
                merged = dict(mine)
                for origin, stale in values.items():
                    merged[origin] = merged.get(origin, EMPTY) | stale
                out[key] = merged
    return out

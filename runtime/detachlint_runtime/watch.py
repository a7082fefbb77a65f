"""Aliases made at flagged lines, watched for the rest of their lives.

A :class:`Group` is one alias (a view, ``detach()``, ``.data``, the tensors of a ``state_dict()``
snapshot) made at a line a static finding points at, with the tensor it was made from. Both sides
are held weakly; views made later from a member join its side. When one side is written in place
(a write through a member of that side, or, for the alias side, any write to its memory that is
not through it), the other side is *stale*; if a watched side is then read by any op, anywhere
(after a return, in the caller, in another module), the hazard happened: ``confirmed``. A group
ends when every member of its watched side has died, or when the run ends; only then can the
finding be ``harmless-in-run``, and the verdict says which of the two happened.

Which side is watched follows the finding's claim (each rule's module says which, ``rules.RULES``):
TAL301 "the other name is read as if it were a copy" (the side that was not written; both when the
finding does not say), TAL201 "the write reaches the source" (the source), TAL401 "the snapshot is
read after the update" (the snapshot), TAL002 "a write through the alias escapes autograd" (saved-
tensor checks decide; its alias is watched too, since a read of it after its source changed is a
hazard that finding does not claim). A TAL201 or TAL301 finding that claims no read (a warning; an
error for the pending graph alone) may mean its write to reach the other name: a read there is
noted (``unclaimed``: the verdict is ``unobservable``), never confirmed; so is a read of a TAL002
alias.
"""

from __future__ import annotations

import itertools
import linecache
import re
import weakref
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Tuple

from .rules import RULES

Site = Tuple[str, int]  # (absolute file name, line)
# Ops that replace a tensor's values without reading them: a stale alias they write is refreshed.
OVERWRITES = frozenset({"copy_", "fill_", "zero_", "set_"})


_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z_0-9]*)")


def _leading_name(text: str) -> Optional[str]:
    match = _NAME.match(text)
    return match.group(1) if match else None


def whose_alias(frame, findings: List[Any]) -> List[Any]:
    """Of the findings whose aliases are made at the frame's line, those whose write names the
    tensor the running expression starts from (``best, low = scores[0], other[0]``: ``scores[0]``
    is the alias of the finding that writes ``scores``); all of them where that cannot be told."""
    try:  # the columns of the instruction running now (3.11+: one position per code unit)
        row, last, col, end = next(itertools.islice(frame.f_code.co_positions(), frame.f_lasti // 2, None))
    except (AttributeError, StopIteration, ValueError):
        return findings
    if row is None or col is None:
        return findings
    line = linecache.getline(frame.f_code.co_filename, row).encode("utf-8")  # columns count UTF-8 bytes
    name = _leading_name(line[col:end if last == row else None].decode("utf-8", "replace"))
    if name is None:
        return findings
    mine = []
    for f in findings:
        text = linecache.getline(frame.f_code.co_filename, f.location.row)
        if _leading_name(text[max(f.location.column - 1, 0):]) == name:
            mine.append(f)
    return mine or findings


def finding_rows(finding) -> range:
    """The rows of a finding's own statement (its write, for the alias rules)."""
    return range(finding.location.row, max(finding.end_location.row, finding.location.row) + 1)


def alias_rows(finding) -> List[int]:
    """The rows where a finding's alias or snapshot is made (its own row when it names none)."""
    rows = [r.location.row for r in finding.related if "made here" in r.message]
    return rows or [finding.location.row]


# What a finding's related lines say of a later read (the rules' wording, see tal201/tal301): only
# these claims make a read of the other name the hazard.
READ_CLAIMS = ("read here sees the write", "still held by the caller", "used as a copy")


def claims_read(finding) -> bool:
    """Whether the finding says the other name is read as if it were a copy. A TAL201 / TAL301
    warning, or an error for the pending graph alone, does not: its write may be meant to reach the
    other name (a helper that fills its argument, a projection through `p.detach()`)."""
    rule = RULES.get(finding.code)
    if rule is not None and not rule.claims_reads:
        return False
    if rule is None or rule.intended_write is None:
        return True
    return getattr(finding.severity, "value", finding.severity) == "error" and \
        any(claim in r.message for r in finding.related for claim in READ_CLAIMS)


def follows_aliases(finding) -> bool:
    """Whether the aliases made at the finding's lines are followed (an alias rule's finding)."""
    rule = RULES.get(finding.code)
    return rule is not None and rule.watched is not None


def watched_sides(finding) -> FrozenSet[str]:
    return RULES[finding.code].watched(finding) if follows_aliases(finding) else frozenset()


@dataclass
class Stats:
    """What became of the aliases one finding's lines made, over the run."""

    made: int = 0
    died: int = 0  # every watched member died
    ended: int = 0  # still alive when the run ended
    changed: int = 0  # of the died/ended ones: stale (changed by the other side), never read after
    confirmed: int = 0
    kept_writes: int = 0  # writes through the alias after the call that made it returned
    unclaimed: int = 0  # read after the other side's write, where the finding claims no read


class Group:
    __slots__ = ("finding", "site", "watched", "claimed", "spans", "stale", "alive", "done", "stats", "maker",
                 "others", "owned", "foreign", "__weakref__")

    def __init__(self, finding, site: Site, stats: Stats) -> None:
        self.finding = finding
        self.site = site
        self.watched = watched_sides(finding)
        self.claimed = claims_read(finding)
        self.spans: List[Any] = []  # the alias side's memory
        self.stale: Optional[Tuple[Optional[Site], str]] = None  # (write site, op) not yet read
        self.alive = 0
        self.done: Optional[str] = None  # died | ended | confirmed
        self.stats = stats
        self.maker: Optional[Tuple[int, Any]] = None  # (id, code) of the frame that made it
        # The write lines of the other findings whose aliases are made at the same line (`best, low =
        # a[0], b[0]`, one finding per write): a write there does not make this finding's aliases stale.
        self.others: FrozenSet[Site] = frozenset()
        self.owned = False  # this finding's own write reached it
        self.foreign = False  # one of those other findings' writes reached it

    def live_side(self, side: str) -> bool:
        return side in self.watched or (not self.watched and side == "alias")


def overlap(a, b) -> bool:
    """Whether two spans share memory: (storage pointer, first byte, end byte[, (first byte,
    element size, shape, strides)]); None: no storage. With both shapes it is decided element by
    element: the column chunks of a row-major tensor (``unsafe_chunk`` in ``nn.LSTMCell``) lie in
    one byte interval each but share no element."""
    if a is None or b is None or a[0] != b[0] or not (a[1] < b[2] and b[1] < a[2]):
        return False
    if len(a) < 4 or len(b) < 4 or a[3] is None or b[3] is None:
        return True
    (off_a, size_a, dims_a, dense_a), (off_b, size_b, dims_b, dense_b) = layout(*a[3]), layout(*b[3])
    if dense_a and (dense_b or a[1] <= b[1] and b[2] <= a[2]) or dense_b and b[1] <= a[1] and a[2] <= b[2]:
        return True  # the common case: one covers its interval, the other lies in it or covers its own
    if dense_a:  # a covers its interval: does an element of b fall in it?
        return _reaches(dims_b, a[1] - size_b + 1 - off_b, a[2] - off_b)
    if dense_b:
        return _reaches(dims_a, b[1] - size_a + 1 - off_a, b[2] - off_a)
    # x in a, y in b overlap when x - y lies in (-size_b, size_a): one bounded search over the
    # dimensions of both, b's negated
    dims = dims_a + tuple((n, -s) for n, s in dims_b)
    return _reaches(dims, off_b - off_a - size_b + 1, off_b - off_a + size_a)


def layout(offset: int, size: int, shape, strides) -> Tuple[int, int, Tuple[Tuple[int, int], ...], bool]:
    """(first byte, element size, ((count, byte stride), ...) largest stride first, dense): what
    :func:`overlap` needs of a strided tensor; dimensions of one element or stride 0 (``expand``)
    add no memory. Dense: its elements cover its byte interval without a gap."""
    dims = tuple(sorted(((n, s * size) for n, s in zip(shape, strides) if n > 1 and s != 0),
                        key=lambda d: -abs(d[1])))
    covered, dense = size, True
    for n, s in reversed(dims):  # smallest stride first: each must continue the block below it
        dense = dense and abs(s) == covered
        covered *= n
    return offset, size, dims, dense


_BUDGET = 20000  # steps of one search; past it the overlap is assumed (as with byte intervals)


def _reaches(dims, lo: int, hi: int) -> bool:
    """Whether some sum of ``i_k * stride_k`` (``0 <= i_k < count_k``) lies in ``[lo, hi)``:
    branch and bound over the dimensions, largest stride first, with the reachable range of the
    ones after each pruning the indices tried."""
    dims = sorted(dims, key=lambda d: -abs(d[1]))
    low = [0] * (len(dims) + 1)  # reachable range of dims[k:]
    high = [0] * (len(dims) + 1)
    for k in range(len(dims) - 1, -1, -1):
        n, s = dims[k]
        low[k] = low[k + 1] + min(0, (n - 1) * s)
        high[k] = high[k + 1] + max(0, (n - 1) * s)
    budget = [_BUDGET]

    def search(k: int, lo: int, hi: int) -> bool:
        if lo > high[k] or hi - 1 < low[k]:
            return False
        if k == len(dims):
            return True
        budget[0] -= 1
        if budget[0] < 0:
            return True
        n, s = dims[k]
        # i * s must lie in [lo - high[k+1], hi - 1 - low[k+1]]
        first, last = lo - high[k + 1], hi - 1 - low[k + 1]
        if s < 0:
            s, first, last = -s, -last, -first
            sign = -1
        else:
            sign = 1
        start, stop = max(0, -(-first // s)), min(n - 1, last // s)
        return any(search(k + 1, lo - sign * i * s, hi - sign * i * s) for i in range(start, stop + 1))

    return search(0, lo, hi)


class Watch:
    def __init__(self, span_of) -> None:
        self._span = span_of
        self.tags: Dict[int, List[Tuple[Any, Group, str]]] = {}  # id(tensor) -> (weakref, group, side)
        self.by_ptr: Dict[int, List[Group]] = {}  # storage -> groups whose alias side is watched
        self.stats: Dict[int, Stats] = {}  # id(finding) -> Stats
        self._groups: Dict[int, Group] = {}  # open groups, held until they end
        self.undo: List[Tuple[Group, Any]] = []  # (group, stale before) of the last write, see restore

    def open_groups(self) -> bool:
        return bool(self._groups)

    def stats_for(self, finding) -> Stats:
        return self.stats.setdefault(id(finding), Stats())

    def make(self, finding, site: Site, source, aliases: Iterable, siblings: Iterable = ()) -> Group:
        """A group for one alias ``finding``'s line made; ``siblings``: every finding whose aliases
        are made at that line (this one among them)."""
        group = Group(finding, site, self.stats_for(finding))
        mine = set(finding_rows(finding))
        group.others = frozenset((site[0], row) for f in siblings if f is not finding
                                 for row in finding_rows(f) if row not in mine)
        group.stats.made += 1
        self._groups[id(group)] = group
        for t in aliases:
            self.join(t, group, "alias")
        if source is not None and "source" in group.watched:
            self.join(source, group, "source")
        if group.alive == 0:  # nothing to watch (the alias side already gone)
            self._finish(group, "died")
        return group

    def join(self, t, group: Group, side: str) -> None:
        key = id(t)

        def dead(ref, key=key, group=group, side=side):
            entries = self.tags.get(key)
            if entries is not None:
                entries[:] = [e for e in entries if e[0] is not ref]
                if not entries:
                    del self.tags[key]
            if group.live_side(side) and group.done is None:
                group.alive -= 1
                if group.alive <= 0:
                    self._finish(group, "died")

        self.tags.setdefault(key, []).append((weakref.ref(t, dead), group, side))
        if group.live_side(side):
            group.alive += 1
        if side == "alias" and "alias" in group.watched:
            span = self._span(t)
            if span is not None:
                group.spans.append(span)
                held = self.by_ptr.setdefault(span[0], [])
                if group not in held:
                    held.append(group)

    def members(self, t) -> List[Tuple[Group, str]]:
        entries = self.tags.get(id(t))
        if not entries:
            return []
        return [(g, side) for ref, g, side in entries if ref() is t and g.done is None]

    def _finish(self, group: Group, how: str) -> None:
        if group.done is not None:
            return
        group.done = how
        stats = group.stats
        if how in ("died", "ended") and group.foreign and not group.owned:
            stats.made -= 1  # only another finding's write reached it: its alias, not this one's
        elif how in ("confirmed", "unclaimed"):
            setattr(stats, how, getattr(stats, how) + 1)
        else:
            setattr(stats, how, getattr(stats, how) + 1)
            if group.stale is not None:
                stats.changed += 1
        for span in group.spans:
            held = self.by_ptr.get(span[0])
            if held and group in held:
                held.remove(group)
                if not held:
                    del self.by_ptr[span[0]]
        self._groups.pop(id(group), None)

    def written(self, t, span, site: Optional[Site], op: str) -> None:
        """``t`` (memory ``span``) was written in place by ``op`` at ``site``."""
        mine = self.members(t)
        for group, side in mine:
            if not self._whose(group, site):
                continue
            other = "source" if side == "alias" else "alias"
            if other in group.watched:
                self.undo.append((group, group.stale))
                group.stale = (site, op)
            elif side in group.watched and group.stale is not None and op in OVERWRITES:
                self.undo.append((group, group.stale))
                group.stale = None  # the stale side was overwritten, not read
        if span is None:
            return
        through = {id(g) for g, _ in mine}
        for group in list(self.by_ptr.get(span[0], ())):
            if id(group) not in through and any(overlap(s, span) for s in group.spans) and self._whose(group, site):
                self.undo.append((group, group.stale))
                group.stale = (site, op)

    def restore(self) -> None:
        """The last write raised before writing anything: what it made stale is as before."""
        for group, before in reversed(self.undo):
            group.stale = before
        self.undo.clear()

    @staticmethod
    def _whose(group: Group, site: Optional[Site]) -> bool:
        """Whether a write at ``site`` counts for ``group``: not when it is the write of another
        finding whose aliases are made at the same line (its aliases are its own to judge)."""
        if site is not None and site in group.others:
            group.foreign = True
            return False
        if site is not None and site[0] == group.site[0] and site[1] in finding_rows(group.finding):
            group.owned = True
        return True

    def read(self, t) -> List[Tuple[Group, str, Tuple[Optional[Site], str]]]:
        """The groups whose stale watched side ``t`` is: each is confirmed (and ends) here."""
        hits = []
        for group, side in self.members(t):
            if group.stale is not None and side in group.watched:
                if group.claimed:
                    hits.append((group, side, group.stale))
                self._finish(group, "confirmed" if group.claimed else "unclaimed")
        return hits

    def end(self) -> None:
        for group in list(self._groups.values()):
            self._finish(group, "ended")

"""Run mode: from what the observer saw to a verdict on each static finding.

``confirmed``: an observed hazard is at the finding (its line range, or one of its related lines),
and it is wrong whatever the code meant (a gradient computed from changed saved values, a backward
that raised, a graph dropped from a tensor that requires grad, a stale snapshot restored or saved).
``observed``: what the finding describes happened (the other name read after the write), which is
the hazard if a copy was meant and the purpose if the write was meant to reach it: the run cannot
see which, so ``--fail-on confirmed`` does not fail on it.
``harmless-in-run``: the finding's line ran, and the hazard did not occur; ``why`` says what was
checked. ``unobservable``: the line ran but its write never reaches torch's hooks (a NumPy write,
``x.data = y``), or it is in a function that ran compiled by ``torch.compile`` (whose ops have no
line), so neither verdict can be given honestly. ``not-run``: the line never ran. A hazard with no static finding at its place becomes a
finding of its own, ``"origin": "runtime"``: a static miss.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional

from detachlint.findings import Finding, Location, Severity

from .rules import RULES
from .watch import claims_read, watched_sides


def _rows(f: Finding) -> range:
    return range(f.location.row, max(f.end_location.row, f.location.row) + 1)


# Events that show what the finding describes, not that it was unintended (see the docstring).
OBSERVED_ONLY = frozenset({"read-after-write"})


def _verdict(kinds) -> str:
    return "observed" if set(kinds) <= OBSERVED_ONLY else "confirmed"


def _matches(f: Finding, event, path: str) -> bool:
    if f.code not in event.rules:
        return False
    rows = set(_rows(f)) | {r.location.row for r in f.related}
    return any(site[0] == path and site[1] in rows for site in event.sites)


def _ran(observer, path: str, row: int) -> int:
    # Runs of its statement where the line counter saw them; ops issued by the line otherwise (an
    # op count is no run count: a line making two views issues two, so it is no floor).
    runs = observer.lines.counts.get(observer.lines.statement((path, row)), 0)
    return runs or observer.counts.get((path, row), 0)


def _watched(stats) -> str:
    """What became of the aliases a finding's line made: the promise behind ``harmless-in-run``."""
    parts = []
    if stats.died:
        parts.append(f"{stats.died} died")
    if stats.ended:
        parts.append(f"{stats.ended} still alive when the run ended")
    made = f"{stats.made} alias{'es' if stats.made != 1 else ''} made here, watched to the end ({', '.join(parts)})"
    if stats.changed:
        made += f"; {stats.changed} changed by the other side and never read afterwards"
    return made


def verdicts(observer) -> List[Finding]:
    """Every static finding in the files that ran, with ``confirmation``; then runtime-origin ones."""
    out: List[Finding] = []
    claimed = set()
    for state in observer.files.values():
        if state is None:
            continue
        for f in state.findings:
            events = [e for e in observer.events if e.finding is f
                      or (e.finding is None and _matches(f, e, state.path))]
            claimed.update(id(e) for e in events)
            ran = _ran(observer, state.path, f.location.row)
            if not ran:  # a multi-line statement may be counted on a later line
                ran = max((_ran(observer, state.path, r) for r in _rows(f)), default=0)
            out.append(dataclasses.replace(f, confirmation=_confirmation(observer, f, state.path, ran, events)))
    seen = {}
    for e in observer.events:
        if id(e) in claimed or not e.sites:
            continue
        path, line = e.sites[0]
        key = (e.rules[0], path, line)
        if key in seen:
            seen[key].confirmation["counts"]["hazards"] += 1
            continue
        finding = Finding(
            code=e.rules[0], message=f"observed at runtime with no static finding here: {e.evidence}",
            severity=Severity.ERROR, filename=path, location=Location(line, 0), end_location=Location(line, 0),
            confirmation={"verdict": _verdict([e.kind]), "source": "run", "origin": "runtime", "hazard": e.kind,
                          "evidence": [e.evidence], "counts": {"ran": _ran(observer, path, line),
                                                               "hazards": 1},
                          "short": f"{_verdict([e.kind])} at runtime ({e.kind}); no static finding"})
        seen[key] = finding
        out.append(finding)
    out.sort(key=lambda f: f.sort_key())
    return out


def _confirmation(observer, f: Finding, path: str, ran: int, events: list) -> Dict[str, Any]:
    rule = RULES.get(f.code)
    counts: Dict[str, Optional[int]] = {"ran": ran, "hazards": len(events)}
    writes = sum(observer.write_counts.get((path, r), 0) for r in _rows(f))
    if rule is not None and rule.counts == "writes":
        counts["writes"] = writes
    calls = [k for r in _rows(f) for k in observer.ctor_calls.get((path, r), [])]
    if rule is not None and rule.counts == "calls":
        counts["calls"] = len(calls)
    if events:
        verdict = _verdict(e.kind for e in events)
        events = sorted(events, key=lambda e: e.kind in OBSERVED_ONLY)  # what is wrong whatever was meant first
        kind = events[0].kind
        result = {"verdict": verdict, "source": "run", "origin": "static", "hazard": kind,
                  "evidence": [e.evidence for e in events[:5]], "counts": counts,
                  "short": f"{verdict} in run: {kind} ({len(events)}x)"}
        if verdict == "observed":
            result["why"] = ("what the finding describes happened; it is the hazard if a copy was meant, and the "
                             "purpose if the write was meant to reach the other name: the run cannot tell which")
        return result
    raised = [r for row in _rows(f) for r in observer.raised.get((path, row), [])] + \
        observer.raised_through.get(id(f), [])
    if raised and rule is not None and rule.writes:
        return _raised(counts, ran or writes, raised)
    region = next(((name, first) for (where, name, first), last in observer.compiled.items()
                   if where == path and first <= f.location.row <= last), None)
    # `ran` may count a compiled region's runs (the probes of lines.py run after its graph)
    if region is not None and not writes and not calls:
        return {"verdict": "unobservable", "source": "run", "origin": "static", "evidence": [], "counts": counts,
                "why": f"`{region[0]}` (line {region[1]}) ran as code compiled by torch.compile: the ops of a "
                       f"compiled region are not attributed to its lines, so the hazard could not be observed",
                "short": "unobservable (compiled)"}
    if not ran and not writes and not calls:
        return {"verdict": "not-run", "source": "run", "origin": "static", "evidence": [],
                "counts": counts, "why": "the flagged line never ran", "short": "not-run"}
    ran = ran or max(writes, len(calls))  # a line writing twice per run still ran once
    counts["ran"] = ran
    blind = sum(observer.blind_writes.get((path, r), 0) for r in _rows(f))
    if blind and rule is not None and rule.writes:
        return _unobservable(counts, ran, f"{blind} of its writes went to tensors without storage (meta device, "
                                          f"sparse), whose overlap with saved or aliased memory cannot be checked")
    if rule is None or rule.needs_write and not writes:
        return _unobservable(counts, ran, "no write reached torch's dispatcher from it (NumPy writes and `.data =` "
                                          "bypass it), so the hazard could not be observed")
    if observer.hooks_late is not None and rule.saved_hooks:
        where, alive = observer.hooks_late
        return _unobservable(counts, ran, f"what autograd saved was watched only from the first run of {where}, "
                                          f"when {alive} tensor(s) with a graph were already alive: a write to "
                                          f"what those graphs saved could not be seen")
    why = rule.harmless
    uses = [u for r in _rows(f) for u in observer.snap_unchanged.get((path, r), [])] if rule.snapshots else []
    if uses:
        why = "its snapshot was " + "; ".join(uses[:3]) + (f" (and {len(uses) - 3} more)" if len(uses) > 3 else "")
    if rule.watched is not None:
        stats = observer.watch.stats.get(id(f))
        opt_changed = sum(observer.snap_changed.get((path, r), 0) for r in _rows(f)) if rule.snapshots else 0
        if opt_changed:
            return _unobservable(counts, ran, f"the optimizer's live state changed after {opt_changed} of its "
                                              f"snapshots were taken, and a snapshot of optimizer state holds those "
                                              f"live tensors themselves: reads of it cannot be told from the "
                                              f"optimizer's own")
        if stats is not None and stats.kept_writes:
            return _unobservable(counts, ran, f"{stats.kept_writes} in-place write(s) went through the alias made "
                                              f"here after the call that made it had returned (a kept alias, such "
                                              f"as an EMA shadow): they changed the tensor it was taken from, "
                                              f"outside autograd, and whether that was meant cannot be seen at "
                                              f"runtime")
        arrays = observer.numpy_aliases.get(id(f), 0)
        if arrays and "alias" in watched_sides(f):
            return _unobservable(counts, ran, f"the alias made here is a NumPy array (`.numpy()`, {arrays}x): a "
                                              f"NumPy read never reaches torch, so whether one was read after the "
                                              f"write (by the caller, say) could not be seen")
        if stats is not None and stats.unclaimed:
            return _unobservable(counts, ran, f"the write changed what the alias made here shares memory with, and "
                                              f"that was read afterwards ({stats.unclaimed} of {stats.made}); the "
                                              f"finding does not claim such a read (the write may be meant to reach "
                                              f"it), and whether it was meant cannot be seen at runtime")
        if stats is not None and stats.made:
            if rule.intended_write is not None and not claims_read(f):
                why = rule.intended_write
            why += "; " + _watched(stats)
        elif not (rule.snapshots and observer.snap_seen.get((path, f.location.row))):
            return _unobservable(counts, ran, "the alias it makes never reached torch's dispatcher (a plain "
                                              "`b = a`, a NumPy array, or an alias made inside another function), "
                                              "so what was read after the write could not be watched")
    if calls:
        kinds = sorted(set(calls))
        why += f" (arguments: {', '.join(kinds)})"
    return {"verdict": "harmless-in-run", "source": "run", "origin": "static", "evidence": [], "counts": counts,
            "why": f"line ran {ran} time{'s' if ran != 1 else ''}; {why}",
            "short": f"harmless-in-run (ran {ran}x)"}


# torch refusing a write because its target's elements share memory (torch-semantics.md, `expand`)
_REFUSED = "to a single memory location"


def _raised(counts, ran: int, raised) -> Dict[str, Any]:
    """Writes at the finding that raised before writing: never harmless. torch refusing a write
    through memory-sharing elements (an `expand`ed alias) is the aliasing hazard, surfacing loudly."""
    refused = [(op, error) for op, error in raised if _REFUSED in error]
    if refused:
        op, error = refused[0]
        return {"verdict": "confirmed", "source": "run", "origin": "static", "hazard": "write-refused",
                "evidence": [f"`{op}` raised {error.split('. ')[0]}: torch refused the write "
                             f"({len(refused)}x)"], "counts": counts,
                "short": f"confirmed in run: write-refused ({len(refused)}x)"}
    op, error = raised[0]
    return _unobservable(counts, ran, f"{len(raised)} of its writes raised before writing (`{op}`: {error[:120]}): "
                                      f"what they would have changed could not be seen")


def _unobservable(counts, ran: int, why: str) -> Dict[str, Any]:
    # Not "harmless": the hazard could not have been seen, so that is what the verdict says.
    return {"verdict": "unobservable", "source": "run", "origin": "static", "evidence": [], "counts": counts,
            "why": f"line ran {ran} time{'s' if ran != 1 else ''}; {why}", "short": f"unobservable (ran {ran}x)"}

"""TAL401 stale-snapshot: a snapshot of live state kept across an update of that state."""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List

import torch

from detachlint.signature import Side, Signature

from ..recipes import (
    apply_write, Config, describe, is_array, is_write, leaves, need_numpy, NoReproducer, not_reproduced, np, Raised,
    raised_result, reproduced, values, write_text)
from .base import RuleRuntime, sides


def _state_dict(obj):
    return obj.state_dict()


SNAPSHOT_OPS: Dict[str, Callable[[Any], Any]] = {
    "state_dict": _state_dict, "copy": lambda s: s.copy() if isinstance(s, dict) else copy.copy(s),
    "dict": lambda s: dict(s), "deepcopy": copy.deepcopy, "clone": lambda s: _map(s, lambda t: t.clone()),
    "detach": lambda s: _map(s, lambda t: t.detach()), "data": lambda s: _map(s, lambda t: t.data),
    "cpu": lambda s: _map(s, lambda t: t.cpu()), "float": lambda s: _map(s, lambda t: t.float()),
    "to": lambda s: _map(s, lambda t: t.to(t.device)),
    "numpy": lambda s: need_numpy() and _map(s, lambda t: t.detach().cpu().numpy()),
    "parameters": lambda m: list(m.parameters()), "named_parameters": lambda m: dict(m.named_parameters()),
    "list": lambda s: list(s.values()) if isinstance(s, dict) else list(s),
    "values": lambda s: list(s.values()), "items": lambda s: dict(s), "weight": lambda m: m.weight,
    "bias": lambda m: m.bias, "tolist": lambda s: _map(s, lambda t: t.tolist()),
    "tuple": lambda s: tuple(s.values()) if isinstance(s, dict) else tuple(s), "OrderedDict": lambda s: dict(s),
    "array": lambda s: need_numpy() and _map(s, lambda t: np.array(t.detach().cpu())),
}
UPDATE_OPS = {"step", "backward", "zero_grad", "load_state_dict", "update"}
MODULE_SNAPSHOT_OPS = {"state_dict", "parameters", "named_parameters", "weight", "bias"}


def _map(s, fn):
    if isinstance(s, dict):
        return {k: fn(v) for k, v in s.items()}
    if isinstance(s, (list, tuple)):
        return [fn(v) for v in s]
    return fn(s)


def _frozen(s) -> List[Any]:
    out = []
    for v in leaves(s):
        if isinstance(v, torch.Tensor):
            out.append(v.detach().cpu().clone())
        elif is_array(v):
            out.append(torch.from_numpy(v.copy()))
        else:
            out.append(copy.deepcopy(v))
    return out


def reproduce(sig: Signature, config: Config) -> dict:
    ops = sig.ops or ("state_dict", "step")
    is_update = lambda op: op in UPDATE_OPS or is_write(op)  # noqa: E731 - an in-place write updates too
    snap_ops = [op for op in ops if not is_update(op)]
    updates = [op for op in ops if is_update(op)] or ["step"]
    writes = [op for op in updates if op not in UPDATE_OPS]
    optimizer_state = bool(sig.facts.optimizer)
    if optimizer_state:
        snap_ops = ["state_dict"] + snap_ops[1:]
    for op in snap_ops:
        if op not in SNAPSHOT_OPS:
            raise NoReproducer(f"no recipe for the snapshot op `{op}`")

    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2).to(config.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    forward = torch.compile(model, backend=config.backend) if config.compiled else model
    x = torch.randn(4, 3, device=config.device)

    def train_step():
        opt.zero_grad()
        loss = forward(x).pow(2).mean()
        loss.backward()
        opt.step()

    def update():
        if writes and not optimizer_state:  # e.g. an EMA: ``t.mul_(1 - tau).add_(o)`` under no_grad
            with torch.no_grad():
                for p in model.parameters():
                    apply_write(p, writes[0])
        elif "load_state_dict" in updates and not optimizer_state:
            other = torch.nn.Linear(3, 2).to(config.device)
            model.load_state_dict(other.state_dict())  # copy_ into the live parameters
        else:
            train_step()

    if optimizer_state:
        train_step()  # the momentum buffers exist after a first step
        owner = opt
    elif snap_ops and snap_ops[0] not in MODULE_SNAPSHOT_OPS:
        owner = model.weight  # ``w0 = model.weight.detach()``: a snapshot of one live tensor
    else:
        owner = model
    snap = owner
    for op in snap_ops:
        snap = SNAPSHOT_OPS[op](snap)
    if optimizer_state:
        snap = snap["state"]
    text = describe("optimizer" if optimizer_state else "model" if owner is model else "model.weight", snap_ops)
    kept = _frozen(snap)
    try:
        update()
    except Exception as exc:  # noqa: BLE001
        return raised_result(Raised(exc, "training step"), f"snap = {text}; optimizer.step()", loud_is_hazard=False)
    now = _frozen(snap)
    changed = [i for i, (a, b) in enumerate(zip(kept, now))
               if isinstance(a, torch.Tensor) and not (a.shape == b.shape and torch.equal(a, b))]
    if writes and not optimizer_state:
        context = f"snap = {text}; with torch.no_grad(): p{write_text(writes[0])}"
    elif "load_state_dict" in updates and not optimizer_state:
        context = f"snap = {text}; model.load_state_dict(other)"
    else:
        context = f"snap = {text}; loss.backward(); optimizer.step()"
    if changed:
        first = leaves(snap)[changed[0]]
        return reproduced("stale-snapshot", f"{context}: the snapshot changed with the live state "
                         f"({len(changed)} of {len(kept)} tensors), e.g. {values(kept[changed[0]])} -> {values(first)}",
                         changed=len(changed), total=len(kept))
    return not_reproduced(f"{context}: the snapshot kept its values ({len(kept)} tensors): a copy", seen="copy",
                         total=len(kept))


RULE = RuleRuntime(
    "TAL401", reproduce, "the snapshot was never read, restored or saved after the live tensors changed",
    counts="writes", writes=True, watched=sides(Side.ALIAS), snapshots=True)

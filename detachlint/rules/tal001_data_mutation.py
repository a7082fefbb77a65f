"""TAL001 data-mutation: a write through ``Tensor.data`` while a graph that may have saved the
tensor is pending: the alias autograd cannot see makes the gradient silently wrong. Also a write
into a weight that ``weight_norm`` or a parametrization recomputes: it is lost (``recomputed.py``)."""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from ..analysis.data_use import DataUse
from ..findings import Severity
from ..signature import Signature, Source
from .data_write import DataWrite, alias_only, landing


class DataMutation(DataWrite):
    """
    ## What it does
    Flags writes through `Tensor.data` while a graph that may have saved the tensor is still
    waiting for `backward()`: between computing a loss and calling its `backward()`, inside
    `forward()` after the tensor was used, or in a forward hook. The writes are in-place methods
    (`p.data.mul_(0.5)`), item and slice assignment (`p.data[mask] = 0`), augmented assignment
    (`p.data *= 2`), rebinding (`p.data = new`), `torch.nn.init.*_(p.data)` and `out=p.data`.
    A backward in the other arm of an `if` than the write (`if fp16: ... p.data.copy_(m)` and
    `elif train: loss.backward()`) is not pending: no pass runs both.

    ## Why is this bad?
    `p.data` is an alias of `p`'s storage with a fresh version counter, so autograd cannot see
    the write. The pending backward computes the gradient from the new values: no error, wrong
    numbers. The same write without `.data` raises at backward ("modified by an inplace
    operation") instead. Inside `forward()` a graph is pending where an op before the write may
    have saved the tensor (a product, a module call; not a view, a sum, `+` or a comparison of
    it; not a project function that reads only its shape or address, nor a project
    `autograd.Function` whose forward keeps other arguments only) in a graph that may be
    backpropagated (not one whose values only feed `argmin` or the indices of `x.max(1)`), or
    where the tensor is a result of the graph and a later op backpropagates through it:
    autograd then sends gradient to the cells the write replaced (not to cells set to -inf
    before a softmax, sigmoid, exp or logsumexp, which get none; and cells set to exactly -inf,
    not -1e9, before a `log_softmax` or `logsigmoid` get some only from a loss that reads their
    -inf result and is then infinite: such a write is TAL003, with that note). A `.data` write
    where no graph is visible (weight initialisation, an optimizer-style update after `backward()`, an EMA of buffers no
    op saved, a forward hook's round trip of a tensor's own values through another floating
    dtype and back, a reset of `x.grad.data` between two backwards: autograd saves no `.grad`
    unless `create_graph=True` or an op of the graph took it) is TAL003 (data-write-idiom), the discouraged idiom, not this hazard:
    `ignore = ["TAL003"]` keeps this rule and drops that one. So is an op that changes only a
    shape, strides or storage (`p.data.resize_(n)`, `p.data.t_()`, `p.data.set_(q)`): through
    `.data` it changes only the alias, no value of `p`. A value write chained after a resize
    (`p.data.resize_(n).copy_(q)`) lands in `p`'s memory and is this rule's.

    Also a write through `.data` into a weight that the module computes from other tensors, which
    is lost whatever is pending: `self.conv1 = weight_norm(nn.Conv1d(...))` (also through a
    helper, `def WNConv1d(*a): return weight_norm(nn.Conv1d(*a))` or a lambda, in the class or a
    base class) and then `self.conv1.weight.data.normal_(0, 0.01)`; or a function handed to
    `Module.apply` by a class that wraps modules so in `__init__` (`self.apply(weights_init)` after it,
    where `weights_init` writes `m.weight.data`, unless an `isinstance` or class-name test around
    the write excludes the wrapped class). `torch.nn.utils.weight_norm` recomputes `weight` from
    `weight_g` and `weight_v` in a forward pre-hook, so the write is gone at the next forward;
    `torch.nn.utils.parametrizations.weight_norm` and `spectral_norm` compute it on every read, so
    the write lands in a temporary (measured: `tests/test_catalog.py`). The old
    `torch.nn.utils.spectral_norm` is not flagged: its `weight` shares `weight_orig`'s memory until
    the first forward, so an initialisation reaches `weight_orig`. Initialise the module before
    wrapping it, or write `weight_v` (`parametrizations.weight.original1`), which sets only the
    direction. The bias, and `weight_g` / `weight_v` themselves, stay TAL003's. The same write
    without `.data` (`nn.init.normal_(self.conv1.weight)`) is TAL301's lost write.

    ## Example
    ```python
    loss = criterion(model(x), y)
    for p in model.parameters():
        p.data.mul_(0.5)          # the pending backward reads the halved weights
    loss.backward()
    ```

    ## Use instead
    ```python
    loss = criterion(model(x), y)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.5)
    ```
    or `p.detach().mul_(0.5)`, which shares the version counter, so a write that would corrupt
    a pending backward raises instead.

    ## Fix safety
    No fix: where a graph is pending, no edit keeps what the program computes. The message names
    the write; the notes name the pending backward (a `backward()` of a loss that came from
    outside the function counts: its graph was built before) and what to do instead.
    """

    code = "TAL001"
    severity = Severity.ERROR
    summary = "write through Tensor.data while a graph that saved the tensor is pending, or lost to a recomputed weight"

    def report_write(self, node: cst.Attribute, use: DataUse, statement: cst.CSTNode,
                     context: Optional[Tuple[str, str]], pending: Optional[cst.CSTNode]) -> None:
        owner = self.ctx.code_for(node.value)
        where, because = context or ("", "")
        remedy = (f"To keep the values, write after `{self.ctx.code_for(pending)}`, under `with torch.no_grad():`."
                  if pending is not None else
                  f"To keep the values, compute with an updated copy of `{owner}` instead, or write after "
                  f"backward() under `with torch.no_grad():`.")
        notes = (f"{because}: autograd cannot see the write, so the gradient will be silently wrong.", remedy)
        what, lands = self.what(use), landing(use)
        if lands is not None:  # ``X.data.resize_(s).copy_(t)``: the resize stays on the alias, the copy lands in X
            what = f"`.{lands}()` after {what}"
            notes = (f"`.{use.op}()` changes only the `.data` alias (`{owner}` keeps its {alias_only(use)}); the "
                     f"values `.{lands}()` writes land in `{owner}`'s memory.", *notes)
        related = [(pending, "the pending backward() that reads the changed values")] if pending is not None else []
        self.ctx.report(use.reported, self.code, f"{what} changes `{owner}` {where}", self.severity,
                        related, signature=Signature(self.code, (use.op,) if use.op else (), write=use.write,
                                                     source=Source(pending_graph=True)),
                        notes=notes)

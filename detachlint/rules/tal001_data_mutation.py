"""TAL001 data-mutation: a write through ``Tensor.data`` while a graph that may have saved the
tensor is pending: the alias autograd cannot see makes the gradient silently wrong."""

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
    summary = "write through Tensor.data while a graph that saved the tensor is pending"

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

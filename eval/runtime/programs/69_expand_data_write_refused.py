# truth: hazard
# rule: TAL002
# category: expand-write
# static: 15
import torch
from torch import nn

torch.manual_seed(0)


def add_row_offsets(bias: nn.Parameter, n: int):
    """Meant: shift the shared bias once per row of a batch of n, in place, outside autograd.
    The rows are an `expand` of one row: torch refuses the write, and the fallback skips it."""
    try:
        rows = bias.data.expand(n, -1)
        rows.add_(torch.arange(n, dtype=bias.dtype).unsqueeze(1))
        return True
    except RuntimeError:
        return False


bias = nn.Parameter(torch.zeros(1, 3))
applied = add_row_offsets(bias, 4)
print("applied", applied, bias.tolist())
# check: the offsets (0 + 1 + 2 + 3 on one shared row) were meant to reach the bias
hazard = not applied or not torch.allclose(bias.detach(), torch.full((1, 3), 6.0))
print("truth: hazard" if hazard else "truth: harmless")

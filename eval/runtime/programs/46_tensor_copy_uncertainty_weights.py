# truth: hazard
# rule: TAL101
# category: constructors
# static: 12
import torch
from torch import nn

torch.manual_seed(0)


def to_float_tensor(value):
    return torch.tensor(value, dtype=torch.float32)


class UncertaintyWeighting(nn.Module):
    """Multi-task loss weighting with learned log-variances (Kendall et al.)."""

    def __init__(self, n_tasks):
        super().__init__()
        self.log_vars = nn.Parameter(torch.zeros(n_tasks))

    def forward(self, task_losses):
        precision = to_float_tensor(torch.exp(-self.log_vars))
        return (precision * task_losses).sum() + self.log_vars.sum()


weighting = UncertaintyWeighting(2)
with torch.no_grad():
    weighting.log_vars.copy_(torch.tensor([0.5, -0.3]))
task_losses = torch.tensor([2.0, 0.5])
total = weighting(task_losses)
total.backward()
grad = weighting.log_vars.grad
print("total", round(total.item(), 5), "grad", [round(v, 5) for v in grad.tolist()])

# check: d/ds [exp(-s) * L + s] = 1 - exp(-s) * L
expected = 1 - torch.exp(-torch.tensor([0.5, -0.3])) * task_losses
hazard = not torch.allclose(grad, expected)
print("truth: hazard" if hazard else "truth: harmless")

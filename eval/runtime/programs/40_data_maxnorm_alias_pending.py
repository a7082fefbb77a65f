# truth: hazard
# rule: TAL002
# category: data
# static: 17
import copy

import torch
from torch import nn

torch.manual_seed(0)


class MaxNorm:
    """Max-norm constraint on the rows of a layer's weight."""

    def __init__(self, layer, max_norm):
        self.w = layer.weight.data
        self.max_norm = max_norm

    def apply(self):
        self.w.renorm_(2, 0, self.max_norm)


model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
reference = copy.deepcopy(model)  # for the check
constraint = MaxNorm(model[2], max_norm=0.2)
x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))

loss = nn.functional.cross_entropy(model(x), y)
constraint.apply()
loss.backward()
print("loss", round(loss.item(), 5), "first-layer grad norm", round(model[0].weight.grad.norm().item(), 5))

# check: the gradients must be those of the loss that was computed
nn.functional.cross_entropy(reference(x), y).backward()
hazard = not torch.allclose(model[0].weight.grad, reference[0].weight.grad)
print("truth: hazard" if hazard else "truth: harmless")

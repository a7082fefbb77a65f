# truth: harmless
# rule: none
# category: transparency
import copy
from collections import Counter

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

torch.manual_seed(0)


class AtenCounter(TorchDispatchMode):
    """Counts the aten ops of a training step, in-place ones separately."""

    def __init__(self):
        super().__init__()
        self.ops = Counter()
        self.inplace = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        self.ops[name] += 1
        if name.endswith("_") and not name.startswith("_"):
            self.inplace += 1
        return func(*args, **(kwargs or {}))


model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
reference = copy.deepcopy(model)  # for the check
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x, y = torch.randn(8, 4), torch.randn(8, 1)
with AtenCounter() as counter:
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
for name, n in sorted(counter.ops.items()):
    print(f"{name}: {n}")
print("in-place ops", counter.inplace, "total", sum(counter.ops.values()))

# check: the step under the mode is the same step as without it
ref_loss = nn.functional.mse_loss(reference(x), y)
ref_loss.backward()
with torch.no_grad():
    expected = reference[0].weight - 0.1 * reference[0].weight.grad
hazard = not torch.allclose(model[0].weight, expected)
print("truth: hazard" if hazard else "truth: harmless")

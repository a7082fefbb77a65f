# truth: harmless
# rule: none
# category: transparency
from collections import Counter

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

torch.manual_seed(0)


class CallCounter(TorchFunctionMode):
    """Counts the torch functions a training step calls (a poor man's profiler)."""

    def __init__(self):
        super().__init__()
        self.calls = Counter()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls[getattr(func, "__name__", str(func))] += 1
        return func(*args, **(kwargs or {}))


model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
with CallCounter() as counter:
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    scale = torch.tensor([loss.item()])
    snapshot = {k: v.clone() for k, v in model.state_dict().items()}
    opt.step()
for name, n in sorted(counter.calls.items()):
    print(f"{name}: {n}")
print("loss", round(loss.item(), 5), "scale", scale.tolist(), "snap keys", sorted(snapshot))

# check: the snapshot is a copy (it differs from the stepped weights)
hazard = torch.equal(snapshot["0.weight"], model[0].weight)
print("truth: hazard" if hazard else "truth: harmless")

# truth: harmless
# rule: none
# category: default-device
import numpy as np
import torch
from torch import nn

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)


def show(name, t):
    print(f"{name:10s} {t.dtype} {t.device}")


show("tensor", torch.tensor([1.0, 2.0]))
show("scalar", torch.tensor(3.5))
show("int", torch.tensor([1, 2]))
show("from f32", torch.tensor(np.ones(2, dtype=np.float32)))
show("zeros", torch.zeros(2))
show("arange", torch.arange(3.0))
show("legacy", torch.Tensor(2, 2))
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
show("weight", model[0].weight)

opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 3)
y = x.sum(1, keepdim=True)
losses = []
for _ in range(5):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
print("losses", [repr(v) for v in losses])

# check: training in float64 made progress and stayed in float64
hazard = not (losses[-1] < losses[0] and model[0].weight.grad.dtype == torch.float64)
print("truth: hazard" if hazard else "truth: harmless")

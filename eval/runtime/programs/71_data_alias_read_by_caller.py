# truth: hazard
# rule: TAL002
# category: data
# static: 12
import torch
from torch import nn

torch.manual_seed(0)


def initial_weights(model: nn.Module):
    return [p.data for p in model.parameters()]


model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
start = initial_weights(model)
reference = [p.detach().clone() for p in model.parameters()]  # for the check
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for _ in range(5):
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
drift = sum((p - s).abs().sum().item() for p, s in zip(model.parameters(), start))
print("drift from init", round(drift, 4))
# check: the drift must be measured from the initial weights
true_drift = sum((p - r).abs().sum().item() for p, r in zip(model.parameters(), reference))
hazard = abs(drift - true_drift) > 1e-6
print("truth: hazard" if hazard else "truth: harmless")

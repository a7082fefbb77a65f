# truth: hazard
# rule: TAL301
# category: returned-alias
# static: 17
import torch
from torch import nn

torch.manual_seed(0)


def clip_and_collect(model, max_norm):
    """Clip gradients in place; return the flattened pre-clip gradients for the histogram logger."""
    flat = [p.grad.reshape(-1) for p in model.parameters()]
    total = torch.cat(flat).norm()
    coef = min(1.0, max_norm / (total.item() + 1e-6))
    for p in model.parameters():
        p.grad.mul_(coef)
    return flat


def histogram(values, bins=4):
    return torch.histc(values, bins=bins, min=-2.0, max=2.0).tolist()


model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
x, y = torch.randn(32, 4) * 3, torch.randn(32, 1) * 5
loss = (model(x) - y).pow(2).mean()
loss.backward()
raw = torch.cat([p.grad.reshape(-1).clone() for p in model.parameters()])  # for the check
pre_clip = clip_and_collect(model, max_norm=0.1)
logged = torch.cat(pre_clip)
print("pre-clip histogram", histogram(logged))
print("pre-clip max", round(logged.abs().max().item(), 4))

# check: the logger should have seen the unclipped gradients
hazard = not torch.allclose(logged, raw)
print("truth: hazard" if hazard else "truth: harmless")

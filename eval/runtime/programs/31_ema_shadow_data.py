# truth: hazard
# rule: TAL002
# category: ema-shadow
# static: 16
import copy

import torch
from torch import nn

torch.manual_seed(0)


class EMA:
    def __init__(self, model, decay=0.9):
        self.decay = decay
        self.shadow = [p.data for p in model.parameters()]

    @torch.no_grad()
    def update(self, model):
        for s, p in zip(self.shadow, model.parameters()):
            s.mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)


model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
ref_model = copy.deepcopy(model)  # the same training without EMA, for the check
ref_shadow = [p.detach().clone() for p in model.parameters()]
ema = EMA(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
ref_opt = torch.optim.SGD(ref_model.parameters(), lr=0.05)
for step in range(10):
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for m, o in ((model, opt), (ref_model, ref_opt)):
        o.zero_grad()
        nn.functional.mse_loss(m(x), y).backward()
        o.step()
    ema.update(model)
    with torch.no_grad():
        for s, p in zip(ref_shadow, ref_model.parameters()):
            s.mul_(0.9).add_(p, alpha=0.1)
print("model weight sum", round(model[0].weight.sum().item(), 4), "ref", round(ref_model[0].weight.sum().item(), 4))

# check: the EMA must not change the model, and the shadow must be the average
hazard = not (torch.allclose(model[0].weight, ref_model[0].weight) and torch.allclose(ema.shadow[0], ref_shadow[0]))
print("truth: hazard" if hazard else "truth: harmless")

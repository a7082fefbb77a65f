# truth: hazard
# rule: TAL401
# category: comprehension
# static: 15
import torch
from torch import nn

torch.manual_seed(0)


class L2SP:
    """L2-SP regulariser: keep fine-tuned weights close to the pretrained starting point."""

    def __init__(self, model, strength):
        self.anchor = list(p.detach() for p in model.parameters())
        self.strength = strength

    def penalty(self, model):
        return self.strength * sum((p - a).pow(2).sum() for p, a in zip(model.parameters(), self.anchor))


model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 2))
pretrained = [p.detach().clone() for p in model.parameters()]  # for the check
reg = L2SP(model, strength=10.0)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(32, 6), torch.randn(32, 2) * 3
for step in range(30):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y) + reg.penalty(model)
    loss.backward()
    opt.step()
print("final penalty", round(reg.penalty(model).item(), 6))

# check: the penalty should measure the distance from the pretrained weights
true_penalty = 10.0 * sum((p.detach() - a).pow(2).sum() for p, a in zip(model.parameters(), pretrained))
hazard = abs(true_penalty.item() - reg.penalty(model).item()) > 1e-6
print("truth: hazard" if hazard else "truth: harmless")

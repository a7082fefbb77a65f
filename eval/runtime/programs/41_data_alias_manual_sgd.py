# truth: harmless
# rule: TAL002
# category: data
# static: 15
import torch
from torch import nn

torch.manual_seed(0)


def sgd_update(model, lr, weight_decay):
    for p in model.parameters():
        if p.grad is None:
            continue
        w = p.data
        w.mul_(1 - lr * weight_decay)
        w.add_(p.grad, alpha=-lr)


model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 1))
x = torch.randn(64, 5)
y = x.sum(1, keepdim=True)
losses, ok = [], True
for step in range(15):
    before = [p.detach().clone() for p in model.parameters()]  # for the check
    model.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    sgd_update(model, lr=0.05, weight_decay=1e-4)
    for p, b in zip(model.parameters(), before):
        ok = ok and torch.allclose(p, b * (1 - 0.05 * 1e-4) - 0.05 * p.grad)
    losses.append(round(loss.item(), 4))
print("losses", losses[0], "->", losses[-1])

# check: every update is exactly SGD with weight decay
hazard = not ok
print("truth: hazard" if hazard else "truth: harmless")

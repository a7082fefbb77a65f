# truth: hazard
# rule: TAL202
# category: saved-tensor
# static: 18
import torch
from torch import nn

torch.manual_seed(0)


class PoissonRegressor(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, 1)

    def forward(self, x):
        rate = torch.exp(self.lin(x))
        rate.clamp_(max=1e4)  # guard against overflow
        return rate


def train(model, x, counts, epochs=3):
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    history = []
    for _ in range(epochs):
        opt.zero_grad()
        rate = model(x)
        loss = (rate - counts * torch.log(rate)).mean()
        loss.backward()
        opt.step()
        history.append(round(loss.item(), 5))
    return history


model = PoissonRegressor(3)
x = torch.randn(64, 3)
counts = torch.poisson(torch.exp(x[:, :1]))
try:
    print("losses", train(model, x, counts))
    failed = False
except RuntimeError as exc:
    print("training crashed:", str(exc).split(";")[0][:80])
    failed = True

# check: a version-counter error at backward is the hazard
hazard = failed
print("truth: hazard" if hazard else "truth: harmless")

# truth: harmless
# rule: TAL201
# category: ema-shadow
import torch
from torch import nn

torch.manual_seed(0)


class ModelEMA:
    def __init__(self, model, decay=0.99):
        self.decay = decay
        self.shadow = {name: p.detach().clone() for name, p in model.named_parameters()}

    def update(self, model):
        for name, p in model.named_parameters():
            self.shadow[name].mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)

    def evaluate(self, model, x, y):
        backup = {n: p.detach().clone() for n, p in model.named_parameters()}
        with torch.no_grad():
            for n, p in model.named_parameters():
                p.copy_(self.shadow[n])
            loss = nn.functional.mse_loss(model(x), y).item()
            for n, p in model.named_parameters():
                p.copy_(backup[n])
        return loss


model = nn.Linear(4, 1)
ema = ModelEMA(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 4), torch.randn(64, 1)
for step in range(20):
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    ema.update(model)
live = nn.functional.mse_loss(model(x), y).item()
print("live loss", round(live, 5), "ema loss", round(ema.evaluate(model, x, y), 5))

# check: the shadow is an average that lags the trained weights
hazard = torch.allclose(ema.shadow["weight"], model.weight.detach())
print("truth: hazard" if hazard else "truth: harmless")

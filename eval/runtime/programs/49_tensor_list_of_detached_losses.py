# truth: harmless
# rule: TAL102
# category: constructors
# static: 19
import torch
from torch import nn

torch.manual_seed(0)


class EpochLogger:
    def __init__(self):
        self.batch_losses = []

    def log(self, loss):
        self.batch_losses.append(loss.detach())

    def summary(self):
        values = torch.tensor(self.batch_losses)
        return values.mean().item(), values.std().item()


model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
logger = EpochLogger()
items = []
for _ in range(6):
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    logger.log(loss)
    items.append(loss.item())
mean, std = logger.summary()
print("epoch loss", round(mean, 5), "+-", round(std, 5))

# check: the summary equals the mean of the batch losses, and training got gradients
hazard = abs(mean - sum(items) / len(items)) > 1e-6 or model.weight.grad is None
print("truth: hazard" if hazard else "truth: harmless")

# truth: harmless
# rule: none
# category: transparency
import torch
from torch import nn
from torch._dynamo.utils import counters

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return x + torch.tanh(self.fc(self.norm(x)))


@torch.compile(backend="eager")
def loss_fn(model, x, y):
    pred = model(x)
    return (pred - y).pow(2).mean()


model = nn.Sequential(Block(8), Block(8))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(16, 8), torch.randn(16, 8)
losses = []
for _ in range(4):
    opt.zero_grad()
    loss = loss_fn(model, x, y)
    loss.backward()
    opt.step()
    losses.append(round(loss.item(), 5))
print("losses", losses)
print("unique graphs", counters["stats"]["unique_graphs"], "graph breaks", sum(counters["graph_break"].values()))

# check: the compiled loss equals the eager one
with torch.no_grad():
    eager = (model(x) - y).pow(2).mean().item()
    compiled = loss_fn(model, x, y).item()
hazard = abs(eager - compiled) > 1e-6
print("truth: hazard" if hazard else "truth: harmless")

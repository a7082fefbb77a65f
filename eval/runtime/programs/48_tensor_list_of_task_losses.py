# truth: hazard
# rule: TAL102
# category: constructors
# static: 24
import torch
from torch import nn

torch.manual_seed(0)


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(6, 16)
        self.cls = nn.Linear(16, 3)
        self.reg = nn.Linear(16, 1)

    def forward(self, x):
        h = torch.relu(self.trunk(x))
        return self.cls(h), self.reg(h)


def weighted_total(losses, weights):
    stacked = torch.tensor([losses["cls"], losses["reg"]])
    return (stacked * weights).sum()


net = MultiTaskNet()
task_weights = nn.Parameter(torch.ones(2))
opt = torch.optim.SGD(list(net.parameters()) + [task_weights], lr=0.1)
x, labels, targets = torch.randn(32, 6), torch.randint(0, 3, (32,)), torch.randn(32, 1)
logits, pred = net(x)
losses = {"cls": nn.functional.cross_entropy(logits, labels), "reg": nn.functional.mse_loss(pred, targets)}
total = weighted_total(losses, task_weights)
opt.zero_grad()
total.backward()
opt.step()
print("total", round(total.item(), 5), "trunk grad", net.trunk.weight.grad is not None)

# check: the network must receive a gradient from the total loss
hazard = net.trunk.weight.grad is None or net.trunk.weight.grad.abs().sum().item() == 0
print("truth: hazard" if hazard else "truth: harmless")

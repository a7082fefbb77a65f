# truth: hazard
# rule: TAL201
# category: detach-write
# static: 19
import copy

import torch
from torch import nn

torch.manual_seed(0)


def sparsity_report(model, threshold):
    """How sparse would each layer be if pruned at `threshold`? (analysis only, the model is kept)"""
    report = {}
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            w = module.weight.detach()
            w[w.abs() < threshold] = 0.0
            report[name] = round((w == 0).float().mean().item(), 3)
    return report


@torch.no_grad()
def accuracy(model, x, y):
    return (model(x).argmax(1) == y).float().mean().item()


model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
untouched = copy.deepcopy(model)  # for the check
x, y = torch.randn(200, 10), torch.randint(0, 3, (200,))
print("sparsity at 0.1:", sparsity_report(model, 0.1))
print("accuracy after the report", accuracy(model, x, y))

# check: the report must not have changed the model
hazard = not all(torch.equal(a, b) for a, b in zip(model.parameters(), untouched.parameters()))
print("truth: hazard" if hazard else "truth: harmless")

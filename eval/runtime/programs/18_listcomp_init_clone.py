# truth: harmless
# rule: TAL401
# category: comprehension
import copy

import torch
from torch import nn

torch.manual_seed(0)


def make_model():
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))


def train(model, data, target, steps=20):
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.mse_loss(model(data), target).backward()
        opt.step()


def distance_from_init(model, init):
    return sum((p.detach() - p0).pow(2).sum() for p, p0 in zip(model.parameters(), init)).sqrt().item()


model = make_model()
reference = copy.deepcopy(model)  # for the check
init = [p.detach().clone() for p in model.parameters()]
x, y = torch.randn(64, 8), torch.randn(64, 1)
train(model, x, y)
moved = distance_from_init(model, init)
print("distance from init", round(moved, 6))

# check: the snapshot equals an independent copy of the initial weights
true_moved = distance_from_init(model, [p.detach().clone() for p in reference.parameters()])
hazard = abs(true_moved - moved) > 1e-6
print("truth: hazard" if hazard else "truth: harmless")

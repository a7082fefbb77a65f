# truth: harmless
# rule: none
# category: transparency
import os
import traceback
import warnings

import torch
from torch import nn

torch.manual_seed(0)


def as_target(t):
    return torch.tensor(t)


def where(frames):
    return [(os.path.basename(f.filename), f.name) for f in frames]


labels = torch.tensor([0.0, 1.0, 1.0])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    target = as_target(labels)
    nn.functional.mse_loss(torch.zeros(3, 1), target)
for w in caught:
    print(f"{w.category.__name__} at {os.path.basename(w.filename)}:{w.lineno}: {str(w.message)[:60]}")

model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(5, 1))
try:
    model(torch.randn(2, 4))
except RuntimeError as exc:
    print("RuntimeError:", str(exc)[:60])
    print("frames", where(traceback.extract_tb(exc.__traceback__)))
print("caller", where(traceback.extract_stack())[-1:])

# check: torch.tensor(t) of a tensor that does not require grad is an independent copy
target.add_(1)
hazard = not torch.equal(labels, torch.tensor([0.0, 1.0, 1.0]))
print("truth: hazard" if hazard else "truth: harmless")

# truth: hazard
# rule: TAL401
# category: numpy
# static: 21
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)


def fit(layer, x, y, steps, lr=0.1):
    history = []
    for _ in range(steps):
        loss = nn.functional.mse_loss(layer(x), y)
        layer.zero_grad()
        loss.backward()
        with torch.no_grad():
            layer.weight -= lr * layer.weight.grad
            layer.bias -= lr * layer.bias.grad
        history.append(layer.weight.detach().numpy())
    return history


layer = nn.Linear(3, 1)
x = torch.randn(64, 3)
y = x @ torch.tensor([[1.0], [-2.0], [0.5]])
hist = fit(layer, x, y, steps=5)
trajectory = np.stack(hist)[:, 0, :]
print("weight trajectory\n", np.round(trajectory, 4))

# check: gradient descent moves the weights, so the recorded steps must differ
hazard = np.allclose(trajectory[0], trajectory[-1])
print("truth: hazard" if hazard else "truth: harmless")

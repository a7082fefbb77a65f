"""Case (textbook): a value computed in one function is written in place there and backpropagated by the caller.

Source: issue 40's shape list ("a plain function `y = torch.sigmoid(x); y += 1; return y.sum()`, the
caller runs backward").
Shape: TAL202 beyond one function (the backward is in the caller).
"""
import torch


def shifted_score(x):
    y = torch.sigmoid(x)
    y += 1  # hazard: sigmoid saved y
    return y.sum()


w = torch.randn(5, requires_grad=True)
loss = shifted_score(w * 2)
loss.backward()

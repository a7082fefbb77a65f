"""Case: an item of exp's output is overwritten before backward (exp saves its output).

Source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
(`uexp = u.exp(); loss = uexp.sum(); uexp[0] = 666; loss.backward()` raises; writing `u` is fine).
Shape: a saved output written by item assignment.
"""
import torch


def scores(t):
    u = 2 * t
    uexp = u.exp()
    loss = uexp.sum()
    uexp[0] = 666  # hazard
    return loss, uexp


t = torch.arange(3.0, requires_grad=True)
loss, _ = scores(t)
loss.backward()

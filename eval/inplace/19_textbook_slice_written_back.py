"""Case (textbook): a slice is read, used by an op that saves it, and the result is assigned back into its base.

Source: issue 40's shape list ("a slice read (and saved) then assigned back into its base").
Shape: view of a tensor saved (sin saves its input), base written through item assignment.
"""
import torch


def rotate_first_two(h):
    a = h[:, :2]
    h[:, :2] = torch.sin(a)  # hazard: sin saved a, a view of h
    return h


x = torch.randn(3, 4, requires_grad=True)
h = x * 1.5
rotate_first_two(h).sum().backward()

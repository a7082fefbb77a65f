"""Fixed twin (textbook): a custom autograd.Function saves its input with ctx.save_for_backward; the caller then writes it.

Source: issue 40's shape list ("inputs kept by a custom `autograd.Function` through
`ctx.save_for_backward`").
Shape: a tensor saved by a custom Function, written in place before backward.
"""
import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad


w = torch.randn(4, requires_grad=True)
h = w * 2
y = Cube.apply(h)
h = h.clamp(-1, 1)  # fixed: out of place
y.sum().backward()

"""Fixed twin: chained residual pooling adds each pooled path in place into the ReLU output it started from.

Source: https://github.com/thomasjpfan/pytorch_refinenet/issues/2 (RefineNet raises "one of the
variables needed for gradient computation has been modified by an inplace operation"; fixed by the
maintainer). Shape as in RefineNet's CRP block: `x = relu(x); path = x; ...; x += path`.
Shape: residual `+=` on an output a module saved.
"""
import torch
from torch import nn


class ChainedResidualPool(nn.Module):
    def __init__(self, c, n=2):
        super().__init__()
        self.relu = nn.ReLU()
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.MaxPool2d(5, 1, 2), nn.Conv2d(c, c, 3, padding=1, bias=False)) for _ in range(n)
        )

    def forward(self, x):
        x = self.relu(x)
        path = x
        for block in self.blocks:
            path = block(path)
            x = x + path  # fixed
        return x


torch.manual_seed(0)
crp = ChainedResidualPool(4)
crp(torch.randn(1, 4, 8, 8, requires_grad=True)).sum().backward()

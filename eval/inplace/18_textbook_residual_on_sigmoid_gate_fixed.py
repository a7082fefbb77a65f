"""Fixed twin (textbook): residual `+=` on a gate produced by an nn.Sigmoid attribute (Sigmoid saved its output).

Source: issue 40's shape list ("residual `+=` on an output another module saved").
Shape: module held as an attribute; the write is in forward, the backward in the caller.
"""
import torch
from torch import nn


class GatedResidual(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        out = self.gate(self.proj(x))
        out = out + x  # fixed
        return out


torch.manual_seed(0)
GatedResidual(4)(torch.randn(2, 4)).pow(2).sum().backward()

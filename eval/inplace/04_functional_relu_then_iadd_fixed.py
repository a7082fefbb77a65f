"""Fixed twin: the residual is added in place to an F.relu output inside a 3-D encoder block.

Source: https://github.com/iMED-Lab/CS-Net/pull/6 ("Changing the `out += residual` to
`out = out + residual` does fix the issue").
Shape: residual `+=` on an output the graph saved (functional relu).
"""
import torch
import torch.nn.functional as F
from torch import nn


class ResEncoder3d(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv3d(cin, cout, 3, padding=1)
        self.conv2 = nn.Conv3d(cout, cout, 3, padding=1)
        self.skip = nn.Conv3d(cin, cout, 1)

    def forward(self, x):
        residual = self.skip(x)
        out = F.relu(self.conv1(x))
        out = F.relu(self.conv2(out))
        out = out + residual  # fixed
        return F.relu(out)


torch.manual_seed(0)
ResEncoder3d(1, 2)(torch.randn(1, 1, 5, 5, 5)).sum().backward()

"""Case: `out += residual` on the output of a ReLU (ReLU saved its output).

Source: https://github.com/iMED-Lab/ER-Net/pull/3 ("out+=residual is a inplace operation which will
cause errors ... output 0 of ReluBackward0"; fix: `out = out + residual`).
Shape: residual `+=` on an output another module saved.
"""
import torch
from torch import nn


class ResEncoder(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv3d(cin, cout, 3, padding=1)
        self.bn1 = nn.BatchNorm3d(cout)
        self.relu = nn.ReLU()
        self.conv1x1 = nn.Conv3d(cin, cout, 1)

    def forward(self, x):
        residual = self.conv1x1(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out += residual  # hazard
        return self.relu(out)


torch.manual_seed(0)
enc = ResEncoder(1, 4)
enc(torch.randn(2, 1, 6, 6, 6)).mean().backward()

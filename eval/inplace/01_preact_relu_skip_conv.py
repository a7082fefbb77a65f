"""Case: a pre-activation block's inplace ReLU writes the block input that the skip conv saved.

Source: https://github.com/osmr/imgclsmob/issues/13 (Xception: `self.activ = nn.ReLU(inplace=True)`,
`x = self.activ(x)` inside the block; removing inplace=True fixes the error).
Shape: module held as an attribute (nn.ReLU(inplace=True)) writes a tensor another module saved.
"""
import torch
from torch import nn


class XceptionBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.identity_conv = nn.Conv2d(c, c, 1)
        self.activ = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        identity = self.identity_conv(x)  # conv saves its input x
        x = self.activ(x)  # hazard: writes x in place
        return self.conv(x) + identity


torch.manual_seed(0)
stem = nn.Conv2d(3, 8, 3, padding=1)
block = XceptionBlock(8)
out = block(stem(torch.randn(2, 3, 8, 8)))
out.mean().backward()

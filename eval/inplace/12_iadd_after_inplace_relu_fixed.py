"""Fixed twin: an in-place addition after an in-place ReLU (the ReLU saved its result).

Source: https://github.com/pytorch/pytorch/issues/5687 (maintainer: "You can't do an inplace-addition
after an inplace relu").
Shape: module held as an attribute (nn.ReLU(inplace=True)), then `+=` on its result.
"""
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x, bias):
        y = self.relu(self.fc(x))
        y = y + bias  # fixed
        return y


torch.manual_seed(0)
Head()(torch.randn(3, 6), torch.ones(6)).sum().backward()

"""Fixed twin: `inplace` flags flipped after construction make Dropout write ReLU's saved output.

Source: https://github.com/qianyu-dlut/MVANet/issues/2 (`for m in self.modules(): if isinstance(m,
nn.ReLU) or isinstance(m, nn.Dropout): m.inplace = True`; error on "output 0 of ReluBackward0").
Shape: module attribute whose behaviour is set later (a flag flipped on every submodule).
"""
import torch
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.activation = nn.ReLU()
        self.dropout = nn.Dropout(0.1)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.fc2(self.dropout(self.activation(self.fc1(x))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.ff = FeedForward(16)
        for m in self.modules():
            if isinstance(m, (nn.ReLU,)):
                m.inplace = True  # fixed: only the ReLUs

    def forward(self, x):
        return self.ff(x)


torch.manual_seed(0)
net = Net().train()
net(torch.randn(4, 16)).sum().backward()

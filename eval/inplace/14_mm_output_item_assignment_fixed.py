"""Fixed twin: items of a matmul result are reassigned in a loop after a second matmul saved the result.

Source: https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html (`b = torch.mm(self.param,
a); for i in range(10): b[i] = b[i] + 1; y = y + torch.mm(self.param, b)`; fix: build `b` out of
place, `b = b + bione`).
Shape: a tensor saved by an op (mm saves its inputs), then item-assigned in place.
"""
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.param = nn.Parameter(torch.randn(10, 10))

    def forward(self, a):
        y = 0
        b = torch.mm(self.param, a)
        for i in range(10):
            bione = torch.zeros(10, 1)
            bione[i] = 1
            b = b + bione  # fixed
            y = y + torch.mm(self.param, b)
        return y


torch.manual_seed(0)
Model()(torch.randn(10, 1)).sum().backward()

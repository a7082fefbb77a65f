"""Case (textbook): nn.ReLU(inplace=True) right after nn.Tanh() in an nn.Sequential (tanh saved its output).

Source: issue 40's shape list ("nn.ReLU(inplace=True) after sigmoid/tanh"; modules that save their
output: Sigmoid, Tanh, Softmax, ...).
Shape: modules held in an nn.Sequential.
"""
import torch
from torch import nn

torch.manual_seed(0)
net = nn.Sequential(
    nn.Linear(4, 8),
    nn.Tanh(),
    nn.ReLU(inplace=True),  # hazard
    nn.Linear(8, 1),
)
net(torch.randn(3, 4)).sum().backward()

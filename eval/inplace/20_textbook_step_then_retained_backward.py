"""Case (textbook): optimizer.step() between a forward and a later backward of the same retained graph.

Source: issue 40's shape list ("`optimizer.step()` between a forward and a later backward of the same
graph (`retain_graph=True`, GAN-style generator loss reused after the discriminator step)").
Shape: the step writes parameters the retained graph saved.
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(5, 4)

pred = model(x)
loss_a = pred.pow(2).mean()
loss_b = (pred - 1).abs().mean()
opt.zero_grad()
loss_a.backward(retain_graph=True)
opt.step()  # hazard: loss_b still backpropagates through the old weights
loss_b.backward()
opt.step()

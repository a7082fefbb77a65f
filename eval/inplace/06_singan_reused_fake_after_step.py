"""Case: the generator loop reuses a fake image made before optimizerG.step() for its next loss.

Source: https://github.com/tamarott/SinGAN/issues/148 (train_single_scale: the second pass of the
G loop backpropagates through the `fake` produced with the weights that optimizerG.step() already
changed; fix: regenerate `fake` inside the loop).
Shape: optimizer.step() between a forward and a later backward of the same graph (retain_graph).
"""
import torch
from torch import nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(8, 3, 3, padding=1))
netD = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 3, padding=1))
optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-3)
noise = torch.randn(1, 3, 16, 16)

fake = netG(noise)  # made once, at the end of the D loop
for j in range(2):  # Gsteps
    netG.zero_grad()
    output = netD(fake)
    errG = -output.mean()
    errG.backward(retain_graph=True)
    optimizerG.step()  # hazard: the next pass backpropagates through fake's old graph

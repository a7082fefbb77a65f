"""Case: optimizerD.step() runs before the generator loss that uses netD's earlier output.

Source: https://github.com/leftthomas/SRGAN/issues/89 (train.py: `d_loss.backward(retain_graph=True);
optimizerD.step()`, then `g_loss = generator_criterion(fake_out, fake_img, real_img)` with `fake_out`
from before the step; suggested fix: step both optimizers after both backwards).
Shape: optimizer.step() between a forward and a later backward of the same graph (GAN, retain_graph).
"""
import torch
from torch import nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(8, 16), nn.PReLU(), nn.Linear(16, 8))
netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())
optimizerG = torch.optim.Adam(netG.parameters())
optimizerD = torch.optim.Adam(netD.parameters())
real_img, z = torch.randn(4, 8), torch.randn(4, 8)

fake_img = netG(z)
real_out = netD(real_img).mean()
fake_out = netD(fake_img).mean()
d_loss = 1 - real_out + fake_out
netD.zero_grad()
d_loss.backward(retain_graph=True)
optimizerD.step()  # hazard: netD's weights change before g_loss backpropagates through fake_out

netG.zero_grad()
g_loss = (1 - fake_out) + (fake_img - real_img).pow(2).mean()
g_loss.backward()
optimizerG.step()

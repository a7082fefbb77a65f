"""Case: the VAE optimizer steps, then the discriminator loss backpropagates through D(z) of the old VAE graph.

Source: https://github.com/1Konny/FactorVAE/issues/15 (`vae_loss.backward(retain_graph=True);
self.optim_VAE.step()`, then `D_tc_loss` uses `D_z` from before the step; fix: `D_z.detach()` in
the discriminator loss, or step after both backwards).
Shape: optimizer.step() between a forward and a later backward of the same graph (retain_graph).
"""
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
D = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 2))
optim_VAE = torch.optim.Adam(encoder.parameters(), lr=1e-3)
optim_D = torch.optim.Adam(D.parameters(), lr=1e-3)
x = torch.randn(6, 8)
zeros = torch.zeros(6, dtype=torch.long)
ones = torch.ones(6, dtype=torch.long)

z = encoder(x)
D_z = D(z)
vae_loss = z.pow(2).mean() + (D_z[:, 0] - D_z[:, 1]).mean()
optim_VAE.zero_grad()
vae_loss.backward(retain_graph=True)
optim_VAE.step()  # hazard: encoder weights change while D_z's graph still needs them

z_pperm = z.detach()[torch.randperm(6)]
D_z_pperm = D(z_pperm)
D_tc_loss = 0.5 * (F.cross_entropy(D_z, zeros) + F.cross_entropy(D_z_pperm, ones))
optim_D.zero_grad()
D_tc_loss.backward()
optim_D.step()

"""Fixed twin: optimizer_G.step(), then the discriminator loss backpropagates into the generator through a non-detached fake.

Source: https://github.com/pytorch/pytorch/issues/46638 (GAN with LeakyReLU(inplace=True)
discriminator; error on a [1, 32, 3, 3] generator conv weight "at version 2; expected version 1";
fix: `discriminator(gen_imgs.detach())` in the discriminator loss).
Shape: optimizer.step() between a forward and a later backward of the same graph (GAN).
"""
import torch
from torch import nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 1, 3, padding=1), nn.Tanh())
discriminator = nn.Sequential(nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.LeakyReLU(0.2, inplace=True),
                              nn.Flatten(), nn.Linear(16 * 4 * 4, 1))
optimizer_G = torch.optim.Adam(generator.parameters())
optimizer_D = torch.optim.Adam(discriminator.parameters())
bce = nn.BCEWithLogitsLoss()
real_imgs, z = torch.randn(2, 1, 8, 8), torch.randn(2, 1, 8, 8)
valid, fake = torch.ones(2, 1), torch.zeros(2, 1)

optimizer_G.zero_grad()
gen_imgs = generator(z)
g_loss = bce(discriminator(gen_imgs), valid)
g_loss.backward(retain_graph=True)
optimizer_G.step()

optimizer_D.zero_grad()
d_loss = (bce(discriminator(real_imgs), valid) + bce(discriminator(gen_imgs.detach()), fake)  # fixed
         ) / 2
d_loss.backward()
optimizer_D.step()

# truth: harmless
# rule: TAL001
# category: data
# static: 29
import copy

import torch
from torch import nn

torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)


def critic_step(critic, opt, real, fake, clip=0.05):
    opt.zero_grad()
    loss = critic(fake).mean() - critic(real).mean()
    loss.backward()
    grads = [p.grad.clone() for p in critic.parameters()]
    opt.step()
    for p in critic.parameters():
        p.data.clamp_(-clip, clip)
    return loss.item(), grads


critic = Critic()
reference = copy.deepcopy(critic)  # for the check
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-4)
real, fake = torch.randn(32, 4) + 1.0, torch.randn(32, 4)
loss, grads = critic_step(critic, opt, real, fake)
print("critic loss", round(loss, 5), "max |w|", round(max(p.abs().max().item() for p in critic.parameters()), 4))

# check: the gradients are those of the loss that was computed
ref_loss = reference(fake).mean() - reference(real).mean()
ref_loss.backward()
hazard = not all(torch.allclose(g, p.grad) for g, p in zip(grads, reference.parameters()))
print("truth: hazard" if hazard else "truth: harmless")

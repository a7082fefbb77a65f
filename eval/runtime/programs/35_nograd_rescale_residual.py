# truth: harmless
# rule: TAL201
# category: detach-write
import torch
from torch import nn

torch.manual_seed(0)


class ResidualBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.inner = nn.Linear(d, d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        return x + self.out(torch.relu(self.inner(x)))


def scale_residual_branches(model, factor):
    """GPT-2 style init: shrink each residual branch's output projection."""
    for block in model:
        with torch.no_grad():
            block.out.weight.mul_(factor)


model = nn.Sequential(*[ResidualBlock(8) for _ in range(3)])
original = [b.out.weight.detach().clone() for b in model]  # for the check
scale_residual_branches(model, 0.5)
x = torch.randn(4, 8)
loss = model(x).pow(2).mean()
loss.backward()
print("loss", round(loss.item(), 5), "grad norm", round(model[0].inner.weight.grad.norm().item(), 5))

# check: the in-place scaling is the intended effect
hazard = not all(torch.allclose(b.out.weight, 0.5 * o) for b, o in zip(model, original))
print("truth: hazard" if hazard else "truth: harmless")

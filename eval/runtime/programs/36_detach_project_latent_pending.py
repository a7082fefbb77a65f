# truth: hazard
# rule: TAL201
# category: detach-write
# static: 26
import torch
from torch import nn

torch.manual_seed(0)


class Decoder(nn.Module):
    def __init__(self, z_dim, out_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 16), nn.Tanh(), nn.Linear(16, out_dim))

    def forward(self, z):
        return self.net(z)


def invert(decoder, target, steps=5, lr=0.1):
    """Find a latent that decodes to `target`, keeping it inside the [-1, 1] box."""
    z = torch.zeros(1, 4, requires_grad=True)
    for _ in range(steps):
        recon = decoder(z)
        loss = (recon - target).pow(2).mean() + 1e-3 * (z * z).sum()
        z.detach().clamp_(-1.0, 1.0)
        loss.backward()
        with torch.no_grad():
            z -= lr * z.grad
            z.grad.zero_()
    return z.detach()


decoder = Decoder(4, 6)
target = torch.randn(1, 6)
try:
    z = invert(decoder, target)
    print("latent", [round(v, 4) for v in z[0].tolist()])
    failed = False
except RuntimeError as exc:
    print("inversion failed:", str(exc).split(";")[0][:80])
    failed = True

# check: a version-counter error means the projection broke the step
hazard = failed
print("truth: hazard" if hazard else "truth: harmless")

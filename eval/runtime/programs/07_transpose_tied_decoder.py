# truth: hazard
# rule: TAL401
# category: returned-alias
# static: 36
import torch
from torch import nn

torch.manual_seed(0)


class TiedAutoencoder(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.enc = nn.Parameter(torch.randn(h, d) * 0.3)

    def decoder_weight(self):
        return self.enc.detach().T

    def forward(self, x):
        z = torch.tanh(x @ self.enc.T)
        return z @ self.enc


def sgd_step(model, x, lr):
    loss = (model(x) - x).pow(2).mean()
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.sub_(lr * p.grad)
    return loss.item()


model = TiedAutoencoder(6, 3)
data = torch.randn(16, 6)
before = model.decoder_weight()
reference = before.clone()  # for the check
for _ in range(5):
    sgd_step(model, data, 0.5)
drift = (model.decoder_weight() - before).norm().item()
print("decoder drift", round(drift, 6))

# check: the decoder must have drifted during training
true_drift = (model.decoder_weight() - reference).norm().item()
hazard = abs(true_drift - drift) > 1e-6
print("truth: hazard" if hazard else "truth: harmless")

# truth: harmless
# rule: TAL401
# category: comprehension
import torch
from torch import nn

torch.manual_seed(0)


class LinearProbe(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16))
        self.probe = nn.Linear(16, 3)
        self.backbone.requires_grad_(False)

    def forward(self, x):
        with torch.no_grad():
            feats = self.backbone(x)
        return self.probe(feats)


model = LinearProbe()
frozen = [p.detach() for p in model.backbone.parameters()]
reference = [p.detach().clone() for p in model.backbone.parameters()]  # for the check
opt = torch.optim.SGD(model.probe.parameters(), lr=0.1)
for _ in range(10):
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
drift = sum((p - f).abs().sum() for p, f in zip(model.backbone.parameters(), frozen)).item()
print("backbone drift", drift)

# check: the snapshot still equals the weights it was taken from
hazard = not all(torch.equal(f, r) for f, r in zip(frozen, reference))
print("truth: hazard" if hazard else "truth: harmless")

# truth: harmless
# rule: TAL401
# category: comprehension
import torch
from torch import nn

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.backbone(x))


def finetune_head(model, loader, lr=0.05):
    for p in model.backbone.parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD(model.head.parameters(), lr=lr, momentum=0.9)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()


def changed_layers(model, before, tol=1e-4):
    return sorted(n for n, p in model.named_parameters() if (p.detach() - before[n]).abs().max() > tol)


model = Classifier()
before = {name: p.detach().clone() for name, p in model.named_parameters()}
loader = [(torch.randn(16, 10), torch.randint(0, 4, (16,))) for _ in range(5)]
finetune_head(model, loader)
changed = changed_layers(model, before)
print("layers changed by fine-tuning:", changed)

# check: only the head was trained
hazard = changed != ["head.bias", "head.weight"]
print("truth: hazard" if hazard else "truth: harmless")

# truth: hazard
# rule: TAL401
# category: comprehension
# static: 34
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


def finetune(model, loader, lr=0.05):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()


def changed_layers(model, before, tol=1e-4):
    return sorted(n for n, p in model.named_parameters() if (p.detach() - before[n]).abs().max() > tol)


model = Classifier()
before = {name: p.detach() for name, p in model.named_parameters()}
reference = {name: p.detach().clone() for name, p in model.named_parameters()}  # for the check
loader = [(torch.randn(16, 10), torch.randint(0, 4, (16,))) for _ in range(5)]
finetune(model, loader)
changed = changed_layers(model, before)
print("layers changed by fine-tuning:", changed)

# check: every layer was trained, so every layer must show up as changed
hazard = changed != changed_layers(model, reference)
print("truth: hazard" if hazard else "truth: harmless")

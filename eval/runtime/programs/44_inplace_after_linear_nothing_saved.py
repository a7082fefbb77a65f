# truth: harmless
# rule: TAL202
# category: saved-tensor
import copy

import torch
from torch import nn

torch.manual_seed(0)


class ScaledHead(nn.Module):
    def __init__(self, d, n_classes, temperature):
        super().__init__()
        self.proj = nn.Linear(d, n_classes)
        self.temperature = temperature

    def forward(self, x):
        logits = self.proj(x)
        logits.div_(self.temperature)
        logits += 0.1
        return logits


head = ScaledHead(8, 4, temperature=2.0)
reference = copy.deepcopy(head)  # for the check
x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))
try:
    loss = nn.functional.cross_entropy(head(x), y)
    loss.backward()
    failed = False
    print("loss", round(loss.item(), 5))
except RuntimeError as exc:
    print("backward failed:", str(exc)[:60])
    failed = True

# check: no error, and the gradient is that of (proj(x) / T + 0.1)
ref_loss = nn.functional.cross_entropy(reference.proj(x) / 2.0 + 0.1, y)
ref_loss.backward()
hazard = failed or not torch.allclose(head.proj.weight.grad, reference.proj.weight.grad)
print("truth: hazard" if hazard else "truth: harmless")

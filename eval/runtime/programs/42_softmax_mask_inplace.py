# truth: hazard
# rule: TAL202
# category: saved-tensor
# static: 21
import torch
from torch import nn

torch.manual_seed(0)


class MaskedAttention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)

    def forward(self, x, keep):
        scores = self.q(x) @ self.k(x).transpose(-2, -1) / x.size(-1) ** 0.5
        weights = torch.softmax(scores, dim=-1)
        weights.mul_(keep)
        weights = weights / weights.sum(-1, keepdim=True).clamp(min=1e-6)
        return weights @ self.v(x)


attn = MaskedAttention(8)
x = torch.randn(2, 5, 8)
keep = (torch.rand(2, 5, 5) > 0.2).float()
try:
    out = attn(x, keep)
    out.pow(2).mean().backward()
    print("grad norm", round(attn.q.weight.grad.norm().item(), 5))
    failed = False
except RuntimeError as exc:
    print("backward failed:", str(exc).split(";")[0][:80])
    failed = True

# check: a version-counter error at backward is the hazard
hazard = failed
print("truth: hazard" if hazard else "truth: harmless")

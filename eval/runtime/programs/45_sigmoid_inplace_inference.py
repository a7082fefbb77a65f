# truth: harmless
# rule: TAL202
# category: saved-tensor
import torch
from torch import nn

torch.manual_seed(0)


class GatedUnit(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.gate = nn.Linear(d, d)
        self.value = nn.Linear(d, d)

    def forward(self, x, floor=0.05):
        g = torch.sigmoid(self.gate(x))
        g.clamp_(min=floor)
        return g * self.value(x)


unit = GatedUnit(6).eval()
x = torch.randn(3, 6)
with torch.no_grad():
    y = unit(x)
print("output", [round(v, 4) for v in y[0].tolist()])

# check: inference needs no backward; the output is the floored gate times the value
with torch.no_grad():
    expected = torch.sigmoid(unit.gate(x)).clamp(min=0.05) * unit.value(x)
hazard = not torch.allclose(y, expected)
print("truth: hazard" if hazard else "truth: harmless")

# truth: harmless
# rule: none
# category: transparency
import torch
from torch import nn

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        h = self.fc1(x)
        print("  fc1 out", h.dtype)
        h = torch.relu(h)
        out = self.fc2(h)
        print("  fc2 out", out.dtype)
        return out


model = MLP()
x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
with torch.autocast("cpu", dtype=torch.bfloat16):
    print("autocast enabled", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    made = torch.tensor([1.0, 2.0])
    mm = x @ x.T
print("loss", loss.dtype, "made", made.dtype, "matmul", mm.dtype)
loss.backward()
print("grad", model.fc1.weight.grad.dtype, "autocast after", torch.is_autocast_enabled("cpu"))

# check: the bf16 loss is close to the fp32 one
with torch.no_grad():
    ref = nn.functional.cross_entropy(torch.relu(x @ model.fc1.weight.T + model.fc1.bias) @ model.fc2.weight.T
                                      + model.fc2.bias, y)
hazard = abs(ref.item() - loss.float().item()) > 0.05
print("truth: hazard" if hazard else "truth: harmless")

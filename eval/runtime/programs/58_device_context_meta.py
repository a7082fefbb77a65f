# truth: harmless
# rule: none
# category: default-device
import torch
from torch import nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.register_buffer("scale", torch.tensor([0.5]))

    def forward(self, x):
        return self.proj(x) * self.scale


with torch.device("meta"):
    shell = Encoder(16)
    probe = torch.tensor([1.0, 2.0])
    filler = torch.full((2, 2), 7.0)
    print("inside:", torch.get_default_device(), shell.proj.weight.device, shell.scale.device, probe.device,
          filler.device)
    with torch.device("cpu"):
        inner = torch.zeros(1)
        print("nested cpu:", inner.device, torch.get_default_device())
    out_meta = shell(torch.empty(3, 16))
    print("meta forward:", out_meta.shape, out_meta.device)

real = Encoder(16)
x = torch.randn(3, 16)
out = real(x)
print("outside:", torch.get_default_device(), real.proj.weight.device, out.device,
      round(out.sum().item(), 4))

# check: only the model built inside the context is on meta
hazard = not (shell.proj.weight.is_meta and not real.proj.weight.is_meta and inner.device.type == "cpu")
print("truth: hazard" if hazard else "truth: harmless")

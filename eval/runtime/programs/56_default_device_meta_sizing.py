# truth: harmless
# rule: none
# category: default-device
import torch
from torch import nn


def build(width, depth):
    layers = [nn.Linear(width, width) for _ in range(depth)]
    return nn.Sequential(*layers, nn.LayerNorm(width))


def describe(name, t):
    print(f"{name:8s} device={t.device} dtype={t.dtype} shape={tuple(t.shape)}")


torch.set_default_device("meta")
big = build(1024, 6)
n_params = sum(p.numel() for p in big.parameters())
print("params", n_params, "fp32 MiB", round(n_params * 4 / 2**20, 1))
describe("weight", big[0].weight)
describe("tensor", torch.tensor([1.0, 2.0, 3.0]))
describe("zeros", torch.zeros(2, 3))
describe("arange", torch.arange(4))
describe("rand", torch.rand(2))
print("default device", torch.get_default_device())

torch.set_default_device("cpu")
torch.manual_seed(0)
small = build(8, 2).to_empty(device="cpu")
for m in small.modules():
    if hasattr(m, "reset_parameters"):
        m.reset_parameters()
describe("material", small[0].weight)
out = small(torch.ones(2, 8))
print("output", [round(v, 4) for v in out[0, :4].tolist()])
print("default device", torch.get_default_device())

# check: the sized model was never materialised and the small one is real and finite
hazard = not (big[0].weight.is_meta and torch.isfinite(out).all().item())
print("truth: hazard" if hazard else "truth: harmless")

"""Shape: a helper writes its argument through no-op conversions (.float().detach().cpu()) (TAL201).

Repo: XPixelGroup/BasicSR, commit 8d56e3a045f9fb3e1d8872f92ee4a4f07f886b0a,
basicsr/utils/img_util.py:66 (tensor2img).
`_tensor.squeeze(0).float().detach().cpu().clamp_(*min_max)`: for a CPU float32 tensor every
conversion returns the same storage, so the caller's tensor is clamped (latent in the project's own
callers, which drop the tensor afterwards; real for any caller that keeps it).
Own code in the shape of the hazard, not the project's source.
"""
import torch


def to_images(tensors, min_max=(0.0, 1.0)):
    out = []
    for t in tensors:
        t = t.squeeze(0).float().detach().cpu().clamp_(*min_max)
        out.append(((t - min_max[0]) / (min_max[1] - min_max[0]) * 255).round().to(torch.uint8))
    return out


result = torch.linspace(-1.0, 2.0, 48).reshape(1, 3, 4, 4)
kept = result.clone()
to_images([result])
print("caller's tensor min/max after:", result.min().item(), result.max().item())
assert not torch.equal(kept, result), "hazard not shown"
print("HAZARD SHOWN: the caller's CPU float tensor was clamped in place")

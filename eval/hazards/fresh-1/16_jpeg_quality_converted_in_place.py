"""Shape: a module's forward converts its tensor argument in place (quality -> factor) (TAL301).

Repo: XPixelGroup/BasicSR, commit 8d56e3a045f9fb3e1d8872f92ee4a4f07f886b0a,
basicsr/utils/diffjpeg.py:478 (DiffJPEG.forward: `factor = quality; factor[i] =
quality_to_factor(factor[i])`). The caller's per-image quality tensor becomes compression factors;
compressing again with the same tensor (or logging it) uses factors as qualities. Latent: the
project's callers draw a new tensor for every call. Own code, not the project's source.
"""
import torch


def quality_to_factor(q):
    q = 5000.0 / q if q < 50 else 200.0 - q * 2
    return q / 100.0


def jpeg_factor(x, quality):
    factor = quality
    for i in range(factor.size(0)):
        factor[i] = quality_to_factor(factor[i])
    return x * 0 + factor.view(-1, 1, 1, 1)  # stands in for compressing with `factor`


quality = torch.tensor([30.0, 90.0])
images = torch.rand(2, 3, 4, 4)
first = jpeg_factor(images, quality)[:, 0, 0, 0]
second = jpeg_factor(images, quality)[:, 0, 0, 0]
print("factors, first call:", first.tolist(), "second call, same quality tensor:", second.tolist())
assert not torch.equal(first, second), "hazard not shown"
print("HAZARD SHOWN: the caller's quality tensor was turned into factors by the first call")

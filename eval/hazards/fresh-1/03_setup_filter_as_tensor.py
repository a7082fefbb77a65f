"""Shape: a helper writes its argument through a no-op conversion (torch.as_tensor) (TAL301).

Repo: NVlabs/stylegan2-ada-pytorch, commit d72cc7d041b42ec8e806021a205ed9349f87c6a4,
torch_utils/ops/upfirdn2d.py:111 (setup_filter).
`f = torch.as_tensor(f, dtype=torch.float32)` returns the caller's tensor itself when it is already
float32; for a 2-D filter (or a separable 1-D filter with >= 8 taps) nothing else copies it, and
`f /= f.sum()` normalises the caller's filter. Latent in the project (its callers pass lists);
any caller passing a float32 tensor that it keeps is hit. Own code, not the project's source.
"""
import torch


def prepare_filter(f, normalize=True, gain=1.0):
    f = torch.as_tensor(f, dtype=torch.float32)
    if f.ndim == 1 and f.numel() < 8:
        f = f.ger(f)
    if normalize:
        f /= f.sum()
    return f * gain


kernel = torch.tensor([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]])
prepare_filter(kernel)
print("caller's kernel sum after:", kernel.sum().item())
assert abs(kernel.sum().item() - 1.0) < 1e-6, "hazard not shown"
prepare_filter(kernel, gain=4.0)
print("HAZARD SHOWN: the caller's float32 filter was normalised in place")

"""Shape: a helper writes its argument in place through a view and .detach() (TAL201).

Repo: XPixelGroup/BasicSR, commit 8d56e3a045f9fb3e1d8872f92ee4a4f07f886b0a,
basicsr/utils/img_util.py:106 (tensor2img_fast).
`tensor.squeeze(0).detach().clamp_(...)` clamps the caller's tensor: squeeze is a view and detach
shares storage and version counter. A caller that keeps the network output sees it clamped, and if
that output is still part of a graph that saved it (sigmoid here), backward raises.
Own code in the shape of the hazard, not the project's source.
"""
import torch


def to_image_fast(t, lo=0.0, hi=1.0):
    out = t.squeeze(0).detach().clamp_(lo, hi).permute(1, 2, 0)
    return (out * 255).to(torch.uint8).numpy()


x = torch.randn(1, 3, 4, 4, requires_grad=True)
pred = torch.sigmoid(x * 4) * 1.5 - 0.25  # values outside [0, 1]
before = pred.detach().clone()
to_image_fast(pred)
changed = not torch.equal(before, pred.detach())
print("caller's tensor changed by the helper:", changed)
assert changed

y = torch.sigmoid(x)  # sigmoid saves its output
to_image_fast(y)
try:
    y.sum().backward()
    raise SystemExit("no error: hazard not shown")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e)
    print("backward:", str(e)[:90])

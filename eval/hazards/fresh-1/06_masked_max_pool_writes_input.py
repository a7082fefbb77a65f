"""Shape: a pooling module writes -inf into its input tensor in place (TAL301 / TAL202).

Repo: facebookresearch/pytorchvideo, commit f3142bb05cdb56af0704ab6f0adfb0c7bbafe4a0,
pytorchvideo/models/masked_multistream.py:72 (MaskedTemporalPooling.forward, method "max").
`x[~mask, :] = float("-inf")` writes the tensor the caller passed. Latent in the project's
pipelines (the producer before it is a fresh tensor); when the input is the caller's own tensor
(an eval-mode Dropout returns its input) the caller's features get -inf, and when the producer
saved its output (tanh here) backward raises. Own code, not the project's source.
"""
import torch
from torch import nn


class MaxPool(nn.Module):
    def forward(self, x, mask):
        x[~mask, :] = float("-inf")
        return torch.max(x, dim=1)[0]


feats = torch.randn(2, 3, 4)
mask = torch.tensor([[True, False, True], [True, True, False]])
drop = nn.Dropout(0.1).eval()  # returns its input in eval mode
MaxPool()(drop(feats), mask)
print("caller's features now contain -inf:", torch.isinf(feats).any().item())
assert torch.isinf(feats).any()

w = torch.randn(2, 3, 4, requires_grad=True)
pooled = MaxPool()(torch.tanh(w), mask)
try:
    pooled.sum().backward()
    raise SystemExit("no error: hazard not shown")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e)
    print("backward:", str(e)[:90])

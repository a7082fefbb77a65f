"""Fixed twin (textbook): an Embedding with max_norm renormalises its weight in place after a matmul saved it.

Source: issue 40's shape list ("`Embedding(max_norm=...)` lookups that renormalise a weight another op
saved"); PyTorch's nn.Embedding documentation notes that with max_norm the weight is modified in place
and must be cloned before it is used in a differentiable op.
Shape: a module's call writes its own weight in place.
"""
import torch
from torch import nn

torch.manual_seed(0)
embedding = nn.Embedding(10, 3, max_norm=1.0)
W = torch.randn(2, 3, requires_grad=True)
idx = torch.tensor([1, 2])
a = embedding.weight.clone() @ W.t()  # fixed: a copy is saved
out = embedding(idx)  # hazard: renormalises embedding.weight in place
loss = a.sigmoid().prod() + out.sigmoid().prod()
loss.backward()

# truth: harmless
# rule: none
# category: transparency
import torch
from torch import nn

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)


def segment_sum(values, segment_ids, n_segments):
    out = torch.zeros(n_segments, values.size(1))
    out.index_add_(0, segment_ids, values)
    return out


def scatter_counts(segment_ids, n_segments):
    counts = torch.zeros(n_segments)
    counts.scatter_add_(0, segment_ids, torch.ones_like(segment_ids, dtype=torch.float32))
    return counts


print("deterministic", torch.are_deterministic_algorithms_enabled(),
      "warn only", torch.is_deterministic_algorithms_warn_only_enabled())
vals = torch.randn(10, 3)
ids = torch.tensor([0, 1, 1, 2, 0, 3, 3, 3, 2, 1])
sums = segment_sum(vals, ids, 4)
counts = scatter_counts(ids, 4)
means = sums / counts[:, None]
print("counts", counts.tolist())
print("means", [[round(v, 4) for v in row] for row in means.tolist()])
uninit = torch.empty(3)
print("empty filled with", uninit.tolist())

emb = nn.EmbeddingBag(5, 2, mode="sum")
out = emb(torch.tensor([0, 2, 4, 1]), torch.tensor([0, 2]))
out.sum().backward()
print("embedding grad rows", emb.weight.grad.sum(1).tolist())

# check: the segment means match a plain loop
expected = torch.stack([vals[ids == s].mean(0) for s in range(4)])
hazard = not torch.allclose(means, expected, atol=1e-6)
print("truth: hazard" if hazard else "truth: harmless")

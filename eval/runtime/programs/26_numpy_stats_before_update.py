# truth: harmless
# rule: TAL301
# category: numpy
import numpy as np
import torch

torch.manual_seed(0)


class Normalizer:
    def __init__(self, dim, momentum=0.1):
        self.mean = torch.zeros(dim)
        self.momentum = momentum

    def update(self, batch):
        arr = self.mean.numpy()
        drift = float(np.abs(arr - batch.mean(0).numpy()).max())
        self.mean.mul_(1 - self.momentum).add_(batch.mean(0), alpha=self.momentum)
        return drift


norm = Normalizer(5)
batches = [torch.randn(32, 5) + 2.0 for _ in range(4)]
drifts = [round(norm.update(b), 4) for b in batches]
print("drift before each update", drifts)

# check: recompute the drifts with independent copies
mean = torch.zeros(5)
expected = []
for b in batches:
    expected.append(round((mean - b.mean(0)).abs().max().item(), 4))
    mean = mean * 0.9 + b.mean(0) * 0.1
hazard = any(abs(a - e) > 1e-3 for a, e in zip(drifts, expected))
print("truth: hazard" if hazard else "truth: harmless")

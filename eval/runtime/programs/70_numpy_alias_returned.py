# truth: hazard
# rule: TAL301
# category: numpy
# static: 18
import numpy as np
import torch

torch.manual_seed(0)


class Histogram:
    def __init__(self, bins):
        self.counts = torch.zeros(bins)

    def snapshot_and_decay(self, decay):
        """Meant: the counts as they were, for the caller's report, then decay them for the next epoch."""
        before = self.counts.numpy()
        self.counts.mul_(decay)
        return before


hist = Histogram(4)
hist.counts.index_add_(0, torch.tensor([0, 1, 1, 3]), torch.ones(4))
reference = hist.counts.clone().numpy()  # for the check
report = hist.snapshot_and_decay(0.5)
print("report", report.tolist(), "total", float(np.sum(report)))
# check: the report must show the counts before the decay
hazard = not np.allclose(report, reference)
print("truth: hazard" if hazard else "truth: harmless")

# truth: hazard
# rule: TAL301
# category: returned-alias
# static: 30
import torch

torch.manual_seed(0)


class History:
    """Fixed-length history of feature vectors, newest last."""

    def __init__(self, length, dim):
        self.buf = torch.zeros(length, dim)

    def latest(self, k):
        return self.buf.narrow(0, self.buf.size(0) - k, k)

    def push(self, x):
        self.buf[:-1] = self.buf[1:].clone()
        self.buf[-1] = x


class ChangeDetector:
    def __init__(self, dim):
        self.hist = History(5, dim)

    def observe(self, x):
        prev = self.hist.latest(1)
        self.hist.push(x)
        return self.score(x, prev)

    def score(self, x, prev):
        return (x - prev[0]).norm().item()


det = ChangeDetector(3)
frames = [torch.randn(3) for _ in range(6)]
scores = [round(det.observe(f), 4) for f in frames]
print("change scores", scores)

# check: each score should be the distance to the previous frame
expected = [round((frames[0] - torch.zeros(3)).norm().item(), 4)]
expected += [round((frames[i] - frames[i - 1]).norm().item(), 4) for i in range(1, len(frames))]
hazard = any(abs(a - b) > 1e-3 for a, b in zip(scores, expected))
print("truth: hazard" if hazard else "truth: harmless")

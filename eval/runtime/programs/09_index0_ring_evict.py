# truth: hazard
# rule: TAL301
# category: returned-alias
# static: 18
import torch

torch.manual_seed(0)


class RewardWindow:
    """Sliding window of the last n rewards; push returns the evicted one."""

    def __init__(self, n):
        self.window = torch.zeros(n, 2)

    def push(self, reward):
        evicted = self.window[0]
        self.window[:-1] = self.window[1:].clone()
        self.window[-1] = reward
        return evicted


win = RewardWindow(3)
rewards = [torch.randn(2) for _ in range(7)]
evicted_total = torch.zeros(2)
for r in rewards:
    evicted_total += win.push(r)
print("sum of evicted", [round(v, 4) for v in evicted_total.tolist()])

# check: the evicted rewards are the first four pushed (the first three pushes evict zeros)
expected = torch.stack(rewards[:4]).sum(0)
hazard = not torch.allclose(evicted_total, expected, atol=1e-5)
print("truth: hazard" if hazard else "truth: harmless")

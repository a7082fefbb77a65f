# truth: hazard
# rule: TAL301
# category: returned-alias
# static: 23
import torch

torch.manual_seed(0)


class RunningStats:
    def __init__(self, dim):
        self.n = 0
        self.mean = torch.zeros(dim)

    def update(self, x):
        self.n += 1
        self.mean += (x - self.mean) / self.n


def ingest(obs, stats):
    """Return the raw observation as a 1-batch for the replay buffer; feed the clipped one to the stats."""
    batch = obs.unsqueeze(0)
    obs.clamp_(-1.0, 1.0)
    stats.update(obs)
    return batch


stats = RunningStats(6)
replay = []
raw_copies = []
for step in range(4):
    obs = torch.randn(6) * 2.0
    raw_copies.append(obs.clone().unsqueeze(0))  # reference, for the check below
    replay.append(ingest(obs, stats))

buffer = torch.cat(replay)
print("replay max", round(buffer.abs().max().item(), 4))
print("stats mean", [round(v, 4) for v in stats.mean.tolist()])

# check: the replay buffer was meant to hold the raw observations
hazard = not torch.equal(buffer, torch.cat(raw_copies))
print("truth: hazard" if hazard else "truth: harmless")

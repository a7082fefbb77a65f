# truth: harmless
# rule: TAL301
# category: returned-alias
import torch
from torch import nn

torch.manual_seed(0)


class Policy(nn.Module):
    def __init__(self, d, a):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 16), nn.Tanh(), nn.Linear(16, a))

    def forward(self, x):
        return self.net(x)


@torch.no_grad()
def act(policy, obs):
    """Score the raw observation, then clip it in place for the running statistics."""
    batch = obs.unsqueeze(0)
    logits = policy(batch)
    obs.clamp_(-1.0, 1.0)
    return logits.argmax(1).item(), logits


policy = Policy(6, 3)
actions, logit_rows, raws = [], [], []
for _ in range(4):
    obs = torch.randn(6) * 2.0
    raws.append(obs.clone())  # for the check
    a, logits = act(policy, obs)
    actions.append(a)
    logit_rows.append(logits)
print("actions", actions)

# check: the logits must be those of the raw observations
with torch.no_grad():
    expected = policy(torch.stack(raws))
hazard = not torch.allclose(torch.cat(logit_rows), expected)
print("truth: hazard" if hazard else "truth: harmless")

# truth: hazard
# rule: TAL401
# category: optimizer-state
# static: 22
import copy

import torch
from torch import nn

torch.manual_seed(0)


class Trainer:
    """Rolls the model and the optimizer back to the last good checkpoint when the loss spikes."""

    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        self.good = None

    def checkpoint(self):
        self.good = {"model": copy.deepcopy(self.model.state_dict()), "opt": self.opt.state_dict()}

    def rollback(self):
        self.model.load_state_dict(self.good["model"])
        self.opt.load_state_dict(self.good["opt"])

    def step(self, x, y):
        self.opt.zero_grad()
        loss = nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.opt.step()
        return loss.item()


trainer = Trainer(nn.Linear(4, 2))
data = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(4)]
for x, y in data[:2]:
    trainer.step(x, y)
trainer.checkpoint()
good_momentum = [trainer.opt.state[p]["momentum_buffer"].clone() for p in trainer.model.parameters()]  # check
spike = (data[2][0] * 50, data[2][1])
trainer.step(*spike)
trainer.rollback()
restored = [trainer.opt.state[p]["momentum_buffer"] for p in trainer.model.parameters()]
print("restored momentum norm", round(sum(m.norm().item() for m in restored), 4))

# check: the restored momentum must be the one from the checkpoint, before the spike
hazard = not all(torch.allclose(r, g) for r, g in zip(restored, good_momentum))
print("truth: hazard" if hazard else "truth: harmless")

# truth: hazard
# rule: TAL401
# category: snapshot
# static: 12
import torch
from torch import nn

torch.manual_seed(0)


def checkpoint(model):
    return model.state_dict()


class Trainer:
    def __init__(self, model, lr=0.05):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        self.best = None
        self.best_score = float("inf")

    def fit_epoch(self, x, y):
        self.opt.zero_grad()
        nn.functional.mse_loss(self.model(x), y).backward()
        self.opt.step()

    def validate(self, x, y):
        with torch.no_grad():
            score = nn.functional.mse_loss(self.model(x), y).item()
        if score < self.best_score:
            self.best_score = score
            self.best = checkpoint(self.model)
        return score

    def finish(self):
        self.model.load_state_dict(self.best)
        return self.model


trainer = Trainer(nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1)), lr=0.3)
x_tr, y_tr = torch.randn(16, 4), torch.randn(16, 1)
x_va, y_va = torch.randn(16, 4), torch.randn(16, 1)
scores = []
for _ in range(20):
    trainer.fit_epoch(x_tr, y_tr)
    scores.append(trainer.validate(x_va, y_va))
final = trainer.finish()
with torch.no_grad():
    restored = nn.functional.mse_loss(final(x_va), y_va).item()
print("best", round(trainer.best_score, 5), "last", round(scores[-1], 5), "restored", round(restored, 5))

# check: the restored model must score the best validation loss
hazard = abs(restored - trainer.best_score) > 1e-6
print("truth: hazard" if hazard else "truth: harmless")

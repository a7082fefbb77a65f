# truth: harmless
# rule: TAL401
# category: snapshot
import torch
from torch import nn

torch.manual_seed(0)


def evaluate(model, x, y):
    with torch.no_grad():
        return nn.functional.mse_loss(model(x), y).item()


model = nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.05)
x_tr, y_tr = torch.randn(24, 5), torch.randn(24, 1)
x_va, y_va = torch.randn(24, 5), torch.randn(24, 1)

best_loss, best_state = float("inf"), None
for epoch in range(25):
    opt.zero_grad()
    nn.functional.mse_loss(model(x_tr), y_tr).backward()
    opt.step()
    val = evaluate(model, x_va, y_va)
    if val < best_loss:
        best_loss = val
        best_state = {k: v.clone() for k, v in model.state_dict().items()}
model.load_state_dict(best_state)
restored = evaluate(model, x_va, y_va)
print("best val", round(best_loss, 5), "after restoring the best weights", round(restored, 5))

# check: restoring the best weights must give the best validation loss back
hazard = abs(restored - best_loss) > 1e-6
print("truth: hazard" if hazard else "truth: harmless")

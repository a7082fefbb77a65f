# truth: hazard
# rule: TAL401
# category: optimizer-state
# static: 31
import torch
from torch import nn

torch.manual_seed(0)


def train_steps(model, opt, batches):
    for x, y in batches:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()


def momentum_shift(opt, snap):
    """How far each momentum buffer moved since the snapshot (a crude sign of a regime change)."""
    shifts = []
    for idx, state in opt.state_dict()["state"].items():
        old = snap["state"][idx]["momentum_buffer"]
        shifts.append(round((state["momentum_buffer"] - old).norm().item(), 6))
    return shifts


model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(6)]
train_steps(model, opt, batches[:3])
snap = opt.state_dict()
old_buffers = [opt.state[p]["momentum_buffer"].clone() for p in model.parameters()]  # for the check
train_steps(model, opt, batches[3:])
shift = momentum_shift(opt, snap)
print("momentum shift", shift)

# check: the buffers changed over three more steps
true_shift = [round((opt.state[p]["momentum_buffer"] - o).norm().item(), 6)
              for p, o in zip(model.parameters(), old_buffers)]
hazard = shift != true_shift
print("truth: hazard" if hazard else "truth: harmless")

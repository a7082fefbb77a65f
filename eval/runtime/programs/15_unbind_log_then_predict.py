# truth: harmless
# rule: TAL301
# category: returned-alias
import torch

torch.manual_seed(0)


class ConstantVelocityTracker:
    def __init__(self, pos, vel):
        self.state = torch.stack([pos, vel])

    def current(self):
        pos, vel = self.state.unbind(0)
        return pos, vel

    def predict(self, dt):
        self.state[0] += self.state[1] * dt


def step(tracker, dt, log):
    pos, vel = tracker.current()
    log.append((round(pos.norm().item(), 4), round(vel.norm().item(), 4)))
    tracker.predict(dt)


trk = ConstantVelocityTracker(torch.tensor([0.0, 0.0]), torch.tensor([3.0, 4.0]))
log = []
for _ in range(3):
    step(trk, 0.1, log)
print("log", log)

# check: the logged positions are those before each prediction
hazard = [p for p, _ in log] != [0.0, 0.5, 1.0]
print("truth: hazard" if hazard else "truth: harmless")

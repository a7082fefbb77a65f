# truth: hazard
# rule: TAL301
# category: returned-alias
# static: 24
import torch

torch.manual_seed(0)


class ConstantVelocityTracker:
    def __init__(self, pos, vel):
        self.state = torch.stack([pos, vel])  # (2, dim): position, velocity

    def current(self):
        pos, vel = self.state.unbind(0)
        return pos, vel

    def predict(self, dt):
        self.state[0] += self.state[1] * dt


def displacement(tracker, dt):
    prev_pos, _ = tracker.current()
    tracker.predict(dt)
    new_pos, _ = tracker.current()
    return (new_pos - prev_pos).norm().item()


trk = ConstantVelocityTracker(torch.tensor([0.0, 0.0]), torch.tensor([3.0, 4.0]))
moved = [round(displacement(trk, 0.1), 4) for _ in range(3)]
print("displacement per step", moved)

# check: at speed 5 and dt 0.1 the tracker moves 0.5 per step
hazard = any(abs(m - 0.5) > 1e-4 for m in moved)
print("truth: hazard" if hazard else "truth: harmless")

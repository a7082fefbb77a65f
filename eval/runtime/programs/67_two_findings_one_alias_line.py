# truth: hazard
# rule: TAL301
# category: returned-alias
# static: 17
import torch

torch.manual_seed(0)


class Tracker:
    def __init__(self, n):
        self.pos = torch.zeros(n, 2)
        self.vel = torch.ones(n, 2)

    def step(self, dt, damping):
        start, speed = self.pos[0], self.vel[0]  # the first object's position and speed
        self.pos.add_(self.vel * dt)
        self.vel.mul_(damping)
        if damping > 1.0:  # never in this run: `speed` is not read after the damping
            return speed * 1
        return self.pos[0] - start  # meant: displacement over the step


tracker = Tracker(3)
moved = tracker.step(0.5, 0.9)
print("displacement", moved.tolist())
# check: the first object moved by vel * dt = 0.5 per axis
hazard = not torch.allclose(moved, torch.full((2,), 0.5))
print("truth: hazard" if hazard else "truth: harmless")

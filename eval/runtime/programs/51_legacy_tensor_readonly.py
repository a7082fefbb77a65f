# truth: harmless
# rule: TAL103
# category: constructors
import torch

torch.manual_seed(0)


class Standardize:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, batch):
        x = torch.Tensor(batch)
        return (x - self.mean) / self.std


def denormalized_error(pred, raw_target):
    return (pred - raw_target).abs().mean().item()


raw = torch.randn(8, 3) * 4.0 + 10.0
raw_copy = raw.clone()  # for the check
transform = Standardize(mean=10.0, std=4.0)
model_input = transform(raw)
pred = model_input * 4.0 + 10.0 + 0.1  # a model that is off by 0.1
err = denormalized_error(pred, raw)
print("input mean", round(model_input.mean().item(), 4), "error", round(err, 4))

# check: the error against the untouched raw batch is 0.1
hazard = abs(err - denormalized_error(pred, raw_copy)) > 1e-5
print("truth: hazard" if hazard else "truth: harmless")

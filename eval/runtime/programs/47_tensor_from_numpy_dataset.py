# truth: harmless
# rule: TAL101
# category: constructors
import numpy as np
import torch

torch.manual_seed(0)


def to_float_tensor(value):
    return torch.tensor(value, dtype=torch.float32)


class WindowDataset(torch.utils.data.Dataset):
    def __init__(self, series, window):
        self.series = series
        self.window = window

    def __len__(self):
        return len(self.series) - self.window

    def __getitem__(self, i):
        x = self.series[i:i + self.window]
        y = self.series[i + self.window]
        return to_float_tensor(x), to_float_tensor(y)


rng = np.random.default_rng(0)
series = np.cumsum(rng.normal(size=40)).astype(np.float64)
ds = WindowDataset(series, 5)
x0, y0 = ds[0]
x0 += 100.0  # the sample is the model's own copy
loader = torch.utils.data.DataLoader(ds, batch_size=8)
xb, yb = next(iter(loader))
print("batch", tuple(xb.shape), xb.dtype, "first target", round(yb[0].item(), 4))

# check: the array behind the dataset is unchanged
hazard = not np.allclose(series[:5], np.cumsum(np.random.default_rng(0).normal(size=40))[:5])
print("truth: hazard" if hazard else "truth: harmless")

# truth: harmless
# rule: TAL301
# category: returned-alias
import torch

torch.manual_seed(0)


def center_xy_(points):
    """Center the xy coordinates of the cloud in place (z is left alone)."""
    xy = points[:, :2]
    xy.sub_(xy.mean(0))
    return points


class CloudDataset:
    def __init__(self, n_clouds):
        self.clouds = [torch.rand(20, 3) * 10 + 50 for _ in range(n_clouds)]

    def __getitem__(self, i):
        return center_xy_(self.clouds[i].clone())


ds = CloudDataset(3)
item = ds[1]
print("centered mean", [round(abs(v), 4) for v in item[:, :2].mean(0).tolist()])
print("z untouched", torch.equal(item[:, 2], ds.clouds[1][:, 2]))

# check: the function's purpose is to center its argument in place
raw = ds.clouds[1]
expected = torch.cat([raw[:, :2] - raw[:, :2].mean(0), raw[:, 2:]], 1)
hazard = not torch.allclose(item, expected, atol=1e-5)
print("truth: hazard" if hazard else "truth: harmless")

# truth: hazard
# rule: TAL301
# category: returned-alias
# static: 14
import torch

torch.manual_seed(0)


def center_cloud(points):
    """Center the xy coordinates for the network; keep the absolute xy for the map."""
    absolute_xy = points[:, :2]
    centroid = points[:, :2].mean(0)
    points[:, :2] -= centroid
    return points, absolute_xy


def bounding_box(xy):
    return xy.min(0).values, xy.max(0).values


cloud = torch.rand(50, 3) * 10 + torch.tensor([100.0, 200.0, 0.0])
expected_box = bounding_box(cloud[:, :2].clone())  # for the check
net_input, abs_xy = center_cloud(cloud)
lo, hi = bounding_box(abs_xy)
print("map box", [round(v, 2) for v in lo.tolist()], [round(v, 2) for v in hi.tolist()])
print("input mean", [round(v, 4) for v in net_input[:, :2].mean(0).tolist()])

# check: the map box should be in absolute coordinates
hazard = not (torch.allclose(lo, expected_box[0]) and torch.allclose(hi, expected_box[1]))
print("truth: hazard" if hazard else "truth: harmless")

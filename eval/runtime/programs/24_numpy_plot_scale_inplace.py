# truth: hazard
# rule: TAL301
# category: numpy
# static: 14
import numpy as np
import torch

torch.manual_seed(0)


def to_uint8_grid(images):
    """Arrange a batch of [0, 1] images into a uint8 grid for the logger."""
    imgs = images.cpu().float().numpy()
    imgs *= 255
    n, c, h, w = imgs.shape
    grid = imgs.transpose(0, 2, 3, 1).reshape(n * h, w, c)
    return grid.clip(0, 255).astype(np.uint8)


def reconstruction_error(recon, target):
    return torch.nn.functional.mse_loss(recon, target).item()


target = torch.rand(4, 3, 8, 8)
recon = (target + 0.05 * torch.randn_like(target)).clamp(0, 1)
expected_err = reconstruction_error(recon.clone(), target)  # for the check
grid = to_uint8_grid(recon)
err = reconstruction_error(recon, target)
print("grid", grid.shape, grid.dtype, "error", round(err, 6))

# check: logging must not change the reconstruction error
hazard = abs(err - expected_err) > 1e-9
print("truth: hazard" if hazard else "truth: harmless")

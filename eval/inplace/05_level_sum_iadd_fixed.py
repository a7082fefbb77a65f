"""Fixed twin: a loop sums per-level features in place into the first level's activated output.

Source: https://github.com/easton-cau/SOTR/issues/19 (`feature_add_all_level +=
self.convs_all_levels[i](mask_feat)`; fix: `feature_add_all_level = feature_add_all_level + ...`).
Shape: `+=` in a loop on an output a module (Conv-GN-ReLU block) saved.
"""
import torch
from torch import nn


def conv_block(c):
    return nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.GroupNorm(2, c), nn.ReLU())


class MaskBranch(nn.Module):
    def __init__(self, c, levels):
        super().__init__()
        self.convs_all_levels = nn.ModuleList(conv_block(c) for _ in range(levels))

    def forward(self, feats):
        feature_add_all_level = self.convs_all_levels[0](feats[0])
        for i in range(1, len(feats)):
            feature_add_all_level = feature_add_all_level + self.convs_all_levels[i](feats[i])  # fixed
        return feature_add_all_level


torch.manual_seed(0)
branch = MaskBranch(4, 3)
branch([torch.randn(1, 4, 8, 8) for _ in range(3)]).mean().backward()

"""Case: the bottom-up path adds in place into a list item that is a ReLU-activated conv output.

Source: https://github.com/open-mmlab/mmdetection/pull/9450 ("Backward pass error when using inplace
operation with ReLU ... if act_cfg=dict(type='ReLU'), training would raise errors"; fix: no in-place
add on `inter_outs[i + 1]`).
Shape: `+=` through a container item on an output a module saved.
"""
import torch
from torch import nn


def conv_module(c, stride=1):
    return nn.Sequential(nn.Conv2d(c, c, 3, stride=stride, padding=1), nn.ReLU())


class PAFPNBottomUp(nn.Module):
    def __init__(self, c, levels):
        super().__init__()
        self.fpn_convs = nn.ModuleList(conv_module(c) for _ in range(levels))
        self.downsample_convs = nn.ModuleList(conv_module(c, 2) for _ in range(levels - 1))

    def forward(self, laterals):
        inter_outs = [conv(x) for conv, x in zip(self.fpn_convs, laterals)]
        for i in range(len(inter_outs) - 1):
            inter_outs[i + 1] += self.downsample_convs[i](inter_outs[i])  # hazard
        return inter_outs


torch.manual_seed(0)
net = PAFPNBottomUp(4, 3)
outs = net([torch.randn(1, 4, 16 // 2**i, 16 // 2**i) for i in range(3)])
sum(o.mean() for o in outs).backward()

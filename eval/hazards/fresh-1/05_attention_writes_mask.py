"""Shape: a module's forward writes its mask argument; the container passes the same mask on (TAL301).

Repo: facebookresearch/pytorchvideo, commit f3142bb05cdb56af0704ab6f0adfb0c7bbafe4a0,
pytorchvideo/models/masked_multistream.py:140 (TransposeMultiheadAttention.forward;
the same line in TransposeTransformerEncoder.forward is :312).
`mask[:, 0] = True` writes the caller's mask. MaskedSequential passes that one mask to every
mask-taking module, so a later pooling/default module no longer sees rows that were entirely
invalid: their learned default is never used. Own code, not the project's source.
"""
import torch
from torch import nn


class Attn(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.att = nn.MultiheadAttention(d, 1)

    def forward(self, x, mask):
        mask[:, 0] = True  # at least one valid key per row
        x = x.transpose(0, 1)
        out, _ = self.att(x, x, x, key_padding_mask=~mask)
        return out.transpose(0, 1)


class MaskedDefault(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.default = nn.Parameter(torch.full((d,), 7.0))

    def forward(self, x, mask):
        valid = mask.any(dim=-1, keepdim=True).float()
        return x.mean(1) * valid + self.default * (1 - valid)


class MaskedSeq(nn.Sequential):
    def forward(self, x, mask):
        for m in self:
            x = m(x, mask)
        return x


torch.manual_seed(0)
net = MaskedSeq(Attn(4), MaskedDefault(4))
x = torch.randn(2, 3, 4)
mask = torch.tensor([[True, True, False], [False, False, False]])  # row 1 entirely invalid
out = net(x, mask)
print("row 1 (all invalid) output:", out[1].tolist())
assert not torch.allclose(out[1], torch.full((4,), 7.0)), "hazard not shown"
print("HAZARD SHOWN: the all-invalid row did not get its learned default; mask now", mask.tolist())

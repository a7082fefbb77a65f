"""Shape: an attention module adds into its attn_mask argument; the caller reuses the mask per layer (TAL301).

Repo: speechbrain/speechbrain, commit 9c826ef3937bac885c8a6ca86c6889a30f256fb5,
speechbrain/nnet/attention.py:867 (MultiheadAttention.forward: `attn_mask += pos_embs`).
The encoder passes the same `src_mask` to every layer (lobes/models/transformer/Transformer.py:641),
so with both a float mask and pos_embs, layer k sees mask + k * pos_embs. Latent (the recipes pass
pos_embs to this class without a mask). Own code, not the project's source.
"""
import torch
from torch import nn


class MHA(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.att = nn.MultiheadAttention(d, 1, batch_first=True)

    def forward(self, x, attn_mask=None, pos_embs=None):
        if pos_embs is not None:
            if attn_mask is not None:
                attn_mask += pos_embs
            else:
                attn_mask = pos_embs
        return self.att(x, x, x, attn_mask=attn_mask)[0]


layers = [MHA(4) for _ in range(3)]
x = torch.randn(1, 5, 4)
mask = torch.zeros(5, 5)
mask[:, -1] = float("-inf")
pos = torch.full((5, 5), 0.25)
for layer in layers:
    x = layer(x, attn_mask=mask, pos_embs=pos)
print("mask[0, 0] after 3 layers:", mask[0, 0].item(), "(was 0.0; each layer meant 0.25)")
assert mask[0, 0].item() == 0.75, "hazard not shown"
print("HAZARD SHOWN: the positional bias accumulated across layers in the shared mask")

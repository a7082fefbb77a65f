"""Shape: a "stored" slice is a view of the tensor that is then written; the swap duplicates (TAL301).

Repo: speechbrain/speechbrain, commit 9c826ef3937bac885c8a6ca86c6889a30f256fb5,
speechbrain/augment/time_domain.py:1262-1264 (ChannelSwap.forward):
`store_channel = waveforms[:, :, rand_perm2[i]]` indexes with a 0-d tensor, which is a view, so
after `waveforms[:, :, p2] = waveforms[:, :, p1]` the stored channel already holds p1's data and
`waveforms[:, :, p1] = store_channel` writes p1 back: channel p2 is lost, p1 is duplicated.
Own code in the shape of the hazard, not the project's source.
"""
import torch

waveforms = torch.stack([torch.full((2, 5), float(c)) for c in range(4)], dim=-1)  # channel c == c
p1 = torch.tensor([0])
p2 = torch.tensor([2])
for i in range(1):
    store_channel = waveforms[:, :, p2[i]]
    waveforms[:, :, p2[i]] = waveforms[:, :, p1[i]]
    waveforms[:, :, p1[i]] = store_channel
channels = waveforms[0, 0].tolist()
print("channels after the 'swap' of 0 and 2:", channels)
assert channels == [0.0, 1.0, 0.0, 3.0], "hazard not shown"
print("HAZARD SHOWN: channel 2 was lost and channel 0 duplicated")

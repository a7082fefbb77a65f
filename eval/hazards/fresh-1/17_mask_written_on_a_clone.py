"""Shape: a mask is written into a temporary .clone(); the tensor meant to be masked is unchanged.

Repo: speechbrain/speechbrain, commit 9c826ef3937bac885c8a6ca86c6889a30f256fb5,
speechbrain/lobes/models/Tacotron2.py:1439 (Tacotron2.parse_output:
`mel_outputs.clone().masked_fill_(mask, 0.0)`; the same line is speechbrain/lobes/models/MSTacotron2.py:276).
The clone is written and dropped, so the padded frames of `mel_outputs` are returned unmasked (the
recipe sets mask_padding: True), while the postnet outputs next to it are masked.
Own code in the shape of the hazard, not the project's source.
"""
import torch


def parse_output(mel_outputs, mel_postnet, lengths):
    mask = torch.arange(mel_outputs.size(-1))[None, :] >= lengths[:, None]
    mask = mask[:, None, :].expand_as(mel_outputs)
    mel_outputs.clone().masked_fill_(mask, 0.0)
    mel_postnet.masked_fill_(mask, 0.0)
    return mel_outputs, mel_postnet


mel, post = parse_output(torch.ones(2, 3, 5), torch.ones(2, 3, 5), torch.tensor([5, 2]))
print("padded frames of mel_outputs:", mel[1, 0, 2:].tolist(), "of the postnet output:", post[1, 0, 2:].tolist())
assert mel[1, 0, 2:].sum().item() == 3.0, "hazard not shown"
print("HAZARD SHOWN: the mask reached only the dropped clone")

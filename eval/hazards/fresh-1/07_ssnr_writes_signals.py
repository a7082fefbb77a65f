"""Shape: a metric helper writes its arguments through aliases/views (.numpy, reshape, slice) (TAL301).

Repo: speechbrain/speechbrain, commit 9c826ef3937bac885c8a6ca86c6889a30f256fb5,
recipes/DNS/enhancement/composite_eval.py:130-132 (SSNR), called from eval_composite after
`ref_wav = ref_wav.reshape(-1)[:len_]` and before PESQ on the same arrays; the recipe passes
`clean.squeeze().cpu().numpy()`. `clean_speech = ref_wav; clean_speech -= clean_speech.mean()` and
`processed_speech *= max|clean| / max|processed|` change the signals PESQ is computed on next, and
the caller's tensors. Own code in the shape of the hazard, not the project's source.
"""
import numpy as np
import torch


def seg_snr(ref, deg):
    clean = ref
    proc = deg
    clean -= clean.mean()
    proc -= proc.mean()
    proc *= np.max(np.abs(clean)) / np.max(np.abs(proc))
    return float(10 * np.log10((clean**2).sum() / ((clean - proc) ** 2).sum()))


def quality_score(ref, deg):  # stands in for PESQ: any metric that needs the original signals
    return float(np.abs(ref - deg).mean())


def composite(ref, deg):
    ref = ref.reshape(-1)
    deg = deg.reshape(-1)
    n = min(ref.shape[0], deg.shape[0])
    ref, deg = ref[:n], deg[:n]
    snr = seg_snr(ref, deg)
    return snr, quality_score(ref, deg)


torch.manual_seed(0)
clean = torch.randn(1, 800) + 0.5
enhanced = 3 * clean + 0.1 * torch.randn(1, 800) + 1.0
expected_q = quality_score(clean.numpy().reshape(-1).copy(), enhanced.numpy().reshape(-1).copy())
kept = enhanced.clone()
_, q = composite(clean.squeeze().cpu().numpy(), enhanced.squeeze().cpu().numpy())
print("quality on the original signals:", round(expected_q, 4), "as computed:", round(q, 4))
assert abs(q - expected_q) > 1e-3 and not torch.equal(kept, enhanced), "hazard not shown"
print("HAZARD SHOWN: the metric after SSNR saw rescaled signals; the caller's tensor changed too")

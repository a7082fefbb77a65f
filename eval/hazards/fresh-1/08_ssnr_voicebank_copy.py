"""Shape: a metric helper writes its arguments through aliases/views (.numpy, reshape, slice) (TAL301).

Repo: speechbrain/speechbrain, commit 9c826ef3937bac885c8a6ca86c6889a30f256fb5,
recipes/Voicebank/MTL/ASR_enhance/composite_eval.py:117-119 (SSNR): a copy of the DNS recipe's
helper (07), reached from train.py:51 as `eval_composite(target_wav.numpy(), pred_wav.numpy())`,
so the caller's tensors are written too. The same reproduction applies; it is run from 07.
"""
import pathlib
import runpy

runpy.run_path(str(pathlib.Path(__file__).with_name("07_ssnr_writes_signals.py")), run_name="__main__")

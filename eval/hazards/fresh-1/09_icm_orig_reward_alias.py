"""Shape: a record keeps an attribute alias as the "original", then the attribute is written in place (TAL301).

Repo: thu-ml/tianshou, commit f2402056b03acafeedf2518a5088db55add004ab,
tianshou/algorithm/modelbased/icm.py:83 (_icm_preprocess_batch; restored at :88).
`batch.policy = Batch(orig_rew=batch.rew, ...)` stores the same array (Batch does not copy arrays),
then `batch.rew += intrinsic` changes it, so `_icm_postprocess_batch` "restores" the already
modified reward. Own code in the shape of the hazard, not the project's source.
"""
import numpy as np


class Record:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def preprocess(batch, bonus):
    batch.policy = Record(orig_rew=batch.rew)
    batch.rew += bonus


def postprocess(batch):
    batch.rew = batch.policy.orig_rew  # meant to restore the environment's reward


batch = Record(rew=np.array([1.0, 0.0, 1.0], dtype=np.float32))
env_reward = batch.rew.copy()
preprocess(batch, np.array([0.5, 0.5, 0.5], dtype=np.float32))
postprocess(batch)
print("environment reward:", env_reward.tolist(), "restored:", batch.rew.tolist())
assert not np.array_equal(env_reward, batch.rew), "hazard not shown"
print("HAZARD SHOWN: the restored reward still contains the intrinsic bonus")

"""Shape: an in-place reset through advanced indexing writes a copy; the tensor it meant to reset is unchanged.

Repo: thu-ml/tianshou, commit f2402056b03acafeedf2518a5088db55add004ab,
tianshou/data/collector.py:1109 (_reset_hidden_state_based_on_type, tensor branch):
`last_hidden_state_RH[env_ind_local_D].zero_()` with an index array makes a copy and zeroes it, so
the finished environments' recurrent state is carried into their next episode (the numpy branch
below it assigns, which does write through). Own code in the shape of the hazard, not the project's source.
"""
import numpy as np
import torch


def reset_hidden(env_ids, hidden):
    if isinstance(hidden, torch.Tensor):
        hidden[env_ids].zero_()
    elif isinstance(hidden, np.ndarray):
        hidden[env_ids] = 0


hidden = torch.ones(4, 3)
reset_hidden(np.array([1, 3]), hidden)
print("hidden state of env 1 after the reset:", hidden[1].tolist())
assert hidden[1].sum().item() == 3.0, "hazard not shown"
print("HAZARD SHOWN: the reset wrote a temporary copy; the state was not reset")

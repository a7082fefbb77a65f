"""Case: a recurrent attention state is updated in place after an einsum of the previous step saved it.

Source: https://github.com/idiap/fast-transformers/pull/10 ("replaces the inplace updates to `Zi`
and `Si` with standard updates ... these inplace operations cause gradient errors when chaining the
transformer's output to other modules").
Shape: a state tensor saved by one step's op, written in place by the next step.
"""
import torch
import torch.nn.functional as F


def recurrent_linear_attention(queries, keys, values):
    n, t, d = queries.shape
    Si = queries.new_zeros(n, d, d)
    Zi = queries.new_zeros(n, d)
    outs = []
    for i in range(t):
        Q, K, V = F.elu(queries[:, i]) + 1, F.elu(keys[:, i]) + 1, values[:, i]
        Si += torch.einsum("nd,nm->ndm", K, V)  # hazard
        Zi += K
        Z = 1.0 / (torch.einsum("nd,nd->n", Q, Zi) + 1e-6)
        outs.append(torch.einsum("nd,ndm,n->nm", Q, Si, Z))
    return torch.stack(outs, 1)


torch.manual_seed(0)
q, k, v = (torch.randn(2, 4, 3, requires_grad=True) for _ in range(3))
recurrent_linear_attention(q, k, v).sum().backward()

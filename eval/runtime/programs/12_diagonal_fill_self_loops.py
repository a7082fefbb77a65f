# truth: harmless
# rule: TAL301
# category: returned-alias
import torch

torch.manual_seed(0)


def zero_self_loops(adj):
    adj.diagonal().fill_(0.0)
    return adj


def normalized_adjacency(adj):
    deg = adj.sum(1).clamp(min=1e-6)
    d = deg.pow(-0.5)
    return d[:, None] * adj * d[None, :]


def propagate(x, adj, steps=2):
    a_hat = normalized_adjacency(zero_self_loops(adj))
    for _ in range(steps):
        x = a_hat @ x
    return x


emb = torch.randn(5, 4)
sim = torch.sigmoid(emb @ emb.T)
original = sim.clone()  # for the check
out = propagate(torch.randn(5, 3), sim)
print("propagated", [round(v, 4) for v in out[0].tolist()])

# check: the helper's purpose is to zero the diagonal of its argument
expected = original * (1 - torch.eye(5))
hazard = not torch.equal(sim, expected)
print("truth: hazard" if hazard else "truth: harmless")

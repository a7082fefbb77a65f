# truth: hazard
# rule: TAL301
# category: returned-alias
# static: 18
import torch

torch.manual_seed(0)


class DirichletPrior:
    def __init__(self, k, decay=0.5):
        self.alpha = torch.full((k,), 1.0 / k)
        self.decay = decay

    def rows_for_round(self, n):
        """Prior for this round's n items; the prior itself is decayed toward the counts for the next round."""
        rows = self.alpha.expand(n, -1)
        self.alpha.mul_(self.decay).add_(self.counts_estimate(), alpha=1 - self.decay)
        return rows

    def counts_estimate(self):
        return torch.tensor([0.7, 0.2, 0.1])


def posterior(prior_rows, likelihood):
    unnorm = prior_rows * likelihood
    return unnorm / unnorm.sum(1, keepdim=True)


prior = DirichletPrior(3)
lik = torch.rand(4, 3)
uniform = prior.alpha.clone()  # the prior as it stands before the round (for the check)
post = posterior(prior.rows_for_round(4), lik)
print("posterior[0]", [round(v, 4) for v in post[0].tolist()])

# check: this round's posterior should use this round's (uniform) prior
expected = posterior(uniform.expand(4, -1), lik)
hazard = not torch.allclose(post, expected)
print("truth: hazard" if hazard else "truth: harmless")

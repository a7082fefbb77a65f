# truth: harmless
# rule: TAL301
# category: returned-alias
import torch

torch.manual_seed(0)


class DirichletPrior:
    def __init__(self, k, decay=0.5):
        self.alpha = torch.full((k,), 1.0 / k)
        self.decay = decay

    def posterior_for_round(self, likelihood):
        """This round's posterior; the prior is then decayed toward the counts for the next round."""
        rows = self.alpha.expand(likelihood.size(0), -1)
        unnorm = rows * likelihood
        post = unnorm / unnorm.sum(1, keepdim=True)
        self.alpha.mul_(self.decay).add_(self.counts_estimate(), alpha=1 - self.decay)
        return post

    def counts_estimate(self):
        return torch.tensor([0.7, 0.2, 0.1])


prior = DirichletPrior(3)
lik = torch.rand(4, 3)
uniform = prior.alpha.clone()  # for the check
post = prior.posterior_for_round(lik)
print("posterior[0]", [round(v, 4) for v in post[0].tolist()])
print("next prior", [round(v, 4) for v in prior.alpha.tolist()])

# check: this round's posterior uses this round's (uniform) prior
unnorm = uniform * lik
hazard = not torch.allclose(post, unnorm / unnorm.sum(1, keepdim=True))
print("truth: hazard" if hazard else "truth: harmless")

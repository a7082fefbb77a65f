# truth: harmless
# rule: TAL201
# category: detach-write
# static: 19
import torch

torch.manual_seed(0)


class BiasedRouter:
    """Routing scores = features + a learned per-expert bias, kept inside [-1, 1]."""

    def __init__(self, n_experts):
        self.bias = torch.zeros(n_experts, requires_grad=True)

    def step(self, feats, target, lr=0.5):
        scores = feats + self.bias
        loss = torch.nn.functional.cross_entropy(scores, target)
        self.bias.detach().clamp_(-1.0, 1.0)
        loss.backward()
        grad = self.bias.grad.clone()
        with torch.no_grad():
            self.bias -= lr * self.bias.grad
            self.bias.grad.zero_()
        return grad


router = BiasedRouter(4)
grads, refs = [], []
for _ in range(5):
    feats, target = torch.randn(16, 4), torch.randint(0, 4, (16,))
    b = router.bias.detach().clone().requires_grad_(True)  # for the check
    torch.nn.functional.cross_entropy(feats + b, target).backward()
    refs.append(b.grad)
    grads.append(router.step(feats, target))
print("bias", [round(v, 4) for v in router.bias.tolist()])

# check: every step's gradient is the gradient of the loss it computed
hazard = not all(torch.allclose(g, r) for g, r in zip(grads, refs))
print("truth: hazard" if hazard else "truth: harmless")

# truth: harmless
# rule: none
# category: recurrent
# watch: all
import torch
from torch import nn

torch.manual_seed(0)


class Tagger(nn.Module):
    """A step-by-step recurrent tagger: an LSTMCell encoder and a GRUCell decoder."""

    def __init__(self, vocab, dim, tags):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.enc = nn.LSTMCell(dim, dim)
        self.dec = nn.GRUCell(dim, dim)
        self.out = nn.Linear(dim, tags)

    def forward(self, tokens):
        h = c = torch.zeros(tokens.shape[0], self.enc.hidden_size)
        g = torch.zeros_like(h)
        logits = []
        for t in range(tokens.shape[1]):
            h, c = self.enc(self.embed(tokens[:, t]), (h, c))
            g = self.dec(h, g)
            logits.append(self.out(g))
        return torch.stack(logits, 1)


def train(model, steps=4):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1)
    grads = []
    for _ in range(steps):
        tokens = torch.randint(0, 20, (3, 5), generator=gen)
        tags = torch.randint(0, 4, (3, 5), generator=gen)
        loss = nn.functional.cross_entropy(model(tokens).flatten(0, 1), tags.flatten())
        opt.zero_grad()
        loss.backward()
        grads.append(model.enc.weight_hh.grad.clone())
        opt.step()
    return grads


model = Tagger(20, 8, 4)
reference = Tagger(20, 8, 4)
reference.load_state_dict(model.state_dict())
grads = train(model)


# check: the same gradients as the same cells written out of place (no in-place gate writes)
def functional_forward(m, tokens):
    h = c = torch.zeros(tokens.shape[0], m.enc.hidden_size)
    g = torch.zeros_like(h)
    logits = []
    for t in range(tokens.shape[1]):
        x = m.embed(tokens[:, t])
        gates = x @ m.enc.weight_ih.t() + m.enc.bias_ih + h @ m.enc.weight_hh.t() + m.enc.bias_hh
        i, f, gg, o = gates.chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
        h = torch.sigmoid(o) * torch.tanh(c)
        gi = h @ m.dec.weight_ih.t() + m.dec.bias_ih
        gh = g @ m.dec.weight_hh.t() + m.dec.bias_hh
        ir, iz, inn = gi.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
        n = torch.tanh(inn + r * hn)
        g = (1 - z) * n + z * g
        logits.append(m.out(g))
    return torch.stack(logits, 1)


opt = torch.optim.SGD(reference.parameters(), lr=0.1)
gen = torch.Generator().manual_seed(1)
ref_grads = []
for _ in range(4):
    tokens = torch.randint(0, 20, (3, 5), generator=gen)
    tags = torch.randint(0, 4, (3, 5), generator=gen)
    loss = nn.functional.cross_entropy(functional_forward(reference, tokens).flatten(0, 1), tags.flatten())
    opt.zero_grad()
    loss.backward()
    ref_grads.append(reference.enc.weight_hh.grad.clone())
    opt.step()
print("grad norms", [round(g.norm().item(), 4) for g in grads])
hazard = not all(torch.allclose(a, b, atol=1e-5) for a, b in zip(grads, ref_grads))
print("truth: hazard" if hazard else "truth: harmless")

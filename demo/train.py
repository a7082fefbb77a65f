"""A small, realistic training script with the aliasing bugs detachlint finds.

Run ``detachlint check demo/`` to see them. Every finding here is a real hazard (or a
discouraged idiom, reported as a warning); the script runs as it is with torch installed.
"""

import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, hidden: int = 16) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, hidden)
        self.fc2 = nn.Linear(hidden, 2)
        self.register_buffer("scale", torch.ones(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.fc1(x)) * self.scale
        # Max-norm constraint applied mid-forward: the graph already saved fc1.weight.
        self.fc1.weight.data.clamp_(-1.0, 1.0)
        return self.fc2(h)


def init_weights(m: nn.Module) -> None:
    if isinstance(m, nn.Linear):
        m.weight.data.normal_(0.0, 0.02)  # harmless before training; no_grad is the tracked spelling
        m.bias.data.zero_()


def to_images(batch: torch.Tensor) -> np.ndarray:
    images = batch.detach().cpu().float().numpy()
    images *= 255  # scales the caller's CPU float tensor in place
    return images


def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        logits = model(x)
        losses = [F.cross_entropy(logits[i:i + 1], y[i:i + 1]) for i in range(len(y))]
        return torch.tensor(losses)  # a list of tensors: torch.stack is meant


def train(epochs: int = 3) -> nn.Module:
    torch.manual_seed(0)
    model = Net()
    model.apply(init_weights)
    ema = Net()
    ema.load_state_dict(model.state_dict())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(64, 8)
    y = torch.randint(0, 2, (64,))
    raw_first = x[0]  # a view of x, kept as if it were a copy of the raw sample
    x -= x.mean(0)  # standardise in place: raw_first changes too

    best_loss = float("inf")
    best_state = model.state_dict()  # aliases the live weights
    for epoch in range(epochs):
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        aux = torch.tensor(logits.softmax(-1)[:, 0].mean())  # copies, and drops the graph
        loss = loss + 0.1 * aux
        for p in model.parameters():
            p.data.mul_(0.999)  # weight decay before backward: the pending graph saved p
        loss.backward()
        optimizer.step()

        with torch.no_grad():
            for p_ema, p in zip(ema.parameters(), model.parameters()):
                p_ema.mul_(0.9).add_(p, alpha=0.1)

        snapshot = torch.Tensor(model.fc2.weight)  # an alias, not a copy
        val = evaluate(model, x, y).mean()
        if val < best_loss:
            best_loss = float(val)
            best_state = model.state_dict()
        print(f"epoch {epoch}: loss {loss.item():.4f} val {val:.4f} drift {(snapshot - model.fc2.weight).abs().sum():.4f}")

    print("raw first sample", raw_first)
    preview = to_images(x[:4])
    print("preview range", preview.min(), preview.max())
    model.load_state_dict(best_state)
    return copy.deepcopy(model)


if __name__ == "__main__":
    train()

# truth: harmless
# rule: TAL301
# category: intended-aliasing
# static: 17
import torch

torch.manual_seed(0)


def window_means(batches, acc: torch.Tensor, window=2):
    """Mean of every `window` batches. `total` and `count` are views of the caller's accumulator,
    kept on purpose so that they always show the current window; the mean is computed (a new
    tensor) before the accumulator is reset."""
    total, count = acc[0], acc[1]
    means = []
    for i, batch in enumerate(batches, 1):
        acc.add_(torch.stack([batch.sum(), torch.tensor(float(batch.numel()))]))
        if i % window == 0:
            means.append(total / count)
            acc.zero_()
    return means


batches = [torch.randn(4) for _ in range(6)]
means = window_means(batches, torch.zeros(2))
print("means", [round(m.item(), 4) for m in means])
# check: each mean is the mean of its two batches
expected = [torch.cat(batches[i:i + 2]).mean() for i in range(0, 6, 2)]
hazard = not all(torch.allclose(a, b) for a, b in zip(means, expected))
print("truth: hazard" if hazard else "truth: harmless")

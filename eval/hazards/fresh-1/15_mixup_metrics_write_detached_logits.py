"""Shape: logits of the live graph written in place through .detach() after the loss used them (TAL201).

Repo: facebookresearch/pytorchvideo, commit f3142bb05cdb56af0704ab6f0adfb0c7bbafe4a0,
pytorchvideo_trainer/pytorchvideo_trainer/module/video_classification.py:354-356 (_step):
`y_hat = y_hat.detach(); y_hat[idx_top1] += y_hat[idx_top2]; y_hat[idx_top2] = 0.0` for the
MixUp metrics, after `loss = self.loss(y_hat, ...)` and before the caller's backward. .detach()
shares storage and version counter: harmless with the project's soft-target cross entropy (it saves
only log_softmax's output), an autograd error with a loss that saves its input (latent).
Own code in the shape of the hazard, not the project's source.
"""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
head = torch.nn.Linear(8, 4)
y_hat = head(torch.randn(3, 8))
target = torch.softmax(torch.randn(3, 4), dim=-1)
loss = F.binary_cross_entropy_with_logits(y_hat, target)  # saves its input y_hat
kept = y_hat.detach().clone()
top = torch.topk(target, 2, dim=1).indices
rows = torch.arange(3)
y_hat = y_hat.detach()
y_hat[rows, top[:, 0]] += y_hat[rows, top[:, 1]]
y_hat[rows, top[:, 1]] = 0.0
try:
    loss.backward()
    raise SystemExit("no error: hazard not shown")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e)
    print("backward:", str(e)[:90])

"""Shape: a sigmoid output (saved for backward) written in place through squeeze/float no-ops (TAL202).

Repo: rwightman/efficientdet-pytorch, commit c6dff775a36cea0bf9b76c58e59f936411c5ce01,
effdet/anchors.py:138 (generate_detections: `scores = cls_outputs.sigmoid().squeeze(1).float()`
then `scores[top_detection_idx] = soft_scores`). Latent: the project runs it under no_grad;
any caller that backpropagates through the detections' scores gets the autograd error.
Own code in the shape of the hazard, not the project's source.
"""
import torch

logits = torch.randn(6, 1, requires_grad=True)
scores = logits.sigmoid().squeeze(1).float()
keep = torch.tensor([0, 2, 3])
scores[keep] = scores[keep].detach() * 0.9  # soft-NMS decayed scores
try:
    scores.sum().backward()
    raise SystemExit("no error: hazard not shown")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e)
    print("backward:", str(e)[:90])

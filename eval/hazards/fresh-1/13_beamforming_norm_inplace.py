"""Shape: x /= x.norm(): the norm saved x, then x is written before backward (TAL202).

Repo: asteroid-team/asteroid, commit 92c8d83a9dbe7c3afd1cd097e31254e0b4f82881,
asteroid/dsp/beamforming.py:246 (GEVBeamformer.compute_beamforming_vector:
`bf_vect = e_vec[..., -1]; bf_vect /= torch.norm(bf_vect, dim=-1, keepdim=True)`).
The beamformer is differentiable (masks from a network give target/noise SCMs that require grad);
training through it raises at backward. Own code in the shape of the hazard, not the project's source.
"""
import torch

torch.manual_seed(0)
a = torch.randn(2, 4, 4, dtype=torch.complex128, requires_grad=True)  # SCM from a network's mask
inv_chol = torch.randn(4, 4, dtype=torch.complex128)
e_vec = inv_chol @ a
bf_vect = e_vec[..., -1]
bf_vect /= torch.norm(bf_vect, dim=-1, keepdim=True)
try:
    bf_vect.abs().sum().backward()
    raise SystemExit("no error: hazard not shown")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e)
    print("backward:", str(e)[:90])

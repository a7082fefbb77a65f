# truth: hazard
# rule: TAL301
# category: returned-alias
# static: 18
import torch

torch.manual_seed(0)


def covariance(features):
    centered = features - features.mean(0, keepdim=True)
    return centered.T @ centered / (features.size(0) - 1)


def split_covariance(cov):
    """Variances (the diagonal) and the off-diagonal part used by the decorrelation loss."""
    variances = cov.diagonal()
    cov.fill_diagonal_(0.0)
    return variances, cov


def vicreg_terms(features):
    cov = covariance(features)
    variances, off = split_covariance(cov)
    std_loss = torch.relu(1.0 - torch.sqrt(variances + 1e-4)).mean()
    cov_loss = off.pow(2).sum() / features.size(1)
    return std_loss, cov_loss


feats = torch.randn(32, 8) * 0.5
std_loss, cov_loss = vicreg_terms(feats)
print("std loss", round(std_loss.item(), 4), "cov loss", round(cov_loss.item(), 4))

# check: the variance term must use the real per-feature variances
true_var = feats.var(0)
true_std_loss = torch.relu(1.0 - torch.sqrt(true_var + 1e-4)).mean()
hazard = abs(true_std_loss.item() - std_loss.item()) > 1e-5
print("truth: hazard" if hazard else "truth: harmless")

"""Ops that save tensors for backward, measured with torch 2.13.0 by
``tools/saved_for_backward.py`` (do not edit: run it again). Names are members of ``torch``,
``torch.nn.functional`` or ``Tensor``; the first input required grad, any other did not."""

# The op saves its result: writing the result in place before backward() raises there.
SAVES_RESULT = frozenset(
    """
    cumprod exp exp2 expm1 hypot log_softmax logsumexp pow reciprocal relu rsqrt sigmoid softmax
    sqrt tan tanh
    """.split()
)

# The op saves its first input: writing that input in place before backward() raises there.
SAVES_INPUT = frozenset(
    """
    abs acos asin asinh atan atan2 atanh celu clamp cos cosh cumprod digamma elu erf erfc erfinv
    gelu hardsigmoid hardswish hardtanh hypot layer_norm leaky_relu lgamma log log10 log1p log2
    logit logsigmoid logsumexp maximum minimum mish normalize pow relu6 selu silu sin sinc sinh
    softplus softsign square
    """.split()
)

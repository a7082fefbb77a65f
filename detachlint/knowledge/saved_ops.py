"""Ops that save tensors for backward, measured with torch 2.13.0 by
``tools/saved_for_backward.py`` (do not edit: run it again). Names are members of ``torch``,
``torch.nn.functional`` or ``Tensor``; the first input required grad, any other did not."""

# The op saves its result: writing the result in place before backward() raises there.
SAVES_RESULT = frozenset(
    """
    cumprod exp exp2 expm1 hypot log_softmax logsumexp norm pow reciprocal relu rsqrt sigmoid
    softmax sqrt tan tanh
    """.split()
)

# The op saves its first input: writing that input in place before backward() raises there.
SAVES_INPUT = frozenset(
    """
    abs acos asin asinh atan atan2 atanh celu clamp cos cosh cumprod digamma elu erf erfc erfinv
    gelu hardsigmoid hardswish hardtanh hypot layer_norm leaky_relu lgamma log log10 log1p log2
    logit logsigmoid logsumexp maximum minimum mish norm normalize pow relu6 selu silu sin sinc
    sinh softplus softsign square
    """.split()
)

# ``torch.nn`` module classes (fresh, in training mode): each saves its output for backward, so
# writing the output in place before backward() raises there.
MODULE_SAVES_RESULT = frozenset(
    """
    LogSoftmax ReLU Sigmoid Softmax Softmin Tanh
    """.split()
)

# ... saves its input: writing the input in place before backward() raises there.
MODULE_SAVES_INPUT = frozenset(
    """
    AdaptiveMaxPool2d AvgPool1d AvgPool2d BatchNorm1d BatchNorm2d BatchNorm3d Bilinear CELU
    Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ELU Embedding EmbeddingBag GELU GLU GRU
    GroupNorm Hardshrink Hardsigmoid Hardswish Hardtanh InstanceNorm1d InstanceNorm2d LSTM
    LayerNorm LeakyReLU Linear LocalResponseNorm LogSigmoid MaxPool1d MaxPool2d Mish PReLU RNN
    RReLU ReLU6 SELU SiLU Softplus Softshrink Softsign Threshold
    """.split()
)

# ... made with inplace=True, writes its input in place and returns it.
MODULE_INPLACE = frozenset(
    """
    CELU Dropout Dropout1d Dropout2d Dropout3d ELU Hardsigmoid Hardswish Hardtanh LeakyReLU Mish
    RReLU ReLU ReLU6 SELU SiLU Threshold
    """.split()
)

# ... and then saves its output (the written input) for backward.
MODULE_INPLACE_SAVES_RESULT = frozenset(
    """
    CELU ELU LeakyReLU RReLU ReLU SELU
    """.split()
)

# The position of ``inplace`` among the constructor's positional parameters (``nn.ReLU(True)``).
MODULE_INPLACE_POSITION = {"AlphaDropout": 1, "CELU": 1, "Dropout": 1, "Dropout1d": 1, "Dropout2d": 1, "Dropout3d": 1, "ELU": 1, "FeatureAlphaDropout": 1, "Hardsigmoid": 0, "Hardswish": 0, "Hardtanh": 2, "LeakyReLU": 1, "Mish": 0, "RReLU": 2, "ReLU": 0, "ReLU6": 0, "SELU": 0, "SiLU": 0, "Threshold": 2}

# ... has parameters that require grad: its output is part of a graph whatever its input.
MODULE_WITH_PARAMETERS = frozenset(
    """
    BatchNorm1d BatchNorm2d BatchNorm3d Bilinear Conv1d Conv2d Conv3d ConvTranspose1d
    ConvTranspose2d Embedding EmbeddingBag GRU GroupNorm LSTM LayerNorm Linear PReLU RNN
    """.split()
)

# ... returns its input's own memory, unwritten (an alias: writing the result writes the input).
MODULE_RETURNS_INPUT = frozenset(
    """
    Flatten Identity
    """.split()
)

# ... made with this keyword argument, writes its own weight in place at every call.
MODULE_WRITES_WEIGHT = {"Embedding": "max_norm", "EmbeddingBag": "max_norm"}

# Ops of two tensors that save the second when the first requires grad (``torch.mm(w, b)`` keeps
# ``b``; ``einsum``: its operands): writing the second in place before backward() raises there.
SAVES_OTHER = frozenset(
    """
    atan2 bmm div einsum linear matmul maximum minimum mm mul pow
    """.split()
)

#!/usr/bin/env python3
"""Which ops save their result or their first input for backward, measured with the installed torch.

Each op is run on inputs that require grad under ``torch.autograd.graph.saved_tensors_hooks``; a
saved tensor that shares storage with the result (or with the first input) is what an in-place
write to it before ``backward()`` breaks ("one of the variables needed for gradient computation has
been modified by an inplace operation"). The answer is written, as data, to
``detachlint/knowledge/saved_ops.py``, which rule TAL202 reads; ``tests/test_catalog.py`` runs
``measure()`` again and compares, so a torch that saves differently fails the test.

    python tools/saved_for_backward.py            # rewrite detachlint/knowledge/saved_ops.py
    python tools/saved_for_backward.py --check    # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Dict, List, Tuple

OUT = Path(__file__).resolve().parents[1] / "detachlint" / "knowledge" / "saved_ops.py"

# name -> how to call it on (x, other): one input, or two (``other`` a second tensor that does not
# require grad, so that what is saved is saved because of ``x`` alone: ``x * w`` saves ``x`` only
# when ``w`` requires grad, which a linter cannot know). Names are the member names of ``torch`` /
# ``torch.nn.functional`` / ``Tensor``.
UNARY = """
    sigmoid tanh exp expm1 exp2 log log1p log2 log10 sqrt rsqrt reciprocal sin cos tan asin acos
    atan sinh cosh asinh atanh erf erfc erfinv abs neg relu square sign trunc floor ceil round frac
    logit sinc digamma lgamma norm
""".split()
FUNCTIONAL_UNARY = """
    gelu silu mish softplus elu selu celu leaky_relu relu6 hardtanh hardswish hardsigmoid
    logsigmoid softsign tanhshrink
""".split()
DIM = "softmax log_softmax cumsum cumprod logsumexp".split()  # called with dim=-1
BINARY = "mul div matmul atan2 hypot pow maximum minimum add sub".split()

# ``torch.nn`` module classes -> the shape of an input for one (float64; parameters require grad,
# as a fresh module's do). Called with no arguments unless ``MODULE_ARGS`` says otherwise.
_ACTIVATIONS = """
    ReLU ReLU6 LeakyReLU ELU SELU CELU GELU SiLU Mish Sigmoid Tanh Softplus Softsign Hardtanh Hardswish
    Hardsigmoid Hardshrink Softshrink Tanhshrink LogSigmoid PReLU RReLU Identity Flatten
    Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout
""".split()
MODULE_INPUTS = {name: (2, 3, 4, 4) for name in _ACTIVATIONS}
MODULE_INPUTS.update({
    "Dropout1d": (2, 3, 4), "Dropout3d": (2, 3, 2, 2, 2),
    "Softmax": (2, 3), "LogSoftmax": (2, 3), "Softmin": (2, 3), "Threshold": (2, 3), "GLU": (2, 4),
    "Linear": (2, 3), "Bilinear": (2, 3), "Conv1d": (2, 3, 8), "Conv2d": (2, 3, 8, 8), "Conv3d": (2, 3, 4, 4, 4),
    "ConvTranspose1d": (2, 3, 8), "ConvTranspose2d": (2, 3, 8, 8), "BatchNorm1d": (4, 3), "BatchNorm2d": (4, 3, 4, 4),
    "BatchNorm3d": (4, 3, 2, 2, 2), "InstanceNorm1d": (2, 3, 8), "InstanceNorm2d": (2, 3, 8, 8),
    "LayerNorm": (2, 3), "GroupNorm": (2, 3, 4, 4), "LocalResponseNorm": (2, 3, 4, 4),
    "LSTM": (5, 2, 3), "GRU": (5, 2, 3), "RNN": (5, 2, 3), "MaxPool1d": (2, 3, 8), "MaxPool2d": (2, 3, 8, 8),
    "AvgPool1d": (2, 3, 8), "AvgPool2d": (2, 3, 8, 8), "AdaptiveAvgPool2d": (2, 3, 8, 8),
    "AdaptiveMaxPool2d": (2, 3, 8, 8), "Upsample": (2, 3, 4, 4), "PixelShuffle": (2, 4, 2, 2),
    "ZeroPad2d": (2, 3, 4, 4), "Embedding": (2, 3), "EmbeddingBag": (2, 3),
})
MODULE_ARGS = {
    "Softmax": {"dim": -1}, "LogSoftmax": {"dim": -1}, "Softmin": {"dim": -1}, "Threshold": {"threshold": 0.1, "value": 0.0},
    "Linear": (3, 3), "Bilinear": (3, 3, 3), "Conv1d": (3, 3, 3), "Conv2d": (3, 3, 3), "Conv3d": (3, 3, 3),
    "ConvTranspose1d": (3, 3, 3), "ConvTranspose2d": (3, 3, 3), "BatchNorm1d": (3,), "BatchNorm2d": (3,),
    "BatchNorm3d": (3,), "InstanceNorm1d": (3,), "InstanceNorm2d": (3,), "LayerNorm": (3,), "GroupNorm": (1, 3),
    "LocalResponseNorm": (2,), "LSTM": (3, 3), "GRU": (3, 3), "RNN": (3, 3), "MaxPool1d": (2,), "MaxPool2d": (2,),
    "AvgPool1d": (2,), "AvgPool2d": (2,), "AdaptiveAvgPool2d": (1,), "AdaptiveMaxPool2d": (1,),
    "Upsample": {"scale_factor": 2}, "PixelShuffle": (2,), "ZeroPad2d": (1,), "Embedding": (10, 3),
    "EmbeddingBag": (10, 3),
}


def _cases(torch) -> Dict[str, Callable]:
    F = torch.nn.functional
    cases: Dict[str, Callable] = {}
    for name in UNARY:
        cases[name] = lambda x, o, n=name: getattr(torch, n)(x)
    for name in FUNCTIONAL_UNARY:
        cases[name] = lambda x, o, n=name: getattr(F, n)(x)
    for name in DIM:
        cases[name] = lambda x, o, n=name: getattr(torch, n)(x, dim=-1)
    for name in BINARY:
        cases[name] = lambda x, o, n=name: getattr(torch, n)(x, o)
    cases["clamp"] = lambda x, o: torch.clamp(x, -0.5, 0.5)
    cases["linear"] = lambda x, o: F.linear(x, o)
    cases["normalize"] = lambda x, o: F.normalize(x, dim=-1)
    cases["layer_norm"] = lambda x, o: F.layer_norm(x, x.shape[-1:])
    return cases


def measure() -> Tuple[List[str], List[str]]:
    """(ops that save their result, ops that save their first input), sorted, when the first input
    requires grad and any other does not."""
    import torch

    result, first = [], []
    for name, op in sorted(_cases(torch).items()):
        x = (torch.rand(3, 3, dtype=torch.float64) + 0.5).requires_grad_()
        other = torch.rand(3, 3, dtype=torch.float64) + 0.5  # a constant: what x alone makes the op save
        saved: List[torch.Tensor] = []
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
            out = op(x, other)
        ptrs = {t.untyped_storage().data_ptr() for t in saved}
        if out.untyped_storage().data_ptr() in ptrs:
            result.append(name)
        if x.untyped_storage().data_ptr() in ptrs:
            first.append(name)
    return result, first


# Ops of two tensors whose backward for the first needs the second (``x @ w`` keeps ``w`` when ``x``
# requires grad): ``einsum`` takes its operands after the equation.
OTHER = "mul div matmul mm bmm einsum atan2 hypot pow maximum minimum add sub linear".split()


def measure_other() -> List[str]:
    """Ops that save their second input when the first requires grad and the second does not
    (``torch.mm(w, b)``: writing ``b`` in place before backward() raises there)."""
    import torch

    calls = {"einsum": lambda x, o: torch.einsum("ij,jk->ik", x, o),
             "bmm": lambda x, o: torch.bmm(x.unsqueeze(0), o.unsqueeze(0)),
             "linear": lambda x, o: torch.nn.functional.linear(x, o)}
    out = []
    for name in sorted(OTHER):
        x = (torch.rand(3, 3, dtype=torch.float64) + 0.5).requires_grad_()
        other = torch.rand(3, 3, dtype=torch.float64) + 0.5
        saved: List[torch.Tensor] = []
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
            calls.get(name, lambda x, o, n=name: getattr(torch, n)(x, o))(x, other)
        if other.untyped_storage().data_ptr() in {t.untyped_storage().data_ptr() for t in saved}:
            out.append(name)
    return out


def _module_input(torch, name: str):
    if name in ("Embedding", "EmbeddingBag"):
        return torch.randint(0, 10, MODULE_INPUTS[name])  # indices: the weight is what is saved
    leaf = (torch.rand(*MODULE_INPUTS[name], dtype=torch.float64) + 0.5).requires_grad_()
    return leaf * 1  # not a leaf: an in-place module may write it


def _make(torch, name: str, **extra):
    args = MODULE_ARGS.get(name, ())
    kwargs = dict(args) if isinstance(args, dict) else {}
    return getattr(torch.nn, name)(*(() if isinstance(args, dict) else args), **kwargs, **extra).double()


def measure_modules() -> Dict[str, List[str]]:
    """Per ``torch.nn`` module class (a fresh one, in training mode): whether it saves its output
    or its input for backward (``saves-result``, ``saves-input``), whether with ``inplace=True`` it
    writes its input and returns it (``inplace``), saving it then (``inplace-saves-result``), where
    ``inplace`` sits among its positional parameters (``inplace-position``: ``Name:index``), whether
    it has parameters that require grad (``parameters``: its output is in a graph whatever its input), and whether it returns its input's own memory
    without writing it (``returns-input``: ``Identity``, ``Flatten`` of a contiguous input)."""
    import inspect

    import torch

    out: Dict[str, List[str]] = {"saves-result": [], "saves-input": [], "inplace": [], "inplace-saves-result": [],
                                 "returns-input": [], "inplace-position": [], "parameters": []}
    torch.manual_seed(0)
    for name in sorted(MODULE_INPUTS):
        x = _module_input(torch, name)
        module = _make(torch, name)
        if any(p.requires_grad for p in module.parameters()):
            out["parameters"].append(name)
        saved: List[torch.Tensor] = []
        before = x._version
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
            result = module(x, x) if name == "Bilinear" else module(x)
        if isinstance(result, tuple):
            result = result[0]  # LSTM's output (the hidden states of every step)
        ptrs = {t.untyped_storage().data_ptr() for t in saved}
        same = result.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        if same and x._version == before:
            out["returns-input"].append(name)
        elif result.untyped_storage().data_ptr() in ptrs:
            out["saves-result"].append(name)
        if x.untyped_storage().data_ptr() in ptrs and not same:
            out["saves-input"].append(name)
        parameters = list(inspect.signature(getattr(torch.nn, name).__init__).parameters)
        if "inplace" in parameters:
            out["inplace-position"].append(f"{name}:{parameters.index('inplace') - 1}")
            y = _module_input(torch, name)
            version = y._version
            saved = []
            with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
                written = _make(torch, name, inplace=True)(y)
            if written.untyped_storage().data_ptr() == y.untyped_storage().data_ptr() and y._version > version:
                out["inplace"].append(name)
                if y.untyped_storage().data_ptr() in {t.untyped_storage().data_ptr() for t in saved}:
                    out["inplace-saves-result"].append(name)
    return out


# ``torch.nn`` module classes -> constructor keyword arguments that may make every call write the
# module's own weight in place (each tried alone, on a weight whose rows are longer than 1).
WEIGHT_WRITING_ARGS = {"Embedding": {"max_norm": 1.0}, "EmbeddingBag": {"max_norm": 1.0}}


def measure_weight_writes() -> Dict[str, str]:
    """Per module class, the keyword (of ``WEIGHT_WRITING_ARGS``) with which a call writes the
    module's weight in place (its version counter moves): ``nn.Embedding(max_norm=...)``."""
    import torch

    out: Dict[str, str] = {}
    torch.manual_seed(0)
    for name, candidates in sorted(WEIGHT_WRITING_ARGS.items()):
        for keyword, value in sorted(candidates.items()):
            module = _make(torch, name, **{keyword: value})
            with torch.no_grad():
                module.weight.mul_(10)  # rows longer than any max_norm tried
            before = module.weight._version
            module(_module_input(torch, name))
            if module.weight._version > before:
                out[name] = keyword
    return out


def render() -> str:
    import torch

    result, first = measure()
    modules = measure_modules()
    weights = measure_weight_writes()

    def block(names: List[str]) -> str:
        lines, line = [], "   "
        for name in names:
            if len(line) + len(name) + 1 > 96:
                lines.append(line)
                line = "   "
            line += " " + name
        lines.append(line)
        return "\n".join(lines)

    version = torch.__version__.split("+")[0]
    return (f'"""Ops that save tensors for backward, measured with torch {version} by\n'
            '``tools/saved_for_backward.py`` (do not edit: run it again). Names are members of ``torch``,\n'
            '``torch.nn.functional`` or ``Tensor``; the first input required grad, any other did not."""\n\n'
            "# The op saves its result: writing the result in place before backward() raises there.\n"
            f'SAVES_RESULT = frozenset(\n    """\n{block(result)}\n    """.split()\n)\n\n'
            "# The op saves its first input: writing that input in place before backward() raises there.\n"
            f'SAVES_INPUT = frozenset(\n    """\n{block(first)}\n    """.split()\n)\n\n'
            "# ``torch.nn`` module classes (fresh, in training mode): each saves its output for backward, so\n"
            "# writing the output in place before backward() raises there.\n"
            f'MODULE_SAVES_RESULT = frozenset(\n    """\n{block(modules["saves-result"])}\n    """.split()\n)\n\n'
            "# ... saves its input: writing the input in place before backward() raises there.\n"
            f'MODULE_SAVES_INPUT = frozenset(\n    """\n{block(modules["saves-input"])}\n    """.split()\n)\n\n'
            "# ... made with inplace=True, writes its input in place and returns it.\n"
            f'MODULE_INPLACE = frozenset(\n    """\n{block(modules["inplace"])}\n    """.split()\n)\n\n'
            "# ... and then saves its output (the written input) for backward.\n"
            f'MODULE_INPLACE_SAVES_RESULT = frozenset(\n    """\n{block(modules["inplace-saves-result"])}\n    """.split()\n)\n\n'
            "# The position of ``inplace`` among the constructor's positional parameters (``nn.ReLU(True)``).\n"
            "MODULE_INPLACE_POSITION = {%s}\n\n" % ", ".join(f'"{n}": {i}' for n, i in
                                                          (e.split(":") for e in modules["inplace-position"]))
            +
            "# ... has parameters that require grad: its output is part of a graph whatever its input.\n"
            f'MODULE_WITH_PARAMETERS = frozenset(\n    """\n{block(modules["parameters"])}\n    """.split()\n)\n\n'
            "# ... returns its input's own memory, unwritten (an alias: writing the result writes the input).\n"
            f'MODULE_RETURNS_INPUT = frozenset(\n    """\n{block(modules["returns-input"])}\n    """.split()\n)\n\n'
            "# ... made with this keyword argument, writes its own weight in place at every call.\n"
            "MODULE_WRITES_WEIGHT = {%s}\n" % ", ".join(f'"{n}": "{k}"' for n, k in sorted(weights.items()))
            + "\n# Ops of two tensors that save the second when the first requires grad (``torch.mm(w, b)`` keeps\n"
            "# ``b``; ``einsum``: its operands): writing the second in place before backward() raises there.\n"
            f'SAVES_OTHER = frozenset(\n    """\n{block(measure_other())}\n    """.split()\n)\n')


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only say whether the data file is up to date")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = OUT.read_text() if OUT.exists() else ""
        print("up to date" if current == text else f"{OUT} is out of date")
        return 0 if current == text else 1
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

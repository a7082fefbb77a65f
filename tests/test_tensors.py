"""Unit tests of the tensor-kind inference, apart from any rule."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import libcst as cst
import pytest

from detachlint.analysis.tensors import Kind, TensorFacts
from detachlint.context import Context
from detachlint.walk import Walker
from libcst.metadata import MetadataWrapper


class Probe:
    """Records the kind of the argument of every ``probe(expr)`` call, as the traversal sees it."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.kinds = []

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            self.kinds.append(self.ctx.get(TensorFacts).kind(node.args[0].value))


def kinds(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    ctx = Context(module.code, "t.py", wrapper.module, wrapper)
    probe = Probe(ctx)
    Walker([ctx.get(TensorFacts), probe], parents=ctx.parents).walk(wrapper.module)
    return probe.kinds


T, U, O = Kind.TENSOR, Kind.UNKNOWN, Kind.OTHER


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import torch as T\nx = T.zeros(3)\nprobe(x)", [T]),
        ("from torch import tensor as mk\nprobe(mk([1]))", [T]),
        ("import torch.nn.functional as F\nprobe(F.relu(a))", [T]),
        ("probe(x)", [U]),
        ("import torch\nx = torch.ones(2)\nx = [1]\nprobe(x)", [Kind.OTHER]),
        ("import torch\nx = torch.ones(2)\nprobe(x.numpy())\nprobe(x.item())\nprobe(x.shape)\nprobe(x.T)", [Kind.NDARRAY, O, O, T]),
        ("import torch\ndef f(a: torch.Tensor, b):\n    probe(a)\n    probe(b)\n    probe(a + b)", [T, U, T]),
        ("from torch import Tensor\ndef f(a: 'Tensor'):\n    probe(a)", [T]),
        ("for p in model.parameters():\n    probe(p)\n    probe(p.grad)", [T, T]),
        ("for n, p in m.named_parameters():\n    probe(n)\n    probe(p)", [O, T]),
        ("import torch\nif c:\n    x = torch.ones(1)\nelse:\n    x = 3\nprobe(x)", [U]),
        ("import torch\nif c:\n    x = torch.ones(1)\nelse:\n    x = torch.zeros(1)\nprobe(x)", [T]),
        ("import torch\ndef f(v):\n    if isinstance(v, torch.Tensor):\n        probe(v)\n    probe(v)", [T, U]),
        ("import torch\ndef f(v):\n    if not isinstance(v, torch.Tensor):\n        return v\n    probe(v)", [T]),
        ("import torch\ndef f(v):\n    if isinstance(v, (list, tuple)):\n        probe(v)", [O]),
        ("import torch\nxs = [torch.ones(1) for _ in range(3)]\nprobe(xs)\nprobe(xs[0])", [Kind.TENSOR_SEQ, T]),
        ("import torch\nls = []\nfor i in range(3):\n    ls.append(torch.ones(1))\nprobe(ls)", [Kind.TENSOR_SEQ]),
        ("import torch\na, b = torch.ones(1), 2\nprobe(a)\nprobe(b)", [T, O]),
        ("import torch\na, b = torch.split(torch.ones(4), 2)\nprobe(a)", [T]),
        (
            "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.w = nn.Parameter(torch.ones(1))\n        self.fc = nn.Linear(1, 1)\n"
            "        self.register_buffer('b', None)\n    def forward(self, x):\n        probe(self.w)\n"
            "        probe(self.fc.weight)\n        probe(self.fc(x))\n        probe(self.b)\n        probe(self.other)",
            [T, T, T, T, U],
        ),
        ("class D:\n    def __init__(self):\n        self.data = 1\n    def f(self):\n        probe(self)", [O]),
        ("import numpy as np\nprobe(np.zeros(3))", [Kind.NDARRAY]),
        ("import torch\nprobe([torch.ones(1)][0])\nprobe(len(x))\nprobe('s')", [T, O, O]),
        ("import torch\nx = torch.ones(1)\nprobe(x.max())\nprobe(x.max(dim=0))", [T, U]),
        ("import torch\nx = torch.ones(1)\nprobe([v for v in x])", [Kind.TENSOR_SEQ]),
        ("import torch\nsd = model.state_dict()\nprobe(sd)\nprobe(sd['w'])", [Kind.STATE_DICT, T]),
        ("import torch\nopt = torch.optim.SGD(ps, lr=1)\nprobe(opt)", [Kind.OPTIMIZER]),
        # the left operand's ``__matmul__`` decides (test_catalog checks it against torch)
        ("import torch, numpy as np\nx = torch.ones(2, 2)\na = np.ones((2, 2))\n"
         "probe(x @ a)\nprobe(x @ u)\nprobe(u @ x)\nprobe(a @ x)\nprobe(u + x)", [T, T, U, U, T]),
    ],
)
def test_kinds(source, expected):
    assert kinds(source) == expected


def test_importing_detachlint_does_not_import_torch():
    code = "import sys, detachlint, detachlint.engine, detachlint.rules; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

#!/usr/bin/env python3
"""Where deep code breaks LibCST and detachlint: the measurement behind ``frontend/firstpass.py``.

    python bench/nesting.py            # both measurements, every shape (a few minutes)
    python bench/nesting.py --native   # only LibCST's native parser (subprocesses: it segfaults)
    python bench/nesting.py --lint     # only lint_source, with the first-pass guard lifted
    python bench/nesting.py --rejected # LibCST's native parser on brackets Python rejects (``frontend/newer.py``)

``--native`` parses each shape with ``libcst.parse_module`` in a subprocess, in the main thread
and in a worker thread (the language server lints in threads), at growing sizes, and prints what
happened (ok, a signal, an exception). ``--lint`` finds the first size at which ``lint_source``
(the guard lifted) reports TAL999 or raises, and prints the first pass's weighted depth just below
it: every shape should fail at about the same weighted depth, well above ``MAX_FRAMES``.
``--rejected`` parses nested brackets, which Python refuses past 200 levels, with LibCST alone: the
costliest level per token, what ``frontend/newer.py``'s ``MAX_LEVELS`` keeps below.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LEAF = "torch.ones(1)"  # a tensor: the analyses then ask about every level
SHAPES = {
    "or_chain": lambda n: " or ".join([LEAF] * (n + 1)),
    "binop_chain": lambda n: LEAF + f" + {LEAF}" * n,
    "unary_chain": lambda n: "-" * n + LEAF,
    "not_chain": lambda n: "not " * n + LEAF,
    "ifexp_chain": lambda n: f"{LEAF} if a else " * n + LEAF,
    "attribute_chain": lambda n: LEAF + ".t" * n,
    "call_chain": lambda n: LEAF + "()" * n,
    "subscript_chain": lambda n: LEAF + "[0]" * n,
    "lambda_chain": lambda n: "lambda: " * n + LEAF,
    "concatenated_strings": lambda n: " ".join(['"a"'] * (n + 1)),
    "elif_ladder": None,  # a statement shape, below
}


def source(name: str, n: int) -> str:
    if name == "elif_ladder":
        return "import torch\nx = torch.ones(1)\nif a:\n    x.add_(1)\n" + "elif a:\n    x.add_(1)\n" * n
    return (f"import torch\nx = {SHAPES[name](n)}\ny = torch.tensor(x)\nx.add_(1)\nz = x[0]\nx.mul_(2)\n"
            "print(z)\n")


_NATIVE = r"""
import sys, threading, libcst
src = sys.stdin.read()
def parse():
    try:
        libcst.parse_module(src); print("ok")
    except Exception as exc:
        print(type(exc).__name__)
if sys.argv[1] == "thread":
    t = threading.Thread(target=parse); t.start(); t.join()
else:
    parse()
"""


BRACKETS = {
    "parens": lambda n: "(" * n + "1" + ")" * n,
    "lists": lambda n: "[" * n + "1" + "]" * n,
    "calls": lambda n: "f(" * n + "1" + ")" * n,
    "subscripts": lambda n: "a[" * n + "1" + "]" * n,
}


def native(name: str, n: int, mode: str) -> str:
    text = f"x = {BRACKETS[name](n)}\n" if name in BRACKETS else source(name, n)
    try:
        compile(text, name, "exec", ast.PyCF_ONLY_AST)
    except (SyntaxError, RecursionError, MemoryError) as exc:
        if name not in BRACKETS:
            return f"python: {type(exc).__name__}"
    try:
        proc = subprocess.run([sys.executable, "-c", _NATIVE, mode], input=text, capture_output=True, text=True,
                              timeout=300)
    except subprocess.TimeoutExpired:
        return "timeout"
    if proc.returncode < 0:
        return f"signal {-proc.returncode}"
    return proc.stdout.strip() or f"rc {proc.returncode}"


def lint_fails(name: str, n: int):
    from detachlint.engine import lint_source

    text = source(name, n)
    try:
        compile(text, name, "exec", ast.PyCF_ONLY_AST)
    except (SyntaxError, RecursionError, MemoryError):
        return None
    try:
        found = lint_source(text, "x.py")
    except Exception:  # noqa: BLE001 - what is being measured
        return True
    return any(f.code == "TAL999" for f in found)


def weighted_depth(text: str) -> int:
    from detachlint.frontend.firstpass import too_deep
    from detachlint.engine import physical_lines

    tree, lines = ast.parse(text), physical_lines(text)
    lo, hi = 0, 1 << 20
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if too_deep(tree, lines, mid, 1 << 30) is None:
            hi = mid
        else:
            lo = mid
    return hi


def measure_lint(names) -> None:
    from detachlint.frontend import firstpass

    firstpass.too_deep.__defaults__ = (1 << 30, 1 << 30)  # lift the guard
    for name in names:
        lo, hi = 5, 2900
        if lint_fails(name, hi) is not True:
            print(f"{name:22} lint: no failure up to {hi} (or Python refuses it)", flush=True)
            continue
        while hi - lo > 2:
            mid = (lo + hi) // 2
            if lint_fails(name, mid):
                hi = mid
            else:
                lo = mid
        print(f"{name:22} lint: fails from {hi} levels; weighted depth at {lo}: {weighted_depth(source(name, lo))}",
              flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--native", action="store_true")
    parser.add_argument("--lint", action="store_true")
    parser.add_argument("--rejected", action="store_true")
    parser.add_argument("shapes", nargs="*", default=list(SHAPES))
    args = parser.parse_args()
    if args.rejected:
        for name in BRACKETS:
            row = [f"{n}: {native(name, n, 'main')} / {native(name, n, 'thread')}" for n in (500, 1000, 1500, 2000)]
            print(f"{name:22} libcst (main / thread): " + " | ".join(row), flush=True)
        return 0
    both = not args.native and not args.lint
    if args.native or both:
        for name in args.shapes:
            row = [f"{n}: {native(name, n, 'main')} / {native(name, n, 'thread')}" for n in (1000, 2900, 7500)]
            print(f"{name:22} libcst (main / thread): " + " | ".join(row), flush=True)
    if args.lint or both:
        measure_lint(args.shapes)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Slowdown of `detachlint run` on a small real CPU training script, both ways in one invocation.

    python bench/run_overhead.py [--steps 300] [--repeats 3] [--threads 1]

The training script (written to a temporary directory) trains an MLP on random data with
cross-entropy, SGD with momentum and a `state_dict()` copy every 100 steps: forward, backward, step
and zero_grad, the ops a real loop issues. Two sizes: `mnist-mlp` (784-256-10, batch 64: the
headline figure) and `tiny-mlp` (64-64-10, batch 32: so little arithmetic per op that per-op
overhead is everything). The script times its own steps after 20 warm-up steps (neither
`import torch` nor detachlint's linting of the script counts) and prints steps/s. Three ways, in
turn, `--repeats` times each: `python train.py`; the same inside a no-op `TorchDispatchMode` (the
floor any dispatch-mode observer pays); `python -m detachlint run train.py`. The best steps/s of
each and the ratios are printed. `--threads` sets torch's intra-op threads in the script (1 by
default, so that a shared machine's load moves the figures less). Needs torch and
detachlint_runtime.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

TRAIN = textwrap.dedent("""
    import os, sys, time
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    inp, hidden, batch, steps, threads = map(int, sys.argv[1:6])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(inp, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(batch, inp), torch.randint(0, 10, (batch,))
    best = None
    def step(i):
        global best
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if i % 100 == 0:
            best = {k: v.detach().clone() for k, v in model.state_dict().items()}
        return loss
    class Noop(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    def main():
        for i in range(20):
            step(i)
        start = time.perf_counter()
        for i in range(steps):
            loss = step(i)
        elapsed = time.perf_counter() - start
        print(f"steps/s {steps / elapsed:.1f} loss {loss.item():.4f}")
    if os.environ.get("NOOP_MODE"):
        with Noop():
            main()
    else:
        main()
""")
SIZES = {"mnist-mlp": (784, 256, 64), "tiny-mlp": (64, 64, 32)}


def measure(cmd, cwd, env=None) -> float:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, env=env)
    match = re.search(r"steps/s ([0-9.]+)", proc.stdout)
    if proc.returncode != 0 or match is None:
        sys.exit(f"bench/run_overhead.py: {' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stderr}")
    return float(match.group(1))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    if args.steps < 1 or args.repeats < 1 or args.threads < 1:
        parser.error("--steps, --repeats and --threads must be at least 1")
    import torch

    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs (load {os.getloadavg()[0]:.1f}), "
          f"torch {torch.__version__}, {args.threads} intra-op thread(s), Python {platform.python_version()}")
    floor_env = dict(os.environ, NOOP_MODE="1")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "train.py"
        script.write_text(TRAIN)
        for name, (inp, hidden, batch) in SIZES.items():
            tail = [str(v) for v in (inp, hidden, batch, args.steps, args.threads)]
            plain, floor, observed = [], [], []
            for _ in range(args.repeats):
                plain.append(measure([sys.executable, str(script), *tail], tmp))
                floor.append(measure([sys.executable, str(script), *tail], tmp, floor_env))
                observed.append(measure([sys.executable, "-m", "detachlint", "run", str(script), *tail], tmp))
            best = max(plain)
            print(f"{name} ({inp}-{hidden}-10, batch {batch}, {args.steps} steps, best of {args.repeats}):")
            for label, runs in (("python train.py", plain), ("no-op TorchDispatchMode", floor),
                                ("detachlint run train.py", observed)):
                ratio = "" if runs is plain else f"  {best / max(runs):.2f}x slower"
                print(f"  {label:<24} {max(runs):8.1f} steps/s{ratio}   (runs: {', '.join(f'{v:.0f}' for v in runs)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

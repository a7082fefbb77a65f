"""Slowdown of `detachlint run` on small real CPU training scripts, every way in one invocation.

    python bench/run_overhead.py [--steps 300] [--repeats 3] [--threads 1] [--models cnn ...]

The training script (written to a temporary directory) trains a model on random data with
cross-entropy, clips the last layer's weights through `.data` after every step (as a WGAN critic
does: a line detachlint flags, TAL001, so the observer's saved-tensor hooks are on and its dispatch
mode is on while that line runs) and takes a `state_dict()` copy every 100 steps: forward,
backward, step and zero_grad, the ops a real loop issues. Four models: `transformer` (a 2-layer encoder, width 64, 4 heads, sequence
32, batch 16, AdamW) and `cnn` (two convolutions with batch norm on 32x32 images, batch 16, AdamW):
the realistic loops; `mnist-mlp` (784-256-10, batch 64, SGD with momentum) and `tiny-mlp`
(64-64-10, batch 32: so little arithmetic per op that per-op overhead is everything). The script
times its own steps after 20 warm-up steps (neither `import torch` nor detachlint's linting of the
script counts) and prints steps/s. Four ways, interleaved, `--repeats` times each: `python
train.py`; the same inside a no-op `TorchDispatchMode` (the floor any dispatch-mode observer pays);
inside `torch.autograd.detect_anomaly()` (the debugging aid users already know); `python -m
detachlint run train.py`; the same with `--watch all` (every op observed). The best steps/s of each and the ratios are printed. `--threads` sets
torch's intra-op threads in the script (1 by default, so that a shared machine's load moves the
figures less). Needs torch and detachlint_runtime.
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
    kind = sys.argv[1]
    inp, hidden, batch, steps, threads = map(int, sys.argv[2:7])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    if kind == "cnn":
        model = torch.nn.Sequential(
            torch.nn.Conv2d(3, hidden, 3, padding=1), torch.nn.BatchNorm2d(hidden), torch.nn.ReLU(),
            torch.nn.Conv2d(hidden, 2 * hidden, 3, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(2 * hidden, 10))
        x = torch.randn(batch, 3, inp, inp)
    elif kind == "transformer":
        layer = torch.nn.TransformerEncoderLayer(hidden, 4, 2 * hidden, dropout=0.1, batch_first=True)
        model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False),
                                    torch.nn.Flatten(), torch.nn.Linear(inp * hidden, 10))
        x = torch.randn(batch, inp, hidden)
    else:
        model = torch.nn.Sequential(torch.nn.Linear(inp, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10))
        x = torch.randn(batch, inp)
    y = torch.randint(0, 10, (batch,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9) if kind.endswith("mlp") else \
        torch.optim.AdamW(model.parameters(), lr=1e-3)
    best = None
    clipped = list(model.parameters())[-2:]
    def step(i):
        global best
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        for p in clipped:  # weight clipping, as in a WGAN critic: a flagged line in the loop
            p.data.clamp_(-1.0, 1.0)
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
    elif os.environ.get("ANOMALY"):
        with torch.autograd.detect_anomaly():
            main()
    else:
        main()
""")
# name: (input size or image side or sequence length, hidden width, batch)
SIZES = {"transformer": (32, 64, 16), "cnn": (32, 16, 16), "mnist-mlp": (784, 256, 64), "tiny-mlp": (64, 64, 32)}
WAYS = (("python train.py", None), ("no-op TorchDispatchMode", "NOOP_MODE"),
        ("detect_anomaly()", "ANOMALY"), ("detachlint run train.py", "run"), ("... --watch all", "all"))


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
    parser.add_argument("--models", nargs="+", choices=list(SIZES), default=list(SIZES))
    args = parser.parse_args(argv)
    if args.steps < 1 or args.repeats < 1 or args.threads < 1:
        parser.error("--steps, --repeats and --threads must be at least 1")
    import torch

    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs (load {os.getloadavg()[0]:.1f}), "
          f"torch {torch.__version__}, {args.threads} intra-op thread(s), Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "train.py"
        script.write_text(TRAIN)
        for name in args.models:
            inp, hidden, batch = SIZES[name]
            tail = [name] + [str(v) for v in (inp, hidden, batch, args.steps, args.threads)]
            runs = {label: [] for label, _ in WAYS}
            for _ in range(args.repeats):  # interleaved, so that a change of load hits every way alike
                for label, how in WAYS:
                    if how in ("run", "all"):
                        cmd, env = [sys.executable, "-m", "detachlint", "run", "--watch",
                                    "all" if how == "all" else "flagged", str(script), *tail], None
                    else:
                        cmd = [sys.executable, str(script), *tail]
                        env = dict(os.environ, **{how: "1"}) if how else None
                    runs[label].append(measure(cmd, tmp, env))
            best = max(runs["python train.py"])
            print(f"{name} ({inp}/{hidden}, batch {batch}, {args.steps} steps, best of {args.repeats}):")
            for label, values in runs.items():
                ratio = "" if label == "python train.py" else f"  {best / max(values):.2f}x slower"
                print(f"  {label:<24} {max(values):8.1f} steps/s{ratio}   "
                      f"(runs: {', '.join(f'{v:.0f}' for v in values)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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
figures less). `--cpu-time` times the steps in CPU time (steadier when other processes share the
cores). Needs torch and detachlint_runtime.
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
from typing import Tuple

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
    def dqn():
        # cleanrl's dqn.py, shaped: the action is chosen outside no_grad (each graph dropped without
        # backward), a training step every 4 steps from a replay buffer, and the target network
        # updated through `.data` (a flagged line, TAL001) every 100 steps.
        n_obs, n_act = inp, 4
        q = torch.nn.Sequential(torch.nn.Linear(n_obs, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden),
                                torch.nn.ReLU(), torch.nn.Linear(hidden, n_act))
        target = torch.nn.Sequential(torch.nn.Linear(n_obs, hidden), torch.nn.ReLU(),
                                     torch.nn.Linear(hidden, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, n_act))
        target.load_state_dict(q.state_dict())
        opt = torch.optim.Adam(q.parameters(), lr=2.5e-4)
        size = 10000
        obs_buf, act_buf, rew_buf, next_buf = (torch.zeros(size, n_obs), torch.zeros(size, dtype=torch.long),
                                               torch.zeros(size), torch.zeros(size, n_obs))
        state = {"obs": torch.randn(1, n_obs)}
        def step(i):
            obs = state["obs"]
            action = q(obs).argmax(dim=1)
            next_obs = torch.tanh(obs + 0.1 * torch.randn(1, n_obs))
            k = i % size
            obs_buf[k], act_buf[k], rew_buf[k], next_buf[k] = obs[0], action[0], float(action[0] == 1), next_obs[0]
            state["obs"] = next_obs
            loss = None
            if i % 4 == 0:
                idx = torch.randint(0, min(i + 1, size), (batch,))
                with torch.no_grad():
                    td_target = rew_buf[idx] + 0.99 * target(next_buf[idx]).max(dim=1).values
                old = q(obs_buf[idx]).gather(1, act_buf[idx].unsqueeze(1)).squeeze(1)
                loss = torch.nn.functional.mse_loss(td_target, old)
                opt.zero_grad()
                loss.backward()
                opt.step()
            if i % 100 == 0:
                for tp, qp in zip(target.parameters(), q.parameters()):
                    tp.data.copy_(0.005 * qp.data + 0.995 * tp.data)
            return loss if loss is not None else torch.zeros(())
        return step
    def wgan():
        # The WGAN of the original paper, shaped: five critic steps on G(z).detach() (the generator's
        # graph dropped each time), the critic's weights clipped through `.data` (TAL001), then a
        # generator step.
        nz = 16
        G = torch.nn.Sequential(torch.nn.Linear(nz, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden),
                                torch.nn.ReLU(), torch.nn.Linear(hidden, inp), torch.nn.Tanh())
        D = torch.nn.Sequential(torch.nn.Linear(inp, hidden), torch.nn.LeakyReLU(0.2), torch.nn.Linear(hidden, hidden),
                                torch.nn.LeakyReLU(0.2), torch.nn.Linear(hidden, 1))
        opt_g, opt_d = torch.optim.RMSprop(G.parameters(), lr=5e-5), torch.optim.RMSprop(D.parameters(), lr=5e-5)
        real = torch.tanh(torch.randn(1024, inp))
        def step(i):
            for _ in range(5):
                fake = G(torch.randn(batch, nz)).detach()
                d_loss = D(fake).mean() - D(real[torch.randint(0, 1024, (batch,))]).mean()
                opt_d.zero_grad()
                d_loss.backward()
                opt_d.step()
                for p in D.parameters():
                    p.data.clamp_(-0.01, 0.01)
            g_loss = -D(G(torch.randn(batch, nz))).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
            return g_loss
        return step
    def lstm():
        # pytorch/examples' word_language_model, shaped: an LSTM language model, truncated BPTT
        # (the hidden state detached between batches), clip_grad_norm_ and the update through
        # `.data` (a flagged line, TAL001); a loss on a held-out batch every 10 steps, computed
        # outside no_grad and thrown away.
        ntok = 200
        emb, rnn, dec = torch.nn.Embedding(ntok, hidden), torch.nn.LSTM(hidden, hidden, 2), torch.nn.Linear(hidden, ntok)
        params = [*emb.parameters(), *rnn.parameters(), *dec.parameters()]
        data = torch.randint(0, ntok, (inp * 50 + 1, batch))
        state = {"h": None}
        def step(i):
            k = (i % 50) * inp
            x, y = data[k:k + inp], data[k + 1:k + 1 + inp]
            h = state["h"]
            if h is not None:
                h = tuple(t.detach() for t in h)
            out, h = rnn(emb(x), h)
            state["h"] = h
            loss = torch.nn.functional.cross_entropy(dec(out).view(-1, ntok), y.reshape(-1))
            for p in params:
                p.grad = None
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 0.25)
            for p in params:
                p.data.add_(p.grad, alpha=-1.0)
            if i % 10 == 0:
                held_out = torch.nn.functional.cross_entropy(dec(rnn(emb(data[:inp]))[0]).view(-1, ntok),
                                                             data[1:inp + 1].reshape(-1))
            return loss
        return step
    REAL = {"dqn": dqn, "wgan": wgan, "lstm": lstm}
    class Noop(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    def main():
        for i in range(20):
            step(i)
        clock = time.process_time if os.environ.get("CPU_CLOCK") else time.perf_counter
        start = clock()
        for i in range(steps):
            loss = step(i)
        elapsed = clock() - start
        import resource
        print(f"steps/s {steps / elapsed:.1f} loss {loss.item():.4f} "
              f"maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}")
    if kind in REAL:
        step = REAL[kind]()
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
SIZES = {"transformer": (32, 64, 16), "cnn": (32, 16, 16), "mnist-mlp": (784, 256, 64), "tiny-mlp": (64, 64, 32),
         "dqn": (8, 120, 64), "wgan": (64, 128, 64), "lstm": (35, 64, 16)}
# --steps for each model is multiplied by this: enough steps for a leak to show (2,000 dqn steps
# record 2,000 dropped graphs; before issue 43 past 4,096 live storages each pack got slower)
STEP_SCALE = {"dqn": 10}
WAYS = (("python train.py", None), ("no-op TorchDispatchMode", "NOOP_MODE"),
        ("detect_anomaly()", "ANOMALY"), ("detachlint run train.py", "run"), ("... --watch all", "all"))


def measure(cmd, cwd, env=None) -> Tuple[float, int]:
    """steps/s and the peak resident memory in MB."""
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, env=env)
    match = re.search(r"steps/s ([0-9.]+) .* maxrss ([0-9]+)", proc.stdout)
    if proc.returncode != 0 or match is None:
        sys.exit(f"bench/run_overhead.py: {' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stderr}")
    return float(match.group(1)), int(match.group(2))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--models", nargs="+", choices=list(SIZES), default=list(SIZES))
    parser.add_argument("--ways", nargs="+", choices=[how or "plain" for _, how in WAYS],
                        default=[how or "plain" for _, how in WAYS],
                        help="which ways to run (default: all; plain always runs, the ratios need it)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time the steps in the process's CPU time, not wall-clock time: on a loaded "
                             "machine (other processes on the same cores) wall-clock runs vary several times")
    parser.add_argument("--compare", metavar="CHECKOUT",
                        help="also run `detachlint run` from another checkout (its runtime/ and detachlint/ first "
                             "on PYTHONPATH), side by side: before and after a change in one invocation")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.repeats < 1 or args.threads < 1:
        parser.error("--steps, --repeats and --threads must be at least 1")
    import torch

    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs (load {os.getloadavg()[0]:.1f}), "
          f"torch {torch.__version__}, {args.threads} intra-op thread(s), Python {platform.python_version()}, "
          f"{'CPU' if args.cpu_time else 'wall-clock'} time")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "train.py"
        script.write_text(TRAIN)
        for name in args.models:
            inp, hidden, batch = SIZES[name]
            steps = args.steps * STEP_SCALE.get(name, 1)
            tail = [name] + [str(v) for v in (inp, hidden, batch, steps, args.threads)]
            ways = [(label, how) for label, how in WAYS if how is None or how in args.ways] + ([(f"... from {Path(args.compare).name}", "compare")] if args.compare else [])
            runs = {label: [] for label, _ in ways}
            for _ in range(args.repeats):  # interleaved, so that a change of load hits every way alike
                for label, how in ways:
                    if how in ("run", "all", "compare"):
                        cmd, env = [sys.executable, "-m", "detachlint", "run", "--watch",
                                    "all" if how == "all" else "flagged", str(script), *tail], None
                        if how == "compare":
                            root = Path(args.compare).resolve()
                            env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root / "runtime"), str(root)]))
                    else:
                        cmd = [sys.executable, str(script), *tail]
                        env = dict(os.environ, **{how: "1"}) if how else None
                    if args.cpu_time:
                        env = dict(env or os.environ, CPU_CLOCK="1")
                    runs[label].append(measure(cmd, tmp, env))
            best, memory = max(runs["python train.py"])
            print(f"{name} ({inp}/{hidden}, batch {batch}, {steps} steps, best of {args.repeats}):")
            for label, values in runs.items():
                fastest, peak = max(values)
                ratio = "" if label == "python train.py" else f"  {best / fastest:.2f}x slower"
                print(f"  {label:<24} {fastest:8.1f} steps/s{ratio}   peak {peak} MB ({peak / memory:.2f}x)   "
                      f"(runs: {', '.join(f'{v:.0f}' for v, _ in values)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

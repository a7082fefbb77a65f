#!/usr/bin/env bash
# The runtime companion on a GPU, in one call: install from this checkout into a venv that reuses
# the machine's own torch (with CUDA), run the runtime tests (the transparency battery included:
# with CUDA the programs use it as their default device), pattern mode on CUDA, and `detachlint run`
# on the demo; print one summary. Never needs the network:
#
#     bench/gpu_wheels.sh                  # here, beforehand: bench/gpu-wheels/
#     bench/gpu_check.sh [WHEELS]          # there (default WHEELS: bench/gpu-wheels)
#
# Works on a machine without CUDA too (the CUDA parts then say so): try it before spending GPU time.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
wheels=${1:-$root/bench/gpu-wheels}
py=${PYTHON:-python3}
venv=${TMPDIR:-/tmp}/detachlint-gpu-venv
log=${TMPDIR:-/tmp}/detachlint-gpu-check
mkdir -p "$log"
rm -rf "$venv"
"$py" -m venv --system-site-packages "$venv" || exit 2
. "$venv/bin/activate"
# Our two distributions from this checkout, into the venv whatever the machine has; their
# dependencies only if missing (torch, numpy and pytest come from the machine).
{ pip install --no-index --find-links "$wheels" --ignore-installed --no-deps "$root" "$root/runtime" \
    && pip install --no-index --find-links "$wheels" "libcst>=1.1,<1.10" "pathspec>=0.12"; } > "$log/install.txt" 2>&1 \
    || { cat "$log/install.txt"; echo "gpu_check: install failed"; exit 2; }
cd "$root"
python - <<'PY' > "$log/device.txt" 2>&1
import torch
cuda = torch.cuda.is_available()
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, available: {cuda}"
      + (f", {torch.cuda.get_device_name()}" if cuda else ""))
PY
workers=$(python -c "import os; print(min(8, os.cpu_count() or 1))")
xdist=$(python -c "import xdist" 2>/dev/null && echo "-n $workers" || echo "")
# shellcheck disable=SC2086
python -m pytest -q -p no:cacheprovider $xdist -o addopts="" tests/test_runtime_run.py tests/test_runtime_pattern.py tests/test_runtime_lines.py \
    tests/test_runtime_safety.py > "$log/tests.txt" 2>&1
tests_rc=$?
python -m detachlint check --confirm --confirm-devices cpu,cuda --output-format json demo/ > "$log/confirm.json" \
    2> "$log/confirm.err"
python - "$log" "$tests_rc" <<'PY'
import collections, json, re, sys
from pathlib import Path
log, rc = Path(sys.argv[1]), int(sys.argv[2])
print("== detachlint GPU check ==")
print((log / "device.txt").read_text().strip())
tail = [l for l in (log / "tests.txt").read_text().splitlines() if l.strip()]
print("runtime tests:", tail[-1] if tail else "(no output)", "" if rc == 0 else f"(exit {rc})")
for line in tail:
    if line.startswith(("FAILED", "ERROR")):
        print("  ", line[:200])
try:
    findings = json.loads((log / "confirm.json").read_text())
except ValueError:
    findings = []
    print("pattern mode: no JSON;", (log / "confirm.err").read_text()[-400:])
by = collections.Counter()
for f in findings:
    for c in f.get("confirmation", {}).get("configurations", []):
        by[(c["device"], c["status"])] += 1
for device in ("cpu", "cuda"):
    counts = {s: n for (d, s), n in sorted(by.items()) if d == device}
    print(f"pattern mode on {device}:", ", ".join(f"{n} {s}" for s, n in counts.items()) or "nothing ran")
for f in findings:
    for c in f.get("confirmation", {}).get("configurations", []):
        if c["device"] == "cuda" and c["status"] not in ("reproduced", "not-reproduced", "not-applicable", "skipped"):
            print(f"  {f['code']} {Path(f['filename']).name}:{f['location']['row']} {c['config']}: {c['status']}: "
                  f"{str(c.get('observed'))[:160]}")
print("logs:", log)
PY
exit "$tests_rc"

"""The reproduction worker: ``python -m detachlint.runtime.worker``.

Runs in its own process, so a crash, a hang or a leaked global in torch never reaches the
linter. Protocol, one JSON object per line: the worker first writes ``{"ready": true, "torch":
..., "cuda": ...}``; then for every request ``{"id", "signature", "config": {"device",
"backend"}}`` read from stdin it writes ``{"id", "result"}``. Anything torch or a compiler prints
goes to stderr: the protocol has its own file descriptor.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback


def main() -> int:
    protocol = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # stray prints (compilers, torch) go to stderr
    sys.stdout = sys.stderr

    import warnings

    warnings.filterwarnings("ignore", category=DeprecationWarning)
    import torch

    from . import recipes

    for module in filter(None, os.environ.get("DETACHLINT_RECIPE_MODULES", "").split(",")):
        importlib.import_module(module)  # extra recipes register themselves with @recipe

    cuda = bool(torch.cuda.is_available())
    protocol.write(json.dumps({"ready": True, "torch": torch.__version__, "cuda": cuda,
                               "cuda_devices": torch.cuda.device_count() if cuda else 0}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        config = recipes.Config(**request["config"])
        start = time.perf_counter()
        if config.device == "cuda" and not cuda:
            result = {"status": "skipped", "observed": "CUDA is not available (torch.cuda.is_available() is False)"}
        else:
            try:
                result = recipes.reproduce(request["signature"], config)
            except recipes.NoReproducer as exc:
                result = {"status": "no-reproducer", "observed": str(exc)}
            except Exception as exc:  # noqa: BLE001 - a recipe bug, never an observation
                tail = traceback.format_exc().strip().splitlines()[-3:]
                result = {"status": "error", "observed": f"the recipe failed: {type(exc).__name__}: {exc}"[:400],
                          "details": {"traceback": tail}}
        result["seconds"] = round(time.perf_counter() - start, 3)
        protocol.write(json.dumps({"id": request["id"], "result": result}, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

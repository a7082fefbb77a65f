"""The reproduction worker, started by ``runner._Worker`` as ``python -I`` (isolated: no working
directory, PYTHONPATH or user site on ``sys.path``) with extra recipe files as arguments.

Runs in its own process, so a crash, a hang or a leaked global in torch never reaches the
linter. Protocol, one JSON object per line: the worker first writes ``{"ready": true, "torch":
..., "cuda": ...}``; then for every request ``{"id", "signature", "config": {"device",
"backend"}}`` read from stdin it writes ``{"id", "result"}``. Anything torch or a compiler prints
goes to stderr: the protocol has its own file descriptor.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback


def _load_recipe_file(path: str, index: int) -> None:
    """Execute one extra recipe file by path (it registers itself with ``@recipe``): a file the
    caller named, never a module looked up on a path the user's project controls."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"detachlint_extra_recipes_{index}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load recipe file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    # From its source, not through the loader: the worker runs isolated (``-I``, which ignores
    # PYTHONDONTWRITEBYTECODE), so the loader would write a ``.pyc`` beside the user's file and
    # later trust it by the source's size and mtime in whole seconds: an edit of the same size
    # within the second would run the old recipe.
    with open(path, "rb") as handle:
        code = compile(handle.read(), path, "exec", dont_inherit=True)
    exec(code, module.__dict__)


def main(argv=None) -> int:
    recipe_files = list(sys.argv[1:] if argv is None else argv)
    protocol = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # stray prints (compilers, torch) go to stderr
    sys.stdout = sys.stderr

    import warnings

    warnings.filterwarnings("ignore", category=DeprecationWarning)
    import torch

    from detachlint.signature import Signature, SignatureError
    from detachlint_runtime import recipes
    from detachlint_runtime.rules import reproduce

    for index, path in enumerate(recipe_files):
        _load_recipe_file(path, index)

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
                result = reproduce(Signature.from_json(request["signature"]), config)
            except SignatureError as exc:
                result = {"status": "no-reproducer", "observed": f"not a signature of the contract: {exc}"}
            except recipes.NotApplicable as exc:
                result = {"status": "not-applicable", "observed": str(exc)}
            except recipes.NoReproducer as exc:
                result = {"status": "no-reproducer", "observed": str(exc)}
            except Exception as exc:  # noqa: BLE001 - the recipe's own failure is never an observation
                tail = traceback.format_exc().strip().splitlines()[-3:]
                result = {"status": "no-reproducer", "observed": f"the recipe failed: {type(exc).__name__}: {exc}"[:400],
                          "details": {"error": f"{type(exc).__name__}: {exc}"[:400], "traceback": tail}}
        result["seconds"] = round(time.perf_counter() - start, 3)
        protocol.write(json.dumps({"id": request["id"], "result": result}, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

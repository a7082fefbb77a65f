"""What the command line needs of the runtime companion before it runs anything: its install
hint, its backends and the error for a missing torch. Kept apart from ``runner`` (subprocesses,
threads, queues), so that adding the companion's options to detachlint's parser costs little
(every ``detachlint check`` does it, the cached runs too)."""

from __future__ import annotations

from typing import Tuple

__version__ = "0.1.0"  # here, not in __init__: the runner needs it, and __init__ imports the runner

# torch first, pinned, so that the runtime's ``torch>=2.1`` does not pull a newer, CUDA-sized release.
INSTALL_HINT = "pip install torch==2.13.0 && pip install ./runtime  (from a detachlint checkout)"
DEFAULT_BACKENDS: Tuple[str, ...] = ("eager", "aot_eager")
ALL_BACKENDS: Tuple[str, ...] = ("eager", "aot_eager", "inductor")


class TorchMissing(RuntimeError):
    """torch is not importable: the runtime companion cannot run."""

    def __init__(self, detail: str = "") -> None:
        message = f"the runtime companion needs torch: {INSTALL_HINT}"
        super().__init__(message + (f" ({detail})" if detail else ""))
        self.detail = detail

"""Running the user's program in this process, the way ``python script.py`` / ``python -m mod`` would.

Like coverage.py: a fresh ``__main__`` module, ``sys.argv`` and ``sys.path[0]`` as Python sets them,
and the program's exit status, output and exceptions passed through unchanged. An uncaught
exception is printed as Python prints it (our own frames left out) and gives exit status 1.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback
import types
from typing import List, Optional


class ProgramError(Exception):
    """The program cannot be started (no such file, no such module)."""


class Program:
    def __init__(self, module: Optional[str], argv: List[str]) -> None:
        self.module = module
        if module is None:
            if not argv:
                raise ProgramError("give a script to run (`detachlint run script.py [args]`) or -m MODULE")
            self.path = os.path.abspath(argv[0])
            if not os.path.isfile(self.path):
                raise ProgramError(f"can't open file {argv[0]!r}: no such file")
            self.argv = [argv[0], *argv[1:]]
        else:
            import importlib.util

            sys.path.insert(0, os.getcwd())
            try:
                spec = importlib.util.find_spec(module)
            except (ImportError, ValueError) as exc:
                spec, detail = None, str(exc)
            else:
                detail = ""
            finally:
                sys.path.pop(0)
            if spec is None:
                raise ProgramError(f"no module named {module!r}" + (f" ({detail})" if detail else ""))
            self.path = spec.origin
            self.argv = [spec.origin or module, *argv]

    def run(self, observer) -> int:
        saved_argv, saved_path0, saved_main = sys.argv, sys.path[0], sys.modules.get("__main__")
        sys.argv = list(self.argv)
        sys.path[0] = os.getcwd() if self.module else os.path.dirname(self.path)
        observer.start()
        try:
            if self.module:
                runpy.run_module(self.module, run_name="__main__", alter_sys=True)
            else:
                main = types.ModuleType("__main__")
                main.__file__ = self.path
                main.__builtins__ = sys.modules["builtins"]
                main.__loader__ = None
                main.__spec__ = None
                sys.modules["__main__"] = main
                with open(self.path, "rb") as handle:
                    code = observer.lines.compile(handle.read(), self.path)
                exec(code, main.__dict__)
            status = 0
        except SystemExit as exc:
            status = _exit_status(exc.code)
        except BaseException as exc:  # noqa: BLE001 - the program's own exception, printed as Python would
            observer.stop()
            _print_exception(exc)
            status = 130 if isinstance(exc, KeyboardInterrupt) else 1
        finally:
            observer.stop()
            sys.argv, sys.path[0] = saved_argv, saved_path0
            if saved_main is not None:
                sys.modules["__main__"] = saved_main
        sys.stdout.flush()
        return status


def _exit_status(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # what Python does with sys.exit("message")
    return 1


def _print_exception(exc: BaseException) -> None:
    tb = exc.__traceback__
    here = os.path.dirname(os.path.abspath(__file__))
    while tb is not None and (tb.tb_frame.f_code.co_filename.startswith(here)
                              or tb.tb_frame.f_code.co_filename == runpy.__file__):
        tb = tb.tb_next
    sys.stdout.flush()
    traceback.print_exception(type(exc), exc, tb)
    sys.stderr.flush()

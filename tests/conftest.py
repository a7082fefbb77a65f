import compileall
import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def pytest_configure(config) -> None:
    """Write the bytecode of the packages under test before any test starts a subprocess of them.

    The suite starts hundreds of ``python -m detachlint`` processes; an editable install imports
    the package from the checkout, and where ``PYTHONDONTWRITEBYTECODE`` is set (as on CI) nothing
    writes its ``__pycache__``, so each process compiled every module it imported again: a third
    of a short process's CPU time. ``compileall`` writes it whatever that variable says, and skips
    what is up to date (a worker finds everything written by the controller)."""
    for name in ("detachlint", "detachlint_runtime"):
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(location, quiet=1)

"""Deduplicate signatures, consult the cache, run what is left in an isolated worker, aggregate.

Nothing here imports torch: reproductions run in worker subprocesses (``detachlint_runtime.worker``
started with ``python -I``: no working directory, no PYTHONPATH, no user site on ``sys.path``),
one at a time, each with a time limit. A worker that crashes or hangs is killed
(with its process group: inductor starts compile workers) and replaced for the next
reproduction; its reproduction is reported as ``crashed`` or ``timeout``, never as a verdict.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from detachlint.signature import Signature

from .names import DEFAULT_BACKENDS, TorchMissing, __version__ as RUNTIME_VERSION

DEVICES: Tuple[str, ...] = ("cpu", "cuda")
# Seconds one reproduction may take; inductor's first compile is 15-40 s cold on two cores.
TIME_LIMITS: Dict[str, float] = {"eager": 60.0, "aot_eager": 120.0, "inductor": 300.0}
STARTUP_LIMIT = 120.0  # importing torch in the worker
CACHEABLE = {"reproduced", "not-reproduced", "no-reproducer", "not-applicable"}
OBSERVED = {"reproduced", "not-reproduced"}
_HERE = Path(__file__).resolve().parent
_DIST_ROOT = _HERE.parent  # the directory that holds ``detachlint_runtime``: the worker's only extra path
RECIPE_MODULES_ENV = "DETACHLINT_RECIPE_MODULES"  # extra recipe files, os.pathsep-separated paths


def torch_version() -> str:
    """The installed torch version, without importing torch; raises :class:`TorchMissing`."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError) as exc:
        raise TorchMissing(str(exc)) from None
    if spec is None:
        raise TorchMissing("No module named 'torch'")
    from importlib import metadata  # here: a tenth of ``detachlint check``'s start-up otherwise

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        origin = Path(spec.origin or "")
        version_file = origin.parent / "version.py"
        if version_file.exists():
            for line in version_file.read_text(encoding="utf-8").splitlines():
                if line.startswith("__version__"):
                    return line.split("=", 1)[1].strip().strip("'\"")
        return "unknown"


# Packages a recipe may need besides torch (recipes.need_numpy): a verdict depends on whether
# they are there, so the cache is keyed on them too.
OPTIONAL_PACKAGES = ("numpy",)


def package_versions() -> str:
    """``numpy=2.1.0`` (or ``numpy=absent``) for each optional package, found without importing it."""
    from importlib import metadata

    found = []
    for name in OPTIONAL_PACKAGES:
        try:
            present = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            present = False
        version = "absent"
        if present:
            try:
                version = metadata.version(name)
            except metadata.PackageNotFoundError:
                version = "unknown"
        found.append(f"{name}={version}")
    return ",".join(found)


def cuda_probe() -> Tuple[bool, str]:
    """Whether CUDA *may* be available, decided without importing torch; the worker has the last
    word (``torch.cuda.is_available()``). The reason is what a skipped configuration reports."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return False, "torch is not importable"
    if spec is None or not spec.origin:
        return False, "torch is not installed"
    lib = Path(spec.origin).parent / "lib"
    has_cuda_lib = any(lib.glob("libtorch_cuda*")) or any(lib.glob("torch_cuda*.dll"))
    if not has_cuda_lib:
        return False, f"this torch build has no CUDA support (torch {torch_version()})"
    if sys.platform.startswith("linux") and not Path("/dev/nvidiactl").exists():
        return False, "no NVIDIA GPU device on this machine (/dev/nvidiactl is missing)"
    return True, ""


def canonical_json(data: object) -> str:
    """JSON with sorted keys and no spaces: equal data give equal text, whatever the key order."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)


def canonical(signature: Signature) -> str:
    """The key of a signature: equal patterns give equal keys."""
    return canonical_json(signature.to_json())


def recipe_paths(extra: Sequence[str] = ()) -> List[Path]:
    """Extra recipe modules, as files: the ones given by the caller, then the environment's. Files,
    not module names, so that nothing is looked up on (or imported from) the user's ``sys.path``."""
    given = list(extra) + [p for p in os.environ.get(RECIPE_MODULES_ENV, "").split(os.pathsep) if p.strip()]
    out: List[Path] = []
    for item in given:
        path = Path(item).expanduser().resolve()
        if path not in out:
            out.append(path)
    return out


def recipe_fingerprint(extra: Sequence[Path] = ()) -> str:
    """Everything that changes a result: our recipe, rule and worker sources, every extra recipe module's
    source (an unreadable one is hashed as such), and the versions of detachlint and this package."""
    h = hashlib.sha256()
    for path in [_HERE / "recipes.py", _HERE / "worker.py"] + sorted((_HERE / "rules").glob("*.py")):
        h.update(path.read_bytes())
    for path in extra:
        h.update(str(path).encode() + b"\0")
        try:
            h.update(path.read_bytes())
        except OSError as exc:
            h.update(f"unreadable: {exc}".encode())
    h.update(f"detachlint {_core_version()} runtime {RUNTIME_VERSION} python {sys.version_info[:2]}".encode())
    return h.hexdigest()[:24]


def _core_version() -> str:
    try:
        from detachlint import __version__
    except ImportError:  # pragma: no cover - the runtime requires detachlint
        return "missing"
    return __version__


def _atomic_write(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


@dataclass(frozen=True)
class Config:
    device: str
    backend: str

    @property
    def name(self) -> str:
        return f"{self.device}-{self.backend}"


class Cache:
    """One JSON file per (signature, configuration), under ``<root>/runtime/torch-<version>/``.

    An entry names everything its result depends on (signature, configuration, torch version,
    recipe fingerprint, the optional packages present) and carries a SHA-256 of all of it and the
    result; an entry that does not match, or whose checksum is wrong (hand-edited, truncated, from
    another version), is ignored and recomputed: ``rejected`` counts those."""

    def __init__(self, root: Path, torch: str, fingerprint: str, packages: str = "") -> None:
        self.dir = Path(root) / "runtime" / f"torch-{torch}"
        self.torch = torch
        self.fingerprint = fingerprint
        self.packages = packages  # package_versions(): numpy absent gives no-reproducer, present may not
        self.rejected = 0

    def path(self, key: str, config: Config) -> Path:
        digest = hashlib.sha256(f"{key}|{config.name}|{self.fingerprint}|{self.packages}".encode()).hexdigest()[:32]
        return self.dir / f"{digest}.json"

    def _identity(self, key: str, config: Config) -> dict:
        return {"signature": key, "config": config.name, "torch": self.torch, "fingerprint": self.fingerprint,
                "packages": self.packages}

    @staticmethod
    def checksum(identity: dict, result: dict) -> str:
        return hashlib.sha256(canonical_json({"identity": identity, "result": result}).encode()).hexdigest()

    def get(self, key: str, config: Config) -> Optional[dict]:
        path = self.path(key, config)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            self.rejected += 1
            return None
        identity = self._identity(key, config)
        ok = (isinstance(data, dict) and isinstance(data.get("result"), dict)
              and all(data.get(k) == v for k, v in identity.items())
              and data.get("checksum") == self.checksum(identity, data["result"])
              and data["result"].get("status") in CACHEABLE)
        if not ok:
            self.rejected += 1
            return None
        return data["result"]

    def put(self, key: str, config: Config, result: dict) -> None:
        target = self.path(key, config)
        identity = self._identity(key, config)
        result = json.loads(json.dumps(result, default=str))  # what a reader will see, checksummed as such
        entry = dict(identity, result=result, checksum=self.checksum(identity, result))
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(target, json.dumps(entry, indent=1).encode("utf-8"))
        except OSError:
            pass  # a cache that cannot be written only costs time


class _Died(Exception):
    def __init__(self, returncode: Optional[int], stderr: str) -> None:
        super().__init__(f"exit code {returncode}")
        self.returncode = returncode
        self.stderr = stderr


class _Timeout(Exception):
    pass


class _Worker:
    """One ``detachlint.runtime.worker`` process and a thread that reads its answers."""

    def __init__(self, python: str, env: Dict[str, str], recipe_files: Sequence[Path] = ()) -> None:
        self.stderr = tempfile.TemporaryFile(mode="w+b")
        # -I: neither the working directory nor PYTHONPATH nor the user site is on sys.path, so a
        # project-local json.py (or torch.py) is never what the worker imports; the package's own
        # directory is put back explicitly, for a checkout that is on sys.path but not installed.
        boot = ("import sys; sys.path.insert(0, sys.argv[1]); "
                "from detachlint_runtime.worker import main; sys.exit(main(sys.argv[2:]))")
        self.proc = subprocess.Popen(
            [python, "-I", "-c", boot, str(_DIST_ROOT), *map(str, recipe_files)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.stderr, env=env, text=True, encoding="utf-8", bufsize=1,
            start_new_session=(os.name == "posix"), cwd=tempfile.gettempdir(),
        )
        self.lines: "queue.Queue[Optional[str]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.hello: dict = {}

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _next(self, limit: float) -> dict:
        deadline = time.monotonic() + limit
        while True:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise _Timeout() from None
            if line is None:
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
                raise _Died(self.proc.returncode, self.stderr_tail())
            if line.strip():
                return json.loads(line)

    def start(self, limit: float) -> dict:
        self.hello = self._next(limit)
        return self.hello

    def run(self, request: dict, limit: float) -> dict:
        try:
            self.proc.stdin.write(json.dumps(request, default=str) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise _Died(self.proc.poll(), self.stderr_tail()) from None
        while True:
            answer = self._next(limit)
            if answer.get("id") == request["id"]:
                return answer["result"]

    def stderr_tail(self, lines: int = 6) -> str:
        try:
            self.stderr.seek(0)
            text = self.stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def stop(self, kill: bool = False) -> None:
        if self.proc.poll() is None and not kill:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                kill = True
        if self.proc.poll() is None or kill:
            try:
                if os.name == "posix":
                    os.killpg(self.proc.pid, signal.SIGKILL)  # the worker and its compile workers
                else:
                    self.proc.kill()
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.stderr.close()


ProgressFn = Callable[[int, int, str], None]


class Confirmer:
    """Confirms signatures by reproduction. One instance per run; :attr:`reproductions` counts the
    reproductions actually executed (cache hits and skipped configurations are not)."""

    def __init__(
        self,
        backends: Sequence[str] = DEFAULT_BACKENDS,
        devices: Sequence[str] = DEVICES,
        cache_dir: Optional[os.PathLike] = ".detachlint_cache",
        time_limits: Optional[Dict[str, float]] = None,
        recipe_modules: Sequence[str] = (),
        progress: Optional[ProgressFn] = None,
        python: str = sys.executable,
    ) -> None:
        self.version = torch_version()
        self.backends = tuple(backends)
        self.devices = tuple(devices)
        self.time_limits = dict(TIME_LIMITS, **(time_limits or {}))
        self.recipe_files = recipe_paths(recipe_modules)
        self.progress = progress
        self.python = python
        self.cache = (Cache(Path(cache_dir), self.version, recipe_fingerprint(self.recipe_files), package_versions())
                      if cache_dir is not None else None)
        self.cache_root = Path(cache_dir).resolve() if cache_dir is not None else None
        self.reproductions = 0
        self.cache_hits = 0
        self._worker: Optional[_Worker] = None

    @property
    def configs(self) -> List[Config]:
        return [Config(d, b) for d in self.devices for b in self.backends]

    # -- running -------------------------------------------------------------------------------

    def _env(self) -> Dict[str, str]:
        env = dict(os.environ)
        env.pop(RECIPE_MODULES_ENV, None)  # the worker gets the resolved files on its command line
        if self.cache_root is not None and "TORCHINDUCTOR_CACHE_DIR" not in env:
            env["TORCHINDUCTOR_CACHE_DIR"] = str(self.cache_root / "inductor")
        return env

    def _ensure_worker(self) -> _Worker:
        if self._worker is None:
            worker = _Worker(self.python, self._env(), self.recipe_files)
            try:
                worker.start(STARTUP_LIMIT)
            except _Died as died:
                worker.stop(kill=True)
                if "torch" in died.stderr and ("ImportError" in died.stderr or "ModuleNotFoundError" in died.stderr):
                    raise TorchMissing(died.stderr.strip().splitlines()[-1]) from None
                raise
            except _Timeout:
                worker.stop(kill=True)
                raise
            self._worker = worker
        return self._worker

    def _reproduce(self, key: str, signature: Signature, config: Config) -> dict:
        limit = self.time_limits.get(config.backend, max(self.time_limits.values()))
        self.reproductions += 1
        try:
            worker = self._ensure_worker()
        except _Died as died:
            return {"status": "crashed", "observed": f"the worker died while importing torch "
                    f"(exit code {died.returncode}): {died.stderr[-300:]}"}
        except _Timeout:
            return {"status": "timeout", "observed": f"the worker did not start within {STARTUP_LIMIT:.0f} s"}
        start = time.perf_counter()
        try:
            return worker.run({"id": self.reproductions, "signature": signature.to_json(),
                               "config": {"device": config.device, "backend": config.backend}}, limit)
        except _Timeout:
            worker.stop(kill=True)
            self._worker = None
            return {"status": "timeout", "observed": f"no result within the {limit:g} s limit; the reproduction "
                    f"was stopped", "seconds": round(time.perf_counter() - start, 3)}
        except _Died as died:
            worker.stop(kill=True)
            self._worker = None
            code = died.returncode
            how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            tail = died.stderr.strip().splitlines()[-1:] if died.stderr.strip() else []
            return {"status": "crashed", "observed": f"the reproduction crashed its process ({how})"
                    + (f": {tail[0][:200]}" if tail else ""), "seconds": round(time.perf_counter() - start, 3)}

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    # -- the public entry ----------------------------------------------------------------------

    def confirm(self, signatures: Iterable[Union[Signature, dict, None]]) -> List[dict]:
        """One confirmation object per signature (``None`` gives ``no-reproducer``); a JSON object is
        parsed as a :class:`Signature` (``SignatureError`` when it is outside the contract)."""
        signatures = [Signature.from_json(s) if isinstance(s, dict) else s for s in signatures]
        keys = [canonical(s) if s else None for s in signatures]
        unique: Dict[str, Signature] = {}
        for key, sig in zip(keys, signatures):
            if key is not None and key not in unique:
                unique[key] = sig
        cuda_possible, cuda_reason = cuda_probe() if "cuda" in self.devices else (False, "")
        results: Dict[Tuple[str, str], dict] = {}
        todo: List[Tuple[str, Signature, Config]] = []
        for key, sig in unique.items():
            for config in self.configs:
                if config.device == "cuda" and not cuda_possible:
                    results[(key, config.name)] = {"status": "skipped", "observed": cuda_reason}
                    continue
                hit = self.cache.get(key, config) if self.cache is not None else None
                if hit is not None:
                    self.cache_hits += 1
                    results[(key, config.name)] = dict(hit, cached=True)
                else:
                    todo.append((key, sig, config))
        try:
            for i, (key, sig, config) in enumerate(todo):
                if self.progress is not None:
                    self.progress(i, len(todo), f"{sig.rule} {'/'.join(sig.ops)} on {config.name}")
                result = self._reproduce(key, sig, config)
                if self.cache is not None and result.get("status") in CACHEABLE:
                    self.cache.put(key, config, result)
                results[(key, config.name)] = dict(result, cached=False)
            if self.progress is not None and todo:
                self.progress(len(todo), len(todo), "done")
        finally:
            self.close()
        out = []
        for key in keys:
            if key is None:
                none = {"verdict": "no-reproducer", "source": "pattern", "summary": "the finding carries no pattern signature",
                        "configurations": [], "divergent": [], "torch": self.version}
                out.append(dict(none, short=verdict_line(none)))
                continue
            configs = [dict(config=c.name, device=c.device, backend=c.backend, **results[(key, c.name)])
                       for c in self.configs]
            out.append(aggregate(configs, self.version, key))
        return out


def aggregate(configs: List[dict], torch: str, key: str) -> dict:
    """The finding-level verdict: what every configuration that ran agrees on, else ``mixed``.
    Each configuration keeps its own status; disagreements are listed, never folded into "any"."""
    observed = [c for c in configs if c["status"] in OBSERVED]
    statuses = sorted({c["status"] for c in observed})
    if len(statuses) == 1:
        verdict = statuses[0]
    elif statuses:
        verdict = "mixed"  # e.g. reproduced eagerly, not under aot_eager: both are shown
    elif any(c["status"] == "no-reproducer" for c in configs):
        verdict = "no-reproducer"
    else:
        verdict = "inconclusive"  # every configuration timed out, crashed, was skipped or cannot apply
    divergent = []
    for c in observed:
        if c["backend"] == "eager":
            continue
        eager = next((e for e in observed if e["device"] == c["device"] and e["backend"] == "eager"), None)
        if eager is None:
            continue
        if _outcome(eager) != _outcome(c):
            divergent.append({"config": c["config"], "eager": _outcome(eager), "compiled": _outcome(c)})
    out = {"verdict": verdict, "source": "pattern", "summary": _summary(verdict, configs, divergent),
           "configurations": configs, "by_config": {c["config"]: c["status"] for c in configs},
           "divergent": divergent, "torch": torch, "signature_key": hashlib.sha256(key.encode()).hexdigest()[:16]}
    out["short"] = verdict_line(out)
    return out


def _outcome(c: dict) -> str:
    return f"{c['status']} ({c.get('hazard') or c.get('seen') or '-'})"


def _label(c: dict) -> str:
    if c["status"] == "reproduced":
        return f"reproduced {c.get('hazard') or ''}".strip()
    if c["status"] == "not-reproduced":
        return f"not-reproduced (saw {c.get('seen') or 'nothing'})"
    return c["status"]


def _summary(verdict: str, configs: List[dict], divergent: List[dict]) -> str:
    by_outcome: Dict[str, List[str]] = {}
    for c in configs:
        by_outcome.setdefault(_label(c), []).append(c["config"])
    text = f"{verdict}: " + "; ".join(f"{label} on {', '.join(names)}" for label, names in by_outcome.items())
    if divergent:
        text += "; compiled differs from eager on " + ", ".join(d["config"] for d in divergent)
    return text


def verdict_line(confirmation: dict) -> str:
    """The short form for text output, one entry per outcome with its configurations:
    ``reproduced (cpu-eager, cpu-aot_eager; cuda skipped)`` or, when they disagree,
    ``mixed (reproduced on cpu-eager; not-reproduced on cpu-aot_eager: saw copy; cuda skipped)``."""
    configs = confirmation.get("configurations", [])
    verdict = confirmation.get("verdict", "?")
    if not configs and verdict == "no-reproducer":
        return "no-reproducer (no signature)"  # nothing to run: a noqa finding, a parse error
    ran = [c for c in configs if c["status"] not in ("skipped", "not-applicable")]
    skipped = sorted({c["device"] for c in configs if c["status"] == "skipped"})
    inapplicable = sorted({c["device"] for c in configs if c["status"] == "not-applicable"})
    parts: List[str] = []
    if verdict in OBSERVED and all(c["status"] == verdict for c in ran):
        parts.append(", ".join(c["config"] for c in ran))
        if verdict == "not-reproduced":
            parts.append("saw " + ", ".join(sorted({c.get("seen") or "?" for c in ran})))
    else:
        groups: Dict[str, List[str]] = {}
        for c in ran:
            label = c["status"] + (f": saw {c.get('seen')}" if c["status"] == "not-reproduced" and c.get("seen") else "")
            groups.setdefault(label, []).append(c["config"])
        parts.extend(f"{label.split(':')[0]} on {', '.join(names)}{label[len(label.split(':')[0]):]}"
                     for label, names in groups.items())
    if skipped:
        parts.append(f"{'/'.join(skipped)} skipped")
    if inapplicable:
        parts.append(f"{'/'.join(inapplicable)} not-applicable")
    if confirmation.get("divergent"):
        parts.append("compiled differs: " + ", ".join(d["config"] for d in confirmation["divergent"]))
    return f"{verdict} ({'; '.join(parts)})" if parts else verdict

"""The on-disk lint cache (``.detachlint_cache/`` by default, like ruff's ``.ruff_cache/``).

A key is made of the detachlint version and code, the effective configuration for the file (its
enabled codes and rule-affecting settings), its displayed name and the digest of its bytes; the
entry holds the findings. All entries of one version of the code live in one file, read once and
written once per run by the process that ran it (as ruff keeps one file per package): an entry
per file cost a cold run of 300 files about 0.1 s of file creations, one file under 1 ms.
``FileStamps`` remembers those digests by the files' stats, so that a warm run reads no unchanged
file. Cache files are written atomically (a temporary file, then ``os.replace``), so concurrent
runs never read half of one; an entry or a file that does not load is a miss and is rewritten.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from . import __version__
from .files import atomic_write
from .findings import Finding, finding_from_dict, finding_to_dict

CACHE_DIR_NAME = ".detachlint_cache"
CACHE_FORMAT = "3"  # 2: entries keyed by the digest of the bytes, not the bytes; 3: findings carry notes

_FINGERPRINT: Optional[str] = None


def code_fingerprint() -> str:
    """The version plus the size and mtime of every module of this package, so that a changed
    checkout (not only a new release) invalidates the cache; and the versions of Python and LibCST,
    which decide what parses (``frontend/newer.py``: syntax of a newer Python is an analysis limit)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        import importlib.metadata  # only here: a run without the cache does not pay for its import

        try:
            parser = importlib.metadata.version("libcst")
        except importlib.metadata.PackageNotFoundError:
            parser = "?"
        digest = hashlib.sha256(f"{__version__}\0{CACHE_FORMAT}\0{sys.version_info[:2]}\0{parser}".encode())
        root = Path(__file__).parent
        for path in sorted(root.rglob("*.py")):
            try:
                st = path.stat()
            except OSError:
                continue
            digest.update(f"{path.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        _FINGERPRINT = digest.hexdigest()[:16]
    return _FINGERPRINT


class Cache:
    """Findings by key (``key``), in ``lint-<fingerprint>.json``: read when first asked (``get``),
    this run's entries (``put``) added to what is on disk by ``save``. ``lookups=False``: a
    worker process that only makes keys and entries for its parent, which looked them up."""

    LIMIT = 50_000  # entries kept: this run's, then older ones up to the limit

    def __init__(self, directory: os.PathLike, lookups: bool = True) -> None:
        self.directory = Path(directory)
        self._fingerprint = code_fingerprint()
        self.path = self.directory / f"lint-{self._fingerprint}.json"
        self._lookups = lookups
        self._new: Dict[str, list] = {}
        self._hits: Set[str] = set()

    def key(self, display: str, codes: Optional[FrozenSet[str]], options: str, content: str) -> str:
        """``content``: the file's ``files.file_digest``."""
        digest = hashlib.sha256()
        selected = "*" if codes is None else ",".join(sorted(codes))
        for part in (self._fingerprint, selected, options, display, content):
            digest.update(part.encode("utf-8", "surrogateescape"))
            digest.update(b"\0")
        return digest.hexdigest()

    @functools.cached_property
    def _entries(self) -> Dict[str, Any]:
        return _read_json(self.path) if self._lookups else {}

    def get(self, key: str) -> Optional[List[Finding]]:
        entry = self._new.get(key)
        if entry is None:
            entry = self._entries.get(key)
            if entry is not None:
                self._hits.add(key)
        try:
            return [finding_from_dict(d) for d in entry] if isinstance(entry, list) else None
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            return None  # an entry this version did not write: a miss; it is rewritten

    def put(self, key: str, findings: Sequence[Finding]) -> None:
        self._new[key] = [finding_to_dict(f) for f in findings]

    def save(self) -> None:
        """Write this run's entries, with those on disk now (another run's may have come since
        this one read them), up to ``LIMIT``. A read-only or full disk makes the cache useless,
        never the run."""
        if not self._new:
            return  # nothing linted afresh: the file stays as it is
        recent = {key: self._entries[key] for key in self._hits if key in self._entries}
        recent.update(self._new)
        _write_json(self.path, _recent_first(recent, _read_json(self.path).items(), self.LIMIT))
        self._new, self._hits = {}, set()


def prepare_cache_dir(directory: Path) -> None:
    """Create the cache directory, marked so that git and backup tools leave it alone."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in ((".gitignore", "# Created by detachlint automatically.\n*\n"),
                       ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"
                                        "# This is a cache directory created by detachlint.\n")):
        path = directory / name
        if not path.exists():
            atomic_write(path, text.encode())


def find_cache_dir(start: os.PathLike, config_file: Optional[os.PathLike] = None) -> Path:
    """``.detachlint_cache`` next to the configuration file, else in ``start``; the
    ``DETACHLINT_CACHE_DIR`` environment variable wins."""
    env = os.environ.get("DETACHLINT_CACHE_DIR")
    if env:
        return Path(env)
    base = Path(config_file).parent if config_file else Path(start)
    return base / CACHE_DIR_NAME



class FactsCache(MutableMapping[str, dict]):
    """The project index's local facts per file content (``analysis.project``), in one JSON file
    next to the lint cache, read when the index first asks for them, written back (atomically)
    when they changed. Beside it, what the composed index's digest was for the inputs it was
    composed from (``ProjectIndex.inputs``): a run over unchanged files knows every file's
    lint cache key without loading or composing anything."""

    LIMIT = 50_000  # entries kept: this run's, then older ones up to the limit
    DIGESTS = 64  # composed digests kept, the latest first

    def __init__(self, directory: os.PathLike) -> None:
        from .analysis.project import FORMAT

        self.path = Path(directory) / f"index-{FORMAT}.json"
        self._digests_path = Path(directory) / f"composed-{FORMAT}.json"
        self._loaded: Set[str] = set()

    @functools.cached_property
    def _entries(self) -> Dict[str, dict]:
        data = _read_json(self.path)
        self._loaded = set(data)
        return data

    def __getitem__(self, key: str) -> dict:
        return self._entries[key]

    def __setitem__(self, key: str, value: dict) -> None:
        self._entries[key] = value

    def __delitem__(self, key: str) -> None:
        del self._entries[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def digest_of(self, inputs: str) -> Optional[str]:
        """The digest remembered for ``inputs``, while the facts it was composed from are still on
        disk: without them, loading is due now, when the facts are computed in parallel and saved,
        not later, in one process and lost."""
        digest = self._digests.get(f"{code_fingerprint()}:{inputs}")
        return digest if isinstance(digest, str) and self.path.is_file() else None

    def remember(self, inputs: str, digest: str) -> None:
        key = f"{code_fingerprint()}:{inputs}"
        if self._digests.get(key) == digest:
            return
        kept = {key: digest, **{k: v for k, v in self._digests.items() if k != key}}
        self._digests = dict(list(kept.items())[:self.DIGESTS])
        _write_json(self._digests_path, self._digests)

    @functools.cached_property
    def _digests(self) -> Dict[str, str]:
        return _read_json(self._digests_path)

    def save(self, used: Set[str]) -> None:
        if "_entries" not in self.__dict__ or used <= self._loaded:
            return  # never read (so nothing was added), or nothing new
        recent = {k: self._entries[k] for k in used if k in self._entries}
        _write_json(self.path, _recent_first(recent, ((k, self._entries[k]) for k in self._loaded - used), self.LIMIT))


class FileStamps:
    """What each file held when it was last read, by its stat (size, mtime, ctime, inode), as git's
    index and ruff's cache know it: a run over unchanged files reads and hashes none of them. Per
    absolute path: the digest of the bytes (``files.file_digest``) and, once the project index has
    looked, whether the file is one it indexes. A file modified less than ``RACY_NS`` before it was
    read is not remembered: a second write within the file system's timestamp granularity could
    leave its stat unchanged (git's "racily clean" entries). The stat is always taken before the
    read, so a write in between makes the next run read the file again, never trust old bytes."""

    LIMIT = 50_000  # entries kept: this run's, then older ones up to the limit
    RACY_NS = 2_000_000_000

    def __init__(self, directory: os.PathLike) -> None:
        self.path = Path(directory) / f"stamps-{CACHE_FORMAT}.json"
        self._seen: Dict[str, list] = {}
        self._changed = False

    @functools.cached_property
    def _entries(self) -> Dict[str, list]:
        return _read_json(self.path)

    @staticmethod
    def _stat(st: os.stat_result) -> list:
        return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]

    def get(self, path: str, st: os.stat_result) -> Optional[Tuple[str, Optional[bool]]]:
        """(digest, indexed: None when the index has not looked) of ``path`` (absolute) with this
        stat, or None when unknown or changed since."""
        entry = self._seen.get(path) or self._entries.get(path)
        if not isinstance(entry, list) or len(entry) != 6 or entry[:4] != self._stat(st) \
                or not isinstance(entry[4], str) or entry[5] not in (True, False, None):
            return None  # unknown, changed since, or an entry this version did not write
        self._seen[path] = entry
        return entry[4], entry[5]

    def put(self, path: str, st: os.stat_result, digest: str, indexed: Optional[bool] = None) -> None:
        """Remember the digest of the bytes read after ``st`` was taken (and whether the index
        takes the file; None keeps what is known for the same content)."""
        if time.time_ns() - st.st_mtime_ns < self.RACY_NS:
            return
        known = self.get(path, st)
        if indexed is None and known is not None and known[0] == digest:
            indexed = known[1]
        if known != (digest, indexed):
            self._seen[path] = self._stat(st) + [digest, indexed]
            self._changed = True

    def save(self) -> None:
        if not self._changed:
            return
        _write_json(self.path, _recent_first(self._seen, self._entries.items(), self.LIMIT))
        self._changed = False


def _recent_first(recent: Dict[str, Any], older: Iterable[Tuple[str, Any]], limit: int) -> Dict[str, Any]:
    """What a cache file keeps: this run's entries, then older ones it does not hold, up to ``limit``."""
    keep = dict(recent)
    for key, value in older:
        if len(keep) >= limit:
            break
        keep.setdefault(key, value)
    return keep


def _write_json(path: Path, data: dict) -> None:
    try:
        prepare_cache_dir(path.parent)
        atomic_write(path, json.dumps(data, separators=(",", ":")).encode())
    except (OSError, TypeError, ValueError):
        pass  # a read-only disk makes the cache useless, never the run


def _read_json(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            data = json.loads(fh.read())
    except (OSError, ValueError):
        return {}  # absent or corrupt: rebuilt
    return data if isinstance(data, dict) else {}

"""Files as bytes and text: decoding source (PEP 263 coding cookies, BOMs, binary files),
.gitignore matching, displayed paths and atomic writes. Which files are linted is decided in
``pipeline`` (discovery), with the settings."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import tokenize
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple


class SourceError(Exception):
    def __init__(self, message: str, row: int = 1, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.row = row
        self.column = column


def file_digest(data: bytes) -> str:
    """What the caches know a file's content by: the SHA-256 of its bytes."""
    return hashlib.sha256(data).hexdigest()


def decode_source(data: bytes) -> str:
    """Decode a Python file as the interpreter would (UTF-8, BOM, or its coding cookie)."""
    if b"\x00" in data:
        return _raise_binary(data)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError(f"cannot decode: {exc.msg}", exc.lineno or 1) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        row = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1)
        raise SourceError(
            f"file is not valid {encoding} (byte 0x{data[exc.start]:02x}); add a coding cookie such as "
            f"'# -*- coding: latin-1 -*-'", row, column) from None
    except LookupError:
        raise SourceError(f"unknown encoding in coding cookie: {encoding}") from None
    return text[1:] if text.startswith("\ufeff") else text


def _raise_binary(data: bytes) -> str:
    offset = data.index(b"\x00")
    row = data.count(b"\n", 0, offset) + 1
    raise SourceError("binary file (contains NUL bytes), not Python source", row, offset - (data.rfind(b"\n", 0, offset) + 1))


LINTED_SUFFIXES = (".py", ".pyi", ".ipynb")


def display_path(path: Path, cwd: Optional[Path] = None) -> str:
    """Relative to the working directory when below it (as ruff and flake8 print), else absolute."""
    cwd = cwd or Path(os.getcwd())
    absolute = os.path.abspath(path)
    base = str(cwd).rstrip(os.sep) + os.sep
    # Below the (normalised) working directory, what follows it is ``os.path.relpath``'s answer.
    return absolute[len(base):] if absolute.startswith(base) else absolute


class GitIgnore:
    """``.gitignore`` files from the repository root (the closest directory holding ``.git``) down,
    plus ``.git/info/exclude``; the innermost file with a matching pattern decides, as in git.
    Outside a repository every ``.gitignore`` above the path counts."""

    def __init__(self) -> None:
        self._specs: Dict[Path, Tuple[Optional[int], object]] = {}
        self._chains: Dict[Path, List[Tuple[Path, object]]] = {}

    def _spec(self, directory: Path, name: str = ".gitignore"):
        path = directory / name
        try:
            stamp: Optional[int] = path.stat().st_mtime_ns
        except OSError:
            stamp = None
        cached = self._specs.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        spec = None
        if stamp is not None:
            import pathspec  # here: only a tree with ignore files pays for importing it

            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
                spec = pathspec.GitIgnoreSpec.from_lines(lines)
            except (OSError, ValueError):
                spec = None  # an unreadable or malformed .gitignore ignores nothing, as in git
        self._specs[path] = (stamp, spec)
        return spec

    def _chain(self, directory: Path) -> List[Tuple[Path, object]]:
        """(base, spec) pairs that apply to entries of ``directory``, outermost first."""
        chain = self._chains.get(directory)
        if chain is None:
            is_root = os.path.exists(directory / ".git")
            parent = directory.parent
            chain = [] if is_root or parent == directory else list(self._chain(parent))
            if is_root:
                exclude = self._spec(directory, os.path.join(".git", "info", "exclude"))
                if exclude is not None:
                    chain.append((directory, exclude))
            spec = self._spec(directory)
            if spec is not None:
                chain.append((directory, spec))
            self._chains[directory] = chain
        return chain

    def entry_ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether ``path`` itself is ignored (its parent directories are not looked at)."""
        ignored = self.ignores_in(path.parent)
        return ignored is not None and ignored(path.name, is_dir)

    def ignores_in(self, directory: Path) -> Optional[Callable[[str, bool], bool]]:
        """Whether an entry of ``directory``, by name and kind, is ignored; None when no ignore
        file applies there (discovery asks once per directory, not once per entry)."""
        chain = self._chain(directory)
        if not chain:
            return None
        prefixes = [(directory.relative_to(base).as_posix(), spec) for base, spec in chain]

        def ignored(name: str, is_dir: bool) -> bool:
            verdict = None
            for prefix, spec in prefixes:
                rel = (name if prefix == "." else f"{prefix}/{name}") + ("/" if is_dir else "")
                result = spec.check_file(rel).include  # type: ignore[attr-defined]
                if result is not None:
                    verdict = result
            return bool(verdict)

        return ignored

    def ignored(self, path: Path) -> bool:
        """Whether ``path`` or any directory above it is ignored."""
        path = Path(os.path.abspath(path))
        for parent in reversed(path.parents):
            if parent.parent != parent and self.entry_ignored(parent, True):
                return True
        return self.entry_ignored(path, path.is_dir())


def atomic_write(target: Path, data: bytes, mode: int = 0o644, durable: bool = False,
                 before_replace: Optional[Callable[[], None]] = None) -> None:
    """Replace ``target`` with ``data`` at once: a temporary file in the same directory, then
    ``os.replace``, so a concurrent reader or a crash sees the old file or the new one, never
    half of one. ``durable`` syncs the data first (for users' files, not for caches);
    ``before_replace`` may raise to abandon the write at the last moment."""
    import tempfile  # here: a run that writes nothing starts faster

    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".detachlint.tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if before_replace is not None:
            before_replace()
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

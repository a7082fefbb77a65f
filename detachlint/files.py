"""Turning bytes into source text: PEP 263 coding cookies, BOMs, binary files."""

from __future__ import annotations

import io
import tokenize


class SourceError(Exception):
    def __init__(self, message: str, row: int = 1, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.row = row
        self.column = column


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

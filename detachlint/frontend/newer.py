"""Whether a file Python rejects is valid code for a newer Python: then it is a limit, not an error.

The first pass compiles each file with the interpreter detachlint runs on, so on Python 3.11 a
PEP 695 ``type X = ...`` or ``class C[T]:`` (3.12) is a SyntaxError although the project's own
Python runs it. The evidence that it is newer syntax, not a broken file, comes from LibCST, whose
native parser reads every version up to 3.14 (type parameters and their defaults, PEP 701
f-strings, template strings, ``except A, B:``): the file must parse with it, and Python's error
must lie inside a node of syntax newer than the running Python (an f-string only where the
running Python rejects its own text). A line that merely starts with ``type`` or ``class``
(``class A[:``) fails LibCST too and stays an error; anything Python rejects for another reason
(``f() = 1``) has no newer node at its position and stays an error.

LibCST's native parser recurses once per nesting level and segfaults on deep code (measured in
a worker thread, 8 MiB stack: 1,000 nested brackets parse, 1,500 crash, ``python bench/nesting.py
--rejected``; a chain of unary operators or ``not`` crashes past 8,000, of ``lambda`` past 2,000,
an ``elif`` ladder past 8,000), and Python's own parser, which guards it for code Python accepts
(``firstpass.too_deep``), gave no tree here. So LibCST only sees a file whose nesting, bounded
from its tokens (``nesting_bound``), is at most ``MAX_LEVELS``: under a third of the brackets
that parse, the costliest level per token (the deepest file of torch 2.13 measures 146, of
huggingface/lerobot 81).
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import sys
import tokenize
import warnings
from dataclasses import dataclass
from typing import Iterator, List, Mapping, Optional, Tuple

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

MAX_LEVELS = 300
Version = Tuple[int, int]
Positions = Mapping[cst.CSTNode, CodeRange]
NEWEST: Version = (3, 14)  # the newest syntax told apart here
_RUNNING: Version = sys.version_info[:2]


@dataclass
class Newer:
    """Where a file uses syntax newer than the running Python (1-based row, 0-based column)."""

    message: str
    row: int
    column: int


def newer_syntax(source: str, error: SyntaxError, running: Version = _RUNNING) -> Optional[Newer]:
    """The newer syntax that made Python reject ``source`` with ``error``, or None: a real error
    (or one this cannot tell from a real error)."""
    if running >= NEWEST or error.lineno is None:
        return None
    bound = nesting_bound(source)
    if bound is None or bound > MAX_LEVELS:
        return None
    try:
        wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
        positions = wrapper.resolve(PositionProvider)
    except (cst.ParserSyntaxError, RecursionError, MemoryError):
        return None
    found = [(positions[node].start, version, what)
             for node, version, what in _newer_nodes(wrapper.module, positions, error.lineno)
             if version > running and node in positions]
    if not found:
        return None
    start, version, what = max(found, key=lambda f: (f[0].line, f[0].column))  # the innermost
    need, have = "%d.%d" % version, "%d.%d" % running
    return Newer(f"line {start.line} uses Python {need} syntax ({what}), which the Python running detachlint "
                 f"({have}) cannot parse: this file is not analysed; run detachlint with Python {need} or later",
                 start.line, start.column)


def _newer_nodes(module: cst.Module, positions: Positions, row: int) -> Iterator[Tuple[cst.CSTNode, Version, str]]:
    """The nodes of syntax newer than 3.11 that span ``row``, with the version that reads them."""
    templated = getattr(cst, "TemplatedString", None)  # LibCST 1.8 and later
    stack: List[cst.CSTNode] = [module]
    while stack:  # iteratively: the guard bounds LibCST's nesting, not Python's recursion limit
        node = stack.pop()
        if isinstance(node, cst.TypeAlias):
            yield node, (3, 12), "a `type` alias statement, PEP 695"
        elif isinstance(node, cst.TypeParameters):
            yield node, (3, 12), "a type parameter list, PEP 695"
        elif isinstance(node, cst.TypeParam) and getattr(node, "default", None) is not None:
            yield node, (3, 13), "a type parameter default, PEP 696"
        elif isinstance(node, cst.FormattedString) and not _compiles(cst.Module([]).code_for_node(node)):
            yield node, (3, 12), "an f-string with quotes, backslashes, comments or line breaks in its fields, PEP 701"
        elif templated is not None and isinstance(node, templated):
            yield node, (3, 14), "a template string, PEP 750"
        elif isinstance(node, (cst.ExceptHandler, cst.ExceptStarHandler)) and isinstance(node.type, cst.Tuple) \
                and not node.type.lpar and _spans(positions, node.type, row):
            yield node.type, (3, 14), "exception types after `except` without parentheses, PEP 758"
        stack.extend(child for child in node.children if _spans(positions, child, row))


def _spans(positions: Positions, node: cst.CSTNode, row: int) -> bool:
    where = positions.get(node)
    return where is None or where.start.line <= row <= where.end.line


def _compiles(expression: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile("(" + expression + "\n)", "<detachlint>", "eval", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


# What may open a level of nesting in an expression: a punctuation mark or a keyword (an operator,
# a bracket, a quote, ``lambda``, ``not``, ``if``, ``await``, ``for``...); names and numbers never do.
_UNITS_RE = re.compile(r"[^\w\s]|\b(?:%s)\b" % "|".join(keyword.kwlist))
_TEMPLATE_PREFIX_RE = re.compile(r"[tT][rR]?|[rR][tT]")


def _field_units(text: str) -> Tuple[int, bool]:
    """The punctuation marks and keywords inside the fields of an f-string or template string
    token, and whether it ends inside a field."""
    units = depth = start = 0
    at = text.index(text[-1]) + 1  # after the prefix and the opening quote
    while at < len(text):
        char = text[at]
        if depth == 0 and char == "{":
            if text.startswith("{{", at):
                at += 1
            else:
                depth, start = 1, at + 1
        elif depth and char in "{}":
            depth += 1 if char == "{" else -1
            if depth == 0:
                units += len(_UNITS_RE.findall(text, start, at))
        at += 1
    if depth:
        units += len(_UNITS_RE.findall(text, start))
    return units, depth > 0


def nesting_bound(source: str) -> Optional[int]:
    """An upper bound on how deep LibCST's parser nests in ``source`` (None: the tokenizer gave up).
    Every level of nesting spends a token: within a logical line, the tokens of the element (what
    lies between commas) that is being read, at each open bracket; a block and each ``elif`` of a
    ladder one more. Elements after a comma, statements after a statement are read in a loop and
    cost nothing. The running Python's tokenizer reads the newer syntax that matters here as
    ordinary tokens, except f-strings and template strings, whose fields it cannot see before 3.12
    (it reads ``t"..."`` as a name and a string): such a string costs the punctuation marks and
    keywords of its fields (every level of nesting opens with one), and where a quote inside a field
    ended it (``f"{d["k"]}"``), every string after it on the line costs all of its own."""
    elements = [0]  # per open bracket, the logical line first: tokens of the element being read
    blocks = [0]  # per open block: the ``elif`` branches chained in it so far
    line = block = worst = 0  # sum(elements), and len(blocks) + sum(blocks)
    cut = starts_line = False  # a quote ended an f-string or template string inside a field
    previous: Optional[tokenize.TokenInfo] = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            kind, text = token.type, token.string
            if kind in (tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER):
                continue
            if kind == tokenize.NEWLINE:
                elements, line, cut, starts_line = [0], 0, False, True
                continue
            if kind == tokenize.INDENT:
                blocks.append(0)
                block += 1
                continue
            if kind == tokenize.DEDENT:
                block -= 1 + blocks.pop()
                continue
            if starts_line:
                starts_line = False
                if text == "elif":
                    blocks[-1] += 1
                    block += 1
                elif text != "else":
                    block -= blocks[-1]
                    blocks[-1] = 0
            cost = 1
            if kind == tokenize.STRING:
                if cut:  # it may hold the rest of a field that a quote cut off
                    cost += len(_UNITS_RE.findall(text))
                elif "f" in text[:3].lower().split(text[-1])[0] or (
                        previous is not None and previous.type == tokenize.NAME and previous.end == token.start
                        and _TEMPLATE_PREFIX_RE.fullmatch(previous.string) is not None):
                    units, cut = _field_units(text)
                    cost += units
            previous = token
            if kind == tokenize.OP and text in "([{":
                elements[-1] += 1
                elements.append(0)
                line += 1
            elif kind == tokenize.OP and text in ")]}":
                if len(elements) > 1:
                    line -= elements.pop()
            elif kind == tokenize.OP and text in ",;":
                line -= elements[-1]
                elements[-1] = 0
            else:
                elements[-1] += cost
                line += cost
            worst = max(worst, block + line)
    except (tokenize.TokenError, SyntaxError, ValueError):  # 3.12's tokenizer raises on bad input
        return None
    return worst

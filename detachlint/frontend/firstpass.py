"""The first pass: Python's own parser (``ast``, in C) reads every file before LibCST does.

It decides, cheaply and without recursion, whether LibCST and detachlint's recursive walkers can
take the file at all. Whatever they cannot take becomes one clear TAL999 instead of a crash:

- LibCST's native parser recurses once per nesting level while it builds its tree and segfaults
  (signal 11, no exception) when the stack runs out;
- detachlint's traversal, its analyses and LibCST's position metadata are recursive Python and
  raise RecursionError (sometimes disguised as another exception) near the recursion limit.

``nesting`` measures how deep LibCST's tree of the code is, in *frames*: per ast node the
number of recursive Python frames that the deepest of those walkers spends on one level of it.
LibCST nests some code that Python keeps flat, and those are counted as LibCST nests them: a
chain of n ``and``/``or`` operands (``BooleanOperation`` is binary, n - 1 deep) and n implicitly
concatenated strings (``ConcatenatedString``, n - 1 deep).

Measured (Python 3.11, LibCST 1.x, 8 MiB stack; main thread and worker threads alike), with ~30
frames already on the stack and rules asking about every level (a tensor at the bottom):
``lint_source`` first hits the recursion limit at 317 levels of unary, binary or boolean operators
and conditional expressions, and at 316 ``elif`` branches (3 frames per level), at 486 levels of
attribute, call or subscript chains (2 frames per level), at 970 levels of ``not`` or of
implicitly concatenated strings (1 frame per level): 944-976 frames as weighted here, every time.
LibCST's native parser itself segfaults later, at about 7,100 ``or`` operands (and refuses about
3,500 concatenated strings with a bogus syntax error); Python's own parser gives up at about
3,000 levels (RecursionError or MemoryError). The deepest file of torch 2.13 weighs between 200
and 400 frames (an ``elif`` ladder in ``torch/_dynamo/variables/builder.py``). ``MAX_FRAMES``
keeps a margin of 2.3x below the first failure, for callers deeper in the stack (pytest, flake8,
the language server's worker threads) and for shapes not measured. The measuring scripts:
``bench/nesting.py``.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import io
import re
import tokenize
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .sites import Sites
from .units import ModuleScan, Span, Unit, source_lines

MAX_FRAMES = 400
# The alias analysis runs a loop body up to twice to reach its fixpoint, so nested loops cost time
# exponential in their nesting: 16 nested ``for`` loops take 2.4 s, 20 take about 40 s, 95 (what
# Python allows) would take years. Real code nests a handful (torch 2.13: at most 5).
MAX_LOOPS = 12
_LOOPS = (ast.For, ast.AsyncFor, ast.While)

# Frames per level of the deepest recursive walker (measured, see above); everything else is 1.
_TWO_FRAMES = (ast.Attribute, ast.Call, ast.Subscript, ast.keyword, ast.Starred, ast.Dict, ast.Lambda)
_THREE_FRAMES = (ast.UnaryOp, ast.BinOp, ast.IfExp, ast.Compare, ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
                 ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler) + tuple(
    getattr(ast, name) for name in ("TryStar", "Match", "match_case") if hasattr(ast, name))
_STRINGS = (ast.Constant, ast.JoinedStr)
_STRING_TOKENS = frozenset(t for t in (tokenize.STRING, getattr(tokenize, "FSTRING_START", None)) if t is not None)


@dataclass
class TooDeep:
    """Where the code first nests deeper than detachlint can take (1-based row, 0-based column)."""

    message: str
    row: int
    column: int


@dataclass
class FirstPass:
    """Python's tree of one source text, or why there is none."""

    tree: Optional[ast.Module]
    error: Optional[BaseException] = None  # SyntaxError, ValueError (NUL), RecursionError, MemoryError
    # Set when the project index already parsed this very text: Python accepts it, and ``deep``
    # is ``too_deep``'s verdict on its tree (no tree is kept, and none is parsed again).
    measured: bool = False
    deep: Optional[TooDeep] = None
    # With ``measured``: the bodies that can hold no finding (``units.quiet_units`` of the tree).
    quiet: Optional[List[Unit]] = None
    elements: Optional[List[Span]] = None  # and the table elements (``units.quiet_elements``)
    sites: Optional[Sites] = None  # the rules' sites they were decided for (None: none were)

    @property
    def compiles(self) -> bool:
        return self.tree is not None or self.measured

    @property
    def gave_up(self) -> bool:
        """Python's own parser ran out of stack or memory: the code nests too deep for anyone."""
        return isinstance(self.error, (RecursionError, MemoryError))


# Above this size a file with nothing to report is syntax-checked a piece at a time, so that its
# memory is bounded by the largest piece, not by the whole file's tree (Python's ast of a 9.9 MB
# file of one-line statements takes about 2 GB).
CHUNKED_CHECK_SIZE = 1 << 20
# Above this size a file that may have findings gets its first pass a piece at a time too
# (``first_pass_in_pieces``), which parses the pieces two or three times: Python's tree of real
# code costs 75-100 bytes per character (torch's largest file, 1.4 MB: 104 MB), of a generated
# module of short statements 200 or more.
PIECES_SIZE = 2 << 20
_CHUNK_SIZE = 1 << 18


_STATEMENT_START_RE = re.compile(r"\n(?=[A-Za-z_@])")  # a line that may begin a top-level statement
_MAX_PIECE = 1 << 22


def pieces(source: str, each: Optional[Callable[[ast.Module], None]] = None) -> Optional[List[Tuple[int, int]]]:
    """The pieces of ``source`` that each compile on their own, as (begin, end) offsets: pieces
    end before a line that starts at column 0 with a name or a decorator. A cut inside a string,
    a bracket, a continuation or before ``else:`` leaves a piece that does not compile on its
    own; it is then joined with the next one. None means "not shown" (a piece grew past 4 MB):
    the caller parses the whole file, which also gives the error message. ``each`` is called with
    every piece's tree, in order, its rows those of ``source``.
    Nothing Python's parser checks needs more than the piece it parses: what needs the whole
    module (a ``from __future__`` after other statements, a ``global`` after a use of the name,
    ``return`` outside a function) is the compiler's to reject, which builds no tree here
    (``first_pass``: ``PyCF_ONLY_AST``), and the parser reads no future import's flag from the
    source. So ``from __future__ import annotations`` atop a generated module leaves it in pieces."""
    out: List[Tuple[int, int]] = []
    begin = row = 0  # rows before ``begin``
    while begin < len(source):
        end = begin
        while True:
            cut = _STATEMENT_START_RE.search(source, min(end + _CHUNK_SIZE, len(source)))
            end = cut.start() + 1 if cut else len(source)
            tree = parse_piece(source, begin, end, row)
            if tree is not None:
                break
            if end >= len(source) or end - begin > _MAX_PIECE:
                return None
        if each is not None:
            each(tree)
        del tree  # before the next piece's
        out.append((begin, end))
        row += _line_breaks(source, begin, end)
        begin = end
    return out


def compiles_in_chunks(source: str) -> bool:
    """Whether ``source`` compiles, checked a piece at a time (``pieces``); False: not shown."""
    return pieces(source) is not None


def parse_piece(source: str, begin: int, end: int, row: int) -> Optional[ast.Module]:
    """Python's tree of ``source[begin:end]``, which starts after ``row`` lines of it, with the
    rows of ``source``; None when the piece does not compile on its own."""
    return first_pass("\n" * row + source[begin:end]).tree


def _line_breaks(source: str, begin: int, end: int) -> int:
    return source.count("\n", begin, end) + source.count("\r", begin, end) - source.count("\r\n", begin, end)


def first_pass_in_pieces(source: str, vocabulary: Optional[Sites],
                         each: Optional[Callable[[ast.Module], None]] = None) -> Optional[FirstPass]:
    """The first pass of a large ``source`` a piece at a time (``pieces``): what ``too_deep`` and
    ``units.quiet_code`` find on the whole module, with no tree of the whole module (Python's
    costs about 200 bytes per character: 2 GB for a 9.9 MB module); memory is bounded by the
    largest piece. The pieces are parsed twice (and a third time where the module has large
    tables), ``each`` is called with every piece's tree the first time. None where the pieces do
    not show that ``source`` compiles. ``vocabulary``: the sites of the rules the quiet code is
    decided for (None: none is, and the pieces are parsed once)."""
    lines = source_lines(source)
    scan = ModuleScan(lines, vocabulary or Sites())
    deep: List[TooDeep] = []

    def look(tree: ast.Module) -> None:
        found = too_deep(tree, lines)
        if found is not None:
            deep.append(found)  # the whole tree's walk meets the last statements first
        scan.gather(tree.body)
        if each is not None:
            each(tree)

    ranges = pieces(source, look)
    if ranges is None:
        return None
    if deep:
        return FirstPass(None, measured=True, deep=deep[-1], quiet=[], elements=[], sites=vocabulary)

    def bodies() -> Iterator[List[ast.stmt]]:
        row = 0
        for begin, end in ranges:
            tree = parse_piece(source, begin, end, row)
            assert tree is not None  # it compiled the first time
            yield tree.body
            row += _line_breaks(source, begin, end)

    if vocabulary is None:  # no quiet code decided: nothing is blanked
        return FirstPass(None, measured=True, quiet=[], elements=[])
    quiet, elements = scan.quiet_code(bodies)
    return FirstPass(None, measured=True, quiet=quiet, elements=elements, sites=vocabulary)


_NEWLINE_RE = re.compile(r"\r\n|\r|\n")


def physical_lines(source: str) -> List[str]:
    """The source's lines as Python (and LibCST) count them: only ``\n``, ``\r\n`` and ``\r``
    end a line. ``str.splitlines`` also splits at form feeds, ``\x0b``, ``\x1c``-``\x1e`` and
    ``\u2028``, which shifts every row after one (a noqa would then silence the wrong line)."""
    lines = _NEWLINE_RE.split(source)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic GC paused while a syntax tree is alive: Python's and LibCST's trees are hundreds
    of thousands of acyclic objects that reference counting frees, and collections that walk them
    while they live cost 10-20% of a parse and its walks. The few cycles made meanwhile are
    collected once it resumes."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def first_pass(source: str) -> FirstPass:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = compile(source, "<detachlint>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except Exception as exc:  # SyntaxError, ValueError (NUL), RecursionError, MemoryError, ...
        return FirstPass(None, exc)
    return FirstPass(tree)


def too_deep(tree: ast.AST, lines: List[str], limit: int = MAX_FRAMES,
             max_loops: int = MAX_LOOPS) -> Optional[TooDeep]:
    """The first place where ``tree`` nests deeper than ``limit`` frames or ``max_loops`` loops
    (iteratively: the tree may be deeper than Python's recursion limit); None when it never does.
    ``lines``: the source's physical lines, with or without their line breaks (``physical_lines``,
    ``units.LINE_RE``), to count the pieces of a long concatenated string."""
    stack: List[Tuple[Any, int, int, bool, Any]] = [(tree, 0, 0, False, tree)]  # Any: ast's node classes
    pop, push = stack.pop, stack.append
    shapes, node_type = _SHAPES, ast.AST
    while stack:
        node, depth, loops, in_fstring, located = pop()
        cls = node.__class__
        frames, loop, positioned, fields = shapes.get(cls) or _shape(cls)
        if positioned:
            located = node  # where to point (``Load``, ``arguments``, ... have no position)
        if frames > 0:
            depth += frames
        elif frames == _OPERANDS:
            depth += 3 * (len(node.values) - 1)
        elif not in_fstring:
            depth += _string_pieces(node, lines)
        else:
            depth += 1
        if loop:
            loops += 1
            if loops > max_loops:
                return TooDeep(f"too deeply nested for detachlint's analyses: more than {max_loops} nested loops "
                               f"at line {node.lineno}", node.lineno, _column(node, lines))
        if depth > limit:
            row = getattr(located, "lineno", 1)
            return TooDeep(f"too deeply nested for detachlint's parser: more than {limit} levels (LibCST and "
                           f"the analyses recurse once per level) at line {row}", row, _column(located, lines))
        # A node on one line cannot go deeper than 3 frames per character of it (a unary minus
        # is the densest: 1 character, 3 frames), nor hold more loops than ``for`` clauses fit:
        # most statements are short lines whose subtrees need no walk.
        if positioned and node.lineno == node.end_lineno and node.end_col_offset is not None:
            width = node.end_col_offset - node.col_offset
            if depth + 3 * width + 3 <= limit and loops + width // 8 <= max_loops:
                continue
        inner = in_fstring or cls is ast.JoinedStr
        for name in fields:  # ``ast.iter_child_nodes``, in its order
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, node_type):
                        push((item, depth, loops, inner, located))
            elif isinstance(value, node_type):
                push((value, depth, loops, inner, located))
    return None


_OPERANDS, _PIECES = -1, -2  # frames: 3 per operand after the first; a string's pieces
# node class -> (frames it adds, or one of the two above; a loop; has a position; its fields)
_SHAPES: Dict[type, Tuple[int, bool, bool, Tuple[str, ...]]] = {}


def _shape(cls: type) -> Tuple[int, bool, bool, Tuple[str, ...]]:
    """What ``too_deep`` needs of a node class, worked out once instead of per node."""
    if issubclass(cls, _THREE_FRAMES):
        frames = 3
    elif issubclass(cls, _TWO_FRAMES):
        frames = 2
    elif issubclass(cls, ast.BoolOp):
        frames = _OPERANDS
    elif issubclass(cls, _STRINGS):
        frames = _PIECES
    else:
        frames = 1
    shape = _SHAPES[cls] = (frames, issubclass(cls, _LOOPS), "lineno" in cls._attributes, cls._fields)  # type: ignore[attr-defined]
    return shape


def _column(node: ast.AST, lines: List[str]) -> int:
    row, offset = getattr(node, "lineno", 1), getattr(node, "col_offset", 0)
    if not 1 <= row <= len(lines):
        return 0
    return len(lines[row - 1].encode("utf-8", "surrogatepass")[:offset].decode("utf-8", "replace"))


_TRIPLE_QUOTED_RE = re.compile(r"[rRbBuUfF]{0,2}(\"\"\"|\'\'\')")


def _string_pieces(node: ast.AST, lines: List[str]) -> int:
    """How many string literals make up a string constant (``"a" "b"`` is two): 1 unless it is
    long enough to be thousands of pieces, then counted with the tokenizer."""
    if isinstance(node, ast.Constant) and not isinstance(node.value, (str, bytes)):
        return 1
    row, end_row = getattr(node, "lineno", 0), getattr(node, "end_lineno", None)
    if end_row is None or not 1 <= row <= end_row <= len(lines):
        return 1
    span = sum(len(lines[r].rstrip("\r\n")) for r in range(row - 1, end_row))
    if span < 2 * MAX_FRAMES // 3:  # every piece takes two characters at least
        return 1
    segment = [line.rstrip("\r\n").encode("utf-8", "surrogatepass") for line in lines[row - 1:end_row]]
    segment[-1] = segment[-1][:node.end_col_offset]  # type: ignore[attr-defined]
    segment[0] = segment[0][node.col_offset:]  # type: ignore[attr-defined]
    text = "\n".join(part.decode("utf-8", "surrogatepass") for part in segment)
    opened = _TRIPLE_QUOTED_RE.match(text)
    if opened is not None and text.find(opened.group(1), opened.end()) == len(text) - 3:
        return 1  # a docstring: one triple-quoted literal, closed only at the end (no tokenizer)
    count = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO("(" + text + "\n)").readline):
            count += token.type in _STRING_TOKENS
    except (tokenize.TokenError, SyntaxError, ValueError):
        return max(1, span // 2)  # cannot tell: as many pieces as could fit
    return max(1, count)

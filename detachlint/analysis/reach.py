"""Which files of a project the index needs for the files being linted: what their analysis
reaches, not every file below the project's root.

A lint asks the index about the names its module uses (``ProjectIndex.resolve`` and ``lookup``);
the index composes a function's summary from its callees, and a class's facts from its bases.
So the facts a file's lint can see come from the modules its names lead to, through their calls
and bases, transitively (``forward``), and from one other place: the overrides of its methods in
subclasses elsewhere (``ProjectIndex.filled_by_override``), found by the text of the class
statements that name its classes (``subclasses``). Facts of any other file change no finding of
the linted ones, so they are left out: one script in a folder of thousands of unrelated files
costs that script and what it imports.

Modules are named by ``project.module_layout``; a name leads to every module whose name (or
namespace alias) is a dotted prefix of it, as ``resolve`` tries them (the module, and the package
around a script that imports its siblings by name).
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from .project import Layout, ModuleFacts, ProjectIndex, _imports
from ..frontend.units import dotted as _dotted

# The files a dotted name (as the importing module qualifies it) may lead to; ``importer``: the
# absolute path of the module that uses the name, and its (module, is_package).
Finder = Callable[[str, str, Tuple[str, bool]], List[str]]
Loader = Callable[[Sequence[str]], Mapping[str, Optional[ModuleFacts]]]

_CLASS_RE = re.compile(r"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)", re.MULTILINE)
_WORD_RE = re.compile(r"\w+")


def _qualify(name: str, imports: Mapping[str, str]) -> Optional[str]:
    head, dot, rest = name.partition(".")
    target = imports.get(head)
    return target + dot + rest if target is not None else None


def text_references(text: str, module: str, is_package: bool) -> Set[str]:
    """The names a linted module's code may ask the index about: what it imports (anywhere, in
    functions too) and every dotted name that starts with an imported one, qualified through the
    import. Empty when Python cannot parse it (the lint reports that)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    nodes: List[ast.stmt] = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    imports = _imports(ast.Module(body=nodes, type_ignores=[]), module, is_package)  # in functions too
    out = set(imports.values())
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            name = _dotted(node)
            qualified = _qualify(name, imports) if name is not None else None
            if qualified is not None:
                out.add(qualified)
    return out


def facts_references(facts: ModuleFacts) -> Set[str]:
    """The names the index resolves in a module it only composes: its calls and its bases."""
    names = {c.callee for f in facts.functions.values() for c in f.calls}
    names.update(b for c in facts.classes.values() for b in c.bases)
    return {q for q in (_qualify(n, facts.imports) for n in names) if q is not None}


def _candidates(name: str, module: str, is_package: bool) -> List[str]:
    """``name`` and, in a package, the same under it (a script's ``from utils import f`` where
    utils.py sits beside it); then each of their dotted prefixes."""
    package = module if is_package else module.rpartition(".")[0]
    out: List[str] = []
    for full in ([name, f"{package}.{name}"] if package else [name]):
        parts = full.split(".")
        out.extend(".".join(parts[:i]) for i in range(len(parts), 0, -1))
    return out


def layout_finder(layout: Layout) -> Finder:
    """The files of a walked project (``layout``) that a name leads to."""
    by_name: Dict[str, List[str]] = {}
    for path, (module, _) in layout.modules.items():
        by_name.setdefault(module, []).append(path)
    for dotted, module in layout.aliases.items():
        if dotted != module:
            by_name.setdefault(dotted, []).extend(by_name.get(module, []))

    def find(name: str, importer: str, named: Tuple[str, bool]) -> List[str]:
        return [p for c in _candidates(name, *named) for p in by_name.get(c, ())]

    return find


def disk_finder(roots: Sequence[str], keep: Callable[[str], bool], depth: int = 3) -> Finder:
    """The files on disk, below one of ``roots``, that a name leads to, found as Python would
    import them from the directory of the importer's top package, or from up to ``depth``
    directories above it (the namespace names ``module_layout`` gives): for a project that was not
    walked."""
    listed: Dict[str, Set[str]] = {}
    inside = tuple(os.path.abspath(root).rstrip(os.sep) + os.sep for root in roots)

    def entries(directory: str) -> Set[str]:
        if directory not in listed:
            try:
                listed[directory] = set(os.listdir(directory))
            except OSError:
                listed[directory] = set()
        return listed[directory]

    def module_file(base: str, dotted: str) -> Optional[str]:
        parts = dotted.split(".")
        directory = os.path.join(base, *parts[:-1])
        if not all(p.isidentifier() for p in parts) or (len(parts) > 1 and not os.path.isdir(directory)):
            return None
        names = entries(directory)
        for name in (parts[-1] + ".py", parts[-1] + ".pyi"):
            if name in names:
                return os.path.join(directory, name)
        if parts[-1] in names and "__init__.py" in entries(os.path.join(directory, parts[-1])):
            return os.path.join(directory, parts[-1], "__init__.py")
        return None

    def find(name: str, importer: str, named: Tuple[str, bool]) -> List[str]:
        module, is_package = named
        top = os.path.dirname(importer)
        for _ in range(module.count(".") + (1 if is_package else 0)):
            top = os.path.dirname(top)
        bases = [top]
        while len(bases) <= depth and os.path.dirname(bases[-1]) != bases[-1]:
            bases.append(os.path.dirname(bases[-1]))
        found = (module_file(b, c) for b in bases for c in _candidates(name, module, is_package))
        return [f for f in found if f is not None and f.startswith(inside) and keep(f)]

    return find


def forward(seeds: Mapping[str, Optional[str]], named: Callable[[str], Tuple[str, bool]], find: Finder,
            load: Loader) -> Set[str]:
    """The files reached from ``seeds`` (absolute path -> its text, for the names its own lint
    asks about), through the names each reached module's facts resolve (``load``: facts by path,
    a level of the search at a time, so that they are computed together)."""
    reached: Set[str] = set(seeds)
    level: List[str] = list(seeds)
    while level:
        facts = load(level)
        found: Set[str] = set()
        for path in level:
            names = facts_references(facts[path]) if facts.get(path) is not None else set()
            text = seeds.get(path)
            if text is not None:
                names |= text_references(text, *named(path))
            for name in names:
                found.update(find(name, path, named(path)))
        level = sorted(found - reached)
        reached.update(level)
    return reached


def subclasses(classes: Iterable[str], texts: Mapping[str, Callable[[], Optional[str]]]) -> Set[str]:
    """The files (of ``texts``: path -> its text, read when asked) with a class statement whose
    bases name one of ``classes`` (by its last name, or a name it is imported as), or a class
    found so, transitively: where an override of a method of those classes may live."""
    names = {c.rpartition(".")[2] for c in classes}
    if not names:
        return set()
    read: Dict[str, str] = {}
    for path, text in texts.items():
        value = text()
        if value is not None and "class" in value:
            read[path] = value
    found: Set[str] = set()
    while True:
        pattern = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, sorted(names))))
        aliases = re.compile(r"\b(?:%s)[ \t]+as[ \t]+(\w+)" % "|".join(map(re.escape, sorted(names))))
        new_names: Set[str] = set()
        for path, value in read.items():
            if path in found or pattern.search(value) is None:
                continue
            local = names | set(aliases.findall(value))
            for cls, bases in _CLASS_RE.findall(value):
                if local & set(_WORD_RE.findall(bases)):
                    found.add(path)
                    new_names.add(cls)
        if new_names <= names:
            return found
        names |= new_names


def seed_classes(index: ProjectIndex, modules: Iterable[str]) -> Set[str]:
    """The project classes of ``modules`` and their project ancestors (qualified names)."""
    out: Set[str] = set()
    for module in modules:
        facts = index.modules.get(module)
        for name in facts.classes if facts is not None else ():
            qualified = f"{module}.{name}" if module else name
            out.update(a for a in index.ancestors(qualified) if index.is_class(a))
    return out

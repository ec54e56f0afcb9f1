"""Every public class and function of one release of a package, with the keyword arguments each takes, read from
the released wheel with `ast` (never imported): what benchmarks/api_keywords.py --build compares release by
release.

A class's keywords are its own ``__init__``'s parameters; a ``@dataclass`` without one takes its fields and the
fields of its dataclass bases; a class with neither takes its first base's that defines an ``__init__``, the
bases followed where ast resolves them inside the package through the module's imports (api_members.py's
reading). A base from another package is known only where the build read it (`INHERITED`: transformers'
TrainingArguments under trl's configs): any other leaves a class's __init__ undecided, and adds no fields to a
dataclass (as peft's PushToHubMixin adds none). A function's keywords are its
parameters. A name defined more than once in a release with other keywords (torch.load beside torch.hub.load) is
undecided there, unless `PINNED` names the file a script means by it.
"""

from __future__ import annotations

import ast
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from api_history import package_files
from api_members import _base_name, _module_classes, _parts, _skipped, below_private, module_of, resolve

ANY = "**"
# bases that add no __init__ and no fields: a class on them alone takes no keyword
NO_INIT = {"object", "ABC", "Generic", "Protocol", "metaclass", "ABCMeta"}
# {a class of another package read earlier in the build: every keyword any of its releases takes}
INHERITED: dict[str, frozenset[str]] = {}


def parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The names a call may pass by keyword (``**`` where it takes ``**kwargs``: every keyword then)."""
    args = function.args
    named = [a.arg for a in args.args + args.kwonlyargs if a.arg not in ("self", "cls")]
    if args.kwarg is not None:
        named.append(ANY)  # that release raises no TypeError under this name for any keyword
    # transformers' @deprecate_kwarg("tokenizer", new_name="processing_class") (utils/deprecation.py, 4.46+)
    # still takes the old keyword: it renames it before the call
    for decorator in function.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and ast.unparse(decorator.func).endswith("deprecate_kwarg")
            and decorator.args
            and isinstance(decorator.args[0], ast.Constant)
        ):
            named.append(str(decorator.args[0].value))
    return frozenset(named)


def is_dataclass(node: ast.ClassDef) -> bool:
    return any("dataclass" in ast.unparse(d) for d in node.decorator_list)


def fields(node: ast.ClassDef) -> frozenset[str]:
    """A dataclass's own fields that its ``__init__`` takes (not a ClassVar, not ``field(init=False)``)."""
    found = set()
    for statement in node.body:
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        value = ast.unparse(statement.value) if statement.value is not None else ""
        if "ClassVar" in ast.unparse(statement.annotation) or "init=False" in value:
            continue
        found.add(statement.target.id)
    return frozenset(found)


def _overload(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(ast.unparse(d).split(".")[-1] == "overload" for d in node.decorator_list)


@dataclass
class Definition:
    """One class as a module of the release defines it."""

    module: str
    file: str
    init: frozenset[str] | None  # its own __init__'s keywords; None: it has none
    dataclass: bool
    fields: frozenset[str]
    bases: list[str]  # dotted, resolved through the module's imports where they can be
    own_new: bool  # defines __new__ (and no __init__): what it takes is not read
    methods: dict[str, frozenset[str]] = field(default_factory=dict)


@dataclass
class Callables:
    """The public classes and functions of one release, by name (a name may be defined in several modules)."""

    package: str
    keywords: bool = (
        True  # what is read is keywords (else api_signatures.py's signatures: no fields, no INHERITED)
    )
    classes: dict[str, list[Definition]] = field(default_factory=dict)
    functions: dict[str, list[tuple[str, frozenset[str]]]] = field(
        default_factory=dict
    )  # name: (file, keywords)

    def _resolve(self, base: str) -> Definition | bool | None:
        """The class a base written ``base`` is, within the package; None: outside it; False: unclear."""
        return resolve(self.package, self.classes, base)

    def _init(self, definition: Definition, depth: int = 0) -> frozenset[str] | None | bool:
        """The keywords the class's __init__ takes; False: no __init__ anywhere above it (object's); None: not
        known."""
        if definition.init is not None:
            return definition.init
        if definition.own_new or depth > 10:
            return None
        if definition.dataclass:
            return self._fields(definition, depth) if self.keywords else None
        for base in definition.bases:
            tail = base.split(".")[-1]
            if tail in NO_INIT:
                continue
            target = self._resolve(base)
            if target is None:
                return INHERITED.get(tail) if self.keywords else None
            if target is False:
                return None
            got = self._init(target, depth + 1)
            if got is not False:
                return got
        return False

    def _fields(self, definition: Definition, depth: int) -> frozenset[str] | None:
        """A dataclass's fields with those of its dataclass bases (None: a base outside the package unread)."""
        found = set(definition.fields if definition.dataclass else ())
        for base in definition.bases:
            tail = base.split(".")[-1]
            if tail in NO_INIT:
                continue
            target = self._resolve(base)
            if target is None:  # another package's: its fields where the build read it (a mixin adds none)
                found |= INHERITED.get(tail, frozenset())
                continue
            if target is False or depth > 10:
                return None
            inherited = self._fields(target, depth + 1)
            if inherited is None:
                return None
            found |= inherited
        return frozenset(found)

    def keywords_of_class(self, name: str, files: tuple[str, ...] = ()) -> frozenset[str] | None:
        """The keywords of the class ``name`` (its definition in ``files`` where given), None when undecided."""
        definitions = [d for d in self.classes.get(name, []) if not files or d.file in files]
        found = {self._init(d) for d in definitions}
        if len(found) != 1:
            return None
        (got,) = found
        return None if got is False else got

    def every(self, pinned: dict[str, tuple[str, ...]]) -> dict[str, frozenset | None]:
        """{each public name, and each public method of a class as ``Class.method`` (CPython 3.10+'s name for
        it): its keywords, None where undecided (defined more than once with other keywords, or not read)}; a
        name in ``pinned`` is read in its files only."""
        found: dict[str, frozenset | None] = {}
        for name in set(self.classes) | set(self.functions):
            files = pinned.get(name, ())
            readings = set()
            definitions = [d for d in self.classes.get(name, []) if not files or d.file in files]
            if definitions:
                readings.add(self.keywords_of_class(name, files))
            readings |= {k for f, k in self.functions.get(name, []) if not files or f in files}
            found[name] = readings.pop() if len(readings) == 1 else None
            for method in {m for d in definitions for m in d.methods}:
                got = {d.methods.get(method) for d in definitions}
                found[f"{name}.{method}"] = got.pop() if len(got) == 1 else None
        return found

    def files_of(self, name: str, depth: int = 0) -> list[str]:
        """The files defining the class or function ``name`` and, for a class, its bases within the package
        (where its keywords' deprecation texts are)."""
        files = [f for f, _ in self.functions.get(name, [])]
        for definition in self.classes.get(name, []):
            files.append(definition.file)
            for base in definition.bases if depth < 10 else []:
                if isinstance(self._resolve(base), Definition):
                    files += self.files_of(base.rpartition(".")[2], depth + 1)
        return list(dict.fromkeys(files))


_INTERNED: dict = {}


def _interned(read):
    # one object per keyword set across every release read (a method's parameters repeat from release to release)
    return _INTERNED.setdefault(read, read)


def _methods(body: list, reading) -> dict:
    """A class's own public methods (and __call__) read by ``reading``; properties and overloads left out."""
    found = {}
    for statement in body:
        if statement.name.startswith("_") and statement.name != "__call__":
            continue
        decorators = [ast.unparse(d) for d in statement.decorator_list]
        if _overload(statement) or any(
            d == "property" or d.endswith((".setter", "cached_property")) for d in decorators
        ):
            continue
        found[statement.name] = _interned(reading(statement))
    return found


def read(path: Path, package: str, reading=parameters) -> Callables:
    """Every public class (with its public methods) and function of the release in ``path``, each function read
    by ``reading`` (its keywords; api_signatures.py: its positional parameters spelled)."""
    callables = Callables(package, reading is parameters)
    wanted = None
    if path.name.endswith(".whl"):  # only the files read are decompressed (a source tar is read whole)
        with zipfile.ZipFile(path) as archive:
            wanted = {n for n in archive.namelist() if n.endswith(".py") and not _skipped(package, _parts(n))}
    texts = package_files(path, wanted)
    for file, text in texts.items():
        parts = _parts(file)
        # a module beside a package of the same name (peft 0.6's tuners/lora.py and tuners/lora/) is never
        # imported: the package is
        if file.removesuffix(".py") + "/__init__.py" in texts:
            continue
        if (
            not file.endswith(".py")
            or _skipped(package, parts)
            or ("def " not in text and "class " not in text)
        ):
            continue
        read = module_of(parts, text)
        # a file this Python cannot parse (its callables stay unread), or below a private package (torch._inductor)
        if read is None or below_private(read[1]):
            continue
        tree, module, imports = read
        nodes = list(_module_classes(tree.body))
        local = {n.name for n in nodes if isinstance(n, ast.ClassDef)}
        defined: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _overload(node):
                defined[node.name] = node  # the last definition of a module wins, as at import
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                body = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
                init = next((s for s in reversed(body) if s.name == "__init__"), None)
                definition = Definition(
                    module,
                    file,
                    _interned(reading(init)) if init is not None else None,
                    is_dataclass(node),
                    fields(node) if is_dataclass(node) else frozenset(),
                    [_base_name(b, imports, module, local) for b in node.bases],
                    init is None and any(s.name == "__new__" for s in body),
                    _methods(body, reading),
                )
                same = [d for d in callables.classes.get(node.name, []) if d.file == file]
                if same:  # an if/else defining it twice in one module: which one import leaves is unknown
                    if (same[0].init, same[0].fields) != (definition.init, definition.fields):
                        same[0].init, same[0].own_new = None, True
                else:
                    callables.classes.setdefault(node.name, []).append(definition)
        for name, node in defined.items():
            if not name.startswith("_"):
                callables.functions.setdefault(name, []).append((file, _interned(reading(node))))
    return callables

"""Which release of a library has which member of its public classes, read from the released packages themselves.

`--build` reads the wheels api_history.py downloads (one per minor release, its last patch, cached in
/tmp/v_wheels; `download` fetches any missing) of the packages it reads (`MINORS`), and writes
src/torchdoctor/explain/catalog/api_members.tsv: for each public class, the public members (methods, properties,
class-level attributes and fields, and the ``self.name = ...`` assignments of its methods) that some release read
has and another does not, each with the first release read that has it, the last one that has it and the first
after it that does not. A class's bases are followed where ast resolves them inside the same package (through
the file's imports); a base from another package (torch's nn.Module under a transformers model) adds nothing to
the members read, but a release of the class is not known to lack, nor to add, a member that base may give
(torch's nn.Linear under peft 0.2's Linear: its in_features). What such a base gives is `KNOWN_BASES`' where it
knows it, else what its class has in any release read of its package (transformers' TrainingArguments under
TRL's configs: bf16, never beta; `Outside`), else anything (lightning_fabric's mixins, not read). Read
statically with `ast`, never imported.

Only the releases where the class exists and is decided count: a class defined in two modules of one release
(which one an object is cannot be told from its name), or whose base within the package is, is undecided there,
and a member is named only where the releases on both sides of its change were read and decided. A member in
every release read, or gone for a while and back, has no row. Classes defined below a private package
(torch._inductor) are left out, as are transformers' model families other than the ones api_history reads
(`FAMILIES`) and their TensorFlow and Flax classes. A ``#namesakes`` line names a class with rows that another
package read also defines (transformers' and Lightning's Trainer): the log must say which one it is.

    python benchmarks/api_members.py --build     # read the cached wheels and write the table
    python benchmarks/api_members.py --build --only peft   # one package (the others' rows and lines kept; the
                                                           # packages its classes subclass read for their members)
    python benchmarks/api_members.py             # the rows per package in the committed table
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
import zipfile
from dataclasses import dataclass, field

from api_history import MINORS, _absolute, download, package_files, version_of, write

from torchdoctor.explain.kinds.api_members import TABLE, Member, Table, load, member_row

# transformers' model families read (api_history.py's MODULES): the others' classes are left out
FAMILIES = {"llama", "mistral", "qwen2", "gpt2", "bert", "t5", "auto"}
# folders of a package that are not the library a training script runs (Lightning's app, commands, tests, ONNX
# export, transformers' pipelines)
SKIPPED = {"tests", "test", "testing", "benchmarks", "examples", "app", "commands", "onnx", "pipelines"}
# torch's nn.Module's public members (torch/nn/modules/module.py: its methods and the training flag its __init__
# sets), which any subclass has whatever its own code names; the newer ones (compile, set_submodule) are torch's
# releases, not the subclass's package's
_MODULE_MEMBERS = frozenset(
    "add_module apply bfloat16 buffers call_super_init children compile cpu cuda double dump_patches eval "
    "extra_repr float forward get_buffer get_extra_state get_parameter get_submodule half ipu load_state_dict "
    "modules mtia named_buffers named_children named_modules named_parameters parameters register_backward_hook "
    "register_buffer register_forward_hook register_forward_pre_hook register_full_backward_hook "
    "register_full_backward_pre_hook register_load_state_dict_post_hook register_load_state_dict_pre_hook "
    "register_module register_parameter register_state_dict_post_hook register_state_dict_pre_hook requires_grad_ "
    "set_extra_state set_submodule share_memory state_dict to to_empty train training type xpu zero_grad".split()
)
# torch's layers peft's and others' classes subclass, with their own members beside nn.Module's (their __init__
# in torch/nn/modules/linear.py, sparse.py, conv.py)
_LAYER_MEMBERS = {
    "Linear": {"in_features", "out_features", "weight", "bias", "reset_parameters"},
    "Embedding": {
        "num_embeddings embedding_dim padding_idx max_norm norm_type scale_grad_by_freq sparse weight "
        "reset_parameters from_pretrained"
    },
    **{
        conv: {
            "in_channels out_channels kernel_size stride padding dilation transposed output_padding groups "
            "padding_mode weight bias reset_parameters"
        }
        for conv in ("Conv1d", "Conv2d", "Conv3d")
    },
}
# the bases from another package whose public members are known, each with them: a subclass has these in every
# release that has the base. Any other base from another package (bitsandbytes' Linear8bitLt, transformers'
# Trainer under TRL's trainers) may serve a member its subclass's own code never names: peft 0.2's
# Linear(nn.Linear, LoraLayer) has nn.Linear's in_features, which peft's code assigns only from 0.3 on, so a
# release of such a subclass is not known to lack a member; its package's releases read say which (`Outside`)
KNOWN_BASES: dict[str, frozenset[str]] = {
    **{
        name: frozenset()
        for name in ("object", "ABC", "abc.ABC", "typing.Generic", "Generic", "typing.Protocol")
    },
    **{
        name: frozenset(n for n in dir(builtin) if not n.startswith("_"))
        for name, builtin in (("str", str), ("int", int), ("dict", dict), ("list", list), ("tuple", tuple))
    },
    "enum.Enum": frozenset({"name", "value"}),
    "torch.nn.Module": _MODULE_MEMBERS,
    "torch.nn.modules.module.Module": _MODULE_MEMBERS,
    **{
        f"torch.nn.{layer}": _MODULE_MEMBERS | frozenset(" ".join(names).split())
        for layer, names in _LAYER_MEMBERS.items()
    },
    # transformers/utils/hub.py: the mixin's one public method
    "transformers.utils.PushToHubMixin": frozenset({"push_to_hub"}),
    "transformers.utils.hub.PushToHubMixin": frozenset({"push_to_hub"}),
}
# torch: the parts whose objects a training script holds (its modules, optimizers, data loading, distributed
# wrappers, AMP, autograd; Tensor in _tensor.py, its base in the _C stubs); the compiler's and exporters' left out
TORCH_PARTS = {"nn", "optim", "utils", "distributed", "cuda", "amp", "autograd", "_C"}
HEADER = [
    "# Public members of a library's public classes that some releases have and others do not, read from the",
    "# released wheels by benchmarks/api_members.py --build (ast over each release's classes and their bases",
    "# within the package; never imported). Only members NOT in every release read are kept: a member every",
    "# release has is the script's own mistake, not a release. A '#releases' line lists a package's releases",
    "# read; a '#namesakes' line a class name with rows that several packages read define; a row: package, class,",
    "# member, added (first release read that has it; '' = every release read from the first), last (last",
    "# release that has it; '' = still in the newest read), removed (first release after it without it).",
]


@dataclass
class ClassDef:
    """One class as a release's module defines it: its own public members and its bases as written."""

    name: str
    module: str
    members: set[str]
    bases: list[str]  # each base's dotted name, resolved through the module's imports where it can be
    private: bool  # defined below a private package (torch._inductor)
    dynamic: (
        bool  # defines __getattr__: a name it lacks may still be served (transformers 4.47's special tokens)
    )


@dataclass
class Classes:
    """Every class of one release of a package, by name (a name may be defined in several modules)."""

    package: str
    by_name: dict[str, list[ClassDef]] = field(default_factory=dict)

    def add(self, name: str, found: ClassDef) -> None:
        same = next((c for c in self.by_name.get(name, []) if c.module == found.module), None)
        if same is None:  # a module's .py and .pyi, or an if/else defining it twice: one class
            self.by_name.setdefault(name, []).append(found)
        else:
            same.members |= found.members
            same.dynamic |= found.dynamic
            same.bases += [b for b in found.bases if b not in same.bases]

    def members(self, name: str) -> set[str] | None:
        """The public members of the class ``name`` with those of its bases within the package; None when it
        is undecided (defined in several modules, or a base within the package is)."""
        found = self.by_name.get(name, [])
        return self._members(found[0]) if len(found) == 1 else None

    def bases(self, name: str) -> list[str]:
        """The names of the bases within the package of the class ``name`` (decided: defined once)."""
        (found,) = self.by_name[name]
        return [target.name for base in found.bases if isinstance(target := self._resolve(base), ClassDef)]

    def dynamic(self, name: str, depth: int = 0) -> bool:
        """Whether the class ``name`` or one of its bases within the package defines ``__getattr__``."""
        found = self.by_name.get(name, [])
        if any(d.dynamic for d in found):
            return True
        return depth < 10 and len(found) == 1 and any(self.dynamic(b, depth + 1) for b in self.bases(name))

    def outside(self, definition: ClassDef, depth: int = 0) -> frozenset[str]:
        """The bases from another package (as written, resolved through the imports) of ``definition`` and of its
        bases within the package: what may give it members its package's code does not name (`Outside`)."""
        found: set[str] = set()
        for base in definition.bases:
            target = self._resolve(base)
            if target is None:
                found.add(base)
            elif isinstance(target, ClassDef) and depth < 10:
                found |= self.outside(target, depth + 1)
        return frozenset(found)

    def _members(self, definition: ClassDef, depth: int = 0) -> set[str] | None:
        if depth > 10:
            return None
        members = set(definition.members)
        for base in definition.bases:
            target = self._resolve(base)
            if target is False:
                return None
            if target is not None:
                inherited = self._members(target, depth + 1)
                if inherited is None:
                    return None
                members |= inherited
        return members

    def _resolve(self, base: str) -> ClassDef | bool | None:
        return resolve(self.package, self.by_name, base)


def resolve(package: str, by_name: dict[str, list], base: str):
    """The class (of ``by_name``: its definitions by name, each with a ``module``) a base written ``base`` is,
    within ``package``; None: outside it; False: unclear (also api_callables.py's)."""
    module, _, name = base.rpartition(".")
    # a bare name neither defined in the file nor imported (object, Exception), or another package's
    if not module or module.split(".")[0] != package:
        return None
    # the module itself, or one below the package whose __init__ re-exports it; several, or none read: unclear
    matching = [c for c in by_name.get(name, []) if c.module == module or c.module.startswith(module + ".")]
    return matching[0] if len(matching) == 1 else False


def module_of(parts: list[str], text: str) -> tuple[ast.Module, str, dict[str, str]] | None:
    """(its tree, its dotted name, the names its imports bind) of the module at ``parts`` (a file's path split,
    ``__init__`` for a package) holding ``text``; None when this Python cannot parse it (also api_callables.py's)."""
    is_package = parts[-1] == "__init__"
    module = ".".join(parts[:-1] if is_package else parts)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    return tree, module, _imports(tree, module, is_package)


def below_private(module: str) -> bool:
    """Whether a module lies below a private package (torch._inductor.x; a private module itself is read)."""
    return any(p.startswith("_") for p in module.split(".")[1:-1] if p)


def _parts(file: str) -> list[str]:
    return file.removesuffix(".pyi").removesuffix(".py").split("/")


def _skipped(package: str, parts: list[str]) -> bool:
    if parts[0] != package or any(p in SKIPPED for p in parts[1:-1]):
        return True
    if package == "transformers" and len(parts) > 3 and parts[1] == "models":
        return parts[2] not in FAMILIES or parts[-1].startswith(("modeling_tf_", "modeling_flax_"))
    # transformers/utils/dummy_pt_objects.py: a placeholder class of every name, for when a backend is missing
    if package == "transformers" and parts[-1].startswith("dummy_"):
        return True
    return package == "torch" and len(parts) > 2 and parts[1] not in TORCH_PARTS


def _imports(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    """{a name the module binds by import at its top level: the dotted name it stands for}."""
    found: dict[str, str] = {}
    for node in _module_classes(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    found[top] = top
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node, is_package)
            for alias in node.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = f"{source}.{alias.name}"
    return found


def _base_name(base: ast.expr, imports: dict[str, str], module: str, local: set[str]) -> str:
    """The dotted name a base expression stands for (``nn.Module`` -> ``torch.nn.Module``)."""
    if isinstance(base, ast.Subscript):  # Generic[T], Dict[str, Any]
        base = base.value
    text = ast.unparse(base)
    head, _, rest = text.partition(".")
    if head in imports:
        return imports[head] + (f".{rest}" if rest else "")
    if not rest and head in local:
        return f"{module}.{head}"
    return text


def _class_body(body: list[ast.stmt]):
    """A class body's statements, into its if/try blocks (not into its methods)."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for field_ in ("body", "orelse", "finalbody"):
                yield from _class_body(getattr(node, field_, []) or [])
            for handler in getattr(node, "handlers", []) or []:
                yield from _class_body(handler.body)


def own_members(node: ast.ClassDef) -> set[str]:
    """The public names a class defines itself: methods, properties, nested classes, class-level attributes and
    fields, and what its methods assign to ``self.<name>``."""
    found: set[str] = set()
    for statement in _class_body(node.body):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add(statement.name)
            arguments = statement.args.posonlyargs + statement.args.args
            if not arguments:
                continue
            me = arguments[0].arg
            for inner in ast.walk(statement):
                if (
                    isinstance(inner, ast.Attribute)
                    and isinstance(inner.ctx, ast.Store)
                    and isinstance(inner.value, ast.Name)
                    and inner.value.id == me
                ):
                    found.add(inner.attr)
        elif isinstance(statement, ast.ClassDef):
            found.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found.add(name.id)
    return {n for n in found if not n.startswith("_")}


def _dynamic(node: ast.ClassDef) -> bool:
    return any(isinstance(s, ast.FunctionDef) and s.name == "__getattr__" for s in _class_body(node.body))


def read_release(package: str, path) -> Classes:
    """Every class of the release in ``path``, with its own members and its bases resolved by name."""
    classes = Classes(package)
    wanted = None
    if path.name.endswith(".whl"):  # only the files read are decompressed (a source tar is read whole)
        with zipfile.ZipFile(path) as archive:
            wanted = {
                n
                for n in archive.namelist()
                if n.endswith((".py", ".pyi")) and not _skipped(package, _parts(n))
            }
    for file, text in package_files(path, wanted).items():
        parts = _parts(file)
        if _skipped(package, parts) or "class " not in text:
            continue
        read = module_of(parts, text)
        if read is None:  # a release's file this Python cannot parse: its classes stay unread
            continue
        tree, module, imports = read
        private = below_private(module)
        # below a private package only the stubs (torch/_C/__init__.pyi: Tensor's base) are read
        if private and not file.endswith(".pyi"):
            continue
        defined = [n for n in _module_classes(tree.body) if isinstance(n, ast.ClassDef)]
        local = {n.name for n in defined}
        for node in defined:
            bases = [_base_name(b, imports, module, local) for b in node.bases]
            classes.add(
                node.name, ClassDef(node.name, module, own_members(node), bases, private, _dynamic(node))
            )
    return classes


def _module_classes(body: list[ast.stmt]):
    """The module-level statements, into if/try blocks (a class defined only when a dependency imports)."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            for field_ in ("body", "orelse", "finalbody"):
                yield from _module_classes(getattr(node, field_, []) or [])
            for handler in getattr(node, "handlers", []) or []:
                yield from _module_classes(handler.body)


def public(
    classes: Classes,
) -> tuple[dict[str, set[str] | None], dict[str, list[str]], set[str], dict[str, frozenset[str]]]:
    """({each public class: its members, None where undecided}, {each decided one: its bases in the package},
    the decided ones that define ``__getattr__``, or whose bases in the package do, {each decided one: its
    bases from another package and its bases' (`Classes.outside`)})."""
    found: dict[str, set[str] | None] = {}
    for name, definitions in classes.by_name.items():
        if name.startswith("_") or all(d.private for d in definitions):
            continue
        if classes.package == "transformers" and name.startswith(("TF", "Flax")):
            continue
        found[name] = classes.members(name)
    decided = [name for name, members in found.items() if members is not None]
    dynamic = {n for n in decided if classes.dynamic(n)}
    outside = {n: classes.outside(classes.by_name[n][0]) for n in decided}
    return found, {n: classes.bases(n) for n in decided}, dynamic, outside


# a release read: version, {class: members, None where undecided}, {class: bases}, the classes with __getattr__,
# {class: its bases from another package}
Release = tuple[str, dict[str, set[str] | None], dict[str, list[str]], set[str], dict[str, frozenset[str]]]
# a package's classes as the releases read define them, for its subclasses in other packages: {(class, module):
# (its members in any release read, None where a release leaves them undecided; its bases from another package)}
Defined = dict[tuple[str, str], tuple[set[str] | None, frozenset[str]]]


def add_defined(classes: Classes, into: Defined) -> None:
    """Adds the classes of one release to what ``into`` has of the package's other releases."""
    for name, definitions in classes.by_name.items():
        for definition in definitions:
            members = classes._members(definition)
            had, bases = into.get((name, definition.module), (set(), frozenset()))
            if members is None or had is None:
                into[(name, definition.module)] = (None, bases | classes.outside(definition))
            else:
                into[(name, definition.module)] = (had | members, bases | classes.outside(definition))


@dataclass
class Outside:
    """The members a base from another package gives a class: `KNOWN_BASES`', else those its class has in any
    release read of its package (``read``: {package: its `Defined`}: transformers' TrainingArguments under TRL's
    configs has bf16 whichever transformers is installed, never beta); None (any) where neither knows it."""

    read: dict[str, Defined] = field(default_factory=dict)
    known: dict[str, frozenset[str] | None] = field(default_factory=dict)

    def members(self, base: str, depth: int = 0) -> frozenset[str] | None:
        """The members ``base`` (a dotted name as a subclass's module imports it) gives; None: not known."""
        if base in KNOWN_BASES:
            return KNOWN_BASES[base]
        if base not in self.known:
            self.known[base] = None  # a base reached again while it is read: not known
            self.known[base] = self._read(base, depth)
        return self.known[base]

    def _read(self, base: str, depth: int) -> frozenset[str] | None:
        module, _, name = base.rpartition(".")
        defined = self.read.get(module.split(".")[0], {}) if module else {}
        # the module itself, or one below it whose package re-exports the class (transformers.TrainingArguments)
        found = [
            held
            for (cls, where), held in defined.items()
            if cls == name and (where == module or where.startswith(module + "."))
        ]
        if not found or depth > 10:
            return None
        names: set[str] = set()
        for members, bases in found:
            inherited = [self.members(b, depth + 1) for b in bases]
            if members is None or None in inherited:
                return None
            names |= members.union(*inherited)
        return frozenset(names)

    def served(self, bases: frozenset[str]) -> frozenset[str] | None:
        """The members these bases from another package give; None: any."""
        inherited = [self.members(b) for b in bases]
        return None if None in inherited else frozenset().union(*inherited)

    def needs(self) -> set[str]:
        """The packages read (MINORS) not read yet whose classes the read ones subclass beyond `KNOWN_BASES`."""
        bases = {b for defined in self.read.values() for _, held in defined.values() for b in held}
        tops = {b.split(".")[0] for b in bases if b not in KNOWN_BASES and "." in b}
        return {t for t in tops if t in MINORS and t not in self.read}


def from_outside(release: Release, cls: str, member: str, outside: Outside) -> bool:
    """Whether ``cls`` may have ``member`` in ``release`` from a base in another package, its code there not
    naming it."""
    served = outside.served(release[4].get(cls, frozenset()))
    return served is None or member in served


def rows_for(package: str, defined: Defined | None = None) -> tuple[list[str], list[Release]]:
    """(the releases read, each release's classes read); every class of each release added to ``defined``."""
    releases: list[Release] = []
    for minor in MINORS[package]:
        wheel = download(package, minor)
        if wheel is None:
            continue
        started = time.monotonic()
        classes = read_release(package, wheel)
        releases.append((version_of(wheel), *public(classes)))
        if defined is not None:
            add_defined(classes, defined)
        took = time.monotonic() - started
        print(
            f"  {package} {releases[-1][0]}: {len(releases[-1][1])} classes ({took:.1f} s)", file=sys.stderr
        )
    return [r[0] for r in releases], releases


def changes(package: str, releases: list[Release], outside: Outside | None = None) -> list[tuple]:
    """The rows (package, class, member, added, last, removed) of the members that some of ``releases``
    (oldest first) have and others not. A member gone from a release where the class defines ``__getattr__``
    may be served there still: not named as removed; one missing from a release where a base from another
    package may give it (`from_outside`: ``outside`` knows that package's classes, or `KNOWN_BASES` alone)
    is not named as removed there, nor as added after it."""
    outside = outside or Outside()
    versions = [r[0] for r in releases]
    rows = []
    for name in sorted({n for r in releases for n in r[1]}):
        # only the releases that have the class, decided, say anything about its members
        having = [(at, r[1][name]) for at, r in enumerate(releases) if r[1].get(name) is not None]
        if len(having) < 2:
            continue
        for member in sorted(set().union(*(m for _, m in having))):
            seen = [member in m for _, m in having]
            first = seen.index(True)
            last = len(seen) - 1 - seen[::-1].index(True)
            if all(seen) or not all(seen[first : last + 1]):
                continue
            # a release between the two sides of the change not read or undecided: no one release to name
            if first > 0 and having[first][0] - having[first - 1][0] > 1:
                continue
            if first > 0 and from_outside(releases[having[first - 1][0]], name, member, outside):
                continue
            gone = having[last + 1][0] if last + 1 < len(having) else None
            if gone is not None and (
                gone - having[last][0] > 1
                or name in releases[gone][3]
                or from_outside(releases[gone], name, member, outside)
            ):
                continue
            added = versions[having[first][0]] if first > 0 else ""
            removed = versions[gone] if gone is not None else ""
            rows.append((package, name, member, added, versions[having[last][0]] if removed else "", removed))
    return rows


def shrink(package: str, versions: list[str], rows: list[tuple], releases: list[Release]):
    """(the rows kept, the '#inherits' lines): a class's rows that its bases' rows give as the reader sees them
    (kinds/api_members.py member_row: the nearest base's row within the class's first and last release) are
    left out, its '#inherits' line says so; a class whose every member would not read back the same keeps all
    its rows (Tensor's subclasses share its rows; a model class younger than its base does not see the base's
    older changes)."""
    actual: dict[str, dict[str, Member]] = {}
    for row in rows:
        actual.setdefault(row[1], {})[row[2]] = Member(*row, "")
    bases: dict[str, list[str]] = {}
    life: dict[str, list[str]] = {}
    for version, _, based, _, _ in releases:
        for name in based:
            life.setdefault(name, [version, version])[1] = version
            bases[name] = based[name]  # the newest release's bases
    own = {(package, r.module, r.name): r for found in actual.values() for r in found.values()}
    table = Table({package: (versions, [])}, {}, {})

    def ancestors(name: str, depth: int = 0) -> set[str]:
        return (
            set()
            if depth > 10
            else set().union(*({b} | ancestors(b, depth + 1) for b in bases.get(name, [])))
        )

    for cls in sorted(
        actual, key=lambda c: (len(ancestors(c)), c)
    ):  # bases first: as the reader will see them
        if not bases.get(cls):
            continue
        table.inherits[(package, cls)] = (life[cls][0], life[cls][1], tuple(bases[cls]))
        for member, row in actual[cls].items():
            del own[(package, cls, member)]
            if member_row(table, own, package, cls, member) != row:
                own[(package, cls, member)] = row
        above = set().union(*(actual.get(a, {}) for a in ancestors(cls)))
        kept_all = all((package, cls, m) in own for m in actual[cls])
        if kept_all or any(
            member_row(table, own, package, cls, m) != actual[cls].get(m) for m in above | set(actual[cls])
        ):
            del table.inherits[(package, cls)]  # nothing left out, or a member would read otherwise
            own.update({(package, cls, m): r for m, r in actual[cls].items()})
    lines = [
        "\t".join(["#inherits", package, cls, first, last, *names])
        for (_, cls), (first, last, names) in sorted(table.inherits.items())
    ]
    return sorted(tuple(r)[:6] for r in own.values()), lines  # without the replacement


def _kept(package: str, table: Table) -> tuple[tuple[list[str], list[tuple]], list[str]]:
    """A package's releases, rows and '#inherits' lines as the committed ``table`` has them."""
    versions, rows = table.packages.get(package, ([], []))
    lines = [
        "\t".join(["#inherits", package, cls, first, last, *names])
        for (owner, cls), (first, last, names) in sorted(table.inherits.items())
        if owner == package
    ]
    return (versions, [tuple(r)[:6] for r in rows]), lines


def build(only: list[str] | None = None) -> None:
    """Read every package's releases (``only`` those, and the packages read whose classes theirs subclass, for
    their members: the others' rows and lines kept as committed, and the committed '#namesakes' lines, which a
    rebuilt package's class new to the table is checked against only the packages rebuilt with it) and write
    the table."""
    committed = load()
    packages: dict[str, tuple[list[str], list[tuple]]] = {}
    defined: dict[str, set[str]] = (
        {name: set(owners) for name, owners in committed.namesakes.items()} if only else {}
    )
    with_rows: set[str] = set()
    inherits: list[str] = []
    started = time.monotonic()
    outside = Outside()
    read: dict[str, tuple[list[str], list[Release]]] = {}
    for package in [p for p in MINORS if not only or p in only]:
        print(f"{package}:", file=sys.stderr)
        read[package] = rows_for(package, outside.read.setdefault(package, {}))
    while only and (needed := outside.needs()):
        for package in sorted(needed):
            print(f"{package} (for its classes' members):", file=sys.stderr)
            rows_for(package, outside.read.setdefault(package, {}))
    for package in MINORS:
        if package not in read:
            if package not in committed.packages:
                continue
            packages[package], lines = _kept(package, committed)
            # a class whose rows its bases' give has an '#inherits' line instead: it had rows all the same
            with_rows |= {row[1] for row in packages[package][1]} | {line.split("\t")[2] for line in lines}
            inherits += lines
            continue
        versions, releases = read[package]
        rows = changes(package, releases, outside)
        with_rows |= {row[1] for row in rows}
        kept, lines = shrink(package, versions, rows, releases)
        packages[package], inherits = (versions, kept), inherits + lines
        for name in {n for _, found, _, _, _ in releases for n in found}:
            defined.setdefault(name, set()).add(package)
    namesakes = [
        "\t".join(["#namesakes", name, *sorted(defined[name])])
        for name in sorted(with_rows)
        if len(defined.get(name, ())) > 1
    ]
    write(TABLE, HEADER + namesakes + inherits, packages)
    print(f"built in {time.monotonic() - started:.0f} s", file=sys.stderr)
    load.cache_clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--build", action="store_true", help="read the wheels and rewrite the table")
    parser.add_argument("--only", action="append", default=[], help="a package to rebuild (repeatable)")
    args = parser.parse_args(argv)
    if args.build:
        build(args.only)
    table = load()
    for package, (versions, rows) in table.packages.items():
        print(
            f"{package:22} {versions[0]}..{versions[-1]} ({len(versions)} releases): {len(rows)} members of "
            f"{len({r.module for r in rows})} classes"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

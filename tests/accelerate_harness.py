"""accelerate 1.15.0's own tests, run against torchdoctor: taken at test time, never copied into this project.

The tests under ``tests/`` come from accelerate's source distribution (``pip download --no-binary :all:``),
cached under ``$XDG_CACHE_HOME/torchdoctor-tests`` (default ``~/.cache``) and checked against its sha256; the
scripts under ``accelerate/test_utils/scripts/`` come from the installed wheel. In a temporary copy their
``from accelerate... import X`` lines are rewritten to torchdoctor's names (`NAMES`); what accelerate's
``Accelerator``/``PartialState`` set up is replaced by ``accelerate_harness_setup`` (plain
``torch.distributed`` on gloo). Nothing else in their code changes: no assertion is edited. Accelerate's test
helpers (``accelerate.test_utils``) and its ``DistributedType`` enum stay accelerate's: they are how the tests
are written, not what they test.

Not a test module (no ``test_`` prefix); ``tests/test_accelerate_compat.py`` uses it.
"""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
from pathlib import Path

VERSION = "1.15.0"
SDIST = f"accelerate-{VERSION}.tar.gz"
SDIST_SHA256 = "5654f8c5eaa0d4fa68b33e287a97765da6849bf6d51dcac874e73fbbddfb6134"
SETUP_MODULE = "accelerate_harness_setup"

# accelerate's name -> where torchdoctor has it ("module:name"); the README's drop-in table says the same
NAMES = {
    "find_executable_batch_size": "torchdoctor:find_executable_batch_size",
    "release_memory": "torchdoctor.memory:release_memory",
    "should_reduce_batch_size": "torchdoctor.memory:is_out_of_memory",
    "clear_device_cache": "torchdoctor.memory:free_device_memory",
    "get_logger": "torchdoctor:get_logger",
    "gather": "torchdoctor.distributed:gather",
    "gather_object": "torchdoctor.distributed:gather_object",
    "broadcast": "torchdoctor.distributed:broadcast",
    "broadcast_object_list": "torchdoctor.distributed:broadcast_object_list",
    "reduce": "torchdoctor.distributed:reduce",
    "pad_across_processes": "torchdoctor.distributed:pad_across_processes",
    "DistributedOperationException": "torchdoctor.distributed:DistributedOperationException",
    "CannotPadNestedTensorWarning": "torchdoctor.distributed.operations:CannotPadNestedTensorWarning",
    # what accelerate's state objects set up: plain torch.distributed on gloo (tests/accelerate_harness_setup.py)
    "Accelerator": f"{SETUP_MODULE}:Accelerator",
    "PartialState": f"{SETUP_MODULE}:PartialState",
    "AcceleratorState": f"{SETUP_MODULE}:AcceleratorState",
    # torchdoctor has none: its test returns before calling it unless on several GPUs or TPUs
    "copy_tensor_to_devices": f"{SETUP_MODULE}:copy_tensor_to_devices",
}
# how the tests are written, not what they test: these stay accelerate's
KEPT = {"DistributedType", "patch_environment"}
KEPT_MODULES = ("accelerate.test_utils",)


class Unavailable(Exception):
    """accelerate's tests cannot be had here; the message says why (the harness skips with it)."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "torchdoctor-tests"


def source_tree() -> Path:
    """accelerate's unpacked source distribution, downloaded once into the cache."""
    tree = cache_dir() / f"accelerate-{VERSION}"
    if (tree / "tests").is_dir():
        return tree
    cache_dir().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir()) as work:
        archive = Path(work) / SDIST
        cached = cache_dir() / SDIST
        if not cached.is_file():
            _download(Path(work))
            shutil.copy(archive, cached)
        digest = hashlib.sha256(cached.read_bytes()).hexdigest()
        if digest != SDIST_SHA256:
            cached.unlink()
            raise Unavailable(
                f"{SDIST} has sha256 {digest}, expected {SDIST_SHA256}; deleted it from the cache"
            )
        with tarfile.open(cached) as tar:
            tar.extractall(work, filter="data")  # someone else's archive: no links or paths out of work
        try:
            os.rename(Path(work) / f"accelerate-{VERSION}", tree)
        except OSError:  # another test process unpacked it first
            if not (tree / "tests").is_dir():
                raise
    return tree


def _download(into: Path) -> None:
    command = [
        sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "--no-build-isolation",
        "--disable-pip-version-check", f"accelerate=={VERSION}", "-d", str(into),
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise Unavailable(f"`pip download accelerate=={VERSION}` did not finish: {error}") from None
    if done.returncode != 0 or not (into / SDIST).is_file():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise Unavailable(f"`pip download accelerate=={VERSION}` failed (exit {done.returncode}): {last}")


def installed_scripts() -> Path:
    """``accelerate/test_utils/scripts`` of the installed wheel, which must be accelerate 1.15.0."""
    try:
        import accelerate
    except ImportError as error:
        raise Unavailable(f"accelerate is not installed: {error}") from None
    if accelerate.__version__ != VERSION:
        raise Unavailable(f"installed accelerate is {accelerate.__version__}; these tests are {VERSION}'s")
    return Path(accelerate.__file__).parent / "test_utils" / "scripts"


def rewrite_imports(source: str, used: set[str] | None = None) -> str:
    """``source`` with each ``from accelerate... import`` pointed at torchdoctor, line numbers kept.

    With ``used``, imports binding other names are dropped (for a test taken out of a larger file).
    """
    lines = source.splitlines()
    for node in ast.parse(source).body:
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        names = [alias.asname or alias.name.split(".")[0] for alias in node.names]
        if used is not None and not set(names) & used:
            new = ""
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "accelerate":
            new = "; ".join(_rewritten(node, used))
        else:
            continue
        lines[node.lineno - 1 : node.end_lineno] = [new] + [""] * (node.end_lineno - node.lineno)
    return "\n".join(lines) + "\n"


def _rewritten(node: ast.ImportFrom, used: set[str] | None) -> list[str]:
    statements = []
    for alias in node.names:
        bound = alias.asname or alias.name
        if used is not None and bound not in used:
            continue
        if node.module.startswith(KEPT_MODULES) or alias.name in KEPT:
            statements.append(f"from {node.module} import {alias.name} as {bound}")
            continue
        if alias.name not in NAMES:
            raise KeyError(
                f"`from {node.module} import {alias.name}`: the harness has no torchdoctor name for "
                f"{alias.name}; add it to NAMES in tests/accelerate_harness.py"
            )
        module, name = NAMES[alias.name].split(":")
        statements.append(f"from {module} import {name} as {bound}")
    return statements


def extract(source: str, *path: str) -> str:
    """One function (``"test_trigger"``) or method (``"UtilsTester", "test_pad_across_processes"``) of
    ``source``, verbatim, under the imports it uses (rewritten), as a module of its own."""
    tree = ast.parse(source)
    lines = source.splitlines()
    nodes, body = [], tree.body
    for name in path:
        node = next(n for n in body if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == name)
        nodes.append(node)
        body = node.body
    target = nodes[-1]
    first = min([target.lineno, *(d.lineno for d in target.decorator_list)])
    code = "\n".join(lines[first - 1 : target.end_lineno])
    if len(nodes) == 2:  # a method: keep its class line (bases included), then the method as it is indented
        klass = nodes[0]
        code = "\n".join(lines[klass.lineno - 1 : klass.body[0].lineno - 1]) + "\n" + code
    used = {n.id for n in ast.walk(ast.parse(textwrap.dedent(code))) if isinstance(n, ast.Name)}
    imports = rewrite_imports(source, used)
    kept = [line for line in imports.splitlines() if line.startswith(("import ", "from "))]
    return "\n".join(kept) + "\n\n\n" + code + "\n"


def main_block_until(source: str, last_statement_text: str) -> str:
    """The statements of ``source``'s ``if __name__ == "__main__":`` block up to the one containing
    ``last_statement_text`` (included), dedented, under the file's imports (rewritten)."""
    tree = ast.parse(source)
    block = next(
        n
        for n in tree.body
        if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) and "__name__" in ast.unparse(n.test)
    )
    lines = source.splitlines()
    end = next(s for s in block.body if last_statement_text in ast.get_source_segment(source, s))
    code = textwrap.dedent("\n".join(lines[block.body[0].lineno - 1 : end.end_lineno]))
    used = {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}
    imports = rewrite_imports(source, used)
    kept = [line for line in imports.splitlines() if line.startswith(("import ", "from "))]
    return "\n".join(kept) + "\n\n" + code + "\n"


def calls_in(source: str, function: str) -> list[str]:
    """The names of the functions that ``function`` of ``source`` calls as statements, in order."""
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == function)
    return [
        s.value.func.id
        for s in node.body
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name)
    ]

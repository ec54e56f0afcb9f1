"""torchrun's own command-line parser, ``torch.distributed.run.get_args_parser``, without importing torch.

``import torch.distributed.run`` imports all of torch: 3 s of CPU that `torchdoctor launch` paid in its own
process only to read its command line, before torchrun (which imports torch again) started. The parser needs
none of it: ``get_args_parser`` uses argparse and torch's two actions of ``torch/distributed/argparse_util.py``
(``env``, ``check_env``: argparse and os only). Both are taken from torch's own files, unchanged: the
module is loaded from its file, the function compiled from its source. Should a torch version's function
need anything more (it fails to build here), the parser comes from ``import torch.distributed.run``, as
before.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType


@cache
def torchrun_parser_parts() -> tuple[Callable[[], argparse.ArgumentParser], type, type]:
    """``(get_args_parser, env, check_env)``: torch's function and its two argparse actions, read from torch's
    files when they build a parser without the rest of torch, else imported from torch."""
    try:
        return _from_torchs_files()
    except Exception:  # noqa: BLE001 - any torch whose files read otherwise: import them as torch does
        from torch.distributed.argparse_util import check_env, env
        from torch.distributed.run import get_args_parser

        return get_args_parser, env, check_env


def _from_torchs_files() -> tuple[Callable[[], argparse.ArgumentParser], type, type]:
    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("torch is not installed")
    package = Path(next(iter(spec.submodule_search_locations)))
    actions = _module_from_file(
        "torchdoctor.launch._torch_argparse_util", package / "distributed/argparse_util.py"
    )
    tree = _tree(package / "distributed/run.py")
    names = {
        "__name__": "torch.distributed.run",
        "ArgumentParser": argparse.ArgumentParser,
        "REMAINDER": argparse.REMAINDER,
        "env": actions.env,
        "check_env": actions.check_env,
        "os": os,
    }
    # what else the function names and run.py imports from torch (torch 2.13: `AffinityMode as _AffinityMode`
    # of torch/numa/binding.py, an enum of the --numa-binding choices): that class, from its own file
    function = _definition(tree, "get_args_parser")
    used = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and (statement.module or "").startswith("torch."):
            for alias in statement.names:
                if (alias.asname or alias.name) in used and (alias.asname or alias.name) not in names:
                    where = package.joinpath(*statement.module.split(".")[1:])
                    path = where / "__init__.py" if where.is_dir() else where.with_suffix(".py")
                    names[alias.asname or alias.name] = _class_from_file(path, alias.name)
    _run([function], names, package / "distributed/run.py")
    get_args_parser = names["get_args_parser"]
    get_args_parser()  # a name the function needs and we lack fails here, not in the user's launch
    return get_args_parser, actions.env, actions.check_env


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _definition(tree: ast.Module, name: str) -> ast.stmt:
    (found,) = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name]
    return found


def _run(statements: list[ast.stmt], names: dict, path: Path) -> None:
    exec(compile(ast.Module(body=statements, type_ignores=[]), str(path), "exec"), names)


def _class_from_file(path: Path, name: str) -> type:
    """Class ``name`` of the module in ``path``, with that module's imports of anything but torch."""
    tree = _tree(path)
    imports = [
        s
        for s in tree.body
        if isinstance(s, ast.Import)
        and not any(a.name.split(".")[0] == "torch" for a in s.names)
        or isinstance(s, ast.ImportFrom)
        and s.level == 0
        and (s.module or "").split(".")[0] != "torch"
    ]
    names: dict = {"__name__": f"torchdoctor.launch._torch_{path.stem}"}
    _run([*imports, _definition(tree, name)], names, path)
    return names[name]


def _module_from_file(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

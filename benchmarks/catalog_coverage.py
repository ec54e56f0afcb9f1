"""The catalog of message templates `explain` knows: how it is built from the sources, and its coverage table.

    python benchmarks/catalog_coverage.py                 # the coverage table (Markdown), as in docs/catalog.md
    python benchmarks/catalog_coverage.py --write-doc     # regenerate docs/catalog.md
    python benchmarks/catalog_coverage.py --extract       # rebuild src/torchdoctor/explain/catalog/*.tsv
    python benchmarks/catalog_coverage.py --extract --only torch   # only torch.tsv (the others as they are)

``--extract`` reads the sources a distributed run's messages come from and writes one TSV per source:

- torch: the installed wheel's Python (``torch/distributed``, DDP/DataParallel/SyncBatchNorm, serialization,
  ``torch.cuda``, the DataLoader, ``cpp_extension``) through `ast` (raise / warn / log calls with a literal
  message, or naming a string constant of the module: ``cpp_extension.py``'s ``CUDA_MISMATCH_MESSAGE``), its
  C++ headers (``TORCH_CHECK``/``C10_THROW_ERROR`` literals) and the literal strings of ``libtorch_cpu.so`` that
  sit beside a ``torch/csrc/distributed`` source path (the reducer, TCPStore, socket, ProcessGroupGloo);
- nccl: every ``WARN("...")`` format in ``src/`` of a fetched NVIDIA/nccl, and the ``INFO`` lines a failing or
  retrying run prints beside them (`_INFO_FAILING`), with the release tags that print it;
- deepspeed: engine, ZeRO, config, launcher, comm, op_builder, ``initialize``, universal checkpoints, the
  accelerator, the ops' optimizers, MoE, elasticity, inference, module_inject, autotuning and ds_report's
  env_report.py of a fetched deepspeedai/DeepSpeed, with tags;
- accelerate, lightning, transformers: the installed packages' state/launch/utils, strategies/connectors and LightningCLI,
  Trainer;
- datasets: Hugging Face ``datasets`` of a fetched huggingface/datasets (load.py, builder.py, data_files.py, the
  split and checksum checks, arrow_dataset.py, table.py, features, download, streaming), with tags;
- pillow: ``Image.open`` and the image plugins of a fetched python-pillow/Pillow (Image.py, ImageFile.py, the
  JPEG/PNG/TIFF/WebP plugins), with tags;
- webdataset: a fetched webdataset/webdataset (shard lists and splitters, WebDataset, decoding, filters), with tags;
- mosaicml_streaming: a fetched mosaicml/streaming (``streaming/base``: StreamingDataset, streams, the shared memory
  its ranks coordinate through, partitioning, batching, download), with tags;
- torchvision: ``torchvision.tsv``, kept by hand (the repository is too large to fetch here), each row naming the
  file of pytorch/vision that prints it: the datasets' folder and integrity checks, the transforms' argument
  checks, ``io.decode_jpeg``'s libjpeg refusals;
- cuda: the CUDA runtime's error strings (``cudaGetErrorString``), listed in ``cuda_runtime.tsv`` by hand
  (no source of libcudart is public) and kept as they are;
- kept by hand too, each row naming its source file: ``torch_native.tsv`` (torch's C++ messages as printed,
  older releases' included), ``torch_cuda.tsv`` (torch's messages compiled only into its CUDA libraries, which
  the CPU wheel's strings lack: c10/cuda's CUDA check, allocator and device count, ATen's cuBLAS/cuDNN/cuSOLVER
  wrappers, its CUDA kernels' asserts, NCCLUtils, CUDA IPC; each row names the file of pytorch/pytorch read and
  its stored commit, one version read unless it says more), ``aten.tsv`` (what torch's operators, autograd, nn and NumPy conversions print on a
  training script's own mistakes: shapes, dtypes, labels, a graph without gradients), ``system.tsv`` (the OS, the loader, SLURM, CPython, shells), ``build_tools.tsv``
  (nvcc and host_config.h, gcc/ld, ninja, setuptools, pip, uv, conda, the extension packages' setup.py) and ``third_party.tsv``
  (messages of other packages a training script runs through: python-fire's argument parser, timm's optimizer
  factory). ``--extract`` leaves these files as they are.
- ``schedulers.tsv``, kept by hand: what Slurm, Open MPI, MPICH's Hydra, pdsh and ssh print when a multi-node launch fails.
- ``ray.tsv``, kept by hand (the repository is too large to fetch here), each row naming the file of ray-project/ray
  that prints it: Ray Train v2's worker group (``python/ray/train/v2/_internal/exceptions.py`` and
  ``execution/worker_group/worker_group.py``: its start timeout, its actors failing to start, its health checks, the
  report barrier). Ray's autoscaler and Ray Train v1's storage rows stay in ``schedulers.tsv``.
- ``torchdoctor.tsv``, kept by hand: what torchdoctor itself prints that a log handed back to `explain` holds (the
  watchdog's hang report).

The ``kind`` of a template is the recogniser whose anchor is in it (one of its lines), or empty.

A file ``--extract`` rebuilds (torch, lightning, transformers...) may hold rows written by hand: a message of a file
the extractor does not read (transformers' ``hf_argparser.py``), or of older releases. Such a row carries
``by hand`` in the ``kept`` column (``catalog.BY_HAND``); a re-extract keeps it as it is, after the extracted rows. A row read again keeps its id, and its kind while that kind's recogniser still has an anchor in it; a kind
that changes anyway is printed, never changed silently.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from torchdoctor.explain.catalog import BY_HAND, CATALOG_DIR, Template, load, read, write  # noqa: E402

DOC = ROOT / "docs" / "catalog.md"
NCCL_TAGS = (
    "v2.4.8-1 v2.7.8-1 v2.10.3-1 v2.12.12-1 v2.14.3-1 v2.16.5-1 v2.18.6-1 v2.19.4-1 v2.20.5-1 v2.21.5-1 "
    "v2.23.4-1 v2.25.1-1 v2.27.7-1 v2.28.9-1 v2.30.7-1"
).split()
DEEPSPEED_TAGS = (
    "v0.6.7 v0.9.5 v0.10.3 v0.12.6 v0.14.5 v0.15.4 v0.16.9 v0.17.5 v0.17.6 v0.18.9 v0.19.5".split()
)
DATASETS_TAGS = "1.18.4 2.6.2 2.10.1 2.14.7 2.16.1 2.19.2 2.21.0 3.0.2 3.6.0 4.0.0 4.4.2 4.8.5 5.0.1".split()
PILLOW_TAGS = "7.2.0 8.4.0 9.5.0 10.4.0 11.3.0 12.3.0".split()
WEBDATASET_TAGS = "0.1.103 0.2.5 0.2.48 0.2.86 0.2.100 v0.2.107 v0.3.2".split()
STREAMING_TAGS = "v0.4.1 v0.5.1 v0.6.1 v0.7.6 v0.8.1 v0.9.1 v0.11.0 v0.13.0".split()
ORDER = (
    "torch",
    "torch_cpp",
    "torch_native",
    "torch_cuda",
    "aten",
    "nccl",
    "cuda_runtime",
    "deepspeed",
    "accelerate",
    "lightning",
    "transformers",
    "datasets",
    "torchvision",
    "pillow",
    "webdataset",
    "mosaicml_streaming",
    "system",
    "build_tools",
    "schedulers",
    "ray",
    "third_party",
    "torchdoctor",
)

# -- Python sources: literal messages of raise / warn / log calls ------------------------------------------

_MESSAGE_CALLS = re.compile(
    r"(?:Error|Exception|Warning|warn|warning|warning_once|error|critical|fatal|exception|"
    r"rank_zero_warn|rank_zero_info|info|log_dist|logger_warning|print_rank_0|_raise|raise_\w*|fail|deprecated|"
    r"_log_and_throw|_p_assert)$"
)


def _text(node: ast.AST, names: dict[str, str] | None = None) -> str | None:
    """The message a node evaluates to, with ``{}`` where a value goes; None when nothing of it is literal.

    ``names``: the module's string constants (`module_constants`), read where a message names one
    (``raise RuntimeError(CUDA_NOT_FOUND_MESSAGE)``, ``CUDA_MISMATCH_MESSAGE.format(...)``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and names:
        return names.get(node.id)
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left, names), _text(node.right, names)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _text(node.left, names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _text(node.func.value, names)
    return None


def module_constants(tree: ast.Module) -> dict[str, str]:
    """The string constants a module assigns at its top level (``CUDA_NOT_FOUND_MESSAGE = ("CUDA was not found
    " "...")`` in torch/utils/cpp_extension.py): a message call that names one prints its text."""
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            text = _text(node.value)
            if text is not None and len(targets) == 1 and isinstance(targets[0], ast.Name):
                found[targets[0].id] = text
    return found


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def python_messages(source: str, calls: re.Pattern = _MESSAGE_CALLS) -> list[str]:
    """Literal messages of the raise / warning / log calls (``calls``: the names of those read) and the asserts
    in one Python file, and the module constants such a call names as its message."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    constants = module_constants(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and calls.search(_call_name(node)):
            # _log_and_throw(RuntimeError, "message"): the message is the first text argument
            text = next((t for t in (_text(a, constants) for a in node.args[:2]) if t is not None), None)
            if text is not None:
                found.append(text)
        elif isinstance(node, ast.Assert) and node.msg is not None:
            # assert cond, f"Check batch related parameters. ...": DeepSpeed checks its config so
            text = _text(node.msg)
            if text is not None:
                found.append(text)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Return)) and node.value is not None:
            # msg = f"Caught {...} {self.where}.", error_msgs.append(...), return f"Weights only load failed..."
            targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if isinstance(node, ast.Return) or any(
                re.search(r"msg|message|err|hint|where", n) for n in names
            ):
                text = _text(node.value)
                if text is not None:
                    found.append(text)
    return found


def worth_keeping(text: str) -> bool:
    """A message a person reads: a few words of literal text, not a format code or an identifier."""
    literal = re.sub(r"\{[^{}]*\}|%[-\d.]*[sdilfxugzp]+", " ", text)
    return len(re.findall(r"[A-Za-z]{2,}", literal)) >= 3 and len(literal.strip()) >= 15


def clean(text: str) -> str:
    """One template as printed: each line's ends trimmed, empty lines dropped, at most 400 characters. A run of
    spaces inside a line stays as the source prints it (Lightning's "a state with at least  a model instance",
    DeepSpeed's "has already been reduced.             Gradient computed twice"): an anchor copied across it
    would miss the line as printed, and `kind_of` (an anchor in the template) then leaves the template unmapped."""
    lines = [line.strip() for line in text.strip().splitlines()]
    return "\n".join(line for line in lines if line)[:400]


def from_python(root: Path, patterns: list[str], version: str) -> list[tuple[str, str, str]]:
    """(template, file, versions) for the messages of the Python files under ``root`` matching ``patterns``."""
    rows = []
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            relative = str(path.relative_to(root))
            if (
                "/test" in f"/{relative}" or not path.is_file()
            ):  # the package's tests, not the folder it sits in
                continue
            for text in python_messages(path.read_text(errors="replace")):
                if worth_keeping(text):
                    rows.append((clean(text), relative, version))
    return rows


# -- C++ sources --------------------------------------------------------------------------------------------

_CPP_MACRO = re.compile(
    r"\b(TORCH_CHECK\w*|C10_THROW_ERROR|TORCH_WARN\w*|C10D_THROW_ERROR|TORCH_INTERNAL_ASSERT)\("
)
_CPP_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def cpp_messages(source: str) -> list[str]:
    """The literal parts of the messages of the checks in one C++ file, ``{}`` between them."""
    found = []
    for macro in _CPP_MACRO.finditer(source):
        depth, at = 1, macro.end()
        while at < len(source) and depth:
            depth += {"(": 1, ")": -1}.get(source[at], 0)
            at += 1
        args = source[macro.end() : at - 1]
        pieces = _CPP_STRING.findall(args)
        if pieces:
            found.append("{}".join(p.encode().decode("unicode_escape", "replace") for p in pieces))
    return found


# a source file's path as the library keeps it (the __FILE__ of a check): "/__w/pytorch/pytorch/torch/csrc/..."
_SOURCE_PATH = re.compile(
    r"^/\S*?/((?:torch|aten|c10|caffe2|third_party)/[\w/.+\-]+\.(?:cpp|cc|c|cu|hpp|h|cuh))$"
)


def from_libtorch(site: Path, version: str) -> list[tuple[str, str, str]]:
    """Literal strings of ``libtorch_cpu.so`` within 400 strings after a ``torch/csrc/distributed`` source path
    (the linker keeps one file's strings together), attributed to that file, or to another source file (``.cpp``)
    whose path comes between: a distributed file's strings can be followed by another file's (the C++ API's
    ``nn/modules/rnn.cpp`` prints "input.size(-1) must be equal to input_size"). Another library's header
    (gloo's, c10's) named between is not where the strings come from: its inline functions sit in the file that
    includes it."""
    library = site / "torch" / "lib" / "libtorch_cpu.so"
    out = subprocess.run(["strings", "-n", "16", str(library)], capture_output=True, text=True, check=True)
    rows, current, since = [], None, 0
    for line in out.stdout.splitlines():
        path = _SOURCE_PATH.match(line.strip())
        if path and path.group(1).startswith("torch/csrc/distributed/"):
            current, since = path.group(1), 0
            continue
        if path and current is not None and not path.group(1).endswith((".h", ".hpp", ".cuh")):
            current = path.group(1)
        since += 1
        if current is None or since > 400:
            current = None
            continue
        if "INTERNAL ASSERT FAILED" in line or not worth_keeping(line) or not re.match(r"^[\[A-Z(a-z]", line):
            continue
        if re.search(r"[_:]{2}|\w\(\)|\.cpp|\.h\b|^[a-z_]+$", line):  # symbols, not messages
            continue
        rows.append((clean(line), current, version))
    return rows


def from_headers(site: Path, version: str) -> list[tuple[str, str, str]]:
    """The check messages of the C++ headers the torch wheel ships (c10d's Utils.hpp, NCCLUtils.hpp, ...)."""
    include = site / "torch" / "include"
    rows = []
    for folder in ("torch/csrc/distributed/c10d", "c10/cuda"):
        for path in sorted((include / folder).glob("*.h*")):
            for text in cpp_messages(path.read_text(errors="replace")):
                if worth_keeping(text):
                    rows.append((clean(text), str(path.relative_to(include)), version))
    return rows


# -- sources with release tags -------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def tags_holding(
    repo: Path,
    tags: list[str],
    folder: str | tuple[str, ...],
    rows: list[tuple[str, str, str]],
    split_strings: bool = False,
    with_directive: bool = False,
) -> list:
    """``rows`` with their versions: the first and last of ``tags`` whose ``folder`` (or folders) holds the
    template's longest literal piece.

    ``split_strings``: where no tag holds that piece whole, look for its first 30 characters instead: a message the
    source writes as several string literals joined (``f'... Provide a different one. If using ' + f'a unique
    ...'``) is never in the source as printed, and would otherwise be dated to HEAD alone.

    ``with_directive``: look for the piece with the format directive that follows it in the template where some tag
    holds them so (C sources write the format whole: NCCL's ``"Cuda failure %d '%s'"`` came in 2.19, its longest
    piece ``Cuda failure`` is in every release)."""
    folders = (folder,) if isinstance(folder, str) else folder
    texts = {}
    for tag in tags:
        texts[tag] = _git(repo, "grep", "-h", "-I", "", tag, "--", *folders)
    head = "HEAD"
    result = []
    for template, file, _ in rows:
        piece = max(re.split(r"\{[^{}]*\}|%[-\d.]*[a-z]+|\n", template), key=len).strip()
        syscheck = re.fullmatch(r"Call to (\w+) failed( ?): %s", template)
        if syscheck:  # the source holds only the call's name, as SYSCHECK's argument
            piece = f'"{syscheck.group(1)}"'
        holding = [t for t in tags if piece in texts[t]]
        directive = re.search(re.escape(piece) + r"\s*%[-\d.]*[a-z]+", template) if with_directive else None
        if directive and not syscheck and any(directive.group() in texts[t] for t in tags):
            holding = [t for t in tags if directive.group() in texts[t]]
        if syscheck:  # and the release's macro spells the colon the template's way
            spelling = f'" failed{syscheck.group(2)}: %s"'
            holding = [t for t in holding if spelling in texts[t]]
        if not holding and split_strings and len(piece) > 30:
            holding = [t for t in tags if piece[:30] in texts[t]]
        versions = f"{holding[0]}..{holding[-1]}" if holding else head
        if holding and holding[-1] == tags[-1] and len(holding) == len(tags):
            versions = f"{holding[0]}+"
        elif holding and holding[-1] == tags[-1]:
            versions = f"{holding[0]}+"
        result.append((template, file, versions.replace("-1", "")))
    return result


def files_at(repo: Path, tag: str, folders: tuple[str, ...], suffixes: tuple[str, ...]) -> dict[str, str]:
    """``{path: text}`` of the files under ``folders`` at ``tag`` whose names end in ``suffixes``."""
    names = [
        n
        for n in _git(repo, "ls-tree", "-r", "--name-only", tag, "--", *folders).splitlines()
        if n.endswith(suffixes) and "/test" not in n
    ]
    batch = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        input="".join(f"{tag}:{n}\n" for n in names).encode(),
        capture_output=True,
        check=True,
    ).stdout
    texts, at = {}, 0
    for name in names:
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        texts[name] = batch[header_end + 1 : header_end + 1 + size].decode("utf-8", "replace")
        at = header_end + 1 + size + 1
    return texts


_WARN = re.compile(r'\bWARN\(\s*"((?:[^"\\\n]|\\.)*)"')
_ENV_INFO = re.compile(r'\bINFO\(\s*NCCL_\w+\s*,\s*"([^"\n]*set by environment to[^"\n]*)"')
# SYSCHECK(statement, "name") and its kin print WARN("Call to " name " failed : %s", strerror(errno)), spelled
# " failed: %s" since 2.23 (include/checks.h): _SYSCHECK_SPELLING reads which one a release's macro prints
_SYSCHECK = re.compile(r'\bSYSCHECK\w*\((?:[^;"]|"[^"]*"(?!\s*[,)]\s*(?:\w+\s*,\s*\w+\s*)?\)))*?,\s*"(\w+)"')
# the INFO lines a failing or retrying run prints beside its WARNs (users paste them with the error): a connection a
# local rank closed, a connect or accept retried, a library or plugin that did not load (most of them harmless),
# not NCCL's RAS monitor's or the IB resiliency's internal ones
_INFO_FAILING = re.compile(
    r'\bINFO\(\s*NCCL_[\w| ]+,\s*"((?!RAS |NET/IB: %s: )[^"\n]*(?:[Cc]onnection closed|retrying|[Ff]ailed to|'
    r'failed with|No device found|Plugin load returned|exceeded)[^"\n]*)"'
)
_SYSCHECK_SPELLING = re.compile(r'WARN\("Call to " name " failed( ?): %s"')
_ERROR_STRING = re.compile(
    r'case nccl\w+\s*:\s*return\s+"([^"]+)"|return\s+"((?:unhandled|invalid|internal|remote)[^"]+)"'
)


def from_nccl(repo: Path) -> list[tuple[str, str, str]]:
    """Every ``WARN("...")`` format in NCCL's ``src/`` and the strings of ``ncclGetErrorString``, over the
    release tags and HEAD (a message a later release dropped is still printed by the NCCL users run)."""
    rows = []
    for tag in [*reversed(NCCL_TAGS), "HEAD"]:
        files = files_at(repo, tag, ("src",), (".cc", ".h", ".cu", ".cpp"))
        spelled = _SYSCHECK_SPELLING.search(files.get("src/include/checks.h", ""))
        before_colon = spelled.group(1) if spelled else " "
        for file, text in files.items():
            for found in _WARN.finditer(text):
                rows.append((clean(found.group(1).replace("\\n", "\n")), file, ""))
            for found in _ENV_INFO.finditer(text):  # the settings NCCL says it took from the environment
                rows.append((clean(found.group(1)), file, ""))
            for found in _INFO_FAILING.finditer(text):
                rows.append((clean(found.group(1)), file, ""))
            for found in _ERROR_STRING.finditer(text):
                rows.append((clean(found.group(1) or found.group(2)), file, ""))
            for found in _SYSCHECK.finditer(text):  # the system call's name is the message
                rows.append((f"Call to {found.group(1)} failed{before_colon}: %s", file, ""))
    # the CUDA check macros' format is two words and the CUDA error string (checks.h, cudawrap.h): a class of
    # messages, kept although it has fewer words than worth_keeping asks for
    rows = [r for r in rows if worth_keeping(r[0]) or r[0].startswith("Cuda failure")]
    return tags_holding(repo, NCCL_TAGS, "src", rows, with_directive=True)


def from_deepspeed(repo: Path) -> list[tuple[str, str, str]]:
    """The messages of DeepSpeed's engine, ZeRO, config, launcher, comm, utils and op builders, over a few
    releases and HEAD; and of what a training run passes through besides: ``deepspeed/__init__.py``
    (initialize), ``deepspeed/checkpoint`` (universal checkpoints), ``accelerator`` (the device it picks), the
    ops' Python (optimizers), MoE, elasticity, inference and module_inject, autotuning and ``env_report.py``
    (ds_report)."""
    folders = (
        "deepspeed/runtime",
        "deepspeed/launcher",
        "deepspeed/comm",
        "deepspeed/utils",
        "op_builder",
        "deepspeed/__init__.py",
        "deepspeed/checkpoint",
        "accelerator",
    )
    # what users hit at startup and in the first steps beyond the engine: the optimizers' ops (cpu_adam,
    # fused_adam, onebit), MoE, elasticity, inference and its kernel injection, autotuning, ds_report; read after
    # the folders above, so that a message both print (the hostfile's) keeps the training path's file
    beside = (
        "deepspeed/ops",
        "deepspeed/moe",
        "deepspeed/elasticity",
        "deepspeed/inference",
        "deepspeed/module_inject",
        "deepspeed/autotuning",
        "deepspeed/env_report.py",
    )
    rows = []
    # v0.17.5: the last of 0.17.2-0.17.5, whose torch_autocast.py refused an outer torch.autocast (0.17.6 warns);
    # v0.6.7: the wordings of 2021-2022's threads that later releases changed (the op builder's CUDA mismatch
    # without its "DeepSpeed Op Builder" prefix, 0.8.1)
    for group in (folders, beside):
        for tag in ("HEAD", "v0.17.5", "v0.16.9", "v0.12.6", "v0.9.5", "v0.6.7"):
            for file, text in files_at(repo, tag, group, (".py",)).items():
                for message in python_messages(text):
                    if worth_keeping(message):
                        rows.append((clean(message), file, ""))
    # op_builder and accelerator sit beside the package in the repository (installed as deepspeed/ops/op_builder,
    # deepspeed/accelerator): their messages' releases are read there
    return tags_holding(repo, DEEPSPEED_TAGS, ("deepspeed", "op_builder", "accelerator"), rows)


def from_datasets(repo: Path) -> list[tuple[str, str, str]]:
    """The messages of Hugging Face ``datasets`` on a training run's data path: ``load_dataset`` and the
    builder (load.py, builder.py, data_files.py, info.py and utils/info_utils.py's split and checksum checks),
    ``arrow_dataset.py`` (map, filter, set_format, cast, remove_columns), the features, the Arrow table casts
    (table.py), the download and cache manager, ``iterable_dataset.py`` (streaming), the exceptions module, ``arrow_reader.py`` (the split a script asks for) and
    ``utils/py_utils.py`` (map's worker processes), ``formatting/formatting.py`` (a row index out of the table),
    ``distributed.py`` (split_dataset_by_node) and the JSON builder (``packaged_modules/json/json.py``),
    over a few releases and HEAD, with the first and last of `DATASETS_TAGS` that print each."""
    folders = (
        "src/datasets/load.py",
        "src/datasets/builder.py",
        "src/datasets/data_files.py",
        "src/datasets/info.py",
        "src/datasets/splits.py",
        "src/datasets/utils/info_utils.py",
        "src/datasets/utils/file_utils.py",
        "src/datasets/arrow_dataset.py",
        "src/datasets/arrow_writer.py",
        "src/datasets/table.py",
        "src/datasets/features",
        "src/datasets/download",
        "src/datasets/iterable_dataset.py",
        "src/datasets/exceptions.py",
        "src/datasets/combine.py",
        "src/datasets/arrow_reader.py",
        "src/datasets/utils/py_utils.py",
        # indexing a Dataset (the Trainer's sampler asking rows of a table whose columns it removed), the
        # split of a dataset between ranks, and the JSON builder most fine-tuning data goes through
        "src/datasets/formatting/formatting.py",
        "src/datasets/distributed.py",
        "src/datasets/packaged_modules/json/json.py",
    )
    rows = []
    for tag in ("HEAD", "3.6.0", "2.21.0", "2.14.7", "2.6.2"):
        for file, text in files_at(repo, tag, folders, (".py",)).items():
            for message in python_messages(text):
                if worth_keeping(message):
                    rows.append((clean(message), file.removeprefix("src/"), ""))
    return tags_holding(repo, DATASETS_TAGS, "src/datasets", rows, split_strings=True)


def from_pillow(repo: Path) -> list[tuple[str, str, str]]:
    """The messages of Pillow's ``Image.open`` and the decoders a dataset's images go through (Image.py,
    ImageFile.py: "cannot identify image file", truncated images, the decompression-bomb check; the JPEG, PNG,
    TIFF and WebP plugins), over a few releases and HEAD."""
    folders = (
        "src/PIL/Image.py",
        "src/PIL/ImageFile.py",
        "src/PIL/JpegImagePlugin.py",
        "src/PIL/PngImagePlugin.py",
        "src/PIL/TiffImagePlugin.py",
        "src/PIL/WebPImagePlugin.py",
    )
    rows = []
    for tag in ("HEAD", "10.4.0", "9.5.0", "8.4.0"):
        for file, text in files_at(repo, tag, folders, (".py",)).items():
            for message in python_messages(text):
                if worth_keeping(message):
                    rows.append((clean(message), file.removeprefix("src/"), ""))
    return tags_holding(repo, PILLOW_TAGS, "src/PIL", rows, split_strings=True)


def from_webdataset(repo: Path) -> list[tuple[str, str, str]]:
    """The messages of webdataset (the shard lists and their node and worker splitters, the WebDataset class,
    decoding, filters, tar iteration), over a few releases (from 0.2.5: its first multi-node refusal's wording)
    and HEAD: ``webdataset/`` up to 0.2.x, ``src/webdataset/`` after."""
    rows = []
    for tag in ("HEAD", "v0.2.107", "0.2.86", "0.2.48", "0.2.5"):
        for file, text in files_at(repo, tag, ("webdataset", "src/webdataset"), (".py",)).items():
            for message in python_messages(text):
                if worth_keeping(message):
                    rows.append((clean(message), file.removeprefix("src/"), ""))
    return tags_holding(repo, WEBDATASET_TAGS, ("webdataset", "src/webdataset"), rows, split_strings=True)


def from_streaming(repo: Path) -> list[tuple[str, str, str]]:
    """The messages of MosaicML's streaming (``streaming/base``: StreamingDataset, its streams, the shared memory
    its ranks coordinate through, partitioning, batching, shard download), over a few releases and HEAD."""
    rows = []
    for tag in ("HEAD", "v0.9.1", "v0.7.6", "v0.5.1"):
        for file, text in files_at(repo, tag, ("streaming/base",), (".py",)).items():
            for message in python_messages(text):
                if worth_keeping(message):
                    rows.append((clean(message), file, ""))
    return tags_holding(repo, STREAMING_TAGS, "streaming/base", rows, split_strings=True)


CUDA_RUNTIME = ROOT / "src" / "torchdoctor" / "explain" / "catalog" / "cuda_runtime.tsv"


def extract(
    site: Path,
    nccl: Path,
    deepspeed: Path,
    only: tuple[str, ...] = (),
    datasets: Path = Path("/work/.mirror/huggingface+datasets/repo"),
    pillow: Path = Path("/work/.mirror/python-pillow+Pillow/repo"),
    webdataset: Path = Path("/work/.mirror/webdataset+webdataset/repo"),
    streaming: Path = Path("/work/.mirror/mosaicml+streaming/repo"),
) -> dict[str, list[tuple[str, str, str]]]:
    """Every source's (template, file, versions), read from the installed packages and the fetched mirrors;
    ``only``: those sources alone (the others' files are left as they are)."""
    import accelerate
    import lightning
    import torch
    import transformers

    torch_version = torch.__version__.split("+")[0]
    readers = {
        "torch": lambda: from_python(
            site,
            [
                "torch/distributed/**/*.py",
                "torch/nn/parallel/*.py",
                "torch/nn/modules/batchnorm.py",
                "torch/serialization.py",
                "torch/_utils.py",
                "torch/nn/modules/module.py",
                "torch/cuda/__init__.py",
                "torch/cuda/memory.py",
                # what a spawned rank's failure and a CUDA device query print (session 38's NOTEMPLATE: the
                # innermost frame of misses holding no template): mp.spawn's ProcessRaisedException/ExitedException,
                # the CUDA streams, graphs, random state and NVTX/profiler helpers a training loop calls
                "torch/multiprocessing/*.py",
                "torch/cuda/*.py",
                "torch/utils/data/*.py",
                "torch/utils/data/_utils/*.py",
                "torch/utils/cpp_extension.py",
                "torch/autograd/__init__.py",
                "torch/backends/cudnn/__init__.py",
            ],
            torch_version,
        ),
        "torch_cpp": lambda: from_headers(site, torch_version) + from_libtorch(site, torch_version),
        "accelerate": lambda: from_python(
            site,
            [
                "accelerate/state.py",
                "accelerate/accelerator.py",
                "accelerate/commands/launch.py",
                "accelerate/commands/config/config_args.py",
                "accelerate/utils/*.py",
            ],
            accelerate.__version__,
        ),
        "lightning": lambda: from_python(
            site,
            [
                "lightning/pytorch/strategies/*.py",
                "lightning/pytorch/trainer/connectors/*.py",
                "lightning/fabric/strategies/*.py",
                "lightning/fabric/plugins/environments/*.py",
                "lightning/fabric/utilities/distributed.py",
                "lightning/fabric/utilities/device_parser.py",
                "lightning/pytorch/utilities/data.py",
                "lightning/pytorch/cli.py",
                "lightning/fabric/utilities/data.py",
                # the hooks a LightningModule or LightningDataModule leaves to the user: the dataloaders it must define
                "lightning/pytorch/core/hooks.py",
                # what LightningModule.log / log_dict, manual_backward and clip_gradients refuse
                "lightning/pytorch/core/module.py",
                # where self.log may be called and with what (the hook, on_step/on_epoch, reduce_fx, the same name
                # twice): LightningModule.log's other refusals, raised by the logger connector
                "lightning/pytorch/trainer/connectors/logger_connector/*.py",
                # the checks fit/validate/test/predict run on the LightningModule before the loop (a hook the stage
                # needs, the *_epoch_end hooks 2.0 removed, manual optimization beside clipping or accumulation): the
                # MisconfigurationExceptions users post most from Lightning (session 38's NOTEMPLATE, by the issues)
                "lightning/pytorch/trainer/configuration_validator.py",
                # the callbacks a Trainer is given (EarlyStopping, ModelCheckpoint ...) and the accelerators it picks
                "lightning/pytorch/callbacks/*.py",
                "lightning/pytorch/accelerators/*.py",
            ],
            lightning.__version__,
        ),
        "transformers": lambda: from_python(
            site,
            [
                "transformers/trainer.py",
                "transformers/utils/versions.py",
                "transformers/training_args.py",
                "transformers/trainer_utils.py",
                "transformers/integrations/deepspeed.py",
                "transformers/integrations/fsdp.py",
                "transformers/integrations/accelerate.py",
                "transformers/modeling_utils.py",
            ],
            transformers.__version__,
        ),
    }
    if nccl.exists():
        readers["nccl"] = lambda: from_nccl(nccl)
    if deepspeed.exists():
        readers["deepspeed"] = lambda: from_deepspeed(deepspeed)
    if datasets.exists():
        readers["datasets"] = lambda: from_datasets(datasets)
    if pillow.exists():
        readers["pillow"] = lambda: from_pillow(pillow)
    if webdataset.exists():
        readers["webdataset"] = lambda: from_webdataset(webdataset)
    if streaming.exists():
        readers["mosaicml_streaming"] = lambda: from_streaming(streaming)
    return {source: read() for source, read in readers.items() if not only or source in only}


# how a log prints a template: after a prefix (the exception's name, a logger's header), a number where it prints
# one, and in a string placeholder any of a few values (a number, a word, a signal's name, a compiler's)
_NUMBER = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:ll|l|z|h)?[diouxXfeEgGcp]")
_STRING = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?s|\{[^{}]*\}")
_VALUES = ("1", "value", "SIGTERM", "gcc")
_PREFIX = "Error: "


def _printed(window: str, value: str) -> tuple[str, list[int]]:
    """The window as a log prints it with ``value`` in each string placeholder, and where those values start."""
    text, starts, at = _PREFIX, [], 0
    window = _NUMBER.sub("7", window)
    for found in _STRING.finditer(window):
        text += window[at : found.start()]
        starts.append(len(text))
        text += value
        at = found.end()
    return text + window[at:], starts


def rejects(recogniser, window: str) -> bool:
    """Whether ``recogniser``'s reject pattern turns down the template ``window`` whatever it prints in its
    string placeholders: on each sample value, and never deciding on a placeholder after what it matched (a
    lookahead at a value: NCCL's "no algorithm/protocol ... with datatype %s.%s", taken where ``%s`` names
    NCCL_ALGO)."""
    if recogniser.reject is None:
        return False
    for value in _VALUES:
        text, starts = _printed(window, value)
        found = recogniser.reject.search(text)
        if found is None or any(start >= found.end() for start in starts):
            return False
    return True


def fits(recogniser, template: str) -> bool:
    """Whether ``recogniser`` reads the template: an anchor in one of its lines (placeholders left as they are),
    the window from that line on not rejected (`rejects`), as when it reads a log."""
    lines = template.splitlines()
    return any(
        any(anchor in line for anchor in recogniser.anchors)
        and not rejects(recogniser, "\n".join(lines[at:]))
        for at, line in enumerate(lines)
    )


def kind_of(template: str) -> str:
    """The kind whose recogniser has an anchor in one of the template's lines (placeholders left as they are)
    and does not reject it (`fits`)."""
    from torchdoctor.explain.kinds import RECOGNISERS

    for recogniser in RECOGNISERS:
        if fits(recogniser, template):
            return recogniser.kind
    return ""


def slug(text: str, words: int = 6) -> str:
    """A few words of a template, lower case, for its id."""
    literal = re.sub(r"\{[^{}]*\}|%[-\d.]*[a-z]+", " ", text)
    return "-".join(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", literal)[:words])


def build(rows: dict[str, list[tuple[str, str, str]]]) -> dict[str, list[Template]]:
    """Templates with ids (``source:slug``, unique) and kinds; a template printed by several files is kept once."""
    result = {}
    for source, source_rows in rows.items():
        seen: set[str] = set()
        ids: Counter = Counter()
        templates = []
        for template, file, versions in source_rows:
            if template in seen:
                continue
            seen.add(template)
            base = f"{source}:{slug(template)}"
            ids[base] += 1
            ident = base if ids[base] == 1 else f"{base}-{ids[base]}"
            templates.append(Template(ident, template, file, versions, kind_of(template), source))
        result[source] = templates
    return result


def anchored(kind: str, template: str) -> bool:
    """Whether the recogniser of ``kind`` still reads the template: an anchor in one of its lines, not rejected."""
    from torchdoctor.explain.kinds import BY_KIND

    recogniser = BY_KIND.get(kind)
    return recogniser is not None and fits(recogniser, template)


def merge(extracted: list[Template], existing: list[Template]) -> tuple[list[Template], list[str]]:
    """A source's templates read again, merged with its file as it is: the rows kept by hand stay, as they are,
    after the extracted ones (where they are kept today); a template read again keeps its id, and its kind while
    that kind still anchors it. Returns the rows and a line for each kind that changes."""
    before = {t.text: t for t in existing}
    hand = [t for t in existing if t.kept == BY_HAND]
    hand_texts = {t.text for t in hand}
    taken = {t.id for t in existing}
    changes = []
    rows: dict[str, Template] = {}
    for t in extracted:
        if t.text in hand_texts:
            continue
        old = before.get(t.text)
        if old is None:
            ident, n = t.id, 1
            while ident in taken:
                n += 1
                ident = f"{t.id}-{n}"
            taken.add(ident)
            rows[t.text] = t._replace(id=ident)
            continue
        kind = old.kind if old.kind and anchored(old.kind, t.text) else t.kind
        if kind != old.kind:
            changes.append(f"{old.id}: kind {old.kind or '(none)'} -> {kind or '(none)'}")
        rows[t.text] = t._replace(id=old.id, kind=kind)
    return list(rows.values()) + hand, changes


def reextract(
    rows: dict[str, list[tuple[str, str, str]]], directory: Path = CATALOG_DIR
) -> dict[str, list[str]]:
    """Write each source's templates read again into ``directory``, merged with its file as it is (`merge`);
    returns each source's kind changes."""
    changes = {}
    for source, templates in build(rows).items():
        path = directory / f"{source}.tsv"
        merged, changes[source] = merge(templates, read(path) if path.exists() else [])
        write(source, merged, directory)
    return changes


def refresh_kinds() -> None:
    """Recompute every template's kind from today's recognisers, keeping its id, text, file and versions.

    A template whose kind's recogniser still holds an anchor in it keeps that kind: a message two kinds are
    anchored on (CPython's "No module named '{}'": a package not installed, or a submodule a release dropped)
    keeps the reading it was mapped to rather than the one tried first."""
    for source, templates in load().items():
        write(
            source,
            [
                t if t.kind and anchored(t.kind, t.text) else t._replace(kind=kind_of(t.text))
                for t in templates
            ],
        )


def table() -> str:
    """The coverage table: per source, its templates and how many map to a kind, and the kinds they map to."""
    catalog = load()
    lines = ["| source | templates | mapped to a kind | kinds |", "|---|---:|---:|---|"]
    total = mapped = 0
    for source in sorted(catalog, key=lambda s: ORDER.index(s) if s in ORDER else len(ORDER)):
        templates = catalog[source]
        kinds = Counter(t.kind for t in templates if t.kind)
        total += len(templates)
        mapped += sum(kinds.values())
        names = ", ".join(f"{k} ({n})" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
        lines.append(f"| {source} | {len(templates)} | {sum(kinds.values())} | {names} |")
    lines.append(f"| **all** | **{total}** | **{mapped}** | |")
    return "\n".join(lines)


def certainty_table() -> str:
    """Per kind: the anchors that make a finding certain, those that alone make it only likely (printed by other
    failures too), whether confirming facts decide instead, and the other kinds the same message fits."""
    from torchdoctor.explain.kinds import RECOGNISERS

    def quoted(anchors) -> str:
        spans = [f"`` {a.strip()} ``" if "`" in a else f"`{a.strip()}`" for a in anchors]
        return ", ".join(spans).replace("|", "\\|") or "—"

    lines = [
        "| kind | role | decisive anchors (certain) | suggestive anchors (likely alone) | decided by | also named |",
        "|---|---|---|---|---|---|",
    ]
    for r in RECOGNISERS:
        decisive = [a for a in r.anchors if a not in r.generic]
        # a confirm marked ``lowers_only`` only takes certainty away where a fact read beside the anchor says so
        # (DeepSpeed's batch check at world size 1): its anchors are decisive, as without one
        by_default = getattr(r.confirm, "lowers_only", False)
        if r.confirm is not None and not by_default:
            decided = "confirming facts (every anchor likely without them)"
            decisive, suggestive = [], list(r.anchors)
        elif by_default:
            decided, suggestive = "the anchor, unless a fact read beside it makes it likely", list(r.generic)
            if getattr(r.confirm, "raised_by", ""):
                decided += f"; a suggestive one too with {r.confirm.raised_by}"
        else:
            decided, suggestive = "the anchor", list(r.generic)
        if r.role == "consequence":
            decided += "; never certain without a cause in the log"
        if r.fallback:
            decided += "; a finding only when nothing else is"
        also = ", ".join(f"`{a.kind}`" for a in r.also) or "—"
        lines.append(
            f"| `{r.kind}` | {r.role} | {quoted(decisive)} | {quoted(suggestive)} | {decided} | {also} |".replace(
                "\n", " "
            )
        )
    return "\n".join(lines)


def modules_table() -> str:
    """The kinds modules under their family of failure (each module's ``FAMILY``, in ``kinds.FAMILIES``' order):
    each one's job (its docstring's first line), the kinds it defines (or, where it defines none, the modules
    that read it) and how many catalog templates it cites."""
    import importlib
    import pkgutil

    from torchdoctor.explain import kinds
    from torchdoctor.explain.recognisers import Recogniser

    ids = {t.id for templates in load().values() for t in templates}
    names = [info.name for info in pkgutil.iter_modules(kinds.__path__)]
    modules = {name: importlib.import_module(f"{kinds.__name__}.{name}") for name in names}
    trees = {name: ast.parse(Path(m.__file__).read_text(encoding="utf-8")) for name, m in modules.items()}
    explain = Path(kinds.__file__).parent.parent  # its modules outside kinds/ read kinds modules too
    outside = {
        f"explain/{p.relative_to(explain).as_posix()}": ast.parse(p.read_text(encoding="utf-8"))
        for p in sorted(explain.rglob("*.py"))
        if "kinds" not in p.relative_to(explain).parts
    }
    reads = {  # the kinds modules each module imports, at the top or inside a function
        name: {
            alias.name if node.module == kinds.__name__ else node.module.rpartition(".")[2]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(kinds.__name__)
            for alias in node.names
        }
        for name, tree in {**trees, **outside}.items()
    }
    rows: dict[str, list[str]] = {family: [] for family in kinds.FAMILIES}
    for name, module in modules.items():
        values = [
            v for value in vars(module).values() for v in (value if isinstance(value, tuple) else (value,))
        ]
        defined = ", ".join(
            f"`{k}`" for k in dict.fromkeys(v.kind for v in values if isinstance(v, Recogniser))
        )
        readers = ", ".join(f"`{other}`" for other in reads if name in reads[other])
        cited = {n.value for n in ast.walk(trees[name]) if isinstance(n, ast.Constant) and n.value in ids}
        job = module.__doc__.strip().splitlines()[0].replace("|", "\\|")
        kinds_cell = defined or (f"— (read by {readers})" if readers else "—")
        rows[module.FAMILY].append(f"| `{name}` | {job} | {kinds_cell} | {len(cited)} |")
    header = "| module | its one job | kinds it defines | templates cited |\n|---|---|---|---:|\n"
    return "\n\n".join(f"### {family}\n\n" + header + "\n".join(lines) for family, lines in rows.items())


def document() -> str:
    """docs/catalog.md: what the catalog is, its coverage table, the kinds modules by family, how sure each kind is."""
    return (
        "# The catalog of messages `explain` knows\n\n"
        "Generated by `python benchmarks/catalog_coverage.py --write-doc` from "
        "`src/torchdoctor/explain/catalog/*.tsv` (one file per source; columns: id, template as printed with "
        "`{}`/`%s` where a value goes, source file, versions that print it, kind, source; `kept`: `by hand` on a "
        "row written by hand in a file `--extract` rebuilds, which a re-extract keeps). The TSVs are "
        "rebuilt from the sources with `--extract` (see the script's docstring for what is read); a template's "
        "kind is the recogniser whose anchor is in it and whose `reject` does not turn it down whatever its "
        "placeholders print (NCCL's retry INFO lines are not `network_interface`'s). Every recogniser cites the template ids it is anchored "
        "on (`Recogniser.templates`), and `tests/test_explain_catalog.py` checks each cited id exists and that "
        "the recogniser's anchor matches its text.\n\n" + table() + "\n\n"
        "## The kinds modules, by family of failure\n\n"
        "`src/torchdoctor/explain/kinds/` holds the knowledge, a few related kinds a module, grouped by family "
        "of failure: each module names its family (`FAMILY`, one of `kinds.FAMILIES`) and says its one job in "
        "its docstring's first line. A "
        "module without kinds of its own holds what others read (named beside it): a tool's words, a table of "
        "releases or of refusals. Templates cited: the catalog ids written in the module. Generated from the modules; "
        "`tests/test_house.py` checks every module is here.\n\n" + modules_table() + "\n\n"
        "## How sure each kind is\n\n"
        "A finding is certain only on a decisive anchor: the message its source prints for that cause alone. A "
        "suggestive anchor (a message other failures print too: a timeout, a refused connection, an exit code, "
        "a bare NCCL error) makes it only likely; where a kind has confirming facts, they decide instead. A "
        "likely finding names the other kinds the same message fits (`Recogniser.also`), after its own. Generated "
        "from the recognisers (`src/torchdoctor/explain/kinds/`):\n\n" + certainty_table() + "\n\n"
        "`library_version_bug` is read from the exception no kind covers, when it was raised in an installed "
        "package's own frame with a type a version's bug raises (`kinds/versions.py`, `library_bug`), and from "
        "the one anchor above (a refusal only some releases print); it is always likely.\n"
    )


def main() -> int:
    """Print the coverage table, or rebuild the catalog (``--extract``) or the doc (``--write-doc``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extract", action="store_true", help="rebuild the TSVs from the sources")
    parser.add_argument(
        "--only",
        nargs="+",
        default=(),
        metavar="SOURCE",
        help="with --extract: rebuild only these (torch ...)",
    )
    parser.add_argument("--refresh-kinds", action="store_true", help="recompute kinds from the recognisers")
    parser.add_argument("--write-doc", action="store_true", help=f"write {DOC.relative_to(ROOT)}")
    parser.add_argument("--site", type=Path, default=Path(__import__("torch").__file__).parent.parent)
    parser.add_argument("--nccl", type=Path, default=Path("/work/.mirror/NVIDIA+nccl/repo"))
    parser.add_argument("--deepspeed", type=Path, default=Path("/work/.mirror/deepspeedai+DeepSpeed/repo"))
    parser.add_argument("--datasets", type=Path, default=Path("/work/.mirror/huggingface+datasets/repo"))
    parser.add_argument("--pillow", type=Path, default=Path("/work/.mirror/python-pillow+Pillow/repo"))
    parser.add_argument("--webdataset", type=Path, default=Path("/work/.mirror/webdataset+webdataset/repo"))
    parser.add_argument("--streaming", type=Path, default=Path("/work/.mirror/mosaicml+streaming/repo"))
    args = parser.parse_args()
    if args.extract:
        rows = extract(
            args.site,
            args.nccl,
            args.deepspeed,
            tuple(args.only),
            args.datasets,
            args.pillow,
            args.webdataset,
            args.streaming,
        )
        for source, changed in reextract(rows).items():
            print(f"{source}: {len(load()[source])} templates -> {CATALOG_DIR / (source + '.tsv')}")
            for line in changed:
                print(f"  {line}")
    if args.refresh_kinds:
        refresh_kinds()
    if args.write_doc:
        DOC.parent.mkdir(exist_ok=True)
        DOC.write_text(document())
    print(table())
    return 0


if __name__ == "__main__":
    sys.exit(main())

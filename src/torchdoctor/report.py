"""`torchdoctor report`: one Markdown page to paste into a GitHub issue, so that others can reproduce.

What goes in: versions (Python, torch, CUDA, cuDNN, NCCL, driver, OS, kernel), the GPUs, related packages (read
from their metadata, never imported), the `torchdoctor check` findings, and the environment variables on an
allowlist. What never goes in: any other variable, the value of an allowed one whose name looks secret
(``NCCL_…_TOKEN``), credentials in URLs, token-shaped strings (``hf_…``, ``ghp_…``, ``AKIA…``), and the home
directory (written ``~``).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import re
import sys
from collections.abc import Callable, Iterable, Mapping

from torchdoctor.env.torch_facts import from_torch
from torchdoctor.findings import Finding, render_markdown, worst
from torchdoctor.runner import CommandResult, run_command
from torchdoctor.system import visible_accelerators
from torchdoctor.torch_import import import_torch

RELATED_PACKAGES = (
    "torch",
    "torchvision",
    "torchaudio",
    "triton",
    "numpy",
    "transformers",
    "accelerate",
    "deepspeed",
    "lightning",
    "pytorch-lightning",
    "peft",
    "bitsandbytes",
    "flash-attn",
    "xformers",
    "apex",
    "mpi4py",
    "torchdoctor",
)
# The CUDA libraries pip installs next to torch are named per CUDA major: nvidia-nccl-cu12, nvidia-cudnn-cu13…
NVIDIA_WHEEL_PREFIXES = ("nvidia-nccl-", "nvidia-cudnn-", "nvidia-cuda-runtime-")

# Variables that change how torch, CUDA, NCCL and the launchers behave; nothing else is ever printed.
ALLOWED_PREFIXES = (
    "CUDA_",
    "NCCL_",
    "TORCH_",
    "TORCHDOCTOR_",
    "TORCHELASTIC_",
    "TORCHINDUCTOR_",
    "PYTORCH_",
    "CUDNN_",
    "NVIDIA_",
    "GLOO_",
    "ACCELERATE_",
    "DS_BUILD_",
    "HIP_",
    "ROCM_",
    "OMPI_COMM_WORLD_",
    "OMPI_MCA_",
)
ALLOWED_NAMES = frozenset(
    {
        "MASTER_ADDR",
        "MASTER_PORT",
        "WORLD_SIZE",
        "RANK",
        "LOCAL_RANK",
        "LOCAL_WORLD_SIZE",
        "GROUP_RANK",
        "NODE_RANK",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "MAX_JOBS",
        "CC",
        "CXX",
        "CUDAHOSTCXX",
        "PATH",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
        "VIRTUAL_ENV",
        "SLURM_PROCID",
        "SLURM_NTASKS",
        "SLURM_LOCALID",
        "SLURM_NNODES",
        "SLURM_NTASKS_PER_NODE",
        "SLURM_GPUS_ON_NODE",
        "SLURM_JOB_NUM_NODES",
        "PMI_RANK",
        "PMI_SIZE",
        "MPI_LOCALRANKID",
        "MPI_LOCALNRANKS",
    }
)
# An allowed name with one of these words in it keeps its name but not its value.
SECRET_WORDS = re.compile(
    r"TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|PRIVATE|AUTH|COOKIE|(^|_)(API_?)?KEYS?($|_)"
)
# Strings that are credentials wherever they appear.
SECRET_VALUES = (
    (
        re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@", re.I),
        r"\1<redacted>@",
    ),  # https://user:pw@host
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), "<redacted>"),  # Hugging Face
    (re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})"), "<redacted>"),  # GitHub
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), "<redacted>"),  # AWS access key id
    (re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"), "<redacted>"),  # OpenAI-style
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), "<redacted>"),  # Slack
)


def scrub(text: str, home: str | None = None) -> str:
    """``text`` with credentials replaced by ``<redacted>`` and the home directory by ``~``.

    >>> scrub("https://me:hunter2@mirror.example/simple", home="/home/me")
    'https://<redacted>@mirror.example/simple'
    """
    for pattern, replacement in SECRET_VALUES:
        text = pattern.sub(replacement, text)
    home = os.path.expanduser("~") if home is None else home
    if home and home not in ("/", "~"):
        text = re.sub(re.escape(home.rstrip("/")) + r"(?![\w.-])", "~", text)
    return text


def is_allowed(name: str) -> bool:
    """Whether the variable ``name`` may appear in a report (its value may still be redacted)."""
    return name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)


def relevant_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allowlisted variables of ``environ``, sorted, secret-looking names' values redacted."""
    environ = os.environ if environ is None else environ
    shown = {}
    for name in sorted(environ):
        if is_allowed(name):
            shown[name] = "<redacted>" if SECRET_WORDS.search(name) else environ[name]
    return shown


def package_versions(
    names: Iterable[str] = RELATED_PACKAGES,
    installed: Iterable[tuple[str, str]] | None = None,
) -> dict[str, str | None]:
    """``{distribution: version or None}`` from installed metadata; nothing is imported.

    ``installed`` (``(name, version)`` pairs) defaults to every distribution on ``sys.path``.
    """
    if installed is None:
        installed = [(d.metadata["Name"] or "", d.version) for d in importlib.metadata.distributions()]
    by_name = {_normal(name): version for name, version in installed}
    found: dict[str, str | None] = {name: by_name.get(_normal(name)) for name in names}
    for name, version in sorted(installed):
        if name.lower().startswith(NVIDIA_WHEEL_PREFIXES):
            found[name] = version
    return found


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _first_line(result: CommandResult) -> str | None:
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()] if result.ok else []
    return lines[0] if lines else None


def versions(run: Callable[..., CommandResult] = run_command) -> dict[str, str]:
    """Python, torch, its CUDA/cuDNN/NCCL, the driver, nvcc, the OS and the kernel, as display strings."""
    found = {"torchdoctor": _torchdoctor_version()}
    found["Python"] = f"{platform.python_version()} ({platform.python_implementation()}, {sys.executable})"
    failure = import_torch()
    if failure is not None:
        found["torch"] = f"{from_torch().version}, but import torch fails: {failure}"
    else:
        import torch

        found["torch"] = torch.__version__
        hip = getattr(torch.version, "hip", None)
        found["CUDA (torch built with)"] = torch.version.cuda or "none (CPU build)"
        if hip:
            found["ROCm (torch built with)"] = hip
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        found["cuDNN"] = _dotted(cudnn) if cudnn else "not available"
        found["NCCL"] = _nccl_version(torch)
    driver = _first_line(
        run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], timeout=20)
    )
    found["NVIDIA driver"] = driver or "no nvidia-smi answer"
    nvcc = run(["nvcc", "--version"], timeout=20)
    release = re.search(r"release ([\d.]+)", nvcc.stdout) if nvcc.ok else None
    found["nvcc (CUDA toolkit on PATH)"] = release.group(1) if release else "not on PATH"
    found["OS"] = _os_name()
    found["kernel"] = platform.release()
    found["CPU"] = f"{platform.machine()}, {os.cpu_count()} logical cores"
    return found


def _torchdoctor_version() -> str:
    from torchdoctor import __version__

    return __version__


def _dotted(cudnn: int) -> str:
    # cuDNN 9 reports 90100 for 9.1.0; cuDNN 8 reports 8902 for 8.9.2.
    major, rest = (cudnn // 10000, cudnn % 10000) if cudnn >= 90000 else (cudnn // 1000, cudnn % 1000)
    return f"{major}.{rest // 100}.{rest % 100}"


def _nccl_version(torch) -> str:
    if not torch.distributed.is_available() or not torch.distributed.is_nccl_available():
        return "not in this torch build"
    try:
        version = torch.cuda.nccl.version()
    except (AttributeError, RuntimeError) as error:
        return f"unknown ({error})"
    return ".".join(str(part) for part in version) if isinstance(version, tuple) else str(version)


def _os_name() -> str:
    if sys.platform == "linux":
        try:
            return platform.freedesktop_os_release().get("PRETTY_NAME", "Linux")
        except OSError:
            return "Linux"
    if sys.platform == "darwin":
        return f"macOS {platform.mac_ver()[0]}"
    return platform.platform()


def gpus() -> list[str]:
    """One line per GPU torch sees: index, name, compute capability, memory."""
    failure = import_torch()
    if failure is not None:
        return [f"cannot ask torch: import torch fails ({failure})"]
    seen = visible_accelerators()
    lines = [
        f"{g['index']}: {g['name']} (compute capability {g['capability']}, {g['memory_gib']} GiB)"
        for g in seen["cuda"]
    ]
    if seen.get("mps"):
        lines.append("Apple MPS")
    if seen.get("xpu"):
        lines.append(f"{seen['xpu']} Intel XPU device(s)")
    return lines


def render_report(
    found_versions: Mapping[str, str],
    gpu_lines: list[str],
    packages: Mapping[str, str | None],
    findings: list[Finding],
    environment: Mapping[str, str],
    home: str | None = None,
) -> str:
    """The Markdown page from facts already gathered; everything in it goes through `scrub`."""
    lines = ["## Environment (from `torchdoctor report`)", "", "| | |", "|---|---|"]
    lines += [f"| {key} | {_cell(value)} |" for key, value in found_versions.items()]
    lines += ["", "### GPUs", ""]
    lines += [f"- {line}" for line in gpu_lines] or ["none visible to torch"]
    lines += ["", "### Related packages", "", "| package | version |", "|---|---|"]
    lines += [f"| {name} | {version or 'not installed'} |" for name, version in packages.items()]
    lines += ["", "### `torchdoctor check`", ""]
    lines += [render_markdown(findings).rstrip("\n")] if findings else ["(no checks run)"]
    allowed = ", ".join(f"`{p}*`" for p in ALLOWED_PREFIXES[:6])
    lines += ["", f"<details><summary>Environment variables (allowlist only: {allowed}, … )</summary>", ""]
    lines += ["```"] + [f"{name}={value}" for name, value in environment.items()] + ["```", "", "</details>"]
    return scrub("\n".join(lines) + "\n", home)


def _cell(value: str) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def make_report(
    findings: list[Finding],
    environ: Mapping[str, str] | None = None,
    run: Callable[..., CommandResult] = run_command,
) -> str:
    """The whole report for this machine, with ``findings`` (from `torchdoctor.checks.run_checks`) in it."""
    return render_report(versions(run), gpus(), package_versions(), findings, relevant_environment(environ))


def make_report_json(
    findings: list[Finding],
    environ: Mapping[str, str] | None = None,
    run: Callable[..., CommandResult] = run_command,
    home: str | None = None,
) -> str:
    """The facts of `make_report` as JSON (versions, GPUs, packages, findings, environment), scrubbed alike."""
    data = {
        "versions": versions(run),
        "gpus": gpus(),
        "packages": package_versions(),
        "status": worst(findings),
        "findings": [f.to_dict() for f in findings],
        "environment": relevant_environment(environ),
    }
    # scrubbed as text: a secret or the home folder may sit anywhere, in a key or deep in a finding's details
    return scrub(json.dumps(data, indent=2, default=str), home) + "\n"

"""``sys.*`` checks: the Python, the torch build and the accelerators this process can see."""

from __future__ import annotations

import os
import platform
import re
import shlex
import sys

from packaging.version import Version

from torchdoctor.checks import verdict_of
from torchdoctor.findings import Finding
from torchdoctor.torch_import import blamed_variables, fix_for, import_torch, import_traceback

AREA = "sys"
MIN_TORCH = Version("2.4")  # the oldest tried (benchmarks/compat.py; the README's table)


def torch_build(version: str, cuda: str | None, hip: str | None) -> str:
    """``"CUDA 12.8"``, ``"ROCm 6.2"`` or ``"CPU"``: what a torch build was compiled for."""
    if hip:
        return f"ROCm {hip}"
    if cuda:
        return f"CUDA {cuda}"
    return "CPU"


def check_python(version_info=sys.version_info, executable: str = sys.executable) -> Finding:
    """Python 3.10 or newer, as torchdoctor itself needs; older is a failure."""
    verdict = verdict_of(check_python)
    version = ".".join(str(part) for part in version_info[:3])
    details = {
        "version": version,
        "executable": executable,
        "implementation": platform.python_implementation(),
    }
    if tuple(version_info[:2]) < (3, 10):
        return verdict(
            "fail",
            f"Python {version} is too old: torchdoctor needs 3.10 or newer",
            details,
            "Install Python 3.10 or newer and recreate the virtual environment.",
        )
    return verdict("ok", f"Python {version} ({executable})", details)


def check_torch(version: str | None = None, cuda: str | None = None, hip: str | None = None) -> Finding:
    """The installed torch: its version (2.4 or newer) and what it was built for (CPU, CUDA, ROCm)."""
    verdict = verdict_of(check_torch)
    if version is None:
        failure = import_torch()
        if failure is not None:
            return _torch_import_failed(failure)
        import torch

        version, cuda, hip = torch.__version__, torch.version.cuda, getattr(torch.version, "hip", None)
    build = torch_build(version, cuda, hip)
    details = {"version": version, "build": build, "cuda": cuda, "hip": hip}
    if Version(Version(version).base_version) < MIN_TORCH:
        return verdict(
            "fail",
            f"torch {version} is older than {MIN_TORCH}, the oldest torchdoctor supports",
            details,
            f"pip install --upgrade 'torch>={MIN_TORCH}'",
        )
    return verdict("ok", f"torch {version} ({build} build)", details)


def _torch_import_failed(failure: str) -> Finding:
    """``import torch`` failed: name the variable to blame when one is, with its fix."""
    verdict = verdict_of(check_torch)
    if failure.startswith("ModuleNotFoundError: No module named 'torch'"):
        hidden = user_site_copy("torch")
        if hidden:
            return verdict(
                "fail",
                f"torch is installed only in the user site ({_home(hidden)}), which PYTHONNOUSERSITE="
                f"{os.environ.get('PYTHONNOUSERSITE', '')!r} (or python -s) hides",
                {"error": failure, "user_site_copy": hidden},
                "unset PYTHONNOUSERSITE   # or install torch here: python -m pip install torch",
            )
        return verdict(
            "fail",
            "torch is not installed",
            {"error": failure},
            "pip install torch  (https://pytorch.org/get-started/locally/ picks the right build)",
        )
    if "not the installed torch" in failure:
        return verdict(
            "fail",
            f"{failure.split(': ', 1)[1]}; the checks that need torch are skipped",
            {"error": failure},
            "rename that file or folder (sys.shadowed_modules gives the command)",
        )
    trace = import_traceback()
    blamed = blamed_variables(failure, trace)
    because = f" because of {', '.join(f'{n}={os.environ[n]!r}' for n in blamed)}" if blamed else ""
    return verdict(
        "fail",
        f"import torch fails{because}: {failure.rstrip('.:')}; the checks that need torch are skipped",
        {"error": failure, "variables": {n: os.environ[n] for n in blamed}, "traceback": trace},
        fix_for(blamed),
    )


def user_site_copy(
    name: str, environ=None, user_site: str | None = None, flags=sys.flags, prefix: str = sys.prefix
) -> str | None:
    """The copy of ``name`` in the user site (``pip install --user``) that ``PYTHONNOUSERSITE``/``python -s``
    keeps off the path, where the user site would otherwise be read (not in an isolated venv)."""
    import site

    environ = os.environ if environ is None else environ
    if not (flags.no_user_site or environ.get("PYTHONNOUSERSITE")) or _isolated_venv(prefix):
        return None
    user_site = site.getusersitepackages() if user_site is None else user_site
    for candidate in (os.path.join(user_site, name), os.path.join(user_site, f"{name}.py")):
        if os.path.exists(candidate):
            return candidate
    return None


def _isolated_venv(prefix: str = sys.prefix) -> bool:
    """A virtual environment made without ``--system-site-packages``: it never reads the user site."""
    try:
        with open(os.path.join(prefix, "pyvenv.cfg"), encoding="utf-8") as file:
            text = file.read().lower().replace(" ", "")
    except OSError:
        return False
    return "include-system-site-packages=false" in text


def visible_accelerators() -> dict:
    """What this process can see: CUDA/ROCm devices with names and capabilities, MPS, XPU."""
    import torch

    seen: dict = {"cuda": [], "mps": False, "xpu": 0}
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            seen["cuda"].append(
                {
                    "index": index,
                    "name": props.name,
                    "capability": f"{props.major}.{props.minor}",
                    "memory_gib": round(props.total_memory / 2**30, 1),
                }
            )
    mps = getattr(torch.backends, "mps", None)
    seen["mps"] = bool(mps and mps.is_available())
    xpu = getattr(torch, "xpu", None)
    seen["xpu"] = xpu.device_count() if xpu is not None and xpu.is_available() else 0
    return seen


def check_accelerators(
    seen: dict | None = None, build: str | None = None, environ=None, listed=None, driver: str | None = None
) -> Finding:
    """Which GPUs this process sees; a CUDA/ROCm build that sees none, or a CPU build where nvidia-smi lists
    GPUs, is a warning with the likely cause."""
    verdict = verdict_of(check_accelerators)
    import os

    environ = os.environ if environ is None else environ
    if seen is None:
        import torch

        seen = visible_accelerators()
        build = torch_build(torch.__version__, torch.version.cuda, getattr(torch.version, "hip", None))
    gpus = seen.get("cuda", [])
    if gpus:
        names = ", ".join(f"{g['index']}: {g['name']} (sm_{g['capability'].replace('.', '')})" for g in gpus)
        return verdict("ok", f"{len(gpus)} GPU(s) visible — {names}", seen)
    if seen.get("mps"):
        return verdict("ok", "Apple MPS device visible", seen)
    if seen.get("xpu"):
        return verdict("ok", f"{seen['xpu']} Intel XPU device(s) visible", seen)
    if build and build != "CPU":
        hidden = environ.get("CUDA_VISIBLE_DEVICES")
        if hidden is not None and hidden.strip() in ("", "-1"):
            fix = f"CUDA_VISIBLE_DEVICES={hidden!r} hides every GPU: unset it or list the GPUs to use."
        else:
            fix = "Run `nvidia-smi` (or `rocm-smi`): if it fails, the driver is missing or not loaded."
        return verdict(
            "warn",
            f"torch is a {build} build but sees no GPU",
            seen | {"build": build},
            fix,
        )
    if build == "CPU":
        from torchdoctor.env.driver import driver_version, gpus_from_nvidia_smi
        from torchdoctor.env.wheels import cuda_torch_install

        if listed is None:
            listed = gpus_from_nvidia_smi(environ=environ)
            driver = driver_version(environ=environ)[0] if listed else None
        if listed:
            names = ", ".join(dict.fromkeys(name for name, _ in listed))
            return verdict(
                "warn",
                f"torch is a CPU build, but nvidia-smi lists {len(listed)} GPU(s) ({names}): the run uses "
                "the CPU only",
                seen | {"build": build, "nvidia_smi": [list(gpu) for gpu in listed], "driver": driver},
                cuda_torch_install(driver),
            )
    return verdict("ok", "no GPU visible; CPU build of torch (communication tests use gloo)", seen)


# What a run imports as its training stack: one of these taken from the wrong copy fails the run.
STACK_MODULES = (
    "torch",
    "torchvision",
    "torchaudio",
    "transformers",
    "accelerate",
    "datasets",
    "deepspeed",
    "lightning",
    "pytorch_lightning",
    "numpy",
    "triton",
    "safetensors",
    "peft",
)


def check_shadowed_modules(shadows=None) -> Finding:
    """A file or folder of yours, a ``PYTHONPATH`` entry or a ``pip install --user`` copy that ``import`` takes
    before the installed package (``./torch.py``, ``transformers/`` on ``PYTHONPATH``): the run imports that,
    not what ``pip list`` shows."""
    verdict = verdict_of(check_shadowed_modules)
    from torchdoctor.shadowing import shadows as find_shadows

    found = find_shadows() if shadows is None else shadows
    if not found:
        return verdict(
            "ok", "import takes every installed package from the environment (no local copy first)"
        )
    stack = [s for s in found if s.name in STACK_MODULES]
    said = "; ".join(
        f"{_home(s.found)} ({s.where}) hides the installed {s.name} ({_home(s.installed)})" for s in found
    )
    return verdict(
        "fail" if stack else "warn",
        f"{said}: a script run here imports that copy instead",
        {"shadows": [vars(s) for s in found]},
        "\n".join(dict.fromkeys(_unshadow(s) for s in found)),
    )


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home not in ("", "/") and path.startswith(home + os.sep) else path


def _in_shell(path: str) -> str:
    """``path`` (as `_home` shows it) as one word of a shell command: quoted where it holds a space or another
    character the shell reads (``rm -rf ~/my envs/...`` would remove ``~/my``), its ``~/`` left outside the quotes
    for the shell to expand."""
    shown = _home(path)
    head, rest = ("~/", shown[2:]) if shown.startswith("~/") else ("", shown)
    return head + (shlex.quote(rest) if re.search(r"[^\w@%+=:,./~-]", rest) else rest)


def _unshadow(shadow) -> str:
    """The command that makes ``import`` take the installed copy again."""
    found = _in_shell(shadow.found)
    if shadow.where == "this folder":
        folder, base = os.path.split(shadow.found)
        if base.endswith(".pyc"):
            return f"rm {found}   # compiled code with no source left: a leftover"
        return f"mv {found} {_in_shell(os.path.join(folder, 'my_' + base))}   # and import it under that name"
    if shadow.where == "PYTHONPATH":
        kept = [
            p
            for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and os.path.realpath(p) != shadow.entry
        ]
        return f"export PYTHONPATH={os.pathsep.join(kept)}" if kept else "unset PYTHONPATH"
    if shadow.where.startswith("the user site"):
        import importlib.metadata

        dist = (importlib.metadata.packages_distributions().get(shadow.name) or [shadow.name])[0]
        # a venv's pip refuses a copy outside it ("Not uninstalling ... outside environment"): the base python's
        python = (
            "python" if sys.prefix == sys.base_prefix else os.path.join(sys.base_prefix, "bin", "python3")
        )
        return (
            f"{python} -m pip uninstall {dist}   # removes the copy in the user site, first on the path; "
            "or: export PYTHONNOUSERSITE=1"
        )
    pth = _pth_adding(shadow.entry)
    if pth:
        return (
            f"rm {_in_shell(pth)}   # it puts {_home(shadow.entry)} on sys.path before the installed packages"
        )
    return f"python -c 'import sys; print(sys.path)'   # {shadow.entry} comes first: remove the .pth file or code adding it"


def _pth_adding(entry: str, folders=None) -> str | None:
    """The ``.pth`` file in site-packages (or the user site) that names ``entry``, if one does."""
    import glob
    import site

    folders = site.getsitepackages() + [site.getusersitepackages()] if folders is None else folders
    for folder in folders:
        for pth in sorted(glob.glob(os.path.join(glob.escape(folder), "*.pth"))):
            try:
                with open(pth, encoding="utf-8", errors="replace") as file:
                    if entry in file.read(65536):
                        return pth
            except OSError:
                continue
    return None


# Commands that install into, or start, the environment of the interpreter their first line names.
PYTHON_COMMANDS: dict[str, str | None] = {
    "pip": "python -m pip",
    "pip3": "python -m pip",
    "torchrun": "python -m torch.distributed.run",
    "accelerate": "python -m accelerate.commands.accelerate_cli",
    "deepspeed": None,  # its launcher is a plain script: no module form
}


def check_python_commands(environ=None, executable: str = sys.executable) -> Finding:
    """``pip``, ``torchrun``, ``accelerate`` or ``deepspeed`` on ``PATH`` from another environment than ``python``
    on ``PATH``: ``pip install`` goes where ``python`` does not look, ``torchrun`` starts another torch."""
    verdict = verdict_of(check_python_commands)
    import shutil

    environ = os.environ if environ is None else environ
    path = environ.get("PATH", "")
    python = shutil.which("python", path=path) or shutil.which("python3", path=path) or executable
    home = _environment_of(python)
    details: dict = {"python": python, "environment": home, "commands": {}}
    other = {}
    for command, module_form in PYTHON_COMMANDS.items():
        found = shutil.which(command, path=path)
        interpreter = _interpreter_of(found) if found else None
        if interpreter is None:
            continue
        details["commands"][command] = {"path": found, "python": interpreter}
        if _environment_of(interpreter) != home:
            other[command] = (found, interpreter, module_form)
    if not other:
        checked = ", ".join(details["commands"]) or "no pip, torchrun or accelerate script on PATH"
        return verdict("ok", f"python on PATH is {python}; {checked}: none from another environment", details)
    said = "; ".join(
        f"{command} on PATH ({found}) runs {python_of}" for command, (found, python_of, _) in other.items()
    )
    return verdict(
        "warn",
        f"{said}, not python on PATH ({python}): it installs into or starts another environment",
        details,
        "\n".join(
            _same_environment(command, python_of, form) for command, (_, python_of, form) in other.items()
        ),
    )


def _same_environment(command: str, interpreter: str, module_form: str | None) -> str:
    """Run the command with the python on PATH, or switch to the environment the command comes from."""
    activate = os.path.join(os.path.dirname(interpreter), "activate")
    switch = f"source {activate}" if os.path.isfile(activate) else f"use {interpreter} for the run"
    if module_form is None:
        return f"{switch}   # the environment {command} comes from; or pip install {command} for the python on PATH"
    return f"{module_form} ...   # instead of {command}: the python on PATH; or: {switch}"


# pip's launcher for an interpreter path too long for #!, or holding a space: /bin/sh, then this line, the path
# in double quotes where it holds a space (distlib's ScriptMaker, enquote_executable)
_SH_EXEC = "'''exec' "


def _interpreter_of(script: str) -> str | None:
    """The interpreter a pip-made script starts: its ``#!`` line, or the ``exec`` line of the ``/bin/sh`` form
    pip writes for paths too long for ``#!``; ``None`` for ``#!/usr/bin/env python`` (whatever is on PATH)."""
    try:
        with open(script, "rb") as file:
            head = file.read(1024).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    if not head or not head[0].startswith("#!"):
        return None
    words = head[0][2:].split()
    if words and words[0] == "/bin/sh" and len(head) > 1 and head[1].startswith(_SH_EXEC):
        try:
            words = shlex.split(head[1][len(_SH_EXEC) :])[:1]
        except ValueError:  # an unclosed quote: not pip's launcher
            return None
    if not words or "python" not in os.path.basename(words[0]):
        return None  # #!/usr/bin/env python: the python on PATH; or not a Python script
    return words[0]


def _environment_of(interpreter: str) -> str:
    """The environment an interpreter belongs to: the virtual environment around ``bin/python`` (its
    ``pyvenv.cfg``), else the interpreter itself with its links resolved."""
    prefix = os.path.dirname(os.path.dirname(os.path.abspath(interpreter)))
    if os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
        return os.path.realpath(prefix)
    return os.path.realpath(interpreter)


def check_python_warnings(environ=None) -> Finding | None:
    """``PYTHONWARNINGS`` with an ``error`` filter for every module: any warning torch or a library gives (a
    DataLoader with more workers than CPUs, a deprecation) stops the run, raised as an exception."""
    verdict = verdict_of(check_python_warnings)
    environ = os.environ if environ is None else environ
    value = environ.get("PYTHONWARNINGS", "")
    entries = [entry.strip() for entry in value.split(",") if entry.strip()]
    # the last filter wins: an error filter that a later one for every warning overrides does nothing
    every = [
        entry
        for index, entry in enumerate(entries)
        if _raises_everywhere(entry) and not any(_overrides(later, entry) for later in entries[index + 1 :])
    ]
    if not every:
        return None  # unset, or no filter that turns libraries' warnings into errors: nothing to say
    fields = (every[-1].split(":") + ["", "", "", ""])[:4]
    category = fields[2].strip() or "warning"
    mine = ":".join(["error", "", fields[2].strip(), "__main__"])
    return verdict(
        "warn",
        f"PYTHONWARNINGS={value!r}: {every[-1]!r} turns every {category} of every module into an exception, so "
        f"a {category} torch or a library gives (a DataLoader with more workers than CPUs, a deprecation) stops "
        "the run",
        {"value": value, "error_filters": every},
        f"export PYTHONWARNINGS={mine}   # only your script's own; or: unset PYTHONWARNINGS",
    )


def _overrides(later: str, entry: str) -> bool:
    """Whether filter ``later`` takes every warning ``entry`` covers (it comes after it, so it wins): no message,
    no module, and no category or the same one (``default``, ``ignore::DeprecationWarning``, ...)."""
    fields = ([field.strip() for field in later.split(":")] + ["", "", ""])[:4]
    category = ([field.strip() for field in entry.split(":")] + ["", "", ""])[2]
    return not fields[1] and not fields[3] and fields[2] in ("", category)


def _raises_everywhere(entry: str) -> bool:
    """A ``-W``/``PYTHONWARNINGS`` filter (``action:message:category:module:lineno``) whose action is ``error``
    (any prefix of it, as Python reads it) and that names no module and no message: it applies to every warning
    of its category, libraries' too (``error:some text`` raises only on a warning that starts so)."""
    fields = ([field.strip() for field in entry.split(":")] + ["", "", ""])[:4]
    action = fields[0].lower()
    return bool(action) and "error".startswith(action) and not fields[1] and not fields[3]


MIN_KERNEL = (5, 5)


def check_kernel(release: str | None = None, system: str | None = None) -> Finding:
    """Linux kernels older than 5.5 are known to make multi-process runs hang; upgrading is the fix.

    >>> check_kernel("5.4.0-42-generic", "Linux").status
    'warn'
    """
    verdict = verdict_of(check_kernel)
    import re

    release = platform.release() if release is None else release
    system = platform.system() if system is None else system
    details = {"system": system, "release": release}
    if system != "Linux":
        return verdict("skip", f"not Linux ({system} {release}): no kernel check", details)
    match = re.match(r"(\d+)\.(\d+)", release)
    if match is None:
        return verdict("skip", f"Linux kernel release {release!r} has no version number", details)
    version = (int(match[1]), int(match[2]))
    if version < MIN_KERNEL:
        return verdict(
            "warn",
            f"Linux kernel {release} is older than 5.5: multi-process runs are known to hang on it",
            details,
            "Upgrade the kernel to 5.5 or newer and reboot (in a container, upgrade the host: the kernel "
            "is the host's).\nUbuntu 20.04: sudo apt install --install-recommends linux-generic-hwe-20.04",
        )
    return verdict("ok", f"Linux kernel {release}", details)


# DataLoader workers hand every batch over through /dev/shm, and NCCL's intra-node transport keeps its
# buffers there; docker's default of 64 MiB fails with "Bus error" or NCCL "unhandled system error" as
# soon as a few batches are in flight. 1 GiB is enough for typical set-ups (a few workers, 8 GPUs).
MIN_SHM_BYTES = 2**30


def check_shm(
    size_bytes: int | None = None, free_bytes: int | None = None, path: str = "/dev/shm"
) -> Finding:
    """``/dev/shm`` (shared memory for DataLoader workers and NCCL) smaller than 1 GiB, or with less than
    1 GiB free, is a warning."""
    verdict = verdict_of(check_shm)
    import os
    import shutil

    if size_bytes is None:
        if not os.path.isdir(path):
            if platform.system() != "Linux":
                return verdict("skip", f"no {path} on {platform.system()}", {"path": path})
            return verdict(
                "warn",
                f"{path} does not exist: DataLoader workers and NCCL cannot share memory",
                {"path": path},
                f"sudo mkdir -p {path} && sudo mount -t tmpfs -o size=8G tmpfs {path}",
            )
        usage = shutil.disk_usage(path)
        size_bytes, free_bytes = usage.total, usage.free
    details = {"path": path, "size_bytes": size_bytes, "free_bytes": free_bytes}
    size, free = _gib(size_bytes), _gib(free_bytes) if free_bytes is not None else None
    free_text = f", {free} free" if free is not None else ""
    if size_bytes < MIN_SHM_BYTES:
        return verdict(
            "warn",
            f"{path} is only {size}{free_text}: DataLoader workers and NCCL need at least 1 GiB "
            "(docker's default is 64 MiB)",
            details,
            "docker run --shm-size=8g ...   (or --ipc=host)\n"
            f"outside a container: sudo mount -o remount,size=8G {path}",
        )
    if free_bytes is not None and free_bytes < MIN_SHM_BYTES:
        return verdict(
            "warn",
            f"{path} is {size} but only {free} is free: something fills it (files crashed runs left behind?)",
            details,
            f"du -sh {path}/* | sort -h | tail   # then remove what no running job uses",
        )
    return verdict("ok", f"{path} is {size}{free_text}", details)


def _gib(size: int) -> str:
    return f"{size / 2**30:.1f} GiB" if size >= 2**30 else f"{size / 2**20:.0f} MiB"


# Under this many open files a DataLoader with workers (each batch's tensors are passed as file descriptors) or
# NCCL's sockets on many ranks reach EMFILE: "Too many open files". 1024 is the usual login shell's soft limit.
MIN_OPEN_FILES = 1024


def check_open_files(limits: tuple[int, int] | None = None) -> Finding:
    """The soft limit on open files (``ulimit -n``) under 1024 is a warning: DataLoader workers and NCCL's
    sockets run out ("Too many open files")."""
    verdict = verdict_of(check_open_files)
    if limits is None:
        try:
            import resource
        except ImportError:  # not on Windows
            return verdict("skip", f"no limit on open files to read on {platform.system()}")
        limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    soft, hard = (-1 if n == _unlimited() else n for n in limits)
    details = {"soft": soft, "hard": hard}
    shown = "unlimited" if hard < 0 else str(hard)
    if 0 <= soft < MIN_OPEN_FILES:
        if hard < 0 or hard >= MIN_OPEN_FILES:
            fix = 'ulimit -n "$(ulimit -Hn)"   # in the shell (or job script) that starts the run'
        else:
            fix = (
                f"the hard limit is {hard} too: raise nofile in /etc/security/limits.conf (or docker run "
                "--ulimit nofile=65536:65536), log in again, then: ulimit -n 65536"
            )
        return verdict(
            "warn",
            f"open files limit (ulimit -n) is {soft}, hard {shown}: DataLoader workers and NCCL's sockets "
            f"need more ('Too many open files'); {MIN_OPEN_FILES} at least",
            details,
            fix,
        )
    current = "unlimited" if soft < 0 else str(soft)
    return verdict("ok", f"open files limit (ulimit -n) is {current}, hard {shown}", details)


def _unlimited() -> int:
    try:
        import resource
    except ImportError:
        return -1
    return resource.RLIM_INFINITY


# Thread-count variables the OpenMP runtime (torch's intra-op threads) and the BLAS libraries read: a value
# that is not a whole number above 0 is ignored ("libgomp: Invalid value for environment variable
# OMP_NUM_THREADS") and every process then takes every core.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def check_threads(environ=None) -> Finding | None:
    """``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` set to something other than a whole number above 0: OpenMP
    ignores it and each process uses every core."""
    verdict = verdict_of(check_threads)
    environ = os.environ if environ is None else environ
    wrong = {
        name: environ[name]
        for name in THREAD_VARIABLES
        if name in environ and not (environ[name].strip().isdigit() and int(environ[name]) > 0)
    }
    if not wrong:
        return None  # unset or valid: nothing to say
    said = ", ".join(f"{name}={value!r}" for name, value in wrong.items())
    return verdict(
        "warn",
        f"{said}: not a whole number above 0; OpenMP ignores it and each process takes every core "
        "(torchrun's default is 1 thread per process)",
        wrong,
        "\n".join(
            f"export {name}=1   # or the cores per process: nproc / processes per node" for name in wrong
        ),
    )


# The packages of a training run whose pins matter most: a conflict naming one of them fails the check.
TRAINING_STACK = (
    "torch",
    "torchvision",
    "torchaudio",
    "accelerate",
    "transformers",
    "deepspeed",
    "lightning",
)


def check_packages(packages: dict | None = None) -> Finding:
    """What ``pip check`` says: an installed package whose stated requirement the installed versions break (a
    torchvision from another torch release, a transformers too new for this torch); one of torch, torchvision,
    torchaudio, accelerate, transformers, DeepSpeed or Lightning in it fails."""
    verdict = verdict_of(check_packages)
    from torchdoctor.package_conflicts import conflicts, installed

    packages = installed() if packages is None else packages
    broken = conflicts(packages)
    if not broken:
        return verdict(
            "ok", f"{len(packages)} installed packages: every stated requirement is met (pip check)"
        )
    stack = [c for c in broken if {c.package, c.required} & set(TRAINING_STACK)]
    shown = stack or broken
    more = f" (and {len(broken) - len(shown)} more: pip check)" if len(broken) > len(shown) else ""
    fixes = [
        f'pip install "{c.requirement}"'
        if c.installed is None
        else f"pip install -U {c.package}   # a release made for {c.required} {c.installed}; "
        f'or: pip install "{c.requirement}"'
        for c in shown
    ]
    return verdict(
        "fail" if stack else "warn",
        "; ".join(map(str, shown)) + more,
        {"conflicts": [str(c) for c in broken]},
        "\n".join(dict.fromkeys(fixes)),
    )


def check_package_leftovers(folders=None) -> Finding | None:
    """What a stopped ``pip`` left in site-packages: ``~orch`` folders of a half-done uninstall or upgrade, a
    ``*.dist-info`` with no package name (pip skips it: "Ignoring invalid distribution"), or one pip installed
    without its ``RECORD`` (pip cannot uninstall or upgrade it)."""
    verdict = verdict_of(check_package_leftovers)
    import site

    from torchdoctor.package_conflicts import leftovers, names_a_package

    if folders is None:
        folders = site.getsitepackages() + ([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])
    found = leftovers(folders)
    if not found:
        return None  # nothing left behind: nothing to say
    said, fixes = [], []
    for path in found:
        base, shown = os.path.basename(path), _home(path)
        name, _, version = base.removesuffix(".dist-info").partition("-")
        release = f"'{name}=={version}'" if version else name  # a folder named without its version
        if base.startswith("~"):
            said.append(
                f'{shown} (a half-done uninstall or upgrade: pip skips it, "Ignoring invalid distribution")'
            )
            fixes.append(f"rm -rf {_in_shell(path)}")
        elif names_a_package(path):
            said.append(f"{shown} has no RECORD (pip cannot uninstall or upgrade {name})")
            fixes.append(f"python -m pip install --force-reinstall --no-deps {release}")
        else:
            said.append(f"{shown} names no package (pip skips it)")
            fixes.append(
                f"rm -rf {_in_shell(path)} && python -m pip install --force-reinstall --no-deps {release}"
                "   # pip installs it again over the files left"
            )
    return verdict(
        "warn",
        f"{'; '.join(said)}: left by a pip that stopped half-way; the package may be half installed",
        {"leftovers": found},
        "\n".join(fixes),
    )


def check_visible_devices(environ=None) -> Finding | None:
    """``CUDA_VISIBLE_DEVICES`` with an entry CUDA cannot read (not a GPU index, ``GPU-<uuid>`` or
    ``MIG-<uuid>``): CUDA keeps the GPUs before it and drops it and every one after, so a bad first entry
    hides every GPU; a GPU named twice (``0,0``) hides them all."""
    verdict = verdict_of(check_visible_devices)
    environ = os.environ if environ is None else environ
    value = environ.get("CUDA_VISIBLE_DEVICES")
    if value is None or value.strip() in ("", "-1"):
        return None  # unset, or every GPU hidden on purpose (sys.accelerators says so on a CUDA build)
    entries = [entry.strip() for entry in value.split(",")]
    bad = next((i for i, entry in enumerate(entries) if not _device_entry(entry)), None)
    named = entries if bad is None else entries[:bad]
    repeated = next(
        (entry for i, entry in enumerate(named) if _same_gpu(entry) in map(_same_gpu, named[:i])), None
    )
    if repeated is not None:
        return verdict(
            "fail",
            f"CUDA_VISIBLE_DEVICES={value!r} names GPU {repeated} twice: CUDA (and torch) then see no GPU at all",
            {"value": value, "repeated": repeated, "visible": []},
            f"export CUDA_VISIBLE_DEVICES={','.join(_once(named))}   # each GPU once",
        )
    if bad is None:
        return verdict("ok", f"CUDA_VISIBLE_DEVICES={value}: {len(entries)} GPU(s) named", {"value": value})
    kept = entries[:bad]
    effect = (
        f"only {','.join(kept)} {'stays' if len(kept) == 1 else 'stay'} visible"
        if kept
        else "no GPU is visible"
    )
    return verdict(
        "warn",
        f"CUDA_VISIBLE_DEVICES={value!r}: CUDA cannot read {entries[bad]!r} and drops it and every GPU after it: "
        f"{effect}",
        {"value": value, "unreadable": entries[bad], "visible": kept},
        "export CUDA_VISIBLE_DEVICES=0,1   # GPU indexes or UUIDs from nvidia-smi -L, comma-separated; "
        "or: unset CUDA_VISIBLE_DEVICES",
    )


def _once(entries: list[str]) -> list[str]:
    """``entries`` with each GPU kept where it first appears."""
    kept: dict[str, str] = {}
    for entry in entries:
        kept.setdefault(_same_gpu(entry), entry)
    return list(kept.values())


def _same_gpu(entry: str) -> str:
    """An entry as CUDA compares it: ``00`` and ``0`` are one GPU."""
    return str(int(entry)) if entry.isdigit() else entry


def _device_entry(entry: str) -> bool:
    return entry.isdigit() or (entry.startswith(("GPU-", "MIG-")) and len(entry) > 4)

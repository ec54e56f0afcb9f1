"""Which release of a package installs where, and which CUDA toolkit takes which host compiler and GPU, read from
the released files themselves.

`--build` writes three tables under src/torchdoctor/explain/catalog/:

- ``wheel_tags.tsv``: per release (final releases only) of the packages training environments install
  (`PACKAGES`), from PyPI's JSON API (https://pypi.org/pypi/<name>/json: every release's files, their tags and
  ``requires_python``): the CPython versions it has wheels for (``cp38 cp39 ...``; ``py3`` for a pure-Python or
  abi3 wheel), the platforms (linux_x86_64, linux_aarch64, macos_arm64, macos_x86_64, win_amd64), whether an sdist
  was uploaded, its ``requires_python``, and for torch and torchvision the CUDA its Linux x86-64 wheel on PyPI was
  built with: ``cuda = '12.1'`` in that wheel's torch/version.py (torchvision/version.py), read by HTTP range
  requests (the zip's directory and that one member, never the whole wheel); and for the packages built against
  one torch release (`TORCH_PINNED`), the torch their Linux x86-64 wheel requires (Requires-Dist in its METADATA).
- ``cuda_toolkits.tsv``: per CUDA toolkit release, the newest gcc, the clang bound and the MSVC bound its
  ``crt/host_config.h`` accepts (the ``#if __GNUC__ > N`` before "unsupported GNU version! gcc versions later than N
  are not supported!"), and the GPU architectures its ``ptxas`` names (``sm_NN`` in the binary's strings: the
  newest ones are the GPUs this toolkit first knows; the oldest stay in the strings after nvcc stops accepting
  them, so a drop is not read from here), from NVIDIA's nvidia-cuda-nvcc-cu11 / -cu12 / nvidia-cuda-nvcc wheels
  (CUDA 11.7 to 13.x, the last patch of each minor); and for CUDA 10.2 to 11.6, which have no wheel, the gcc bound
  of torch's own table (torch/utils/cpp_extension.py's ``CUDA_GCC_VERSIONS``, read from the torch wheels cached in
  /tmp/v_wheels by benchmarks/api_history.py: torch 2.x's bound is exclusive, ``(12, 0)`` = gcc 11 at most).
- ``torch_archs.tsv``: per torch minor release, the compute capabilities its extension builder accepts in
  TORCH_CUDA_ARCH_LIST (``supported_arches`` in torch/utils/cpp_extension.py, read from its Linux x86-64 wheel).

Nothing downloaded lands in the repository; each file read is cached in /tmp/v_wheel_tags.

    python benchmarks/wheel_tags.py --build              # query PyPI and write both tables
    python benchmarks/wheel_tags.py                      # rows per package in the committed tables
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import urllib.request
import zipfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urljoin

from packaging.version import InvalidVersion, Version

from torchdoctor.explain.kinds.toolkits import TOOLKITS, TORCH_ARCHS
from torchdoctor.explain.kinds.wheel_tags import TABLE

CACHE = Path("/tmp/v_wheel_tags")
TORCH_WHEELS = Path("/tmp/v_wheels/torch")
PACKAGES = (
    "torch",
    "torchvision",
    "torchaudio",
    "triton",
    "xformers",
    "flash-attn",
    "deepspeed",
    "bitsandbytes",
    "numpy",
    "scipy",
    "transformers",
    "tokenizers",
    "safetensors",
    "accelerate",
    "peft",
    "trl",
    "vllm",
    "onnxruntime",
    "onnxruntime-gpu",
    "mmcv",  # its CUDA wheels are on OpenMMLab's own index: PyPI has the sdist (and a few CPU wheels)
)
# the packages built against one torch release: the torch their wheel's METADATA requires is read
TORCH_PINNED = ("torchvision", "torchaudio", "xformers", "vllm")
# where the CUDA of a Linux wheel is written down
VERSION_FILES = {"torch": "torch/version.py", "torchvision": "torchvision/version.py"}
# NVIDIA's nvcc wheels: the minors read (the last patch of each), the package with ptxas and the one with
# crt/host_config.h (CUDA 13 moved the headers to nvidia-cuda-crt)
NVCC = (
    (("11.7", "11.8"), "nvidia-cuda-nvcc-cu11", "nvidia-cuda-nvcc-cu11"),
    (tuple(f"12.{m}" for m in range(0, 10)), "nvidia-cuda-nvcc-cu12", "nvidia-cuda-nvcc-cu12"),
    (tuple(f"13.{m}" for m in range(0, 6)), "nvidia-cuda-nvcc", "nvidia-cuda-crt"),
)
PLATFORMS = (
    ("linux_x86_64", re.compile(r"linux\w*_x86_64")),
    ("linux_aarch64", re.compile(r"linux\w*_aarch64")),
    ("macos_arm64", re.compile(r"macosx_\w+_(?:arm64|universal2)")),
    ("macos_x86_64", re.compile(r"macosx_\w+_(?:x86_64|intel|universal2?)")),
    ("win_amd64", re.compile(r"win_amd64")),
)


class RemoteFile(io.RawIOBase):
    """A file on an HTTP server read by range requests, so that zipfile reads one member of a large wheel."""

    def __init__(self, url: str) -> None:
        self.url, self.pos = url, 0
        head = urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=60)
        self.size = int(head.headers["Content-Length"])

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = (0, self.pos, self.size)[whence] + offset
        return self.pos

    def read(self, size: int = -1) -> bytes:
        end = self.size if size < 0 else min(self.size, self.pos + size)
        if end <= self.pos:
            return b""
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{end - 1}"})
        data = urllib.request.urlopen(request, timeout=300).read()
        self.pos += len(data)
        return data


def project(name: str) -> tuple[str, dict]:
    """(the JSON's address, PyPI's JSON for ``name``), cached."""
    url = f"https://pypi.org/pypi/{name}/json"
    path = CACHE / f"{name}.json"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_bytes(urllib.request.urlopen(url, timeout=120).read())
    return url, json.loads(path.read_text())


def member(base: str, file: dict, suffix: str) -> bytes:
    """The member of a wheel on the index whose name ends with ``suffix``, by range requests, cached."""
    path = CACHE / "members" / file["filename"] / suffix.replace("/", "_")
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(RemoteFile(urljoin(base, file["url"]))) as wheel:
            name = next(
                n for n in wheel.namelist() if n == suffix or n.endswith(("/" + suffix, "." + suffix))
            )
            path.write_bytes(wheel.read(name))
    return path.read_bytes()


def final(version: str) -> Version | None:
    try:
        parsed = Version(version)
    except InvalidVersion:
        return None
    return None if parsed.is_prerelease or parsed.is_devrelease else parsed


def python_tags(files: list[dict]) -> list[str]:
    """cpXY for every CPython a wheel is built for; py3 for one any Python 3 takes (pure or abi3)."""
    tags = set()
    for file in files:
        if file["packagetype"] != "bdist_wheel":
            continue
        parts = file["filename"][:-4].split("-")
        python, abi = parts[-3], parts[-2]
        for tag in python.split("."):
            if re.fullmatch(r"cp\d+t", abi):
                continue  # a free-threaded build only: not the CPython users run
            if tag.startswith("cp") and abi != "abi3":
                tags.add(tag)
            elif tag.startswith(("py3", "py2.py3")) or abi == "abi3":
                tags.add("py3")
    return sorted(tags, key=lambda tag: (tag != "py3", len(tag), tag))


def platforms(files: list[dict]) -> list[str]:
    names = [file["filename"] for file in files if file["packagetype"] == "bdist_wheel"]
    if any(name.endswith("-any.whl") for name in names):
        return ["any"]
    return [platform for platform, tag in PLATFORMS if any(tag.search(name) for name in names)]


def wheel_cuda(name: str, base: str, files: list[dict]) -> str:
    """The CUDA the Linux x86-64 wheel was built with ("" for a CPU-only one, "-" when not read)."""
    path = VERSION_FILES.get(name)
    wheels = [
        f for f in files if f["packagetype"] == "bdist_wheel" and re.search(r"linux\w*_x86_64", f["filename"])
    ]
    if path is None or not wheels:
        return "-"
    text = member(base, wheels[0], path).decode()
    found = re.search(r"^cuda(?:: Optional\[str\])? = '?([\d.]+|None)'?", text, re.M)
    if found:
        return "" if found.group(1) == "None" else found.group(1)
    # torchvision asks its compiled ops at import; the local tag of its version says the build (+cu121: 12.1)
    local = re.search(r"^__version__ = '[^'+]+\+cu(\d+)(\d)'", text, re.M)
    return f"{local.group(1)}.{local.group(2)}" if local else "-"


def wheel_torch(name: str, base: str, files: list[dict]) -> str:
    """The torch its Linux x86-64 wheel requires (``==2.1.0``, ``>=1.13``; "" none; "-" not read), from the wheel's
    METADATA (Requires-Dist): the packages built against one torch release pin it."""
    wheels = [
        f for f in files if f["packagetype"] == "bdist_wheel" and re.search(r"linux\w*_x86_64", f["filename"])
    ]
    if name not in TORCH_PINNED or not wheels:
        return "-"
    text = member(base, wheels[0], "dist-info/METADATA").decode("utf-8", "replace")
    found = re.search(r"^Requires-Dist: torch\s*\(?([^;)\n]*)\)?\s*(?:;|$)", text, re.M)
    return found.group(1).replace(" ", "") if found else ""


def release_rows(name: str) -> list[str]:
    base, data = project(name)
    rows = []
    for version, files in sorted(data["releases"].items(), key=lambda kv: final(kv[0]) or Version("0")):
        if final(version) is None or not files or all(f.get("yanked") for f in files):
            continue
        files = [f for f in files if not f.get("yanked")]
        requires = next((f["requires_python"] for f in files if f.get("requires_python")), "") or ""
        sdist = "sdist" if any(f["packagetype"] == "sdist" for f in files) else ""
        cuda = wheel_cuda(name, base, files)
        torch = wheel_torch(name, base, files)
        rows.append(
            "\t".join(
                (
                    name,
                    version,
                    requires,
                    " ".join(python_tags(files)),
                    " ".join(platforms(files)),
                    sdist,
                    cuda,
                    torch,
                )
            )
        )
    return rows


def host_bounds(header: str) -> tuple[str, str, str]:
    """(newest gcc, first clang refused, first _MSC_VER refused) from a crt/host_config.h."""
    gcc = re.search(r"#if __GNUC__ > (\d+)", header)
    clang = re.search(r"#if \(__clang_major__ >= (\d+)\)", header)
    msvc = re.search(r"_MSC_VER >= (\d{4})\s*$", header, re.M) or re.search(
        r"_MSC_VER >= (19[2-9]\d)\b", header
    )
    return (gcc.group(1) if gcc else "", clang.group(1) if clang else "", msvc.group(1) if msvc else "")


def toolkit_rows() -> list[str]:
    rows = []
    for minors, nvcc, crt in NVCC:
        for minor in minors:
            found = last_patch(nvcc, minor)
            headers = last_patch(crt, minor)
            if found is None or headers is None:
                continue
            header = member(headers[0], headers[1], "include/crt/host_config.h").decode()
            ptxas = member(found[0], found[1], "bin/ptxas")
            archs = {a.decode() for a in re.findall(rb"\bsm_(\d{2,3}[af]?)\b", ptxas)}
            archs = sorted((a for a in archs if int(re.match(r"\d+", a).group()) >= 50), key=_arch_key)
            gcc, clang, msvc = host_bounds(header)
            source = f"{nvcc}=={found[2]}" + (f", {crt}=={headers[2]}" if crt != nvcc else "")
            rows.append("\t".join((minor, gcc, clang, msvc, " ".join(archs), source)))
    return torch_gcc_rows({row.split("\t")[0] for row in rows}) + rows


def last_patch(name: str, minor: str) -> tuple[str, dict, str] | None:
    """(the JSON's address, its Linux x86-64 wheel, the version) of ``name``'s last patch of ``minor``."""
    base, data = project(name)
    patches = [v for v in data["releases"] if final(v) and v.startswith(minor + ".") and data["releases"][v]]
    if not patches:
        return None
    patch = max(patches, key=Version)
    wheel = next(f for f in data["releases"][patch] if re.search(r"linux\w*_x86_64", f["filename"]))
    return base, wheel, patch


def torch_gcc_rows(known: set[str]) -> list[str]:
    """CUDA 10.2-11.6's gcc and clang bounds from torch's cpp_extension.py (newest torch release that lists it)."""
    bounds: dict[str, tuple[str, str, str]] = {}
    for folder in sorted(TORCH_WHEELS.iterdir(), key=lambda p: Version(p.name)):
        wheel = next(folder.glob("*.whl"), None)
        if wheel is None:
            continue
        source = zipfile.ZipFile(wheel).read("torch/utils/cpp_extension.py").decode()
        for table, column in (("CUDA_GCC_VERSIONS", 0), ("CUDA_CLANG_VERSIONS", 1)):
            found = re.search(rf"^{table}(?:: VersionMap)? = (\{{.*?\}})", source, re.S | re.M)
            if not found:
                continue
            text = re.sub(r"MINIMUM_\w+", "None", found.group(1))
            # torch 2.x's bound is exclusive ("max_excl": (12, 0) = 11 at most), 1.x's inclusive ((8, 0, 0) = 8)
            exclusive = "max_excl_compiler_version" in source
            for cuda, (_, upper) in ast.literal_eval(text).items():
                newest = upper[0] - 1 if exclusive and not any(upper[1:]) else upper[0]
                cells = list(bounds.get(cuda, ("", "", folder.name)))
                cells[column] = str(newest if column == 0 else newest + 1)
                cells[2] = folder.name
                bounds[cuda] = tuple(cells)
    return [
        "\t".join((cuda, gcc, clang, "", "", f"torch {torch} torch/utils/cpp_extension.py"))
        for cuda, (gcc, clang, torch) in sorted(bounds.items(), key=lambda kv: Version(kv[0]))
        if cuda not in known
    ]


def torch_arch_rows() -> list[str]:
    """Per torch minor release (its last patch), the compute capabilities its extension builder accepts in
    TORCH_CUDA_ARCH_LIST: ``supported_arches`` in torch/utils/cpp_extension.py (``_get_cuda_arch_flags``)."""
    base, data = project("torch")
    minors: dict[str, Version] = {}
    for version, files in data["releases"].items():
        parsed = final(version)
        if parsed and parsed >= Version("1.8") and any("x86_64" in f["filename"] for f in files):
            key = f"{parsed.major}.{parsed.minor}"
            minors[key] = max(minors.get(key, parsed), parsed)
    rows = []
    for minor, patch in sorted(minors.items(), key=lambda kv: kv[1]):
        files = data["releases"][str(patch)]
        wheel = next(f for f in files if re.search(r"linux\w*_x86_64", f["filename"]))
        source = member(base, wheel, "torch/utils/cpp_extension.py").decode()
        found = re.search(r"supported_arches = (\[[^\]]*\])", source)
        if found:
            arches = ast.literal_eval(found.group(1))
            rows.append(f"{minor}\t{patch}\t{' '.join(arches)}")
    return rows


def _arch_key(arch: str) -> tuple[int, str]:
    return int(re.match(r"\d+", arch).group()), arch


def prefetch() -> None:
    """Read the members the rows need eight at a time (each is a few range requests: latency, not bandwidth)."""
    tasks = []
    for name in PACKAGES:
        base, data = project(name)
        for version, files in data["releases"].items():
            wheels = [
                f
                for f in files
                if f["packagetype"] == "bdist_wheel"
                and not f.get("yanked")
                and re.search(r"linux\w*_x86_64", f["filename"])
            ]
            if final(version) is None or not wheels:
                continue
            if name in VERSION_FILES:
                tasks.append((base, wheels[0], VERSION_FILES[name]))
            if name in TORCH_PINNED:
                tasks.append((base, wheels[0], "dist-info/METADATA"))
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda task: member(*task), tasks))


def build() -> None:
    prefetch()
    lines = [
        "# package\tversion\trequires_python\tpythons\tplatforms\tsdist\tcuda (Linux x86-64 wheel; - not read)"
        "\ttorch it requires (its METADATA; - not read)",
        "# written by benchmarks/wheel_tags.py --build from PyPI's JSON API (every final release's files)",
    ]
    for name in PACKAGES:
        lines += release_rows(name)
    TABLE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    toolkits = [
        "# cuda\tnewest gcc\tfirst clang refused\tfirst _MSC_VER refused\tsm archs ptxas names\tread from",
        "# written by benchmarks/wheel_tags.py --build: crt/host_config.h and bin/ptxas of NVIDIA's nvcc wheels; "
        "before 11.7, torch's cpp_extension.py",
    ]
    TOOLKITS.write_text("\n".join(toolkits + toolkit_rows()) + "\n", encoding="utf-8")
    archs = [
        "# torch\tits last patch read\tthe compute capabilities TORCH_CUDA_ARCH_LIST may name",
        "# written by benchmarks/wheel_tags.py --build: supported_arches in torch/utils/cpp_extension.py of each "
        "release's Linux x86-64 wheel",
    ]
    TORCH_ARCHS.write_text("\n".join(archs + torch_arch_rows()) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--build", action="store_true", help="query PyPI and write the tables")
    if parser.parse_args().build:
        build()
    counts: dict[str, int] = defaultdict(int)
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            counts[line.split("\t")[0]] += 1
    for name, count in counts.items():
        print(f"{name:18} {count:5} releases")
    toolkit_count = sum(1 for line in TOOLKITS.read_text().splitlines() if not line.startswith("#"))
    print(f"{'CUDA toolkits':18} {toolkit_count:5}")


if __name__ == "__main__":
    main()

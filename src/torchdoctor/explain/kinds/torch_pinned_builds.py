"""A compiled package built for one torch release, loaded under another: its own refusal, or the process aborting.

Some packages beside torch ship C++ kernels that do not go through libtorch's stable interface, so their build
fits one torch release only. torchao's ``torchao/__init__.py`` checks the pairing before it loads its ``_C*.so``
files and logs a warning when the pair is not one it was built for (pytorch/ao#2908, after a torchao built with
torch 2.8 crashed the process under torch 2.9):

- 0.13.0 to 0.16.x: "Skipping import of cpp extensions due to incompatible torch version 2.9.1+cu128 for torchao
  version 0.13.0" (0.14.1 on add "Please see https://github.com/pytorch/ao/issues/2919 for more info"), against a
  table of pairs: 0.13.0 and 0.14.0 built with torch 2.8.0, 0.14.1 with 2.9.0, 0.15.0 with 2.9.1, 0.16.0 with
  2.10.0;
- 0.17.0 on: "Skipping import of cpp extensions due to incompatible torch version. Please upgrade to torch >= 2.11.0
  (found 2.9.1+cu128)."

torchao goes on without its kernels, so the warning alone is no failure; what then needs them fails (quantized and
float8 tensors without their ops): likely.

Without such a check the loader's mismatch aborts the whole process: the shell's "Aborted (core dumped)" (SIGABRT)
with no Python traceback. That line alone says nothing of why; read only where the same text names the compiled
package and the torch it was built with beside the torch it ran under ("built torchao with torch 2.8 ... torch
2.9+ ... Aborted (core dumped)"): likely.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "builds and installs"

R = Pattern

# the compiled packages whose builds fit one torch release, as a sentence or a pip line spells them
_PACKAGES = (
    r"torchao|flash[-_ ]?attn|xformers|mamba[-_ ]ssm|causal[-_ ]conv1d|torch[-_ ]scatter|torch[-_ ]sparse|"
    r"torch[-_ ]cluster|pyg[-_ ]lib|torchvision|torchaudio|mmcv|detectron2|pytorch3d|transformer[-_ ]engine|"
    r"bitsandbytes|apex|deepspeed|vllm"
)
_TORCH_VERSION = r"(?:torch|pytorch|PyTorch)\s?(?:==|v|version\s)?(?P<{}>\d{{1,2}}\.\d{{1,3}}(?:\.\d{{1,3}})?[\w.+]{{0,20}})"

# torchao's releases and the torch each was built with (torchao/__init__.py's table of compatible pairs)
TORCHAO_BUILT_WITH = (
    ("0.13.0", "2.8.0"),
    ("0.14.0", "2.8.0"),
    ("0.14.1", "2.9.0"),
    ("0.15.0", "2.9.1"),
    ("0.16.0", "2.10.0"),
)
_TORCHAO_PAIRS = ", ".join(f"torchao {ao} for torch {torch}" for ao, torch in TORCHAO_BUILT_WITH)

_TORCHAO_FIX = (
    "torchao's C++ kernels are built against one torch release and are skipped under any other, so what needs them "
    f"(its quantized and float8 tensors' ops) fails. Install the torchao built for your torch ({_TORCHAO_PAIRS}; "
    "0.17.0 and later need torch 2.11 or newer): pip install 'torchao==<that release>', or the torch the installed "
    "torchao was built for (pip show torchao torch). A torchao built from source (+git) must be rebuilt after every "
    "torch change."
)

MATCH = R(
    r"(?P<torchao_skipped>Skipping import of cpp extensions due to incompatible torch version)|"
    # the shell's abort, on a line that names the package and the torch it was built with
    rf"(?i:(?:buil[dt]|compiled)\s(?:\w+\s){{0,3}}?(?P<aborted_package>{_PACKAGES})\s(?:\w+\s)?(?:with|against|for)\s"
    + _TORCH_VERSION.format("built_torch")
    + r"[^\n]{0,300}?"
    + _TORCH_VERSION.format("runtime_torch")
    + r"[^\n]{0,300}?)Aborted \(core dumped\)"
)

FACTS = (
    R(
        r"incompatible torch version (?P<torchao_found>[\w.+]{1,40}) for torchao version "
        r"(?P<torchao_version>\d[\w.+]{0,40}?)(?=\s|$|\.?\s)"
    ),
    R(
        r"Please upgrade to torch >= (?P<torchao_needs>[\d.]{1,20}\d) \(found (?P<torchao_found>[\w.+]{1,40})\)"
    ),
)


TEMPLATES = (
    "third_party:torchao-skipping-cpp-extensions-for-torchao",  # torchao/__init__.py 0.13.0-0.16.x
    "third_party:torchao-skipping-cpp-extensions-upgrade-torch",  # torchao/__init__.py 0.17.0 on
)
# a warning the run goes on after, and the abort read from the text around it: neither alone is certain (versions.py
# lists them as generic anchors, and its confirm decides nothing for them)
ANCHORS = ("Skipping import of cpp extensions due to incompatible torch version", "Aborted (core dumped)")


def explain(facts: dict) -> tuple[str, str] | None:
    """The summary and fix for torchao's refusal of its kernels or a named build's abort, None for neither."""
    if facts.get("torchao_skipped"):
        found = facts.get("torchao_found")
        if facts.get("torchao_needs"):
            what = f"it needs torch >= {facts['torchao_needs']}" + (f", found {found}" if found else "")
        elif facts.get("torchao_version"):
            what = f"torchao {facts['torchao_version']} was not built for torch {found}"
        else:
            what = "it was built for another torch"
        return f"torchao skipped its C++ kernels: {what}; what needs them fails", _TORCHAO_FIX
    if not facts.get("aborted_package"):
        return None
    package = facts["aborted_package"].lower().replace("_", "-").replace(" ", "-")
    built, runtime = facts["built_torch"], facts["runtime_torch"]
    fix = (
        f"{package}'s compiled part fits the torch it was built with ({built}); loaded under torch {runtime} it "
        "aborts the process (Aborted, core dumped: no Python traceback). Install the build of "
        f"{package} made for the torch installed (pip install --force-reinstall --no-cache-dir "
        f"--no-build-isolation {package}, or its wheel for that torch and CUDA), or go back to torch {built}."
    )
    if package == "torchao":
        fix = _TORCHAO_FIX + " Releases before 0.13.0 had no such check: the process aborted instead."
    return (
        f"{package} built with torch {built} was loaded under torch {runtime}, and the process aborted",
        fix,
    )

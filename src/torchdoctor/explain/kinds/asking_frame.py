"""A name a package's own code asks for and the installed package lacks: that release's bug, not its caller's.

CPython raises "cannot import name 'N' from 'P'", "No module named 'P.m'", "module 'P.m' has no attribute 'N'"
and "'C' object has no attribute 'a'" in the frame whose code asked for the name (an attribute hook such as
DeepSpeedEngine.__getattr__ or nn.Module.__getattr__ raises it for the frame above it: traceback_frames.py
`asking_package` skips those and the import machinery). Where that code is the package's own (gsplat's
``cuda/_backend.py`` importing ``gsplat.csrc``, DeepSpeed's runtime reading an attribute of its own engine or
ZeRO optimizer), the installed release disagrees with itself: a bug of that release (nerfstudio-project/gsplat's
Windows wheels without their compiled part, nerfstudio#2685) or an install or build of it left incomplete. Where
it is another installed package's (transformers' Trainer calling DeepSpeed's engine, dm_control indexing
mujoco's MjModel, zarrdataset importing zarr 2's ``zarr.storage.Store``), two releases disagree: the pairing
`dependency_version` reads. Where it is the script's, the script was written for another release (as before).

Each recogniser names the facts it hands over this way (``Recogniser.kind_by_asker``): versions.py's
DEPENDENCY_VERSION for the import and module forms and DeepSpeed's objects (the package's own code:
``library_version_bug``), its LIBRARY_RELEASE_BUG for accelerate's plugin dataclasses (another package's code
reading one: ``dependency_version``). torch's own code lacking a torch name is a build without that part (a
CPU-only or non-distributed build), which other kinds read: never handed over. Always likely: one log cannot tell
a release's bug from a half-finished upgrade of it, and the release's own issues say which.
"""

from __future__ import annotations

from torchdoctor.explain import printed_versions
from torchdoctor.explain.recognisers import Context, Hit, first, on_ranks

FAMILY = "library releases that disagree with the code"

# the facts the import and module forms (versions.py's _CANNOT_IMPORT, _NO_SUBMODULE, _NO_ATTRIBUTE) and
# DeepSpeed's objects (_DS_OBJECT) are read with
IMPORT_FACTS = ("from_import", "missing_submodule", "no_attribute")
OWN_CODE = (
    ("module", "", "library_version_bug", ""),
    ("missing_submodule", "", "library_version_bug", ""),
    ("ds_class", "deepspeed", "library_version_bug", ""),
)
# accelerate's plugin dataclasses read by another package (transformers' Trainer, Lightning): a pairing
PLUGIN_READ_ELSEWHERE = (("acc_class", "accelerate", "", "dependency_version"),)
# names of a package's compiled part: the build, more often than the release, is what is missing
_COMPILED = ("_C", "C", "csrc", "_ext", "_cuda", "cuda_ext", "_backend")


def own_code(hits: list[Hit], ctx: Context) -> tuple[str, str] | None:
    """The reading of a name a package's own code asks for (None: no such hit)."""
    cls = first(hits, "ds_class")
    if cls:
        return _own_deepspeed_object(cls, first(hits, "ds_attribute", "?"), hits, ctx)
    if not any(first(hits, fact) for fact in IMPORT_FACTS):
        return None
    module = first(hits, "missing_submodule") or first(hits, "module", "")
    package = module.split(".")[0]
    name = first(hits, "name", "") if not first(hits, "missing_submodule") else module.rsplit(".", 1)[-1]
    release = printed_versions.shown(ctx.facts, package)
    installed = f"{package} {release}" if release else package
    asked = f"{name} from {module}" if not first(hits, "missing_submodule") else f"the module {module}"
    compiled = name in _COMPILED
    summary = (
        f"{package}'s own code asks for {asked}, which the installed {installed} does not have: "
        + (
            f"{package}'s compiled part was not built or not installed (a wheel without it, a build that failed "
            "earlier), or a bug of that release"
            if compiled
            else f"a bug of the {package} release installed (its code and its files disagree), or an install or "
            "upgrade of it left half done"
        )
        + on_ranks(hits)
    )
    fix = (
        f"The traceback's innermost frame asking for it is {package}'s own, not your code's: reinstall {package} "
        f"whole (pip install --force-reinstall --no-deps {package}; pip show {package} names the release). "
        + (
            "Where its compiled part fails to build, build it from source with the compiler and CUDA its docs "
            "name (an earlier error in the log, a compiler not found, is the cause). "
            if compiled
            else ""
        )
        + f"If a fresh install fails the same way, that release is broken: search {package}'s issues for the "
        f"message, then upgrade (pip install -U {package}, or its latest source) or pin the release before it."
    )
    return summary, fix


def _own_deepspeed_object(cls: str, attribute: str, hits: list[Hit], ctx: Context) -> tuple[str, str]:
    release = printed_versions.shown(ctx.facts, "deepspeed")
    installed = f"DeepSpeed {release}" if release else "the DeepSpeed release installed"
    return (
        f"'{cls}' object has no attribute '{attribute}', asked for by DeepSpeed's own code: likely a bug of "
        f"{installed} (its code reads a field its own {cls} lacks), or a DeepSpeed upgraded over older files"
        + on_ranks(hits),
        f"The frame asking for {attribute} is in deepspeed/, not in the code calling DeepSpeed: search DeepSpeed's "
        f"issues for \"'{cls}' object has no attribute '{attribute}'\" (the release that broke it and the one "
        "that fixed it), then upgrade (pip install -U deepspeed) or pin the release before it; reinstall it "
        "cleanly (pip uninstall -y deepspeed; pip install deepspeed==<version>) where an older copy may be left.",
    )


def plugin_read_elsewhere(hits: list[Hit], ctx: Context) -> tuple[str, str] | None:
    """accelerate's plugin dataclass missing a field another package's code reads: the two releases disagree
    (None: no such hit)."""
    cls = first(hits, "acc_class")
    caller = first(hits, "asked_in_package")
    if not cls or not caller or caller == "accelerate":
        return None
    attribute = first(hits, "acc_attribute", "?")
    return (
        f"{caller} reads {cls}.{attribute}, which the installed accelerate's {cls} does not have: {caller} and "
        f"accelerate installed at releases that disagree{printed(ctx, caller, 'accelerate')}"
        + on_ranks(hits),
        f"{cls} is accelerate's dataclass and the code reading {attribute} is {caller}'s: pip show {caller} "
        f"accelerate, then install a pair {caller}'s requirements name (pip install -U accelerate, or the "
        f"{caller} release written for the accelerate installed).",
    )


def pairing_caller(hits: list[Hit], package: str, ctx: Context) -> str:
    """The installed package other than ``package`` (and torch) whose code asked ``package``'s object for what it
    lacks ("": the script's, torch's callback, or no frames)."""
    caller = first(hits, "asked_in_package") or ""
    return caller if caller not in ("", package, "torch") else ""


def printed(ctx: Context, *packages: str) -> str:
    """`` (accelerate 0.34.0, deepspeed 0.15.1)``: the releases of ``packages`` the log prints ("" for none)."""
    shown = [f"{p} {release}" for p in packages if (release := printed_versions.shown(ctx.facts, p))]
    return f" ({', '.join(shown)})" if shown else ""

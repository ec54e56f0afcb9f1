"""Installed versions that disagree with the code, and exceptions raised inside a library's own code.

Kinds of failure that come from the versions installed: a package older or newer than the code needs, and
an error raised inside a library rather than in the user's code (most often that version's bug).

The messages are the packages' own version checks (``transformers/utils/versions.py``'s ``require_version``,
accelerate's, Lightning's and DeepSpeed's "requires X >= v" checks) and CPython's ``cannot import name``.
`library_bug` reads an exception no known kind covers: raised in an installed package's frame, of a type a
caller's bad value or a version's bug raises (not a ValueError the library raises on purpose).
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from torchdoctor.explain import printed_versions
from torchdoctor.explain.first_failure import Raised, cut, installed_package
from torchdoctor.explain.kinds import (
    api_changes,
    api_history,
    asking_frame,
    autograd_releases,
    config_keys,
    cuda_errors,
    data_containers,
    data_loader_releases,
    deepspeed_pydantic,
    fsdp_releases,
    gym_registry,
    image_files,
    installers,
    kernel_release_bugs,
    libraries,
    lightning_defaults,
    loop_helpers,
    midi_tokenizers,
    missing_packages,
    model_type_releases,
    neighbour_releases,
    optimizer_subclass,
    paged_optimizers,
    parallel_releases,
    pip_pins,
    post_training_releases,
    precision_releases,
    python_syntax,
    ray_cluster,
    release_changes,
    research_code,
    seed_devices,
    simulators,
    stack_releases,
    torch_pinned_builds,
    torchvision_renames,
    trainer_data_releases,
    trl_checks,
    varlen_attention,
    version_refusals,
    zero3_params,
    zero3_prefetch,
)
from torchdoctor.explain.kinds.refusal_table import one_line, refusal_in, refusal_pattern
from torchdoctor.explain.kinds.release_pins import spelled
from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    first,
    merged,
    on_ranks,
)

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the libraries' releases that changed what code calls, a module each holding a table of them (its CHANGE
# pattern, ANCHORS, GENERIC, TEMPLATES and change(); those after the first also decisive()), tried in this order
_CHANGES = (
    api_changes,
    release_changes,
    trainer_data_releases,
    neighbour_releases,
    data_containers,
    stack_releases,
    lightning_defaults,
    torchvision_renames,
    pip_pins,
    autograd_releases,
    model_type_releases,
)

# "requires PyTorch >= 2.2.0", "requires `accelerate>=1.1.0`", "requires deepspeed>=0.16.4"
_REQUIRES = R(
    r"(?P<what>[\w`' .>=-]{0,60}?)\brequires (?:a |the )?[`'\"]?(?P<package>[A-Za-z][\w-]{1,40})[`'\"]? ?"
    r"(?:version )?>= ?(?P<needed>\d+(?:\.\w+)*)"
)
_NORMAL_FUNCTIONING = R(
    r"(?P<requirement>[\w\-.<>=!~, ]{1,100}) is required for a normal functioning of this module, "
    r"but found (?P<found>[\w\-.=+]{1,100})"
)
_CANNOT_IMPORT = R(
    r"(?P<from_import>cannot import name) '(?P<name>\w{1,100})' from '(?P<module>[\w.]{1,200})'"
)
# a name a module or a DeepSpeed object lacks: also a circular import, a shadowing file or a bug of that release
# pybind11 (pybind11.h, the dispatcher): a compiled function called with arguments its C++ signature does not
# take, "causal_conv1d_fwd(): incompatible function arguments. The following argument types are supported:" --
# the Python half of a package and its compiled extension (or two packages that call each other's kernels)
# come from releases that disagree
_INCOMPATIBLE = R(r"(?P<compiled>[\w.]{1,100})\(\): incompatible function arguments")
_MISSING_NAMES = (
    "No module named '",
    "(): incompatible function arguments",
    "cannot import name",
    "AttributeError: module '",
    "ZeroOptimizer' object has no attribute '",
    "ZeroOptimizer_Stage3' object has no attribute '",
    "Optimizer_Stage3' object has no attribute '",
    "DeepSpeedEngine' object has no attribute '",
    "PipelineEngine' object has no attribute '",
    "DeepSpeedZeRoOffload' object has no attribute '",
)
# a private function (a library's internals) called with a keyword it does not take (CPython's TypeError)
PRIVATE_CALL = R(
    r"(?<![\w.])(?P<private_call>_[a-z]\w{0,100})\(\) got an unexpected keyword argument '(?P<unexpected_kw>\w{1,100})'"
)
_DETECTED = R(r"Detected (?P<package2>\w+) version: (?P<found2>\d+(?:\.[\w+]+)*)")
# torch/_dynamo/eval_frame.py check_if_dynamo_supported and torch/__init__.py compile: the first Python version a
# release's torch.compile does not support ("Python 3.11+ not yet supported for torch.compile" in torch 2.0), or a
# free-threaded Python older than 3.13.3: the installed torch is older than the Python it runs on
_COMPILE_PYTHON = R(
    r"(?P<compile_python>Python (?P<compile_py>3\.\d{1,2})\+ not yet supported for torch\.compile|"
    r"torch\.compile is not supported on Python (?P<compile_py2>3\.\d{1,2}\+|< ?3\.\d[\d.]* built with GIL disabled))"
)
# the libraries a training script runs through whose API moves between releases: an attribute missing from one
# of their modules is a caller written for another release (CPython Objects/moduleobject.c's AttributeError)
LIBRARIES = (
    "deepspeed|accelerate|transformers|peft|trl|lightning|pytorch_lightning|lightning_fabric|apex|bitsandbytes|"
    "flash_attn|xformers|timm|torchvision|torchaudio|diffusers|datasets|megatron|fairscale|torchmetrics|"
    "torch_geometric"
)
# a submodule of one of those libraries (or of torch) that cannot be imported: the library is installed, and its
# release has no such module (torch._six went in torch 2.0, transformers.deepspeed moved to
# transformers.integrations): the importing code was written for another release. torch._C is torch's own
# extension: missing, it is a broken torch (or torch imported from its source folder), not a version
# OpenMMLab's packages move their modules between releases too (mmpose 0.x's mmpose/models/registry.py, which
# defined BACKBONES, went into mmpose/models/builder.py with mmpose#669; mmcv 2.0 left mmcv.runner to mmengine).
# mmcv._ext is mmcv's compiled ops, absent from an mmcv built without them: a build, not a release
OPENMMLAB = (
    r"mmcv(?!\._ext\b)|mmdet|mmdet3d|mmseg|mmpose|mmengine|mmcls|mmpretrain|mmocr|mmaction|mmrotate|mmyolo|mmagic|"
    r"mmedit|mmtrack"
)
SUBMODULE_NAME = rf"(?:torch\.(?!_C\b)|(?:{LIBRARIES}|{OPENMMLAB})\.)[\w.]{{1,150}}"
SUBMODULE = SUBMODULE_NAME + "'"
_NO_SUBMODULE = R(rf"No module named '(?P<missing_submodule>{SUBMODULE_NAME})'")
# torch's own modules too (torch.distributed.reduce_scatter_tensor came in 1.13, torch.compile in 2.0): not
# torch._C, whose missing CUDA functions are a CPU-only build, nor torch.distributed's init_process_group, which a
# torch built without distributed lacks (backend_unavailable reads both)
TORCH_MODULE = r"torch(?!\._C\b)(?:\.[\w.]{1,150})?"
_NO_ATTRIBUTE = R(
    rf"module '(?P<module>(?:{LIBRARIES})(?:\.[\w.]{{1,150}})?|{TORCH_MODULE})' has no attribute "
    r"'(?P<name>(?!init_process_group'|_c10d_init')\w{1,100})'"
)
# TorchScript compiling an installed package's code that calls a Tensor method this torch does not have
# (torch/csrc/jit/frontend/sugared_value.cpp; 1.x and 2.x wordings): the package was built for a newer torch
_SCRIPTED = R(
    r"(?:nonexistent attribute or method '(?P<ts_method>\w{1,100})' of type 'Tensor'|"
    r"'Tensor' object has no attribute or method '(?P<ts_method2>\w{1,100})')[^\n]{0,100}\n[^\n]{0,300}?"
    r"site-packages[/\\](?P<ts_package>\w{1,100})[/\\]"
)
# DeepSpeed's engine and optimizer classes (deepspeed/runtime/engine.py, zero/stage_1_and_2.py, zero/stage3.py,
# fp16/*.py, pipe/engine.py), whose attributes transformers' Trainer, accelerate and Lightning call into: one
# missing is a caller written for another DeepSpeed release (or that release's bug). Not cpu_adam's
# ds_opt_adam, which is a failed op build (build.py).
_DS_OBJECT = R(
    r"'(?P<ds_class>DeepSpeed(?:Engine|ZeroOptimizer\w{0,20}|Light\w{0,20}|Hybrid\w{0,20})|"
    r"(?:FP16|BF16)_\w{0,40}Optimizer\w{0,20}|PipelineEngine|DeepSpeedZeRoOffload)' object has no attribute "
    r"'(?P<ds_attribute>(?!ds_opt_adam')\w{1,100})'"
)

# accelerate's plugin dataclasses (accelerate/utils/dataclasses.py), which accelerate's state and Accelerator
# read: an attribute one of them lacks is accelerate code and plugin from releases that disagree, or that
# release's own bug (accelerate reading a field its plugin never had)
_ACCELERATE_PLUGIN = R(
    r"'(?P<acc_class>DeepSpeedPlugin|FullyShardedDataParallelPlugin|MegatronLMPlugin|TorchDynamoPlugin|"
    r"GradientAccumulationPlugin)' object has no attribute '(?P<acc_attribute>\w{1,100})'"
)


def _accelerate_plugin(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    cls, attribute = facts["acc_class"], facts["acc_attribute"]
    return (
        f"accelerate's {cls} has no attribute '{attribute}': accelerate reads a field its own plugin lacks, a "
        "bug of the accelerate release installed (or a stale install of it)" + on_ranks(hits),
        f"{cls} is accelerate's own dataclass, read by accelerate itself: a field it lacks is accelerate's "
        "code and its plugin disagreeing. Upgrade accelerate to a release that fixed it (pip install -U "
        "accelerate; its issues name the broken one), or install the accelerate version the project pins, and "
        "reinstall it cleanly if an older copy may shadow it (pip show accelerate).",
    )


def _compile_python(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    if "GIL disabled" in (facts.get("compile_py2") or ""):
        return (
            "torch.compile refuses this Python: a free-threaded (GIL-disabled) Python older than 3.13.3"
            + on_ranks(hits),
            "torch.compile runs on a free-threaded Python from 3.13.3 on: use a newer 3.13 (or the standard, "
            "GIL-enabled build of the same version), or drop torch.compile for this run.",
        )
    version = facts.get("compile_py") or (facts.get("compile_py2") or "").rstrip("+") or "this Python"
    return (
        f"torch.compile refuses Python {version}: the installed PyTorch is older than the Python it runs on "
        "(each release's torch.compile supports the Python versions of its time)" + on_ranks(hits),
        f"Upgrade PyTorch to a release whose torch.compile supports Python {version} (3.11 came in torch 2.1, "
        "3.12 in 2.4, 3.13 in 2.6): pip install -U torch with the --index-url of your CUDA; when no release "
        "supports it yet, the nightly builds usually do (pip install --pre torch --index-url "
        "https://download.pytorch.org/whl/nightly/<cu1xx>). Or run in an environment with a Python the "
        "installed torch supports (conda create -n train python=3.10), or leave torch.compile out: the model "
        "runs without it, only slower.",
    )


# the refusals that name the package a feature needs (version_refusals.py), each with its fix
_REFUSED = refusal_pattern(version_refusals.REFUSALS, name="version_refusal", after=200)
# the refusals torch itself prints for code written for another torch (not a package missing or too old)
_TORCH_OWN = ("THC/THC.h", "TH/TH.h", "Legacy autograd function", "torch.utils.ffi")


# the name a package is installed by where messages name the project: PyPI's "pytorch" is a stub that refuses
# to install and says to install torch
_PIP_NAMES = {"pytorch": "torch"}
_IS_TORCH = R(r"(?i:torch|pytorch)$")
_BUT = R(
    r"^(?:.{0,40}, )?but "
)  # accelerate's "Tried to use TP, but `torch.distributed.device_mesh` requires"


def _prerelease_of(found: str, needed: str) -> bool:
    """Whether version ``found`` is a pre-release (or development build) of release ``needed``:
    ``_prerelease_of("2.6.0a0+ecf3bae40a.nv25.01", "2.6.0")``."""
    matched = re.match(r"(\d+(?:\.\d+)*)(?:a|b|rc|\.?dev)\d*", found)
    if not matched:
        return False
    release = [int(n) for n in matched.group(1).split(".")]
    wanted = [int(n) for n in re.findall(r"\d+", needed)[:3]]
    return release + [0] * (3 - len(release)) == wanted + [0] * (3 - len(wanted))


def _satisfies(shown: str, needed: str) -> bool:
    """Whether torch ``shown`` is ``needed`` or newer (a pre-release of ``needed`` is not): ``_satisfies("2.1.0+cu121",
    "2.0")``."""
    try:
        return Version(shown) >= Version(needed)
    except InvalidVersion:
        return False


def _newer_torch_shown(facts: dict, ctx: Context) -> tuple[str, str, str, str] | None:
    """(the minimum, the torch the log shows, the torch the check found where it said, who checked) when a
    check refused the torch it imported for one older than its minimum and the log shows a torch installed that
    meets it: transformers' is_torch_available ("Disabling PyTorch because PyTorch >= {} is required but found
    {}"), its require_version ("torch>={} is required for a normal functioning of this module, but found
    torch=={}") and the packages' "requires PyTorch >= {}"."""
    shown = str(ctx.facts.get("installed_torch", ""))
    if not shown:
        return None
    if facts.get("transformers_torch_min"):
        needed, checked, who = (
            facts["transformers_torch_min"],
            facts.get("transformers_torch_found", ""),
            "transformers",
        )
    elif "requirement" in facts:
        minimum = re.fullmatch(r"(?:torch|pytorch) ?>= ?(\d[\w.]*)", facts["requirement"].strip())
        if minimum is None:
            return None
        needed, checked, who = minimum[1], facts.get("found", ""), "the package's import check"
    elif "package" in facts and _IS_TORCH.match(facts["package"].strip("`'\"")) and not facts.get("found2"):
        needed, checked = facts["needed"], ""
        who = _BUT.sub("", facts.get("what", "").strip(" `'")).strip(" `'") or "this feature"
    else:
        return None
    if not _satisfies(shown, needed) or _satisfies(checked.split("=")[-1], needed):
        return None
    return needed, shown, checked, who


def _another_environment(needed: str, shown: str, checked: str, who: str) -> tuple[str, str]:
    """``who``'s check refused the torch it imported (``checked``, where it said) for one older than ``needed``
    while the log shows torch ``shown``, which is new enough: the check ran in another environment or Python than
    the one whose torch the log printed."""
    found = f" (it found {checked})" if checked else ""
    return (
        f"{who} requires torch >= {needed}{found}, but the log shows torch {shown} installed, which is new enough: "
        "the check likely ran in another environment or Python than the one whose torch was printed",
        f"torch {shown} satisfies >= {needed}, so the torch the check imported is another one: the job's python is "
        "not the one whose packages were listed (another conda or virtual environment, a Jupyter kernel, a "
        "launcher or sudo that picks another python), or an older torch earlier on its path shadows the new one "
        "(~/.local's user site, PYTHONPATH). Run the job's own interpreter the way the job runs it:\n"
        "python -c 'import sys, torch; print(sys.executable, torch.__version__, torch.__file__)'\n"
        "and install with that interpreter (python -m pip install 'torch>="
        f"{needed}' with the --index-url of your CUDA), or activate the environment that has torch {shown} "
        "before the job starts; pip uninstall torch the stale copy torch.__file__ names.",
    )


def _dependency(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    pairing = asking_frame.plugin_read_elsewhere(hits, ctx)
    if pairing is not None:
        return pairing
    facts = merged(hits)
    said = deepspeed_pydantic.explain(facts, ctx.facts)  # before the import forms' general reading
    if said:
        return said[0] + on_ranks(hits), said[1]
    newer = _newer_torch_shown(facts, ctx)
    if newer:
        said = _another_environment(*newer)
        return said[0] + on_ranks(hits), said[1]
    contradicted = _shown_release_has_it(hits, ctx)
    if contradicted:
        summary, fix = _release_has_it(*contradicted)
        return summary + on_ranks(hits), fix
    if facts.get("transformers_torch_min"):
        summary, fix = missing_packages.explain_torch_too_old(facts)
        return summary + on_ranks(hits), fix
    if facts.get("builtin_generic"):
        summary, fix = missing_packages.explain_builtin_generic({**ctx.facts, **facts})
        return summary + on_ranks(hits), fix
    if facts.get("mkl_symbol"):
        summary, fix = libraries.explain_mkl_symbol(facts)
        return summary + on_ranks(hits), fix
    said = simulators.explain(facts, ctx.facts) or gym_registry.explain(facts)
    if said:
        return said[0] + on_ranks(hits), said[1]
    said = torch_pinned_builds.explain(facts)
    if said:
        return said[0] + on_ranks(hits), said[1]
    refusal = refusal_in(facts, version_refusals.REFUSALS, message="version_refusal")
    if refusal:
        said, fix = one_line(refusal[1]), refusal[2]
        what = (
            "the code was written for another torch"
            if said.startswith(_TORCH_OWN)
            else "a package the run needs is missing or too old"
        )
        return f"{what}: {said}" + on_ranks(hits), fix
    known = next((said for module in _CHANGES if (said := module.change(facts))), None)
    if known:
        return known[0] + on_ranks(hits), known[1]
    if facts.get("numpy_abi"):
        summary, fix = installers.explain_numpy(facts)
        return summary + on_ranks(hits), fix
    if facts.get("impimporter"):
        summary, fix = installers.explain_impimporter()
        return summary + on_ranks(hits), fix
    if facts.get("invalid_metadata") or facts.get("pip_241"):
        summary, fix = installers.explain_pip_metadata(facts)
        return summary + on_ranks(hits), fix
    if facts.get("pip_editable"):
        summary, fix = installers.explain_pip_editable(facts)
        return summary + on_ranks(hits), fix
    if facts.get("resolver"):
        summary, fix = installers.explain_conflict(facts, ctx)
        return summary + on_ranks(hits), fix
    if facts.get("compile_python"):
        return _compile_python(facts, hits)
    if facts.get("ds_outer_autocast"):
        return (
            "DeepSpeed refused the torch.autocast the training code enables around its engine: DeepSpeed "
            "0.17.2-0.17.5 allow autocast only through the DeepSpeed config, and the code (or the library "
            "running it) was written for a DeepSpeed without that check" + on_ranks(hits),
            "The script (or accelerate/Trainer code it runs through) wraps the forward in torch.autocast / "
            "torch.cuda.amp.autocast; DeepSpeed 0.17.2 to 0.17.5 raise on that unless the config turns autocast "
            "on. Install versions that agree:\n"
            "pip install -U deepspeed   # 0.17.6+ accept it: a warning, the config's precision is used\n"
            "or the DeepSpeed (and accelerate) release the project pins: pip install 'deepspeed<0.17.2' or "
            "pip install 'accelerate[deepspeed]==<the pinned version>'. Or drop the outer autocast and let the "
            'config\'s bf16/fp16 section set the precision, or turn it on in the config: "torch_autocast": '
            '{"enabled": true, "dtype": "bfloat16"} (without the bf16/fp16 sections).',
        )
    if "requirement" in facts:
        requirement, found = facts["requirement"].strip(), facts["found"]
        package = re.split(r"[<>=!~ ]", requirement, maxsplit=1)[0]
        return (
            f"{requirement} is needed, {found} is installed" + on_ranks(hits),
            f"Install the version the code needs, in the environment the job runs in:\n"
            f"pip install '{requirement}'\n"
            f"(or the versions the project's requirements file pins). Check with: pip show {package}",
        )
    if "package" in facts:
        package, needed = facts["package"].strip("`'\""), facts["needed"]
        what = _BUT.sub("", facts.get("what", "").strip(" `'")).strip(" `'") or "this feature"
        found = facts.get("found2") or (
            (printed_versions.shown(ctx.facts, "torch") or ctx.facts.get("torch_version", ""))
            if _IS_TORCH.match(package)
            else ""
        )
        fix = (
            f"Upgrade {package} to the version named (or turn the feature off):\n"
            f"pip install -U '{_PIP_NAMES.get(package.lower(), package)}>={needed}'\n"
            "Then check that the other packages still agree: pip check"
        )
        if _prerelease_of(found, needed):
            # accelerate compares the whole version (packaging's parse): 2.6.0a0+git... sorts before 2.6.0
            fix = (
                f"The torch installed, {found}, is a pre-release of {needed} (a source or nightly build, or an "
                f"NVIDIA container's), and the check orders a pre-release before its release: it refuses it. "
                f"Install torch {needed} or later as released, or a container whose torch is a newer release "
                "(or a pre-release of a later one).\n" + fix
            )
        return (
            f"{what} requires {package} >= {needed}"
            + (f"; {found} is installed" if found else "")
            + on_ranks(hits),
            fix,
        )
    history = next((row for row in map(api_history.known, (h.facts for h in hits)) if row), None)
    if history:
        summary, fix = api_history.explain(history)
        shown = api_history.lacks_it(history, ctx.facts)
        return api_history.named_installed(summary, history.package, shown) + on_ranks(hits), fix
    if facts.get("ds_class"):
        cls, attribute = facts["ds_class"], facts["ds_attribute"]
        caller = asking_frame.pairing_caller(hits, "deepspeed", ctx)
        if caller:
            return (
                f"'{cls}' object has no attribute '{attribute}', asked for by {caller}'s code: {caller} and DeepSpeed "
                f"installed at releases that disagree{asking_frame.printed(ctx, caller, 'deepspeed')}"
                + on_ranks(hits),
                f"{caller} calls DeepSpeed's {cls}.{attribute}, which this DeepSpeed does not have (added or removed "
                f"between releases). pip show {caller} deepspeed, then upgrade {caller} to a release written for "
                f"this DeepSpeed (pip install -U {caller}) or install the DeepSpeed release {caller}'s requirements "
                "or the project pin (pip install 'deepspeed==<that version>'); the caller's issues name the pairs "
                "that work.",
            )
        return (
            f"'{cls}' object has no attribute '{attribute}': the code calling DeepSpeed (transformers' Trainer, "
            "accelerate, Lightning) was likely written for another DeepSpeed release, or the other way round"
            + on_ranks(hits),
            f"DeepSpeed's {cls} gained or lost {attribute} between releases, and the package calling it expects "
            "the other. Install versions that agree: pip show deepspeed accelerate transformers, then upgrade "
            "the caller to a release written for this DeepSpeed (pip install -U accelerate transformers) or "
            "install the DeepSpeed release the project pins (pip install 'deepspeed==<that version>'); the "
            "calling package's issues name the pairs that work.",
        )
    if facts.get("compiled"):
        function = facts["compiled"]
        return (
            f"{function}() was called with arguments its compiled code does not take: the Python code calling it "
            "and the compiled extension that provides it come from versions that disagree" + on_ranks(hits),
            f"The signature of {function} changed between releases: the package calling it and the compiled "
            "extension it calls were installed at different versions (a prebuilt wheel for another release, "
            "or one package upgraded without the other: causal-conv1d and mamba-ssm, flash-attn and the model "
            "code). Install the pair of versions the project pins (its README or requirements file: pip install "
            "'<package>==<version>' for each), uninstall both first so no stale build stays, and rebuild the "
            "extension against the installed torch (pip install --no-build-isolation --no-cache-dir ...).",
        )
    if facts.get("ts_package"):
        return _scripted(facts, hits)
    # api_history.py's packages outside LIBRARIES (numpy, huggingface_hub, ...): its own groups name the module
    found = api_history.missing(facts) or ("?", "?", None)
    if found[0].split(".")[0] not in api_history.PACKAGES.split("|"):
        found = ("?", "?", None)
    if facts.get("missing_submodule") or not found[1]:
        module = facts.get("missing_submodule") or found[0]
        top = module.split(".")[0]
        if top == "lightning" and module.split(".")[1:2] and module.split(".")[1] in LIGHTNING_PL_PARTS:
            return _lightning_namespace(module, hits)
        return (
            f"{top} is installed but has no module {module}: the code importing it was written for another "
            f"{top} release" + on_ranks(hits),
            f"Modules of {top} are added, moved and removed between releases (torch._six went in torch 2.0, "
            "transformers.deepspeed moved to transformers.integrations): the package importing it expects "
            f"another {top}. Install the {top} version the importing project pins (its requirements file; pip "
            f"show {top} for the one installed), or upgrade the importing package to a release written for this "
            f"{top} (pip install -U <that package>): a release that imports a part of {top} not every install has "
            "is its own bug, which a later release fixes.",
        )
    name, module = facts.get("name", found[1]), facts.get("module", found[0])
    top = module.split(".")[0]
    # `from pkg import sub` imports the subpackage itself when pkg's __init__ did not (CPython's
    # _handle_fromlist): "cannot import name" says no release file of that name is there either, so only
    # attribute access ("module 'pkg' has no attribute 'sub'") may be a subpackage not imported yet
    if top != "torch" and not facts.get("from_import") and _maybe_subpackage(module, name):
        return _subpackage(module, name, hits)
    if facts.get("no_attribute") and top == "torch":
        return (
            f"module {module} has no attribute {name}: the installed PyTorch is likely older than the code that "
            "uses it (or the name was removed in it)" + on_ranks(hits),
            f"{name} is not in this PyTorch release (python -c 'import torch; print(torch.__version__)'): the code "
            "was written for another one. A name PyTorch added: upgrade it (pip install -U torch with the "
            "--index-url of your CUDA, or a newer container image); the PyTorch documentation of each release "
            f"lists {module}'s names. A name it removed: install the PyTorch the code pins, or update the code.",
        )
    if facts.get("no_attribute"):
        return (
            f"module {module} has no attribute {name}: the installed {top} is older or newer than the code "
            "that uses it" + on_ranks(hits),
            f"{name} was added to or removed from {top} between releases, and the code calling it was written "
            f"for another one. Install the {top} version the calling project pins (its requirements file; pip "
            f"show {top} for the one installed): pip install '{top}==<that version>', or update the calling "
            "package to a release written for this one.",
        )
    if top == "torch" and name in _TORCH_NAMES_LIBRARIES_IMPORTED:
        importer, fix = _TORCH_NAMES_LIBRARIES_IMPORTED[name]
        return (
            f"{module} has no {name}, which {importer} imports: that release was written for an older PyTorch"
            + on_ranks(hits),
            fix,
        )
    if top == "torch":
        return (
            f"{module} has no {name}: the installed PyTorch is likely older or newer than the code that imports it"
            + on_ranks(hits),
            f"{name} is not in this PyTorch release (python -c 'import torch; print(torch.__version__)'): the "
            "importing code was written for another one. A name that PyTorch added: upgrade it (pip install -U "
            "torch, with the --index-url of your CUDA); one added very recently is only in the nightly builds "
            "(pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/<cu1xx>). A name it "
            "removed (private modules such as torch._six go between releases): update the importing package to "
            "a release written for your PyTorch, or install the PyTorch it pins.",
        )
    if top == "triton":
        # torch's Linux wheels pin the triton they were built with (Requires-Dist triton==<x.y.z>; the nightlies
        # pytorch-triton), and inductor imports triton's internals, which change between its releases
        return (
            f"{module} has no {name}: the installed triton is likely not the release the installed torch pins "
            "(or the code importing it was written for another one)" + on_ranks(hits),
            "Every torch release pins the triton it was built with, and torch.compile's inductor (and kernels "
            "written in triton) import triton's internals, which change between triton releases: a triton "
            "upgraded or downgraded on its own (pip install triton, or a package that requires another) breaks "
            'them. See the pin: python -c "from importlib.metadata import requires; print([r for r in '
            "requires('torch') if 'triton' in r])\", then install that one: pip install 'triton==<that version>' "
            "(and uninstall a second triton or pytorch-triton if both are there).",
        )
    return (
        f"{module} has no {name}: the installed {top} is likely older or newer than the code that imports it"
        + on_ranks(hits),
        f"The installed {top} does not match the version the importing code was written for (a name added "
        f"or removed between versions). Compare `pip show {top}` with the version the project's requirements "
        f"pin, and install that one: pip install '{top}==<the pinned version>'. If {module} is your own module, "
        "look for a circular import or a file of yours that shadows the package's name.",
    )


def _maybe_subpackage(module: str, name: str) -> bool:
    """Whether ``name``, missing from the package ``module``, may be a subpackage of it: spelled as a module is
    (lower case), and not a name the release table knows as an object of ``module`` (its own reading says when
    that came or went)."""
    return (
        name.isidentifier()
        and name == name.lower()
        and not name.startswith("_")
        and api_history.lookup(module, name) is None
    )


def _subpackage(module: str, name: str, hits: list) -> tuple[str, str]:
    """CPython's "module 'pkg' has no attribute 'sub'" where sub may be a subpackage: a package's __init__ binds
    only the subpackages it (or a module it imports) imports, and releases change which; the table's module rows
    say when ``module.name`` is one some release has."""
    known = api_history.some_release_has_module(f"{module}.{name}")
    what = (
        f"{module}.{name} is a subpackage of some {module.split('.')[0]} releases"
        if known
        else f"{module}.{name} is likely a subpackage"
    )
    return (
        f"{module} has no {name}: {what} that the installed release's {module}/__init__.py "
        "does not import, or a name added or removed between releases" + on_ranks(hits),
        f"Import the subpackage explicitly before using it: from {module} import {name} (or import "
        f"{module}.{name}); attribute access on the package finds a subpackage only once something imported it, "
        f"and which subpackages {module}/__init__.py imports changes between releases. If {name} is not a "
        f"subpackage, the installed {module.split('.')[0]} is older or newer than the code: compare `pip show "
        f"{module.split('.')[0]}` with the version the project pins and install that one.",
    )


# torch names a library's release imported and a later torch removed: who imports it says what to upgrade
_TORCH_NAMES_LIBRARIES_IMPORTED = {
    # torch/optim/lr_scheduler.py's warning text, gone in torch 1.8; transformers' trainer_pt_utils.py imported it
    # (3.x releases) until huggingface/transformers#8979 guarded the import
    "SAVE_STATE_WARNING": (
        "transformers (trainer_pt_utils.py, 3.x releases)",
        "torch 1.8 removed SAVE_STATE_WARNING from torch.optim.lr_scheduler, and transformers' trainer_pt_utils.py "
        "imported it until huggingface/transformers#8979: upgrade transformers (pip install -U 'transformers>=4.3', "
        "or the newest release the project allows), or install a torch before 1.8 with the transformers the "
        "project pins.",
    ),
}


def _scripted(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    package = facts["ts_package"]
    method = facts.get("ts_method") or facts.get("ts_method2") or "?"
    return (
        f"{package} calls Tensor.{method}, which the installed PyTorch does not have: {package} was built for a "
        "newer PyTorch than the one it runs with" + on_ranks(hits),
        f"TorchScript compiles {package}'s code when it is imported and finds no Tensor.{method} in this "
        f"PyTorch. Install the {package} release made for your PyTorch (pip show torch; its wheel index for that "
        f"torch and CUDA, e.g. pip install {package} -f https://data.pyg.org/whl/torch-<version>+<cuda>.html for "
        f"PyG's packages, or pip install '{package}==<an older release>'), or upgrade PyTorch to the one "
        f"{package} needs.",
    )


def _shown_release_has_it(hits: list[Hit], ctx: Context) -> tuple[api_history.Change, str] | None:
    """(the table's row, the release the log prints installed) where the releases' table says the release of the
    package the log prints has the name the run did not find: the log contradicts the table's reading that the
    installed release is too old or too new."""
    for hit in hits:
        row = api_history.known(hit.facts)
        if row is not None and (shown := api_history.has_it(row, ctx.facts)):
            return row, shown
    return None


def _release_has_it(row: api_history.Change, shown: str) -> tuple[str, str]:
    what = f"{row.module}.{row.name}" if row.name else f"the module {row.module}"
    releases = api_history.load()[row.package][0]
    since, until = (spelled(releases, v) if v else "" for v in (row.added, row.removed))
    if since and until:
        had = f"{row.package} had from {since} until {until} removed it"
    else:
        had = (
            f"{row.package} has had since {since}" if since else f"{row.package} had until {until} removed it"
        )
    other, fix = api_history.imported_elsewhere(row.package, shown)
    return f"the run did not find {what}, which {had}, and {other}", fix


def _decided(hits: list[Hit], ctx: Context) -> bool:
    """Certain on a specific anchor (pip's conflict aside), or on a name the releases' table has for its package;
    likely where a torch minimum was refused beside a torch the log shows meeting it (which environment ran the
    check is not in the log), and where the table's torch name is missing beside a torch the log shows having it."""
    if _newer_torch_shown(merged(hits), ctx) or _shown_release_has_it(hits, ctx):
        return False
    return (
        installers.conflict_decided(hits, ctx)
        or any(api_history.decisive(h.facts) for h in hits)
        or any(module.decisive(h.facts, ctx.facts) for module in _CHANGES[1:] for h in hits)
        or any(deepspeed_pydantic.decisive(h.facts) for h in hits)
    )


_decided.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide
_decided.raised_by = "a name some releases of its package have (api_history.tsv)"  # type: ignore[attr-defined]


# pytorch_lightning's subpackages, which the unified lightning package (1.8+, lightning/__init__.py imports
# lightning.pytorch) keeps under lightning.pytorch, not at its top: lightning.callbacks does not exist
LIGHTNING_PL_PARTS = frozenset(
    "accelerators callbacks core loggers loops plugins profilers strategies trainer tuner utilities".split()
)


def _lightning_namespace(module: str, hits: list[Hit]) -> tuple[str, str]:
    part = module.split(".", 1)[1]
    return (
        f"lightning has no module {module}: in the lightning package the PyTorch Lightning API is under "
        f"lightning.pytorch, so it is lightning.pytorch.{part}" + on_ranks(hits),
        f"Import it from lightning.pytorch: from lightning.pytorch.{part} import ... (lightning.pytorch is what "
        f"pytorch_lightning was: import lightning.pytorch as pl). Code written for the pytorch-lightning package "
        f"keeps pytorch_lightning.{part} with pip install pytorch-lightning; use one of the two names throughout, "
        "since the Trainer refuses callbacks and modules of the other.",
    )


DEPENDENCY_VERSION = Recogniser(
    kind="dependency_version",
    title="package version the code does not support",
    templates=(
        "transformers:is-required-for-normal-functioning-of",
        "accelerate:fsdp-requires-pytorch",
        # accelerate's other torch minimums (accelerator.py, utils/fsdp_utils.py) and ZeRO-3's leaf modules
        # (deepspeed/runtime/zero/stage3.py): the installed torch is older than the one named, or a pre-release of it
        "accelerate:fsdp2-requires-pytorch",
        "accelerate:merge-fsdp-weights-requires-pytorch",
        "accelerate:tried-to-use-tp-but-torch",
        "deepspeed:leaf-module-requires-pytorch",
        "accelerate:deepspeed-tp-requires-deepspeed-please-update-2",
        "lightning:pytorch-requires-deepspeed-detected-deepspeed-version",
        "transformers:using-the-trainer-with-pytorch-requires",
        "system:cannot-import-name",
        # api_history.py: CPython 3.6's line without the module, read with the traceback's `from ... import` line
        # on the exception that started the failure (verdict.py)
        api_history.BARE_TEMPLATE,
        # config_keys.py: a key an OpenMMLab class reads that its config lacks, read on that exception too
        config_keys.TEMPLATE,
        "system:python-no-module-named",  # a submodule of a library that moves its modules between releases
        "system:module-has-no-attribute",
        "system:object-has-no-attribute",
        # api_members.py: a member of a library's class some releases have and others not (api_members.tsv), read
        # on the exception that started the failure when nothing else covers it (verdict.py)
        "system:type-object-has-no-attribute",
        "torch_native:jit-nonexistent-attribute-or-method",
        "torch_native:jit-object-has-no-attribute-or-method",
        "third_party:pybind11-incompatible-function-arguments",
        "accelerate:deepspeed-tp-requires-deepspeed-please-update",
        "accelerate:deepspeed-version-must-be-please-update",
        "accelerate:deepspeed-version-must-be-to-use",
        "accelerate:deepspeed-mlu-version-must-be-please",
        "accelerate:deepspeed-musa-version-must-be-please",
        "deepspeed:torch-autocast-is-enabled-outside-deepspeed-2",
        "torch_native:dynamo-python-not-yet-supported",
        "torch_native:compile-not-supported-on-python",
        *version_refusals.TEMPLATES,
        "system:python-unexpected-keyword-argument",  # a flag or argument a library removed (api_changes.py)
        # python_syntax.py: a newer Python's syntax on the line CPython's bare "invalid syntax" shows, read on the
        # exception that started the failure (uncovered.py)
        python_syntax.TEMPLATES[0],
        "third_party:numpy-expired-alias",
        "third_party:numpy-2-expired-attribute",
        *(
            t for module in _CHANGES for t in module.TEMPLATES
        ),  # api_history.py: a name's release from the table
        # pip's, uv's and conda's resolvers: requirements that exclude each other
        *installers.CONFLICT_TEMPLATES,
        installers.IMPIMPORTER_TEMPLATE,
        *installers.PIP_METADATA_TEMPLATES,
        *installers.PIP_EDITABLE_TEMPLATES,
        *installers.NUMPY_TEMPLATES,
        "system:ld-undefined-symbol",  # a conda torch's libtorch_cpu.so without MKL 2024.1's iJIT_* (libraries.py)
        # transformers' torch minimum and CPython's builtin generics before 3.9 (missing_packages.py)
        missing_packages.TORCH_TOO_OLD_TEMPLATE,
        missing_packages.BUILTIN_GENERIC_TEMPLATE,
        *torch_pinned_builds.TEMPLATES,  # torchao's refusal of its kernels under another torch
        *deepspeed_pydantic.TEMPLATES,  # pydantic 2 refusing DeepSpeed's pydantic 1 models (deepspeed_pydantic.py)
        *gym_registry.TEMPLATES,  # gymnasium's registry: an environment id no imported package registered
    ),
    anchors=(
        "is required for a normal functioning of this module",
        libraries.MKL_SYMBOL_ANCHOR,
        "requires PyTorch >=",
        "requires deepspeed>=",
        "requires deepspeed >=",  # accelerate 1.x's TP check, with the space
        "requires DeepSpeed >=",
        "requires `accelerate>=",
        # accelerate/accelerator.py, utils/dataclasses.py: the DeepSpeed it needs (for CUDA, MLU, MUSA, MoE)
        "DeepSpeed version must be >=",
        "DeepSpeed MLU version must be >=",
        "DeepSpeed MUSA version must be >=",
        *_MISSING_NAMES,
        "module 'torch",
        "AttributeError: type object '",  # api_members.py reads it (a class's member); no line is a hit here
        config_keys.ANCHOR,  # config_keys.py reads it (MMEngine's class built from a config); no line is a hit here
        python_syntax.ANCHOR,  # python_syntax.py reads it (the source line under it); no line is a hit here
        "Tried to access nonexistent attribute or method",
        "object has no attribute or method '",
        # deepspeed/runtime/torch_autocast.py, 0.17.2-0.17.5 (validate_nested_autocast; 0.17.6 made it a warning)
        "torch.autocast is enabled outside DeepSpeed, but not in the DeepSpeed config",
        # torch/_dynamo/eval_frame.py, torch/__init__.py: torch.compile and the Python version (certain: printed
        # for nothing else)
        "not yet supported for torch.compile",
        "torch.compile is not supported on Python",
        *(anchor for anchor, _ in version_refusals.REFUSALS),
        # api_changes.py: a keyword a library removed or renamed in a known release (Lightning's Trainer flags,
        # transformers' evaluation_strategy), read only for those names; NumPy's own text for its removed aliases
        "() got an unexpected keyword argument '",
        "object has no attribute 'eval_strategy'",
        "was a deprecated alias for the builtin",
        *(anchor for module in _CHANGES for anchor in module.ANCHORS),
        api_history.NUMPY2_ANCHOR,
        *installers.CONFLICT_ANCHORS,
        installers.IMPIMPORTER_ANCHOR,
        *installers.PIP_METADATA_ANCHORS,
        *installers.PIP_EDITABLE_ANCHORS,
        *installers.NUMPY_ANCHORS,
        missing_packages.TORCH_TOO_OLD_ANCHOR,
        missing_packages.BUILTIN_GENERIC_ANCHOR,
        *simulators.ANCHORS,  # a MuJoCo struct field another release has (simulators.py)
        *gym_registry.ANCHORS,  # an environment id gymnasium has not registered (gym_registry.py)
        *torch_pinned_builds.ANCHORS,  # a build for one torch refused or aborting under another
        *deepspeed_pydantic.ANCHORS,  # a pydantic major the code was not written for (DeepSpeed's config models)
    ),
    # a name that cannot be imported is also a circular import or a file shadowing the package, an attribute a
    # library's module or object lacks also a bug of that release: only likely
    # a torch module's missing attribute may be a name torch removed, or a build without that part (likely too);
    # a scripted installed package calling a Tensor method torch lacks is the versions disagreeing: certain
    generic=(
        *_MISSING_NAMES,
        "module 'torch",
        "AttributeError: type object '",
        config_keys.ANCHOR,
        python_syntax.ANCHOR,
        "() got an unexpected keyword argument '",
        "object has no attribute 'eval_strategy'",
        *installers.CONFLICT_GENERIC,
        *installers.NUMPY_GENERIC,
        # another class than a builtin subscripted prints the same words
        missing_packages.BUILTIN_GENERIC_ANCHOR,
        # a field of the caller's own misspelt prints the same words, and the log may not say which release moved
        *simulators.ANCHORS,
        # a misspelt environment id prints the same words as a package not installed or not imported
        *gym_registry.ANCHORS,
        *torch_pinned_builds.ANCHORS,
        *deepspeed_pydantic.GENERIC,
        *(anchor for module in _CHANGES for anchor in module.GENERIC),
        *version_refusals.GENERIC,  # a refusal another source words the same way (version_refusals.py)
    ),
    # pip's conflict is likely when pip adds that one of the packages has no build for this environment at all
    # certain too on a missing name the table of released names (kinds/api_history.py) has for its package
    confirm=_decided,
    requires_beside=model_type_releases.REQUIRES_BESIDE,
    span=1,  # TorchScript names the file it compiled on the line after its message
    # accelerate's bf16 check names a torch version and a device in one message: bf16_unsupported reads it
    reject=R(r"requires PyTorch >= [\d.]+ and a supported device|" + gym_registry.NOT_AN_ID),
    match=R(
        r"is required for a normal functioning|requires [`'\"]?[A-Za-z][\w-]{1,40}[`'\"]? ?(?:version )?>= ?\d|"
        r"DeepSpeed (?:MLU |MUSA )?version must be >= ?\d|"
        r"cannot import name '\w{1,100}' from '[\w.]{1,200}'|"
        + _NO_SUBMODULE.pattern
        + "|"
        + _INCOMPATIBLE.pattern
        + "|"
        + _NO_ATTRIBUTE.pattern
        + "|"
        + _DS_OBJECT.pattern
        + "|"
        + _SCRIPTED.pattern
        + r"|(?P<ds_outer_autocast>torch\.autocast is enabled outside DeepSpeed, but not in the DeepSpeed config)|"
        + _COMPILE_PYTHON.pattern
        + "|"
        + _REFUSED.pattern
        + "|"
        + "|".join(module.CHANGE.pattern for module in _CHANGES)
        + "|"
        + installers.CONFLICT.pattern
        + "|"
        + installers.IMPIMPORTER.pattern
        + "|"
        + installers.PIP_METADATA.pattern
        + "|"
        + installers.PIP_EDITABLE.pattern
        + "|"
        + installers.NUMPY.pattern
        + "|"
        + missing_packages.TORCH_TOO_OLD.pattern
        + "|"
        + missing_packages.BUILTIN_GENERIC.pattern
        + "|"
        + libraries.MKL_SYMBOL.pattern
        + "|"
        + api_history.IN_TABLE
        + "|"
        + simulators.FIELDS.pattern
        + "|"
        + gym_registry.MATCH.pattern
        + "|"
        + torch_pinned_builds.MATCH.pattern
        + "|"
        + deepspeed_pydantic.CHANGE.pattern
    ),
    facts=(
        _REFUSED,
        *(module.CHANGE for module in _CHANGES),
        api_history.MISSING,
        api_history.DISTRIBUTED_NAME,
        _COMPILE_PYTHON,
        _NO_SUBMODULE,
        _NORMAL_FUNCTIONING,
        _REQUIRES,
        R(r"(?P<package>DeepSpeed) (?:MLU |MUSA )?version must be >= ?(?P<needed>\d+(?:\.\w+)*)"),
        _CANNOT_IMPORT,
        _INCOMPATIBLE,
        _DETECTED,
        _NO_ATTRIBUTE,
        R(rf"(?P<no_attribute>module '(?:(?:{LIBRARIES})[\w.]*|{TORCH_MODULE})' has no attribute)"),
        _SCRIPTED,
        _DS_OBJECT,
        *installers.CONFLICT_FACTS,
        installers.PIP_METADATA,
        installers.PIP_EDITABLE,
        *installers.NUMPY_FACTS,
        libraries.MKL_SYMBOL,
        missing_packages.TORCH_TOO_OLD,
        simulators.FIELDS,
        gym_registry.MATCH,
        *torch_pinned_builds.FACTS,
        deepspeed_pydantic.CHANGE,
    ),
    also=(
        # pip_pins.py: a pin the index does not offer is also a release without a build for this Python
        Alternative(
            "no_matching_wheel",
            "a release that exists, without a build for this Python or platform",
            "pip download <package>==<version> --no-deps (or the release's files on pypi.org) lists the Pythons and "
            "platforms it was built for: use one of those Pythons, or a release built for yours.",
            when=("pin_package",),
        ),
        Alternative(*api_changes.MAX_LEN_IN_LIBRARY, when=("tok_class",)),
        # neighbour_releases.py: RDKit's None is also a molecule no RDKit reads
        Alternative(
            "bad_training_data",
            "a molecule in the data that no RDKit reads (a malformed SMILES or an impossible valence)",
            "Find the molecule (print each SMILES where Chem.MolFromSmiles returns None) and skip it (if mol is None: "
            "continue) or fix it in the data.",
            when=("rdkit_none",),
        ),
        Alternative(*lightning_defaults.FRAMEWORK_DEFAULT, when=("pl_none_flag",)),
        Alternative(
            "input_shape_mismatch",
            "the script's own scalar indexed, a value already reduced to one number",
            "Drop the [0] on the line the traceback names, or keep the value a vector (no .sum()/.mean() before "
            "indexing it); read a 0-dim tensor with .item().",
            when=("zero_dim_index", "numpy_zero_dim"),
        ),
        Alternative(
            "dtype_mismatch",
            "an in-place op of the script's own that mixes dtypes",
            "Make both operands the tensor's dtype on the line the traceback names (y.to(x.dtype)), or write the "
            "op out of place (x = x + y) so the result is promoted.",
            when=("cast_to",),
        ),
        Alternative(
            "library_version_bug",
            "a bug of the release installed",
            "Search the package's issues for the message: a release that broke it is usually fixed in the next "
            "one (pip install -U <package>) or avoided by the one before it.",
            when=("ds_class", "acc_class"),
        ),
        Alternative(
            "broken_install",
            "an installation of the package that lacks its own pieces",
            "Reinstall it in the environment the job runs in (pip install --force-reinstall <package>), and "
            "check that no folder of the same name (a source checkout, a stale build) shadows it: python -c "
            "'import <package>; print(<package>.__file__)'.",
            when=("missing_submodule",),
        ),
        Alternative(
            "backend_unavailable",
            "a PyTorch built without torch.distributed (its names are bound only when it is available)",
            "python -c 'import torch.distributed as d; print(d.is_available())' says False on such a build: install "
            "a PyTorch wheel with distributed support (the Linux wheels of pytorch.org have it).",
            when=("torch_distributed_name",),
        ),
        Alternative(
            "no_matching_wheel",
            "one of the packages has no build for this Python, platform or index at all",
            "Check each package the report names for a build that fits: pip download <package>==<version> "
            "--no-deps (uv: uv pip install <package>==<version>) says which one has none for this Python or "
            "platform; then choose a Python or a release that has one.",
            when=("resolver",),
        ),
        Alternative(
            "driver_too_old",
            "the NVIDIA driver's CUDA version (conda's __cuda) below the one a package's build needs",
            "nvidia-smi's 'CUDA Version' is the newest CUDA the driver runs: install builds for a CUDA at or below "
            "it (pytorch-cuda=<that version>, a cudatoolkit pin), or update the driver.",
            when=("conda_cuda",),
        ),
    ),
    kind_by_asker=asking_frame.OWN_CODE,
    describe=_dependency,
)


def _accelerate_8bit(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "accelerate refused to train an 8-bit model spread over several GPUs: the releases 0.17-0.19 refuse any "
        "8-bit model whose device_map spans devices" + on_ranks(hits),
        "Upgrade accelerate to 0.20.0 or newer (pip install -U accelerate): from that release a model spread "
        "over the GPUs by device_map trains in one process (naive pipeline parallelism, python train.py, not a "
        "multi-process launch). Under a multi-process launch each process must load its own copy on its own GPU "
        "instead: device_map={'': int(os.environ['LOCAL_RANK'])}.",
    )


def _wrapped_optimizer(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    wrapper = first(hits, "wrapper", "the optimizer")
    summary = (
        f"a learning-rate scheduler was given {wrapper}, an optimizer wrapper, where it checks for a "
        "torch.optim.Optimizer" + on_ranks(hits)
    )
    if first(hits, "ds_wrapper"):
        fix = (
            f"{wrapper} is DeepSpeed's ZeRO / mixed-precision wrapper around your optimizer, not a torch "
            "Optimizer. DeepSpeed's own schedulers unwrap it (deepspeed/runtime/lr_schedules.py get_torch_optimizer, "
            "in the releases since 0.6.7 at least): an older DeepSpeed whose scheduler refuses it is a bug of that "
            "release, so upgrade it (pip install -U deepspeed). With a torch scheduler, build it on the optimizer "
            'inside (engine.optimizer.optimizer), or let deepspeed.initialize create it: a "scheduler" section '
            "in the DeepSpeed config, or deepspeed.initialize(..., lr_scheduler=a callable taking the optimizer)."
        )
    else:
        fix = (
            f"{wrapper} wraps your optimizer (accelerate's AcceleratedOptimizer, a mixed-precision or ZeRO "
            "wrapper): create the scheduler on the torch optimizer before it is wrapped, or on the one inside "
            "(wrapper.optimizer), or upgrade the library whose scheduler refuses its own wrapper."
        )
    return summary, fix


def _unbuilt_objects(hits: list[Hit]) -> tuple[str, str]:
    package = first(hits, "build_package") or "the package"
    return (
        f"the build of {package} links object files it never compiled ({first(hits, 'missing_object').strip()}): "
        "its build script is broken in this release" + on_ranks(hits),
        f"The link step found no object files from the compile step before it, which reported no error: the "
        f"build of this {package} release (its setup.py, often its ninja build) does not put them where it links "
        f"from. Install another release of {package} (the one before it, or a newer one that fixed it: its issues "
        "name the broken release), a prebuilt wheel, or build without ninja where the package allows it "
        "(USE_NINJA=0 for torch's extension builder). If the paste was cut, look above for the first "
        "compiler error: a compile that failed leaves no object files either.",
    )


def _zero3_not_half(hits: list[Hit]) -> tuple[str, str]:
    return (
        "DeepSpeed ZeRO-3 with fp16 found a model parameter that is not fp16: one created outside "
        "deepspeed.zero.Init in float32 (a library that resized or added a layer, e.g. transformers' "
        "resize_token_embeddings before its 2021 fix)" + on_ranks(hits),
        "DeepSpeed 0.3.16 checks, under ZeRO-3 with fp16, that every parameter is already half: one made after "
        "the model was partitioned, in float32, fails it. Upgrade the library that created it (pip install -U "
        "transformers: its resize_token_embeddings keeps the embedding's dtype in releases since May 2021) "
        "and DeepSpeed (pip install -U deepspeed: the check is gone after 0.3.16).",
    )


def _private_call(hits: list[Hit]) -> tuple[str, str]:
    function, keyword = first(hits, "private_call"), first(hits, "unexpected_kw")
    return (
        f"{function}() got an unexpected keyword argument '{keyword}': a library's internal call whose signature "
        "changed between releases (a bug of the release installed, or two packages at versions that disagree)"
        + on_ranks(hits),
        f"{function} is a private function: user code does not call it, the library does (or a package built on "
        "it), and the caller and the callee disagree on its arguments. Upgrade the package it belongs to to the "
        "release that fixed it (pip install -U <package>; its issues name the broken release), or install the "
        "pair of versions the calling package pins.",
    )


def _set_epoch(hits: list[Hit]) -> tuple[str, str]:
    summary = (
        "set_epoch was called on the DataLoader's sampler, a SequentialSampler, not on a DistributedSampler: a "
        "DataLoader given a batch_sampler keeps a default SequentialSampler as .sampler, and the DistributedSampler "
        "sits inside the batch sampler, where an epoch hook of some releases did not look (mmcv before 1.1, "
        "Lightning before 0.7.6 under DDP)" + on_ranks(hits)
    )
    fix = (
        "Call set_epoch where the DistributedSampler is: loader.batch_sampler.sampler.set_epoch(epoch), or on the "
        "sampler object you built. When a framework's hook calls it, upgrade the framework: mmcv >= 1.1.0 "
        "(DistSamplerSeedHook, open-mmlab/mmcv#484) or Lightning >= 0.7.6 (its DDP epoch loop, #1734)."
    )
    return summary, fix


def _zero3_plain_dict(hits: list[Hit]) -> tuple[str, str]:
    return (
        "DeepSpeed ZeRO-3's forward hook found a module whose parameters are torch's plain dict, not "
        "DeepSpeed's ZeROOrderedDict: a module attached after deepspeed.initialize (a PEFT/LoRA adapter, a head "
        "added later) under torch >= 2.5, which the DeepSpeed release installed does not handle"
        + on_ranks(hits),
        "ZeRO-3 replaces every module's _parameters with its ZeROOrderedDict when the engine is built and sets "
        "_in_forward on it before each forward; since torch 2.5 a module's _parameters is a plain dict, which "
        "takes no such attribute, so any module that was not there at deepspeed.initialize crashes here. "
        "Upgrade DeepSpeed to a release that wraps such modules lazily (deepspeedai/DeepSpeed#8009: pip install "
        "-U deepspeed), or attach every submodule (adapters included) before deepspeed.initialize / "
        "accelerator.prepare, building new parameters inside deepspeed.zero.Init() so ZeRO-3 partitions them; "
        "a torch older than 2.5 also avoids the crash, not the unpartitioned parameters.",
    )


def _internal_assert(hits: list[Hit]) -> tuple[str, str]:
    where = first(hits, "assert_file")
    return (
        "an internal check of PyTorch itself failed (INTERNAL ASSERT FAILED"
        + (f" in {where.split('/')[-1]}" if where else "")
        + "): a bug of the PyTorch release installed, which the code reaches (often through an in-place "
        "operation, a view or a wrapper such as DataParallel)" + on_ranks(hits),
        "TORCH_INTERNAL_ASSERT guards torch's own invariants: the code hit a path that release gets wrong. "
        "Search PyTorch's issues for the assert's text (the condition and file name): most are fixed in a later "
        "release (pip install -U torch), and a project written against an older one usually still runs on the "
        "release it pins (its README, requirements file or container image; a regression is avoided by the "
        "release before it). Until then, the line in the traceback names the operation to change (an in-place "
        "op on a view: write it out of place, x = x * mask instead of x *= mask).",
    )


def _start_method(hits: list[Hit]) -> tuple[str, str]:
    return (
        "multiprocessing's start method was set a second time (set_start_method without force=True), after "
        "something run before it had already fixed one: most often a library whose release sets it on import "
        "or in its own entry point" + on_ranks(hits),
        "CPython lets the start method be chosen once per process and refuses it when one is already set; "
        "get_start_method() and get_context() fix the default too, and so do libraries that call them on import or in their launchers. The traceback's "
        "set_start_method call names who sets it again: in your own script, call it once, first thing under "
        "`if __name__ == '__main__':` before importing the libraries, or write "
        "torch.multiprocessing.set_start_method('spawn', force=True); in a library's code, upgrade it (the "
        "fixed releases pass force=True or check get_start_method(allow_none=True) first).",
    )


def _invalid_storage(hits: list[Hit]) -> tuple[str, str]:
    return (
        "a library read the raw data pointer of a tensor that has no storage of its own (a DTensor shard of "
        "FSDP2 or tensor parallelism, a quantized tensor subclass, an XLA/Neuron tensor) while saving or "
        "loading it: that release of the library does not handle such tensors" + on_ranks(hits),
        "torch refuses data_ptr() on a storage without data that is not a meta tensor's (torch/csrc/"
        "StorageMethods.cpp); user code rarely asks for it, the saving code does (safetensors, transformers' "
        "shared-tensor check, FSDP2's state-dict hooks). Upgrade the library that saves: transformers 4.37.3 "
        "fixed it for the Trainer's checkpoints on XLA/Neuron (transformers#27578), and later releases' "
        "save_pretrained gather tensor-parallel weights first (pip install -U transformers accelerate). "
        "Otherwise gather full tensors before saving (DTensor.full_tensor(), get_model_state_dict(..., "
        "options=StateDictOptions(full_state_dict=True))), or save with torch.save instead of safetensors "
        "(save_safetensors=False / safe_serialization=False).",
    )


def _unscaled_twice(hits: list[Hit]) -> tuple[str, str]:
    return (
        "GradScaler.unscale_ ran twice on one optimizer before update(), as the transformers Trainer with the "
        "accelerate of mid-2023 did itself under fp16 (gradient accumulation, auto_find_batch_size)"
        + on_ranks(hits),
        "With the transformers Trainer (or a project built on it): upgrade transformers and accelerate (pip "
        "install -U transformers accelerate; the double unscale of transformers 4.30 with accelerate 0.20 was "
        "fixed by transformers#24415), or turn off auto_find_batch_size. In your own loop: call "
        "scaler.unscale_(optimizer) at most once per step, and scaler.update() on every iteration that "
        "unscaled, also when the step is skipped.",
    )


def _distutils_version(hits: list[Hit]) -> tuple[str, str]:
    return (
        "torch.utils.tensorboard of torch 1.9/1.10 reads distutils.version through setuptools, which setuptools "
        "59.6 and newer no longer provide (pytorch#69894)" + on_ranks(hits),
        "Pin setuptools below 59.6 (pip install setuptools==59.5.0), or upgrade torch to 1.11 or newer, whose "
        "tensorboard import uses packaging's version instead; a container or environment file that pins torch "
        "1.10 needs the setuptools pin beside it.",
    )


def _conv_padding_mode(hits: list[Hit]) -> tuple[str, str]:
    return (
        "a convolution unpickled from a model saved whole under torch 1.0 has no padding_mode, which torch 1.1.0's "
        "Conv forward reads (pytorch#20756; torch fixed it with a __setstate__ that fills the attribute in, "
        "pytorch#21687)" + on_ranks(hits),
        "Upgrade torch past 1.1.0 (pip install -U torch), whose convolutions set padding_mode='zeros' on old "
        "pickles; or, on 1.1.0, set it after loading: for m in model.modules(): if isinstance(m, "
        "nn.modules.conv._ConvNd): m.padding_mode = 'zeros'; and save a state_dict rather than the whole model.",
    )


def _wuerstchen_text_encoder_to(hits: list[Hit]) -> tuple[str, str]:
    return (
        "OneTrainer's Würstchen and Stable Cascade setup calls model.text_encoder_to when the text encoder is not "
        "trained (BaseWuerstchenSetup.prepare_text_caching, since the dataloader refactor of January 2026), a "
        "method its WuerstchenModel does not have: it has prior_text_encoder_to and decoder_text_encoder_to "
        "(Nerogar/OneTrainer#1558 fixed the call)" + on_ranks(hits),
        "Update OneTrainer (git pull in its folder, then its update script) to a revision with #1558, which calls "
        "model.prior_text_encoder_to there; on an older checkout make that one-line change in "
        "modules/modelSetup/BaseWuerstchenSetup.py, or train the text encoder, which skips the call.",
    )


def _crnn_alphabet(hits: list[Hit]) -> tuple[str, str]:
    return (
        "crnn.pytorch's synthetic text generator (generator.py gen_image: indices = [self.alpha.index(c) for c in "
        "text]) drew a character its alphabet lacks: before yizt/crnn.pytorch 493fb1f (2020-06-22) "
        "fontutils.get_all_font_chars kept every visible character of each font, not only those of the "
        "dictionary (all_word.txt or your own), so str.index raised substring not found" + on_ranks(hits),
        "Update crnn.pytorch (git pull: fontutils.py now keeps only the dictionary's characters, cfg.word), or make "
        "that change in get_all_font_chars; with labels of your own, every character of every label must be in "
        "the alphabet file.",
    )


def _no_fg_bg_rois(hits: list[Hit]) -> tuple[str, str]:
    return (
        "the ROI sampler of faster-rcnn.pytorch (lib/model/rpn/proposal_target_layer_cascade.py) found no "
        "foreground and no background proposal for an image: before March 2018 its batch loader "
        "(lib/roi_data_layer/roibatchLoader.py) cropped images of extreme aspect ratio into boxes of no area "
        "(fixed in 796d191 and e31ccc3); in a current checkout or a fork, ground-truth boxes of no area or "
        "outside the image, or proposals gone NaN, leave every overlap outside both ranges" + on_ranks(hits),
        "Update faster-rcnn.pytorch (git pull; forks: take roibatchLoader.py's trim_size and gt_boxes[:, :4].clamp_ "
        "fixes), then check the annotations of the images in that batch: x2 > x1 and y2 > y1, inside the image "
        "(VOC boxes are 1-based: a 0 coordinate wraps after the loader subtracts 1); if the losses were NaN "
        "before it, lower the learning rate.",
    )


def _kge_tie_handling(hits: list[Hit]) -> tuple[str, str]:
    return (
        "LibKGE's entity-ranking evaluation found the scores of the same triples to differ between the model's "
        "SPO and its SP_/_PO scoring (kge/job/eval_entity_ranking.py, the tie check of uma-pi1/kge#224, "
        "2021-09-13, which raised until 302c5a6 of 2021-11-02 made it warn_only): TransE scored SP_/_PO with "
        "torch.cdist, whose matrix-multiplication path for euclidean distances rounds differently (pytorch#42479), "
        "until 5127cf2 (2021-10-04)" + on_ranks(hits),
        "Update LibKGE (git pull: TransE's cdist uses compute_mode='donot_use_mm_for_euclid_dist' from 5127cf2, "
        "and the check only warns from 302c5a6), or set entity_ranking.tie_handling.warn_only: True; for a model "
        "of your own, make its score_emb give the same score for spo and sp_/_po, or raise "
        "entity_ranking.tie_handling.atol and rtol.",
    )


# Lib/argparse.py _get_value: "argument {option}: invalid {type} value: {value}", the type by its repr when it
# has no __name__ (typing.Union[str, NoneType] for Optional[str])
_TYPED_OPTION = R(
    r"argument (?P<typed_option>-{1,2}[\w-]{1,60}): invalid (?P<typing_type>typing\.[\w\[\], .]{1,80}) value"
)


def _typed_option(hits: list[Hit]) -> tuple[str, str]:
    option, declared = first(hits, "typed_option"), first(hits, "typing_type")
    program = first(hits, "typed_program")
    who = f"{program.strip()}'s" if program else "the program's"
    return (
        f"{who} own parser declares {option} with type {declared}, which cannot convert the text given: "
        "it refuses every value, whatever is passed" + on_ranks(hits),
        f"Not the command's fault: the option's type is a typing hint, not a function (argparse calls type(value)). "
        f"Upgrade the program that defines {option} (pip install -U <package>; accelerate fixed its launch "
        "command's --main_process_ip/--main_process_port in commit 703c702, March 2021), or leave the option out "
        "and set the value another way (its config file, or the environment variable it reads).",
    )


def _release_bug(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    own = asking_frame.own_code(hits, ctx)
    if own is not None:
        return own
    if first(hits, "seed_all") or first(hits, "seed_generators"):
        return seed_devices.seed_all_devices(hits)
    if first(hits, "typed_option"):
        return _typed_option(hits)
    if first(hits, "distutils_version"):
        return _distutils_version(hits)
    if first(hits, "conv_padding_mode"):
        return _conv_padding_mode(hits)
    if first(hits, "wuerstchen_te_to"):
        return _wuerstchen_text_encoder_to(hits)
    if first(hits, "crnn_alpha_index"):
        return _crnn_alphabet(hits)
    if first(hits, "no_fg_bg_rois"):
        return _no_fg_bg_rois(hits)
    if first(hits, "kge_ties"):
        return _kge_tie_handling(hits)
    if first(hits, "unscaled_twice"):
        return _unscaled_twice(hits)
    if first(hits, "invalid_storage"):
        return _invalid_storage(hits)
    if first(hits, "start_method_set"):
        return _start_method(hits)
    if first(hits, "zero3_plain_dict"):
        return _zero3_plain_dict(hits)
    if any(first(hits, key) for key in precision_releases.FACTS):
        return precision_releases.explain(hits)
    if any(first(hits, key) for key in varlen_attention.FACTS):
        return varlen_attention.explain(hits)
    if first(hits, "ray_scaling_dict"):
        return ray_cluster.scaling_config_dict(hits)
    if first(hits, "megatron_softmax"):
        return kernel_release_bugs.megatron_softmax(hits)
    if first(hits, "cudnn_sdpa_no_plan"):
        return kernel_release_bugs.cudnn_sdpa(hits)
    if first(hits, "ipc_invalid_argument"):
        return kernel_release_bugs.ipc_noncurrent(hits)
    if any(first(hits, key) for key in data_loader_releases.FACTS):
        return data_loader_releases.explain(hits)
    if any(first(hits, key) for key in parallel_releases.FACTS):
        return parallel_releases.explain(hits)
    if any(first(hits, key) for key in fsdp_releases.FACTS):
        return fsdp_releases.explain(hits)
    if any(first(hits, key) for key in post_training_releases.FACTS):
        return post_training_releases.explain(hits)
    if first(hits, "internal_assert"):
        return _internal_assert(hits)
    if first(hits, "seq_sampler"):
        return _set_epoch(hits)
    if first(hits, "optimizer_class"):
        return optimizer_subclass.no_step_hooks(hits)
    if first(hits, "paged_refused") or first(hits, "paged_unsupported"):
        return paged_optimizers.explain(hits)
    if first(hits, "trl_padding_free"):
        return trl_checks.padding_free(hits)
    if first(hits, "trl_no_args"):
        return trl_checks.no_args(hits)
    if first(hits, "miditok_unknown_chord"):
        return midi_tokenizers.unknown_chord(hits)
    if first(hits, "zero3_unpartitioned"):
        return zero3_params.unpartitioned_parameter(hits)
    if first(hits, "zero3_unconverted"):
        return zero3_params.unconverted_parameter(hits, "hf_param_count" in ctx.facts)
    if any(first(hits, key) for key in zero3_prefetch.FACTS):
        return zero3_prefetch.explain(hits)
    if any(first(hits, key) for key in ("adahessian_name", "fa_hook", "radam_ratio", "final_epoch")):
        return research_code.explain(hits)
    helper = loop_helpers.reading(hits)
    if helper is not None:
        return helper
    if first(hits, "jpeg_conversion"):
        return image_files.cmyk_jpeg(hits)
    if first(hits, "missing_object"):
        return _unbuilt_objects(hits)
    if first(hits, "kernel_fault"):
        summary, fix = cuda_errors.kernel_fault(
            first(hits, "kernel_fault"), bool(first(hits, "fault_in_nccl"))
        )
        return summary + on_ranks(hits), fix
    if first(hits, "thc_file"):
        summary, fix = cuda_errors.thc_invalid_argument(first(hits, "thc_file"), first(hits, "thc_line"))
        return summary + on_ranks(hits), fix
    if first(hits, "wrapper"):
        return _wrapped_optimizer(hits, ctx)
    if first(hits, "private_call"):
        return _private_call(hits)
    if first(hits, "acc_class"):
        return _accelerate_plugin(merged(hits), hits)
    if first(hits, "zero3_not_half"):
        return _zero3_not_half(hits)
    return _accelerate_8bit(hits, ctx)


LIBRARY_RELEASE_BUG = Recogniser(
    # accelerate/accelerator.py prepare_model, v0.17.0-v0.19.x (huggingface/accelerate#1155); v0.20.0 (#1523)
    # words it "... on multiple devices in any distributed mode." and refuses it only there.
    # torch/optim/lr_scheduler.py LRScheduler.__init__ "{} is not an Optimizer" (every release; DeepSpeed's
    # lr_schedules.py printed it too until it unwrapped its own optimizer, now "{} is not a subclass of
    # torch.optim.Optimizer"): a scheduler given an optimizer wrapper, a DeepSpeed release's bug where the
    # wrapper is DeepSpeed's own and so is the scheduler
    kind="library_version_bug",
    title="a bug of the library release installed",
    anchors=(
        "8-bit precision on multiple devices.",
        " is not an Optimizer",
        " is not a subclass of torch.optim.Optimizer",
        # a kernel that faulted, as torch or NCCL reports the CUDA runtime's string (kinds/cuda_errors.py)
        *cuda_errors.KERNEL_FAULTS,
        # GNU ld: an input file of the link that is not there, here one of the build's own objects
        "ld: cannot find ",
        # CPython: a call with a keyword the function does not take; read only for a private function (a
        # library calling its own or another package's internals), not a public one a script calls
        "() got an unexpected keyword argument '",
        # CPython's AttributeError on one of accelerate's plugin dataclasses, read by accelerate itself
        "Plugin' object has no attribute '",
        # DeepSpeed 0.3.16's engine: ZeRO-3 with fp16 finding a parameter that is not half
        "Model must initialized in fp16 mode for ZeRO Stage 3",
        # CPython's AttributeError on torch's default sampler (torch/utils/data/dataloader.py: a DataLoader
        # given a batch_sampler keeps a SequentialSampler as .sampler): an epoch hook reading loader.sampler
        "'SequentialSampler' object has no attribute 'set_epoch'",
        # CPython's AttributeError on a plain dict where DeepSpeed ZeRO-3 expects its ZeROOrderedDict
        # (deepspeed/runtime/zero/parameter_offload.py, torch >= 2.5): printed for nothing else
        "'dict' object has no attribute '_in_forward'",
        # c10/util/Exception.h TORCH_INTERNAL_ASSERT: torch's own invariant
        " INTERNAL ASSERT FAILED at ",
        # CPython multiprocessing/context.py set_start_method: a start method chosen a second time without
        # force=True, after a library imported first (or the script) had fixed one
        "context has already been set",
        # torch/csrc/StorageMethods.cpp THPStorage_dataPtr: data_ptr() of a storage with no data (a tensor
        # subclass's: DTensor, quantized, XLA), which saving code asks for, not the user's
        "Attempted to access the data pointer on an invalid python storage",
        # torch/amp/grad_scaler.py unscale_: a second unscale_ before update(), which the transformers Trainer
        # with accelerate did itself in June 2023 (transformers#24449, fixed by #24415; kinds/amp_scaler.py reads
        # the training loop's own order, where the traceback shows the script's scaler.unscale_ call)
        "has already been called on this optimizer since the last update",
        # aten/src/THC/THCGeneral.cpp __THCudaCheck (torch <= 1.x): a CUDA call of THC's own refusing its value
        "cuda runtime error (",
        # torch 1.9-1.10's torch/utils/tensorboard/__init__.py: `LooseVersion = distutils.version.LooseVersion`
        # after `from setuptools import distutils`, which setuptools 59.6 no longer fills (pytorch#69894)
        "module 'distutils' has no attribute 'version'",
        # torch 1.1.0's torch/nn/modules/conv.py forward reads self.padding_mode, which a convolution pickled
        # whole under torch 1.0 lacks (pytorch#20756, fixed by a __setstate__ in pytorch#21687)
        "object has no attribute 'padding_mode'",
        # OneTrainer's modules/modelSetup/BaseWuerstchenSetup.py prepare_text_caching (from #1220, 2026-01): with
        # the text encoder frozen it calls model.text_encoder_to, which WuerstchenModel does not define (#1558)
        "'WuerstchenModel' object has no attribute 'text_encoder_to'",
        # yizt/crnn.pytorch generator.py gen_image, the traceback's source line of CPython's str.index ValueError
        # ("substring not found"): a generated text with a character the alphabet lacks (fixed in 493fb1f)
        "self.alpha.index(c) for c in text",
        # jwyang/faster-rcnn.pytorch lib/model/rpn/proposal_target_layer_cascade.py _sample_rois_pytorch (and its
        # forks): no ROI in either overlap range, the batch loader's crop before 796d191 and e31ccc3 (March 2018)
        "bg_num_rois = 0 and fg_num_rois = 0, this should not happen!",
        # uma-pi1/kge (LibKGE) kge/job/eval_entity_ranking.py: the tie check (#224, 2021-09-13) raising on scores
        # that differ between SPO and SP_/_PO scoring, TransE's cdist until 5127cf2 (2021-10-04); a warning only
        # from 302c5a6 (2021-11-02, entity_ranking.tie_handling.warn_only)
        "Error in tie-handling. The scores assigned to a triple by the SPO and SP_/_PO scoring implementations",
        # CPython's argparse naming an option's type by its repr: a typing construct (type=Optional[str]) that
        # cannot convert a string, so no value passes: the program's parser, not the command (launch_command)
        "invalid typing.",
        # torch/cuda/random.py manual_seed_all's callback, run by _lazy_call once CUDA is up (kinds/seed_devices.py)
        *seed_devices.ANCHORS,
        # CPython's AttributeError on an Optimizer subclass whose __init__ never ran torch 2.0's
        # (kinds/optimizer_subclass.py): a library's release, or the script's own class
        *optimizer_subclass.ANCHORS,
        # bitsandbytes' CUDA check in its paged optimizers' C interface (kinds/paged_optimizers.py): the prefetch of
        # a paged state restored from a checkpoint, which is no longer in managed memory, or managed memory the
        # platform does not offer
        *paged_optimizers.ANCHORS,
        # TRL 1.0's SFTTrainer refusing padding_free without packing (kinds/trl_checks.py): a trainer built on TRL
        # that turned padding_free on; and TRL's main of April-May 2024 reading args.model_init_kwargs on None
        *trl_checks.ANCHORS,
        # GPU kernels of a release with a bug for some shapes or devices (kinds/kernel_release_bugs.py): Megatron's
        # fused softmax assert, SDPA's cuDNN backend without a plan, PyTorch 0.1's CUDA IPC off the current device
        *kernel_release_bugs.ANCHORS,
        # parallelism libraries' own code: DeepSpeed's pipeline engine all-reducing a frozen tied weight's missing
        # gradient, a vocabulary-parallel shard given the global padding_idx (kinds/parallel_releases.py)
        *parallel_releases.ANCHORS,
        # FSDP1's own state machine and flat-parameter invariants failing inside torch (kinds/fsdp_releases.py)
        *fsdp_releases.ANCHORS,
        # post-training stacks' own code: slime's rollout engines past their placement group's GPUs, ZeRO-3's
        # all-gather of PEFT's fp32 adapters beside bf16 weights, MCore's async save losing its writer process
        # (kinds/post_training_releases.py)
        *post_training_releases.ANCHORS,
        # data-loading libraries' own code: webdataset reading an attribute its own class lacks, torch's
        # DataLoader broadcasting the DataPipes' seed as a CPU tensor over NCCL (kinds/data_loader_releases.py)
        *data_loader_releases.ANCHORS,
        # low-precision code of a release that mixed up a dtype: Transformer Engine's GEMM output under
        # fuse_wgrad_accumulation, a gradient of another dtype than its parameter (kinds/precision_releases.py)
        *precision_releases.ANCHORS,
        # flash-attn's varlen kernel refusing the packed batch's sequence offsets (kinds/varlen_attention.py)
        *varlen_attention.ANCHORS,
        # Ray's ray.ml trainers of early 2022 reading a dict scaling_config as an object (kinds/ray_cluster.py)
        *ray_cluster.SCALING_ANCHORS,
        # MidiTok 2.1.0-2.1.6 tokenizing unknown chords its vocabulary lacks (kinds/midi_tokenizers.py)
        *midi_tokenizers.ANCHORS,
        # DeepSpeed ZeRO-3's optimizer given parameters ZeRO-3 never partitioned (kinds/zero3_params.py)
        *zero3_params.ANCHORS,
        # DeepSpeed ZeRO-3's parameter coordinator refusing its own state: prefetched parameters in flight, a
        # trace that did not hold, backward in eval mode (kinds/zero3_prefetch.py)
        *zero3_prefetch.ANCHORS,
        # research repositories' code fixed in a later commit: AdaHessian's instructions optimizer, the
        # feedback-alignment layers' hook without bias, RAdam's language-model copy (kinds/research_code.py)
        *research_code.ANCHORS,
        # helpers around the training loop: a warm-up scheduler over ReduceLROnPlateau, wandb.watch twice,
        # luxonis-train's EMA on resume, diffusers' conversion script (kinds/loop_helpers.py)
        *loop_helpers.ANCHORS,
        # libjpeg's refusal through torchvision's decode_jpeg before 0.16: a CMYK JPEG (kinds/image_files.py)
        image_files.JPEG_CONVERSION,
    ),
    match=R(
        r"8-bit precision on multiple devices\.|\w+ is not (?:an Optimizer|a subclass of torch\.optim\.Optimizer)|"
        r"ld: cannot find \S{1,400}/build/temp\.[^\s:]{1,300}\.o: No such file or directory|"
        + PRIVATE_CALL.pattern
        + "|"
        + _ACCELERATE_PLUGIN.pattern
        + "|Model must initialized in fp16 mode for ZeRO Stage 3|'(?P<seq_sampler>SequentialSampler)' object has no "
        "attribute 'set_epoch'|'dict' object has no attribute '_in_forward'| INTERNAL ASSERT FAILED at |"
        "(?P<start_method_set>context has already been set)|"
        "(?P<invalid_storage>Attempted to access the data pointer on an invalid python storage)|"
        "(?P<unscaled_twice>unscale_\\(\\) has already been called on this optimizer since the last update)|"
        "(?P<distutils_version>module 'distutils' has no attribute 'version')|"
        "(?P<conv_padding_mode>'(?:Conv|ConvTranspose)[123][dD]' object has no attribute 'padding_mode')|"
        "(?P<wuerstchen_te_to>'WuerstchenModel' object has no attribute 'text_encoder_to')|"
        "(?P<crnn_alpha_index>self\\.alpha\\.index\\(c\\) for c in text)|"
        "(?P<no_fg_bg_rois>bg_num_rois = 0 and fg_num_rois = 0, this should not happen!)|"
        "(?P<kge_ties>Error in tie-handling\\. The scores assigned to a triple by the SPO and SP_/_PO scoring "
        "implementations)|"
        + _TYPED_OPTION.pattern
        + "|"
        + cuda_errors.KERNEL_FAULT.pattern
        + "|"
        + cuda_errors.THC_INVALID_ARGUMENT.pattern
        + "|"
        + seed_devices.SEED_ALL.pattern
        + "|"
        + optimizer_subclass.NO_STEP_HOOKS.pattern
        + "|"
        + paged_optimizers.REFUSED.pattern
        + "|"
        + trl_checks.REFUSED.pattern
        + "|"
        + kernel_release_bugs.REFUSED.pattern
        + "|"
        + parallel_releases.REFUSED.pattern
        + "|"
        + fsdp_releases.REFUSED.pattern
        + "|"
        + post_training_releases.REFUSED.pattern
        + "|"
        + data_loader_releases.REFUSED.pattern
        + "|"
        + precision_releases.REFUSED.pattern
        + "|"
        + varlen_attention.REFUSED.pattern
        + "|"
        + ray_cluster.SCALING_REFUSED.pattern
        + "|"
        + midi_tokenizers.REFUSED.pattern
        + "|"
        + zero3_params.REFUSED.pattern
        + "|"
        + zero3_prefetch.REFUSED.pattern
        + "|"
        + research_code.REFUSED.pattern
        + "|"
        + loop_helpers.REFUSED.pattern
        + "|"
        + image_files.JPEG_FACT.pattern
    ),
    templates=(
        "third_party:accelerate-8bit-on-multiple-devices",
        "torch_native:lr-scheduler-is-not-an-optimizer",
        "deepspeed:is-not-subclass-of-torch-optim",
        *cuda_errors.KERNEL_FAULT_TEMPLATES,
        "system:ld-cannot-find-input-file",
        "system:python-unexpected-keyword-argument",
        "system:object-has-no-attribute",
        "third_party:deepspeed-zero3-model-must-be-fp16",
        "third_party:deepspeed-zero3-plain-dict-in-forward",
        "torch_native:internal-assert-failed",
        "system:multiprocessing-context-already-set",
        "torch_native:storage-data-ptr-invalid-python-storage",
        "torch:unscale-has-already-been-called-on",
        cuda_errors.THC_INVALID_ARGUMENT_TEMPLATE,
        "torch_native:tensorboard-distutils-version",
        "third_party:torch-1-1-conv-padding-mode-old-pickle",
        "third_party:onetrainer-wuerstchen-text-encoder-to",
        "third_party:crnn-pytorch-generator-alphabet-index",
        "third_party:faster-rcnn-pytorch-no-fg-no-bg-rois",
        "third_party:libkge-error-in-tie-handling",
        "system:argparse-invalid-typing-type-value",
        "third_party:bitsandbytes-cuda-check-return-python-interface",
        *trl_checks.TEMPLATES,
        *kernel_release_bugs.TEMPLATES,
        *parallel_releases.TEMPLATES,
        *fsdp_releases.TEMPLATES,
        *post_training_releases.TEMPLATES,
        *data_loader_releases.TEMPLATES,
        *precision_releases.TEMPLATES,
        *varlen_attention.TEMPLATES,
        *ray_cluster.SCALING_TEMPLATES,
        *midi_tokenizers.TEMPLATES,
        *zero3_params.TEMPLATES,
        *zero3_prefetch.TEMPLATES,
        *research_code.TEMPLATES,
        *loop_helpers.TEMPLATES,
        image_files.JPEG_TEMPLATE,
    ),
    # the lines after the anchored one are read with it only where a pattern needs them: DeepSpeed's tied-grads
    # frame with its code line and nothing after (kinds/parallel_releases.py); slime's rollout code line with the
    # IndexError under it, MCore's async-save warning with its writer's failure header (post_training_releases.py)
    span=2,
    # a kernel's fault names no kernel and no cause (a library's bug, bad input, a failing GPU)
    generic=cuda_errors.KERNEL_FAULTS
    + seed_devices.ANCHORS
    + midi_tokenizers.ANCHORS
    + research_code.ANCHORS,
    facts=(
        cuda_errors.KERNEL_FAULT,
        cuda_errors.IN_NCCL,
        cuda_errors.THC_INVALID_ARGUMENT,
        seed_devices.SEED_ALL,
        optimizer_subclass.NO_STEP_HOOKS,
        paged_optimizers.REFUSED,
        trl_checks.REFUSED,
        kernel_release_bugs.REFUSED,
        parallel_releases.REFUSED,
        fsdp_releases.REFUSED,
        post_training_releases.REFUSED,
        data_loader_releases.REFUSED,
        precision_releases.REFUSED,
        varlen_attention.REFUSED,
        ray_cluster.SCALING_REFUSED,
        midi_tokenizers.REFUSED,
        zero3_params.REFUSED,
        zero3_prefetch.REFUSED,
        research_code.REFUSED,
        loop_helpers.REFUSED,
        R(r"(?P<eight_bit>8-bit precision on multiple devices)"),
        R(r"(?P<wrapper>\w+) is not (?:an Optimizer|a subclass of torch\.optim\.Optimizer)"),
        R(r"(?P<ds_wrapper>\w*(?:DeepSpeed|ZeRO|Zero|FP16_|BF16_)\w*) is not (?:an|a subclass)"),
        PRIVATE_CALL,
        _ACCELERATE_PLUGIN,
        R(r"(?P<zero3_not_half>Model must initialized in fp16 mode for ZeRO Stage 3)"),
        R(r"(?P<zero3_plain_dict>'dict' object has no attribute '_in_forward')"),
        R(r"(?P<start_method_set>context has already been set)"),
        _TYPED_OPTION,
        R(r"(?P<typed_program>[\w.<>\[\] -]{1,80}): error: argument -{1,2}[\w-]{1,60}: invalid typing\."),
        R(r"(?P<internal_assert>INTERNAL ASSERT FAILED) at \"?(?P<assert_file>[^\"\n:]{1,300})\"?:\d+"),
        R(r"ld: cannot find (?P<missing_object>\S{1,400}/build/temp\.[^\s:]{1,300}\.o): No such file"),
        # pip builds in /tmp/pip-install-<id>/<package>_<hash>/ (pip-req-build-<id> for a git or path install)
        R(
            r"ld: cannot find \S{0,200}pip-install-\w{1,40}/(?P<build_package>[A-Za-z][\w.-]{0,60}?)_[0-9a-f]{16,}/"
        ),
    ),
    # the same refusal is right in a multi-process run (each copy spread over the GPUs), and a wrapper handed
    # to torch's own scheduler is the script's doing as often as a release's: only likely
    confirm=lambda hits, ctx: False,
    also=(
        fsdp_releases.MISUSE,
        # asking_frame.py: a name a package's own code asks for is also two packages' releases disagreeing (the
        # caller passed it another package's object) or a half-done install
        Alternative(
            "dependency_version",
            "the code calling DeepSpeed handing it an object or a setting of another release",
            "pip show deepspeed transformers accelerate: install a pair the calling package's requirements name.",
            when=("ds_class",),
        ),
        Alternative(
            "broken_install",
            "an install of the package left incomplete (files of two releases, a compiled part not built)",
            "pip install --force-reinstall --no-deps <package>, in the environment the job runs in, and check "
            "that python -c 'import <package>; print(<package>.__file__)' is that install.",
            when=asking_frame.IMPORT_FACTS,
        ),
        Alternative(
            "dependency_version",
            "a conversion script older than the diffusers installed (a script of 0.20.x run with 0.21 or newer)",
            "Use the scripts/ of the diffusers release installed (git checkout v<version>), or upgrade the script.",
            when=("sd_convert_keyword",),
        ),
        Alternative(
            "bad_training_data",
            "ground-truth boxes of no area, or outside the image, in the images of that batch",
            "Check the annotations the batch came from: x2 > x1 and y2 > y1 and inside the image; drop or fix the "
            "boxes that are not.",
            when=("no_fg_bg_rois",),
        ),
        Alternative(
            "nan_overflow",
            "losses gone NaN, which make the proposals and every overlap NaN",
            "If the loss printed before it was nan or growing, lower the learning rate (or clip the gradients).",
            when=("no_fg_bg_rois",),
        ),
        Alternative(
            "grad_scaler_call_order",
            "the training loop's own GradScaler order: unscale_ twice, or update() skipped with a skipped step",
            "Call scaler.unscale_(optimizer) at most once per step and scaler.update() on every iteration that "
            "unscaled, also when the step is skipped.",
            when=("unscaled_twice",),
        ),
        Alternative(
            "device_map_distributed",
            "an 8-bit model spread by device_map in a multi-process run",
            "Under accelerate launch / torchrun load each process's copy on its own GPU: "
            "from_pretrained(..., device_map={'': int(os.environ['LOCAL_RANK'])}), or run one process that spreads "
            "the model (python train.py).",
            when=("eight_bit",),
        ),
        Alternative(
            "device_assert",
            "an index or size out of range in the kernel's input (which a device-side assert would name)",
            "Run once with CUDA_LAUNCH_BLOCKING=1 (or on CPU, where the same op raises an IndexError that names "
            "the value): labels outside [0, num_classes), token ids past the embedding, indices past a tensor's "
            "size are the usual inputs a kernel reads out of bounds.",
            when=("kernel_fault",),
            unless=("fault_in_nccl",),
        ),
        Alternative(
            "cuda_build",
            "a compile step that failed above the link (its error cut from the paste)",
            "Look above the link for the first `error:` of the compiler (or nvcc), which names the cause.",
            when=("missing_object",),
        ),
        Alternative(
            "zero3_partitioned_weights",
            "a parameter the model's own code created or replaced after ZeRO-3 partitioned the model",
            "Update the parameter in place under deepspeed.zero.GatheredParameters(p, modifier_rank=0) instead of "
            "assigning a new nn.Parameter, and add every module before deepspeed.initialize.",
            when=("zero3_unconverted",),
            unless_log=("hf_param_count",),
        ),
        Alternative(
            "zero3_param_dtype",
            "a parameter the model's own code creates in float32 after deepspeed.zero.Init",
            "Create new parameters in the model's dtype (torch.half under fp16) or inside deepspeed.zero.Init, "
            "before deepspeed.initialize; print [n for n, p in model.named_parameters() if p.dtype != "
            "torch.half] to find it.",
            when=("zero3_not_half",),
        ),
        Alternative(
            "dependency_version",
            "two packages installed at versions that disagree (one calls the other's internals)",
            "pip show the packages in the traceback (the caller and the callee, e.g. lightning and torchmetrics) "
            "and install a pair the caller's release notes or requirements name.",
            when=("private_call", "acc_class"),
        ),
        optimizer_subclass.OWN_SUBCLASS,
        Alternative(
            "not_launched_distributed",
            "no DistributedSampler at all: the run was started as one process (or built its loader without one) "
            "and calls set_epoch anyway",
            "Start it with the launcher (torchrun --nproc_per_node N train.py), or call set_epoch only on a "
            "DistributedSampler: if isinstance(loader.sampler, DistributedSampler): loader.sampler.set_epoch(epoch).",
            when=("seq_sampler",),
        ),
        Alternative(
            "dependency_version",
            "a torch built for another CUDA than this driver and GPU (the pair, not the release itself)",
            "Install the torch wheel for the CUDA your driver supports (nvidia-smi's CUDA Version): pip install "
            "torch --index-url https://download.pytorch.org/whl/cu<that version>.",
            when=("thc_file",),
        ),
        Alternative(
            "dependency_version",
            "a project written for another PyTorch release than the one installed",
            "Install the PyTorch the project pins (its README, requirements file or container image): pip "
            "install 'torch==<that version>' with the --index-url of your CUDA.",
            when=("internal_assert",),
        ),
        Alternative(
            "dependency_version",
            "a DeepSpeed older than the torch it runs with (torch >= 2.5)",
            "pip install -U deepspeed, or install the torch and DeepSpeed pair the project pins.",
            when=("zero3_plain_dict",),
        ),
        Alternative(
            "nccl_bug_upgrade",
            "a bug of the NCCL release in use, fixed in a later one",
            "Upgrade NCCL (the torch release that ships a newer one, or the nvidia-nccl-cu* wheel) and check the "
            "NCCL release notes for the fix.",
            when=("fault_in_nccl",),
        ),
        Alternative(
            "dependency_version",
            "another package reading distutils.version the way torch 1.10 did, with setuptools 59.6 or newer",
            "Find the import in the traceback and upgrade that package (or pin setuptools below 59.6).",
            when=("distutils_version",),
        ),
        seed_devices.CHANGED_VARIABLES,
    ),
    kind_by_asker=asking_frame.PLUGIN_READ_ELSEWHERE,
    describe=_release_bug,
)

RECOGNISERS: tuple[Recogniser, ...] = (DEPENDENCY_VERSION, LIBRARY_RELEASE_BUG)

# Exception types a library raises on a value it did not expect or on its own bug; ValueError, RuntimeError and
# the like are also what a library raises on purpose to tell the user what is wrong, so they are not counted.
BUG_TYPES = frozenset(
    {
        "TypeError",
        "AttributeError",
        "AssertionError",
        "KeyError",
        "IndexError",
        "NameError",
        "UnboundLocalError",
    }
)
_PACKAGE = R(r"[/\\](?:site-packages|dist-packages)[/\\](?P<package>[A-Za-z_][\w]*)")


def library_bug(raised: Raised) -> tuple[str, str, str] | None:
    """(package, summary, fix) when ``raised`` was raised inside an installed package with a type its
    version's bug (or a value it did not expect) raises; None otherwise."""
    if raised.type not in BUG_TYPES or raised.raised_in is None:
        return None
    inside = _PACKAGE.search(raised.raised_in.file)
    if inside is None:
        return None
    package = inside["package"]
    path = raised.raised_in.file.replace("\\", "/")
    if package == "torch" and "/torch/distributed/" not in path:
        # torch's ops and nn raise these on the caller's values (a token id past the embedding, a forward()
        # called with the wrong arguments): the user's data, not torch's version
        return None
    if "*args" in raised.raised_code and "**kwargs" in raised.raised_code:
        return None  # a frame that only passes the caller's arguments on: the caller's mistake
    code = f" (`{cut(raised.raised_code, 120)}`)" if raised.raised_code else ""
    callers = [p for p in raised.packages if p != package]
    through = f", called through {', '.join(callers)}" if callers else ""
    summary = (
        f"{raised.text()} raised inside {package} ({raised.raised_in}{through}), not in your code: "
        f"a bug of the {package} version installed, or a value it does not expect from its caller"
    )
    fix = (
        f"The error is raised in the code of {package}{code}. Most such errors are a bug of one version, or a "
        f"version that does not match the package calling it: search the issues of {package} for the message, and "
        f"update {package} (pip install -U {package}) — or install the version the project that calls it pins "
        f"(pip show {package}; its requirements file). If the value it received comes from your code or "
        "config, check it against the documentation of that version."
    )
    if callers:
        fix += (
            f"\nThe traceback also passes through {', '.join(callers)}, whose code calls (or overrides) {package}'s "
            f"here: a {callers[0]} release written for another {package} release is as likely. Compare pip show "
            f"{callers[0]} {package} with what {callers[0]} requires, and update it: pip install -U {callers[0]}."
        )
    fix += "".join(
        f"\n{known}"
        for caller, words, known in KNOWN_MISMATCHES
        if caller in callers and words in raised.message
    )
    # a loader another library re-creates or wraps (Lightning's DDP sampler on PyG's loaders): read from the
    # raising file and the callers, the message being the old release's own (kinds/data_loader_releases.py)
    fix += "".join(
        f"\n{known}"
        for raising, where, caller, known in data_loader_releases.LOADERS_REBUILT
        if raising == package and where in path and caller in callers
    )
    return package, summary, fix


# CPython's messages for a name the running code uses but never bound on the path it took (Python/ceval.c:
# NAME_ERROR_MSG, UNBOUNDLOCAL_ERROR_MSG; 3.11+ words the second "cannot access local variable ... where it is not
# associated with a value"): a defect of the code that raised it, not of the data or the machine
_UNBOUND = R(
    r"^(?:name '(?P<name>\w{1,80})' is not defined|local variable '(?P<local>\w{1,80})' referenced before assignment|"
    r"cannot access local variable '(?P<local311>\w{1,80})' where it is not associated with a value)"
)


def unbound_name(raised: Raised) -> tuple[str, str] | None:
    """(summary, fix) when ``raised`` is CPython's NameError or UnboundLocalError for a name the code never bound
    on the path it ran: a bug of the code that raised it, the project's or the library's whose file it is (the
    threads of such logs fixed it in that code: a later commit, branch or release); None otherwise. Likely: it
    may be one's own code, or a name bound only under a branch the data or an optional import decided. Only with
    the frame that raised it: a bare message is as often a notebook's cell that was not run."""
    if raised.type not in ("NameError", "UnboundLocalError") or raised.raised_in is None:
        return None
    said = _UNBOUND.match(raised.message.strip())
    if said is None:
        return None
    name = said["name"] or said["local"] or said["local311"]
    where = f" in {raised.raised_in}"
    code = f" (`{cut(raised.raised_code, 120)}`)" if raised.raised_code else ""
    if said["name"]:
        what = f"the code{where}{code} uses the name '{name}', which nothing defined or imported there"
    else:
        what = f"the code{where}{code} reads the local variable '{name}' on a path that never assigned it"
    # never a site-packages frame here (library_bug reads those): the user's own script as often as a project's
    # checkout, which a log does not tell apart, so the summary names both
    summary = (
        f"{raised.text()}: {what}, a bug in that code: your own script's, or, where it is a project's or a source "
        "checkout you run, of that code's release or commit"
    )
    fix = (
        "Python raises this where the code uses a name it never bound on the path it ran. If the file is a "
        "library's or a project's you run (its repository, a source install), search its issues for the message "
        "and update it to the release or branch that fixed it (git pull, pip install --upgrade <package>), or "
        "pin the release its examples were written for. If it is your own code, define or import the name "
        "before that line. "
        + (
            f"An unassigned '{name}' is also a branch or loop that never ran on this input (an empty list, a "
            "folder with no files, a condition only one rank takes): check what the code iterated over."
            if not said["name"]
            else f"A name bound only by an optional import (try: import {name} except ImportError: pass) is the "
            f"package {name} missing: pip install it."
        )
    )
    return summary, fix


# Release pairs known not to fit, each read from the fix that made them fit: (the calling package in the
# traceback, words of the error, what to do)
KNOWN_MISMATCHES: tuple[tuple[str, str, str], ...] = (
    (
        # deepspeed/elasticity/elastic_agent.py: DSElasticAgent overrides torch's _set_master_addr_port, which
        # torch 2.0 calls with a fourth argument (local_addr); DeepSpeed #4985 (v0.13.2) added it
        "deepspeed",
        "_set_master_addr_port() takes 3 positional arguments but 4 were given",
        "DeepSpeed's elastic agent (deepspeed --elastic_training) overrides torch's _set_master_addr_port with the "
        "signature torch had before 2.0; DeepSpeed 0.13.2 takes the local_addr argument torch 2.0 passes (DeepSpeed "
        "#4985): pip install -U 'deepspeed>=0.13.2', or run torch < 2.0.",
    ),
)


# CPython's TypeError for a keyword the called function does not take (Objects/call.c, Python/ceval.c; catalog
# system:python-unexpected-keyword-argument), raised at the call itself: the traceback's innermost frame is the
# caller's line. When that line calls a function of one of the libraries a training script runs through, spelt
# with its module path (deepspeed.zero.Init(...), torch.load(...)), and passes the keyword there, the library
# installed is likely another release than the calling code was written for (a keyword added, renamed or removed
# between releases); the calling code's own misspelt keyword prints the same, hence only likely.
_UNEXPECTED_KW = R(r"got an unexpected keyword argument '(?P<keyword>\w{1,100})'")
_LIBRARY_CALL = R(rf"(?<![\w.])(?P<call>(?P<library>{LIBRARIES}|torch)(?:\.\w{{1,100}}){{1,8}})\(")


def _own_arguments(code: str, start: int) -> str:
    """The text of a call's own arguments, from ``start`` (just after its opening parenthesis) to its closing
    one or the end of the line, without what nested brackets hold (another call's keywords are not its own)."""
    depth, own = 0, []
    for char in code[start:]:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0:
            own.append(char)
    return "".join(own)


def library_call(raised: Raised) -> tuple[str, str, str] | None:
    """(library, summary, fix) when ``raised`` is CPython's TypeError for a keyword that a library function,
    called by its module path on the failing line of the caller's code, does not take; None otherwise."""
    if raised.type != "TypeError" or raised.raised_in is None or installed_package(raised.raised_in.file):
        return None  # raised inside an installed package: a library calling another (library_bug's reading)
    unexpected = _UNEXPECTED_KW.search(raised.message)
    if unexpected is None:
        return None
    keyword = unexpected["keyword"]
    for called in _LIBRARY_CALL.finditer(raised.raised_code):
        if re.search(rf"(?<![\w.]){keyword}\s*=(?!=)", _own_arguments(raised.raised_code, called.end())):
            break
    else:
        return None
    call, library = called["call"], called["library"]
    summary = (
        f"{call}() does not take the argument '{keyword}': the {library} installed is likely another release "
        "than the code calling it was written for (or the argument is misspelt there)"
    )
    fix = (
        f"The call passes {keyword}= to {call}, and the {library} installed has no such parameter: it was added, "
        f"renamed or removed between releases. Compare `pip show {library}` with the version the project pins "
        f"(its requirements file or README) and install that one, usually a newer release: pip install -U "
        f"{library} (or pip install '{library}==<the pinned version>'). If {keyword} is your own argument, check "
        f"its spelling against the documentation of the {library} installed."
    )
    return library, summary, fix

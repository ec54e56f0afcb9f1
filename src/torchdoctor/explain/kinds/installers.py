"""What pip, uv and conda say when they cannot install what was asked.

What pip, uv and conda say when they cannot install what was asked: requirements that exclude each other
(``dependency_version``), no build for this Python, platform or channel (``no_matching_wheel``), a build that
needs a package its isolated build environment lacks (``build_isolation``).

The messages, catalogued in ``catalog/build_tools.tsv``:

- pip's resolver (pip/_internal/resolution/resolvelib/factory.py, 20.3+): ``Cannot install X and Y because these
  package versions have conflicting dependencies.``, then ``The conflict is caused by:`` with one line per pin
  (``The user requested torch==2.1.0``, ``torchvision 0.17.0 depends on torch==2.2.0``) and ``ResolutionImpossible``.
  Newer pips add ``Additionally, some packages in these conflicts have no matching distributions available for
  your environment``: then one of them has no build for this Python or platform at all, which is the other
  reading. When Requires-Python is what fails it says ``Package 'X' requires a different Python: 3.8.10 not in
  '>=3.9'`` instead; a wheel file whose tags do not fit, ``X.whl is not a supported wheel on this platform``.
- uv's resolver (crates/uv-resolver/src/pubgrub/report.rs): ``No solution found when resolving dependencies``
  and a ``Because ... we can conclude that your requirements are unsatisfiable`` chain. The chain is printed
  for a conflict and for a package with no usable version alike (``has no wheels with a matching Python ABI
  tag``, ``the current Python version (3.8) does not satisfy Python>=3.9``, ``was not found in the package
  registry``), so the headline alone is only likely; the wheel and Python lines decide. uv's build frontend
  (crates/uv-build-frontend) adds a hint when a build fails on an import its isolated environment lacks:
  ``depends on `torch`, but doesn't declare it as a build dependency``.
- conda (conda/exceptions.py, resolve.py): ``UnsatisfiableError: The following specifications were found to be
  incompatible with each other``, ``Found conflicts!``; ``PackagesNotFoundError: The following packages are not
  available from current channels`` (a channel not given, or no build for this platform) and
  ``ResolvePackageNotFound`` (an environment file pinning builds of another platform); the libmamba solver's
  ``LibMambaUnsatisfiableError`` / ``Could not solve for environment specs``, printed for a missing package too.
- what an install lets through or falls back to: setuptools-rust's ``can't find Rust compiler`` (pip building a Rust package because no wheel fits), old setuptools on Python 3.12
  (``module 'pkgutil' has no attribute 'ImpImporter'``), and a module compiled for another NumPy C API (numpy
  2.x's ``A module that was compiled using NumPy 1.x cannot be run in NumPy 2``, ``_ARRAY_API not found``,
  torch's ``Failed to initialize NumPy``; numpy 1.x's ``module compiled against API version``).
- setuptools-scm (src/setuptools_scm/_get_version_impl.py ``_version_missing``; setuptools_scm/__init__.py before
  8.0): ``setuptools-scm was unable to detect version for <root>.``, raised as a LookupError (hatch-vcs prefixes
  ``Error getting the version from source `vcs`: ``) when a project that takes its version from git is built from
  a tree without git metadata: a zip or tarball of the repository, a copy or Docker build context without the .git
  folder, git itself not installed; 8.x adds that a repository was found in a parent directory when the build ran
  in a subfolder. Read by launchers.py's ``broken_install``, likely (the line does not say which of them).
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds import wheel_tags
from torchdoctor.explain.recognisers import Context, Hit, Pattern

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# -- requirements that exclude each other (dependency_version) ----------------------------------------------

CONFLICT_TEMPLATES = (
    "build_tools:error-cannot-install-because-these-package",
    "build_tools:error-resolutionimpossible-for-help-visit-https",
    "build_tools:no-solution-found-when-resolving-dependencies",
    "build_tools:because-depends-on-and-you-require",
    "build_tools:unsatisfiableerror-the-following-specifications-were-found",
    "build_tools:found-conflicts-looking-for-incompatible-packages",
    "build_tools:libmambaunsatisfiableerror-encountered-problems-while-solving",
    "build_tools:could-not-solve-for-environment-specs",
)
CONFLICT_ANCHORS = (
    "because these package versions have conflicting dependencies",
    "ResolutionImpossible: for help visit",
    "were found to be incompatible with each other",
    "Found conflicts! Looking for incompatible packages",
    "LibMambaUnsatisfiableError",
    "Could not solve for environment specs",
    "No solution found when resolving",
    "we can conclude that your requirements are unsatisfiable",
)
# printed for a package that has no usable version as well as for a conflict: likely alone. conda's classic
# solver (conda/resolve.py) says "Found conflicts!" before any UnsatisfiableError, whichever section that prints
CONFLICT_GENERIC = (
    "Found conflicts! Looking for incompatible packages",
    "LibMambaUnsatisfiableError",
    "Could not solve for environment specs",
    "No solution found when resolving",
    "we can conclude that your requirements are unsatisfiable",
)
CONFLICT = R("(?P<resolver>" + "|".join(re.escape(a) for a in CONFLICT_ANCHORS) + ")")
CONFLICT_FACTS = (
    R(r"Cannot install (?P<conflicting>[^\n]{1,300}?) because these package versions have conflicting"),
    R(r"(?P<uv_reason>Because [^\n]{1,300})"),
    R(
        r"(?P<conda_solver>UnsatisfiableError|LibMambaUnsatisfiableError|Could not solve for environment specs|Found conflicts!)"
    ),
)
# pip prints the pins that disagree a few lines below its headline, and says when one has no build at all
CONTEXT = (
    (" depends on ", R(r"(?P<conflict_cause>[\w.\-\[\]]{1,60} [\w.+!]{1,30} depends on [^\n]{1,160})")),
    ("The user requested ", R(r"(?P<conflict_request>The user requested [^\n]{1,160})")),
    (
        "no matching distributions available",
        R(r"(?P<pip_no_distribution>no matching distributions available for your environment)"),
    ),
    # conda/exceptions.py UnsatisfiableError prints a section per cause in one error: "incompatible with each
    # other" (a conflict) beside "incompatible with the existing python installation" (no build for this Python)
    # and "incompatible with your system" / "your CUDA driver" (virtual packages: __cuda, __glibc)
    (
        "incompatible with the existing python installation",
        R(r"(?P<conda_python>incompatible with the existing python installation)"),
    ),
    ("incompatible with your ", R(r"(?P<conda_system>incompatible with your (?:system|CUDA driver))")),
    ("__cuda", R(r"(?P<conda_cuda>::__cuda==[\d.]+|Your installed CUDA driver is: [\d.]+)")),
)


def conflict_decided(hits: list[Hit], ctx: Context) -> bool:
    """Certain on a specific anchor, except pip's conflict when pip also says a package has no build at all, and
    conda's when its report also has a section on the Python or the system (the driver's CUDA)."""
    if any(key in ctx.facts for key in ("pip_no_distribution", "conda_python", "conda_system")) and any(
        "resolver" in h.facts for h in hits
    ):
        return False
    return any(h.specific for h in hits)


conflict_decided.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide

# torchvision's release for each torch 2.x: 0.(minor + 15) (torch 2.4 - torchvision 0.19); torchaudio 2.x
_TORCH_FAMILY = (
    "torch, torchvision and torchaudio must come from one release (torch 2.N with torchvision 0.(N+15) and "
    "torchaudio 2.N: torch 2.4.1 / torchvision 0.19.1 / torchaudio 2.4.1), installed in one command from one "
    "index: pip install torch==2.4.1 torchvision==0.19.1 torchaudio==2.4.1 --index-url "
    "https://download.pytorch.org/whl/cu121"
)


def explain_conflict(facts: dict, ctx: Context) -> tuple[str, str]:
    """The summary and fix for an installer that found no versions satisfying every requirement."""
    cause = (
        facts.get("conflict_cause") or ctx.facts.get("conflict_cause") or ctx.facts.get("conflict_request")
    )
    if facts.get("conflicting"):
        summary = (
            f"pip cannot install {facts['conflicting'].strip()[:160]}: their requirements exclude each other"
        )
        where = "The lines under pip's 'The conflict is caused by:' name the pins that disagree"
    elif facts.get("conda_solver"):
        summary = (
            "conda found no set of packages that satisfies every requirement (the solver's conflict report)"
        )
        where = "conda's report lists the specifications that exclude each other"
    elif facts.get("uv_reason"):
        summary = f"uv found no versions that satisfy every requirement: {facts['uv_reason'].strip()[:200]}"
        where = "uv's 'Because ...' chain names the pins that disagree"
    else:
        summary = "the installer found no versions that satisfy every requirement"
        where = "The installer's report above names the pins that disagree"
    if cause and cause not in summary:
        summary += f" ({cause.strip()[:160]})"
    fix = (
        f"{where}. Loosen or drop one of them (an exact == pin in requirements.txt or a constraints file), or "
        f"choose versions released together: {_TORCH_FAMILY}. A package that pins torch exactly cannot share an "
        "environment with another torch: install the release of it made for your torch. With conda, create the "
        "environment in one command with every package and the channels in one order (conda create -n train "
        "python=3.11 <packages> -c conda-forge; conda config --set channel_priority strict), and install torch "
        "with pip inside it (PyTorch's own conda channel stopped at torch 2.5)."
    )
    requested = wheel_tags.REQUESTED_TORCH.search(ctx.facts.get("conflict_request", ""))
    if cause and requested:
        # the table of released wheels: which release of the package pinning torch goes with the torch asked for
        fix += wheel_tags.pairing(cause, requested.group("wanted"))
    if ctx.facts.get("pip_no_distribution"):
        fix += (
            "\npip also says one of these packages has no distribution for this environment at all (the names "
            "under 'Additionally'): no build for this Python or platform, or not on the index given."
        )
    return summary, fix


# -- an old setuptools on Python 3.12 (dependency_version) ------------------------------------------------------

IMPIMPORTER_TEMPLATE = "build_tools:attributeerror-module-pkgutil-has-no-attribute"
IMPIMPORTER_ANCHOR = "has no attribute 'ImpImporter'"
IMPIMPORTER = R(r"(?P<impimporter>module 'pkgutil' has no attribute 'ImpImporter')")


def explain_impimporter() -> tuple[str, str]:
    """Old setuptools' pkg_resources on Python 3.12, which removed pkgutil.ImpImporter."""
    return (
        "an old setuptools (its pkg_resources) runs on Python 3.12, which removed pkgutil.ImpImporter",
        "Python 3.12 dropped pkgutil.ImpImporter, which old releases of setuptools' pkg_resources use. Most often "
        "pip is building an old pinned package from source because it has no wheel for 3.12 (numpy before 1.26 "
        "is the usual one: pin numpy>=1.26), in an isolated build that installs an old setuptools. Upgrade the "
        "tools (python -m pip install -U pip setuptools wheel), allow releases of the pinned packages that support "
        "Python 3.12, or use Python 3.11 for this environment.",
    )


# -- pip 24.1+ refusing an old wheel's invalid metadata (dependency_version) ----------------------------------------

# src/pip/_internal/exceptions.py MetadataInvalid ("Requested {} from {} has invalid metadata: {}") and
# resolution/resolvelib/factory.py, which skips that release: "Ignoring version %s of %s since it has invalid
# metadata:" ... "Please use pip<24.1 if you need to use this version." (pip 24.1 dropped the legacy version
# specifiers, such as torch (>=1.9.*), that older wheels of pytorch-lightning and omegaconf declare)
PIP_METADATA_TEMPLATES = (
    "build_tools:requested-from-has-invalid-metadata",
    "build_tools:please-use-pip-24-1-if-you-need",
)
PIP_METADATA_ANCHORS = ("has invalid metadata: ", "Please use pip<24.1 if you need to use this version")
PIP_METADATA = R(
    r"Requested (?P<invalid_metadata>[A-Za-z0-9][\w.\-]{0,60})[^\n]{0,600}? has invalid metadata: |"
    r"(?P<pip_241>Please use pip<24\.1 if you need to use this version)"
)


def explain_pip_metadata(facts: dict) -> tuple[str, str]:
    """A wheel whose metadata pip 24.1 and later refuse (a legacy version specifier)."""
    package = re.split(r"[=<>!~]", facts.get("invalid_metadata") or "", maxsplit=1)[0] or "a pinned package"
    return (
        f"pip refused the metadata of {package}'s pinned release: pip 24.1 and later reject the legacy version "
        "specifiers (a .* suffix after >=, as in >=1.9.*) older wheels declare, so that release cannot be installed",
        "The wheel's metadata, not the environment, is malformed, and only pip before 24.1 still accepts it. "
        "Install an older pip first, then the requirements: python -m pip install 'pip<24.1' (in a conda "
        "environment file, pin pip<24.1 under dependencies). Or allow a later release of that package whose "
        "metadata is valid (pytorch-lightning 1.8.4 or newer, omegaconf 2.1 or newer) where the code supports it.",
    )


# -- pip or the build backend too old for an editable install of a pyproject.toml project (dependency_version) ----

# src/pip/_internal/req/constructors.py before pip 21.3 (PEP 660): 'File "setup.py" not found. Directory cannot be
# installed in editable mode: {}' and '(A "pyproject.toml" file was found, but editable mode currently requires a
# setup.py based build.)' (21.1-21.2: "setup.py" or "setup.cfg", "a setuptools-based build"); pip 21.3+, when the
# project's backend has no PEP 660 hook: "... has a 'pyproject.toml' and its build backend is missing the
# 'build_editable' hook."
PIP_EDITABLE_TEMPLATES = (
    "build_tools:editable-mode-currently-requires-a-setup",
    "build_tools:build-backend-is-missing-the-build-editable",
)
PIP_EDITABLE_ANCHORS = (
    "editable mode currently requires a setup",
    "build backend is missing the 'build_editable' hook",
)
PIP_EDITABLE = R(
    r"(?P<pip_editable>editable mode currently requires a setup(?:\.py |tools-)based build|"
    r"build backend is missing the 'build_editable' hook)"
)


def explain_pip_editable(facts: dict) -> tuple[str, str]:
    """pip before 21.3, or a build backend without PEP 660, asked for an editable install."""
    if "build_editable" in facts.get("pip_editable", ""):
        return (
            "pip cannot install the project in editable mode: its build backend (in pyproject.toml's "
            "[build-system]) has no PEP 660 editable hook",
            "Upgrade the backend the project builds with: setuptools 64 or newer (requires = "
            "['setuptools>=64'] in pyproject.toml, then python -m pip install -U pip setuptools), or the "
            "backend's own release with PEP 660; or install it without -e (pip install .), reinstalling after "
            "each change.",
        )
    return (
        "the installed pip is too old to install a pyproject.toml project in editable mode (pip before 21.3 "
        "needs a setup.py for pip install -e)",
        "Upgrade pip in the environment that installs it, then install again: python -m pip install -U pip "
        "setuptools, then pip install -e . (pip 21.3 and setuptools 64 install pyproject.toml projects in "
        "editable mode). Or install it without -e (pip install .).",
    )


# -- a compiled module and the NumPy installed (dependency_version) ----------------------------------------------

NUMPY_TEMPLATES = (
    "build_tools:module-that-was-compiled-using-numpy",
    "build_tools:attributeerror-array-api-not-found",
    "build_tools:failed-to-initialize-numpy",
    "build_tools:runtimeerror-module-compiled-against-api-version",
    "build_tools:importerror-numpy-core-multiarray-failed-to",
    "torch_native:numpy-is-not-available",
)
NUMPY_ANCHORS = (
    "compiled using NumPy 1.x cannot be run in",
    "_ARRAY_API not found",
    "Failed to initialize NumPy",
    "but this version of numpy is",
    "numpy.core.multiarray failed to import",
    "Numpy is not available",
)
# torch's warning names the reason after it; without numpy installed at all it is another failure (torch's
# tensor_numpy.cpp "Numpy is not available", raised at tensor.numpy() in a collate or a metric, says neither)
NUMPY_GENERIC = (
    "Failed to initialize NumPy",
    "numpy.core.multiarray failed to import",
    "Numpy is not available",
)
NUMPY = R(
    r"(?P<numpy_abi>compiled using NumPy 1\.x cannot be run in|_ARRAY_API not found|"
    r"but this version of numpy is|numpy\.core\.multiarray failed to import|Numpy is not available)"
)
NUMPY_FACTS = (
    R(r"cannot be run in\s+NumPy (?P<numpy_installed>\d[\w.]{0,20}) as it may crash"),
    R(
        r"module compiled against API version (?P<numpy_built_api>\w{1,10}) but this version of numpy is (?P<numpy_api>\w{1,10})"
    ),
)


def explain_numpy(facts: dict) -> tuple[str, str]:
    """A compiled module and the NumPy installed that do not fit (its C API differs)."""
    if facts.get("numpy_built_api"):
        return (
            f"a compiled module was built against a newer NumPy (C API {facts['numpy_built_api']}) than the one "
            f"installed ({facts['numpy_api']})",
            "Upgrade NumPy to the release the module was built with or later (pip install -U numpy; a pin in the "
            "requirements may hold it back), or install the module's build for the NumPy you keep.",
        )
    if facts.get("numpy_abi") == "Numpy is not available":
        return (
            "torch could not use NumPy (Numpy is not available): most often a NumPy 2 beside a torch built for "
            "NumPy 1.x, or no NumPy in this environment",
            "Run python -c 'import numpy; print(numpy.__version__)' in the job's environment: if it fails, install "
            "NumPy (pip install numpy); if it prints 2.x with a torch before 2.3, pin NumPy 1.x (pip install "
            "'numpy<2') or upgrade torch to 2.3 or later. torch's warning 'Failed to initialize NumPy' at import, "
            "earlier in the log, names the reason.",
        )
    installed = facts.get("numpy_installed")
    return (
        "a compiled module built against NumPy 1.x is loaded with NumPy 2"
        + (f" ({installed})" if installed else ""),
        "NumPy 2 changed its C API: a module compiled for 1.x fails to import it (_ARRAY_API not found; torch "
        "then warns 'Failed to initialize NumPy' and tensor.numpy() raises 'Numpy is not available'). Either "
        "pin NumPy 1.x (pip install 'numpy<2'), or upgrade the module the traceback names to a release built for "
        "NumPy 2 (for torch: 2.3 or later).",
    )


# -- no build for this Python, platform or channel (no_matching_wheel) ----------------------------------------

NO_BUILD_TEMPLATES = (
    "build_tools:error-package-requires-different-python-not",
    "build_tools:error-packages-require-different-python-not",
    "build_tools:error-is-not-supported-wheel-on",
    "build_tools:has-no-wheels-with-matching-python",
    "build_tools:has-no-wheels-with-matching-platform",
    "build_tools:the-current-python-version-does-not",
    "build_tools:the-requested-python-version-does-not",
    "build_tools:packagesnotfounderror-the-following-packages-are-not",
    "build_tools:resolvepackagenotfound",
    "build_tools:error-can-find-rust-compiler",
)
NO_BUILD_ANCHORS = (
    "requires a different Python: ",
    "Packages require a different Python",
    "is not a supported wheel on this platform",
    "has no wheels with a matching",
    "does not satisfy Python",
    "are not available from current channels",
    "ResolvePackageNotFound",
    "can't find Rust compiler",
)
NO_BUILD = R(
    r"requires a different Python: |Packages require a different Python\. |is not a supported wheel on this platform|"
    r"has no wheels with a matching|(?:current|requested) Python version \([\w.+]{1,20}\) does not satisfy Python|"
    r"are not available from current channels|ResolvePackageNotFound|can't find Rust compiler"
)
NO_BUILD_FACTS = (
    R(
        r"Package '(?P<py_package>[\w.\-]{1,100})' requires a different Python: (?P<python>3\.\d{1,2})[\w.+]* not "
        r"in '(?P<requires_python>[^'\n]{1,60})'"
    ),
    R(r"Packages require a different Python\. (?P<python>3\.\d{1,2})"),
    R(r"(?P<wheel_file>[\w.\-+!]{1,200}\.whl) is not a supported wheel on this platform"),
    R(
        r"(?P<tag_package>[\w.\-]{1,100})(?:==(?P<tag_version>[\w.+]{1,40}))? has no wheels with a matching "
        r"(?P<tag>Python ABI|platform|Python implementation)(?: tag \(e\.g\., `(?P<tag_example>[\w.]{1,60})`\))?"
    ),
    R(
        r"(?:current|requested) Python version \((?P<python>3\.\d{1,2})[\w.+]*\) does not satisfy Python(?P<requires_python>[^\s,]{1,40})"
    ),
    R(r"(?P<conda_not_found>are not available from current channels)"),
    R(r"(?P<conda_pinned>ResolvePackageNotFound)"),
    R(r"(?P<no_rust>can't find Rust compiler)"),
)


def no_build_decided(hits: list[Hit], ctx: Context) -> bool:
    """Certain on pip's, uv's and conda's own refusals; likely for a Rust build (pip's fallback when no wheel
    fits, or an old pip that cannot read the wheel there is)."""
    return not any("no_rust" in h.facts for h in hits)


no_build_decided.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide


def explain_no_build(facts: dict) -> tuple[str, str] | None:
    """The summary and fix for pip's, uv's and conda's own words for a missing build, or None (pip's torch index
    case, which `build._no_wheel` describes)."""
    python = facts.get("python", "")
    if facts.get("no_rust"):
        return (
            "pip is building a Rust-based package from source (no wheel of it fits this Python or platform) and "
            "finds no Rust compiler",
            "Packages such as tokenizers, safetensors and cryptography ship wheels for the Python versions and "
            "platforms of their release: pip builds from source when none fits (a Python newer than the pinned "
            "release, an old pip that cannot read the wheel's tags). Upgrade pip (python -m pip install -U pip), "
            "allow a newer release of the package (an old pin, e.g. an old transformers pinning an old tokenizers, "
            "is the usual cause), or use a Python the release has wheels for; building it needs Rust (rustup, "
            "https://rustup.rs).",
        )
    if facts.get("requires_python"):
        package = facts.get("py_package") or "a package"
        return (
            f"{package} does not support Python {python}: it requires Python {facts['requires_python']}",
            f"The package's Requires-Python excludes this interpreter (Python {python}). Use a Python in that range "
            "(a new environment: uv venv --python 3.11, conda create -n train python=3.11), or a release of the "
            f"package that supports Python {python} (pip index versions {package} lists them; pip install "
            f"'{package}<version>'). --ignore-requires-python installs it anyway, and it usually fails at import.",
        )
    if facts.get("wheel_file"):
        tags = wheel_tags.file_tags(facts["wheel_file"])
        return (
            f"the wheel {facts['wheel_file']} is built for another Python or platform than this one"
            + (f" (it is for {tags})" if tags else ""),
            "A wheel's name carries its tags (cp310 = CPython 3.10, manylinux/linux_x86_64 = Linux x86-64, "
            "win_amd64 = Windows, +cu121 = CUDA 12.1), and pip installs it only where they all fit (python -m pip "
            "debug --verbose lists the tags this interpreter accepts). Download the file built for your Python "
            "and platform (the project's release page or wheel index has one per cpXY), or run it with the Python "
            "it was built for.",
        )
    if facts.get("tag_package"):
        what = "platform" if facts.get("tag") == "platform" else "Python version"
        # the table of released wheels: what the pinned release does have
        row = wheel_tags.release(facts["tag_package"], facts.get("tag_version", "").split("+")[0])
        has = (
            f"; {row.package} {row.version} has wheels for Python {wheel_tags.python_range(row.pythons)} on "
            f"{', '.join(row.platforms) or 'no platform'}"
            if row
            else ""
        )
        example = f", e.g. {facts['tag_example']}" if facts.get("tag_example") else ""
        return (
            f"{facts['tag_package']} has no wheel for this {what} (uv found no matching {facts['tag']} tag"
            f"{example}){has}",
            f"The releases uv may use publish no wheel for this {what} (a release older than your Python, or one "
            "built only for Linux / x86-64). Use a Python (uv venv --python 3.11) or platform it publishes wheels "
            f"for, or allow a release of {facts['tag_package']} that has one (uv's hint lists the tags it found)."
            + (
                f" For {row.package} {row.version}: uv venv --python 3.{row.pythons[-1][3:]}"
                if row and row.pythons and row.pythons[-1].startswith("cp3")
                else ""
            ),
        )
    if facts.get("conda_pinned"):
        return (
            "conda found no build of a package the environment file pins: the file was exported on another "
            "platform (or its builds were removed from the channel)",
            "`conda env export` pins exact builds of one platform. Export without them (conda env export "
            "--no-builds, or --from-history for only what was asked for), or delete the build strings (=h1234_0) "
            "and the platform's own packages (libgcc-ng, _libgcc_mutex, ld_impl_linux-64 off Linux) from the "
            "file, then create the environment again.",
        )
    if facts.get("conda_not_found"):
        return (
            "conda found no such package (or version) in the channels it searched, for this platform",
            "Name the channel that publishes it (-c conda-forge for most packages; PyTorch's conda channel "
            "stopped at torch 2.5, so install torch with pip inside the conda environment: pip install torch "
            "--index-url https://download.pytorch.org/whl/cu121), check the name and version (conda search -c "
            "conda-forge <name>), and the platform: CUDA builds exist for linux-64 and win-64, not macOS.",
        )
    return None


# -- a build environment without a package the build imports (build_isolation) --------------------------------

UNDECLARED_ANCHOR = "doesn't declare it as a build dependency"
UNDECLARED = R(
    r"(?:indicates that `?(?P<building>[\w.\-]{1,80})[^`\s,]{0,80}`? )?depends on `?(?P<undeclared>[\w.\-]{1,60})`?,? "
    r"but doesn't declare it as a build dependency"
)
# uv's words for a source build (the pip ones are in kinds/__init__.py's CONTEXT_FACTS)
UV_BUILD = R(
    r"(?P<pip_build>Failed to build `|The build backend returned an error|Failed to download and build `|"
    r"doesn't declare it as a build dependency)"
)


def explain_undeclared(facts: dict) -> tuple[str, str] | None:
    """uv's hint naming a build dependency other than torch, or None (torch: `build._build_isolation`)."""
    missing = facts.get("undeclared", "torch")
    if missing == "torch":
        return None
    package = facts.get("building") or "the package"
    return (
        f"{package}'s build imports {missing}, which its isolated build environment does not have",
        f"uv (and pip) build a source package in a fresh environment holding only the build requirements it "
        f"declares; {package} imports {missing} without declaring it. Install it first, then build without "
        f"isolation: uv pip install {missing} torch && uv pip install {package} --no-build-isolation (pip: pip "
        f"install {missing} && pip install {package} --no-build-isolation), or declare it for uv:\n"
        f'[tool.uv.extra-build-dependencies]\n{package} = ["{missing}"]',
    )


# -- a project that takes its version from git, built from a tree without it (read by launchers.py's broken_install)

SCM_TEMPLATES = ("build_tools:setuptools-scm-unable-to-detect-version",)
SCM_ANCHORS = ("setuptools-scm was unable to detect version for",)
SCM = R(r"setuptools-scm was unable to detect version for '?(?P<scm_root>[^'\n]{1,300}?)'?\.?[ \t]*(?:\n|$)")


def explain_scm(facts: dict) -> tuple[str, str] | None:
    """setuptools-scm finding no version for the project being installed, or None when that was not read."""
    if "scm_root" not in facts:
        return None
    return (
        f"setuptools-scm found no version for the project in {facts['scm_root']}: the project takes its version "
        "from git, and the tree pip built has no git metadata (a zip or tarball download of the repository, or a "
        "copy without its .git folder), or git is not installed",
        "Install from a git clone (git clone <repository URL>, then pip install -e . inside it), from PyPI, or "
        "with pip install git+https://github.com/<user>/<project>.git instead of the archive's URL. In a Docker "
        "build, copy the .git folder into the build context or give the version by hand "
        "(SETUPTOOLS_SCM_PRETEND_VERSION=<version> pip install .). If the tree is a clone, check that git runs "
        "there (git describe), and build from the repository's root rather than a subfolder.",
    )

"""Which release of a package has wheels for which Python and platform, from the files each release uploaded.

pip's resolver (pip/_internal/resolution/resolvelib/factory.py, ``_report_single_requirement_conflict``) prints
``Could not find a version that satisfies the requirement {} (from versions: {})`` and ``No matching distribution
found for {}`` (the catalog's third_party:pip-could-not-find-version and third_party:pip-no-matching-distribution)
when no candidate fits. The versions it lists are the candidates it found for *this* interpreter and platform: a
release with a wheel whose tags this Python accepts, or an sdist, and whose Requires-Python admits it. So the list
is a fingerprint of the interpreter: the CPython versions every listed release has a wheel for and the pinned one
has not. The table (`catalog/wheel_tags.tsv`, written by ``benchmarks/wheel_tags.py --build`` from PyPI's JSON API)
holds, per final release, the CPython tags of its wheels, their platforms, whether an sdist exists, its
Requires-Python, for torch and torchvision the CUDA of the Linux x86-64 wheel on PyPI, and for the packages built
against one torch release (torchvision, torchaudio, xformers, vllm) the torch that wheel requires: which release of
them goes with a torch (pip's "torchvision 0.17.0 depends on torch==2.2.0", torchvision's ops missing).

The same two lines are printed for a version that does not exist, a mirror missing it, or no network at all
("from versions: none"): the table decides only when the version exists and the list names a Python it lacks.

    >>> release("torch", "1.13.1").pythons
    ('cp37', 'cp38', 'cp39', 'cp310', 'cp311')
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import NamedTuple

from packaging.version import InvalidVersion, Version

FAMILY = "builds and installs"

TABLE = Path(__file__).resolve().parent.parent / "catalog" / "wheel_tags.tsv"

# pip's two lines with the requirement (pinned or not) and, on the first, the candidates it found
PIP_NOT_FOUND = re.compile(
    r"(?:Could not find a (?:final )?version that satisfies the requirement|No matching distribution found for) "
    r"(?P<pip_package>[A-Za-z][\w.\-]{0,60})(?:\[[\w,\s-]{0,80}\])?"
    r"(?:\s{0,2}==\s{0,2}(?P<pip_version>\d[\w.]{0,30})(?:\+\w{1,20})?(?![\w.*]))?"
    r"(?:[^\n(]{0,120}\(from versions: (?P<from_versions>[^)\n]{0,4000})\))?"
)

# pip 22+: the releases it skipped because their Requires-Python excludes this interpreter (the same function)
PIP_IGNORED = re.compile(
    r"Ignored the following versions that require a different python version: (?P<ignored_python>[^\n]{1,4000})"
)


class Release(NamedTuple):
    """One release's files: the CPython tags (``py3``: any Python 3), platforms, sdist, Requires-Python, CUDA."""

    package: str
    version: str
    requires_python: str
    pythons: tuple[str, ...]
    platforms: tuple[str, ...]
    sdist: bool
    cuda: str  # the Linux x86-64 wheel's CUDA ("" CPU-only, "-" not read)
    torch: str  # the torch that wheel requires (``==2.1.0``; "" none, "-" not read)


@cache
def load() -> dict[str, list[Release]]:
    """``{package: its releases, oldest first}`` from the committed table."""
    table: dict[str, list[Release]] = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            continue
        name, version, requires, pythons, platforms, sdist, cuda, torch = line.split("\t")
        table.setdefault(name, []).append(
            Release(
                name,
                version,
                requires,
                tuple(pythons.split()),
                tuple(platforms.split()),
                sdist == "sdist",
                cuda,
                torch,
            )
        )
    return table


def released_pins() -> str:
    """A pattern for ``X==V`` where X is a package of the table besides torch's own (torch\\w* is build.py's) and V
    one of its releases: pip not finding a release that exists is a missing build; one that never existed (numpy==9.9)
    is a wrong pin, not this kind."""
    pins = []
    for package, rows in load().items():
        if package.startswith("torch"):
            continue
        spelled = "[-_.]".join(re.escape(part) for part in package.split("-"))
        versions = "|".join(re.escape(r.version) for r in sorted(rows, key=lambda r: -len(r.version)))
        pins.append(f"(?i:{spelled})\\s?==\\s?(?:{versions})")
    return "|".join(pins)


def normalise(package: str) -> str:
    """PyPI's name for what a requirement spells (Flash_Attn, flash_attn: flash-attn)."""
    return re.sub(r"[-_.]+", "-", package).lower()


def release(package: str, version: str) -> Release | None:
    """The row of ``package`` ``version`` (2.1 matches 2.1.0), else None."""
    wanted = _parse(version)
    if wanted is None:
        return None
    return next((r for r in load().get(normalise(package), ()) if _parse(r.version) == wanted), None)


def python_range(tags: tuple[str, ...]) -> str:
    """``3.8-3.12`` for cp38..cp312 (``any Python 3`` for a py3 wheel)."""
    if "py3" in tags:
        return "any Python 3"
    versions = sorted(_minor(tag) for tag in tags if tag.startswith("cp"))
    if not versions:
        return "no CPython"
    first, last = versions[0], versions[-1]
    return f"3.{first}" if first == last else f"3.{first}-3.{last}"


def interpreters(package: str, wanted: Release, listed: list[str]) -> list[str]:
    """The CPython tags that every release pip listed installs on and ``wanted`` has no wheel for: what the
    interpreter must be (empty when the list says nothing: no release listed, or every one an sdist)."""
    # a pre-release, or a release newer than the table, says nothing either way
    rows = [release(package, version.split("+")[0]) for version in listed]
    if "py3" in wanted.pythons or wanted.sdist:
        return []
    with_wheels = [r for r in rows if r is not None and not r.sdist and "py3" not in r.pythons]
    if not with_wheels:
        return []
    common = set.intersection(*(set(r.pythons) for r in with_wheels))
    return sorted(common - set(wanted.pythons), key=_minor)


def platforms_of_interpreter(package: str, wanted: Release, listed: list[str]) -> list[str]:
    """The platforms every release pip listed has wheels for and ``wanted`` has not: where the interpreter runs,
    when its Python is one ``wanted`` has wheels for (empty when the list does not say)."""
    rows = [release(package, version.split("+")[0]) for version in listed]
    with_wheels = [r for r in rows if r is not None and not r.sdist and "any" not in r.platforms]
    if not with_wheels or wanted.sdist or "any" in wanted.platforms:
        return []
    common = set.intersection(*(set(r.platforms) for r in with_wheels))
    return sorted(common - set(wanted.platforms))


def newest_for(package: str, python: str) -> Release | None:
    """The newest release of ``package`` with a wheel (or sdist) for ``python`` (``cp312``)."""
    fits = [r for r in load().get(normalise(package), ()) if python in r.pythons or "py3" in r.pythons]
    return max(fits, key=lambda r: _parse(r.version) or Version("0"), default=None)


def skipped_for_python(version: str, ignored: str) -> str:
    """The Requires-Python pip's "Ignored the following versions" line gives ``version`` ("" when not named)."""
    found = re.search(rf"(?:^|; ){re.escape(version)} Requires-Python ([^;\n]{{1,80}})", ignored)
    return found.group(1).strip() if found else ""


def explain_pin(
    package: str, version: str, listed_text: str | None, python: str = "", ignored: str = ""
) -> tuple[str, str, bool] | None:
    """(summary, fix, decided) for pip finding no candidate for ``package==version``, or None when the table
    does not hold the package. ``decided``: the release exists and the versions pip listed, or the Python the
    log names (``3.12``), are a Python it has no wheel for (both sides of the combination in the log)."""
    rows = load().get(normalise(package))
    if rows is None:
        return None
    name = normalise(package)
    parsed = _parse(version)
    if parsed is None or parsed.is_prerelease or parsed > (_parse(rows[-1].version) or parsed):
        return None  # a pre-release, or one newer than the table: it cannot say
    wanted = release(name, version)
    listed = [v.strip() for v in (listed_text or "").split(",") if v.strip() and v.strip() != "none"]
    if wanted is None:
        finals = [r.version for r in rows]
        return (
            f"{name} {version} was never released on PyPI (its releases run {finals[0]} to {finals[-1]})",
            f"Pin a release that exists: pip index versions {name} lists them (the nearest: "
            f"{_nearest(rows, version)}). A local build tag (+cu121) is on PyTorch's own index, given with "
            "--index-url, not on PyPI.",
            False,
        )
    requires = skipped_for_python(version, ignored)
    if requires:
        return (
            f"{name} {version} requires Python {requires}, and pip skipped it for this interpreter",
            f"pip says so itself: this Python is outside {name} {version}'s Requires-Python ({requires}). Create "
            "the environment with a Python in that range (uv venv --python 3.X, conda create -n train python=3.X), "
            f"or pin a release of {name} that supports this one (the versions pip listed do).",
            True,
        )
    where = python_range(wanted.pythons)
    platforms = ", ".join(wanted.platforms) or "none (source only)"
    facts = f"{name} {version} has wheels for Python {where} on {platforms}" + (
        f" (Requires-Python {wanted.requires_python})" if wanted.requires_python else ""
    )
    pythons = interpreters(name, wanted, listed)
    said_python = "cp" + python.replace(".", "") if re.fullmatch(r"3\.\d{1,2}", python) else ""
    if said_python and not pythons and not wanted.sdist and "py3" not in wanted.pythons:
        pythons = [said_python] if said_python not in wanted.pythons else []
    if pythons and wanted.pythons:
        interpreter = " or ".join(f"3.{_minor(tag)}" for tag in pythons[:3])
        newest = newest_for(name, pythons[0])
        evidence = (
            f"the releases pip did list are those with a wheel for Python {interpreter}"
            if listed
            else f"the log's Python is {interpreter}"
        )
        summary = f"no {name} {version} wheel for this interpreter: {facts}, and {evidence}"
        fix = (
            f"This environment's Python ({interpreter}) is outside what {name} {version} was built for. Either "
            f"create the environment with a Python it has wheels for (uv venv --python 3.{_minor(wanted.pythons[-1])}"
            f", or conda create -n train python=3.{_minor(wanted.pythons[-1])}), or pin a release built for this "
            "Python"
            + (f": the newest is {newest.version} (pip install '{name}=={newest.version}')" if newest else "")
            + "."
        )
        return summary, fix, True
    elsewhere = platforms_of_interpreter(name, wanted, listed)
    if len(elsewhere) == 1:
        last = max(
            (r for r in rows if elsewhere[0] in r.platforms), key=lambda r: _parse(r.version) or Version("0")
        )
        # likely: a mirror that lacks the release leaves the same list
        return (
            f"no {name} {version} wheel for this platform: {facts}, and the releases pip did list are those with "
            f"a wheel for {elsewhere[0]} (the last {name} with one: {last.version})",
            f"{name} {version} publishes no wheel for {elsewhere[0]}: pin the last release that has one (pip "
            f"install '{name}=={last.version}'), or run on a platform {name} {version} has wheels for "
            f"({platforms}; a container or a remote Linux machine for a training run).",
            False,
        )
    summary = f"pip found no {name} {version} it could install here: {facts}"
    fix = (
        f"Compare with this environment: python -V and python -m pip debug --verbose (the tags it accepts). A "
        f"Python outside {where} or another platform finds no wheel: use a Python and platform it was built for, "
        "or a release built for yours. "
        + (
            "'from versions: none' for a release that exists usually means the index was not reached (a proxy, "
            "no network, a mirror without the package): pip install -v shows the pages it read."
            if listed_text is not None and not listed
            else "A mirror that has not synced the release finds none either: pip install -v shows the pages it read."
        )
    )
    return summary, fix, False


# pip's resolver report ("torchvision 0.17.0 depends on torch==2.2.0", "The user requested torch==2.1.0") and its
# post-install check ("xformers 0.0.23 requires torch==2.1.1, but you have torch 2.2.0")
DEPENDS_ON_TORCH = re.compile(
    r"(?P<package>torchvision|torchaudio|xformers|vllm) (?P<version>\d[\w.+!]{0,30}) (?:depends on|requires) "
    r"torch\s?==\s?(?P<needs>\d[\w.]{0,20})"
)
REQUESTED_TORCH = re.compile(r"The user requested torch\s?==\s?(?P<wanted>\d[\w.]{0,20})")


def built_for_torch(package: str, torch: str) -> Release | None:
    """The newest release of ``package`` whose wheel requires exactly torch ``torch`` (2.1.2), else None (a
    nightly, or a torch no release of it pins: another patch would be refused by its ``==`` pin)."""
    wanted = _parse(torch)
    if wanted is None or wanted.is_prerelease or wanted.is_devrelease:
        return None
    rows = [r for r in load().get(package, ()) if r.torch.startswith("==") and _parse(r.torch[2:]) == wanted]
    return rows[-1] if rows else None


def pairing(cause: str, torch: str) -> str:
    """A sentence naming the release of the package in ``cause`` (pip's "X V depends on torch==W") built for
    ``torch``, or "" when the table has none."""
    found = DEPENDS_ON_TORCH.search(cause)
    if found is None or not torch:
        return ""
    package = found.group("package")
    partner = built_for_torch(package, torch)
    if partner is None or _parse(partner.torch[2:]) == _parse(found.group("needs")):
        return ""
    return (
        f" The {package} release built for torch {torch} is {partner.version} (its wheel requires "
        f"torch{partner.torch}): pip install 'torch=={torch}' '{package}=={partner.version}'."
    )


def file_tags(filename: str) -> str:
    """What a wheel's name says it is built for ("CPython 3.10 on linux_x86_64"), "" when it is not one."""
    found = re.search(
        r"-(?P<python>(?:cp|py)\d{1,3})-(?P<abi>\w{1,20})-(?P<platform>[\w.]{1,120})\.whl$", filename
    )
    if found is None:
        return ""
    python = found.group("python")
    what = f"CPython 3.{python[3:]}" if python.startswith("cp3") else f"Python {python[2:]}"
    return f"{what} on {found.group('platform')}" + (
        " (free-threaded)" if found.group("abi").endswith("t") else ""
    )


def torch_with_cuda(cuda: str) -> list[Release]:
    """The torch releases whose Linux x86-64 wheel on PyPI is built with CUDA ``cuda`` (``12.1``; 12 = any 12.x)."""
    return [
        r
        for r in load().get("torch", ())
        if r.cuda not in ("", "-") and (r.cuda == cuda or r.cuda.split(".")[0] == cuda)
    ]


def _nearest(rows: list[Release], version: str) -> str:
    wanted = _parse(version) or Version("0")
    below = [r.version for r in rows if (_parse(r.version) or Version("0")) <= wanted]
    return below[-1] if below else rows[0].version


def _parse(version: str) -> Version | None:
    try:
        return Version(version)
    except InvalidVersion:
        return None


def _minor(tag: str) -> int:
    """12 for cp312."""
    found = re.match(r"cp3(\d+)", tag)
    return int(found.group(1)) if found else 0

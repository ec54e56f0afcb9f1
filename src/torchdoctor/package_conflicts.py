"""What ``pip check`` says, read from the installed packages' metadata: each requirement an installed package
states (``torchvision 0.20.1`` requires ``torch==2.5.1``) that the installed version does not meet.

A torchvision or torchaudio from another release than torch pins the torch it was built with, so a mismatched
pair shows here as that pin; so does an accelerate, transformers or DeepSpeed older or newer than this torch
accepts.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Iterable
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version


@dataclass(frozen=True)
class Conflict:
    package: str  # the package stating the requirement, "torchvision"
    version: str  # its version
    requirement: str  # "torch==2.5.1"
    required: str  # the normalized name of what it requires, "torch"
    installed: str | None  # the version installed of what it requires; None when it is not installed

    def __str__(self) -> str:
        has = f"{self.installed} is installed" if self.installed else "not installed"
        return f"{self.package} {self.version} requires {self.requirement}, {has}"


def installed(dists: Iterable | None = None) -> dict[str, tuple[str, list[str]]]:
    """Each installed package's version and stated requirements, by its normalized name; the first found on
    ``sys.path`` wins, as it does for ``import``."""
    found: dict[str, tuple[str, list[str]]] = {}
    for dist in importlib.metadata.distributions() if dists is None else dists:
        if _left_by_pip(dist):
            continue  # pip ignores it too ("Ignoring invalid distribution ~orch")
        name = dist.metadata["Name"]
        if name and canonicalize_name(name) not in found:
            found[canonicalize_name(name)] = (dist.version, list(dist.requires or ()))
    return found


def _left_by_pip(dist) -> bool:
    """A ``~name`` folder: pip renames a package so while it removes it, and a stopped pip leaves it."""
    folder = getattr(dist, "_path", None)
    return folder is not None and os.path.basename(str(folder)).startswith("~")


def leftovers(folders: Iterable[str]) -> list[str]:
    """What a stopped or failed pip left in ``folders`` (site-packages): ``~name`` folders of a half-done
    uninstall or upgrade, ``*.dist-info`` folders with no ``METADATA`` naming a package, which pip skips, and
    ones pip installed that lost their ``RECORD``, which pip cannot uninstall."""
    found = []
    for folder in folders:
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("~"):
                found.append(entry.path)
            elif entry.name.endswith(".dist-info") and entry.is_dir():
                if not names_a_package(entry.path) or _pip_lost_its_record(entry.path):
                    found.append(entry.path)
    return found


def _pip_lost_its_record(dist_info: str) -> bool:
    """Installed by pip, which always writes RECORD, yet without one: pip can neither uninstall nor upgrade it
    ("Cannot uninstall ...: no RECORD file was found")."""
    try:
        with open(os.path.join(dist_info, "INSTALLER"), encoding="utf-8", errors="replace") as file:
            by_pip = file.read(64).strip() == "pip"
    except OSError:
        return False  # conda, a distribution's packages: their own tools keep them
    return by_pip and not os.path.exists(os.path.join(dist_info, "RECORD"))


def names_a_package(dist_info: str) -> bool:
    try:
        with open(os.path.join(dist_info, "METADATA"), encoding="utf-8", errors="replace") as file:
            for line in file:
                if not line.strip():
                    return False  # the headers end here
                if line.startswith("Name:") and line[5:].strip():
                    return True
    except OSError:
        return False
    return False


def conflicts(packages: dict[str, tuple[str, list[str]]]) -> list[Conflict]:
    """Every requirement (extras left out, markers taken for this Python) that the installed versions break."""
    broken = []
    for name, (version, requires) in sorted(packages.items()):
        for text in requires:
            try:
                requirement = Requirement(text)
                if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                    continue
            except (InvalidRequirement, ValueError):  # a malformed line pip itself skips
                continue
            required = canonicalize_name(requirement.name)
            there = packages.get(required)
            if there is None:
                broken.append(Conflict(name, version, _spelled(requirement), required, None))
            elif not _meets(there[0], requirement):
                broken.append(Conflict(name, version, _spelled(requirement), required, there[0]))
    return broken


def _meets(version: str, requirement: Requirement) -> bool:
    try:
        return requirement.specifier.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return True  # not a version packaging can compare: pip check says nothing either


def _spelled(requirement: Requirement) -> str:
    return f"{requirement.name}{requirement.specifier}"

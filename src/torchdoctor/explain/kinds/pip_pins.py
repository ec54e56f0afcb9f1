"""A requirement pinned to a release the package index never offered: ``clip==1.0``, ``X==V`` from a git install.

pip says it for a requirement no candidate satisfies, in the words of its release: the resolver's
``No matching distribution found for {}`` (pip/_internal/resolution/resolvelib/factory.py, 20.3 on; the legacy
resolver's pip/_internal/index/package_finder.py before, from pip 6: the catalog's
third_party:pip-no-matching-distribution), pip 1.x's ``No distributions matching the version for {}``
(pip/index.py PackageFinder.find_requirement: third_party:pip-1-no-distributions-matching-version), each under
``Could not find a version that satisfies the requirement {} (from versions: {})``. For a pin of a package other
than torch's own (build.py's no_matching_wheel reads those, and the pins wheel_tags.tsv knows were released) the
likeliest reason is the pin itself: a version published somewhere else than the index (``pip freeze`` writes a
package installed from git as ``name==version``: a requirements file made so lists ``clip==1.0``, which PyPI never
had), or a version that does not exist. A release that exists only for other Pythons or platforms prints the same
lines, and a package the index does not have at all says ``(from versions: none)`` (missing_packages.py's
no_matching_wheel reading): only likely. versions.py's dependency_version reads these lines with its other
releases' changes (`CHANGE`).
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds import wheel_tags
from torchdoctor.explain.kinds.missing_packages import _TORCH_PACKAGES

FAMILY = "builds and installs"

ANCHORS = (
    "No matching distribution found for ",
    "No distributions matching the version for ",
    "Could not find a version that satisfies the requirement ",
)
GENERIC = ANCHORS
TEMPLATES = (
    "third_party:pip-no-matching-distribution",
    "third_party:pip-1-no-distributions-matching-version",
    "third_party:pip-could-not-find-version",
)
# torch's own packages, and the releases wheel_tags.tsv knows exist (a missing build): no_matching_wheel's
_NOT_TORCH_OR_RELEASED = rf"(?!{_TORCH_PACKAGES})(?!(?:{wheel_tags.released_pins()})(?![\w.\-]))"
_PIN = (
    r"(?P<pin_package>[A-Za-z][\w.\-]{0,60})(?:\[[\w,\s-]{0,80}\])?\s{0,2}==\s{0,2}"
    r"(?P<pin_version>\d[\w.]{0,30})(?![\w.*+])"
)
CHANGE = re.compile(
    r"(?:No matching distribution found for|No distributions matching the version for|"
    r"Could not find a version that satisfies the requirement) "
    + _NOT_TORCH_OR_RELEASED
    + _PIN
    # what the index offers, on the first line; "none" (no release at all) is missing_packages.py's reading
    + r"(?![^\n(]{0,120}\(from versions: none\))"
    + r"(?:[^\n(]{0,120}\(from versions: (?P<pin_offered>[^)\n]{1,2000})\))?"
)
CONTEXT: tuple[tuple[str, re.Pattern], ...] = ()


def decisive(facts: dict, ctx_facts: dict) -> bool:
    """Never: the same lines are printed for a release without a build for this Python."""
    return False


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for a pin of a package the index has no such release of, else None (a release wheel_tags.tsv
    knows exists is a missing build: no_matching_wheel's)."""
    package, version = facts.get("pin_package"), facts.get("pin_version")
    if not package or not version or wheel_tags.release(package, version) is not None:
        return None
    offered = [v.strip() for v in facts.get("pin_offered", "").split(",") if v.strip()]
    listed = f" (it offers {_releases(offered)})" if offered else ""
    return (
        f"the requirement {package}=={version} names a release the package index pip used does not offer{listed}: "
        "a version published elsewhere (a git install that pip freeze wrote as a pin, another index) or one that "
        "does not exist",
        f"See what the index has: pip index versions {package} (or its page on pypi.org). If {package}=={version} "
        "came from a git checkout or another index (a requirements file written by pip freeze), install it from "
        f"there (pip install git+https://github.com/<owner>/<repo>.git, or --extra-index-url), or pin a release "
        f"the index lists. A PyPI project of the same name may be another package entirely: check that {package} "
        "on the index is the one the code imports.",
    )


def _releases(offered: list[str]) -> str:
    """The releases pip listed, the last few when there are many."""
    return (
        ", ".join(offered)
        if len(offered) <= 6
        else f"{len(offered)} releases, up to {', '.join(offered[-3:])}"
    )

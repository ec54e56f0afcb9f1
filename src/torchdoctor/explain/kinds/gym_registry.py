"""Gymnasium's registry refusing an environment id: the package that registers it missing, or another release's id.

``gymnasium/envs/registration.py`` (Farama-Foundation/Gymnasium; gym 0.26's own, which gymnasium forked) checks an
id before ``gym.make`` builds it, in three steps that each raise with the id in their words:
``_check_namespace_exists`` "Namespace {ns} not found. Have you installed the proper package for {ns}?",
``_check_name_exists`` "Environment `{name}` doesn't exist{ in namespace ns}.{ Did you mean: `x`?}" (no backticks
before 0.28, and a paste often drops them), and ``_check_version_exists`` "Environment version `v{n}` for
environment `{id}` doesn't exist." or "Environment version v{n} for `{id}` is deprecated. Please use `{latest}`
instead.". gymnasium registers only its own environments; any other id is registered when its package runs
``gymnasium.register``: before 1.0 gymnasium imported the installed packages that declared a ``gymnasium.envs``
entry point (``load_plugin_envs``), 1.0 dropped that, so the package has to be imported by the script. The Atari
games are ale-py's (``ale_py/registration.py``: ``import ale_py`` registers ``ALE/<Game>-v5`` and the older
``<Game>-v0/-v4`` and ``<Game>NoFrameskip-v0/-v4``; its ROMs ship inside the wheel from 0.9). So the message says a
package not installed, not imported, or an id from another release of it: read by versions.py's
dependency_version, likely (a misspelt id prints the same words).
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TEMPLATES = (
    "third_party:gymnasium-environment-doesn-exist",
    "third_party:gymnasium-environment-doesn-exist-old",
    "third_party:gymnasium-namespace-not-found",
    "third_party:gymnasium-environment-version-doesn-exist",
    "third_party:gymnasium-environment-version-deprecated",
)
ANCHORS = ("doesn't exist", "Have you installed the proper package for", "Environment version ")
# "doesn't exist" is only registration.py's where an environment id stands before it (versions.py's reject: the
# whole line, so that the catalog's reading of a template decides on none of its placeholders)
NOT_AN_ID = (
    r"^(?![^\n]*Environment (?:`?[\w:/.{}-]{1,200}`?|version `?v[\w{}]{1,10}`? for environment `?[\w:/.{}-]{1,200}`?) "
    r"doesn't exist)[^\n]*doesn't exist[^\n]*"
)
MATCH = R(
    r"Environment `?(?P<gym_env>[\w:/.-]{1,200})`? doesn't exist(?: in namespace (?P<gym_env_ns>[\w-]{1,100}))?|"
    r"Namespace (?P<gym_namespace>[\w-]{1,100}) not found\. Have you installed the proper package for|"
    r"Environment version `?v(?P<gym_version>\d{1,4})`? for (?:environment )?`?(?P<gym_versioned>[\w:/.-]{1,200})`? "
    r"(?:doesn't exist|is deprecated)"
)
_ATARI = R(r"^ALE/|NoFrameskip|Deterministic")


def explain(facts: dict) -> tuple[str, str] | None:
    """The summary and fix for an environment id gymnasium has not registered, or None when none was read."""
    namespace = facts.get("gym_namespace") or facts.get("gym_env_ns")
    env = facts.get("gym_env") or facts.get("gym_versioned")
    if not (namespace or env):
        return None
    if facts.get("gym_version"):
        summary = (
            f"gymnasium knows the environment {env} but not its version v{facts['gym_version']}: the code was "
            "written for another release of the package that registers it"
        )
    elif env:
        where = f" in the namespace {namespace}" if namespace else ""
        summary = (
            f"gymnasium has no environment '{env}' registered{where}: the package that registers it is not "
            "installed or not imported before gym.make, or the id is one another release of it names"
        )
    else:
        summary = (
            f"gymnasium has no environment of the namespace {namespace} registered: the package that registers "
            f"{namespace} is not installed, or not imported before gym.make"
        )
    if namespace == "ALE" or (env and _ATARI.search(env)):
        fix = (
            "The Atari games are registered by ale-py, not by gymnasium: pip install ale-py (or "
            "'gymnasium[atari]'; the ROMs ship inside ale-py from 0.9), and import ale_py before gym.make "
            "(gym.register_envs(ale_py) keeps an editor from removing the import): gymnasium 1.0 no longer loads "
            "installed packages' environments by itself. import ale_py registers ALE/<Game>-v5 and the older "
            "<Game>NoFrameskip-v4 and <Game>-v4 ids. Code written for gym or atari-py wants the releases it "
            "was written for (its requirements file), or the ALE/ ids."
        )
    else:
        fix = (
            "gymnasium registers only its own environments; any other id is registered when its package is "
            "imported: pip install that package and import it before gym.make (gymnasium 1.0 stopped importing "
            "installed packages' environments by itself), or write the id as 'module:EnvName-v0', which makes "
            "gym.make import the module. A version the message says is missing or deprecated is one another "
            "release of the package has: use the version it names, or install the release the code was written "
            'for (its requirements file). python -c "import gymnasium; gymnasium.pprint_registry()" lists what '
            "is registered; check the id's spelling against it."
        )
    return summary, fix

"""What the simulators and games a reinforcement-learning run steps need beside PyTorch: MuJoCo's release, StarCraft II's maps.

dm_control reads MuJoCo's model and data through ``dm_control/mujoco/index.py``: ``struct_indexer`` walks the
field names of ``dm_control.mujoco.wrapper.mjbindings.sizes`` (generated from the MuJoCo headers when that
dm_control was built) and runs ``attr = getattr(struct, field_name)`` on the ``mujoco`` package's MjModel or MjData.
Each dm_control release asks only for a MuJoCo at least as new as the one it was built for (setup.py:
``mujoco >= 2.1.3`` in 1.0.1, ``>= 3.1.6`` in 1.0.20, ``>= 3.11.0`` now), and MuJoCo renames and removes struct
fields between releases, so a MuJoCo newer than the dm_control (installed by another requirement, or dm_control
from an old pin or cache), or an older one pinned below it, makes that getattr fail with CPython's
``'MjModel' object has no attribute '<field>'`` (system:object-has-no-attribute). With dm_control's index.py in
the traceback the field is one dm_control expects and the MuJoCo installed lacks: the two releases do not match.
A renamed field of the user's own code prints the same words, and the log may not say which side moved, so only
likely; the fix is the pair that belongs together.

pysc2 opens a map from the StarCraft II installation it runs (``SC2PATH``, default ~/StarCraftII):
``RunConfig.map_data`` (``pysc2/run_configs/lib.py``) looks for ``<data_dir>/Maps/<map path>`` and raises
``ValueError("Map '%s' not found." % map_name)`` (3.0) or ``f"Map {map_name} not found in {self.data_dir}/Maps."``
(4.0 on) when no such file is there. The maps are not part of pysc2 or of the game's Linux package: SMAC's
``SMAC_Maps`` (oxwhirl/smac: "copy the SMAC_Maps directory to $SC2PATH/Maps") and the ladder map packs are
copied in by hand, so the line is that copy missing, an SC2PATH pointing at another installation, or a map
name another release of the maps spells otherwise: read by launchers.py's broken_install, likely.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# -- read by versions.py's dependency_version (the installed releases disagreeing)
TEMPLATE = "system:object-has-no-attribute"
ANCHORS = ("'MjModel' object has no attribute", "'MjData' object has no attribute")
FIELDS = R(r"'(?P<mujoco_struct>MjModel|MjData)' object has no attribute '(?P<mujoco_field>\w{1,80})'")

# dm_control's struct indexer in the traceback (a frame's path): the field list is dm_control's own
CONTEXT = (
    ("index.py", R(r"(?P<dm_control_indexer>dm_control[/\\]mujoco[/\\]index\.py)")),
    ("struct_indexer", R(r"(?P<dm_control_indexer>in struct_indexer)\b")),
)


def explain(facts: dict, ctx_facts: dict) -> tuple[str, str] | None:
    """The summary and fix for a MuJoCo struct field the installed mujoco lacks, or None when none was read."""
    if not facts.get("mujoco_struct"):
        return None
    struct, field = facts["mujoco_struct"], facts.get("mujoco_field", "<field>")
    if ctx_facts.get("dm_control_indexer"):
        return (
            f"dm_control asked MuJoCo's {struct} for the field {field}, which the installed mujoco does not "
            "have: dm_control and mujoco are releases that do not belong together (MuJoCo renames and removes "
            "fields between releases, and dm_control only asks for a minimum)",
            "Install the pair that was released together: pip show dm_control mujoco shows both, and each "
            "dm_control release is built for the MuJoCo its setup.py names as the minimum. Either upgrade "
            "dm_control to the release made for the mujoco installed (pip install -U dm_control, which also pulls "
            "a matching mujoco), or pin mujoco back to the one the installed dm_control was built for (pip install "
            "'mujoco==<that version>'; a project's requirements file may pin both). A mujoco-py stack (gym's older "
            "MuJoCo environments, d4rl) beside it wants its own MuJoCo 2.x: keep it in a separate environment.",
        )
    return (
        f"the code reads the field {field} of MuJoCo's {struct}, which the installed mujoco does not have: it was "
        "written for another MuJoCo release (fields are renamed and removed between releases), or the name is "
        "misspelt",
        "Compare pip show mujoco with the MuJoCo the code (or the library calling mujoco) was written for, and "
        "install that release: pip install 'mujoco==<that version>' (MuJoCo's changelog lists renamed fields), "
        "or update the code to the field's new name. If the name is your own, check its spelling against "
        "mujoco.MjModel's fields.",
    )


# -- read by launchers.py's broken_install (what the environment lacks)
MAP_TEMPLATES = ("third_party:pysc2-map-not-found", "third_party:pysc2-map-not-found-in-maps")
MAP_ANCHORS = ("Map '", "/Maps.")
MAP = R(
    r"Map '(?P<sc2_map>[^'\n]{1,200}\.SC2Map)' not found\.|"
    r"Map (?P<sc2_map_named>\S{1,200}\.SC2Map) not found in (?P<sc2_data_dir>\S{1,300})/Maps\."
)


def explain_map(facts: dict) -> tuple[str, str] | None:
    """The summary and fix for a StarCraft II map pysc2 cannot find, or None when none was read."""
    name = facts.get("sc2_map") or facts.get("sc2_map_named")
    if not name:
        return None
    where = f"{facts['sc2_data_dir']}/Maps" if facts.get("sc2_data_dir") else "$SC2PATH/Maps"
    folder = name.split("/")[0] if "/" in name else None
    copy = (
        f"copy the {folder} folder of maps (SMAC's SMAC_Maps comes with smac: smac/env/starcraft2/maps/"
        f"SMAC_Maps, or its release's SMAC_Maps.zip) into {where}/"
        if folder
        else f"put the map file into {where}/ (the ladder and mini-game map packs are downloaded and unzipped there)"
    )
    return (
        f"pysc2 cannot find the map {name} in the StarCraft II installation it runs ({where}): the maps are copied "
        "in by hand, and this one is not there (or SC2PATH points at another StarCraft II)",
        f"Install the maps into the game the run uses: {copy}. Check that SC2PATH names that installation "
        "(export SC2PATH=<the StarCraftII folder>; pymarl's install_sc2.sh puts it in 3rdparty/StarCraftII), "
        "and that the map's name matches the file (the maps of a newer SMAC or pysc2 release may be named "
        "otherwise).",
    )

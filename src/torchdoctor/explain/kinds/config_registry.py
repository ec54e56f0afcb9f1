"""A ``type`` named in an OpenMMLab config that its registry does not hold.

OpenMMLab builds every part of a model, dataset and runner from the config's ``type=`` strings, looking each up in
a registry that is filled when the module defining the class is imported (``@MODELS.register_module()``):

- MMCV 1.x, ``mmcv/utils/registry.py`` ``build_from_cfg``: ``raise KeyError(f'{obj_type} is not in the
  {registry.name} registry')``; a failure inside a class being built is re-raised with that class's name in front
  (``raise type(e)(f'{obj_cls.__name__}: {e}')``), hence "FCOS: 'DWHead is not in the models registry'";
- MMEngine (OpenMMLab 2.0), ``mmengine/registry/build_functions.py``: "{obj_type} is not in the
  {registry.scope}::{registry.name} registry. Please check whether the value of `{obj_type}` is correct or it was
  registered as expected. More details can be found at ...#import-the-custom-module".

MMEngine's own text names the two causes: the module that registers the class was never imported in this run
(a project's own modules outside the package: ``custom_imports`` in the config, the repository not on
``PYTHONPATH``, the package installed elsewhere than the checkout being run, a ``default_scope`` of another
package), or the name is not one the installed release registers (misspelt, added in a later release, or
renamed). The log does not say which: likely only, the second reading named.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

MMCV_REGISTRIES = (
    "models",
    "model",
    "dataset",
    "pipeline",
    "backbone",
    "head",
    "neck",
    "loss",
    "detector",
    "hook",
    "transform",
    "optimizer",
)
NOT_REGISTERED = R(
    r"(?P<registry_type>[A-Za-z_][\w.]{0,100}) is not in the (?:(?P<registry_scope>\w{1,40})::)?"
    r"(?P<registry_name>[\w ]{1,40}?) registry\b"
)


def _not_registered(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    name = first(hits, "registry_type", "the type")
    scope = first(hits, "registry_scope")
    registry = first(hits, "registry_name", "")
    where = f"the {scope}::{registry} registry" if scope else f"the {registry} registry"
    return (
        f"the config names {name}, which {where} does not hold: the module that registers it was not imported "
        "in this run" + on_ranks(hits),
        f"A class is in the registry only once the module that defines it (@MODELS.register_module()) has been "
        f"imported. For a project's own module outside the package, list it in the config: "
        f"custom_imports = dict(imports=['<package>.<module defining {name}>'], allow_failed_imports=False); or "
        "import it at the top of tools/train.py; run from the repository's root with it on the path "
        "(export PYTHONPATH=$(pwd):$PYTHONPATH), and reinstall the package from that checkout (pip install -v -e .) "
        "so that the code imported is the code you edit. With MMEngine, set default_scope to the package that "
        f"registers it (default_scope='mmdet'). If {name} should come with the package itself, check its spelling "
        "against the installed release (python -c 'import mmdet.models; from mmdet.registry import MODELS; "
        "print(sorted(MODELS.module_dict))') and install the release that has it.",
    )


CONFIG_TYPE_NOT_REGISTERED = Recogniser(
    kind="config_type_not_registered",
    title="a config type the registry does not hold",
    templates=("third_party:mmcv-type-not-in-registry", "third_party:mmengine-type-not-in-scope-registry"),
    # MMEngine's own words; MMCV 1.x's with the registries' names OpenMMLab 1.x packages give them
    # (mmdet/models/builder.py: Registry('models'); mmcv/cnn/builder.py: Registry('model'); datasets/builder.py:
    # Registry('dataset'), Registry('pipeline'))
    anchors=(
        "registry. Please check whether the value of",
        *(f"is not in the {name} registry" for name in MMCV_REGISTRIES),
    ),
    match=NOT_REGISTERED,
    # MMEngine's message itself gives both readings; the log cannot tell them apart
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "dependency_version",
            "the installed release registers no class of that name (added in a later release, renamed, or "
            "misspelt in the config)",
            "Compare the name with the installed release's registry (print(sorted(MODELS.module_dict))) and "
            "install the release whose configs you run (mim install 'mmdet==<the config's release>').",
        ),
    ),
    describe=_not_registered,
)

RECOGNISERS = (CONFIG_TYPE_NOT_REGISTERED,)

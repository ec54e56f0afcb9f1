"""A key an OpenMMLab class reads from its config that the config does not hold (or one it does not take).

MMEngine builds every part of a model, dataset and runner from the config (``mmengine/registry/build_functions.py``
``build_from_cfg``), and its 0.x releases re-raise an error raised while building a class with the class and its
module in front: ``raise type(e)(f'class `{obj_cls.__name__}` in {cls_location}.py: {e}')``. The config's
dictionaries are ``ConfigDict`` (``mmengine/config/config.py``; ``mmcv/utils/config.py`` in MMCV 1.x), whose
``__getattr__`` turns a key it lacks into ``AttributeError: 'ConfigDict' object has no attribute '{name}'``; a key
the class's ``__init__`` does not take is CPython's ``__init__() got an unexpected keyword argument '{}'``. Either
way the installed class and the config disagree on the class's arguments, which is what a config written for
another release of the package gives (OpenMMLab 2.0's release candidates and development branches changed the
arguments of their modules between releases, and one package's config builds another's classes: mmseg's
Mask2Former head builds mmdet's transformer layers). A config of the project's own that lacks or misspells the key
prints the same line, so the reading is likely only, and says so.

    >>> diagnosis(Raised("AttributeError", "class `Head` in mmseg/models/head.py: 'ConfigDict' object has no "
    ...                  "attribute 'layers'"))[0].split(":")[0]
    "mmseg's Head (mmseg/models/head.py) reads the key 'layers' from its config, which the config does not have"
"""

from __future__ import annotations

import re

from torchdoctor.explain.first_failure import Raised

FAMILY = "a library refusing its settings"

# MMEngine's wrapper around ConfigDict's and CPython's messages; the backticks go where a log was pasted as text
WRAPPED = re.compile(
    r"class `?(?P<cfg_class>\w{1,100})`? in (?P<cfg_module>\w{1,100}(?:/\w{1,100}){0,12})\.py: "
    r"(?:'ConfigDict' object has no attribute '(?P<cfg_key>\w{1,100})'|"
    r"(?:\w{1,100}\.)?__init__\(\) got an unexpected keyword argument '(?P<cfg_keyword>\w{1,100})')"
)
TEMPLATE = "third_party:configdict-no-attribute"
ANCHOR = "ConfigDict' object has no attribute '"


def diagnosis(raised: Raised) -> tuple[str, str, bool] | None:
    """(summary, fix, certain: never) when ``raised`` is MMEngine's error for a class built from a config that lacks a key the
    class reads, or holds one its ``__init__`` does not take; None otherwise."""
    found = WRAPPED.search(raised.message)
    if found is None:
        return None
    cls, module = found["cfg_class"], found["cfg_module"]
    package = module.split("/")[0]
    if found["cfg_key"]:
        what = f"reads the key '{found['cfg_key']}' from its config, which the config does not have"
    else:
        what = f"does not take the key '{found['cfg_keyword']}' its config passes"
    summary = (
        f"{package}'s {cls} ({module}.py) {what}: the config was written for another release of {package} "
        "(or of the OpenMMLab package whose classes it builds) than the one installed; or the config's own key is "
        "missing or misspelt"
    )
    fix = (
        f"Install the releases the config was written for: the repository's requirements (requirements/mminstall.txt) "
        f"name them (mim install '{package}==<release>', and the mmcv, mmengine and mmdet releases it asks for). A "
        "config from a package's development branch (OpenMMLab 2.0's dev-1.x, dev-3.x) needs the other packages "
        "from theirs too: pip install git+https://github.com/open-mmlab/<package>.git@<branch>. Or make the config "
        f"match the installed release: compare it with {cls}.__init__ in {module}.py and with that release's own "
        f"config of the same model (pip show {package} names the release)."
    )
    return summary, fix, False

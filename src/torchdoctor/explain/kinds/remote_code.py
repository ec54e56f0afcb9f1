"""A model whose repository carries its own modelling code, loaded without ``trust_remote_code=True``.

transformers runs a repository's own configuration or modelling code (``auto_map`` in its config.json) only when
the caller opts in. Without it, ``AutoConfig`` / ``AutoModel`` ``from_pretrained`` refuse:
``transformers/models/auto/configuration_auto.py`` and, later, ``dynamic_module_utils.py``
``resolve_trust_remote_code``: "Loading {} requires you to execute the configuration file in that repo on your
local machine. Make sure you have read the code there to avoid malicious use, then set the option
`trust_remote_code=True` to remove this error."; newer releases ask on the terminal and, with no answer (or no
terminal, as under a launcher), raise "Loading this model requires you to execute custom code contained in the model
repository on your local machine. Please set the option `trust_remote_code=True` to permit loading of this model." or
"... Please pass the argument `trust_remote_code=True` to allow custom code to be run.". The message names its
cause; the reading is certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, on_ranks

FAMILY = "checkpoints and pretrained models"


def _not_trusted(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "the model's repository carries its own modelling code, and it was loaded without trust_remote_code=True"
        + on_ranks(hits),
        "Pass trust_remote_code=True to every from_pretrained of that repository (AutoConfig, AutoTokenizer, "
        "AutoModel...; a training framework's option: trust_remote_code: true in LlamaFactory's YAML, "
        "--trust_remote_code in the example scripts), after reading the repository's .py files. A launcher has "
        "no terminal to answer transformers' prompt, so the flag must be set.",
    )


REMOTE_CODE_NOT_TRUSTED = Recogniser(
    kind="remote_code_not_trusted",
    templates=(
        "third_party:transformers-execute-configuration-file",
        "third_party:transformers-execute-custom-code",
        "third_party:transformers-pass-trust-remote-code",
    ),
    title="a model's own code loaded without trust_remote_code",
    anchors=(
        "requires you to execute the configuration file in that repo",
        "requires you to execute custom code contained in the model repository",
        "Please pass the argument `trust_remote_code=True` to allow custom code to be run",
    ),
    describe=_not_trusted,
)

RECOGNISERS = (REMOTE_CODE_NOT_TRUSTED,)

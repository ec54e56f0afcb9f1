"""A model's or a dataset's repository that carries its own code, loaded without ``trust_remote_code=True``.

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

Hugging Face ``datasets`` (``load.py``, 2.16.1-3.6.0) refuses a dataset repository whose loader is a Python script
in the same words, copied from transformers: "Loading this dataset requires you to execute custom code contained
in the dataset repository ...", "Loading {} requires you to execute the dataset script in that repo ..." and
"The repository for {} contains custom code which must be executed to correctly load the dataset. ... Please pass
the argument `trust_remote_code=True` ...". 2.16-2.19 ran such a script unasked (a FutureWarning); 2.20.0
(huggingface/datasets#6954) asks, and refuses with no answer; 4.0.0 runs none ("Dataset scripts are no longer
supported", a release change: kinds/trainer_data_releases.py). The summary and the fix say which library refused.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "checkpoints and pretrained models"


R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the refusal's own words say whose repository it is: transformers' name the model and its configuration file,
# datasets' the dataset and its script; the line both print ("Please pass the argument ...") names neither, and
# the ValueError line above it does ("... to correctly load the dataset"), read log-wide (CONTEXT), never from
# the FutureWarning or the prompt that print its first words without refusing
WHOSE = R(
    r"(?P<dataset_code>custom code contained in the dataset repository|execute the dataset script in that repo)|"
    r"(?P<model_code>custom code contained in the model repository|execute the configuration file in that repo)"
)
CONTEXT = (
    (
        "correctly load the",
        R(
            r"Error: The repository for \S{1,300} contains custom code which must be executed to correctly load "
            r"the (?P<remote_code_of>dataset|model)\b"
        ),
    ),
)


def _whose(hits: list[Hit], ctx: Context) -> str:
    """ "dataset", "model", or "" where the log does not say."""
    facts = merged(hits)
    if "dataset_code" in facts:
        return "dataset"
    if "model_code" in facts:
        return "model"
    return ctx.facts.get("remote_code_of", "")


def _not_trusted(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    whose = _whose(hits, ctx)
    model_fix = (
        "Pass trust_remote_code=True to every from_pretrained of that repository (AutoConfig, AutoTokenizer, "
        "AutoModel...; a training framework's option: trust_remote_code: true in LlamaFactory's YAML, "
        "--trust_remote_code in the example scripts), after reading the repository's .py files. A launcher has "
        "no terminal to answer transformers' prompt, so the flag must be set."
    )
    dataset_fix = (
        "Pass trust_remote_code=True to load_dataset for that repository (or set HF_DATASETS_TRUST_REMOTE_CODE=1), "
        "after reading its loading script: datasets 2.20 to 3.6 run it only when asked, and a launcher has no "
        "terminal to answer the prompt (2.16-2.19 ran it unasked, so code written for them breaks here). datasets "
        "4.0 runs no loading script at all, flag or not: to upgrade, load the repository's data files instead "
        "(its Parquet conversion: load_dataset(name, revision='refs/convert/parquet')), or keep 'datasets<4'."
    )
    if whose == "dataset":
        return (
            "the dataset's repository has a loading script (its own code), and datasets loaded it without "
            "trust_remote_code=True" + on_ranks(hits),
            dataset_fix,
        )
    if whose == "model":
        return (
            "the model's repository carries its own modelling code, and it was loaded without trust_remote_code=True"
            + on_ranks(hits),
            model_fix,
        )
    return (
        "a repository with its own code (a model's for transformers, a dataset's loading script for datasets) was "
        "loaded without trust_remote_code=True" + on_ranks(hits),
        f'The error line above this one says which ("load the model" or "load the dataset"). A model: {model_fix} '
        f"A dataset: {dataset_fix}",
    )


REMOTE_CODE_NOT_TRUSTED = Recogniser(
    kind="remote_code_not_trusted",
    templates=(
        "third_party:transformers-execute-configuration-file",
        "third_party:transformers-execute-custom-code",
        "third_party:transformers-pass-trust-remote-code",
        "datasets:the-repository-for-contains-custom-code-3",
        "datasets:loading-this-dataset-requires-you-to",
        "datasets:loading-requires-you-to-execute-the",
    ),
    title="a model's or dataset's own code loaded without trust_remote_code",
    anchors=(
        "requires you to execute the configuration file in that repo",
        "requires you to execute custom code contained in the model repository",
        "Please pass the argument `trust_remote_code=True` to allow custom code to be run",
        # datasets/load.py 2.16.1-3.6.0: the prompt left unanswered, and the script's own refusal
        "requires you to execute custom code contained in the dataset repository",
        "requires you to execute the dataset script in that repo",
    ),
    facts=(WHOSE,),
    describe=_not_trusted,
)

RECOGNISERS = (REMOTE_CODE_NOT_TRUSTED,)

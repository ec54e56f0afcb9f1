"""A run that cannot reach the Hugging Face Hub for its dataset: a node without internet, a proxy, offline mode.

``datasets/load.py`` (``dataset_module_factory``, 2.x on) turns the Hub client's failure to connect into
ConnectionError "Couldn't reach '<name>' on the Hub (<the exception's class>)": ``ConnectionError`` or
``ConnectTimeout`` (no route to huggingface.co from this machine: a compute node without internet, a proxy the
process does not use, a firewall) or ``OfflineModeIsEnabled`` (HF_DATASETS_OFFLINE / HF_HUB_OFFLINE set and the
dataset not in this machine's cache), and, where nothing is cached either, "Couldn't reach the Hugging Face Hub for
dataset '<name>': <the offline error>" (2.6 on). The message says the Hub was not reached and why: certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _unreachable(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    name = first(hits, "hub_dataset", "") or first(hits, "hub_dataset_offline", "")
    error = first(hits, "hub_error", "")
    what = f" '{name}'" if name else ""
    if "Offline" in error or first(hits, "hub_offline"):
        return (
            f"datasets is in offline mode and the dataset{what} is not in this machine's cache"
            + on_ranks(hits),
            "Offline mode (HF_DATASETS_OFFLINE=1 or HF_HUB_OFFLINE=1) reads only the cache: load the dataset "
            "once where there is network with the same HF_HOME / HF_DATASETS_CACHE the job uses (a shared "
            "filesystem the nodes see, or copy the cache folder to them), or save it (save_to_disk) and read it "
            "with load_from_disk; or unset the offline variables on a node that can reach huggingface.co.",
        )
    return (
        f"the machine could not connect to the Hugging Face Hub for the dataset{what}"
        + (f" ({error})" if error else "")
        + on_ranks(hits),
        "Check from that node: curl -I https://huggingface.co. Compute nodes often have no internet: download "
        "the dataset on a login node into the cache the job reads (HF_HOME or HF_DATASETS_CACHE on a shared "
        "filesystem) and run the job with HF_DATASETS_OFFLINE=1 (and HF_HUB_OFFLINE=1), or load it from a local "
        "folder; behind a proxy export HTTPS_PROXY (and HTTP_PROXY) in the job's environment; where "
        "huggingface.co is blocked, a mirror set with HF_ENDPOINT.",
    )


HUB_UNREACHABLE = Recogniser(
    kind="hub_unreachable",
    templates=("datasets:couldn-reach-on-the-hub", "datasets:couldn-reach-the-hugging-face-hub"),
    title="the Hugging Face Hub unreachable from the machine that loads the dataset",
    anchors=("' on the Hub (", "Couldn't reach the Hugging Face Hub for dataset '"),
    match=R(
        r"Couldn't reach '(?P<hub_dataset>[^'\n]{1,200})' on the Hub \((?P<hub_error>\w{1,60})\)|"
        r"(?P<hub_offline>Couldn't reach the Hugging Face Hub) for dataset '(?P<hub_dataset_offline>[^'\n]{1,200})'"
    ),
    describe=_unreachable,
)

RECOGNISERS = (HUB_UNREACHABLE,)

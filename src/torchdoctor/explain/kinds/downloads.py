"""A download the run needs (pretrained weights, a dataset) that the server refused.

The message is CPython's ``urllib.error.HTTPError`` (``Lib/urllib/error.py``: "HTTP Error %s: %s", the code and
the server's reason; Python 2's urllib2 printed the same), which torch.hub's ``download_url_to_file`` and
``load_state_dict_from_url``, torchvision's and most model zoos' downloads raise. 401, 403 and 404 are the server's
answer about that URL: it wants credentials, refuses them, or has no such file. The reading is certain beside a
download in the log (torch.hub's "Downloading: ..." line, its frames, urlretrieve), likely on the line alone.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, has_fact, on_ranks

FAMILY = "checkpoints and pretrained models"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# a download in the log: torch.hub's progress line and frames, urllib's urlopen/urlretrieve, model zoos
CONTEXT: tuple[tuple[str, re.Pattern], ...] = tuple(
    (
        literal,
        R(
            r"(?P<saw_download>Downloading:? \"?https?://|\bload_state_dict_from_url\b|\bdownload_url_to_file\b|"
            r"\burlretrieve\b|\burlopen\b|\bmodel_zoo\b)"
        ),
    )
    for literal in (
        "Downloading",
        "load_state_dict_from_url",
        "download_url_to_file",
        "urlretrieve",
        "urlopen",
        "model_zoo",
    )
)

_REASONS = {
    "401": "asks for credentials the run did not give (a gated or private file)",
    "403": "refused it (Forbidden: permissions on the server, a rate limit, or a proxy that blocks it)",
    "404": "has no file at that URL (moved or removed)",
}


def _gated(hits: list[Hit]) -> tuple[str, str]:
    repo = first(hits, "gated_repo", "")
    what = f" ({repo})" if repo else ""
    return (
        f"the model the run loads is a gated Hugging Face repository{what}: the Hub refuses its files to an "
        "account that has not been granted access, or to a run without that account's token" + on_ranks(hits),
        "On the model's page on huggingface.co, logged in with the account the run will use, accept its terms "
        "(agree, or request access and wait until it is granted); then give the run that account's token: "
        "huggingface-cli login (hf auth login) on the machine that trains, or HF_TOKEN=<a token with read access> "
        "in the job's environment (every node). Being logged in is not enough without the access, and the access "
        "is not enough without the token.",
    )


def _refused(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if any(h.facts.get("gated") for h in hits):
        return _gated(hits)
    code = first(hits, "http_code", "403")
    return (
        f"a download the run needs was refused: the server answered HTTP {code}, it {_REASONS[code]}"
        + on_ranks(hits),
        "The URL, not the training code, failed. Open it from the same machine (wget or curl -I <url>): a "
        "project whose weights moved names the new URL in its README or releases (upgrade the package, or "
        "download the file by hand into the cache it reads, ~/.cache/torch/hub/checkpoints for torch.hub and "
        "torchvision); a gated file needs credentials (huggingface-cli login, HF_TOKEN); torch.hub hitting "
        "GitHub's API rate limit (403) takes GITHUB_TOKEN or skip_validation=True; behind a proxy set "
        "HTTPS_PROXY. A server that refused everyone for a while answers again later: retry.",
    )


DOWNLOAD_REFUSED = Recogniser(
    # Lib/urllib/error.py HTTPError.__str__ ("HTTP Error %s: %s"): read for the codes that say the URL itself
    # was refused, not a server error (5xx)
    kind="download_refused",
    templates=(
        "system:urllib-http-error",
        # transformers/utils/hub.py cached_file and huggingface_hub's GatedRepoError: a gated model's files
        "transformers:you-are-trying-to-access-a-gated-repo",
        "third_party:huggingface-hub-cannot-access-gated-repo",
    ),
    title="a download refused by its server",
    anchors=("HTTP Error ", "You are trying to access a gated repo", "Cannot access gated repo for url "),
    match=R(
        r"HTTP Error (?P<http_code>401|403|404): |"
        r"(?P<gated>You are trying to access a gated repo|Cannot access gated repo for url )"
    ),
    facts=(
        R(
            r"(?:request access at|have access to it at) https://huggingface\.co/(?P<gated_repo>[\w.\-]{1,100}/[\w.\-]{1,100})"
        ),
    ),
    span=1,  # transformers names the repository on the line after
    # the gated repository's own words are certain; urllib's code beside a download in the log
    confirm=lambda hits, ctx: any(h.facts.get("gated") for h in hits) or has_fact("saw_download")(hits, ctx),
    describe=_refused,
)

RECOGNISERS = (DOWNLOAD_REFUSED,)

"""A download the run needs (pretrained weights, a dataset) that the server refused.

The message is CPython's ``urllib.error.HTTPError`` (``Lib/urllib/error.py``: "HTTP Error %s: %s", the code and
the server's reason; Python 2's urllib2 printed the same), which torch.hub's ``download_url_to_file`` and
``load_state_dict_from_url``, torchvision's and most model zoos' downloads raise. 401, 403 and 404 are the server's
answer about that URL: it wants credentials, refuses them, or has no such file. The reading is certain beside a
download in the log (torch.hub's "Downloading: ..." line, its frames, urlretrieve), likely on the line alone.

Google Drive refuses a file too many people fetched that day with a page, not the file, and each downloader says
so in its own words: torchvision 0.9-0.16 (``torchvision/datasets/utils.py`` download_file_from_google_drive, which
CelebA, WIDERFace and other built-in datasets use) raises "The daily quota of the file <name> is exceeded and it
can't be downloaded. This is a limitation of Google Drive ..."; gdown (torchvision 0.17 on downloads through it)
prints the page's own words, "Too many users have viewed or downloaded this file recently. Please try accessing
the file again later ...", or, where the page has no link at all, "Cannot retrieve the public link of the file.
You may need to change the permission to 'Anyone with the link', or have had many accesses." Each is the server's
refusal and nothing else: certain. torchvision before 0.9 saved that page under the archive's name and only the
archive's extraction failed, with CPython's ``zipfile.BadZipFile: File is not a zip file`` (``Lib/zipfile.py``
_RealGetContents): any file named .zip that is not one prints it (a download cut short, a Git LFS pointer, a damaged
archive), so that reading is only likely, the damaged file named beside it.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    first,
    has_fact,
    on_ranks,
)

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


# the server's refusal in the downloader's words (certain), and the archive a refused download left (likely)
DRIVE_REFUSALS = (
    "The daily quota of the file ",
    "Too many users have viewed or downloaded this file recently",
    "Cannot retrieve the public link of the file",
)
NOT_A_ZIP = "File is not a zip file"


def _drive_refused(hits: list[Hit]) -> tuple[str, str]:
    file = first(hits, "drive_file", "")
    named = f" ({file})" if file else ""
    return (
        f"Google Drive refused the download of a file{named}: too many downloads of it in the last day (its quota), "
        "or a link that is not shared with anyone who has it" + on_ranks(hits),
        "The file's server refused it, not the code. Wait and retry later (the quota resets within a day); or "
        "download the file from the browser, logged in to a Google account, and put it where the dataset "
        "reads it (torchvision: the root folder given to the dataset, e.g. root/celeba/img_align_celeba.zip, then "
        "download=False); or use a mirror the project names (CelebA: Kaggle, Hugging Face). A link shared with "
        "its owner only needs 'Anyone with the link' set by the owner.",
    )


def _not_a_zip(hits: list[Hit]) -> tuple[str, str]:
    return (
        "an archive the run opened is not a zip file: most often a download that saved the server's page in the "
        "archive's place (Google Drive's quota page, a refused or moved URL)" + on_ranks(hits),
        "Look at the file (file <path>, or head -c 300 <path>): an HTML page is a refused download; delete it and "
        "fetch the archive again, or from the browser into the dataset's folder (torchvision's CelebA before "
        "0.9 saved Google Drive's quota page as img_align_celeba.zip: download the zip by hand, then "
        "download=False). A file of a few hundred bytes starting with 'version https://git-lfs' is a Git LFS "
        "pointer: git lfs pull. Otherwise the archive is damaged or cut short: download it again.",
    )


def _refusal(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if any(h.facts.get("drive_refused") for h in hits):
        return _drive_refused(hits)
    if all(h.facts.get("not_a_zip") for h in hits):
        return _not_a_zip(hits)
    return _refused(hits, ctx)


def _certain(hits: list[Hit], ctx: Context) -> bool:
    """The gated repository's or Google Drive's own words; urllib's code beside a download in the log; never the
    archive that is not a zip alone."""
    return any(h.facts.get("gated") or h.facts.get("drive_refused") for h in hits) or (
        any(h.facts.get("http_code") for h in hits) and has_fact("saw_download")(hits, ctx)
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
        # Google Drive's refusal as torchvision and gdown report it, and the archive it left
        "torchvision:the-daily-quota-of-the-file",
        "third_party:google-drive-too-many-users",
        "third_party:gdown-cannot-retrieve-public-link",
        "system:zipfile-not-a-zip-file",
    ),
    title="a download refused by its server",
    anchors=(
        "HTTP Error ",
        "You are trying to access a gated repo",
        "Cannot access gated repo for url ",
        *DRIVE_REFUSALS,
        NOT_A_ZIP,
    ),
    match=R(
        r"HTTP Error (?P<http_code>401|403|404): |"
        r"(?P<gated>You are trying to access a gated repo|Cannot access gated repo for url )|"
        r"(?P<drive_refused>The daily quota of the file (?P<drive_file>\S{1,200}) is exceeded|"
        r"Too many users have viewed or downloaded this file recently|Cannot retrieve the public link of the file)|"
        r"(?P<not_a_zip>File is not a zip file)"
    ),
    facts=(
        R(
            r"(?:request access at|have access to it at) https://huggingface\.co/(?P<gated_repo>[\w.\-]{1,100}/[\w.\-]{1,100})"
        ),
    ),
    span=1,  # transformers names the repository on the line after
    # the gated repository's and Google Drive's own words are certain; urllib's code beside a download in the log
    confirm=_certain,
    also=(
        Alternative(
            "corrupt_file",
            "an archive damaged or cut short (a download interrupted, a Git LFS pointer in its place)",
            "Download the archive again (git lfs pull for a pointer), and check it with unzip -t before the run.",
            when=("not_a_zip",),
            unless=("drive_refused",),
        ),
    ),
    describe=_refusal,
)

RECOGNISERS = (DOWNLOAD_REFUSED,)

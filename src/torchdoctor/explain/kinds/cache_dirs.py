"""A cache folder that torch or a library built on it writes to, which the process may not write.

CPython's OSError prints the path it was refused: "PermissionError: [Errno 13] Permission denied: '<path>'", or
"OSError: [Errno 30] Read-only file system: '<path>'". Where the path is one of the caches a training run writes
before its first step, the refusal is that folder, not the data or the checkpoint:

- torch's extension builds (``torch/utils/cpp_extension.py`` ``_get_build_directory``: ``TORCH_EXTENSIONS_DIR``,
  else ``get_default_build_root()``, a per-user cache folder in current releases and ``<tempdir>/torch_extensions``
  in older ones, which every user of the machine shares: the first build creates it with that user's umask, and
  other users' builds are refused, pytorch#34238); DeepSpeed's and other just-in-time ops build there too;
- inductor's cache (``torch/_inductor/runtime/cache_dir_utils.py``: ``TORCHINDUCTOR_CACHE_DIR``, else
  ``<tempdir>/torchinductor_<user>``) and Triton's (``triton/runtime/cache.py``: ``TRITON_CACHE_DIR``, else
  ``~/.triton/cache``);
- torch.hub's (``torch/hub.py`` ``_get_torch_home``: ``TORCH_HOME``, else ``$XDG_CACHE_HOME/torch``, else
  ``~/.cache/torch``) and Hugging Face's (``huggingface_hub/constants.py``: ``HF_HOME``, else
  ``$XDG_CACHE_HOME/huggingface``, else ``~/.cache/huggingface``).

The message with such a path says the folder may not be written (certain); which fix applies follows the path.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "the machine and its operating system"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the caches, by a piece of their default path: (what writes it, the variable that moves it)
_CACHES = (
    ("torch_extensions", "torch's extension builds (cpp_extension, DeepSpeed's ops)", "TORCH_EXTENSIONS_DIR"),
    ("torchinductor_", "torch.compile's inductor cache", "TORCHINDUCTOR_CACHE_DIR"),
    ("/.triton", "Triton's kernel cache", "TRITON_CACHE_DIR"),
    ("huggingface", "the Hugging Face cache (models, datasets)", "HF_HOME"),
    ("/torch/hub", "torch.hub's downloads", "TORCH_HOME"),
    ("/.cache/torch", "torch.hub's downloads", "TORCH_HOME"),
)

_CACHE_PATH = (
    r"(?P<cache_path>[^'\n]{0,200}(?:torch_extensions|torchinductor_|/\.triton\b|/huggingface\b|/torch/hub\b|"
    r"/\.cache/torch\b)[^'\n]{0,200})"
)


def _cache(path: str) -> tuple[str, str]:
    return next(
        ((what, var) for piece, what, var in _CACHES if piece in path), (_CACHES[-1][1], _CACHES[-1][2])
    )


def _not_writable(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    path = first(hits, "cache_path", "")
    what, var = _cache(path)
    read_only = any(h.facts.get("refusal") == "Read-only file system" for h in hits)
    summary = (
        f"the process may not write {path!r}, a cache folder of {what}: "
        + (
            "its file system is mounted read-only"
            if read_only
            else "the folder belongs to another user or is not writable"
        )
        + on_ranks(hits)
    )
    fix = (
        f"Point the cache at a folder this user may write, before the run starts: export {var}=<writable folder> "
        "(in the job script or the container's environment, for every rank)."
    )
    if var == "TORCH_EXTENSIONS_DIR":
        fix += (
            " Older torch releases build every user's extensions under <tempdir>/torch_extensions, which the first "
            "user's build creates with that user's permissions: a folder of your own (or a newer torch, which "
            "keeps a per-user cache) avoids it; or have that folder's owner make it writable."
        )
    else:
        fix += " Or make the folder writable for this user (chown/chmod it, or remove a copy another user left there)."
    return summary, fix


CACHE_DIR_NOT_WRITABLE = Recogniser(
    kind="cache_dir_not_writable",
    title="a cache folder the process may not write",
    templates=("system:python-oserror-permission-denied", "system:python-oserror-read-only-file-system"),
    anchors=("Permission denied: '", "Read-only file system: '"),
    match=R(r"(?P<refusal>Permission denied|Read-only file system): '" + _CACHE_PATH + "'"),
    describe=_not_writable,
)

RECOGNISERS = (CACHE_DIR_NOT_WRITABLE,)

"""A fix that upgrades torch keeps the CUDA build a Windows log shows.

On Windows the torch wheels on PyPI are the CPU builds (pytorch/pytorch.github.io#757 moved the selector's Windows
CPU command to plain PyPI; pytorch/pytorch#52662: "on Windows the CPU rather than the CUDA ... wheels go on PyPI"):
the CUDA builds come only from PyTorch's own index, download.pytorch.org/whl/cuXXX. A plain ``pip install -U torch``
there swaps a ``2.1.0+cu121`` for a CPU torch, and the next run finds no GPU. Where a log shows both (Windows: a
drive's path, ``win_amd64``, ``WinError``; torch's release with its ``+cuXXX`` local part), every upgrade of torch a
fix names is given that index, and the fixes' placeholders for it (``whl/cu1xx``, "with the index of your CUDA")
are filled in with it. On Linux PyPI's torch is a CUDA build: the fixes stay as they are there.
"""

from __future__ import annotations

import re

from torchdoctor.findings import Finding

_BUILD = re.compile(r"\+cu(?P<cuda>\d{2,4})\b")
_PLACEHOLDER = re.compile(r"whl/cu(?:1xx|XXX|xxx)\b")
# an upgrade of torch as the fixes spell it: "pip install -U torch", "pip install -U 'torch>=2.1.1' torchvision", and
# what follows it: the index already given, or a sentence that says to give it
_UPGRADE = re.compile(
    r"(?P<command>pip3? install (?:-U|--upgrade) (?:torch(?![\w-])(?:[<>=~!]=?[\w.*]+)?|(?P<q>['\"])torch[<>=~!][^'\"\s]{1,40}(?P=q))"
    r"(?: (?:torchvision|torchaudio)(?![\w-])(?:[<>=~!]=?[\w.*]+)?)*)"
    r"(?P<said> with the (?:--index-url|index) of (?:your|the installed) CUDA)?"
)
# after an upgrade: an index it names already, or more of its words (a local release, "torch==2.1.0+cu118"). Told
# apart after the longest match, not by a lookahead in _UPGRADE, which the regex would meet by giving back its
# last package ("torch torchvision --index-url X" read as "torch", then the index put in twice)
_GIVEN = re.compile(r" (?:--index-url|--extra-index-url|-i|-f) |[^\s)\]'\",;:.`]")


def windows_cuda(facts: dict) -> str:
    """The CUDA of the Windows build of torch the log's ``facts`` show ("121"), or ""."""
    build = _BUILD.search(str(facts.get("installed_torch", "")))
    return build["cuda"] if build and "on_windows" in facts else ""


def keep_index(fix: str, cuda: str) -> str:
    """``fix`` with every upgrade of torch in it given PyTorch's index of CUDA ``cuda``.

    >>> keep_index("upgrade torch (pip install -U torch), or drop it", "121")
    'upgrade torch (pip install -U torch --index-url https://download.pytorch.org/whl/cu121), or drop it'
    """
    index = f"https://download.pytorch.org/whl/cu{cuda}"
    fix = _PLACEHOLDER.sub(f"whl/cu{cuda}", fix)

    def given(found: re.Match) -> str:
        if _GIVEN.match(fix, found.end()):
            return found[0]
        return f"{found['command']} --index-url {index}"

    return _UPGRADE.sub(given, fix)


def keeping_cuda_builds(found: list[Finding], facts: dict) -> list[Finding]:
    """``found`` with the fixes kept on the CUDA build a Windows log shows (`keep_index`); as they are elsewhere."""
    cuda = windows_cuda(facts)
    if cuda:
        for finding in found:
            if finding.fix and "pip" in finding.fix:
                finding.fix = keep_index(finding.fix, cuda)
    return found

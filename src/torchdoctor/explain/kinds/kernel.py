"""A Linux kernel older than 5.5, under which accelerate warns that a run's processes can hang.

A Linux kernel older than the one multi-process runs need, as accelerate warns at start (``utils/other.py``
``check_os_kernel``, called by ``Accelerator()``): below 5.5 its processes can hang.

Every run on such a kernel prints the warning, healthy or not: it is a finding only when nothing else in the log
explains the failure (a hang with no error), and then only likely. ``torchdoctor check``'s ``sys.kernel`` is the
same check on the machine itself.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "the machine and its operating system"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _kernel(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    found, minimum = facts.get("kernel", "?"), facts.get("minimum", "5.5.0")
    return (
        f"the Linux kernel {found} is older than {minimum}, on which accelerate warns that processes can hang"
        + on_ranks(hits),
        f"Upgrade the kernel to {minimum} or newer and reboot (uname -r shows it; in a container the host's kernel "
        "is the one that counts, so upgrade the host). torchdoctor check runs the same test on the machine "
        "(sys.kernel).",
    )


KERNEL_TOO_OLD = Recogniser(
    kind="kernel_too_old",
    title="a Linux kernel older than 5.5, on which multi-process runs can hang",
    anchors=("which is below the recommended minimum of",),
    templates=(
        "accelerate:detected-kernel-version-which-is-below",
    ),  # accelerate/utils/other.py check_os_kernel
    match=R(r"Detected kernel version \S{1,40}, which is below the recommended minimum of"),
    facts=(
        R(
            r"Detected kernel version (?P<kernel>\d[\w.+-]{0,40}), which is below the recommended minimum of "
            r"(?P<minimum>\d[\w.]{0,20}?)(?:;|\.?\s|$)"
        ),
    ),
    # a warning, not an error: a finding only when nothing else is, and never certain (a hang on an old kernel
    # may still have another cause)
    fallback=True,
    confirm=lambda hits, ctx: False,
    describe=_kernel,
)

RECOGNISERS = (KERNEL_TOO_OLD,)

"""NCCL's GDRCopy calls failing: NCCL_GDRCOPY_ENABLE=1 on a host whose GDRCopy driver or library does not work.

NCCL maps GPU memory into the CPU's address space through GDRCopy (libgdrapi.so and the gdrdrv kernel module) only
when NCCL_GDRCOPY_ENABLE=1 (``src/init.cc``: off by default); every GDRCopy call it makes goes through
``src/misc/gdrwrap.cc``, which WARNs with the call and its return code when it fails (NCCL 2.10+), and refuses the
calls when the wrapper never initialised (libgdrapi.so not found). The fix is the same for each: turn the
setting off, or make GDRCopy work on the host.
"""

from __future__ import annotations

import dataclasses
import re

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "NCCL and collectives"

_GDRCOPY = (
    "NCCL uses GDRCopy only because NCCL_GDRCOPY_ENABLE=1 is set (its default is 0): unset it (or set "
    "NCCL_GDRCOPY_ENABLE=0; look in the job script, the container's ENV, /etc/nccl.conf and ~/.nccl.conf), and NCCL "
    "goes on without it. To keep it, make GDRCopy work on every node: the gdrdrv kernel module loaded (lsmod | grep "
    "gdrdrv; GDRCopy's insmod.sh), /dev/gdrdrv passed into the container, and libgdrapi.so of the same GDRCopy "
    "release as the module on LD_LIBRARY_PATH (gdrcopy_sanity / copybw test it)."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("GDRCOPY lib wrapper not initialized", _GDRCOPY),
    (
        "gdr_pin_buffer_v2 not available; GDRCopy >= 2.5 required",
        "This NCCL asks GDRCopy 2.5 or newer for gdr_pin_buffer_v2, and the libgdrapi.so loaded is older: install "
        "GDRCopy 2.5+ (library and gdrdrv module) on every node, or unset NCCL_GDRCOPY_ENABLE (its default, 0, "
        "does without GDRCopy).",
    ),
    ("gdr_pin_buffer(addr", _GDRCOPY),
    ("gdr_pin_buffer_v2(addr", _GDRCOPY),
    ("gdr_unpin_buffer(handle", _GDRCOPY),
    ("gdr_get_info(handle", _GDRCOPY),
    ("gdr_map(handle", _GDRCOPY),
    ("gdr_unmap(handle", _GDRCOPY),
    ("gdr_copy_to_mapping(handle", _GDRCOPY),
    ("gdr_copy_from_mapping(handle", _GDRCOPY),
    ("gdr_close() failed", _GDRCOPY),
)

NCCL_GDRCOPY = refusal_recogniser(
    kind="nccl_gdrcopy",
    title="NCCL's GDRCopy calls failing (NCCL_GDRCOPY_ENABLE)",
    refusals=REFUSALS,
    templates=(
        "nccl:gdrcopy-lib-wrapper-not-initialized",  # src/misc/gdrwrap.cc
        "nccl:gdr-pin-buffer-v2-not-available",  # src/include/gdrwrap.h
        "nccl:gdr-pin-buffer-addr-size-failed",
        "nccl:gdr-pin-buffer-addr-size-failed-2",
        "nccl:gdr-pin-buffer-v2-addr-size",
        "nccl:gdr-unpin-buffer-handle-failed",
        "nccl:gdr-get-info-handle-failed",
        "nccl:gdr-map-handle-size-failed",
        "nccl:gdr-map-handle-size-failed-2",
        "nccl:gdr-unmap-handle-va-size-failed",
        "nccl:gdr-unmap-handle-va-size-failed-2",
        "nccl:gdr-copy-to-mapping-handle-map",
        "nccl:gdr-copy-to-mapping-handle-map-2",
        "nccl:gdr-copy-from-mapping-handle-ptr",
        "nccl:gdr-copy-from-mapping-handle-ptr-2",
        "nccl:gdr-close-failed",
    ),
)

# the WARN's own words from the failed call on (not the "file.cc:line NCCL WARN" before them); the failure torch
# reports for it ("unhandled system error", its "Last error:" quoting the same line) is this one's consequence
NCCL_GDRCOPY = dataclasses.replace(
    NCCL_GDRCOPY,
    facts=(re.compile(r"(?P<refusal>(?:" + "|".join(re.escape(t) for t, _ in REFUSALS) + r")[^\n]{0,260})"),),
    absorbs=("nccl_system_error", "nccl_error"),
    reject=None,  # a C library's WARN, never a traceback's quoted source line: "gdr_map(handle ..." starts one
)

RECOGNISERS = (NCCL_GDRCOPY,)

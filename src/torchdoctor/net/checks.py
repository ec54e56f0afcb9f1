"""``net.*`` checks: can local processes talk to each other."""

from __future__ import annotations

import os
from collections.abc import Mapping

from torchdoctor import environment
from torchdoctor.checks import check_id, verdict_of
from torchdoctor.distributed.ranks import from_environment
from torchdoctor.findings import Finding

AREA = "net"


def check_smoke(
    nproc: int = 2, timeout: float = 10.0, environ: Mapping[str, str] | None = None
) -> list[Finding]:
    """Two local gloo ranks, forked from this process: join, all_reduce checked, barrier, memory.

    Short on purpose (gloo, 2 ranks, a 10 s wait per stage); ``torchdoctor net`` runs the full test on the GPUs.
    Its findings are ``net.smoke``'s; the id `torchdoctor net` files one under (``net.join``, ``net.crash``, …)
    stays in its details as ``stage``.
    """
    verdict = verdict_of(check_smoke)
    environ = dict(os.environ if environ is None else environ)
    wrong = environment.problems(environ, environment.RENDEZVOUS)
    if wrong:  # `net` refuses to start on these; dist.environment says what is wrong and how to fix it
        return [
            verdict(
                "skip",
                f"not run: {wrong[0]} (see dist.environment)",
                {p.variable.name: p.value for p in wrong},
            )
        ]
    info = from_environment(environ)
    if info.launcher != "none":
        return [
            verdict(
                "skip",
                f"running as rank {info.rank} under {info.launcher}: the local test would start more processes",
                {"launcher": info.launcher},
            )
        ]
    from torchdoctor.torch_import import import_torch

    failure = import_torch()
    if failure is not None:
        return [verdict("skip", f"needs torch, which cannot be imported here (see sys.torch): {failure}")]
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_gloo_available():
        return [
            verdict(
                "fail",
                "this torch build has no torch.distributed/gloo support",
                {},
                "Install a standard torch build: pip install --force-reinstall torch",
            )
        ]
    from torchdoctor.net.options import net_options
    from torchdoctor.net.smoke import run_net

    options = net_options(timeout=timeout, backend="gloo", nproc_per_node=nproc)
    return [
        f
        if f.id == check_id(check_smoke)
        else verdict(f.status, f.summary, {"stage": f.id, **f.details}, f.fix)
        for f in run_net(options, environ=environ).findings
    ]

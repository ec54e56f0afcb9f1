"""`torchdoctor mpi`: will ``mpirun`` start processes on the hosts of this hostfile?"""

from __future__ import annotations

from pathlib import Path

import typer

from torchdoctor.cli.app import JSON, VERBOSE, app, exit_with_findings
from torchdoctor.errors import BadInput, require_seconds

# An ssh login that needs more than an hour to connect is not going to carry an MPI job.
_MAX_SSH_TIMEOUT = 3600


@app.command()
def mpi(
    hostfile: str = typer.Option(
        ..., "--hostfile", "-f", metavar="FILE", help="Open MPI (host slots=N) or MPICH (host:N) hostfile."
    ),
    n: int | None = typer.Option(
        None,
        "-n",
        "-np",
        metavar="N",
        help="Run on the first N hosts.  [default: every host in the hostfile]",
    ),
    timeout: float = typer.Option(
        60, "--timeout", metavar="SECONDS", help="Seconds to wait for the mpirun sanity run."
    ),
    ssh_timeout: int = typer.Option(
        5, "--ssh-timeout", metavar="SECONDS", help="ssh ConnectTimeout per host, in seconds."
    ),
    as_json: bool = JSON,
    verbose: bool = VERBOSE,
) -> None:
    """Check mpirun, the hostfile, passwordless ssh to each host, then run `hostname` once per host."""
    from torchdoctor.mpi.checks import diagnose
    from torchdoctor.mpi.hostfile import distinct_hosts, parse_hostfile, refuse_aliases
    from torchdoctor.status_line import status_line

    require_seconds("--timeout", timeout)  # nan, inf or 1e13 would reach subprocess's wait and crash it
    require_seconds("--ssh-timeout", ssh_timeout, maximum=_MAX_SSH_TIMEOUT)
    entries = parse_hostfile(hostfile)  # a str: Path('') would read as '.'
    refuse_aliases(hostfile, entries)
    hostfile = Path(hostfile)
    hosts = len(distinct_hosts(entries))
    n = hosts if n is None else n
    if n < 1:
        raise BadInput(f"-n {n}: must be at least 1 (the sanity run starts one process per host)")
    if n > hosts:
        raise BadInput(
            f"-n {n}: more than the {hosts} host(s) {hostfile} lists (the sanity run starts one process per host)"
        )
    with status_line(f"checking mpirun and {hostfile}") as say:
        findings = diagnose(hostfile, entries, n, timeout=timeout, connect_timeout=ssh_timeout, say=say)
    exit_with_findings(findings, as_json, verbose)

"""`torchdoctor mpi`: will ``mpirun`` start processes on the hosts of this hostfile?"""

from __future__ import annotations

from pathlib import Path

import typer

from torchdoctor.cli.app import JSON, VERBOSE, app, report
from torchdoctor.errors import BadInput


@app.command()
def mpi(
    hostfile: Path = typer.Option(
        ..., "--hostfile", "-f", help="Open MPI (host slots=N) or MPICH (host:N) hostfile."
    ),
    n: int | None = typer.Option(
        None, "-n", "-np", help="Run on the first N hosts.  [default: every host in the hostfile]"
    ),
    timeout: float = typer.Option(60, "--timeout", help="Seconds to wait for the mpirun sanity run."),
    ssh_timeout: int = typer.Option(5, "--ssh-timeout", help="ssh ConnectTimeout per host, in seconds."),
    as_json: bool = JSON,
    verbose: bool = VERBOSE,
) -> None:
    """Check mpirun, the hostfile, passwordless ssh to each host, then run `hostname` once per host."""
    from torchdoctor.mpi.checks import diagnose
    from torchdoctor.mpi.hostfile import distinct_hosts, parse_hostfile

    entries = parse_hostfile(hostfile)
    hosts = len(distinct_hosts(entries))
    n = hosts if n is None else n
    if n < 1 or n > hosts:
        raise BadInput(
            f"-n {n}: the sanity run starts one process per host and {hostfile} lists {hosts} host(s)"
        )
    if timeout <= 0 or ssh_timeout <= 0:
        raise BadInput(
            f"--timeout {timeout:g} / --ssh-timeout {ssh_timeout}: both must be more than 0 seconds"
        )
    report(
        diagnose(hostfile, entries, n, timeout=timeout, connect_timeout=ssh_timeout),
        as_json,
        verbose,
    )

"""Errors the CLI turns into one line on stderr and exit status 2."""


class BadInput(Exception):
    """Bad usage or bad input (a missing file, a malformed config): one clear line, exit status 2.

    The message must name the value involved, e.g. ``hostfile hosts.txt line 3: 'node1 slots=x': ...``.
    """

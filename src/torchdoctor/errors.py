"""Errors the CLI turns into one line on stderr and exit status 2, and the checks of values that raise them."""

import math


class BadInput(Exception):
    """Bad usage or bad input (a missing file, a malformed config): one clear line, exit status 2.

    The message must name the value involved, e.g. ``hostfile hosts.txt line 3: 'node1 slots=x': ...``.
    """


def require_seconds(flag: str, value: float | None, maximum: float = 7 * 24 * 3600) -> None:
    """Raise `BadInput` unless ``value`` (when given) is a finite number of seconds in (0, ``maximum``].

    >>> require_seconds("--timeout", float("nan"))
    Traceback (most recent call last):
    torchdoctor.errors.BadInput: --timeout nan: must be a number of seconds above 0 and at most 604800
    """
    if value is not None and not (math.isfinite(value) and 0 < value <= maximum):
        raise BadInput(f"{flag} {value:.15g}: must be a number of seconds above 0 and at most {maximum:g}")


def require_count(flag: str, value: int | None, minimum: int = 1, maximum: int = 1_000_000) -> None:
    """Raise `BadInput` unless ``value`` (when given) is a whole number in [``minimum``, ``maximum``]."""
    if value is not None and not minimum <= value <= maximum:
        raise BadInput(f"{flag} {value}: must be between {minimum} and {maximum}")

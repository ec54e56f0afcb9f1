"""Small helpers the tests share (``from helpers import free_port``; pytest puts ``tests/`` on ``sys.path``)."""

import socket


def free_port() -> int:
    """A TCP port nothing listens on right now, on any address of this machine."""
    with socket.socket() as probe:
        probe.bind(("", 0))
        return probe.getsockname()[1]


def hook_count(model) -> int:
    """How many forward and forward-pre hooks ``model`` and its submodules hold: 0 once a detector is off."""
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())

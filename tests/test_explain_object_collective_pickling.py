"""An object collective handed an object that cannot be pickled (a lock inside a dict of metrics, a lambda): the
*_object collectives pickle each rank's object (torch/distributed/distributed_c10d.py _object_to_tensor), and
CPython's pickler refuses it. Read from a real gloo process on this torch, whole and with its traceback cut to the
user's frames (a paste, a framework that hides library frames), which until session 41 read as an error of no
known kind."""

from __future__ import annotations

import io

import pytest
from rank_runner import run_script

from torchdoctor.explain.diagnose import explain

SCRIPT = """
import threading
import torch.distributed as dist

dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
out = [None]
dist.{call}
"""
CALLS = {
    "all_gather_object": "all_gather_object(out, {'step': 3, 'lock': threading.Lock()})",
    "broadcast_object_list": "broadcast_object_list([lambda x: x + 1], src=0)",
}


def _users_frames_only(stderr: str) -> str:
    """``stderr`` with every frame of an installed package taken out (its "File" line and the lines under it)."""
    kept, library = [], False
    for line in stderr.splitlines():
        line = line.removeprefix("[rank0]: ")  # torch's excepthook prefix: a paste without it
        if line.lstrip().startswith("File "):
            library = "site-packages" in line
        elif not line.startswith(" "):
            library = False
        if not library:
            kept.append(line)
    assert not any("site-packages" in line for line in kept), kept
    return "\n".join(kept) + "\n"


@pytest.mark.parametrize("call", sorted(CALLS))
def test_an_unpicklable_object_in_an_object_collective_is_read_with_its_fix(tmp_path, call):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.format(call=CALLS[call]))
    done = run_script([str(script)], timeout=60)
    assert "ickle" in done.stderr, done.stderr
    for text in (done.stderr, _users_frames_only(done.stderr)):
        found = explain(["-"], stdin=io.BytesIO(text.encode()))[0]
        assert found.id == "log.object_collective_pickling", (found.summary, text[-1500:])
        assert "plain data" in found.fix
        assert found.details["frame"].endswith("train.py:7 in <module>"), found.details
        assert found.details["code"].startswith(f"dist.{call}("), found.details

"""The publisher sets a rank's windows in the store off the training thread: handing a window over never waits
for the store, the windows are set in order, and the end of the run waits for them — with a timeout that says
what was left."""

import json
import threading

from torchdoctor.stragglers.publisher import Publisher


def test_handing_a_window_over_does_not_wait_for_the_store_and_windows_are_set_in_order():
    release = threading.Event()
    seen, said = [], []

    def set_window(window, text):
        release.wait(10)  # a slow store: the training thread must not wait for it
        seen.append((window, json.loads(text), threading.current_thread().name))

    publisher = Publisher(set_window, said.append)
    for window in range(3):
        publisher.put(window, {"first_step": window * 10, "host": "h", "rows": [[0.05, 0.0, 0.01, 0.04]]})
    assert seen == []  # all three handed over while the first is still being set
    release.set()
    assert publisher.drain(timeout=10)
    assert [w for w, _, _ in seen] == [0, 1, 2]
    assert seen[2][1] == {"first_step": 20, "host": "h", "rows": [[0.05, 0.0, 0.01, 0.04]]}
    assert {name for _, _, name in seen} == {"torchdoctor-stragglers-publish"}
    assert publisher.last_set == 2 and said == []


def test_a_store_that_does_not_answer_is_waited_for_at_the_end_only_as_long_as_the_timeout_says():
    release = threading.Event()
    said = []
    publisher = Publisher(lambda window, text: release.wait(10), said.append)
    publisher.put(0, {"rows": []})
    publisher.put(1, {"rows": []})
    assert not publisher.drain(timeout=0.2)
    release.set()
    assert said == [
        "torchdoctor: stragglers: this rank's windows after window -1 were not set in the store within 0.2 s; "
        "rank 0 judges the run without them"
    ]


def test_a_store_that_fails_stops_the_publishing_with_one_line():
    said, calls = [], []

    def set_window(window, text):
        calls.append(window)
        raise RuntimeError("Connection reset by peer")

    publisher = Publisher(set_window, said.append)
    publisher.put(0, {"rows": []})
    assert publisher.drain(timeout=10)
    publisher.put(1, {"rows": []})
    assert publisher.drain(timeout=10)
    assert calls == [0] and publisher.failed
    assert said == ["torchdoctor: stragglers: stopped publishing this rank's steps: Connection reset by peer"]


def test_nothing_handed_over_needs_no_wait():
    assert Publisher(lambda window, text: None, print).drain(timeout=0)

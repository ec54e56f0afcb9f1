"""An error raised `from` another (``raise CheckpointError("...") from e``): Python prints the first, then "The above
exception was the direct cause of the following exception:", then the one raised from it. Where no known kind covers
the first, the lead quotes the last one raised from it (the words of the code that caught it, and the error the run
stopped on) and names where that one was raised, the first named after it; a recognised first error still leads
(session 43, T64). The logs are CPython 3.11's own output of the scripts quoted in each test."""

from __future__ import annotations

from explaining import explained

# load_checkpoint(): try: model.load_state_dict(state["model_state"]) except KeyError as e: raise CheckpointError(
# "checkpoint stage1.pt was saved by the pretraining script: load it with --init-from") from e
RAISED_FROM = """Traceback (most recent call last):
  File "/tmp/t64/keychain.py", line 10, in load_checkpoint
    model.load_state_dict(state["model_state"])
                          ~~~~~^^^^^^^^^^^^^^^
KeyError: 'model_state'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/tmp/t64/keychain.py", line 20, in <module>
    main()
  File "/tmp/t64/keychain.py", line 17, in main
    load_checkpoint(model, {"weights": model.state_dict()})
  File "/tmp/t64/keychain.py", line 12, in load_checkpoint
    raise CheckpointError("checkpoint stage1.pt was saved by the pretraining script: load it with --init-from") from e
CheckpointError: checkpoint stage1.pt was saved by the pretraining script: load it with --init-from
"""

# the same script without `from e`: raised while handling the KeyError, not from it
WHILE_HANDLING = """Traceback (most recent call last):
  File "/tmp/t64/keychain_handling.py", line 10, in load_checkpoint
    model.load_state_dict(state["model_state"])
                          ~~~~~^^^^^^^^^^^^^^^
KeyError: 'model_state'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/tmp/t64/keychain_handling.py", line 20, in <module>
    main()
  File "/tmp/t64/keychain_handling.py", line 17, in main
    load_checkpoint(model, {"weights": model.state_dict()})
  File "/tmp/t64/keychain_handling.py", line 12, in load_checkpoint
    raise CheckpointError("checkpoint stage1.pt was saved by the pretraining script: load it with --init-from")
CheckpointError: checkpoint stage1.pt was saved by the pretraining script: load it with --init-from
"""

# load_checkpoint(): try: torch.load(path) except FileNotFoundError as e: raise CheckpointError(f"Failed to load
# checkpoint {path}: run the pretraining stage first") from e
KNOWN_FIRST = """Traceback (most recent call last):
  File "/tmp/t64/chain.py", line 10, in load_checkpoint
    return torch.load(path, weights_only=True)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/t64/.venv/lib/python3.11/site-packages/torch/serialization.py", line 1561, in load
    with _open_file_like(f, "rb") as opened_file:
         ^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/t64/.venv/lib/python3.11/site-packages/torch/serialization.py", line 795, in _open_file_like
    return _open_file(name_or_buffer, mode)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/t64/.venv/lib/python3.11/site-packages/torch/serialization.py", line 776, in __init__
    super().__init__(open(name, mode))  # noqa: SIM115
                     ^^^^^^^^^^^^^^^^
FileNotFoundError: [Errno 2] No such file or directory: 'runs/stage1/last.pt'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/tmp/t64/chain.py", line 21, in <module>
    main()
  File "/tmp/t64/chain.py", line 17, in main
    state = load_checkpoint("runs/stage1/last.pt")
            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/t64/chain.py", line 12, in load_checkpoint
    raise CheckpointError(f"Failed to load checkpoint {path}: run the pretraining stage first") from e
CheckpointError: Failed to load checkpoint runs/stage1/last.pt: run the pretraining stage first
"""


def test_an_unrecognised_error_raised_from_another_leads_with_the_wrappers_words():
    found = explained(RAISED_FROM)
    assert found.id == "log.unrecognised"
    assert found.summary.startswith(
        "the run failed: CheckpointError: checkpoint stage1.pt was saved by the pretraining script"
    ), found.summary
    assert "raised from KeyError: 'model_state'" in found.summary
    assert "The run stopped on this error, raised at /tmp/t64/keychain.py:12 in load_checkpoint" in found.fix
    assert "It was raised from KeyError: 'model_state', at /tmp/t64/keychain.py:10" in found.fix
    assert found.details["exception"].startswith("CheckpointError: ")
    assert found.details["raised_from"] == "KeyError: 'model_state'"


def test_an_error_raised_while_handling_another_still_leads_with_the_first():
    # the near miss: "During handling of the above exception" is not `raise ... from`; the first error leads
    found = explained(WHILE_HANDLING)
    assert found.id == "log.unrecognised"
    assert found.summary.startswith("the run failed: KeyError: 'model_state'"), found.summary
    assert "raised_from" not in found.details


def test_a_recognised_first_error_still_leads_over_the_wrapper_raised_from_it():
    found = explained(KNOWN_FIRST)
    assert found.id == "log.data_path_missing", found.summary
    assert "'runs/stage1/last.pt'" in found.summary

"""The five classes a review found: each read on its line as the source prints it, beside a near miss that must
not change.

1. torchrun's own SIGKILL of a worker that outlived its SIGTERM (elastic/multiprocessing/api.py ``_close``) is a
   consequence (child_failed), never ``worker_killed``; the failure before it leads.
2. ProcessGroupWrapper's collective check (TORCH_DISTRIBUTED_DEBUG=DETAIL) is ``rank_divergence``, its
   fingerprints as torch prints them; an aborted NCCL communicator is what another failure led to (peer_closed).
3. fp16 asked for on a device without it (DeepSpeed's engine, accelerate's Accelerator) is ``fp16_unsupported``.
4. Module constants a message call names (torch/utils/cpp_extension.py) are in the catalog.
5. RENDEZVOUS_OR_PORT's and peer_closed's suggestive anchors are one list each.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from explaining import explained, filled

from torchdoctor.explain import diagnose
from torchdoctor.explain.catalog import by_id
from torchdoctor.explain.kinds import BY_KIND, comm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import catalog_coverage  # noqa: E402

GLOG = "W1124 20:22:15.417000 4700 torch/distributed/elastic/multiprocessing/api.py:1048] "
FORCED = GLOG + filled(
    "torch:unable-to-shutdown-process-via-forcefully", "4712", "Signals.SIGTERM", "Signals.SIGKILL"
)
CLOSING = GLOG.replace("1048", "897") + filled("torch:sending-process-closing-signal", "4712", "SIGTERM")
OOM = (
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
    "of 79.15 GiB of which 1.2 GiB is free."
)


def findings(text: str):
    import io

    return diagnose.explain(["-"], stdin=io.BytesIO(text.encode()))


# -- 1. torchrun's own SIGKILL ----------------------------------------------------------------------------------


def test_torchruns_forced_sigkill_alone_is_a_likely_consequence_not_a_killed_worker():
    found = explained(FORCED + "\n")
    assert found.id == "log.child_failed", found.summary
    assert found.details["confidence"] == "likely"
    assert "SIGKILL" in found.summary and "SIGTERM" in found.summary
    assert "torchrun itself killed" in found.fix and "first failure" in found.fix


@pytest.mark.parametrize(
    "cause, lead",
    [
        (OOM, "log.cuda_oom"),
        (
            '[rank0]: Traceback (most recent call last):\n[rank0]:   File "train.py", line 10, in <module>\n'
            "[rank0]:     loss = model(x)\n[rank0]: ValueError: bad thing happened in my code",
            "log.unrecognised",
        ),
    ],
)
def test_the_failure_before_torchruns_forced_sigkill_leads(cause, lead):
    (first, *rest) = findings(f"{cause}\n{CLOSING}\n{FORCED}\n")
    assert first.id == lead, first.summary
    assert "log.worker_killed" not in [f.id for f in rest]
    assert next(f for f in rest if f.id == "log.child_failed").details["confidence"] == "likely"


@pytest.mark.parametrize(
    "line",
    [
        "subprocess.CalledProcessError: Command '['python', 'train.py']' died with <Signals.SIGKILL: 9>.",
        "  traceback : Signal 9 (SIGKILL) received by PID 4711",
    ],
)
def test_a_sigkill_from_outside_is_still_a_killed_worker(line):
    found = explained(line + "\n")
    assert found.id == "log.worker_killed" and found.details["confidence"] == "certain", found.summary


def test_forcefully_exiting_without_a_signal_is_not_torchruns_line():
    assert explained("the wizard left, forcefully exiting via the back door\n").id == "log.unrecognised"


# -- 2. ProcessGroupWrapper's check, an aborted communicator -------------------------------------------------

# ProcessGroupWrapper.cpp as torch 2.x prints it: the fingerprints without a comma after the sequence number, the
# diff appended without a space
MISMATCH = (
    "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
    "CollectiveFingerPrint(SequenceNumber=1649OpType=BARRIER), but Rank 1 is running collective: "
    "CollectiveFingerPrint(SequenceNumber=0OpType=GATHER).Collectives differ in the following aspects: "
    "\t Sequence number: 1649vs 0  Op type: BARRIERvs GATHER"
)


def test_processgroupwrappers_mismatch_is_rank_divergence_with_both_fingerprints():
    found = explained(MISMATCH + "\n")
    assert found.id == "log.rank_divergence" and found.details["confidence"] == "certain"
    assert "rank 0 ran BARRIER #1649" in found.summary and "rank 1 ran GATHER" in found.summary
    assert "broadcast" in found.fix


def test_the_diff_on_a_line_of_its_own_is_rank_divergence():
    line = (
        filled("torch_cpp:collectives-differ-in-the-following-aspects")
        + " \t Tensor Tensor shapes: 1024vs 960"
    )
    found = explained(line + "\n")
    assert found.id == "log.rank_divergence" and "Tensor shapes: 1024vs 960" in found.summary


def test_other_words_about_collectives_that_differ_are_not_read():
    assert (
        explained("the collectives differ in the following ways between releases\n").id == "log.unrecognised"
    )


def test_an_aborted_communicator_alone_is_a_likely_consequence():
    found = explained("RuntimeError: " + filled("torch_native:nccl-communicator-aborted", "3") + "\n")
    assert found.id == "log.peer_closed" and found.details["confidence"] == "likely"
    assert "aborted on rank 3" in found.summary and "not a cause of its own" in found.fix


def test_an_aborted_communicator_defers_to_the_failure_that_led_to_it():
    for text in (
        f"{OOM}\n[rank1]: RuntimeError: NCCL communicator was aborted on rank 1.\n",
        f"[rank1]: RuntimeError: NCCL communicator was aborted on rank 1.\n{OOM}\n",
    ):
        (first, *rest) = findings(text)
        assert first.id == "log.cuda_oom", first.summary
        aborted = next(f for f in rest if f.id == "log.peer_closed")
        assert aborted.details["role"] == "consequence" and aborted.details["confidence"] == "likely"


def test_an_aborted_communicator_whose_reason_is_a_watchdog_timeout_still_reads_the_timeout():
    found = explained(
        "[rank1]: RuntimeError: NCCL communicator was aborted on rank 1. Original reason for failure was: [Rank 1] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600023 milliseconds before timing out.\n"
    )
    assert found.id == "log.nccl_watchdog_timeout" and found.details["confidence"] == "likely"


def test_a_communicator_the_user_aborted_is_not_read_as_one_aborted_on_a_rank():
    assert explained("ProcessGroupNCCL: the communicator was aborted by the user\n").id != "log.peer_closed"


# -- 3. fp16 on a device without it ----------------------------------------------------------------------------


def test_deepspeeds_fp16_refusal_is_fp16_unsupported():
    found = explained("ValueError: " + filled("deepspeed:type-fp16-is-not-supported-on") + "\n")
    # likely alone: DeepSpeed's CPU fallback prints it too (test_explain_certainty_review_3.py)
    assert found.id == "log.fp16_unsupported" and found.details["confidence"] == "likely"
    assert "bf16" in found.fix and "DS_ALLOW_DEPRECATED_FP16" in found.fix and "is_available" in found.fix


@pytest.mark.parametrize(
    "line",
    [
        filled(
            "accelerate:fp16-mixed-precision-requires-device-in",
            "('xpu', 'cuda', 'npu', 'xla', 'mlu', 'musa', 'hpu', 'sdaa', 'mps')",
            "'cpu'",
        ),
        "fp16 mixed precision requires a GPU (not 'cpu').",  # accelerate before its device list
    ],
)
def test_accelerates_fp16_refusal_names_the_device(line):
    found = explained(f"ValueError: {line}\n")
    assert found.id == "log.fp16_unsupported" and "(cpu)" in found.summary


def test_fp16_on_mps_with_an_old_torch_says_to_upgrade_torch():
    found = explained("ValueError: " + filled("accelerate:fp16-mixed-precision-with-mps-device") + "\n")
    assert found.id == "log.fp16_unsupported" and "pip install -U torch" in found.fix


@pytest.mark.parametrize(
    "line, kind",
    [
        ("ValueError: " + filled("deepspeed:type-bf16-is-not-supported-on"), "log.bf16_unsupported"),
        ("ValueError: Type fp32 is not supported on your device.", "log.unrecognised"),
    ],
)
def test_the_bf16_twin_and_other_dtypes_keep_their_reading(line, kind):
    assert explained(line + "\n").id == kind


# -- 4. module constants that are messages ---------------------------------------------------------------------

MODULE = """
NOT_FOUND_MESSAGE = (
    "CUDA was not found on the system, please set the CUDA_HOME or the CUDA_PATH"
    "environment variable."
)
MISMATCH_MESSAGE = "The detected CUDA version ({}) mismatches the version PyTorch ({}) was built with."
UNUSED_TEXT = "A string constant that no message call names at all."

def check(found, torch):
    if not found:
        raise RuntimeError(NOT_FOUND_MESSAGE)
    raise RuntimeError(MISMATCH_MESSAGE.format(found, torch))
"""


def test_the_extractor_reads_module_constants_a_message_call_names():
    messages = catalog_coverage.python_messages(MODULE)
    assert any(m.startswith("CUDA was not found on the system") for m in messages)
    assert "The detected CUDA version ({}) mismatches the version PyTorch ({}) was built with." in messages
    assert not any("no message call names" in m for m in messages)
    assert catalog_coverage.module_constants(ast.parse(MODULE))["UNUSED_TEXT"].startswith("A string")


def test_cpp_extensions_constants_are_in_the_catalog_and_the_failures_mapped():
    catalog = by_id()
    for ident in ("torch:cuda-was-not-found-on-the", "torch:the-detected-cuda-version-mismatches-the"):
        assert catalog[ident].file == "torch/utils/cpp_extension.py" and catalog[ident].kind == "cuda_build"
    # warnings a build that works prints too: in the catalog, read as no failure
    for ident in (
        "torch:the-detected-cuda-version-has-minor",
        "torch:warning-your-compiler-may-be-abi",
        "torch:warning-your-compiler-is-not-compatible",
    ):
        assert catalog[ident].kind == ""


def test_torch2s_cuda_mismatch_as_raised_names_both_versions():
    # cpp_extension.py: raise RuntimeError(CUDA_MISMATCH_MESSAGE, cuda_str_version, torch.version.cuda)
    line = "RuntimeError: " + repr((filled("torch:the-detected-cuda-version-mismatches-the"), "12.1", "11.8"))
    found = explained(line + "\n")
    assert found.id == "log.cuda_build" and found.details["confidence"] == "certain"
    assert "CUDA 12.1" in found.summary and "CUDA 11.8" in found.summary


def test_cuda_not_found_is_a_build_without_cuda_home():
    found = explained("RuntimeError: " + filled("torch:cuda-was-not-found-on-the") + "\n")
    assert found.id == "log.cuda_build" and "CUDA_HOME" in found.summary


def test_the_minor_version_warning_is_no_failure():
    line = filled("torch:the-detected-cuda-version-has-minor", "12.4", "12.1")
    assert explained(f"W1129 torch/utils/cpp_extension.py:647] {line}\n").id == "log.unrecognised"


# -- 5. one list per recogniser ---------------------------------------------------------------------------------


def test_rendezvous_anchors_are_its_decisive_and_suggestive_lists_once_each():
    rendezvous = BY_KIND["rendezvous_or_port"]
    assert rendezvous.generic is comm._RENDEZVOUS_SUGGESTIVE
    assert rendezvous.anchors == (*comm._RENDEZVOUS_DECISIVE, *comm._RENDEZVOUS_SUGGESTIVE)
    assert len(set(rendezvous.anchors)) == len(rendezvous.anchors)
    assert not set(comm._RENDEZVOUS_DECISIVE) & set(comm._RENDEZVOUS_SUGGESTIVE)
    peer = BY_KIND["peer_closed"]
    assert peer.anchors is peer.generic


@pytest.mark.parametrize(
    "line, confidence",
    [
        (
            "RuntimeError: The server socket has failed to listen on [::]:29500 (errno: 98 - Address already in use).",
            "certain",
        ),
        ("torch.distributed.DistStoreError: Socket Timeout", "likely"),
        ("torch.distributed.elastic.rendezvous.api.RendezvousClosedError", "likely"),
    ],
)
def test_rendezvous_confidence_is_unchanged(line, confidence):
    found = explained(line + "\n")
    assert found.id == "log.rendezvous_or_port" and found.details["confidence"] == confidence, found.summary

"""How sure explain is: certain only on evidence specific to the cause (recognisers.py's rule), held uniformly."""

import io

import pytest

from torchdoctor.explain.diagnose import explain
from torchdoctor.explain.kinds import RECOGNISERS
from torchdoctor.explain.recognisers import GENERIC_WORDS

pytestmark = pytest.mark.usefixtures("every_message_seen")

# Anchors that hold a generic word but whose recogniser's `match` only takes the specific case, with why.
NARROWED = {
    (
        "worker_crash",
        "exitcode",
    ): "its match takes only exitcode -11 / -7 (SIGSEGV / SIGBUS), the crash itself",
    ("dataloader_shm", "is killed by signal: Bus error"): "a DataLoader worker's bus error is its /dev/shm",
    # "timeout" only inside the name of torchdoctor's own setting, and the match takes only debug mode's wait lines
    (
        "collective_never_reached",
        "; TORCHDOCTOR_DEBUG_TIMEOUT=",
    ): "debug mode's own wait line, its match the rest",
    (
        "collective_never_reached",
        " (TORCHDOCTOR_DEBUG_TIMEOUT); the others are waiting for them",
    ): "debug mode's own timeout error, its match the rest",
}


def explained(text: str):
    return explain(["-"], stdin=io.BytesIO(text.encode()))


def test_every_anchor_on_a_generic_word_is_declared_generic_or_confirmed():
    undeclared = []
    for recogniser in RECOGNISERS:
        for anchor in recogniser.anchors:
            if not any(word in anchor.lower() for word in GENERIC_WORDS):
                continue
            if anchor in recogniser.generic or recogniser.confirm is not None:
                continue
            if recogniser.role == "consequence" or (recogniser.kind, anchor) in NARROWED:
                continue
            undeclared.append((recogniser.kind, anchor))
    assert undeclared == [], "anchors on a word other failures print too, neither generic nor confirmed"


def test_generic_anchors_are_anchors():
    for recogniser in RECOGNISERS:
        assert set(recogniser.generic) <= set(recogniser.anchors), recogniser.kind


def test_a_bare_unhandled_system_error_is_likely_and_the_shm_line_makes_it_certain():
    # tests/fixtures/logs/025_nccl_system_error.txt's last line
    (bare, *_) = explained("RuntimeError: NCCL Error 2: unhandled system error\n")
    assert bare.id == "log.nccl_system_error" and bare.details["confidence"] == "likely"
    assert bare.summary.startswith("likely: ")
    (sure, *_) = explained(
        "node1:123:456 [0] NCCL INFO include/shm.h:28 -> 2\n"
        "node1:123:456 [0] NCCL WARN Error while creating shared memory segment /dev/shm/nccl-wpBXyL "
        "(size 9637888)\n"
        "RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, "
        "NCCL version 2.7.8\n"
    )
    assert sure.id == "log.nccl_system_error" and sure.details["confidence"] == "certain"


def test_a_store_that_timed_out_is_only_likely_a_rendezvous_problem_and_a_port_in_use_certain():
    # tests/fixtures/torch/c10d-rendezvous-connection-error-short.txt
    (timed_out, *_) = explained(
        "[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to "
        "10.0.0.1:1234\n"
    )
    assert timed_out.id == "log.rendezvous_or_port" and timed_out.details["confidence"] == "likely"
    (in_use, *_) = explained(
        "RuntimeError: The server socket has failed to listen on any local network address. The server socket "
        "has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n"
    )
    assert in_use.id == "log.rendezvous_or_port" and in_use.details["confidence"] == "certain"


def test_only_consequences_lead_likely_and_say_the_cause_is_not_in_the_log():
    # tests/fixtures/torch/watchdog-timeout-allreduce-600000ms.txt: one rank's timeout, the late rank absent
    (lead, *_) = explained(
        "[rank0]:[E626 06:24:44.159932949 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, "
        "Timeout(ms)=600000) ran for 600030 milliseconds before timing out.\n"
    )
    assert lead.id == "log.nccl_watchdog_timeout" and lead.details["confidence"] == "likely"
    assert "the cause is not in this log" in lead.summary and lead.details["cause"] == "not found in this log"
    assert "its own log" in lead.fix  # where to look: the rank that did not arrive


def test_torchruns_summary_alone_says_to_find_the_first_rank_that_failed():
    (lead, *_) = explained(
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "============================================================\n"
        "train.py FAILED\n"
        "------------------------------------------------------------\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  time      : 2024-05-02_10:11:12\n"
        "  host      : node1\n"
        "  rank      : 1 (local_rank: 1)\n"
        "  exitcode  : 1 (pid: 4242)\n"
        "  error_file: <N/A>\n"
    )
    assert lead.id == "log.child_failed" and lead.details["confidence"] == "likely"
    assert "the cause is not in this log" in lead.summary and "rank 1" in lead.summary


def test_a_peer_that_closed_alone_is_likely_and_under_a_cause_a_consequence():
    peer = "RuntimeError: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:52441\n"
    (alone, *_) = explained(peer)
    assert alone.id == "log.peer_closed" and alone.details["confidence"] == "likely"
    assert "the cause is not in this log" in alone.summary
    found = explained(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
        "of 79.15 GiB of which 1.02 GiB is free.\n" + peer
    )
    assert [f.id for f in found[:2]] == ["log.cuda_oom", "log.peer_closed"]
    assert found[0].details["confidence"] == "certain"
    assert found[1].details.get("consequence_of") == "log.cuda_oom"
    assert "the cause is not in this log" not in found[1].summary


def test_an_ib_completion_error_is_only_likely_an_interface_problem_and_names_a_faulty_link():
    # tests/fixtures/logs/018_network_interface.txt (NVIDIA/nccl#426): the thread found the GID index; the
    # same line is what a faulty link or a peer that died first prints
    (found, *_) = explained(
        "-worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, "
        "opcode 1, len 0, vendor err 129\n"
    )
    assert found.id == "log.network_interface" and found.details["confidence"] == "likely"
    assert "NCCL_IB_GID_INDEX" in found.fix and "faulty link" in found.fix


def test_ddps_parameter_check_across_ranks_is_a_model_mismatch_not_a_collective_one():
    # torch reducer.cpp's _verify_param_shape_across_processes (catalog torch_cpp:ddp-expects-same-model-across-all)
    (found, *_) = explained(
        "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 200 params, while rank 1 has "
        "inconsistent 198 params.\n"
    )
    assert found.id == "log.ddp_model_mismatch" and found.details["confidence"] == "certain"
    assert "rank 0 has 200 parameters, rank 1 has 198" in found.summary
    assert "same parameters" in found.fix


def test_a_rank_that_checked_in_twice_is_likely_a_duplicate_node_rank():
    # tests/fixtures/nccl/ib-bootstrap-rank-already-checked-in.log (Lightning-AI/pytorch-lightning#14986)
    (found, *_) = explained(
        "node01:18569:18835 [0] bootstrap.cc:131 NCCL WARN Bootstrap Root : rank 1 of 8 ranks has already "
        "checked in\n"
    )
    # which of the three ways to get two processes with one rank, the line cannot say
    assert found.id == "log.duplicate_node_rank" and found.details["confidence"] == "likely"
    assert "rank 1 of 8" in found.summary
    assert "--node_rank" in found.fix and "MASTER_PORT" in found.fix and "mp.spawn" in found.fix


def test_a_gloo_or_store_timeout_is_a_collective_timeout_not_nccls_watchdog():
    # gloo's unbound_buffer.cc (tests/test_explain_phrasings.py) and torch elastic's store barrier
    # (catalog torch:timed-out-waiting-on-barrier-on)
    for line in (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting "
        "1800000ms for send operation to complete\n",
        "torch.distributed.DistStoreError: Timed out waiting on barrier on rank 1, for key prefix: "
        "torchelastic/agent/terminal_state (world_size=2, missing_ranks=[0], timeout=300)\n",
    ):
        (found, *_) = explained(line)
        assert found.id == "log.collective_timeout", (line, found.id)
        assert found.details["confidence"] == "likely" and "the cause is not in this log" in found.summary


def test_a_state_dict_error_is_a_prefix_only_with_the_prefix_and_a_size_mismatch_another_model():
    # torch module.py's load_state_dict messages (catalog torch:error-in-loading-state-dict-for,
    # torch_native:missing-keys-in-state-dict, torch_native:size-mismatch-for)
    head = "RuntimeError: Error(s) in loading state_dict for ResNet:\n"
    (prefix, *_) = explained(
        head + '\tMissing key(s) in state_dict: "conv1.weight", "bn1.weight". \n'
        '\tUnexpected key(s) in state_dict: "module.conv1.weight", "module.bn1.weight". \n'
    )
    assert prefix.id == "log.state_dict_keys" and prefix.details["confidence"] == "certain"
    assert "module." in prefix.fix
    (other, *_) = explained(
        head + '\tMissing key(s) in state_dict: "layer5.0.weight". \n'
        '\tUnexpected key(s) in state_dict: "head.weight". \n'
    )
    assert other.id == "log.state_dict_keys" and other.details["confidence"] == "likely"
    (shape, *_) = explained(
        head + "\tsize mismatch for fc.weight: copying a param with shape torch.Size([1000, 2048]) from "
        "checkpoint, the shape in current model is torch.Size([10, 2048]).\n"
    )
    assert shape.id == "log.model_checkpoint_mismatch" and shape.details["confidence"] == "certain"
    assert "fc.weight" in shape.summary and "torch.Size([10, 2048])" in shape.summary
    assert "config" in shape.fix

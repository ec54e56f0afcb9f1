"""What the certainty audit (benchmarks/certainty_audit.py: every catalog template rendered as a log line, explain's
lead on it) found, each change beside the line that must stay as it was:

- NCCL 2.23+'s IB completion error names its status before the number ("status=transport retry counter
  exceeded(12)", transport/net_ib/p2p.cc): the status was not read, and the finding was certain where the older
  form ("status=12", "with error 12") is only likely (a RoCE setting, a faulty link, a peer that died first);
- NCCL bootstrap's "Message truncated : received N bytes instead of M" (bootstrap.cc socketRecv) is the size of
  NCCL's own set-up messages, not the user's data: only likely ranks that diverged, NCCL releases or settings
  that differ named; net_ib's "collective mismatch error" (NCCL's own comment: "user collective call count/size
  mismatches") stays certain;
- "No rendezvous handler for X://" for a scheme torch always registers (tcp, env, file) is a malformed
  init_method, not a build lacking torch.distributed;
- the compiler anchor "is not a member of" holds the quote that opens the scope's name: NCCL's "world rank 3 is
  not a member of the LSA team" is not a compiler's error;
- dataloader_shm's anchor is the DataLoader worker's ") exited unexpectedly", not the pin memory thread's;
- NCCL's "failed to open CUDA IPC handle" is only likely P2P, as its other side "failed to get CUDA IPC handle"
  already was (a container without the host's IPC namespace prints both); CUDA's "peer access is not supported"
  stays certain;
- NCCL's "Call to ibv_modify_qp failed" (the queue pair cannot reach its peer: a RoCE GID, NICs on different
  rails, an NCCL release's bug) is only likely, with its own fix, not the locked-memory limit of the other verbs
  calls (still certain);
- DeepSpeed's batch check at world size 1 is only likely a config for other GPUs: processes not started by a
  launcher each see a world of 1 (named);
- the catalog's refresh keeps a template's kind while its recogniser is anchored in it;
- NCCL 2.19+'s CUCHECK form "Cuda failure %d '%s'" (cudawrap.h: the driver's error number first) is read as the
  older "Cuda failure '%s'" is: out of memory, an initialization error, a kernel that faulted.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from explaining import explained, template

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import catalog_coverage  # noqa: E402
import certainty_audit  # noqa: E402

NCCL = "node1:1234:1290 [0] {} NCCL WARN "


def test_ib_completion_error_with_its_status_named_is_only_likely():
    # transport/net_ib/p2p.cc (NCCL 2.23+): WARN("... with status=%s(%d) opcode=%s(%d) ...", ibvWcStatusStr(...))
    newer = NCCL.format("transport/net_ib/p2p.cc:688") + (
        "NET/IB: Got completion from peer 10.0.0.2<4242> with status=transport retry counter exceeded(12) "
        "opcode=Send(0) vendor_err=129 hca mlx5_0"
    )
    found = explained(newer + "\n")
    assert found.id == "log.network_interface" and found.details["confidence"] == "likely"
    assert "log.network_fault" in found.details["alternatives"] and "12" in found.summary
    older = NCCL.format("transport/net_ib.cc:1") + (
        "NET/IB : Got completion from peer 10.0.0.2<4242> with error 12, opcode 0, len 0, vendor err 129"
    )
    assert explained(older + "\n").details["confidence"] == "likely"
    # no interface at all is still certain
    certain = explained(NCCL.format("bootstrap.cc:1") + "Bootstrap : no socket interface found\n")
    assert certain.id == "log.network_interface" and certain.details["confidence"] == "certain"


def test_bootstrap_message_truncated_is_only_likely_and_names_nccl_releases():
    line = NCCL.format("bootstrap.cc:77") + "Message truncated : received 256 bytes instead of 4"
    found = explained(line + "\n")
    assert found.id == "log.rank_divergence" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.nccl_env_value", "log.nccl_version_mismatch"]
    # the IB transport's check on the user's collective sizes stays certain
    mismatch = NCCL.format("transport/net_ib.cc:1081") + (
        "NET/IB : req 0/1 tag 7 peer 10.0.0.2<4242> collective mismatch error, local size 4096 remote size 8192"
    )
    found = explained(mismatch + "\n")
    assert found.id == "log.rank_divergence" and found.details["confidence"] == "certain"


def test_no_rendezvous_handler_for_a_scheme_torch_always_registers_is_not_a_build_lacking_distributed():
    # an init_method without its scheme (urlparse reads 'localhost:29500' as scheme 'localhost'): the process
    # group's arguments (round thirteen), never the build
    assert explained("RuntimeError: No rendezvous handler for localhost://\n").id == "log.process_group_args"
    found = explained("RuntimeError: No rendezvous handler for env://\n")
    assert found.id == "log.backend_unavailable" and found.details["confidence"] == "certain"


def test_a_team_member_is_not_a_compiler_error():
    text = by_id()["nccl:nccldevrworldtolsarank-world-rank-is-not-member"].text.replace("%d", "3")
    assert explained(NCCL.format("dev_runtime.cc:1") + text + "\n").id == "log.unrecognised"
    assert (
        catalog_coverage.kind_of(by_id()["nccl:nccldevrworldtolsarank-world-rank-is-not-member"].text) == ""
    )
    # gcc's error, with its plain and its curly (UTF-8 locale) quotes, is still read: a build failure on torch's
    # old THC API, which leads with the source and torch being of different releases (test_explain_legacy_torch_api)
    for line in (
        "csrc/x.cu:12:5: error: 'THCState' is not a member of 'at'",
        "csrc/x.cu:12:5: error: \u2018THCState\u2019 is not a member of \u2018at\u2019",
    ):
        found = explained(line + "\n")
        assert found.id == "log.dependency_version" and "log.cuda_build" in found.details["alternatives"]
    assert catalog_coverage.kind_of(by_id()["system:gcc-is-not-a-member-of"].text) == "cuda_build"


def test_the_pin_memory_thread_is_not_a_dataloader_worker():
    assert catalog_coverage.kind_of("Pin memory thread exited unexpectedly") == ""
    worker = template("torch:dataloader-worker-pid-exited-unexpectedly", "1234")
    assert catalog_coverage.kind_of(worker) == "dataloader_shm"
    found = explained(f"RuntimeError: {worker}\n")
    assert found.id == "log.dataloader_shm" and found.details["confidence"] == "likely"


def test_failed_to_open_a_cuda_ipc_handle_is_only_likely_p2p():
    found = explained(
        NCCL.format("transport/p2p.cc:1") + "failed to open CUDA IPC handle : 1 invalid argument\n"
    )
    assert found.id == "log.gpu_p2p" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.nccl_system_error"]
    peer = NCCL.format("transport/p2p.cc:1") + (
        "failed to open CUDA IPC handle : 217 peer access is not supported between these two devices"
    )
    found = explained(peer + "\n")
    assert found.id == "log.gpu_p2p" and found.details["confidence"] == "certain"


def test_refresh_keeps_a_kind_still_anchored_in_its_template():
    no_module = by_id()["system:python-no-module-named"]
    assert no_module.kind == "broken_install"
    assert catalog_coverage.anchored("broken_install", no_module.text)
    assert catalog_coverage.kind_of(no_module.text) == "dependency_version"  # tried first, not kept


def test_the_catalog_is_refreshed():
    # every template's kind is what a refresh gives it (the stale ones of the audit remapped)
    for t in by_id().values():
        if not (t.kind and catalog_coverage.anchored(t.kind, t.text)):
            assert t.kind == catalog_coverage.kind_of(t.text), t.id


def test_render_fills_placeholders_plausibly():
    assert certainty_audit.render("failed (exitcode: {}) local_rank: {} (pid: {})") == (
        "failed (exitcode: 3) local_rank: model (pid: 3)"
    )
    assert certainty_audit.render("Cuda failure %d '%s' 100%%") == "Cuda failure 3 'model' 100%"


def test_the_audit_finds_no_certain_lead_on_another_kind_in_these_templates():
    # the audit's own verdict on the templates this round changed: none is a certain lead on another cause
    results = [
        certainty_audit.Result(by_id()[ident], form, line, *certainty_audit.lead(line))
        for ident in (
            "nccl:net-ib-got-completion-from-peer",
            "nccl:message-truncated-received-bytes-instead-of",
            "nccl:failed-to-open-cuda-ipc-handle",
            "nccl:nccldevrworldtolsarank-world-rank-is-not-member",
            "torch:pin-memory-thread-exited-unexpectedly",
        )
        for form, line in (
            ("bare", certainty_audit.render(by_id()[ident].text)),
            ("printed", certainty_audit.printed(by_id()[ident], certainty_audit.render(by_id()[ident].text))),
        )
    ]
    assert all(r.confidence != "certain" for r in results), [(r.template.id, r.kind) for r in results]


def test_ibv_modify_qp_failing_is_only_likely_the_nics_and_not_the_memlock_limit():
    # misc/ibvwrap.cc: the queue pair could not reach the peer (nccl#2013: NCCL_CROSS_NIC=0 on a rail fabric, or
    # a newer NCCL, fixed it); not the locked-memory limit a failing ibv_reg_mr / ibv_create_cq points to
    line = NCCL.format("misc/ibvwrap.cc:262") + (
        "Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state "
        "RTR, local GID index 3"
    )
    found = explained(line + "\n")
    assert found.id == "log.network_interface" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.nccl_bug_upgrade"]
    assert "Connection timed out" in found.summary and "NCCL_CROSS_NIC=0" in found.fix
    assert "ulimit" not in found.fix.split("If it is not that")[0]
    reg = explained(NCCL.format("misc/ibvwrap.cc:1") + "Call to ibv_reg_mr failed\n")
    assert reg.id == "log.network_interface" and reg.details["confidence"] == "certain"
    assert "ulimit -l" in reg.fix


def test_a_batch_check_at_world_size_one_is_only_likely_a_config_for_other_gpus():
    # deepspeed/runtime/config.py multiplies by the world size the process sees: 1 is also plain python processes
    ident = "deepspeed:check-batch-related-parameters-train-batch"
    one = explained(f"AssertionError: {template(ident, '16', '2', '1', '1')}\n")
    assert one.id == "log.deepspeed_config_mismatch" and one.details["confidence"] == "likely"
    assert one.details["alternatives"] == ["log.not_launched_distributed"]
    four = explained(f"AssertionError: {template(ident, '16', '2', '1', '4')}\n")
    assert four.id == "log.deepspeed_config_mismatch" and four.details["confidence"] == "certain"


def test_nccls_cuda_failure_with_the_drivers_number_reads_as_without_it():
    prefix = "gpu-node-3:1234:1290 [1] transport/p2p.cc:275 NCCL WARN "
    for error, kind, confidence in [
        ("'out of memory'", "log.cuda_oom", "certain"),
        ("'initialization error'", "log.cuda_fork", "likely"),
        ("'an illegal memory access was encountered'", "log.library_version_bug", "likely"),
        ("'invalid argument'", "log.nccl_bug_upgrade", "likely"),
    ]:
        for number in ("", "2 ", "700 "):
            found = explained(f"{prefix}Cuda failure {number}{error}\n")
            assert (found.id, found.details.get("confidence", "certain")) == (kind, confidence), (
                number,
                error,
            )
    # the quoted words alone, without NCCL's "Cuda failure", are not CUDA's
    assert explained("ValueError: 'out of memory'\n").id == "log.unrecognised"

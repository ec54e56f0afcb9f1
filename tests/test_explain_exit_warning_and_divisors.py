"""Session 38's train misses of the hundred-and-sixteenth and hundred-and-eighteenth samples, read the general way:
ProcessGroupNCCL's exit warning in each release's wording (and a watchdog that times out after it: a hang at
exit), a count the number of processes does not divide (a script's assert, Megatron's and accelerate's
messages), and a traceback that stops before its error line. Beside each, the reading it must not take."""

from __future__ import annotations

from explaining import explained, filled, lead, template

from torchdoctor.explain.cut_traceback import package_path


def _exit_line(ident: str, rank: int = 0) -> str:
    # as TORCH_WARN_ONCE prints it under torchrun: the rank prefix, c10's "Warning: ", "(function operator())"
    return (
        f"[rank{rank}]:[W205 18:00:34.953145631 ProcessGroupNCCL.cpp:1538] Warning: {template(ident)} "
        "(function operator())\n"
    )


def test_each_release_wording_of_the_exit_warning_is_read_alone_as_likely():
    # 5618.txt (meta-pytorch/tritonbench#1067): the 2026 nightly's one line
    found = lead("5618.txt")
    assert found.id == "log.shutdown_hang" and found.details["confidence"] == "likely"
    assert "destroy_process_group()" in found.fix
    for ident in (
        "torch_native:process-group-not-destroyed-before-destructed",  # 2.4's nightlies
        "torch_native:process-group-has-not-been-destroyed",  # 2.4-2.5
        "torch_native:destroy-process-group-not-called-before-exit",  # 2.6+
        "torch_native:must-call-destroy-process-group-before-exit",
    ):
        found = explained("step 900 loss=1.02\ntraining finished\n" + _exit_line(ident))
        assert (found.id, found.details["confidence"]) == ("log.shutdown_hang", "likely"), ident
        assert "alone it does not say why a run failed" in found.summary
        # says when torch prints it, in words a user can check against their run (it said "does so here")
        assert "torch prints this as the process exits" in found.summary, found.summary


def test_a_log_of_only_the_exit_warning_is_a_warning_not_a_failure(tmp_path, cli_here):
    # a run that trained and ended, whose log holds only the warning every exit without cleanup prints: `!`, exit 0
    log = tmp_path / "train.log"
    log.write_text(
        "step 900 loss=1.02\ntraining finished\n"
        + _exit_line("torch_native:destroy-process-group-not-called-before-exit")
    )
    done = cli_here("explain", str(log))
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("! likely: the process group was never destroyed"), done.stdout
    # beside a watchdog that timed out after it (a hang at exit), or an exception, it is a failure again
    timed_out = explained(
        "training finished\n"
        + _exit_line("torch_native:destroy-process-group-not-called-before-exit")
        + _STUCK
    )
    assert (timed_out.id, timed_out.status) == ("log.shutdown_hang", "fail")
    raised = explained(
        'Traceback (most recent call last):\n  File "/home/u/train.py", line 9, in <module>\n    main()\n'
        "ValueError: planted failure\n"
        + _exit_line("torch_native:destroy-process-group-not-called-before-exit")
    )
    assert raised.status == "fail"


def test_the_exit_warning_never_leads_over_an_error_the_log_shows():
    warning = _exit_line("torch_native:destroy-process-group-not-called-before-exit")
    found = explained(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 1.02 GiB is free.\n" + warning
    )
    assert found.id == "log.cuda_oom"
    raised = explained(
        'Traceback (most recent call last):\n  File "/home/u/train.py", line 9, in <module>\n    main()\n'
        "ValueError: planted failure\n" + warning
    )
    assert raised.id != "log.shutdown_hang"


_STUCK = (
    "[rank4]:[E205 18:11:06.375750231 ProcessGroupNCCL.cpp:1870] [PG ID 12 PG GUID 99(EXPERT_MODEL_PARALLEL_GROUP) "
    "Rank 4] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
    "collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog, "
    "and could be triggered by another thread holding the GIL inside a CUDA api (for example, CudaEventDestroy), "
    "or other deadlock-prone behaviors.\n"
)


def test_a_watchdog_that_times_out_after_the_exit_warning_is_a_hang_at_exit():
    # 5623.txt (modelscope/ms-swift#7992): training ended, the warning, then the watchdog stuck ten minutes later
    found = lead("5623.txt")
    assert found.id == "log.shutdown_hang" and found.details["confidence"] == "likely"
    assert "hung at exit" in found.summary and "got stuck for 480 s" in found.summary
    assert "destroy_process_group()" in found.fix
    # the same lines in the other order: the watchdog hung while the job ran, the warning is its aftermath
    warning = _exit_line("torch_native:destroy-process-group-not-called-before-exit")
    before = explained("step 10 loss=3.1\n" + _STUCK + warning)
    assert before.id == "log.nccl_watchdog_timeout"
    # and a collective's timeout after the warning of another release reads the same way as 5623
    timed_out = explained(
        "training finished\n"
        + _exit_line("torch_native:process-group-has-not-been-destroyed")
        + "[rank1]:[E1007 10:05:53.4 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=912, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
        "600012 milliseconds before timing out.\n"
    )
    assert timed_out.id == "log.shutdown_hang" and "timed out after that warning" in timed_out.summary


def test_the_rank_that_was_exiting_is_not_said_to_have_failed(tmp_path):
    # rank 0 printed the exit warning, rank 1's watchdog timed out after it: the timeout's finding said of rank 0
    # "never got there (it failed first)", though rank 0 raised nothing: it was exiting
    from torchdoctor.explain.diagnose import explain

    log = tmp_path / "console.log"
    log.write_text(
        "training finished\n"
        + _exit_line("torch_native:destroy-process-group-not-called-before-exit", rank=0)
        + "[rank1]:[E1007 10:05:53.4 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=912, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
        "600012 milliseconds before timing out.\n"
    )
    found = {f.id: f for f in explain([str(log)])}
    assert list(found)[0] == "log.shutdown_hang", list(found)
    timeout = found["log.nccl_watchdog_timeout"].summary
    assert "Rank 0 never got there (it had left the training and was exiting)" in timeout, timeout
    assert "failed first" not in timeout


def test_a_count_the_world_size_does_not_divide_names_both():
    # 5720.txt (intelligent-machine-learning/dlrover#533): nanoGPT's assert, copied into dlrover's example
    found = lead("5720.txt")
    assert found.id == "log.batch_not_divisible" and found.details["confidence"] == "likely"
    assert "gradient_accumulation_steps" in found.fix and "world_size" in found.summary
    # nanoGPT's own wording, under torchrun's prefix, with Python 3.11's carets
    found = explained(
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/work/nanoGPT/train.py", line 98, in <module>\n'
        "[rank0]:     assert gradient_accumulation_steps % ddp_world_size == 0\n"
        "[rank0]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "[rank0]: AssertionError\n"
    )
    assert found.id == "log.batch_not_divisible" and "ddp_world_size" in found.summary
    # a batch size asserted against the GPU count, with a message
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "    assert args.batch_size % args.num_gpus == 0, 'batch size must divide by the GPUs'\n"
        "AssertionError: batch size must divide by the GPUs\n"
    )
    assert found.id == "log.batch_not_divisible" and "args.batch_size" in found.summary


def test_the_frameworks_messages_name_the_values():
    found = explained(
        "AssertionError: "
        + filled("third_party:megatron-global-batch-not-divisible", "100", "2", "16")
        + "\n"
    )
    assert found.id == "log.batch_not_divisible"
    assert "100" in found.summary and "= 32" in found.summary and "96 or 128" in found.fix
    found = explained(
        "ValueError: " + filled("accelerate:split-batches-dataloader-round-multiple", "30", "4") + "\n"
    )
    assert found.id == "log.batch_not_divisible"
    assert "30" in found.summary and "28 or 32" in found.fix and "split_batches" in found.fix


def test_other_remainders_and_asserts_are_not_this_reading():
    # a remainder by the world size that is no count of work (a rank's parity), and a count checked against
    # something other than the number of processes
    for code in (
        "assert rank % world_size == 0",
        "assert batch_size % block_size == 0",
    ):
        found = explained(
            'Traceback (most recent call last):\n  File "train.py", line 7, in <module>\n'
            f"    {code}\nAssertionError\n"
        )
        assert found.id != "log.batch_not_divisible", code
    # the assert's line without its AssertionError (a frame of a traceback raised deeper, a quoted line)
    found = explained("    assert gradient_accumulation_steps % world_size == 0\n")
    assert found.id != "log.batch_not_divisible"


def test_a_traceback_cut_before_its_error_line_is_said_in_words():
    # 109.txt's frames (deepspeedai/DeepSpeed#857): the quoted traceback stops in DeepSpeed's engine
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/deepspeed/runtime/engine.py", line 1667, in _save_zero_checkpoint\n'
        "    zero_sd = {'optimizer_state_dict': self.optimizer.state_dict()}\n"
    )
    assert found.id == "log.unrecognised" and found.status == "skip"
    assert "stops before its error line" in found.summary
    assert "deepspeed/runtime/engine.py:1667 in _save_zero_checkpoint" in found.summary
    assert "(deepspeed's code)" in found.summary
    # 5621.txt (huggingface/transformers#36081): it stops inside DeepSpeed building its config (DS5): that reading
    found = lead("5621.txt")
    assert found.id == "log.deepspeed_config_mismatch" and found.details["confidence"] == "likely"
    assert "deepspeed/runtime/zero/partition_parameters.py:949" in found.summary
    # a traceback after the terminal's ^C is a KeyboardInterrupt's: the user stopped a run that was still going
    stopped = explained(
        "done training in 162.1 seconds\n^CTraceback (most recent call last):\n"
        '  File "/home/u/fairseq/fairseq_cli/train.py", line 563, in cli_main\n'
        "    distributed_utils.call_main(cfg, main)\n"
    )
    assert "stopped with Ctrl-C" in stopped.summary and "train.py:563 in cli_main" in stopped.summary
    # its fix is the one for a run stopped while waiting (what it waited for), not the one for a cut paste
    assert "wandb.finish()" in stopped.fix and "--watchdog" in stopped.fix, stopped.fix
    assert "wandb.finish()" not in found.fix
    # a whole traceback with its error line is named as before, not as cut
    whole = explained(
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    main()\n'
        "KeyError: 'planted'\n"
    )
    assert "stops before its error line" not in whole.summary
    assert package_path("/usr/lib/python3/dist-packages/numpy/core/a.py") == ("numpy", "numpy/core/a.py")


def test_frames_pasted_without_header_or_error_line_name_the_innermost_frame():
    # 4124.txt (torchrun's [rank7]: prefix, cut at both ends): the frames still end in accelerate's code
    found = lead("4124.txt")
    assert found.id == "log.unrecognised" and found.status == "skip"
    assert "without its header or its error line" in found.summary, found.summary
    assert "accelerate/data_loader.py:460 in __len__ (accelerate's code)" in found.summary
    # faulthandler's dump (2323.txt's lines: no comma before "in") is a hang's stacks, not a cut traceback
    dumped = explained(
        "the first checkpoint gets saved it seems if I look at the filesystem, and then it hangs\n"
        '  File "/mnt/nvme1/code/github/00optimize/DeepSpeed-div-by-zero/deepspeed/runtime/engine.py", line 1456 '
        "in _checkpoint_tag_validation\n"
        '  File "/mnt/nvme1/code/github/00optimize/DeepSpeed-div-by-zero/deepspeed/runtime/engine.py", line 1489 '
        "in save_checkpoint\n"
    )
    assert "error line" not in dumped.summary, dumped.summary
    # IPython's frames (3023.txt, Jupyter: "File ~/...py:1531, in Trainer.train(...)") are read the same way
    found = lead("3023.txt")
    assert "transformers/trainer.py:1531 in Trainer.train (transformers's code)" in found.summary, (
        found.summary
    )
    # with its error line (Deci-AI/super-gradients#893's IPython traceback and its title) the error is read
    whole = explained(
        "AttributeError                            Traceback (most recent call last)\n"
        "File ~\\anaconda3\\envs\\yolo-nas\\lib\\site-packages\\super_gradients\\__init__.py:2\n"
        "      1 from super_gradients.common import init_trainer, is_distributed, object_names\n"
        "AttributeError: module 'signal' has no attribute 'SIGKILL'. Did you mean: 'SIGILL'?\n"
    )
    assert whole.id == "log.unix_only_module", whole.summary


def test_the_check_said_in_words_is_the_same_reading():
    # a script's assert message and a framework's ValueError, as their sources word them
    found = explained("AssertionError: The batch size must be divisible by the world size!\n")
    assert found.id == "log.batch_not_divisible" and found.details["confidence"] == "likely"
    assert "batch size" in found.summary and "multiple of the number of processes" in found.fix
    found = explained("ValueError: batch_size (10) is not divisible by the number of GPUs (4)\n")
    assert found.id == "log.batch_not_divisible" and "(4)" in found.fix
    # torch's own check of a tensor's first dimension is not a count the user sets
    found = explained(
        "RuntimeError: " + filled("torch:tensor-with-dimensions-does-not-have", "[3, 4]", "2") + "\n"
    )
    assert found.id != "log.batch_not_divisible"


def test_torchruns_summary_after_the_assert_names_the_count_in_words(tmp_path):
    # torchrun's line of the failed worker follows the assert: its "consequence of ..." reads as a sentence
    # (it said "a consequence of the count the number of processes does not divide above")
    from torchdoctor.explain.diagnose import explain

    log = tmp_path / "console.log"
    log.write_text(
        '[rank0]:   File "/work/nanoGPT/train.py", line 98, in <module>\n'
        "[rank0]:     assert gradient_accumulation_steps % ddp_world_size == 0\n"
        "[rank0]: AssertionError\n"
        "E1203 10:20:05.623000 140234 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
        "local_rank: 0 (pid: 140302) of binary: /usr/bin/python3\n"
    )
    found = explain([str(log)])
    assert [f.id for f in found] == ["log.batch_not_divisible", "log.child_failed"], [f.id for f in found]
    assert "a consequence of the count not divisible by the number of processes above" in found[1].summary

"""A likely lead names the other causes its log shows (verdict.py's rivals), where no exception says which error
stopped the run: the log alone cannot say which message was the cause, so the user reads both, the first first."""

from __future__ import annotations

import io

from explaining import explained, lead

from torchdoctor.explain.diagnose import explain

DEVICES = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def test_two_errors_a_user_prevented_are_both_named_the_first_leading():
    # train 4420.txt (bghira/SimpleTuner#566): the filer's two fixes, each quoting the error it prevents
    found = lead("4420.txt")
    assert (found.id, found.details["confidence"]) == ("log.device_mismatch", "likely")
    assert "log.ddp_module_attribute" in found.details["alternatives"]
    assert "(log.ddp_module_attribute, also in this log)" in found.summary
    assert "see log.ddp_module_attribute below" in found.fix


def test_the_error_that_stopped_the_run_is_not_put_beside_another_cause():
    # the same two messages, the first raised with its traceback: that exception stopped the run, and the
    # second message is no rival of it
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "train_sd21.py", line 1200, in <module>\n'
        "    main()\n"
        f"RuntimeError: {DEVICES}\n"
        "AttributeError: 'DistributedDataParallel' object has no attribute 'dtype'\n"
    )
    assert found.id == "log.device_mismatch"
    assert "also in this log" not in found.summary


def test_a_cause_seen_only_as_a_warning_the_run_went_on_after_is_no_rival():
    # xFormers' start-up warning (train 3224.txt's lines 2-4) beside a quoted error: the run went on after the warning
    found = explained(
        f'I keep getting "{DEVICES}"\n'
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
        "    PyTorch 1.13.1+cu117 with CUDA 1107 (you have 2.1.0.dev20230318+cu118)\n"
        "    Python  3.10.9 (you have 3.10.10)\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.device_mismatch", "likely")
    assert "log.extension_import" not in found.details["alternatives"]
    assert "also in this log" not in found.summary


def test_a_certain_lead_names_no_likely_message_beside_it():
    found = explained(
        '1. first "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; 13.02 GiB '
        'already allocated; 1.07 GiB free; 13.50 GiB reserved in total by PyTorch)"\n'
        f'2. then "{DEVICES}"\n'
    )
    assert (found.id, found.details["confidence"]) == ("log.cuda_oom", "certain")
    assert "alternatives" not in found.details


def test_a_warning_the_run_went_on_after_and_a_stop_with_ctrl_c_are_two_findings_not_one_read_two_ways():
    # Lightning's bug_report_model.py on 2 CPU ranks under torchdoctor launch, stopped with Ctrl-C (session 39):
    # the logging-interval warning and the stop each read a line of their own; neither is the other's "or"
    log = (
        "/venv/lib/python3.11/site-packages/lightning/pytorch/loops/fit_loop.py:321: The number of training batches "
        "(10) is smaller than the logging interval Trainer(log_every_n_steps=50). Set a lower value for "
        "log_every_n_steps if you want to see logs for the training epoch.\n"
        "Detected KeyboardInterrupt, attempting graceful shutdown ...\n"
        "torchdoctor: rank 0 was interrupted at bug_report_model.py:69 in run: trainer.fit(model) (blocked in wait, "
        "which had not returned)\n"
        "torchdoctor: interrupted\n"
    )
    found = explain(["-"], stdin=io.BytesIO(log.encode()))
    assert [f.id for f in found] == ["log.log_interval_above_batches", "log.launch_interrupted"]
    assert all("also in this log" not in f.summary and "alternatives" not in f.details for f in found)

"""The knowledge the eleventh sample by symptom (corpus files 403-419, train half) asked for, each anchored on the
message its source prints: an infinite loss in a trainer's log line (the NaN/overflow kind's "loss: nan" forms,
with inf) and a model trained in float16 as a whole; the builtin StopIteration that ends a traceback through the
DataLoader iterator's __next__ (torch/utils/data/dataloader.py); DDP's "marked ready twice" with
find_unused_parameters=True (torch/csrc/distributed/c10d/reducer.cpp's own advice); torchelastic's
RendezvousClosedError for a node that arrives after the rendezvous completed (--rdzv-conf). Beside each, a line
that must stay silent, or be another kind."""

from __future__ import annotations

from explaining import explained, lead, template


def test_an_infinite_loss_in_a_trainers_log_line_is_nan_overflow():
    for line in (
        "Skip this batch 2! (Loss: inf)",
        "Epoch 3:  41%|####1     | 120/292 [00:31<00:44, loss=inf, v_num=0]",
        "{'loss': inf, 'learning_rate': 4.9e-05, 'epoch': 0.12}",
        "[rank1]: step 800 loss is inf",
    ):
        found = explained(line + "\n")
        assert found.id == "log.nan_overflow", line
        # an infinite loss is also an op at the edge of its domain, or the data: named beside it
        assert found.details["confidence"] == "likely"
        assert found.details["alternatives"] == ["log.nan_at_zero", "log.bad_training_data"]


def test_a_best_loss_that_starts_at_infinity_or_a_word_is_not_an_overflow():
    for line in (
        "best_loss: inf",
        "Epoch 0 | best val loss: inf | saving checkpoint",
        "min_loss = inf",
        "Loss: information about the criterion follows",
    ):
        assert explained(line + "\n").id != "log.nan_overflow", line


def test_a_model_trained_in_half_precision_says_so_in_the_fix():
    # 411.txt (sanghyun-son/EDSR-PyTorch#36): --precision half, every batch skipped with an infinite loss
    found = lead("411.txt")
    assert found.id == "log.nan_overflow" and found.details["confidence"] == "certain"
    assert "float16 (--precision half)" in found.summary
    assert "single-precision (float32)" in found.fix and "autocast" in found.fix and "GradScaler" in found.fix
    # the same overflow without a half-precision model keeps the general advice
    plain = explained("Skip this batch 2! (Loss: inf)\n")
    assert "whole model in half precision" not in plain.fix and "bf16 instead of fp16" in plain.fix
    # a traceback's source line that casts the model to half is the same evidence
    text = "    model = model.half()\nEpoch 1 loss: nan\n"
    assert "not in mixed precision" in explained(text).summary


def test_a_stopiteration_from_the_dataloaders_next_is_an_exhausted_iterator_likely():
    # 417.txt (CSAILVision/semantic-segmentation-pytorch#101): next(iterator) past the loader's fake length; an
    # empty dataset (its path holding no file) ends at the first next() the same way: likely, that reading named
    # (test_explain_certainty_review_5)
    found = lead("417.txt")
    assert found.id == "log.dataloader_exhausted" and found.details["confidence"] == "likely"
    assert "log.data_path_missing" in found.details["alternatives"]
    assert "StopIteration" in found.fix and "iter(loader)" in found.fix and "len(loader)" in found.fix
    # torch's own DataLoader, with torchrun's rank prefix on the exception line
    text = (
        'File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 631, in __next__\n'
        "    data = self._next_data()\n"
        'File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1318, in _next_data\n'
        "    raise StopIteration\n"
        "[rank0]: " + template("system:python-stop-iteration") + "\n"
    )
    assert explained(text).id == "log.dataloader_exhausted"


def test_a_stopiteration_elsewhere_or_caught_by_a_runner_is_not_an_exhausted_loader():
    # next() on another empty iterator: the model's parameters (no DataLoader frame in the traceback)
    elsewhere = (
        'File "/usr/lib/python3/site-packages/transformers/modeling_utils.py", line 159, in get_parameter_dtype\n'
        "    return next(parameter.parameters()).dtype\n"
        "StopIteration\n"
    )
    assert explained(elsewhere).id != "log.dataloader_exhausted"
    # a runner that catches it to start the next epoch: the later exception is the failure
    caught = (
        'File "/home/u/.conda/envs/m/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 521, in '
        "__next__\n"
        "    raise StopIteration\n"
        "StopIteration\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
    )
    assert explained(caught).id != "log.dataloader_exhausted"
    # Python 3.7+ turns one raised inside a generator into a RuntimeError
    generator = "RuntimeError: generator raised StopIteration\n"
    assert explained(generator).id != "log.dataloader_exhausted"


def test_ready_twice_with_reentrant_checkpointing_names_find_unused_parameters():
    # 413.txt (huggingface/transformers#4659): gradient checkpointing under DDP(find_unused_parameters=True)
    found = lead("413.txt")
    assert found.id == "log.ddp_ready_twice" and found.details["confidence"] == "certain"
    assert "find_unused_parameters=False" in found.fix and "use_reentrant=False" in found.fix


def test_a_closed_rendezvous_names_a_late_node_and_rdzv_conf_only_likely():
    # 415.txt (one-covenant/basilica#493): workers that arrived after last_call_timeout
    found = lead("415.txt")
    assert found.id == "log.rendezvous_or_port" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.peer_closed"]
    assert "arrived after" in found.summary
    assert "--rdzv-conf" in found.fix and "last_call_timeout" in found.fix and "join_timeout" in found.fix


def test_other_rendezvous_failures_do_not_talk_about_a_late_node():
    line = "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n"
    found = explained(line)
    assert found.id == "log.rendezvous_or_port"
    assert "last_call_timeout" not in found.fix and "arrived after" not in found.summary

"""Certainty, eighth round (task CERT8): the certain readings of the deepspeed, device placement, launcher and
memory families, each message read against every caller of it in its source and in the threads users post.

Made likely, the other reading named:

- torch's "Cannot convert a MPS Tensor to float64 dtype" (aten/src/ATen/mps/EmptyTensor.cpp) raised with an
  installed package's frames below the user's code: most threads posting it are a library's own float64 tensor
  (Lightning moving a model built from float64 data in darts, chemprop's v2 models, a transformers pipeline's
  buffer), fixed in that library. From the user's own code, or with no traceback, it stays certain.
- DeepSpeed's ZeRO-3 check that every rank ran the same modules (zero/utils.py assert_ints_same_as_other_ranks,
  "disagreement between rank0 and rank N" before 0.17.6, "Detected a disagreement on list length / contents"
  from it): a forward that differs per rank (MoE routing, a batch without an image, generate) and a release's
  trace gone wrong are both posted with it (DeepSpeed#1960 and #5799 are labelled bugs), so it is likely even
  once a real log shows it. Before 0.17.6 rank 0's list was broadcast into one of the other rank's length
  unchecked: numbers no module id has in it mean the ranks ran another number of modules, and say so.

Fixes corrected, the reading kept certain:

- transformers' and accelerate's "DeepSpeed config values that mismatch" compare with != and print with str():
  a JSON value in quotes ("8") beside the argument's 8 prints as the same value. Such a pair is named a string
  in the JSON; the hf side's names with "+", "(amp)" or " (calculated)" and accelerate's "vs arg" side are read.
- accelerate's device_map refusal (prepare_model: hf_device_map of more than one entry under any distributed
  type) was said to be "trained by several processes": one process under DeepSpeed, FSDP or torchrun is a
  distributed type too. Its 4/8-bit "on a different device than the one you're training on" was given the
  device_map='auto' summary: it is a quantized model whole on another GPU than the process's own.

Kept certain, each pinned below: torch's "Cannot re-initialize CUDA in forked subprocess" (torch/cuda/__init__.py
_lazy_init in a forked child: the one cause), DeepSpeed's bf16-and-fp16 refusal (runtime/config.py: both
sections enabled, whoever wrote them), torch's "Detected mismatch between collectives on ranks"
(ProcessGroupWrapper, TORCH_DISTRIBUTED_DEBUG=DETAIL's own check), accelerate's device_map refusal.
The session's new likely leads stay likely: COMM2's NCCL socket lines are consequences or generic (their own
tests), DS2's ZeRO-3 disagreement is above, T49's nan_at_zero is an alternative, never a lead.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

MPS = (
    "TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please "
    "use float32 instead.\n"
)


def traceback_through(*frames: str) -> str:
    """A traceback from the user's train.py through ``frames`` (file, code) to the MPS refusal."""
    lines = [
        "Traceback (most recent call last):\n",
        '  File "/Users/ana/proj/train.py", line 40, in <module>\n',
    ]
    lines.append("    main()\n")
    for file, code in frames:
        lines.append(f'  File "{file}", line 120, in f\n    {code}\n')
    return "".join(lines) + MPS


SITE = "/Users/ana/miniconda3/lib/python3.11/site-packages"


@pytest.mark.parametrize(
    "frames",
    [
        (
            (f"{SITE}/pytorch_lightning/strategies/single_device.py", "self.model.to(self.root_device)"),
            (f"{SITE}/torch/nn/modules/module.py", "return self._apply(convert)"),
        ),
        (
            (f"{SITE}/transformers/pipelines/base.py", "model_outputs = self._forward(model_inputs)"),
            (
                f"{SITE}/transformers/models/detr/modeling_detr.py",
                "dim_t = torch.arange(d, dtype=torch.float64)",
            ),
        ),
    ],
    ids=["lightning-moves-the-model", "a-pipelines-own-buffer"],
)
def test_a_float64_a_library_made_on_mps_is_only_likely(frames):
    found = likely_with(traceback_through(*frames), "mps_float64", "log.library_version_bug")
    assert "installed package" in found.summary and "pip install -U" in found.fix, found.fix


@pytest.mark.parametrize(
    "text",
    [
        MPS,
        traceback_through(
            ("/Users/ana/proj/data.py", "x = torch.from_numpy(arr).to(device)"),
            (f"{SITE}/torch/utils/data/dataloader.py", "data = self._next_data()"),
        ),
    ],
    ids=["no-traceback", "the-users-own-tensor"],
)
def test_a_float64_the_script_sends_to_mps_stays_certain(text):
    found = certain(text, "mps_float64")
    assert "x.float().to('mps')" in found.fix, found.fix


MISMATCH = (
    "ValueError: Please correct the following DeepSpeed config values that mismatch {whose} values:\n"
    "- ds {pair}\n"
    "The easiest method is to set these DeepSpeed config values to 'auto'.\n"
)


@pytest.mark.parametrize(
    ("whose", "pair", "key"),
    [
        (
            "TrainingArguments",
            "gradient_accumulation_steps=8 vs hf gradient_accumulation_steps=8",
            "gradient_acc",
        ),
        ("TrainingArguments", "optimizer.params.lr=1e-5 vs hf learning_rate=1e-05", "optimizer.params.lr"),
        ("kwargs ", "gradient_accumulation_steps=4 vs arg gradient_accumulation_steps=4", "gradient_acc"),
    ],
    ids=["transformers-int", "transformers-float", "accelerate"],
)
def test_a_mismatch_of_equal_values_is_a_number_written_as_a_string(whose, pair, key):
    found = certain(MISMATCH.format(whose=whose, pair=pair), "deepspeed_config_mismatch")
    assert key in found.summary and "as a string" in found.summary, found.summary
    assert "in quotes" in found.fix, found.fix


@pytest.mark.parametrize(
    ("pair", "said"),
    [
        (
            "train_batch_size=32 vs hf train_batch_size (calculated)=4",
            "ds train_batch_size=32 vs hf train_batch_size (calculated)=4",
        ),
        (
            "fp16.enabled=True vs hf fp16|fp16_full_eval+fp16_backend(amp)=False",
            "ds fp16.enabled=True vs hf fp16|fp16_full_eval+fp16_backend(amp)=False",
        ),
    ],
    ids=["calculated", "amp-backend"],
)
def test_a_mismatch_of_different_values_names_both_and_no_string(pair, said):
    found = certain(MISMATCH.format(whose="TrainingArguments", pair=pair), "deepspeed_config_mismatch")
    assert said in found.summary and "as a string" not in found.summary, found.summary


def test_a_device_map_refusal_does_not_claim_several_processes():
    line = (
        "ValueError: You can't train a model that has been loaded with `device_map='auto'` in any distributed mode. "
        "Please rerun your script specifying `--num_processes=1` or by launching with `python {{myscript.py}}`.\n"
    )
    found = certain(line, "device_map_distributed")
    assert "several processes" not in found.summary.split("(")[0], found.summary
    assert "DeepSpeed / FSDP / torchrun even with one" in found.summary, found.summary
    assert "Under DeepSpeed or FSDP one process" in found.fix, found.fix


def test_a_quantized_model_on_another_gpu_is_named_so():
    line = (
        "ValueError: You can't train a model that has been loaded in 8-bit or 4-bit precision on a different device "
        "than the one you're training on. Make sure you loaded the model on the correct device using for example "
        "`device_map={'':torch.cuda.current_device()}` or `device_map={'':torch.xpu.current_device()}`\n"
    )
    found = certain(line, "device_map_distributed")
    assert "4-bit or 8-bit model" in found.summary and "device_map='auto'" not in found.summary, found.summary
    assert "PartialState().process_index" in found.fix, found.fix


ZERO3 = (
    '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/utils.py", line 86, in '
    "assert_ints_same_as_other_ranks\n"
    '    raise RuntimeError(f"disagreement between rank0 and rank{{dist.get_rank()}}: "\n'
    "RuntimeError: disagreement between rank0 and rank2: rank0: [{rank0}], rank2: [2, 3, 4, 6, 34, 7]\n"
)


def test_zero3s_disagreement_stays_likely_even_where_a_real_log_showed_it():
    found = likely_with(ZERO3.format(rank0="2, 3, 4, 6, 34, 8"), "rank_divergence", "log.library_version_bug")
    assert found.summary.startswith("likely: ZeRO-3's ranks gathered different parameters"), found.summary
    assert "no module id" not in found.summary, found.summary


def test_zero3s_disagreement_in_the_later_wording_is_likely_too():
    text = "RuntimeError: Detected a disagreement on list length between rank0 and rank1: \n rank0: 120 \n rank1: 118\n"
    likely_with(text, "rank_divergence", "log.library_version_bug")


def test_numbers_no_id_has_name_lists_of_two_lengths():
    found = explained(ZERO3.format(rank0="-4866073977605047075, -4957833660337767236, 4361942804416314505"))
    assert "-4866073977605047075, no module id" in found.summary, found.summary
    assert "rank 2 ran another number of modules" in found.summary, found.summary


def test_torchs_own_collective_check_stays_certain():
    text = (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=12, OpType=BROADCAST, TensorShape=[4], TensorDtypes=Float), but Rank 1 "
        "is running collective: CollectiveFingerPrint(SequenceNumber=12, OpType=ALLREDUCE).\n"
    )
    found = certain(text, "rank_divergence")
    assert "rank 0 ran BROADCAST" in found.summary, found.summary


@pytest.mark.parametrize(
    ("line", "kind", "said"),
    [
        (
            "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must "
            "use the 'spawn' start method",
            "cuda_fork",
            "set_start_method('spawn')",
        ),
        (
            "AssertionError: bfloat16 and fp16 modes cannot be simultaneously enabled",
            "deepspeed_config_mismatch",
            "bf16",
        ),
    ],
    ids=["cuda-fork", "deepspeed-both-precisions"],
)
def test_a_message_printed_for_one_cause_stays_certain(line, kind, said):
    found = certain(line + "\n", kind)
    assert said in found.fix, found.fix

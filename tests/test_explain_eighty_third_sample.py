"""The eighty-third sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 3967-4016)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")


def reads(text: str, kind: str, confidence: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    return found


# CPython's traceback through DeepSpeed's PipelineEngine.train_batch into deepspeed/runtime/pipe/engine.py
# _exec_reduce_tied_grads, whose code line all-reduces a tied weight's gradient, the log cut after that line
INTO_TIED_GRADS = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/pretrain_pipe.py", line 88, in <module>\n'
    "    loss = engine.train_batch(data_iter=batches)\n"
    '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/pipe/engine.py", line 362, in train_batch\n'
    "    self._exec_schedule(sched)\n"
    '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/pipe/engine.py", line 1307, in '
    "_exec_schedule\n"
    "    self._exec_instr(**cmd.kwargs)\n"
    '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/pipe/engine.py", line 270, in '
    "_exec_reduce_tied_grads\n"
    "    dist.all_reduce(grad, group=group)\n"
)


def test_a_pipeline_step_cut_off_in_the_tied_gradients_all_reduce_is_likely_deepspeeds_release():
    found = reads(INTO_TIED_GRADS, "library_version_bug", "likely")
    assert "_exec_reduce_tied_grads" in found.summary and "0.15.4" in found.fix and "LoRA" in found.fix


# the same call failing in NCCL (deepspeed/comm/comm.py and torch's all_reduce below it, NCCL's error after them)
# is that collective's failure, read from its own line
def test_the_same_all_reduce_failing_in_nccl_is_not_the_release_bug():
    found = explained(
        INTO_TIED_GRADS
        + '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/comm/comm.py", line 117, in log_wrapper\n'
        "    return func(*args, **kwargs)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2050, in '
        "all_reduce\n"
        "    work = group.allreduce([tensor], opts)\n"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
        "1275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n"
    )
    assert found.id != "log.library_version_bug", found.summary


# the frame of another function of the pipeline engine, cut there, is no tied-gradient reduction
def test_a_traceback_cut_in_another_pipeline_instruction_is_not_the_tied_gradients():
    found = explained(
        INTO_TIED_GRADS.rsplit(
            '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/pipe/engine.py", line 270', 1
        )[0]
        + '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/pipe/engine.py", line 721, in '
        "_exec_backward_pass\n"
        "    torch.autograd.backward(tensors=(outputs,), grad_tensors=(grad_tensors,))\n"
    )
    assert found.id != "log.library_version_bug", found.summary


# torch/nn/modules/sparse.py Embedding.__init__: "Padding_idx must be within num_embeddings", on a line that names
# the vocabulary-parallel shard the embedding was built for (a library's shard given the global padding_idx)
def test_the_padding_refusal_on_a_line_naming_the_vocabulary_shard_is_that_librarys_release():
    found = reads(
        "[rank1]: AssertionError: Padding_idx must be within num_embeddings (VocabParallelEmbedding shard 1 of 2, "
        "tensor parallel)\n",
        "library_version_bug",
        "likely",
    )
    assert "padding_idx" in found.fix and "shard" in found.summary


# the same refusal in a plain nn.Embedding with no shard in sight: a pad id past the vocabulary
PLAIN_PADDING = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/train.py", line 41, in <module>\n'
    "    model = Seq2Seq(len(vocab), 512, padding_idx=tokenizer.pad_token_id)\n"
    '  File "/workspace/model.py", line 18, in __init__\n'
    "    self.embed = nn.Embedding(vocab_size, dim, padding_idx=padding_idx)\n"
    '  File "/usr/lib/python3.11/site-packages/torch/nn/modules/sparse.py", line 143, in __init__\n'
    '    assert padding_idx < self.num_embeddings, "Padding_idx must be within num_embeddings"\n'
    "AssertionError: Padding_idx must be within num_embeddings\n"
)


def test_the_padding_refusal_of_a_plain_embedding_is_a_pad_id_past_the_vocabulary():
    found = reads(PLAIN_PADDING, "vocab_size_mismatch", "likely")
    assert "resize_token_embeddings" in found.fix
    assert "log.library_version_bug" not in found.details.get("alternatives", [])


# a traceback through a vocabulary-parallel embedding's module names the shard's reading beside the vocabulary's
def test_a_padding_refusal_under_a_vocab_parallel_frame_names_the_shard_reading_too():
    found = reads(
        PLAIN_PADDING.replace(
            '"/workspace/model.py", line 18', '"/workspace/layers/vocab_parallel.py", line 18'
        ),
        "vocab_size_mismatch",
        "likely",
    )
    assert "log.library_version_bug" in found.details["alternatives"]


# index_select's refusal of an id past the table is the lookup's, not the padding index's
def test_an_id_past_the_table_is_not_the_padding_refusal():
    found = explained("IndexError: index out of range in self\n")
    assert found.id == "log.embedding_index_range", found.summary

"""The certainty review's fifth part (helper V15, issue 19): recognisers of the data-loading family and of a
script's own mistakes that spoke with certainty on a line their source prints for more than one cause, read
against that source. Each test gives the line as its source prints it, alone or in the traceback that rules the
other reading out (certain), and where the other reading holds (likely, that reading named).

- torch's sampler.py ``RandomSampler.__init__``: "num_samples should be a positive integer value, but got
  num_samples=0" checks ``len(dataset)`` unless the script passed num_samples: an empty dataset, not an option.
- torch's dataloader.py ``__next__`` raising StopIteration past the last batch: a loop running past len(loader),
  or a dataset that found no sample at its path, which ends at the first next().
- torchvision's ``to_tensor`` / ``functional_pil`` type checks name ``<class 'NoneType'>`` where no image reached the
  transform (cv2.imread's None for a path that does not exist): not the transforms' order.
- Arrow's ``concatenate.cc`` "offset overflow while concatenating arrays" is printed for Arrow's own take/filter on
  chunked arrays and datasets' concatenation too (apache/arrow#25822), fixed in later releases.
- Lightning (< 2.3.0) under trainer.predict re-creates any custom batch sampler whatever use_distributed_sampler
  says: the same kind, its fix the release. A DataLoader of a library iterating GPU tensors pins them too.
- autograd's "element 0 of tensors does not require grad" and "Trying to backward through the graph a second
  time" under a trainer's backward: its gradient checkpointing, grad mode or loop, not only the script's.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

EMPTY = "ValueError: num_samples should be a positive integer value, but got num_samples=0\n"


def test_a_random_sampler_over_no_samples_names_an_empty_dataset():
    # the empty dataset leads (data_paths.py), the option passed by the script named beside it (DATA2)
    found = likely_with(EMPTY, "data_path_missing", "log.dataloader_options")
    assert "len(dataset)" in found.fix and "checkpoint" not in found.fix
    # the same check on a sample count other than 0, and BatchSampler's batch_size=0, stay the option's own
    certain(
        "ValueError: num_samples should be a positive integer value, but got num_samples=-1\n",
        "dataloader_options",
    )
    certain(
        "ValueError: batch_size should be a positive integer value, but got batch_size=0\n",
        "dataloader_options",
    )


def test_a_transform_given_none_names_an_image_that_was_never_read():
    for line in (
        "TypeError: pic should be PIL Image or ndarray. Got <class 'NoneType'>\n",
        "TypeError: img should be PIL Image. Got <class 'NoneType'>\n",
    ):
        found = likely_with(line, "transform_order", "log.data_path_missing")
        assert "cv2.imread" in found.summary and "is not None" in found.fix
        assert "already a tensor" not in found.summary
    # a path never opened, or the whole sample: the dataset's code, likely, and not said to be a tensor
    found = explained("TypeError: pic should be PIL Image or ndarray. Got <class 'str'>\n")
    assert found.id == "log.transform_order" and found.details["confidence"] == "likely"
    assert "Image.open" in found.fix and "already a tensor" not in found.summary
    # a tensor or an array is the order of the transforms: certain
    certain("TypeError: pic should be PIL Image or ndarray. Got <class 'torch.Tensor'>\n", "transform_order")
    certain("TypeError: img should be PIL Image. Got <class 'numpy.ndarray'>\n", "transform_order")


def test_an_arrow_offset_overflow_names_the_librarys_release():
    found = likely_with(
        "pyarrow.lib.ArrowInvalid: offset overflow while concatenating arrays\n",
        "arrow_offset_overflow",
        "log.library_version_bug",
    )
    assert "large_string" in found.fix and "pip install -U datasets pyarrow" in found.fix


def _backward(frames: str, message: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 88, in <module>\n'
        "    main()\n"
        + frames
        + '  File "/opt/conda/lib/python3.10/site-packages/torch/_tensor.py", line 487, in '
        "backward\n"
        "    torch.autograd.backward(\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/autograd/__init__.py", line 200, in backward\n'
        "    Variable._execution_engine.run_backward(\n"
        f"RuntimeError: {message}\n"
    )


OWN_LOOP = '  File "/home/ana/project/train.py", line 61, in main\n    loss.backward()\n'
TRAINER = (
    '  File "/opt/conda/lib/python3.10/site-packages/transformers/trainer.py", line 2732, in training_step\n'
    "    self.accelerator.backward(loss)\n"
    '  File "/opt/conda/lib/python3.10/site-packages/accelerate/accelerator.py", line 1905, in backward\n'
    "    loss.backward(**kwargs)\n"
)
NO_GRAD = "element 0 of tensors does not require grad and does not have a grad_fn"
TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you "
    "need to access saved tensors after calling backward."
)


def test_a_loss_without_a_graph_under_a_trainer_names_its_checkpointing():
    certain(_backward(OWN_LOOP, NO_GRAD), "no_grad_in_loss")
    found = likely_with(_backward(TRAINER, NO_GRAD), "no_grad_in_loss", "log.library_version_bug")
    assert "enable_input_require_grads" in found.fix
    # the line alone does not say whose loop called backward
    likely_with(f"RuntimeError: {NO_GRAD}\n", "no_grad_in_loss", "log.library_version_bug")


def test_a_backward_through_a_freed_graph_under_a_trainer_names_the_library():
    found = certain(_backward(OWN_LOOP, TWICE), "backward_graph_freed")
    assert "detach" in found.fix
    likely_with(_backward(TRAINER, TWICE), "backward_graph_freed", "log.library_version_bug")


CANT_INJECT = (
    "TypeError:  Lightning can't inject a (distributed) sampler into your batch sampler, because it doesn't subclass "
    "PyTorch's `BatchSampler`. To mitigate this, either follow the API of `BatchSampler` or set "
    "`Trainer(use_distributed_sampler=False)`. If you choose the latter, you will be responsible for handling the "
    "distributed sampling within your batch sampler.\n"
)


def _lightning(call: str, impl: str, loop: str) -> str:
    site = "/opt/conda/lib/python3.10/site-packages/lightning/pytorch"
    return (
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/run.py", line 40, in <module>\n'
        f"    trainer.{call}(model, datamodule=dm)\n"
        f'  File "{site}/trainer/trainer.py", line 903, in {impl}\n'
        "    results = self._run(model, ckpt_path=ckpt_path)\n"
        f'  File "{site}/loops/{loop}", line 162, in setup_data\n'
        "    dl = _process_dataloader(trainer, trainer_fn, stage, dl)\n"
        f'  File "{site}/utilities/data.py", line 298, in _dataloader_init_kwargs_resolve_sampler\n'
        "    raise TypeError(\n" + CANT_INJECT
    )


def test_lightnings_batch_sampler_refusal_under_predict_names_the_release_not_the_switch():
    # before 2.3.0 the predict loop re-instantiated any custom batch sampler, use_distributed_sampler or not: the
    # kind is the same, certain, and the fix the release
    found = certain(_lightning("predict", "_predict_impl", "prediction_loop.py"), "custom_batch_sampler")
    assert "2.3.0" in found.fix and "does not stop it" in found.fix
    # under fit it is the distributed sampler Lightning injects: certain, the switch named
    found = certain(_lightning("fit", "_fit_impl", "fit_loop.py"), "custom_batch_sampler")
    assert "use_distributed_sampler=False" in found.fix


def _pinning(frames: str) -> str:
    torch = "/opt/conda/lib/python3.10/site-packages/torch/utils/data"
    return (
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 88, in <module>\n'
        "    main()\n" + frames + f'  File "{torch}/dataloader.py", line 630, in __next__\n'
        "    data = self._next_data()\n"
        f'  File "{torch}/dataloader.py", line 676, in _next_data\n'
        "    data = _utils.pin_memory.pin_memory(data, self._pin_memory_device)\n"
        f'  File "{torch}/_utils/pin_memory.py", line 58, in pin_memory\n'
        "    return data.pin_memory(device)\n"
        "RuntimeError: cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned\n"
    )


def test_pinning_gpu_batches_of_a_librarys_loader_names_the_library():
    own = '  File "/home/ana/project/train.py", line 61, in main\n    for batch in loader:\n'
    certain(_pinning(own), "pin_memory_cuda_tensor")
    library = (
        '  File "/opt/conda/lib/python3.10/site-packages/darts/models/forecasting/torch_forecasting_model.py", '
        "line 1201, in fit_from_dataset\n"
        "    self._train(train_loader, val_loader)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/pytorch_lightning/loops/fit_loop.py", line 201, in run\n'
        "    batch = next(data_fetcher)\n"
    )
    found = likely_with(_pinning(library), "pin_memory_cuda_tensor", "log.library_version_bug")
    assert "pin_memory=False" in found.fix


LOADED_FROM_CACHE = (
    "Loading cached processed dataset at /root/.cache/huggingface/datasets/json/default-1/cache-ab12.arrow\n"
)


def test_a_stale_file_beside_a_cache_is_the_cache_only_where_it_is_the_caches_file():
    # most Hugging Face runs print datasets' cache folder; a stale checkpoint is the shared file system's, not it
    found = certain(
        LOADED_FROM_CACHE
        + "OSError: [Errno 116] Stale file handle: '/nfs/project/ckpt/checkpoint-500/optimizer.pt'\n",
        "shared_filesystem_io",
    )
    assert "HF_DATASETS_CACHE" not in found.fix
    certain(
        "compiling Triton kernels\nOSError: [Errno 116] Stale file handle: '/nfs/data/train/shard-0001.tar'\n",
        "shared_filesystem_io",
    )
    # the cache's own file, or no file named beside the cache's words: the cache
    certain(
        LOADED_FROM_CACHE + "OSError: [Errno 116] Stale file handle: "
        "'/root/.cache/huggingface/datasets/json/default-1/cache-ab12.arrow'\n",
        "dataset_cache_shared",
    )
    certain("compiling Triton kernels\nOSError: [Errno 116] Stale file handle\n", "compile_cache_shared")


def test_a_loader_exhausted_at_its_next_names_an_empty_dataset():
    torch = "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py"
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 179, in run_loop\n'
        "    batch, cond = next(data_iter)\n"
        f'  File "{torch}", line 631, in __next__\n'
        "    data = self._next_data()\n"
        f'  File "{torch}", line 674, in _next_data\n'
        "    index = self._next_index()  # may raise StopIteration\n"
        "StopIteration\n"
    )
    found = likely_with(text, "dataloader_exhausted", "log.data_path_missing")
    assert "len(dataset)" in found.fix and "iter(loader)" in found.fix


def test_a_floating_target_refused_by_the_class_index_kernel_names_another_loss():
    # aten's nll_loss dispatch names the target's dtype: Float is class ids stored as floats, or values a
    # classification loss was never meant for (a regression target, 0/1 labels for one output)
    for dtype in ("Float", "Double"):
        found = likely_with(
            f"RuntimeError: \"nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for '{dtype}'\n",
            "loss_target_dtype",
            "log.classification_loss_misused",
        )
        assert "target.long()" in found.fix and "BCEWithLogitsLoss" in found.fix
    # an integer of the wrong width has that one cause: certain
    certain(
        "RuntimeError: \"nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for 'Int'\n",
        "loss_target_dtype",
    )


def test_a_batch_sampler_without_a_sampler_argument_under_predict_is_not_the_release():
    # a BatchSampler subclass whose __init__ takes no `sampler` is refused under predict in every release
    modified = _lightning("predict", "_predict_impl", "prediction_loop.py").replace(
        CANT_INJECT,
        "TypeError: Trying to inject a modified sampler into the batch sampler; however, it seems the class "
        "`BucketSampler` does not have an argument called `sampler.` To mitigate this, expose an argument `sampler` "
        "in the `__init__` method of your custom class.\n",
    )
    found = certain(modified, "custom_batch_sampler")
    assert "2.3.0" not in found.fix and "`BucketSampler`" in found.summary

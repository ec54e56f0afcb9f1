"""Classes of the session 45 samples' train misses read from their sources (helper T71, issue 19).

- Colab's IPython frames written as Markdown links, and an exception quoted above a traceback cut before it;
- Ray Train v2's worker group start timeout (catalog/ray.tsv), ray_resources, likely;
- Lightning re-creating a DataLoader subclass for its DistributedSampler: an argument given twice;
- CUDA tensors unpickled by a process without CUDA as another process's result (cuda_tensor_to_cpu_process).
"""

from __future__ import annotations

from explaining import explained, leads_with, read, template

# Ray's older wording of the same timeout (python/ray/train/v2/_internal/exceptions.py, an earlier revision)
OLD_TIMEOUT = "ray:worker-group-startup-timed-out-possible-causes"


def test_colab_linked_frames_and_the_quoted_exception_read_as_a_library_bug():
    found = read("7826.txt", "library_version_bug", "likely")
    assert "pytorch_tabular" in found.summary and "tab_transformer.py:115" in found.summary, found.summary


def test_a_linked_frame_without_a_quote_names_the_package_frame():
    # the same Colab frames (pytorch-tabular/pytorch_tabular#160), the prose line above them left out
    text = (
        "UnboundLocalError                         Traceback (most recent call last)\n"
        "[<ipython-input-106-cc57dae4e309>](https://localhost:8080/#) in <module>\n"
        "----> 1 tabular_model.fit(train=X_train, test=X_test)\n\n"
        "[/usr/local/lib/python3.8/dist-packages/pytorch_tabular/models/tab_transformer/tab_transformer.py]"
        "(https://localhost:8080/#) in forward(self, x)\n"
        '--> 115         x = self.compute_backbone(dict(categorical=x_cat, continuous=x["continuous"]))\n'
    )
    found = explained(text)
    assert found.id == "log.unrecognised" and "tab_transformer.py:115 in forward" in found.summary, (
        found.summary
    )


def test_a_quote_of_another_type_is_not_joined():
    text = (
        "It fails with: KeyError: 'continuous'\n"
        "UnboundLocalError                         Traceback (most recent call last)\n"
        "[/usr/local/lib/python3.8/dist-packages/pytorch_tabular/models/tab_transformer/tab_transformer.py]"
        "(https://localhost:8080/#) in forward(self, x)\n"
        '--> 115         x = self.compute_backbone(dict(categorical=x_cat, continuous=x["continuous"]))\n'
    )
    assert explained(text).id == "log.unrecognised"


def test_ray_train_worker_group_start_timeout():
    found = read("7919.txt", "ray_resources", "likely")
    assert "log.library_version_bug" in found.details["alternatives"], found.details
    assert "RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S" in found.fix and "{'GPU': 1}" in found.summary


def test_ray_train_older_wording_of_the_timeout():
    text = "ray.train.ControllerError: " + template(
        OLD_TIMEOUT, "30.0", "4", "RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S"
    )
    leads_with(text, "ray_resources", "likely", ["30.0 seconds", "ray status"])


def test_ray_train_report_barrier_timeout_is_not_a_start_timeout():
    text = template(
        "ray:broadcast-operation-timed-out", "1800.00", "[1]", "RAY_TRAIN_REPORT_BARRIER_TIMEOUT_S", "1800"
    )
    assert explained(text).id != "log.ray_resources"


def test_lightning_rebuilding_a_loader_that_sets_collate_fn():
    found = read("7822.txt", "library_option_conflict", "likely")
    assert "replace_sampler_ddp=False" in found.fix and "use_distributed_sampler=False" in found.fix


def test_lightning_rebuilding_a_loader_in_its_frames():
    # Lightning 0.8's trainer/data_loading.py replace_sampler: type(dataloader)(**dl_args)
    text = (
        "Traceback (most recent call last):\n"
        '  File "/env/lib/python3.8/site-packages/pytorch_lightning/trainer/data_loading.py", line 180, in '
        "replace_sampler\n"
        "    dataloader = type(dataloader)(**dl_args)\n"
        '  File "/env/lib/python3.8/site-packages/torch_geometric/data/dataloader.py", line 43, in __init__\n'
        "    super(DataLoader, self).__init__(dataset, batch_size, shuffle, collate_fn=lambda data_list: "
        "Batch.from_data_list(data_list, follow_batch), **kwargs)\n"
        "TypeError: __init__() got multiple values for keyword argument 'collate_fn'\n"
    )
    leads_with(text, "library_option_conflict", "likely", ["collate_fn", "use_distributed_sampler"])


def test_the_duplicate_keyword_without_a_rebuilt_loader_is_not_read_so():
    text = "TypeError: __init__() got multiple values for keyword argument 'collate_fn'\n"
    assert explained(text).id != "log.library_option_conflict"


def test_cuda_tensors_returned_to_the_ray_driver():
    found = read("7922.txt", "cuda_tensor_to_cpu_process", "likely")
    assert ".cpu()" in found.fix and "BackendExecutor" in found.summary


def test_cuda_tensors_deserialized_by_a_ray_actor():
    # ray-project/ray#53465 (an RLlib algorithm actor unpickling a GPU learner's state), its first lines
    prefix = "(PPO(env=car-racing; env-runners=1; learners=1; multi-agent=False) pid=216294) "
    text = "".join(
        prefix + line + "\n"
        for line in (
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
            "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map "
            "your storages to the CPU.",
            "Traceback (most recent call last):",
            '  File "/home/lukaskiss/.local/lib/python3.13/site-packages/ray/_private/serialization.py", line 460, '
            "in deserialize_objects",
            "    obj = self._deserialize_object(data, metadata, object_ref)",
        )
    )
    leads_with(text, "cuda_tensor_to_cpu_process", "likely", ["ray.get", ".cpu()"])


def test_a_checkpoint_loaded_without_map_location_stays_so():
    text = (
        "Traceback (most recent call last):\n"
        '  File "test.py", line 12, in <module>\n'
        '    state = torch.load("model.pth")\n'
        "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
        "If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
        "to map your storages to the CPU.\n"
    )
    assert explained(text).id == "log.checkpoint_device_map"

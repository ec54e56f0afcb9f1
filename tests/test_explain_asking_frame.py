"""Whose code asked for a name the installed package lacks decides whose release it is (kinds/asking_frame.py).

A package's own code asking for its own name (gsplat's backend importing gsplat.csrc, DeepSpeed's runtime reading
its own ZeRO optimizer's attribute) is that release's bug or a half-done install of it: likely
library_version_bug. Another installed package's code asking for it (accelerate calling DeepSpeed's optimizer,
zarrdataset importing zarr 2's Store, dm_control indexing mujoco's MjModel) is two releases that disagree:
dependency_version, as before. The script's own code asking for it, or the script's own ``loss.backward()`` running
DeepSpeed's gradient hook through torch (DeepSpeed#1218, #6995: the engine's backward was bypassed), or an attribute
hook (DeepSpeedEngine.__getattr__) raising for the script's lookup: never the library's bug alone.
"""

from __future__ import annotations

from explaining import explained, lead

SITE = "/opt/conda/lib/python3.10/site-packages"


def _ds_traceback(*frames: tuple[str, str, str], message: str) -> str:
    """A traceback from the project's train.py through ``frames`` (path under site-packages or the project, function,
    source line), raising CPython's AttributeError ``message``."""
    lines = [
        "Traceback (most recent call last):",
        '  File "/home/ana/project/train.py", line 88, in <module>',
        "    main()",
    ]
    for path, function, code in frames:
        lines += [f'  File "{path}", line 120, in {function}', f"    {code}"]
    return "\n".join([*lines, f"AttributeError: {message}", ""])


def test_a_package_importing_its_own_compiled_part_is_that_release_or_its_install():
    # train 1820 (nerfstudio#2685): gsplat's cuda/_backend.py runs `from gsplat import csrc as _C`
    found = lead("1820.txt")
    assert (found.id, found.details["confidence"]) == ("log.library_version_bug", "likely"), found.summary
    assert "gsplat's own code" in found.summary and "compiled part" in found.summary
    assert "log.broken_install" in found.details["alternatives"]
    assert "pip install --force-reinstall --no-deps gsplat" in found.fix


def test_another_packages_code_importing_a_removed_name_stays_a_pairing():
    # train 3125: zarrdataset's _imageloaders.py reads zarr.storage.Store, which zarr 3 removed
    assert lead("3125.txt").id == "log.dependency_version"
    # train 2780: dm_control's index.py asks mujoco's MjModel for a field mujoco 3 renamed
    assert lead("2780.txt").id == "log.dependency_version"


def test_the_scripts_own_import_of_the_same_name_stays_the_scripts_release():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 3, in <module>\n'
        "    from gsplat import csrc\n"
        f"ImportError: cannot import name 'csrc' from 'gsplat' ({SITE}/gsplat/__init__.py)\n"
    )
    assert found.id == "log.dependency_version", found.summary


def test_deepspeeds_own_runtime_reading_its_own_optimizer_leads_with_its_release():
    # CPython's "'{}' object has no attribute '{}'" for DeepSpeed's ZeRO-3 optimizer, asked for inside deepspeed/
    found = explained(
        _ds_traceback(
            (f"{SITE}/transformers/trainer.py", "_inner_training_loop", "self.deepspeed.step()"),
            (f"{SITE}/deepspeed/runtime/engine.py", "step", "self._take_model_step(lr_kwargs)"),
            (f"{SITE}/deepspeed/runtime/engine.py", "_take_model_step", "self.optimizer.step()"),
            (f"{SITE}/deepspeed/runtime/zero/stage3.py", "step", "self._post_step(timer_names)"),
            message="'DeepSpeedZeroOptimizer_Stage3' object has no attribute 'averaged_gradients'",
        )
    )
    assert (found.id, found.details["confidence"]) == ("log.library_version_bug", "likely"), found.summary
    assert "DeepSpeed's own code" in found.summary
    assert "log.dependency_version" in found.details["alternatives"]


def test_accelerate_calling_deepspeeds_optimizer_stays_a_pairing():
    # train 215 / LLaMA-Factory#5400: accelerate's AcceleratedOptimizer.train calls the wrapped optimizer's train()
    found = explained(
        _ds_traceback(
            (f"{SITE}/transformers/trainer.py", "_inner_training_loop", "self.optimizer.train()"),
            (f"{SITE}/accelerate/optimizer.py", "train", "return self.optimizer.train()"),
            message="'DeepSpeedZeroOptimizer_Stage3' object has no attribute 'train'",
        )
    )
    assert found.id == "log.dependency_version", found.summary
    assert "log.library_version_bug" in found.details["alternatives"]
    assert "asked for by accelerate's code" in found.summary and "pip install -U accelerate" in found.fix


def test_a_pairing_names_the_releases_the_log_prints():
    # transformers' env report (as `transformers-cli env` prints it) above the same traceback
    found = explained(
        "- `transformers` version: 4.44.2\n- Accelerate version: 0.34.0\n- DeepSpeed version: 0.15.1\n\n"
        + _ds_traceback(
            (f"{SITE}/transformers/trainer.py", "_inner_training_loop", "self.optimizer.train()"),
            (f"{SITE}/accelerate/optimizer.py", "train", "return self.optimizer.train()"),
            message="'DeepSpeedZeroOptimizer_Stage3' object has no attribute 'train'",
        )
    )
    assert "(accelerate 0.34.0, deepspeed 0.15.1)" in found.summary, found.summary


def test_the_scripts_own_backward_through_deepspeeds_hook_is_not_deepspeeds_bug():
    # DeepSpeed#1218 (as posted, 2023-03-08): torch.autograd.backward(loss) in the script, not engine.backward(loss)
    text = (
        "Traceback (most recent call last):\n"
        '  File "/root/QuickDraw/train.py", line 244, in <module>\n'
        "    train(opt)\n"
        '  File "/root/QuickDraw/train.py", line 165, in train\n'
        "    torch.autograd.backward(loss)\n"
        '  File "/project/lib/python3.9/site-packages/torch/autograd/__init__.py", line 197, in backward\n'
        "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
        '  File "/project/lib/python3.9/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 857, in '
        "reduce_partition_and_remove_grads\n"
        "    self.reduce_ready_partitions_and_remove_grads(param, i)\n"
        '  File "/project/lib/python3.9/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 1349, in '
        "reduce_ready_partitions_and_remove_grads\n"
        "    self.reduce_independent_p_g_buckets_and_remove_grads(param, i)\n"
        '  File "/project/lib/python3.9/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 902, in '
        "reduce_independent_p_g_buckets_and_remove_grads\n"
        "    new_grad_tensor = self.ipg_buffer[self.ipg_index].narrow(\n"
        "AttributeError: 'DeepSpeedZeroOptimizer' object has no attribute 'ipg_index'\n"
    )
    assert explained(text).id != "log.library_version_bug"


def test_an_attribute_hook_raising_for_the_scripts_lookup_is_the_scripts():
    # deepspeed/runtime/engine.py DeepSpeedEngine.__getattr__ raises for the name the script asked its engine for
    found = explained(
        _ds_traceback(
            ("/home/ana/project/train.py", "main", "model_engine.generate_step(batch)"),
            (f"{SITE}/deepspeed/runtime/engine.py", "__getattr__", "raise AttributeError("),
            message="'DeepSpeedEngine' object has no attribute 'generate_step'",
        )
    )
    assert found.id != "log.library_version_bug", found.summary


def test_accelerates_plugin_read_by_accelerate_or_by_another_package():
    # train 196: accelerate's own state reads its DeepSpeedPlugin's field: accelerate's release
    assert lead("196.txt").id == "log.library_version_bug"
    # the same dataclass read by transformers' code: transformers and accelerate at releases that disagree
    found = explained(
        _ds_traceback(
            (f"{SITE}/transformers/training_args.py", "__post_init__", "self.hf_deepspeed_config.zero3 = x"),
            (
                f"{SITE}/transformers/integrations/deepspeed.py",
                "is_zero3",
                "return self.deepspeed_plugin.zero3",
            ),
            message="'DeepSpeedPlugin' object has no attribute 'zero3'",
        )
    )
    assert found.id == "log.dependency_version", found.summary
    assert "transformers reads DeepSpeedPlugin.zero3" in found.summary

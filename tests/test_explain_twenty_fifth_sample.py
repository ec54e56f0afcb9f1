"""The knowledge the twenty-fifth sample by symptom (corpus files 1067-1076, train half) asked for, each anchored on
the message its source prints: CPython's argparse refusing torch.distributed.launch's --nproc_per_node (an int up to
torch 1.9, ``torch/distributed/launch.py``), Ray's autoscaler finding no node for a request
(``python/ray/autoscaler/_private/autoscaler.py``; the v2 autoscaler's plural form only likely), and ATen's dispatch
refusing BFloat16 with the bf16 reading in its fix. Beside each, a line that must stay another kind."""

from __future__ import annotations

from explaining import explained, lead, template


def test_an_empty_nproc_per_node_handed_to_torch_distributed_launch():
    # 1070.txt (open-mmlab/mmdetection#6664): tools/dist_train.sh passed an empty GPU count
    found = lead("1070.txt")
    assert found.id == "log.launch_command" and found.details["confidence"] == "certain"
    assert "empty --nproc_per_node" in found.summary and "arguments it expects" in found.fix
    line = template("system:argparse-nproc-per-node-invalid-int", "launch.py", "gpus")
    found = explained(line + "\n")
    assert found.id == "log.launch_command" and "--nproc_per_node='gpus', not a whole number" in found.summary


def test_another_options_invalid_int_is_not_the_launchers():
    # the same argparse wording on a script's own option is not torch.distributed.launch's GPU count
    found = explained("train.py: error: argument --batch_size: invalid int value: '32x'\n")
    assert "nproc_per_node" not in found.summary


def test_ray_finds_no_node_for_a_gpu_request():
    # 1075.txt (real-stanford/scalingup#6): ray.init started without the GPU; ray.init(num_gpus=1) fixed it
    found = lead("1075.txt")
    assert found.id == "log.ray_resources" and found.details["confidence"] == "certain"
    assert (
        "{'CPU': 1.0, 'GPU': 1.0}" in found.summary and "num_gpus" in found.fix and "ray status" in found.fix
    )
    # the v2 autoscaler also counts a demand larger than the cluster's maximum size, which can wait: likely
    v2 = explained(
        "(autoscaler +5s) No available node types can fulfill resource requests {'CPU': 1.0}*14. Add suitable "
        "node types to this cluster to resolve this issue.\n"
    )
    assert v2.id == "log.ray_resources" and v2.details["confidence"] == "likely"
    assert "wait their turn" in v2.summary and "asks for a GPU" not in v2.fix


def test_rays_warning_about_a_cluster_full_of_actors_is_not_an_infeasible_request():
    line = (
        "Warning: The following resource request cannot be scheduled right now: {'GPU': 1.0}. This is likely due "
        "to all cluster resources being claimed by actors. Consider creating fewer actors or adding more nodes to "
        "this Ray cluster.\n"
    )
    assert explained(line).id != "log.ray_resources"


def test_an_op_without_a_bfloat16_kernel_names_the_bf16_reading():
    # 1074.txt (huggingface/diffusers#771): torch 1.12's nearest upsampling had no BFloat16 kernel
    found = lead("1074.txt")
    assert found.id == "log.half_unsupported_op" and "bf16 kernels came to torch's operators" in found.fix
    # Half keeps its fix without the bf16 sentence
    half = explained("RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'\n")
    assert half.id == "log.half_unsupported_op" and "bf16" not in half.fix

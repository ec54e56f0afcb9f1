"""The keys each section of DeepSpeed's config takes, to name the one a refused key was meant to be.

DeepSpeed's config sections are pydantic models that forbid keys they do not know (``extra="forbid"``): a misspelt
key is pydantic's "Extra inputs are not permitted" under the key's name (``overlap_com``; inside a subsection
``offload_optimizer.devise``), and nothing says which key was meant. The table is the section's fields and their
aliases in DeepSpeed 0.19.8 (``model_fields`` of each ``DeepSpeedConfigModel`` subclass, read from the installed
release); a key close to one of them is named, as "did you mean". The top level of the config is a plain dict that
DeepSpeed reads key by key: a key misspelt there is ignored without a word, so it never reaches this table.
"""

from __future__ import annotations

import difflib

FAMILY = "a library refusing its settings"

RELEASE = "0.19.8"

# the config's section (as the JSON names it) -> (its pydantic model, the keys it takes in RELEASE)
SECTIONS: dict[str, tuple[str, list[str]]] = {
    "zero_optimization": (
        "DeepSpeedZeroConfig",
        (
            "allgather_bucket_size allgather_partitions allgather_sequential compute_grad_norm "
            "contiguous_gradients cpu_offload cpu_offload_param cpu_offload_use_pin_memory elastic_checkpoint "
            "enable_sanity_checks gather_16bit_weights_on_model_save ignore_unused_parameters leaf_module "
            "legacy_stage1 load_from_fp32_weights log_trace_cache_warnings max_live_parameters max_reuse_distance "
            "memory_efficient_linear model_persistence_threshold module_granularity_threshold offload_optimizer "
            "offload_param overlap_comm override_module_apply param_persistence_threshold parameter_alignment "
            "pipeline_loading_checkpoint prefetch_bucket_size reduce_bucket_size reduce_scatter "
            "round_robin_gradients save_muon_momentum_buffer_in_memory stage stage3_allgather_sequential "
            "stage3_gather_16bit_weights_on_model_save stage3_gather_fp16_weights_on_model_save "
            "stage3_max_live_parameters stage3_max_reuse_distance stage3_model_persistence_threshold "
            "stage3_module_granularity_threshold stage3_param_persistence_threshold stage3_prefetch_bucket_size "
            "stage3_use_all_reduce_for_fetch_params sub_group_size use_all_reduce_for_fetch_params "
            "use_multi_rank_bucket_allreduce zenflow zero_hpz_partition_size zero_quantized_gradients "
            "zero_quantized_nontrainable_weights zero_quantized_weights"
        ).split(),
    ),
    "offload_optimizer": (
        "DeepSpeedZeroOffloadOptimizerConfig",
        (
            "buffer_count cpuadam_cores_perc device fast_init nvme_path pin_memory pipeline_read pipeline_write "
            "ratio super_offload"
        ).split(),
    ),
    "offload_param": (
        "DeepSpeedZeroOffloadParamConfig",
        ("buffer_count buffer_size device max_in_cpu nvme_path pin_memory").split(),
    ),
    "zenflow": (
        "ZenFlowConfig",
        (
            "auto_ratio full_warm_up_rounds offload overlap_step pt_reserved_cores_perc select_interval "
            "select_strategy steps_per_epoch topk_ratio update_interval"
        ).split(),
    ),
    "leaf_module": (
        "DeepSpeedZeroLeafModuleConfig",
        ("classes name_suffixes names").split(),
    ),
    "fp16": (
        "DeepSpeedFP16Config",
        (
            "auto_cast consecutive_hysteresis enabled fp16_master_weights_and_grads hysteresis "
            "initial_scale_power loss_scale loss_scale_window min_loss_scale"
        ).split(),
    ),
    "bf16": (
        "DeepSpeedBF16Config",
        (
            "bf16_master_weights_and_grads bf16_optimizer_states check_grad_overflow enabled "
            "immediate_grad_update"
        ).split(),
    ),
    "comms_logger": (
        "CommsLoggerConfig",
        ("debug enabled prof_all prof_ops verbose").split(),
    ),
    "tensorboard": (
        "TensorBoardConfig",
        ("enabled job_name output_path").split(),
    ),
    "wandb": (
        "WandbConfig",
        ("enabled group project team").split(),
    ),
    "csv_monitor": (
        "CSVConfig",
        ("enabled job_name output_path").split(),
    ),
    "comet": (
        "CometConfig",
        (
            "api_key enabled experiment_key experiment_name mode online project samples_log_interval workspace"
        ).split(),
    ),
    "compile": (
        "CompileConfig",
        (
            "autoep_non_moe debug_log deepcompile double_buffer free_activation free_activation_threshold "
            "keep_all_input_tensors keep_int_input_tensors offload_activation offload_activation_pin_memory "
            "offload_opt_states offload_parameters passes symmetric_memory sync_after_allgather sync_after_reduce "
            "sync_before_allgather sync_before_reduce"
        ).split(),
    ),
    "hybrid_engine": (
        "HybridEngineConfig",
        (
            "enable_cuda_graph enabled inference_tp_size max_out_tokens pin_parameters release_inference_cache "
            "tp_gather_partition_size"
        ).split(),
    ),
}
# the subsections of zero_optimization, by their full name in the JSON
_IN_ZERO = {
    name: f"zero_optimization.{name}"
    for name in ("offload_optimizer", "offload_param", "zenflow", "leaf_module")
}
_BY_MODEL = {model: (section, keys) for section, (model, keys) in SECTIONS.items()}


def section_of(model: str, field: str) -> tuple[str, list[str]] | None:
    """(the section's name in the JSON, its keys) for a field refused by ``model`` (a nested field, as pydantic
    writes it, names its subsection first); None for a model or subsection the table does not have.

    >>> section_of("DeepSpeedZeroConfig", "offload_optimizer.devise")[0]
    'zero_optimization.offload_optimizer'
    """
    if model not in _BY_MODEL:
        return None
    section, keys = _BY_MODEL[model]
    parents = field.split(".")[:-1]
    for parent in parents:
        if parent not in SECTIONS:
            return None
        section, keys = f"{section}.{parent}", SECTIONS[parent][1]
    return section, keys


def sections_with(key: str) -> list[str]:
    """The sections (their names in the JSON) that take ``key`` in RELEASE, where only a few do: a key most
    sections take ("enabled") says nothing of where it belongs.

    >>> sections_with("fast_init")
    ['zero_optimization.offload_optimizer']
    """
    found = [_IN_ZERO.get(section, section) for section, (_model, keys) in SECTIONS.items() if key in keys]
    return found if len(found) <= 2 else []


def meant(key: str, keys: list[str]) -> str | None:
    """The key of ``keys`` that ``key`` most likely misspells, or None when none is close.

    >>> meant("overlap_com", ["overlap_comm", "stage"])
    'overlap_comm'
    """
    close = difflib.get_close_matches(key, keys, n=1, cutoff=0.8)
    return close[0] if close else None

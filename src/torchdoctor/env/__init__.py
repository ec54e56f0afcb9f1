"""``torchdoctor env``: CUDA toolkits, host compiler, GPU architecture, DeepSpeed build, driver and NCCL.

One module per concern (`toolkits`, `compiler`, `arch`, `deepspeed`, `driver`); the ``check_*`` functions
that `torchdoctor check` and `torchdoctor env` run live in `checks`.
"""

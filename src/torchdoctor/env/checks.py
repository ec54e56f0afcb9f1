"""``env.*`` checks: CUDA toolkits, host compiler, GPU architecture, DeepSpeed, driver."""

AREA = "env"

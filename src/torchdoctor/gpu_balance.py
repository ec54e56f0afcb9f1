"""``gpu.*`` checks: mixed GPUs in one machine."""

AREA = "gpu"

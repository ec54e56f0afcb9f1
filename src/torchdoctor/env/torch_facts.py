"""What the installed torch was built for and which GPUs it sees, gathered once so checks can take it
as an argument (tests pass their own)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TorchFacts:
    """Facts about a torch build: version, CUDA/ROCm version, kernel architectures, visible GPUs, NCCL."""

    version: str
    cuda: str | None = None  # torch.version.cuda, None for CPU and ROCm builds
    hip: str | None = None
    arch_list: tuple[str, ...] = ()  # torch.cuda.get_arch_list(): ("sm_80", "sm_90", "compute_90")
    gpus: tuple[tuple[str, str], ...] = field(default=())  # (name, "8.6") per visible GPU
    nccl: str | None = None  # "2.21.5"

    @property
    def build(self) -> str:
        from torchdoctor.system import torch_build

        return torch_build(self.version, self.cuda, self.hip)


def from_torch() -> TorchFacts:
    """The facts of the torch this process imports; when ``import torch`` fails here, what its
    ``torch/version.py`` says (no kernel list, no GPU: those need torch running)."""
    from torchdoctor.torch_import import import_torch

    if import_torch() is not None:
        return _from_version_file()
    import torch

    cuda, hip = torch.version.cuda, getattr(torch.version, "hip", None)
    arch_list, gpus, nccl = (), (), None
    if cuda:
        arch_list = tuple(torch.cuda.get_arch_list())
        if torch.cuda.is_available():
            gpus = tuple(
                (torch.cuda.get_device_name(i), "{}.{}".format(*torch.cuda.get_device_capability(i)))
                for i in range(torch.cuda.device_count())
            )
        try:
            version = torch.cuda.nccl.version()
            nccl = ".".join(map(str, version)) if isinstance(version, tuple) else str(version)
        except Exception:  # noqa: BLE001 - torch built without NCCL (USE_NCCL=0) or its library failed to load
            nccl = None
    return TorchFacts(torch.__version__, cuda, hip, arch_list, gpus, nccl)


def _from_version_file() -> TorchFacts:
    """Version, CUDA and ROCm from the installed ``torch/version.py``, read without running it."""
    import ast
    import importlib.metadata

    values: dict[str, object] = {}
    try:
        path = importlib.metadata.distribution("torch").locate_file("torch/version.py")
        tree = ast.parse(path.read_text())
    except (importlib.metadata.PackageNotFoundError, OSError, SyntaxError, ValueError):
        tree = ast.Module(body=[], type_ignores=[])
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and isinstance(getattr(node, "value", None), ast.Constant):
            values[target.id] = node.value.value
    version = values.get("__version__")
    cuda, hip = values.get("cuda"), values.get("hip")
    return TorchFacts(
        str(version) if version else "unknown (import torch fails)",
        cuda if isinstance(cuda, str) else None,
        hip if isinstance(hip, str) else None,
    )

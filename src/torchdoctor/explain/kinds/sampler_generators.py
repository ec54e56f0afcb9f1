"""A random generator on another device than the tensor it draws: a sampler's CPU generator under a CUDA default.

ATen's ``check_generator`` (``aten/src/ATen/core/Generator.h``, torch 1.x-2.13) refuses a generator whose device
type differs from the op's: "Expected a 'cuda' device type for generator but found 'cpu'". In a training run it
comes most often from the DataLoader's sampler: ``RandomSampler`` (and ``DistributedSampler``'s shuffle) draw the
order with ``torch.randperm(n, generator=...)`` on a CPU generator, and a script that made CUDA the default device
(``torch.set_default_tensor_type('torch.cuda.FloatTensor')``, ``torch.set_default_device('cuda')``) makes randperm
run on the GPU. The reverse ("Expected a 'cpu' ... but found 'cuda'") is a CUDA generator handed to an op that
runs on the CPU (``DataLoader(generator=torch.Generator('cuda'))``, whose sampler draws on the CPU). Either way the
message says what is wrong; where the traceback shows no sampler frame the op is the script's own (a
``torch.randn(..., generator=g)`` with ``g`` on the other device), which the fix names too. Likely until a real log
shows it (`Recogniser.seen`).
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _generator(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    wanted, found = first(hits, "op_device", "cuda"), first(hits, "generator_device", "cpu")
    summary = (
        f"a random generator on '{found}' was handed to an op running on '{wanted}' (the DataLoader's sampler "
        "draws its order with torch.randperm on its generator)" + on_ranks(hits)
    )
    if wanted != "cpu":
        fix = (
            f"The script made '{wanted}' the default device (torch.set_default_tensor_type("
            "'torch.cuda.FloatTensor') or torch.set_default_device('cuda')), so RandomSampler's and "
            "DistributedSampler's torch.randperm runs there while their generator stays on the CPU. Remove that "
            "default and move the model and each batch with .to(device); or, to keep it, give the DataLoader a "
            f"generator on that device: DataLoader(..., generator=torch.Generator(device='{wanted}')). If the "
            "traceback ends in the script's own code rather than torch/utils/data/sampler.py, create that "
            f"generator on the tensor's device: torch.Generator(device='{wanted}')."
        )
    else:
        fix = (
            f"A generator created on '{found}' was given to an op that runs on the CPU: the DataLoader's sampler "
            "draws its order on the CPU, so DataLoader(..., generator=...) takes a CPU generator "
            "(torch.Generator(), seeded with manual_seed); for the script's own call, create the generator on the "
            "device of the tensor it fills, or pass device= to the op."
        )
    return summary, fix


SAMPLER_GENERATOR_DEVICE = Recogniser(
    kind="sampler_generator_device",
    title="a random generator on another device than its op (a CUDA default device under the sampler)",
    templates=("aten:expected-device-type-for-generator",),
    anchors=("device type for generator but found",),
    match=R(
        r"Expected an? '(?P<op_device>\w{2,10})' device type for generator but found '(?P<generator_device>\w{2,10})'"
    ),
    describe=_generator,
)

RECOGNISERS = (SAMPLER_GENERATOR_DEVICE,)

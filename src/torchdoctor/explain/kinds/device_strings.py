"""A device string torch cannot read: a device type it does not know, often "None" from a machine without GPUs.

c10/core/Device.cpp parses ``torch.device("<type>:<index>")`` and refuses a type it does not know with "Expected
one of cpu, cuda, ... device type at start of device string: <string>". The string ``None`` (``"None:0"``) is a
value formatted into the string that was None: most often ``torch.accelerator.current_accelerator()``, which is
None under a torch built without an accelerator (the CPU wheel) (pytorch/examples' minGPT-ddp and DDP tutorials build
``torch.device(f"{acc}:{rank}")`` from it), or a config or environment value left unset. The same None given to
``torch.device`` itself (pytorch/examples' distributed/ddp/example.py hands it to
``get_default_backend_for_device``) fails in torch's argument parser: "device() received an invalid combination of
arguments - got (NoneType)". ``gpu`` is the name people use for what torch calls ``cuda``.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "DDP, FSDP and where tensors are"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _device_string(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    given_none = bool(first(hits, "device_none"))
    text = "None" if given_none else first(hits, "device_string", "?")
    kind = text.split(":", 1)[0]
    if kind == "None":
        what = (
            "torch.device was given None"
            if given_none
            else "a device string whose type is 'None': the value formatted into it was None"
        )
        became = (
            "torch.device(acc) is torch.device(None)" if given_none else "f\"{acc}:{rank}\" becomes 'None:0'"
        )
        return (
            f"{what}, as torch.accelerator.current_accelerator() is under a torch built without an accelerator (the "
            "CPU wheel), or a config or environment value that was unset" + on_ranks(hits),
            "torch.accelerator.current_accelerator() returns None under a torch built without CUDA or another "
            f"accelerator (its CPU-only wheel), and {became}. Run on the GPUs the script was written for with a "
            'CUDA build of torch (check: python -c "import torch; print(torch.version.cuda, '
            'torch.accelerator.is_available())"), or let it fall back to the CPU:\n'
            "    acc = torch.accelerator.current_accelerator(check_available=True)\n"
            "    device = torch.device(acc.type, rank) if acc is not None else torch.device('cpu')\n"
            "and on the CPU use init_process_group(backend='gloo'), DDP(model) without device_ids, and no "
            "torch.accelerator.set_device_index(rank).",
        )
    if kind.lower() == "gpu":
        return (
            f"'{text}' is not a device torch knows: torch calls a GPU 'cuda'" + on_ranks(hits),
            f"Write torch.device('cuda', index) or 'cuda:0' instead of '{text}' (and 'cpu' for the processor); a "
            "config's device option takes the same names (cuda, cuda:0, cpu, mps).",
        )
    return (
        f"torch cannot read the device string '{text}': '{kind}' is not a device type" + on_ranks(hits),
        "A device string is a type and an optional index: 'cuda', 'cuda:0', 'cpu', 'mps', 'xpu:1', as "
        f"the message lists them. '{text}' came from the script's own code or its config: print the value it was "
        "built from; a number alone is torch.device(0) or torch.device('cuda', 0), not '0' in a string.",
    )


DEVICE_STRING = Recogniser(
    # c10/core/Device.cpp parse_type: TORCH_CHECK(false, "Expected one of ", ..., " device type at start of device
    # string: ", device_string)
    kind="device_string",
    title="a device string torch cannot read",
    anchors=(
        "device type at start of device string: ",
        "device() received an invalid combination of arguments",
    ),
    templates=(
        "aten:device-type-at-start-of-device-string",
        "torch_native:device-invalid-combination-of-arguments",
    ),
    # torch.device(None) (python_arg_parser.cpp): the None itself, e.g. given to get_default_backend_for_device
    match=R(
        r"device type at start of device string: (?P<device_string>[^\s'\"]{1,80})|"
        r"(?<![\w.])(?P<device_none>device\(\) received an invalid combination of arguments - got \(NoneType\))"
    ),
    describe=_device_string,
)

RECOGNISERS = (DEVICE_STRING,)

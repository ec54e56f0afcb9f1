"""An ``nn.Module`` subclass written in a way torch refuses.

No ``forward``, attributes set before ``super().__init__()``, or a value of the wrong type put where a parameter, a
submodule or a buffer is.

The messages are torch's own (``torch/nn/modules/module.py``): ``_forward_unimplemented`` (the ``forward`` a class
inherits when it defines none), ``__setattr__``, ``register_parameter`` and ``register_buffer``. Each names its own
cause. The class is the script's in nearly every case: certain when the traceback shows the script's own code
reaching torch's Module; a library's frames, or a traceback cut short (no torch frame), leave it likely,
with a library's release named.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import (
    Context,
    Hit,
    Pattern,
    Recogniser,
    library_call,
    merged,
    on_ranks,
)

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# containers that hold modules but have no forward of their own: calling one is the usual "missing forward"
_CONTAINERS = ("ModuleList", "ModuleDict", "ParameterList", "ParameterDict")


def _no_forward(name: str) -> tuple[str, str]:
    if name in _CONTAINERS:
        return (
            f"an nn.{name} was called like a layer: it holds modules but has no forward of its own",
            f"Call the modules inside it, not the {name}: for layer in self.layers: x = layer(x) (a ModuleDict: "
            "self.heads[name](x)); or build it as nn.Sequential(*layers) to call it as one module.",
        )
    return (
        f"the module {name} has no forward method (torch calls forward when the module is called)",
        f"Define forward(self, ...) in class {name}, spelled exactly so and indented inside the class (a misspelt "
        "'foward' / 'forword', or a def at the wrong indentation, leaves the class without one); a base class meant "
        "to be subclassed is not called itself.",
    )


_SLOT_FIX = {
    "parameter": "an nn.Parameter or None goes there: wrap the tensor (self.{name} = nn.Parameter(t)); to change "
    "the values of the existing parameter, copy into it (with torch.no_grad(): self.{name}.copy_(t)); a weight "
    "computed from others (tying, a transpose) is computed in forward(), or the parameter is deleted first "
    "(del self.{name}) to hold a plain tensor.",
    "child module": "an nn.Module or None goes there: assign a module (nn.Identity() to remove a layer), or keep "
    "the other value under another attribute name.",
    "buffer": "a tensor or None goes there: convert the value first (self.{name} = torch.as_tensor(v)), or keep a "
    "Python value under another attribute name.",
}


def _module_definition(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if "no_forward" in facts:
        summary, fix = _no_forward(facts["no_forward"])
        return summary + on_ranks(hits), fix
    if "before_init" in facts:
        return (
            f"a module's __init__ assigned a {facts['before_init']} before calling super().__init__()"
            + on_ranks(hits),
            "Call super().__init__() as the first line of the class's __init__ (before any self.x = ... of a "
            "layer, a parameter or a buffer); nn.Module.__init__ creates the registries those assignments need.",
        )
    if "non_leaf" in facts:
        name = facts["non_leaf"]
        return (
            f"a tensor computed from others was assigned to the parameter '{name}'" + on_ranks(hits),
            f"Parameters are leaves created explicitly: make '{name}' nn.Parameter(t.detach().clone()) if it is "
            "trained on its own, or compute it from the others in forward() (not in __init__ or a hook).",
        )
    slot = facts.get("slot", "parameter")
    name = facts.get("slot_name", "x")
    return (
        f"a {facts.get('assigned_type', 'value')} was assigned to the {slot} '{name}' of a module"
        + on_ranks(hits),
        f"'{name}' is registered as a {slot}, and only "
        + _SLOT_FIX.get(slot, _SLOT_FIX["parameter"]).format(name=name),
    )


def _script_class(hits: list[Hit], ctx: Context) -> bool:
    """Certain when a hit's traceback shows the script's own frame and, below it, torch's frames only."""
    return any(set(h.facts.get("frame_packages", ())) == {"torch"} for h in hits)


MODULE_DEFINITION = Recogniser(
    kind="module_definition",
    title="an nn.Module subclass torch refuses (no forward, attributes before super().__init__())",
    templates=(
        "torch:module-is-missing-the-required-forward",  # module.py _forward_unimplemented
        # module.py __setattr__ / register_parameter / register_buffer before nn.Module.__init__ ran
        "torch:cannot-assign-module-before-module-init",
        "torch:cannot-assign-parameter-before-module-init",
        "torch:cannot-assign-parameters-before-module-init",
        "torch:cannot-assign-buffer-before-module-init",
        # module.py __setattr__ / register_*: a value of another type where a parameter, module or buffer is
        "torch:cannot-assign-as-parameter-torch-nn",
        "torch:cannot-assign-object-to-parameter-torch",
        "torch:cannot-assign-as-child-module-torch",
        "torch:cannot-assign-as-buffer-torch-nn",
        "torch:cannot-assign-object-to-buffer-torch",
        "torch:cannot-assign-non-leaf-tensor-to",
    ),
    anchors=(
        '] is missing the required "forward" function',
        "before Module.__init__() call",
        "(torch.nn.Parameter or None expected)",
        "(torch.nn.Parameter or None required)",
        "(torch.nn.Module or None expected)",
        "(torch.nn.Buffer, torch.Tensor or None expected)",
        "(torch Tensor or None required)",
        "Cannot assign non-leaf Tensor to parameter '",
    ),
    facts=(
        R(r'Module \[(?P<no_forward>\w{1,100})\] is missing the required "forward" function'),
        R(r"cannot assign (?P<before_init>module|parameters?|buffer) before Module\.__init__\(\) call"),
        R(
            r"cannot assign '(?P<assigned_type>[^'\n]{1,120})'(?: object)? (?:as|to) (?P<slot>parameter|child "
            r"module|buffer) '(?P<slot_name>[^'\n]{1,100})'"
        ),
        R(r"Cannot assign non-leaf Tensor to parameter '(?P<non_leaf>[^'\n]{1,100})'"),
    ),
    # raised in torch's Module for whichever class it is: the script's (certain when its traceback goes from the
    # script's own frame straight into torch's Module), or a library's class that a release broke; a traceback cut
    # short (no torch frame) cannot tell a package's file shown by a relative path from the script's
    confirm=_script_class,
    also=(
        library_call(
            "a library's module class that the installed release of torch (or of the library) no longer fits",
            "install the release of the library made for this torch (its requirements pin it), or update it.",
        ),
    ),
    describe=_module_definition,
)

RECOGNISERS = (MODULE_DEFINITION,)

"""A PEFT adapter (LoRA and the others) whose ``target_modules`` match no layer of the model.

peft's ``BaseTuner.inject_adapter`` (``peft/tuners/tuners_utils.py``, run by ``get_peft_model``) raises "Target
modules {...} not found in the base model. Please check the target modules and try again." when none of the model's
module names matches the names given and none was excluded: the names are another architecture's (``q_proj`` /
``v_proj`` are Llama's; GPT-2 has ``c_attn``, Falcon and GPT-NeoX ``query_key_value``, BERT ``query`` / ``value``).
One cause, certain; but for ``target_modules='all-linear'``, which a peft before 0.8 takes for a module name
(``dependency_version``).
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, first, on_ranks

FAMILY = "a library refusing its settings"


def _targets(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    names = first(hits, "target_modules", "")
    return (
        "the PEFT adapter's target_modules name no layer of this model"
        + (f": {names}" if names else "")
        + on_ranks(hits),
        "target_modules are matched against the model's own module names, which differ by architecture (Llama / "
        "Mistral / Qwen: q_proj, k_proj, v_proj, o_proj; GPT-2: c_attn, c_proj; Falcon, GPT-NeoX: "
        "query_key_value; BERT: query, value). List them with print({n.split('.')[-1] for n, m in "
        "model.named_modules() if isinstance(m, torch.nn.Linear)}) and put those in LoraConfig(target_modules=...), "
        "or use the shorthand target_modules='all-linear' (every linear layer but the output head).",
    )


PEFT_TARGET_MODULES = Recogniser(
    kind="peft_target_modules",
    title="PEFT target_modules that match no layer",
    anchors=("not found in the base model. Please check the target modules",),
    templates=(
        "third_party:peft-target-modules-of-another-model",
    ),  # peft/tuners/tuners_utils.py inject_adapter
    facts=(re.compile(r"Target modules (?P<target_modules>[^\n]{1,300}?) not found in the base model"),),
    # 'all-linear' not found is a peft before 0.8, which did not know the shorthand (dependency_version's reading)
    reject=re.compile(r"Target modules all-linear not found"),
    describe=_targets,
)

RECOGNISERS = (PEFT_TARGET_MODULES,)

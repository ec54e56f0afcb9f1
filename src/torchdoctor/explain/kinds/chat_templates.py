"""A tokenizer or processor without a chat template, asked to apply one to conversational data.

transformers' ``tokenization_utils_base.py`` (``get_chat_template``, behind ``apply_chat_template``) raises
ValueError "Cannot use chat template functions because tokenizer.chat_template is not set and no template argument
was passed!" ("Cannot use apply_chat_template() because tokenizer.chat_template is not set ..." in the releases that
first dropped the fallback) when the tokenizer loaded has no ``chat_template`` and the call passes none; a
multimodal ``processing_utils.py`` raises "Cannot use apply_chat_template because this processor does not have a
chat template." Earlier releases fell back to a default template of the tokenizer's class, with a warning ("No chat
template is set for this tokenizer, falling back to a default class-level template"), and the fallback was removed
in mid-2024: a script that ran on a base model (Llama-3-8B, Falcon, Phi-2) then stops. TRL's SFTTrainer, and the
trainers built on it, apply the template to every conversational dataset ("messages" columns) as they prepare it;
OpenRLHF's ``--apply_chat_template`` and serving stacks do the same. The message is printed for that alone:
certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TOKENIZER = "because tokenizer.chat_template is not set"
PROCESSOR = "because this processor does not have a chat template"


def _missing(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    processor = any("processor_template" in h.facts for h in hits)
    holder = "processor" if processor else "tokenizer"
    return (
        f"the {holder} has no chat template (a base model's ships none), and the code or the trainer preparing "
        "a conversational dataset asked it to apply one" + on_ranks(hits),
        "Use the model's instruct or chat variant (its tokenizer has the template: Llama-3-8B-Instruct rather than "
        "Llama-3-8B), or give the tokenizer one before training: tokenizer.chat_template = AutoTokenizer."
        "from_pretrained('<the instruct model>').chat_template (or a Jinja template string of your own; "
        "processor.chat_template for a processor), or pass chat_template= to apply_chat_template. With TRL's "
        "SFTTrainer, data in a plain 'text' field is used as it is, with no template applied; LLaMA-Factory and "
        "similar tools take the template by name (--template).",
    )


CHAT_TEMPLATE_MISSING = Recogniser(
    kind="chat_template_missing",
    templates=(
        "third_party:transformers-chat-template-not-set",
        "third_party:transformers-processor-no-chat-template",
    ),
    title="a tokenizer without a chat template asked to apply one",
    anchors=(TOKENIZER, PROCESSOR),
    match=R(
        r"Cannot use (?:chat template functions|apply_chat_template\(\)) because tokenizer\.chat_template is not "
        r"set|(?P<processor_template>Cannot use apply_chat_template because this processor does not have a chat "
        r"template)"
    ),
    describe=_missing,
)

RECOGNISERS = (CHAT_TEMPLATE_MISSING,)

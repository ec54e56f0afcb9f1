"""A vision-language model whose image (or video) placeholder tokens and the vision tower's features differ in number.

transformers' Qwen2-VL (``models/qwen2_vl/modeling_qwen2_vl.py`` Qwen2VLModel.forward, 4.45 on), Qwen2.5-VL and the
LLaVA family (``get_placeholder_mask``) count the image token id in input_ids, run the vision tower on
pixel_values and raise "Image features and image tokens do not match: tokens: <n>, features <m>" ("Video features
and video tokens do not match: ..." for videos) before scattering the features into the text's embeddings. The
processor expands each image's one placeholder into as many tokens as the image has features, so the two counts
part when the text is cut after that expansion: a maximum length (LLaMA-Factory's cutoff_len, TRL's and ms-swift's
max_length, a tokenizer's truncation) that ends inside or before an image's tokens while pixel_values still holds
every image, which leaves fewer tokens than features. Other mistakes print the same line (image tokens typed into
the text by hand, an image dropped after the prompt was built), so the message alone is likely, and the reading
says which way the numbers differ.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_COUNTS = R(
    r"(?P<media>Image|Video) features and (?:image|video) tokens do not match"
    r"(?:[:,]\s*tokens:?\s*(?P<tokens>\d{1,9}),\s*features:?\s*(?P<features>\d{1,9}))?"
)


def _counts(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    media = first(hits, "media", "Image").lower()
    tokens, features = first(hits, "tokens"), first(hits, "features")
    summary = (
        f"the batch's {media} placeholder tokens and the vision tower's {media} features differ in number"
    )
    if tokens and features:
        summary += f" ({tokens} tokens, {features} features)"
        if int(tokens) < int(features):
            summary += (
                ": fewer tokens than features, the sign of a sample cut by the maximum sequence length after the "
                f"processor had placed its {media} tokens"
            )
        elif int(tokens) > int(features):
            summary += f": more tokens than features, {media} tokens in the text that no {media} accounts for"
    fix = (
        f"Raise the maximum sequence length so that no sample is cut inside its {media} tokens (LLaMA-Factory's "
        "cutoff_len, TRL's SFTConfig max_length, ms-swift's --max_length, the tokenizer's max_length with "
        f"truncation), or drop the samples longer than it; fewer pixels per {media} (max_pixels) make its tokens "
        f"fewer. Let the processor insert the {media} tokens (one placeholder per {media} in the prompt, as the "
        f"chat template writes it) rather than writing them into the text, and pass every {media} the prompt "
        "names, no more."
    )
    return summary + on_ranks(hits), fix


IMAGE_TOKENS_TRUNCATED = Recogniser(
    kind="image_tokens_truncated",
    templates=(
        "third_party:transformers-image-features-and-image-tokens-do-not-match",
        "third_party:transformers-video-features-and-video-tokens-do-not-match",
    ),
    title="image tokens cut from a sample by the maximum length",
    anchors=(
        "Image features and image tokens do not match",
        "Video features and video tokens do not match",
    ),
    match=_COUNTS,
    # never certain: the counts differ for a cut sample and for tokens written by hand alike
    confirm=lambda hits, ctx: False,
    describe=_counts,
)

RECOGNISERS = (IMAGE_TOKENS_TRUNCATED,)

"""Small random models built from configs, shared by the tests (no hub: nothing is downloaded)."""

from __future__ import annotations

import torch
from transformers import T5Config, T5ForConditionalGeneration


def tiny_t5(seed: int = 0, **config) -> T5ForConditionalGeneration:
    """A seeded T5 small enough for CPU tests; ``config`` overrides the sizes below (``num_layers=1``, …)."""
    torch.manual_seed(seed)
    sizes = dict(
        vocab_size=64,
        d_model=16,
        d_kv=4,
        d_ff=32,
        num_layers=2,
        num_decoder_layers=1,
        num_heads=2,
        decoder_start_token_id=0,
        pad_token_id=0,
    )
    return T5ForConditionalGeneration(T5Config(**(sizes | config))).train()


# the size the fp32 and Trainer tests plant an overflow in
T5_WIDER = dict(d_model=32, d_kv=8, d_ff=64, num_decoder_layers=2, num_heads=4, dropout_rate=0.0)

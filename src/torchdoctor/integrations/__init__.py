"""Trainer integrations: the overflow detector as a Hugging Face ``Trainer`` callback and a Lightning callback.

Each lives in its own module (``torchdoctor.integrations.transformers``, ``torchdoctor.integrations.lightning``)
and imports its framework only when imported itself, so ``import torchdoctor`` never pulls them in.
"""

"""``loss=nan``: transformers' underflow/overflow detector (`DebugUnderflowOverflow`, `detect_overflow`), the
advice its error ends with, and the fix it names (`keep_in_fp32`).

Where to look: `detector` (the public classes), `dump` (transformers' text, byte for byte), `advice` (what to
try next), `fp32` (`keep_in_fp32`); the rest are its parts: `measure`, `stats`, `walk`, `frames`, `readback`,
`gradients` (``check_gradients=True``), `precision` (headroom, underflow), `options` (argument checks), `plot`.
"""

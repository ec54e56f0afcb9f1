"""MidiTok's releases whose tokenizers look up a chord token their vocabulary never made.

MidiTok 2.1.0 (the TokenizerConfig of Natooz/MidiTok#57) to 2.1.6 kept unknown chords in ``detect_chords``
(``miditok/utils/utils.py``: ``if not (unknown_chords_nb_notes_range is not None and is_unknown_chord)``) when
``chord_unknown`` was unset, naming them ``ukn3`` to ``ukn5`` (``constants.UNKNOWN_CHORD_PREFIX``), while the
vocabulary (``midi_tokenizer.py``) makes ``Chord_`` tokens only for ``config.chord_maps``'s qualities, and the
unknown ones only with ``chord_unknown``. So tokenizing a MIDI file with ``use_chords=True`` raised CPython's
"KeyError: 'Chord_ukn4'" ('Chord_C:ukn4' with root notes) (Natooz/MidiTok#77). a09c3ac (#84, 2023-10-12) fixed the
check, released in 2.1.7 (2023-10-24). A vocabulary made with ``chord_unknown`` and loaded by a tokenizer without
it prints the same: likely (versions.py's release-bug recogniser reads the line with `REFUSED`).
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, first, on_ranks

FAMILY = "library releases that disagree with the code"

ANCHORS = ("KeyError: 'Chord_",)
REFUSED = re.compile(r"KeyError: 'Chord_(?:[A-G]#?:)?(?P<miditok_unknown_chord>ukn[345])'")
TEMPLATES = ("third_party:miditok-unknown-chord-token",)


def unknown_chord(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for MidiTok 2.1.0-2.1.6 tokenizing an unknown chord its vocabulary lacks."""
    chord = first(hits, "miditok_unknown_chord", "ukn4")
    return (
        f"MidiTok's tokenizer looked up the token of an unknown chord of {chord[-1]} notes ({chord}), which its "
        "vocabulary does not have: MidiTok 2.1.0 to 2.1.6 kept unknown chords in detect_chords although "
        "chord_unknown was unset, a bug fixed in 2.1.7" + on_ranks(hits),
        "pip install -U miditok (2.1.7 or newer), or set chord_unknown in the TokenizerConfig (e.g. "
        "chord_unknown=(3, 6)) so that the vocabulary has the unknown chords; a tokenizer saved with "
        "chord_unknown must be loaded with its config.",
    )

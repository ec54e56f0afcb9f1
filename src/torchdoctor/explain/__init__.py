"""torchdoctor explain: what a failed run's logs, per-rank folders and flight-recorder dumps say, and the fix.

Where to start: ``diagnose.explain`` is the entry (``cli/explain.py`` calls it). ``inputs`` and
``reader`` read any input (a file, a pipe, a folder, gzip, UTF-16) in bounded memory; ``collect`` tries each
kept line against the recognisers of ``kinds/`` (the knowledge, one module per family, each citing the
templates of ``catalog/`` it is anchored on); ``first_failure`` and ``ranks`` find the rank that failed first;
``verdict`` orders the findings (the cause before its consequences, certain before likely). ``flight_recorder/``
reads torch's flight-recorder dumps, as untrusted input (``safe_pickle``).
"""

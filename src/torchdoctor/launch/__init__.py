"""``torchdoctor launch``: torchrun's command line, run under torch's own launcher with debug mode, checks before
the start, a hang watchdog and a straggler watch.

Where to look: `options` (the command line, read by torchrun's own parser, and ``PET_*``), `config` (accelerate's
YAML keys), `preflight` (the checks before torchrun starts), `run` (the launch itself), `torchrun` (starting and
stopping torch's launcher), `bootstrap` (what each worker runs before the user's script), `orphans` (every
process we start dies with us).
"""

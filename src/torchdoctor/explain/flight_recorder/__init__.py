"""Flight-recorder dumps: which collective the ranks of a stuck job disagree on, and who is behind.

torch records every rank's recent collectives in a ring buffer (``TORCH_FR_BUFFER_SIZE``, formerly
``TORCH_NCCL_TRACE_BUFFER_SIZE``): process group, sequence number, operation, sizes, dtypes, whether it
completed, and the Python stack that called it. NCCL jobs write it to ``TORCH_FR_DUMP_TEMP_FILE`` + rank on a
timeout; any job can get it from ``torch._C._distributed_c10d._dump_fr_trace()`` (``torchdoctor launch
--watchdog`` does, for every rank of a hung run). The file is a pickle (or JSON, from ``_dump_fr_trace_json``).

Per process group this names the first collective where the ranks disagree, rather than the first mismatch of
the whole job (torch's analyzer), and it reads what torch's cannot: gloo dumps (their ``pg_config`` is
empty), some ranks' files missing, ring buffers that dropped their oldest entries (``record_id`` tells: a
buffer that never wrapped starts at 0), and files cut off mid-write. It never unpickles with ``pickle.load``:
a dump is a file from whoever sent it (`safe_pickle`).

The modules: `records` (a rank's record, read from a dump or from the call sites a worker noted), `compare`
(the first disagreement per process group), `findings` (what it means and how to fix it: the entry
``torchdoctor explain`` calls), `digest` (a record in a few rows, sent through the store at a hang).
"""

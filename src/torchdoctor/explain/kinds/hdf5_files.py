"""An HDF5 file of the training data that the HDF5 library cannot open: cut short, or not HDF5 at all.

h5py opens a file through ``H5Fopen`` and raises OSError "Unable to open file (...)" ("Unable to synchronously open
file (...)" from h5py 3.8 with HDF5 1.14) with the HDF5 library's own words in the parentheses, from
``src/H5Fsuper.c`` (``H5F__super_read``):

- "truncated file: eof = N, sblock->base_addr = 0, stored_eof = M": the file on disk is shorter than its superblock
  says it was written (an interrupted download, copy or extraction; a writer killed before it closed the file);
- "file signature not found": the file does not start with HDF5's signature: another format under an .h5 / .hdf5
  name, a Git LFS pointer or an HTML page saved in the file's place, or an empty file.

Both name the file, not the code. A model's .h5 weights (Keras's, a checkpoint) print the same, so the data reading
is only likely, the checkpoint named beside it. ``datasets.BAD_TRAINING_DATA`` reads these with this module's
anchors and words: one recogniser per kind.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Hit, Pattern, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TEMPLATES = ("third_party:hdf5-truncated-file", "third_party:hdf5-file-signature-not-found")
ANCHORS = ("(truncated file: eof = ", "(file signature not found)")
FACT = R(
    r"Unable to (?:synchronously )?open file \((?P<hdf5_unreadable>truncated file: eof = (?P<hdf5_eof>\d{1,20}), "
    r"sblock->base_addr = \d{1,20}, stored_eof = (?P<hdf5_stored>\d{1,20})|file signature not found)\)"
)

CHECKPOINT = Alternative(
    "checkpoint_file_invalid",
    "a model's .h5 weights or checkpoint rather than data (the same library prints the same words)",
    "If the file is a weights file, download or save it again (git lfs pull for a repository's .h5, which an LFS "
    "pointer replaces) and check its size against the source's.",
    when=("hdf5_unreadable",),
)


def explain(hits: list[Hit]) -> tuple[str, str]:
    """The summary and fix for an HDF5 file the HDF5 library could not open."""
    eof, stored = first(hits, "hdf5_eof"), first(hits, "hdf5_stored")
    if eof and stored:
        return (
            f"an HDF5 file of the data is cut short: {eof} bytes on disk where its header says {stored} were "
            "written" + on_ranks(hits),
            "The file was only partly written or copied (an interrupted download or extraction, a writer killed "
            "before it closed the file, a full disk): download, copy or regenerate it again, and compare its size "
            "with the source's. To find every such file, open each one once (h5py.File(path, 'r') in a loop, "
            "printing the paths that raise).",
        )
    return (
        "a file of the data is not HDF5: the HDF5 library found no HDF5 signature at its start"
        + on_ranks(hits),
        "Look at the file (file <path>; head -c 200 <path>): a Git LFS pointer (run git lfs pull in the "
        "repository that holds it), an HTML or JSON page saved by a failed download, an empty file, or another "
        "format under an .h5 name (a .mat of MATLAB 7.3 is HDF5; older .mat files are not: scipy.io.loadmat). "
        "Fetch or regenerate the file.",
    )

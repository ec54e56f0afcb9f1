"""A MATLAB v7.3 .mat file handed to scipy.io.loadmat, which reads only the older MAT formats.

``scipy/io/matlab/_mio.py`` (``mat_reader_factory``, scipy 0.x to 1.x) reads the file's header version: 0 is a v4
file, 1 a v5 to v7.2 file, 2 a v7.3 file, which MATLAB writes as HDF5 (``save(..., '-v7.3')``, the default for
variables over 2 GB). It raises ``NotImplementedError('Please use HDF reader for matlab v7.3 files')`` for the
last (newer scipy adds ", e.g. h5py"). Only a v7.3 file prints it, so the reading is certain: the data file is
fine, the reader is the wrong one.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _v73(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    summary = (
        "scipy.io.loadmat was given a MATLAB v7.3 .mat file (an HDF5 file), a format it cannot read"
        + on_ranks(hits)
    )
    fix = (
        "Read the v7.3 file with h5py (pip install h5py): with h5py.File(path, 'r') as f: x = f['name'][()] "
        "(MATLAB stores arrays column-major, so transpose: x.T, or x.transpose(...) for 3-D data); the mat73 "
        "package's mat73.loadmat(path) returns a dict as loadmat does. Or save the data again in MATLAB without "
        "-v7.3 (save(file, vars, '-v7'), for variables under 2 GB) and keep scipy.io.loadmat."
    )
    return summary, fix


MATLAB_V73_FILE = Recogniser(
    kind="matlab_v73_file",
    title="a MATLAB v7.3 file read with scipy.io.loadmat",
    templates=("third_party:scipy-loadmat-v73",),
    anchors=("Please use HDF reader for matlab v7.3 files",),
    describe=_v73,
)

RECOGNISERS = (MATLAB_V73_FILE,)

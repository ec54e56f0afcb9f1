"""A GeoTIFF of the training data that GDAL cannot read to its end.

Rasterio, torchgeo and raster datasets read their tiles through GDAL, which reads TIFFs through libtiff.

- libtiff's ``tif_read.c`` (TIFFFillStrip and its tile twin) reads a strip as many bytes as the file's directory
  says it holds; when the read returns fewer it reports "Read error at scanline N; got X bytes, expected Y" ("at
  row R, col C, tile T" for a tile): the file ends before the strip the directory points to.
- GDAL's ``gcore/gdalrasterband.cpp`` (GetLockedBlockRef) reports the block a driver's IReadBlock failed on, with
  the file and band the GTiff driver prefixes: "<file>, band 1: IReadBlock failed at X offset 0, Y offset 5460:
  TIFFReadEncodedStrip() failed." (``ERROR 1:`` is GDAL's CPLE_AppDefined failure as its error handler prints it).

Both say a file could not be read as its header describes. Most often the file itself is damaged or was only
partly written (an interrupted download, copy or extraction), which the thread's own check names; the same short
read comes from a read that failed under the file (a network file system or an object store dropping a range
request), and from one GDAL dataset opened in the main process then read by several forked DataLoader workers at
once. Likely, naming the file, with the shared handle as the other reading.

``datasets.BAD_TRAINING_DATA`` reads these beside Pillow's truncated images: one recogniser per kind.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Hit, Pattern, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TEMPLATES = (
    "third_party:libtiff-read-error-at-scanline",
    "third_party:libtiff-read-error-at-tile",
    "third_party:gdal-ireadblock-failed",
)
ANCHORS = ("Read error at scanline ", "Read error at row ", "IReadBlock failed at X offset ")
# the file GDAL names before the band; libtiff's own line names none
FACT = R(
    r"(?P<raster_read>(?:Read error at (?:scanline \d+|row \d+, col \d+, tile \d+); got \d+ bytes, expected \d+)|"
    r"IReadBlock failed at X offset \d+, Y offset \d+)"
)
FILE = R(
    r"(?:^(?:ERROR \d+: )?|ERROR \d+: |msg=')(?P<raster_file>[^\s,'][^,'\n]{0,300}?), band \d+: IReadBlock failed",
    re.M,
)

SHARED_HANDLE = Alternative(
    "dataset_handle_fork",
    "one GDAL/rasterio dataset opened before the DataLoader started its workers and read by several of them",
    "Open the raster inside __getitem__ (or once per worker in worker_init_fn), not in the Dataset's __init__; a "
    "file that reads with num_workers=0 but fails with workers is this.",
    when=("raster_read",),
)


def explain(hits: list[Hit]) -> tuple[str, str]:
    """The summary and fix for a raster file GDAL could not read to its end."""
    name = first(hits, "raster_file")
    which = f"'{name}'" if name else "a GeoTIFF of the dataset"
    shown = f" {name}" if name else " <file>"
    summary = (
        f"GDAL could not read {which} to its end (libtiff got fewer bytes than the file's header promises): the "
        "file is likely damaged or only partly written" + on_ranks(hits)
    )
    fix = (
        f"Check the file on its own: gdalinfo -checksum{shown} (or rasterio.open(path).read() for every band) reads "
        "every block and fails on the same one. Re-download, re-copy or re-extract the damaged files, or leave them "
        "out of the dataset's file list (the csv or the folder the dataset globs) and remove them; run the same "
        "check over all files once to find the others before training again. A file that reads alone but fails "
        "inside training is read through a failing network mount or a shared handle (see below)."
    )
    return summary, fix

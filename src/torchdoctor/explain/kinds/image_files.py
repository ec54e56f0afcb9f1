"""Image files of the training data that Pillow refuses: not an image it decodes, damaged, too large, unsaveable.

- Pillow's ``Image.open`` (``PIL/Image.py``, every release from 7 on; "cannot identify image file %r") tries the
  file's first bytes against every registered format and raises ``UnidentifiedImageError`` (an OSError) when none
  accepts them: the file is not an image Pillow can decode. In a dataset that is an HTML or JSON error page saved
  under an image's name by a failed download, an empty or partly copied file, a file of another kind under an
  image extension (a video, an annotation), or a format Pillow has no plugin for here (HEIC, AVIF without
  pillow-heif / pillow-avif-plugin). ``datasets.py``'s ``bad_training_data`` reads it with this module's anchor and
  words. With a path (``%r`` of a str) it names the file of the data: certain. With a file object (``<_io.BytesIO
  object at ...>``, bytes fetched over HTTP or read from a tar shard) it may as well be the code's stream (read to
  its end before Image.open, not rewound; a response that was an error page): only likely, that reading named.
- Pillow's decompression-bomb check (``Image._decompression_bomb_check``, called by ``Image.open``) compares the
  image's width x height with ``Image.MAX_IMAGE_PIXELS`` (89,478,485 by default): above it Pillow warns
  (``DecompressionBombWarning``, a healthy run goes on), above twice it raises ``DecompressionBombError`` with the
  same words ("Image size (N pixels) exceeds limit of M pixels, could be decompression bomb DOS attack."). Only the
  error stops the run, so the finding needs the error's class on the line: a large satellite tile, a whole-slide or
  scanned page image in the data. Certain.
- Pillow's PNG plugin bounds what it decompresses from a text or ICC-profile chunk (``PngImagePlugin.py``
  ``_safe_zlib_decompress``: ``MAX_TEXT_CHUNK``, 1 MiB; "Decompressed Data Too Large" up to 10.4, "Decompressed data
  too large for PngImagePlugin.MAX_TEXT_CHUNK" from 11.x) and all text chunks together (``MAX_TEXT_MEMORY``, 64
  MiB: "Too much memory used in text chunks: {}>MAX_TEXT_MEMORY"), raised as ValueError while ``Image.open`` reads
  the header: a PNG of the data carrying large metadata (an embedded generation prompt or workflow, a large ICC
  profile), not a damaged one. The same guard as the pixel limit: ``image_pixel_limit``. Certain.
- Pillow's PNG plugin (``PIL/PngImagePlugin.py``, ``ChunkStream``, every release from 7 on) checks each chunk's CRC
  and length while it decodes: "broken PNG file (bad header checksum in b'IDAT')", "(incomplete checksum in ...)",
  "(chunk ...)" and "truncated PNG file" (raised as SyntaxError or OSError unless ``ImageFile.LOAD_TRUNCATED_IMAGES``):
  a PNG of the data damaged or cut short. ``bad_training_data`` reads them too. Certain.
- Pillow's ``ImageFile.load`` (``PIL/ImageFile.py``, every release from 7 on: "{} when reading image file", the
  decoder's status from ``_imaging.c``'s ``getcodecstatus``) stops on a file whose compressed data its decoder
  rejects: "broken data stream when reading image file" (a JPEG, PNG or TIFF whose data is damaged) and
  "unrecognized data stream contents when reading image file". The words name the data, not the code:
  ``bad_training_data`` reads them as a damaged image of the data, likely (the bytes may be the code's own stream,
  cut short by a failed download or a truncated tar member), that reading named.
- Pillow's JPEG writer (``JpegImagePlugin._save``) raises OSError "cannot write mode RGBA as JPEG" (P, LA, I;16...)
  for a mode JPEG has no encoding for: an image with transparency or a palette saved as .jpg, in a conversion or
  preprocessing step or when samples are written out (the PNG and TIFF writers refuse their own: a float or 32-bit
  image as PNG). Certain: ``image_mode_unsupported``.
- libjpeg's ``JERR_CONVERSION_NOTIMPL`` ("Unsupported color conversion request", ``jerror.h``) raised through
  torchvision's ``io.decode_jpeg`` / ``read_image`` (``torchvision/csrc/io/image/cpu/decode_jpeg.cpp``): before
  0.16 it asked libjpeg for RGB from every JPEG, which libjpeg cannot do from CMYK or YCCK (ImageNet holds about 20
  CMYK files, vision#6538); 0.16 converts CMYK itself (vision#7741). ``versions.py``'s ``library_version_bug``
  reads it with this module's anchor and words: likely, as every reading of a release's bug.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

UNIDENTIFIED = "cannot identify image file"
DAMAGED = ("broken PNG file (", "truncated PNG file")
# PIL/ImageFile.py's "{} when reading image file", filled with _imaging.c's codec status
CODEC_STATUS = (
    "broken data stream when reading image file",
    "unrecognized data stream contents when reading image file",
)
ANCHORS = (UNIDENTIFIED, *DAMAGED, *CODEC_STATUS)
TEMPLATES = (
    "pillow:when-reading-image-file-2",
    "pillow:cannot-identify-image-file",
    "pillow:broken-png-file-chunk",
    "pillow:broken-png-file-bad-header-checksum",
    "pillow:broken-png-file-incomplete-checksum-in",
    "pillow:truncated-png-file",
)
DAMAGED_FACT = R(r"(?P<png_damaged>broken PNG file \([^)\n]{1,80}\)|truncated PNG file)")
CODEC_FACT = R(
    r"(?P<codec_damaged>(?:broken|unrecognized) data stream(?: contents)? when reading image file)"
)
# the repr Pillow prints: a path in quotes, or a file object's repr
FACT = R(
    r"cannot identify image file (?:(?P<unidentified_path>'[^'\n]{1,300}'|\"[^\"\n]{1,300}\"|PosixPath\('[^'\n]{1,300}'\))"
    r"|(?P<unidentified_stream><[^>\n]{1,120}>))"
)
# a dataset's own loader that logs the same words and skips the file (the run goes on)
REJECT = r"(?i:\bwarn(?:ing)?\b)[^\n]{0,200}cannot identify image file|cannot identify image file[^\n]{0,300}(?i:\bskipp)"
CODEC_STREAM = Alternative(
    "image_stream_misuse",
    "the code's own bytes cut short before Pillow decoded them: a download that stopped early, a member of a tar "
    "shard read only in part",
    "Check the bytes the code hands Image.open: compare their length with the file's (or the Content-Length of "
    "the download), and retry the download where it came from the network.",
    when=("codec_damaged",),
)
STREAM = Alternative(
    "image_stream_misuse",
    "the code's own stream handed to Image.open: read to its end and not rewound, or an HTTP response that was an "
    "error page rather than the image",
    "Before Image.open(f) call f.seek(0) (a BytesIO written to or read before); for a download check "
    "response.status_code and response.headers['Content-Type'] and print the first bytes of response.content.",
    when=("unidentified_stream",),
)


def explain_unidentified(hits: list[Hit], where: str) -> tuple[str, str]:
    """(summary, fix) for Pillow's "cannot identify image file", naming the file where the message does."""
    path = first(hits, "unidentified_path", "")
    stream = first(hits, "unidentified_stream", "")
    named = f" ({path[:200]})" if path else f" (a file object, {stream[:80]})" if stream else ""
    summary = (
        f"Pillow could not identify a file of the training data as an image{named}: none of its image formats "
        "accepts the file's first bytes" + where + on_ranks(hits)
    )
    fix = (
        "Look at that file (file <path>, head -c 200 <path>, its size): an HTML or JSON page saved by a failed "
        "download (re-download it; Google Drive and rate-limited servers answer with a page), an empty or partly "
        "copied file (copy it again), a file of another kind under an image extension (a video, an annotation "
        "file picked up by the folder's glob: filter the file list by extension), or a format this Pillow has no "
        "plugin for (HEIC or AVIF: pip install pillow-heif / pillow-avif-plugin and register it, or convert the "
        "files to JPEG or PNG). To find every such file before training, open each one once "
        "(Image.open(path).verify() in a loop, printing the paths that raise) and drop or replace them."
    )
    return summary, fix


JPEG_CONVERSION = "Unsupported color conversion request"
JPEG_TEMPLATE = "torchvision:unsupported-color-conversion-request"
JPEG_FACT = R(r"(?P<jpeg_conversion>Unsupported color conversion request)")


def cmyk_jpeg(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for libjpeg's refusal through torchvision's decode_jpeg: a CMYK (or YCCK) JPEG."""
    return (
        "libjpeg refused to convert a JPEG's colours to RGB (Unsupported color conversion request): "
        "torchvision's decode_jpeg / read_image before 0.16 meeting a CMYK or YCCK JPEG of the data"
        + on_ranks(hits),
        "Upgrade torchvision to 0.16 or later, whose decode_jpeg converts CMYK JPEGs (vision#7741), or decode "
        "with PIL instead (Image.open(path).convert('RGB'), then transforms.PILToTensor()), or convert the CMYK "
        "files to RGB once (ImageMagick: mogrify -colorspace sRGB file.jpg; find them with PIL: Image.open(path)"
        ".mode == 'CMYK').",
    )


def explain_damaged(hits: list[Hit], where: str) -> tuple[str, str]:
    """(summary, fix) for Pillow's PNG checks: a PNG of the data damaged or cut short."""
    what = first(hits, "png_damaged", "")
    if not what:
        codec = first(hits, "codec_damaged", "broken data stream when reading image file")
        return (
            f"an image of the training data is damaged: Pillow's decoder rejected its data ({codec})"
            + where
            + on_ranks(hits),
            "A file of the dataset is corrupted or was only partly written (an interrupted download, copy or "
            "extraction). Find it: open every image once outside training (Image.open(path).load() in a loop, "
            "printing the path that raises) or print the path in the Dataset's __getitem__; then re-download, "
            "re-copy or drop it. ImageFile.LOAD_TRUNCATED_IMAGES does not help here: the data is damaged, not "
            "only cut short.",
        )
    return (
        f"a PNG of the training data is damaged: Pillow's decoder stopped on it ({what})"
        + where
        + on_ranks(hits),
        "A file of the dataset was corrupted or only partly written (an interrupted download, copy or "
        "extraction). Find it: open every image once outside training (Image.open(path).load() in a loop, "
        "printing the path that raises) or print the path in the Dataset's __getitem__; then re-download, re-copy "
        "or drop it. `from PIL import ImageFile; ImageFile.LOAD_TRUNCATED_IMAGES = True` in the module that "
        "defines the Dataset lets Pillow load a PNG cut short (its missing rows filled); a chunk whose checksum is "
        "wrong is damaged data either way.",
    )


def _mode(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    mode, fmt = first(hits, "image_mode", "this mode"), first(hits, "image_format", "JPEG")
    if fmt == "JPEG":
        return (
            f"Pillow cannot save an image of mode {mode} as JPEG (JPEG has no alpha channel or palette)"
            + on_ranks(hits),
            "Convert before saving as JPEG: img.convert('RGB').save(path) (an RGBA or LA image loses its "
            "transparency; composite it on a background first if that matters), or save as PNG instead. When "
            "converting a dataset, convert every image to RGB as you read it (Image.open(p).convert('RGB')).",
        )
    return (
        f"Pillow cannot save an image of mode {mode} as {fmt}: the format has no encoding for that mode"
        + on_ranks(hits),
        f"Convert the image to a mode {fmt} stores before saving (img.convert('RGB'), 'RGBA' or 'L'; a float or "
        "32-bit array scaled to 0-255 and cast to uint8 before Image.fromarray), or save it in a format that "
        "keeps the mode (TIFF for 16-bit and float images, NumPy's .npy for arrays).",
    )


IMAGE_MODE_UNSUPPORTED = Recogniser(
    kind="image_mode_unsupported",
    templates=(
        "pillow:cannot-write-mode-as-jpeg",
        "pillow:cannot-write-mode-as-png",
        "pillow:cannot-write-mode-as-tiff",
    ),
    title="an image saved in a format that cannot store its mode",
    anchors=("cannot write mode ",),
    match=R(r"cannot write mode (?P<image_mode>[\w;]{1,10}) as (?P<image_format>[A-Z][\w]{1,10})"),
    describe=_mode,
)


def _pixels(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "png_text_limit"):
        return (
            "a PNG of the training data carries a text or ICC-profile chunk larger than Pillow's limit "
            f"({first(hits, 'png_text_limit')}): Image.open refused it while reading the header"
            + on_ranks(hits),
            "The image is not broken: its metadata (an embedded prompt or workflow, a large ICC profile) is over "
            "Pillow's guard. For data you trust, raise the limits where the Dataset is defined, so DataLoader "
            "workers import it too: `from PIL import PngImagePlugin; PngImagePlugin.MAX_TEXT_CHUNK = 100 * 1024**2` "
            "(and PngImagePlugin.MAX_TEXT_MEMORY for the total). Or strip the metadata once before training: with "
            "the limit raised, open each such image and save it again (Pillow writes no text chunk unless given "
            "pnginfo=; pass icc_profile=None to drop the profile).",
        )
    size, limit = first(hits, "bomb_pixels", ""), first(hits, "bomb_limit", "")
    figures = f" ({size} pixels, above the limit of {limit})" if size and limit else ""
    return (
        "an image of the training data has more pixels than Pillow's decompression-bomb limit allows"
        + figures
        + ": Image.open refused it (DecompressionBombError)"
        + on_ranks(hits),
        "The image is large, not broken (a satellite tile, a whole-slide or scanned image): Pillow refuses images "
        "above twice Image.MAX_IMAGE_PIXELS (89,478,485 pixels by default) as a guard against crafted files. For "
        "data you trust, raise or lift the limit where the Dataset is defined, so DataLoader workers import it "
        "too: `from PIL import Image; Image.MAX_IMAGE_PIXELS = None` (or a number above the largest image). "
        "Better for memory and speed: downscale or tile such images once before training.",
    )


IMAGE_PIXEL_LIMIT = Recogniser(
    kind="image_pixel_limit",
    templates=(
        "pillow:image-size-pixels-exceeds-limit-of",
        "pillow:decompressed-data-too-large",
        "pillow:decompressed-data-too-large-for-pngimageplugin",
        "pillow:too-much-memory-used-in-text",
    ),
    title="an image above one of Pillow's decompression-bomb limits (its pixels, a PNG's metadata)",
    anchors=(
        "could be decompression bomb DOS attack",
        "Decompressed Data Too Large",
        "Decompressed data too large for PngImagePlugin.MAX_TEXT_CHUNK",
        ">MAX_TEXT_MEMORY",
    ),
    # the error, not the warning of the same words Pillow prints between the limit and twice it
    match=R(
        r"DecompressionBombError: Image size \((?P<bomb_pixels>\d{1,15}) pixels\) exceeds limit of "
        r"(?P<bomb_limit>\d{1,15}) pixels|"
        r"(?P<png_text_limit>Decompressed (?:Data Too Large|data too large for PngImagePlugin\.MAX_TEXT_CHUNK)|"
        r"Too much memory used in text chunks: \d{1,15}>MAX_TEXT_MEMORY)"
    ),
    describe=_pixels,
)

RECOGNISERS = (IMAGE_PIXEL_LIMIT, IMAGE_MODE_UNSUPPORTED)

"""Audio and photo sets a library refuses as they are: librosa's mono check, COLMAP's mapper finding no model.

- librosa's ``util/utils.py`` (``valid_audio``, librosa 0.4 to 0.10) raises ``ParameterError("Invalid shape for
  monophonic audio: ndim=2, shape=(N, 2)")`` when a function that needs one channel is given an array of more than
  one dimension. ``librosa.load`` mixes down to mono by default; a file read another way (soundfile, scipy's
  wavfile, ``mono=False``) keeps its channels, so a stereo file in a speech dataset prints it. The same check fires
  when the code hands over a batch or a 2-D feature instead of one signal: likely, with that as the other reading.
- COLMAP's ``src/colmap/exe/sfm.cc`` (``RunMapper``; the global mapper too) prints "ERROR: failed to create sparse
  model" when the mapper ends with no reconstruction at all: it found no initial image pair with enough matches —
  too few images (one), too little overlap between views, textureless or blurred photos. NeRF and Gaussian
  splatting tools (LLFF's ``imgs2poses.py``, nerfstudio, the splatting repositories' ``convert.py``) run it to get
  camera poses before training. Likely: mapper options stricter than the defaults fail the same way.

- decord's ``src/video/video_reader.cc`` (``VideoReader`` opening a file, 0.x) checks FFmpeg's
  ``av_find_best_stream``: "Check failed: st_nb >= 0 (-1381258232 vs. 0) ERROR cannot find video stream with wanted
  index: -1", raised as ``DECORDError``: the file opened but FFmpeg found no video stream in it — a download cut
  short, a container whose metadata is damaged, an audio-only file (open-mmlab/mmaction2#1001). A video path that
  does not exist is "ERROR opening: <path>, No such file or directory" (``data_paths.py``).

``datasets.BAD_TRAINING_DATA`` reads these beside its other faulty data: one recogniser per kind.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Hit, Pattern, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TEMPLATES = (
    "third_party:librosa-invalid-shape-monophonic",
    "third_party:colmap-failed-to-create-sparse-model",
    "third_party:decord-cannot-find-video-stream",
)
ANCHORS = (
    "Invalid shape for monophonic audio",
    "failed to create sparse model",
    "cannot find video stream with wanted index",
)
FACT = R(
    r"(?P<media_read>Invalid shape for monophonic audio: ndim=(?P<audio_ndim>\d+), shape=(?P<audio_shape>\([\d, ]{1,40}\))"
    r"|(?P<colmap_no_model>failed to create sparse model)"
    r"|(?P<video_no_stream>cannot find video stream with wanted index))"
)

ALSO = (
    Alternative(
        "input_shape_mismatch",
        "the code hands librosa a batch or a 2-D feature where one signal is meant",
        "Pass one 1-D signal per call (y[i], or y.squeeze() of a (1, N) tensor converted with .numpy()); loop over "
        "a batch.",
        when=("audio_ndim",),
    ),
)


def explain(hits: list[Hit]) -> tuple[str, str]:
    """The summary and fix for audio with channels where mono is needed, images COLMAP cannot reconstruct, or a
    video with no stream decord can decode."""
    if first(hits, "video_no_stream"):
        return (
            "decord found no video stream in a file of the data: the video is damaged (a download cut short, "
            "broken container metadata) or holds no video at all" + on_ranks(hits),
            "Find the broken files and re-encode or drop them: ffprobe -v error -select_streams v:0 "
            "-show_entries stream=codec_name <file> prints nothing for such a file (mmaction2: "
            "tools/analysis_tools/check_videos.py lists them all); re-encode one with ffmpeg -i in.mp4 -c:v libx264 "
            "out.mp4, or download it again, or remove it from the annotation list.",
        )
    if first(hits, "colmap_no_model"):
        return (
            "COLMAP's mapper built no sparse model from the images: it found no pair of views it could start "
            "a reconstruction from, so there are no camera poses to train on" + on_ranks(hits),
            "Give COLMAP images it can match: more than one image of the same scene, each overlapping its "
            "neighbours by well over half, sharp and with texture (not blank walls or glass); then run feature "
            "extraction, matching and the mapper again (imgs2poses.py, ns-process-data, convert.py). Check the "
            "matcher's output first: a database with few matches means the photos, not the mapper; keep the "
            "mapper's default thresholds (Mapper.init_min_num_inliers and friends) unless you know better.",
        )
    shape = first(hits, "audio_shape")
    which = f" (shape {shape})" if shape else ""
    return (
        f"librosa was given audio with more than one channel{which} where it needs one: a stereo (or "
        "multi-channel) file in the data" + on_ranks(hits),
        "Mix the audio down to mono before the features: librosa.load(path, mono=True) (its default) or "
        "librosa.to_mono(y.T) for an array from soundfile ((samples, channels)); in torch, "
        "waveform.mean(dim=0, keepdim=True). Or convert the dataset's files to one channel once (ffmpeg -i in.wav "
        "-ac 1 out.wav, sox in.wav -c 1 out.wav).",
    )

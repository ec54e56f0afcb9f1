"""The corpus of real failure logs sampled by symptom (tests/fixtures/corpus): every file is labelled, no thread
is in both halves, nothing is empty. Accuracy is measured by benchmarks/explain_corpus.py, not asserted here."""

from __future__ import annotations

import re
import sys
from itertools import pairwise
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))

CORPUS = Path(__file__).parent / "fixtures" / "corpus"
HALVES = ("train", "heldout")
# Every sample by symptom's range of file numbers, in the order drawn (SAMPLING.md): a new sample adds its range
# at the end; `benchmarks/explain_corpus.py --samples` takes this string to print a table per sample.
SAMPLES = (
    "001-163,164-205,206-237,238-278,279-297,298-328,329-353,354-369,370-384,385-402,403-450,451-466,"
    "467-516,517-566,567-616,617-666,667-716,717-766,767-816,817-866,867-916,917-966,967-1016,1017-1066,"
    "1067-1116,1117-1166,1167-1216,1217-1266,1267-1316,1317-1366,1367-1416,1417-1466,1467-1516,1517-1566,"
    "1567-1616,1617-1666,1667-1716,1717-1766,1767-1816,1817-1866,1867-1916,1917-1966,1967-2016,2017-2066,"
    "2067-2116,2117-2166,2167-2216,2217-2266,2267-2316,2317-2366,2367-2416,2417-2466,2467-2516,2517-2566,"
    "2567-2616,2617-2666,2667-2716,2717-2766,2767-2816,2817-2866,2867-2916,2917-2966,2967-3016,3017-3066,"
    "3067-3116,3117-3166,3167-3216,3217-3266,3267-3316,3317-3366,3367-3416,3417-3466,3467-3516,3517-3566,"
    "3567-3616,3617-3666,3667-3716,3717-3766,3767-3816,3817-3866,3867-3916,3917-3966,3967-4016,"
    "4017-4066,4067-4116,4117-4166,4167-4216,4217-4266,4267-4316,4317-4366,4367-4416,4417-4466,"
    "4467-4516,4517-4566,4567-4616,4617-4666,4667-4716,4717-4766,4767-4816,4817-4866,4867-4916,"
    "4917-4966,4967-5016,5017-5066,5067-5116,5117-5166,5167-5216,5217-5266,"
    "5267-5316,5317-5366,5367-5416,5417-5466,5467-5516,5517-5566,5567-5616,5617-5666,"
    "5667-5716,5717-5766,5767-5816,5817-5866,"
    "5867-5916,5917-5966,5967-6016,6017-6066,6067-6116,6117-6166,6167-6216,6217-6266,"
    "6267-6316,6317-6366,6367-6416,6417-6466,6467-6516,6517-6566,6567-6616,6617-6666,"
    "6667-6716,6717-6766,6767-6816,6817-6866,6867-6916,6917-6966,6967-7016,"
    "7017-7066,7067-7116,7117-7166,7167-7216,7217-7266,7267-7316,7317-7366,7367-7416,7417-7466,7467-7516,"
    "7517-7566,7567-7616,7617-7666,7667-7716,7717-7766,7767-7816,7817-7866,7867-7916,7917-7966,7967-8016,8017-8066,8067-8116,8117-8166,8167-8216"
)


def rows(half: str) -> dict[str, list[str]]:
    """``{file: cells}`` of the table in ``half/SOURCES.md``."""
    found = {}
    for line in (CORPUS / half / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)]
        if len(cells) > 2 and cells[1].startswith("`") and cells[1].endswith(".txt`"):
            found[cells[1].strip("`")] = cells
    return found


@pytest.mark.parametrize("half", HALVES)
def test_every_file_is_labelled_with_source_kind_family_and_how(half):
    table = rows(half)
    files = sorted(p.name for p in (CORPUS / half).glob("*.txt"))
    assert files, f"no logs in {half}"
    assert sorted(table) == files, f"{half}: files and SOURCES.md rows differ"
    for name, cells in table.items():
        assert len(cells) >= 11, f"{half}/{name}: expected 9 columns, got {cells}"
        _, _, thread, kind, cause, _, how, _, family, query = cells[:10]
        assert re.search(r"\(https://github\.com/[^)]+/(issues|pull)/\d+\)", thread), f"{name}: no thread URL"
        assert re.fullmatch(r"[a-z][a-z0-9_]*", kind), f"{name}: kind {kind!r}"
        assert family in {
            "comm",
            "rendezvous",
            "launcher",
            "memory",
            "build",
            "driver",
            "deepspeed",
            "fsdp_checkpoint",
            "device_placement",
            "ddp_usage",
            "numerics",
            "data",
            "other",
        }, f"{name}: family {family!r}"
        assert cause and how and query, f"{name}: cause, how it was established and query must be filled"


def test_no_thread_in_both_halves_and_none_twice():
    threads = {
        half: [re.search(r"\((https://[^)]+)\)", c[2]).group(1) for c in rows(half).values()]
        for half in HALVES
    }
    every = threads["train"] + threads["heldout"]
    assert len(every) == len(set(every)), "a thread appears twice"
    assert not set(threads["train"]) & set(threads["heldout"])


def test_numbers_are_global_and_files_not_empty():
    names = [p.name for half in HALVES for p in (CORPUS / half).glob("*.txt")]
    assert len(names) == len(set(names)), "a number is used in both halves"
    for half in HALVES:
        for path in (CORPUS / half).glob("*.txt"):
            assert path.read_text(encoding="utf-8").strip(), f"{path} is empty"


def test_every_numbered_file_is_in_exactly_one_samples_range():
    import explain_corpus

    ranges = explain_corpus.sample_ranges(SAMPLES)
    assert all(low <= high for low, high in ranges)
    assert all(a[1] < b[0] for a, b in pairwise(sorted(ranges))), "two samples' ranges overlap"
    for half in HALVES:
        for name in rows(half):
            number = int(name.split(".")[0])
            inside = [(low, high) for low, high in ranges if low <= number <= high]
            assert len(inside) == 1, f"{half}/{name}: in no range of SAMPLES: add its sample's range"


def test_the_benchmark_explains_each_file_once_and_splits_a_half_by_sample(tmp_path, capsys, monkeypatch):
    import explain_corpus

    assert explain_corpus.sample_ranges("001-163,164-205") == [(1, 163), (164, 205)]
    with pytest.raises(ValueError, match="FIRST-LAST"):
        explain_corpus.sample_ranges("1-x")
    # a half in small: two files of the first sample, one of the last with a train file (a small sample can hold
    # all its files out), their rows of SOURCES.md
    table = rows("train")
    ranges = explain_corpus.sample_ranges(SAMPLES)
    first_low, first_high = ranges[0]
    last_low, last_high = next(
        (low, high)
        for low, high in reversed(ranges)
        if any(low <= int(n.split(".")[0]) <= high for n in table)
    )
    first = sorted(n for n in table if first_low <= int(n.split(".")[0]) <= first_high)[:2]
    last = sorted(n for n in table if last_low <= int(n.split(".")[0]) <= last_high)[:1]
    assert len(first) == 2 and len(last) == 1
    lines = (CORPUS / "train" / "SOURCES.md").read_text(encoding="utf-8").splitlines()
    kept = [
        line for line in lines if not line.startswith("| `") or any(f"`{n}`" in line for n in first + last)
    ]
    (tmp_path / "SOURCES.md").write_text("\n".join(kept) + "\n", encoding="utf-8")
    for name in first + last:
        (tmp_path / name).write_bytes((CORPUS / "train" / name).read_bytes())
    explained = []
    real_explain = explain_corpus.explain
    monkeypatch.setattr(
        explain_corpus, "explain", lambda paths: explained.append(paths) or real_explain(paths)
    )
    assert explain_corpus.main(["--samples", SAMPLES, str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert sorted(Path(p).name for (p,) in explained) == sorted(first + last), "each file explained once"
    assert f"files {first_low:03d}-{first_high:03d}: 2 logs" in out
    assert f"files {last_low:03d}-{last_high:03d}: 1 logs" in out
    low, high = ranges[1]
    assert f"files {low:03d}-{high:03d}: 0 logs" in out
    assert re.search(r"^all\s+3\s", out, re.M), out


def test_a_fix_keyword_counts_where_it_starts_a_word_of_the_fix():
    """ "port" in the unrecognised answer's "torchdoctor report" is not the fix's port; a stem ("nightl") may end
    inside a word, and MASTER_PORT holds "port"."""
    from explain_corpus import keyword_in

    assert not keyword_in("port", "run torchdoctor report > report.md and attach it")
    assert not keyword_in("0.5.0", "upgrade deepspeed to 10.5.0")
    assert keyword_in("port", "export master_port=29501")
    assert keyword_in("nightl", "install a nightly build")
    assert keyword_in("--shm-size", "docker run --shm-size=8g")

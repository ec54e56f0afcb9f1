"""The corpus of real failure logs sampled by symptom (tests/fixtures/corpus): every file is labelled, no thread
is in both halves, nothing is empty. Accuracy is measured by benchmarks/explain_corpus.py, not asserted here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "fixtures" / "corpus"
HALVES = ("train", "heldout")


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


def test_the_benchmark_splits_a_half_by_sample(capsys):
    import sys

    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    import explain_corpus

    assert explain_corpus.sample_ranges("001-163,164-205") == [(1, 163), (164, 205)]
    with pytest.raises(ValueError, match="FIRST-LAST"):
        explain_corpus.sample_ranges("1-x")
    assert (
        explain_corpus.main(
            [
                "--samples",
                "001-163,164-205,206-237,238-278,279-297,298-328,329-353,354-369,370-384,385-402,403-450,451-466,"
                "467-516,517-566,567-616,617-666,667-716,717-766,767-816,817-866,867-916,917-966,967-1016,"
                "1017-1066,1067-1116,1117-1166,1167-1216,1217-1266,1267-1316,1317-1366,1367-1416,1417-1466,"
                "1467-1516,1517-1566,1567-1616,1617-1666,1667-1716,1717-1766,1767-1816,1817-1866,1867-1916,"
                "1917-1966,1967-2016,2017-2066,2067-2116,2117-2166,2167-2216,2217-2266,2267-2316,2317-2366,"
                "2367-2416,2417-2466,"
                "2467-2516,2517-2566,"
                "2567-2616,2617-2666,"
                "2667-2716,2717-2766,"
                "2767-2816,2817-2866,2867-2916,"
                "2917-2966,2967-3016,"
                "3017-3066,3067-3116,"
                "3117-3166,3167-3216,"
                "3217-3266,3267-3316,3317-3366,"
                "3367-3416,3417-3466,"
                "3467-3516,"
                "3517-3566,3567-3616,3617-3666,3667-3716,3717-3766,3767-3816,3817-3866,"
                "3867-3916",
                str(CORPUS / "train"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    numbers = [int(name.split(".")[0]) for name in rows("train")]
    first = sum(1 for n in numbers if n <= 163)
    second = sum(1 for n in numbers if 164 <= n <= 205)
    third = sum(1 for n in numbers if 206 <= n <= 237)
    fourth = sum(1 for n in numbers if 238 <= n <= 278)
    fifth = sum(1 for n in numbers if 279 <= n <= 297)
    sixth = sum(1 for n in numbers if 298 <= n <= 328)
    seventh = sum(1 for n in numbers if 329 <= n <= 353)
    eighth = sum(1 for n in numbers if 354 <= n <= 369)
    ninth = sum(1 for n in numbers if 370 <= n <= 384)
    tenth = sum(1 for n in numbers if 385 <= n <= 402)
    eleventh = sum(1 for n in numbers if 403 <= n <= 450)
    twelfth = sum(1 for n in numbers if 451 <= n <= 466)
    thirteenth = sum(1 for n in numbers if 467 <= n <= 516)
    fourteenth = sum(1 for n in numbers if 517 <= n <= 566)
    fifteenth = sum(1 for n in numbers if 567 <= n <= 616)
    sixteenth = sum(1 for n in numbers if 617 <= n <= 666)
    seventeenth = sum(1 for n in numbers if 667 <= n <= 716)
    eighteenth = sum(1 for n in numbers if 717 <= n <= 766)
    nineteenth = sum(1 for n in numbers if 767 <= n <= 816)
    twentieth = sum(1 for n in numbers if 817 <= n <= 866)
    twenty_first = sum(1 for n in numbers if 867 <= n <= 916)
    twenty_second = sum(1 for n in numbers if 917 <= n <= 966)
    twenty_third = sum(1 for n in numbers if 967 <= n <= 1016)
    twenty_fourth = sum(1 for n in numbers if 1017 <= n <= 1066)
    twenty_fifth = sum(1 for n in numbers if 1067 <= n <= 1116)
    twenty_sixth = sum(1 for n in numbers if 1117 <= n <= 1166)
    twenty_seventh = sum(1 for n in numbers if 1167 <= n <= 1216)
    twenty_eighth = sum(1 for n in numbers if 1217 <= n <= 1266)
    thirtieth = sum(1 for n in numbers if 1317 <= n <= 1366)
    twenty_ninth = sum(1 for n in numbers if 1267 <= n <= 1316)
    thirty_first = sum(1 for n in numbers if 1367 <= n <= 1416)
    thirty_third = sum(1 for n in numbers if 1467 <= n <= 1516)
    thirty_second = sum(1 for n in numbers if 1417 <= n <= 1466)
    thirty_fourth = sum(1 for n in numbers if 1517 <= n <= 1566)
    thirty_fifth = sum(1 for n in numbers if 1567 <= n <= 1616)
    thirty_seventh = sum(1 for n in numbers if 1667 <= n <= 1716)
    thirty_sixth = sum(1 for n in numbers if 1617 <= n <= 1666)
    thirty_eighth = sum(1 for n in numbers if 1717 <= n <= 1766)
    thirty_ninth = sum(1 for n in numbers if 1767 <= n <= 1816)
    fortieth = sum(1 for n in numbers if 1817 <= n <= 1866)
    forty_first = sum(1 for n in numbers if 1867 <= n <= 1916)
    forty_second = sum(1 for n in numbers if 1917 <= n <= 1966)
    forty_third = sum(1 for n in numbers if 1967 <= n <= 2016)
    forty_fourth = sum(1 for n in numbers if 2017 <= n <= 2066)
    forty_fifth = sum(1 for n in numbers if 2067 <= n <= 2116)
    forty_sixth = sum(1 for n in numbers if 2117 <= n <= 2166)
    forty_seventh = sum(1 for n in numbers if 2167 <= n <= 2216)
    forty_eighth = sum(1 for n in numbers if 2217 <= n <= 2266)
    forty_ninth = sum(1 for n in numbers if 2267 <= n <= 2316)
    fiftieth = sum(1 for n in numbers if 2317 <= n <= 2366)
    fifty_first = sum(1 for n in numbers if 2367 <= n <= 2416)
    fifty_second = sum(1 for n in numbers if 2417 <= n <= 2466)
    fifty_third = sum(1 for n in numbers if 2467 <= n <= 2516)
    fifty_fourth = sum(1 for n in numbers if 2517 <= n <= 2566)
    fifty_fifth = sum(1 for n in numbers if 2567 <= n <= 2616)
    fifty_sixth = sum(1 for n in numbers if 2617 <= n <= 2666)
    fifty_seventh = sum(1 for n in numbers if 2667 <= n <= 2716)
    fifty_eighth = sum(1 for n in numbers if 2717 <= n <= 2766)
    fifty_ninth = sum(1 for n in numbers if 2767 <= n <= 2816)
    sixtieth = sum(1 for n in numbers if 2817 <= n <= 2866)
    sixty_first = sum(1 for n in numbers if 2867 <= n <= 2916)
    sixty_second = sum(1 for n in numbers if 2917 <= n <= 2966)
    sixty_third = sum(1 for n in numbers if 2967 <= n <= 3016)
    sixty_fourth = sum(1 for n in numbers if 3017 <= n <= 3066)
    sixty_fifth = sum(1 for n in numbers if 3067 <= n <= 3116)
    sixty_sixth = sum(1 for n in numbers if 3117 <= n <= 3166)
    sixty_seventh = sum(1 for n in numbers if 3167 <= n <= 3216)
    sixty_eighth = sum(1 for n in numbers if 3217 <= n <= 3266)
    sixty_ninth = sum(1 for n in numbers if 3267 <= n <= 3316)
    seventieth = sum(1 for n in numbers if 3317 <= n <= 3366)
    seventy_first = sum(1 for n in numbers if 3367 <= n <= 3416)
    seventy_second = sum(1 for n in numbers if 3417 <= n <= 3466)
    seventy_third = sum(1 for n in numbers if 3467 <= n <= 3516)
    seventy_fourth = sum(1 for n in numbers if 3517 <= n <= 3566)
    seventy_fifth = sum(1 for n in numbers if 3567 <= n <= 3616)
    seventy_sixth = sum(1 for n in numbers if 3617 <= n <= 3666)
    seventy_seventh = sum(1 for n in numbers if 3667 <= n <= 3716)
    seventy_eighth = sum(1 for n in numbers if 3717 <= n <= 3766)
    seventy_ninth = sum(1 for n in numbers if 3767 <= n <= 3816)
    eightieth = sum(1 for n in numbers if 3817 <= n <= 3866)
    eighty_first = sum(1 for n in numbers if 3867 <= n <= 3916)
    assert (
        first
        + second
        + third
        + fourth
        + fifth
        + sixth
        + seventh
        + eighth
        + ninth
        + tenth
        + eleventh
        + twelfth
        + thirteenth
        + fourteenth
        + fifteenth
        + sixteenth
        + seventeenth
        + eighteenth
        + nineteenth
        + twentieth
        + twenty_first
        + twenty_second
        + twenty_third
        + twenty_fourth
        + twenty_fifth
        + twenty_sixth
        + twenty_seventh
        + twenty_eighth
        + thirtieth
        + twenty_ninth
        + thirty_first
        + thirty_third
        + thirty_second
        + thirty_fourth
        + thirty_fifth
        + thirty_seventh
        + thirty_sixth
        + thirty_eighth
        + thirty_ninth
        + fortieth
        + forty_first
        + forty_second
        + forty_third
        + forty_fourth
        + forty_fifth
        + forty_sixth
        + forty_seventh
        + forty_eighth
        + forty_ninth
        + fiftieth
        + fifty_first
        + fifty_second
        + fifty_third
        + fifty_fourth
        + fifty_fifth
        + fifty_sixth
        + fifty_seventh
        + fifty_eighth
        + fifty_ninth
        + sixtieth
        + sixty_first
        + sixty_second
        + sixty_third
        + sixty_fourth
        + sixty_fifth
        + sixty_sixth
        + sixty_seventh
        + sixty_eighth
        + sixty_ninth
        + seventieth
        + seventy_first
        + seventy_second
        + seventy_third
        + seventy_fourth
        + seventy_fifth
        + seventy_sixth
        + seventy_seventh
        + seventy_eighth
        + seventy_ninth
        + eightieth
        + eighty_first
        == len(numbers)
    )
    assert f"files 001-163: {first} logs" in out and f"files 164-205: {second} logs" in out
    assert f"files 206-237: {third} logs" in out and f"files 238-278: {fourth} logs" in out
    assert f"files 279-297: {fifth} logs" in out and f"files 298-328: {sixth} logs" in out
    assert f"files 329-353: {seventh} logs" in out and f"files 354-369: {eighth} logs" in out
    assert f"files 370-384: {ninth} logs" in out and f"files 385-402: {tenth} logs" in out
    assert f"files 403-450: {eleventh} logs" in out
    assert f"files 517-566: {fourteenth} logs" in out
    assert f"files 451-466: {twelfth} logs" in out
    assert f"files 467-516: {thirteenth} logs" in out
    assert f"files 567-616: {fifteenth} logs" in out
    assert f"files 617-666: {sixteenth} logs" in out
    assert f"files 667-716: {seventeenth} logs" in out
    assert f"files 717-766: {eighteenth} logs" in out
    assert f"files 767-816: {nineteenth} logs" in out
    assert f"files 817-866: {twentieth} logs" in out
    assert f"files 867-916: {twenty_first} logs" in out
    assert f"files 917-966: {twenty_second} logs" in out
    assert f"files 967-1016: {twenty_third} logs" in out
    assert f"files 1017-1066: {twenty_fourth} logs" in out
    assert f"files 1067-1116: {twenty_fifth} logs" in out
    assert f"files 1117-1166: {twenty_sixth} logs" in out
    assert f"files 1167-1216: {twenty_seventh} logs" in out
    assert f"files 1217-1266: {twenty_eighth} logs" in out
    assert f"files 1317-1366: {thirtieth} logs" in out
    assert f"files 1267-1316: {twenty_ninth} logs" in out
    assert f"files 1367-1416: {thirty_first} logs" in out
    assert f"files 1467-1516: {thirty_third} logs" in out
    assert f"files 1417-1466: {thirty_second} logs" in out
    assert f"files 1517-1566: {thirty_fourth} logs" in out
    assert f"files 1567-1616: {thirty_fifth} logs" in out
    assert f"files 1667-1716: {thirty_seventh} logs" in out
    assert f"files 1617-1666: {thirty_sixth} logs" in out
    assert f"files 1717-1766: {thirty_eighth} logs" in out
    assert f"files 1767-1816: {thirty_ninth} logs" in out
    assert f"files 1817-1866: {fortieth} logs" in out
    assert f"files 1867-1916: {forty_first} logs" in out
    assert f"files 1917-1966: {forty_second} logs" in out
    assert f"files 1967-2016: {forty_third} logs" in out
    assert f"files 2017-2066: {forty_fourth} logs" in out
    assert f"files 2067-2116: {forty_fifth} logs" in out
    assert f"files 2117-2166: {forty_sixth} logs" in out
    assert f"files 2167-2216: {forty_seventh} logs" in out
    assert f"files 2217-2266: {forty_eighth} logs" in out
    assert f"files 2267-2316: {forty_ninth} logs" in out
    assert f"files 2317-2366: {fiftieth} logs" in out
    assert f"files 2367-2416: {fifty_first} logs" in out
    assert f"files 2417-2466: {fifty_second} logs" in out
    assert f"files 2467-2516: {fifty_third} logs" in out
    assert f"files 2517-2566: {fifty_fourth} logs" in out
    assert f"files 2567-2616: {fifty_fifth} logs" in out
    assert f"files 2617-2666: {fifty_sixth} logs" in out
    assert f"files 2667-2716: {fifty_seventh} logs" in out
    assert f"files 2717-2766: {fifty_eighth} logs" in out
    assert f"files 2767-2816: {fifty_ninth} logs" in out
    assert f"files 2817-2866: {sixtieth} logs" in out
    assert f"files 2867-2916: {sixty_first} logs" in out
    assert f"files 2917-2966: {sixty_second} logs" in out
    assert f"files 2967-3016: {sixty_third} logs" in out
    assert f"files 3017-3066: {sixty_fourth} logs" in out
    assert f"files 3067-3116: {sixty_fifth} logs" in out
    assert f"files 3117-3166: {sixty_sixth} logs" in out
    assert f"files 3167-3216: {sixty_seventh} logs" in out
    assert f"files 3217-3266: {sixty_eighth} logs" in out
    assert f"files 3267-3316: {sixty_ninth} logs" in out
    assert f"files 3317-3366: {seventieth} logs" in out
    assert f"files 3367-3416: {seventy_first} logs" in out
    assert f"files 3417-3466: {seventy_second} logs" in out
    assert f"files 3467-3516: {seventy_third} logs" in out
    assert f"files 3517-3566: {seventy_fourth} logs" in out
    assert f"files 3567-3616: {seventy_fifth} logs" in out
    assert f"files 3617-3666: {seventy_sixth} logs" in out
    assert f"files 3667-3716: {seventy_seventh} logs" in out
    assert f"files 3717-3766: {seventy_eighth} logs" in out
    assert f"files 3767-3816: {seventy_ninth} logs" in out
    assert f"files 3817-3866: {eightieth} logs" in out
    assert f"files 3867-3916: {eighty_first} logs" in out

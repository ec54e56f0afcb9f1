"""Debug mode's error for ranks that called different collectives names the condition on the rank that sent them
apart (session 40: nanoGPT's train.py with an all_reduce under `if master_process:` and a barrier in its `else`;
the error named both calls, only the launch's verdict named the condition)."""

from torchdoctor.distributed.messages import mismatch_message


def test_different_operations_name_the_condition_of_each_call_site(tmp_path):
    source = tmp_path / "train.py"
    source.write_text(
        "import torch.distributed as dist\nif master_process:\n    dist.all_reduce(x)\nelse:\n    dist.barrier()\n"
    )
    entries = {
        0: {"operation": "torch.distributed.all_reduce", "site": f"{source}:3 in <module>"},
        1: {"operation": "torch.distributed.barrier", "site": f"{source}:5 in <module>"},
    }
    text = mismatch_message(entries)
    assert text.startswith("Cannot apply desired operation because the processes called different operations")
    assert f"{source}:3 sits under a condition on the rank, line 2: `if master_process:`: every rank" in text
    assert (
        f"{source}:5 sits under a condition on the rank, line 2: `if master_process:` (in its else branch)"
        in text
    )


def test_the_same_operation_from_different_lines_names_the_condition_too(tmp_path):
    source = tmp_path / "train.py"
    source.write_text("if rank == 0:\n    dist.barrier()\nelse:\n    dist.barrier()\n")
    entries = {
        r: {"operation": "torch.distributed.barrier", "site": f"{source}:{2 + 2 * r} in <module>"}
        for r in (0, 1)
    }
    text = mismatch_message(entries)
    assert "from different lines" in text and f"{source}:2 sits under a condition on the rank, line 1" in text


def test_no_condition_no_line(tmp_path):
    source = tmp_path / "train.py"
    source.write_text("dist.all_reduce(x)\ndist.barrier()\n")
    entries = {
        0: {"operation": "torch.distributed.all_reduce", "site": f"{source}:1 in <module>"},
        1: {"operation": "torch.distributed.barrier", "site": f"{source}:2 in <module>"},
    }
    assert "sits under" not in mismatch_message(entries)

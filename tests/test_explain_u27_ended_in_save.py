"""`dcp.save` under `if rank == 0:` in pytorch/examples' FSDP2 example, run under `torchdoctor launch --debug`:
launch's verdict says rank 1 ended while rank 0 still trained and concludes the ranks ran different numbers of
iterations; rank 0's own traceback says it waited in the checkpoint's gather, a collective every rank must make.
The lines as launch and torch print them."""

from explaining import explained

# torchdoctor launch's verdict (src/torchdoctor/hang/failure.py) after rank 0's traceback, as the FSDP2 example
# with `if rank == 0: dcp.save(...)` printed them under `torchdoctor launch --debug --tee 3` (shortened)
ENDED_IN_A_SAVE = """\
[default0]:[rank0]: Traceback (most recent call last):
[default0]:[rank0]:   File "example.py", line 120, in <module>
[default0]:[rank0]:     main(args)
[default0]:[rank0]:   File "example.py", line 109, in main
[default0]:[rank0]:     {call}
[default0]:[rank0]:   File "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 4287, in all_gather
[default0]:[rank0]:     work.wait()
[default0]:[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:23754. This is typically caused by a remote worker crashing. Check the logs of the remote worker before reporting an error. GLHF!
E1130 16:45:39.445000 32189 /venv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) local_rank: 0 (pid: 32250) of binary: /venv/bin/python

torchdoctor: failed: rank 1 ended while rank 0 still trained: rank 1's script returned (exit status 0), after 27 collectives of the default group; rank 0 was in collective #28 of the default group, torch.distributed.reduce_scatter, at example.py:109 in main, and failed as its consequence (Connection closed by peer). The ranks ran different numbers of iterations: give every rank the same number of batches (DistributedSampler(drop_last=True), data split evenly), or run the loop under DDP's `with model.join():` (torch.distributed.algorithms.Join), which lets ranks with fewer batches finish.
Culprit: rank(s) 1 at example.py:109.
"""


def test_a_rank_that_ended_while_the_other_saved_a_distributed_checkpoint_names_the_save_on_every_rank():
    found = explained(
        ENDED_IN_A_SAVE.format(call='dcp.save({"model": model.state_dict()}, checkpoint_id="ckpt")')
    )
    assert found.id == "log.ranks_ended_early", found.summary
    assert "did not all make the state dict's gather at example.py:109" in found.summary, found.summary
    assert "different numbers of iterations" not in found.summary
    assert found.fix.startswith("Gathering a full state dict is a collective") and "dcp.save" in found.fix


def test_a_rank_that_ended_while_the_other_ran_backward_is_still_read_as_uneven_iterations():
    # near miss: the survivor waited in its backward, a loop's collective: the iterations differed
    found = explained(ENDED_IN_A_SAVE.format(call="loss.backward()"))
    assert found.id == "log.ranks_ended_early", found.summary
    assert "the ranks ran different numbers of iterations" in found.summary
    assert "Gathering a full state dict" not in found.fix

"""torchrun's own traceback starts in pip's wrapper of its console script (``<env>/bin/torchrun``, line 6:
``sys.exit(main())``), which no user wrote: explain named it as the user's line ('Your code reached it at
.venv/bin/torchrun:6 in <module>: sys.exit(main())'). Found with a torchrun stopped by SIGTERM while its two gloo
ranks hung in distribute_tensor with different placements. Its console as torchrun printed it (paths shortened)."""

from explaining import explained

from torchdoctor.explain import first_failure

STOPPED = """\
W1130 20:11:37.529000 30566 torch/distributed/elastic/agent/server/api.py:753] Received 15 death signal, shutting down workers
W1130 20:11:37.529000 30566 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 30590 closing signal SIGTERM
W1130 20:11:37.530000 30566 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 30591 closing signal SIGTERM
Traceback (most recent call last):
  File "/home/me/venv/bin/torchrun", line 6, in <module>
    sys.exit(main())
             ^^^^^^
  File "/home/me/venv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 367, in wrapper
    return f(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^
  File "/home/me/venv/lib/python3.11/site-packages/torch/distributed/run.py", line 1028, in main
    run(args)
  File "/home/me/venv/lib/python3.11/site-packages/torch/distributed/run.py", line 1019, in run
    elastic_launch(
  File "/home/me/venv/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 194, in __call__
    return launch_agent(
           ^^^^^^^^^^^^^
  File "/home/me/venv/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 374, in launch_agent
    result = agent.run()
             ^^^^^^^^^^^
  File "/home/me/venv/lib/python3.11/site-packages/torch/distributed/elastic/metrics/api.py", line 134, in wrapper
    result = f(*args, **kwargs)
             ^^^^^^^^^^^^^^^^^^
  File "/home/me/venv/lib/python3.11/site-packages/torch/distributed/elastic/agent/server/api.py", line 745, in run
    result = self._invoke_run(role)
             ^^^^^^^^^^^^^^^^^^^^^^
  File "/home/me/venv/lib/python3.11/site-packages/torch/distributed/elastic/agent/server/api.py", line 923, in _invoke_run
    time.sleep(monitor_interval)
  File "/home/me/venv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/api.py", line 86, in _terminate_process_handler
    raise SignalException(f"Process {os.getpid()} got signal: {sigval}", sigval=sigval)
torch.distributed.elastic.multiprocessing.api.SignalException: Process 30566 got signal: 15
"""


def test_torchruns_console_script_is_not_the_users_line():
    found = explained(STOPPED)
    assert found.id == "log.launcher_stopped", found.summary
    assert "Your code reached it" not in found.fix and "bin/torchrun" not in found.fix


def test_console_script_wrappers_are_not_the_users_code():
    assert first_failure.is_library("/home/me/venv/bin/torchrun")
    assert first_failure.is_library("C:\\envs\\ml\\Scripts\\accelerate.exe")


def test_a_users_script_in_a_bin_folder_is_still_the_users():
    assert not first_failure.is_library("/home/me/project/bin/train.py")


def test_the_watchdogs_user_line_skips_the_console_script_too():
    # the watchdog's report and explain judge frames by one rule (hang.source)
    from torchdoctor.hang.source import Frame, user_call

    launcher = [
        Frame("/home/me/venv/bin/torchrun", 8, "<module>"),
        Frame("/home/me/venv/lib/python3.11/site-packages/torch/distributed/run.py", 936, "main"),
    ]
    assert user_call(launcher) is None
    script = Frame("/home/me/project/train.py", 12, "main")
    assert user_call([*launcher, script]) == script

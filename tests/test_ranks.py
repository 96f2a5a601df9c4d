"""Real gloo ranks on CPU: collectives work, and a rank that raises, hangs, dies or loses its parent is reported
(naming the rank) within a bounded time, with no process left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import psutil
import pytest
import torch
import torch.distributed as dist

from fp8check.core.errors import InputError
from fp8check.core.load.ranks import STOP_GRACE_S, RankFailure, backend_for, run_ranks

TESTS = os.path.dirname(os.path.abspath(__file__))


# ------------------------------------------------------------ rank targets (module level: a rank imports them)

def _collectives(ctx, payload):
    total = torch.tensor([float(ctx.rank + 1)])
    dist.all_reduce(total, group=ctx.group)
    parts = [torch.empty(2) for _ in range(ctx.world_size)]
    dist.all_gather(parts, torch.full((2,), float(ctx.rank * 10)), group=ctx.group)
    return total.item(), torch.cat(parts), ctx.rank, ctx.world_size, ctx.device, payload


def _raise_on_rank_1(ctx, message):
    if ctx.rank == 1:
        raise ValueError(message)
    dist.barrier(group=ctx.group)  # rank 0 waits for a peer that will never arrive


def _hang_on_rank_1(ctx, marker):
    with open(f"{marker}.{ctx.rank}", "w") as fh:
        fh.write(str(time.time()))
    if ctx.rank == 1:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL can stop it
        time.sleep(60)
    return ctx.rank


def _sigkill_rank_1_mid_run(ctx, _):
    value = torch.ones(1)
    dist.all_reduce(value, group=ctx.group)
    if ctx.rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    dist.all_reduce(value, group=ctx.group)  # rank 0: its peer is gone
    return value.item()


def _exit_on_rank_1(ctx, _):
    if ctx.rank == 1:
        os._exit(3)
    return ctx.rank


def _whoami(ctx, _):
    main = sys.modules["__main__"]
    return main.__spec__.name, os.getsid(0), ctx.rank


def _sigint_rank_1(ctx, _):
    if ctx.rank == 1:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(30)
    return ctx.rank


def _hang_everywhere(ctx, marker):
    with open(f"{marker}.{ctx.rank}", "w") as fh:
        fh.write(str(os.getpid()))
    time.sleep(60)


# ---------------------------------------------------------------------------------------------------- tests

@pytest.fixture
def no_leftovers():
    """Every process run_ranks starts is gone by the time it returns or raises."""
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    yield
    left = [p for p in me.children(recursive=True) if p.pid not in before]
    for proc in left:  # never leak into the next test, even when this one fails
        proc.kill()
        proc.wait(5)
    assert left == [], f"processes left behind: {left}"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_load_process_reuses_freed_memory_instead_of_faulting_it_in_again():
    """The second 64 MB block, after the first is freed, comes from pages already mapped (reuse_freed_memory);
    without it glibc maps it afresh and every page faults in again."""
    code = textwrap.dedent("""
        import resource, sys
        from fp8check.core.load.ranks import reuse_freed_memory
        if sys.argv[1] == "reuse":
            reuse_freed_memory()
        def touched():
            block = bytearray(64 << 20)
            block[::4096] = b"x" * len(block[::4096])
            return block
        first = touched()
        del first
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        block = touched()
        print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    """)
    faults = {mode: int(subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True,
                                       check=True, timeout=60).stdout) for mode in ("reuse", "default")}
    pages = (64 << 20) // 4096
    assert faults["default"] > pages // 2 and faults["reuse"] < pages // 10, faults


def test_backend_from_device():
    assert [backend_for(d) for d in ("cpu", "cuda", "cuda:1", "xpu:0")] == ["gloo", "nccl", "nccl", "xccl"]
    with pytest.raises(ValueError, match="mps"):
        backend_for("mps")


def test_refused_before_any_process_starts(no_leftovers):
    with pytest.raises(ValueError, match="module-level function"):
        run_ranks(2, lambda ctx, payload: None, None)
    in_main = lambda ctx, payload: None  # noqa: E731 - stands for a function a script defines
    in_main.__qualname__, in_main.__module__ = "job", "__main__"
    with pytest.raises(ValueError, match="not of __main__"):
        run_ranks(2, in_main, None)
    with pytest.raises(TypeError, match="pickle"):
        run_ranks(2, _collectives, threading.Lock())  # a payload that does not pickle
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match=r"--device cuda:0: 2 ranks need cuda:0..cuda:1, this machine has 0"):
            run_ranks(2, _collectives, None, device="cuda:0")


def test_planning_modules_do_not_import_torch():
    code = "import sys, fp8check.core.load.ranks, fp8check.core.model.sharding; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_two_gloo_ranks_all_reduce_and_all_gather(no_leftovers):
    results = run_ranks(2, _collectives, {"payload": 1}, device="cpu", timeout_s=60)
    assert [r[2:] for r in results] == [(0, 2, "cpu", {"payload": 1}), (1, 2, "cpu", {"payload": 1})]
    for total, gathered, *_ in results:
        assert total == 3.0
        assert torch.equal(gathered, torch.tensor([0.0, 0.0, 10.0, 10.0]))


def test_a_rank_that_raises_is_named_with_its_error(no_leftovers):
    with pytest.raises(RankFailure) as failure:
        run_ranks(2, _raise_on_rank_1, "checksum mismatch in layer 3", timeout_s=60)
    assert failure.value.rank == 1
    assert str(failure.value) == "rank 1: ValueError: checksum mismatch in layer 3"
    assert "_raise_on_rank_1" in failure.value.details  # the child's traceback, for --verbose


def test_a_hung_rank_is_stopped_within_the_timeout(no_leftovers, tmp_path):
    marker = str(tmp_path / "started")
    timeout = 2.0
    with pytest.raises(RankFailure, match=r"rank 1: did not finish within 2 s and was stopped \(still running: "
                                          r"ranks 1\)") as failure:
        run_ranks(2, _hang_on_rank_1, marker, timeout_s=timeout)
    stopped = time.time()
    assert failure.value.rank == 1
    # measured from the moment the hung rank started its work; it ignores SIGTERM, so SIGKILL ends it
    started = float(open(f"{marker}.1").read())
    assert stopped - started < timeout + STOP_GRACE_S + 2.0


def test_a_rank_killed_mid_run_is_reported(no_leftovers):
    start = time.monotonic()
    with pytest.raises(RankFailure, match="rank 1: killed by SIGKILL before returning a result") as failure:
        run_ranks(2, _sigkill_rank_1_mid_run, None, timeout_s=30)
    assert failure.value.rank == 1
    assert time.monotonic() - start < 30


def test_ranks_are_fresh_interpreters_of_fp8checks_entry_point_in_a_session_of_their_own(no_leftovers):
    """Never the caller's main module (here pytest's); a session of their own, so a terminal's Ctrl-C reaches only
    the parent."""
    results = run_ranks(2, _whoami, None, timeout_s=60)
    assert [(main, rank) for main, _, rank in results] == [("fp8check.core.load.ranks", r) for r in (0, 1)]
    assert all(sid != os.getsid(0) for _, sid, _ in results)


def test_a_rank_sent_sigint_dies_quietly_and_is_reported(no_leftovers, capfd):
    with pytest.raises(RankFailure, match="rank 1: killed by SIGINT before returning a result"):
        run_ranks(2, _sigint_rank_1, None, timeout_s=60)
    assert "Traceback" not in capfd.readouterr().err


def test_a_rank_that_exits_is_reported(no_leftovers):
    with pytest.raises(RankFailure, match="rank 1: exited with code 3 before returning a result"):
        run_ranks(2, _exit_on_rank_1, None, timeout_s=30)


def test_ranks_die_with_their_parent(tmp_path):
    """PR_SET_PDEATHSIG: SIGKILL the process that spawned the ranks, and the kernel kills the ranks too."""
    marker = str(tmp_path / "pid")
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {TESTS!r})
        import test_ranks
        from fp8check.core.load.ranks import run_ranks
        run_ranks(2, test_ranks._hang_everywhere, {marker!r}, timeout_s=600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", code])
    ranks = []
    try:
        deadline = time.monotonic() + 60
        while len(ranks) < 2 and time.monotonic() < deadline and parent.poll() is None:
            ranks = [int(open(f"{marker}.{r}").read() or 0) for r in range(2) if os.path.exists(f"{marker}.{r}")]
            time.sleep(0.1)
        assert len(ranks) == 2 and all(ranks), "the ranks did not start"
        procs = [psutil.Process(pid) for pid in ranks]
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        gone, alive = psutil.wait_procs(procs, timeout=10)
        assert alive == []
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        for pid in ranks:
            if psutil.pid_exists(pid):
                os.kill(pid, signal.SIGKILL)


def test_under_torchrun_every_rank_gets_every_result_and_the_failing_rank(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(f"""
        import json, os, sys
        sys.path.insert(0, {TESTS!r})
        import test_ranks
        from fp8check.core.load.ranks import RankFailure, run_ranks
        results = run_ranks(2, test_ranks._collectives, "tr", timeout_s=60)
        try:
            run_ranks(2, test_ranks._raise_on_rank_1, "bad scale", timeout_s=60, collective_timeout_s=2)
            failure = None
        except RankFailure as exc:
            failure = [exc.rank, str(exc)]
        with open(os.path.join({str(tmp_path)!r}, "rank" + os.environ["RANK"] + ".json"), "w") as fh:
            json.dump([os.environ["RANK"], [[r[0], r[1].tolist(), r[2]] for r in results], failure], fh)
    """))
    out = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                          str(script)], capture_output=True, text=True, timeout=120)
    # One file per rank: two processes printing to one pipe can interleave their lines.
    lines = sorted(json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)
                   if (tmp_path / f"rank{r}.json").exists())
    expected = [[3.0, [0.0, 0.0, 10.0, 10.0], 0], [3.0, [0.0, 0.0, 10.0, 10.0], 1]]
    assert lines == [[str(r), expected, [1, "rank 1: ValueError: bad scale"]] for r in range(2)], out.stderr[-2000:]

"""Run N tensor-parallel ranks as real torch.distributed processes, and never leave one behind.

Two ways in, one API (`run_ranks`):
- started by fp8check: N fresh interpreters running fp8check's own entry point (`python -m
  fp8check.core.load.ranks FD PARENT_PID`, the end of this module), as torchrun starts its workers. None
  re-imports the caller's main module, so a script without `if __name__ == "__main__":`, `python - <<EOF`, a
  notebook and the CLI start ranks alike. Each rank talks to the parent over its own socket pair, inherited as a
  file descriptor that only these two processes hold: the set-up (rank, device, the store's port, the parent's
  sys.path) as JSON, then the target and payload pickled, and back its report, pickled by value. The parent
  holds the rendezvous store itself (a TCPStore bound to 127.0.0.1 port 0, so the free port is the kernel's
  choice and cannot be taken between choosing and binding); each rank joins it as a client. Each rank asks Linux
  to SIGKILL it when the parent dies (PR_SET_PDEATHSIG), so a killed fp8check cannot leave ranks behind. Ranks
  run in a session of their own: a terminal's Ctrl-C reaches only the parent, which stops them (SIGTERM, quiet)
  and lets its KeyboardInterrupt go on; a SIGINT sent to a rank itself ends it quietly too (the default action,
  no KeyboardInterrupt traceback), and the parent names it as the rank killed by SIGINT.
- under torchrun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT set): this process is one rank; it joins
  torchrun's store (a fresh prefix per run), posts how it ended there, and, when every rank succeeded, every
  rank gets every rank's result over the process group.

Bounded everywhere: the rendezvous (`init_timeout_s`), each collective (`collective_timeout_s`, the process
group's timeout) and the whole run (`timeout_s`, enforced by the parent). When a rank raises, dies (a signal,
`os._exit`) or outlives the run's timeout, the parent stops the others (SIGTERM, then SIGKILL), joins every
process and raises RankFailure naming the rank and its error; the child's traceback text rides along.
torch is imported only inside functions: `inspect` never pays for it. `reuse_freed_memory` tunes a `load`
process's allocator (the CLI's and each rank's).
"""

from __future__ import annotations

import ctypes
import datetime
import itertools
import json
import os
import pickle
import signal
import site
import socket
import subprocess
import sys
import time
import traceback
from multiprocessing import connection
from typing import Any, Callable, NamedTuple, TypeVar

from fp8check.core.errors import InputError

T = TypeVar("T")

BACKENDS = {"cpu": "gloo", "cuda": "nccl", "xpu": "xccl"}
TORCHRUN_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
STOP_GRACE_S = 2.0      # SIGTERM, then this long before SIGKILL
SETTLE_S = 0.5          # after a first failure, how long to collect the others' reports to find the root cause
RANK_MODULE = "fp8check.core.load.ranks"
_PR_SET_PDEATHSIG = 1   # linux/prctl.h
_TORCHRUN_CALLS = itertools.count()


class RankContext(NamedTuple):
    """What a rank's target gets: who it is, where it computes, and the process group to talk over."""

    rank: int
    world_size: int
    device: str                 # "cpu", or this rank's own accelerator, e.g. "cuda:1"
    group: Any                  # torch.distributed.ProcessGroup (the default group)
    collective_timeout_s: float


class RankFailure(Exception):
    """A rank raised, died or hung; `rank` is the one that failed first, `details` its traceback text."""

    def __init__(self, rank: int, message: str, details: str = ""):
        super().__init__(f"rank {rank}: {message}")
        self.rank = rank
        self.message = message
        self.details = details


def backend_for(device: str) -> str:
    """The torch.distributed backend of a device: gloo on CPU, NCCL on CUDA (and ROCm), XCCL on Intel XPU."""
    kind = device.split(":", 1)[0]
    if kind not in BACKENDS:
        raise ValueError(f"no torch.distributed backend for device {device!r} (expected cpu, cuda[:i] or xpu[:i])")
    return BACKENDS[kind]


def under_torchrun() -> bool:
    return all(key in os.environ for key in TORCHRUN_ENV)


def run_ranks(world_size: int, target: Callable[[RankContext, Any], T], payload: Any, device: str = "cpu",
              timeout_s: float = 600.0, collective_timeout_s: float | None = None,
              init_timeout_s: float = 60.0) -> list[T]:
    """Run `target(ctx, payload)` on `world_size` ranks and return their results in rank order.

    `target` must be a module-level function of an importable module (it is pickled by reference, and a rank
    never imports the caller's `__main__`); payload and results must pickle.
    Ranks on an accelerator get one device each: rank r of "cuda:i" (or "cuda") runs on cuda:i+r.
    Timeouts: `init_timeout_s` from starting the ranks to the last one joining the process group, `timeout_s` from
    then to the last result, `collective_timeout_s` (default `timeout_s`) for any one collective inside the target.
    """
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    if "<" in getattr(target, "__qualname__", "<") or getattr(target, "__module__", "__main__") == "__main__":
        raise ValueError(f"run_ranks: {target!r} must be a module-level function of an importable module, not of "
                         f"__main__ (a rank imports it by name, and never the caller's main module)")
    backend = backend_for(device)
    collective_timeout_s = collective_timeout_s or timeout_s
    if under_torchrun():
        return _run_in_torchrun(world_size, target, payload, device, backend, collective_timeout_s, init_timeout_s)
    return _spawn(world_size, target, payload, device, backend, timeout_s, collective_timeout_s, init_timeout_s)


# ------------------------------------------------------------------------------------------------- the parent

def _spawn(world_size: int, target: Callable, payload: Any, device: str, backend: str, timeout_s: float,
           collective_timeout_s: float, init_timeout_s: float) -> list:
    import torch.distributed as dist

    _check_devices(device, world_size)
    work = pickle.dumps((target, payload), protocol=pickle.HIGHEST_PROTOCOL)  # refused here, before any rank starts
    store = dist.TCPStore("127.0.0.1", 0, None, True, datetime.timedelta(seconds=init_timeout_s),
                          wait_for_workers=False)
    setup = {"world_size": world_size, "backend": backend, "port": store.port, "init_timeout_s": init_timeout_s,
             "collective_timeout_s": collective_timeout_s,
             "sys_path": [entry for entry in sys.path if isinstance(entry, str)]}
    procs, conns = [], []
    try:
        for _ in range(world_size):
            proc, conn = _start_rank()
            procs.append(proc)
            conns.append(conn)
        for rank, conn in enumerate(conns):  # every rank is starting up meanwhile, and reads its work first
            try:
                conn.send_bytes(json.dumps({**setup, "rank": rank, "device": _rank_device(device, rank)}).encode())
                conn.send_bytes(work)
            except OSError:
                pass  # the rank died before reading its work: _collect reports how it ended
        return _collect(procs, conns, timeout_s, init_timeout_s)
    finally:
        _stop(procs)
        for conn in conns:
            conn.close()


def _start_rank() -> tuple[subprocess.Popen, connection.Connection]:
    """A fresh interpreter running RANK_MODULE in a session of its own, and the parent's end of its socket pair."""
    mine, theirs = socket.socketpair()
    with mine, theirs:  # the parent's copy of the rank's end closes here: the rank's death reads as EOF
        proc = subprocess.Popen([sys.executable, "-m", RANK_MODULE, str(theirs.fileno()), str(os.getpid())],
                                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, start_new_session=True,
                                env=_rank_env())
        return proc, connection.Connection(mine.detach())


def _rank_env() -> dict[str, str]:
    """The parent's environment; when fp8check was imported from outside the interpreter's site directories (a
    source tree on sys.path), PYTHONPATH leads to it, so that `-m` finds the same fp8check."""
    root = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))  # holds fp8check/
    env = dict(os.environ)
    if root not in {os.path.realpath(p) for p in (*site.getsitepackages(), site.getusersitepackages())}:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (root, env.get("PYTHONPATH"))))
    return env


def _collect(procs: list, conns: list, timeout_s: float, init_timeout_s: float) -> list:
    """Wait for every rank's report; on the first failure gather what else arrives, stop everyone, raise.

    Start-up (a fresh interpreter, importing torch, the rendezvous) is bounded by `init_timeout_s`; the run by
    `timeout_s`, counted from the moment the last rank joined the process group."""
    results: dict[int, Any] = {}
    failures: list[tuple[int, float, int, str, str]] = []   # (priority, time, rank, message, details)
    pending, joined = set(range(len(procs))), set()
    deadline = time.monotonic() + init_timeout_s
    settle_until = None
    while pending:
        now = time.monotonic()
        until = min(deadline, settle_until) if settle_until else deadline
        if now >= until:
            break
        connection.wait([conns[r] for r in pending], timeout=until - now)  # a report, or EOF: the rank is gone
        for rank in sorted(pending):
            for kind, value in _reports(rank, procs[rank], conns[rank]):
                if kind == "joined":
                    joined.add(rank)
                    if len(joined) == len(procs):
                        deadline = time.monotonic() + timeout_s
                    continue
                pending.discard(rank)
                if kind == "ok":
                    results[rank] = value
                else:
                    failures.append(value)
                    settle_until = settle_until or time.monotonic() + SETTLE_S
    if failures:
        # A rank that vanished without a word is the root cause of its peers' broken collectives; among ranks
        # that raised, the earliest did (a peer's collective only fails after the raising rank has reported).
        _, _, rank, message, details = min(failures)
        raise RankFailure(rank, message, details)
    if pending:
        hung = sorted(pending)
        late = sorted(pending - joined)
        what = (f"did not join the process group within {init_timeout_s:g} s" if late else
                f"did not finish within {timeout_s:g} s")
        raise RankFailure((late or hung)[0], f"{what} and was stopped (still running: ranks "
                                             f"{', '.join(map(str, hung))})")
    return [results[rank] for rank in range(len(procs))]


def _reports(rank: int, proc: subprocess.Popen, conn) -> list[tuple[str, Any]]:
    """What a rank has said since we last looked: ("joined", None), ("ok", result), ("failed", failure)."""
    out: list[tuple[str, Any]] = []
    while conn.poll():
        try:
            kind, *rest = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            break  # the rank's end closed: it is gone
        except Exception as exc:  # noqa: BLE001 - a result that cannot be rebuilt here is that rank's failure
            return [*out, ("failed", (1, time.time(), rank, f"its result could not be received: {exc}", ""))]
        if kind == "joined":
            out.append(("joined", None))
            continue
        if kind == "ok":
            return [*out, ("ok", rest[0])]
        message, details, when = rest
        return [*out, ("failed", (1, when, rank, message, details))]
    else:
        return out
    try:
        message = _death(proc.wait(STOP_GRACE_S))
    except subprocess.TimeoutExpired:
        message = "closed its channel to fp8check before returning a result"
    return [*out, ("failed", (0, time.monotonic(), rank, message, ""))]


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name} before returning a result"
    return f"exited with code {exitcode} before returning a result"


def _stop(procs: list[subprocess.Popen]) -> None:
    """Terminate every live rank, give them STOP_GRACE_S, kill the rest, and reap them all."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for proc in procs:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _check_devices(device: str, world_size: int) -> None:
    """Ranks on an accelerator need one device each; say so before starting any."""
    kind, _, index = device.partition(":")
    if kind == "cpu":
        return
    import torch

    module = getattr(torch, kind)
    first = int(index or 0)
    count = module.device_count() if module.is_available() else 0
    if first + world_size > count:
        raise InputError(f"--device {device}: {world_size} ranks need {kind}:{first}..{kind}:{first + world_size - 1}, "
                         f"this machine has {count} {kind.upper()} device(s)")


def _rank_device(device: str, rank: int) -> str:
    kind, _, index = device.partition(":")
    return "cpu" if kind == "cpu" else f"{kind}:{int(index or 0) + rank}"


# -------------------------------------------------------------------------------------------------- a rank

# glibc's mallopt parameters (malloc.h) and the size below which `load` keeps freed memory for reuse.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_REUSE_BELOW = 256 << 20


def reuse_freed_memory() -> None:
    """A `load` process (the CLI's, and every rank's) keeps freed blocks below 256 MB for reuse. glibc maps each
    block above its mmap threshold (128 KB, adapting up to 32 MB) afresh and returns it on free, and trims the
    heap's top past 128 KB: `load` allocates and frees the same few sizes per chunk and per module (fp32 rows,
    fused weights), and each came back as new pages to fault in (600k minor faults, 2.3 s of system time on a
    2.4 GB checkpoint; 75k, 0.6 s, with this; peak RSS the same). Elsewhere (musl, macOS) nothing changes."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, _REUSE_BELOW)
    mallopt(_M_TRIM_THRESHOLD, _REUSE_BELOW)


def rank_main(fd: int, parent_pid: int) -> None:
    """A rank's process (RANK_MODULE): die with the parent, read the work from socket `fd`, join the parent's store,
    run the target, report, and leave at once (os._exit: nothing left to collect or flush but stdio)."""
    _die_with_parent(parent_pid)
    os.set_inheritable(fd, False)  # whatever this rank starts must not hold the parent's EOF open
    conn = connection.Connection(fd)
    try:
        setup = json.loads(conn.recv_bytes())
    except (EOFError, OSError):
        os._exit(1)  # the parent stopped before handing out the work
    sys.path[:] = setup["sys_path"]  # the target's module is found as the parent found it
    reuse_freed_memory()
    try:
        import torch.distributed as dist

        target, payload = pickle.loads(conn.recv_bytes())  # the parent's own bytes, from the parent's own socket
        store = dist.TCPStore("127.0.0.1", setup["port"], None, False,
                              datetime.timedelta(seconds=setup["init_timeout_s"]))
        ctx = _join_group(setup["rank"], setup["world_size"], setup["device"], setup["backend"],
                          setup["collective_timeout_s"], {"store": store})
        try:
            conn.send_bytes(pickle.dumps(("joined",)))
            outcome = _call(target, ctx, payload)
        finally:
            dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - every failure, SystemExit included, goes to the parent
        outcome = _error(exc)
    try:
        try:
            report = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - e.g. a result that does not pickle
            report = pickle.dumps(_error(exc))
        conn.send_bytes(report)
    except OSError:
        pass  # the parent has gone or stopped listening; nothing left to tell
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _join_group(rank: int, world_size: int, device: str, backend: str, collective_timeout_s: float,
                rendezvous: dict) -> RankContext:
    import torch
    import torch.distributed as dist

    kind = device.split(":", 1)[0]
    if kind == "cpu":
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // world_size))  # the ranks share the host's cores
    else:
        getattr(torch, kind).set_device(device)
    dist.init_process_group(backend, rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=collective_timeout_s), **rendezvous)
    return RankContext(rank, world_size, device, dist.group.WORLD, collective_timeout_s)


def _call(target: Callable, ctx: RankContext, payload: Any) -> tuple:
    """("ok", result), or the target's error: reported rather than raised, so that the others learn of it."""
    try:
        return "ok", target(ctx, payload)
    except Exception as exc:  # noqa: BLE001
        return _error(exc)


def _error(exc: BaseException) -> tuple:
    return "error", f"{type(exc).__name__}: {exc}", traceback.format_exc(), time.time()


def _die_with_parent(parent_pid: int) -> None:
    """PR_SET_PDEATHSIG: the kernel SIGKILLs this rank when fp8check dies, however it dies (Linux only)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


# ---------------------------------------------------------------------------------------------- under torchrun

def _run_in_torchrun(world_size: int, target: Callable, payload: Any, device: str, backend: str,
                     collective_timeout_s: float, init_timeout_s: float) -> list:
    """This process is one of torchrun's ranks: run the target here; every rank gets every rank's result.

    Each rank first posts how it ended (JSON) to torchrun's rendezvous store, which answers even when a rank
    that raised mid-run has left the group's collectives out of step; only when every rank succeeded do the
    results travel, over the (then idle) process group."""
    import torch.distributed as dist

    env_world = int(os.environ["WORLD_SIZE"])
    if env_world != world_size:
        raise InputError(f"--tp {world_size} under torchrun with WORLD_SIZE={env_world}: start torchrun with "
                         f"--nproc-per-node {world_size}")
    if os.environ["MASTER_PORT"] == "0":  # torchrun --master-port 0 passes 0 on: torch's own env:// fails too
        raise InputError("torchrun set MASTER_PORT=0, which no rank can connect to: use torchrun --standalone or "
                         "--master-port with a real port")
    rank = int(os.environ["RANK"])
    kind, _, index = device.partition(":")
    local = "cpu" if kind == "cpu" else f"{kind}:{int(index or 0) + int(os.environ['LOCAL_RANK'])}"
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), None, False,
                          datetime.timedelta(seconds=init_timeout_s))
    # Every process calls run_ranks in the same order, so the call count names the same run on every rank; a
    # fresh prefix per run keeps a new group from reading the last one's stale gloo addresses.
    prefix = f"fp8check/{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}/{next(_TORCHRUN_CALLS)}/"
    ctx = _join_group(rank, world_size, local, backend, collective_timeout_s,
                      {"store": dist.PrefixStore(prefix, store)})
    try:
        outcome = _call(target, ctx, payload)
        status = list(outcome[1:]) if outcome[0] == "error" else []
        store.set(f"{prefix}status/{rank}", json.dumps(status))
        keys = [f"{prefix}status/{r}" for r in range(world_size)]
        wait_s = collective_timeout_s + init_timeout_s  # a peer stuck in a collective gives up first, then reports
        try:
            store.wait(keys, datetime.timedelta(seconds=wait_s))
        except Exception:  # noqa: BLE001 - the store raises a timeout of its own type; say which rank is silent
            silent = [r for r, key in enumerate(keys) if not store.check([key])]
            raise RankFailure(silent[0], f"did not report within {wait_s:g} s") from None
        failed = [(s[2], r, s[0], s[1]) for r, s in enumerate(json.loads(store.get(key)) for key in keys) if s]
        if failed:
            _, failed_rank, message, details = min(failed)
            raise RankFailure(failed_rank, message, details)
        results: list = [None] * world_size
        dist.all_gather_object(results, outcome[1], group=ctx.group)
        return results
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":  # a rank's process, as _start_rank starts it
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    from fp8check.core.load.ranks import rank_main  # this file again, as the module the targets import

    rank_main(int(sys.argv[1]), int(sys.argv[2]))

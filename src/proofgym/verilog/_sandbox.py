"""Running untrusted compile-and-simulate jobs in bubblewrap, under resource limits.

One job is one shell script run in one sandbox launch (a launch costs 4-8 ms, as much as a small
compile, so compile and simulate share it). The recipe (``docs/verilog-judging.md``): every
namespace unshared (no network but ``lo``), a fresh job directory bound read-write at ``/work``,
``/usr`` read-only, a small private ``/tmp``, an empty environment, a new session, and the sandbox
dies with its parent. Narrower than that recipe: no ``/proc`` and only ``/dev/null`` of ``/dev`` (the
tools need nothing else; less to see, and each mount left out makes a launch cheaper). Outside it:
rlimits applied before ``exec`` (by ``prlimit`` from util-linux when present, so that no Python runs
between fork and exec in a threaded parent; else by a ``preexec_fn``), a new process group killed at
the wall-clock limit, stdin from ``/dev/null``, stdout and stderr merged and capped.

Run as root, the job does not stay root: bubblewrap would map root to root in its user namespace
(with every capability dropped, but still the owner of root's files), so the job is started as the
unprivileged user ``nobody`` instead (switched by ``subprocess`` itself, no Python in the child), and
its job directory is handed to that user. See :func:`job_user`.

A script can stop at a *checkpoint* (the shell function ``checkpoint``) and let Python inspect the
job directory (and add files to it) before it goes on: the judge checks the preprocessed design
there, and only then writes the testbench, all in the same launch. When the job has ended (however
it ended), an ``on_finish`` callback may read what it left in the job directory before it is removed.
"""

from __future__ import annotations

import functools
import logging
import os
import pwd
import resource
import secrets
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from proofgym.core import text_bytes
from proofgym.verilog._toolchain import VERILOG_INSTALL_HINT, detect_toolchain

_LOG = logging.getLogger("proofgym.verilog")

_GATE = ".gate"  # FIFO in the job directory the checkpoint reads Python's answer from
_NOBODY = 65534  # the kernel's overflow user, where the password database has no "nobody"
_SETTLE_S = 2.0  # how long a killed job's processes may take to be gone


class SandboxUnavailable(RuntimeError):
    """bubblewrap cannot start here, and running untrusted code without it was not explicitly allowed."""


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one launch: rlimits for every process in it, and the parent's caps."""

    wall_s: float = 30.0
    cpu_s: int = 20
    memory_bytes: int = 2 << 30
    file_size_bytes: int = 16 << 20
    open_files: int = 64
    output_bytes: int = 64 << 10
    tmp_bytes: int = 64 << 20  # the private /tmp (compiler temporaries)


@dataclass(frozen=True)
class SandboxResult:
    """What one launch did.

    ``exit_code`` is the script's exit status (``None`` when it was killed: ``timed_out`` or output
    over the cap). ``output`` is stdout and stderr merged, at most ``output_bytes`` of it
    (``truncated`` when more was produced: the job was killed then). ``killed_by_limit`` names the
    limit that ended the job: ``"wall_time"``, ``"output"``, ``"cpu"`` or ``"file_size"``.
    ``sandboxed`` is ``False`` only for an explicitly allowed run without bubblewrap. ``uid`` is the
    user the job ran as (not root's 0 when this process is root: see :func:`job_user`).
    """

    exit_code: int | None
    output: str
    timed_out: bool
    truncated: bool
    duration_s: float
    killed_by_limit: str | None
    sandboxed: bool
    uid: int = -1


def limit_from_status(status: int | None) -> str | None:
    """The rlimit a process exit status reports (``128 + signal`` from a shell, or ``-signal``), if any."""
    if status is None:
        return None
    signum = -status if status < 0 else status - 128 if status > 128 else 0
    limits: dict[int, str] = {signal.SIGXCPU: "cpu", signal.SIGXFSZ: "file_size"}
    return limits.get(signum)


class Sandbox:
    """Runs job scripts in bubblewrap (``bwrap``), or, only when ``allow_unsandboxed`` is set, without it.

    ``bwrap`` is the program to use (``None``: do not sandbox at all, which also requires
    ``allow_unsandboxed``). When bubblewrap is missing or cannot start (checked once per process with
    a trivial launch), :meth:`run` raises :class:`SandboxUnavailable` unless ``allow_unsandboxed`` is
    set, in which case it logs a warning once and runs the job bare, with the same limits: never a
    silent fallback. Thread-safe; picklable.
    """

    def __init__(self, *, bwrap: str | None = "bwrap", limits: SandboxLimits | None = None,
                 allow_unsandboxed: bool = False) -> None:
        if bwrap is None and not allow_unsandboxed:
            raise ValueError("bwrap=None runs model-written code without a sandbox; it requires allow_unsandboxed=True")
        self.bwrap = bwrap
        self.limits = limits or SandboxLimits()
        self.allow_unsandboxed = allow_unsandboxed

    @property
    def sandboxed(self) -> bool:
        """Whether jobs run in bubblewrap; raises :class:`SandboxUnavailable` when they cannot run at all."""
        if self.bwrap is None:
            return False
        problem = _probe(self.bwrap)
        if problem is None:
            return True
        if not self.allow_unsandboxed:
            raise SandboxUnavailable(
                f"{problem}; refusing to run model-written Verilog without a sandbox. Install bubblewrap "
                f"(`{VERILOG_INSTALL_HINT}`) and allow unprivileged user namespaces, or set allow_unsandboxed=True "
                "to accept the risk explicitly"
            )
        _warn_unsandboxed(problem)
        return False

    def run(self, script: str, files: Mapping[str, str | bytes], *,
            on_checkpoint: Callable[[Path], bool] | None = None,
            on_finish: Callable[[Path], None] | None = None) -> SandboxResult:
        """Run ``sh -c script`` in a fresh job directory holding ``files`` (plain names only).

        The script runs with ``/work`` (the job directory) as its working directory and may call
        ``checkpoint``: the job then pauses while ``on_checkpoint(job_dir)`` runs here; the call
        returns success in the script when that returns ``True``, failure otherwise (or without a
        callback). Time spent in the callback counts toward the wall-clock limit. Files the callback
        adds must be readable by :func:`job_user` (``write_job_file`` makes them so). ``on_finish(job_dir)``
        runs after the job has ended and been killed, before the job directory is removed.
        """
        sandboxed = self.sandboxed
        limits = self.limits
        nonce = secrets.token_hex(12)
        marker = f"{nonce}:checkpoint\n".encode()
        prelude = (f'checkpoint() {{ echo "{nonce}:checkpoint"; '
                   f'read -r answer < {_GATE} && [ "$answer" = go ]; }}\n')
        user = job_user()
        job = Path(tempfile.mkdtemp(prefix="proofgym-verilog-"))
        try:
            for name, content in files.items():
                write_job_file(job, name, content)
            os.mkfifo(job / _GATE, 0o600)
            if user is not None:  # the job's own directory and gate belong to the user it runs as
                os.chown(job, *user)
                os.chown(job / _GATE, *user)
            # Held open read-write for the whole job: the script's open never blocks and nothing
            # written is lost, whenever the script gets to read it.
            gate = os.open(job / _GATE, os.O_RDWR)
            try:
                result = self._launch(job, prelude + script, sandboxed, limits, marker, gate, on_checkpoint, user)
            finally:
                os.close(gate)
            if on_finish is not None:
                on_finish(job)
            return result
        finally:
            remove_job_dir(job)

    def _launch(self, job: Path, script: str, sandboxed: bool, limits: SandboxLimits, marker: bytes, gate: int,
                on_checkpoint: Callable[[Path], bool] | None, user: tuple[int, int] | None) -> SandboxResult:
        inner = ["/bin/sh", "-c", script]
        if sandboxed:
            argv = _bwrap_argv(self.bwrap, job, limits) + inner  # type: ignore[arg-type]
            env: dict[str, str] = {}
        else:
            argv, env = inner, {"PATH": "/usr/bin:/bin", "TMPDIR": str(job)}
        prlimit = detect_toolchain(bwrap=None).prlimit
        if prlimit is not None:
            argv = [prlimit, *_prlimit_args(limits), "--", *argv]
        start = time.perf_counter()
        deadline = start + limits.wall_s
        proc = subprocess.Popen(
            argv, cwd=job, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True, close_fds=True, **_as_user(user),  # type: ignore[call-overload]
            # preexec_fn is not safe in a threaded parent; it is only the fallback when prlimit is absent.
            preexec_fn=None if prlimit is not None else functools.partial(_set_rlimits, limits),
        )
        output = bytearray()
        killed: str | None = None
        try:
            pidfd = os.pidfd_open(proc.pid)
            try:
                assert proc.stdout is not None
                fd = proc.stdout.fileno()
                # poll, not select: a busy parent (a trainer) may hold descriptors above FD_SETSIZE.
                poller = select.poll()
                poller.register(fd, select.POLLIN)
                poller.register(pidfd, select.POLLIN)
                while True:
                    remaining = deadline - time.perf_counter()
                    if remaining <= 0:
                        killed = "wall_time"
                        break
                    ready = {ready_fd for ready_fd, _ in poller.poll(remaining * 1000)}
                    if fd not in ready:
                        if pidfd in ready:
                            # The job ended and its output is drained; a process it left behind may
                            # hold the pipe open, but nothing it writes now belongs to the job.
                            break
                        continue
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    output += chunk
                    if len(output) > limits.output_bytes:
                        killed = "output"
                        break
                    while (found := output.find(marker)) >= 0:
                        del output[found:found + len(marker)]
                        go = on_checkpoint is not None and on_checkpoint(job)
                        os.write(gate, b"go\n" if go else b"stop\n")
                if killed is None and not _exits_within(pidfd, deadline - time.perf_counter()):
                    killed = "wall_time"
            finally:
                # The group leader is not reaped yet, so its group id cannot have been reused: this only
                # ever hits our job, and takes down anything it left behind.
                _killpg(proc.pid)
                os.close(pidfd)
        finally:
            proc.wait()
            if proc.stdout is not None:
                # Inside bubblewrap the job's processes die *after* bwrap itself (with its pid namespace),
                # and may still write to the job directory meanwhile: each holds the output pipe, so
                # its end (or a short bound) says they are gone before the directory is removed.
                _wait_for_writers(proc.stdout.fileno(), _SETTLE_S)
                proc.stdout.close()
        duration = time.perf_counter() - start
        truncated = len(output) > limits.output_bytes
        text = bytes(output[: limits.output_bytes]).decode("utf-8", errors="replace")
        exit_code = None if killed else proc.returncode
        return SandboxResult(
            exit_code=exit_code, output=text, timed_out=killed == "wall_time", truncated=truncated,
            duration_s=duration, killed_by_limit=killed or limit_from_status(exit_code), sandboxed=sandboxed,
            uid=os.geteuid() if user is None else user[0],
        )


def _wait_for_writers(fd: int, seconds: float) -> None:
    """Read and drop what is left on the job's output pipe until every writer has closed it, or ``seconds``."""
    deadline = time.perf_counter() + seconds
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while (remaining := deadline - time.perf_counter()) > 0:
        if poller.poll(remaining * 1000) and not os.read(fd, 65536):
            return


def remove_job_dir(job: Path, *, within_s: float = _SETTLE_S) -> None:
    """Remove a job directory, retrying while a dying job may still add to it; never raises.

    What cannot be removed within ``within_s`` (a job process that outlived every kill) is left,
    with a warning: a judge's verdict is never lost to its clean-up.
    """
    deadline = time.perf_counter() + within_s
    while True:
        try:
            shutil.rmtree(job)
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if time.perf_counter() >= deadline:
                _LOG.warning("could not remove the job directory %s: %s", job, exc)
                return
            time.sleep(0.01)


def _exits_within(pidfd: int, seconds: float) -> bool:
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(max(0.0, seconds) * 1000))


def _bwrap_argv(bwrap: str, job: Path, limits: SandboxLimits) -> list[str]:
    return [
        bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
        "--symlink", "usr/bin", "/bin", "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
        "--dev-bind", "/dev/null", "/dev/null", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
        "--bind", str(job), "/work", "--chdir", "/work",
        "--clearenv", "--setenv", "PATH", "/usr/bin", "--setenv", "TMPDIR", "/tmp", "--",
    ]


def _prlimit_args(limits: SandboxLimits) -> list[str]:
    # The CPU hard limit is one second above the soft one, so the job first gets SIGXCPU (reported as
    # the CPU limit) rather than a bare SIGKILL.
    return [
        f"--as={limits.memory_bytes}", f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}",
        f"--fsize={limits.file_size_bytes}", f"--nofile={limits.open_files}", "--core=0",
    ]


def _set_rlimits(limits: SandboxLimits) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_bytes, limits.file_size_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def write_job_file(job: Path, name: str, content: str | bytes) -> None:
    """Write ``job/name``, readable by the job whatever the umask (the job may run as another user)."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"job file names must be plain names, got {name!r}")
    # Text a model wrote may hold lone surrogates or NUL: they become U+FFFD (and a syntax error), not an exception.
    data = text_bytes(content) if isinstance(content, str) else content
    path = job / name
    path.write_bytes(data)
    os.chmod(path, 0o644)


@functools.lru_cache(maxsize=1)
def job_user() -> tuple[int, int] | None:
    """``(uid, gid)`` that jobs run as when this process is root: the unprivileged ``nobody`` (uid 65534
    where the password database has no such user); ``None`` otherwise (jobs run as this process's user).

    bubblewrap started by root keeps the job root inside its user namespace (mapped to the real root,
    with no capabilities): still the owner of every root-owned file a mount exposes. As ``nobody`` it
    owns nothing but its job directory, in an unprivileged user namespace like anyone's.
    """
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("nobody")
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        return _NOBODY, _NOBODY


def _as_user(user: tuple[int, int] | None) -> dict[str, object]:
    """``subprocess`` arguments that start the child as ``user`` (switched in C, before ``exec``)."""
    return {} if user is None else {"user": user[0], "group": user[1], "extra_groups": []}


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str) -> str | None:
    """Why bubblewrap cannot run jobs here (``None`` when it can): one trivial launch per process."""
    toolchain = detect_toolchain(bwrap=bwrap)
    if toolchain.bwrap is None:
        return f"bwrap not installed; bubblewrap ({bwrap!r}) is not on PATH"
    user = job_user()
    as_whom = "" if user is None else f" as uid {user[0]} (jobs never run as root)"
    with tempfile.TemporaryDirectory(prefix="proofgym-probe-") as job:
        argv = _bwrap_argv(toolchain.bwrap, Path(job), SandboxLimits()) + ["/bin/true"]
        try:
            if user is not None:
                os.chown(job, *user)
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, env={},
                                  **_as_user(user))  # type: ignore[call-overload]
        except (OSError, subprocess.SubprocessError) as exc:
            return f"sandbox unavailable; bubblewrap ({toolchain.bwrap}) could not be started{as_whom}: {exc}"
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        reason = detail[-1] if detail else f"exit status {done.returncode}"
        return f"sandbox unavailable; bubblewrap ({toolchain.bwrap}) cannot create a sandbox here{as_whom}: {reason}"
    return None


@functools.lru_cache(maxsize=4)
def _warn_unsandboxed(problem: str) -> None:
    # Once per process and reason: loud enough to be seen, not once per job.
    _LOG.warning("%s; running model-written Verilog WITHOUT a sandbox because allow_unsandboxed=True", problem)


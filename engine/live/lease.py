"""The writer lease: one writer per index directory, across processes, that a writer which
stops making progress loses.

An exclusive `flock` on `<index>/writer.lock`, which the OS releases when its holder exits or
dies, so a dead writer never blocks the others; the file holds the holder's pid for status.

A stopped writer (SIGSTOP, or a thread blocked forever) keeps its flock, so the holder also
beats: it touches the lock file (its modification time) whenever it makes progress. A standby
that finds the lock held but not touched for `stall_seconds` takes the lease over: it locks a
fresh file and renames it over `writer.lock`, so the old holder's lock now guards a file that
is no longer the lease. The old holder checks `still_held()` (same inode at the path) before
each step of work and steps down when it wakes up. The holder beats while it works, also
inside one large batch, so a busy holder is never taken for a stalled one. Should a standby
take over from one that was merely slow, the old holder steps down and lets go of Tantivy's
writer lock within moments: the new holder waits for that lock up to `stall_seconds` more
(`waited_out`) and then writes the intact generation; only a holder that never lets go (truly
stopped) makes it write a new generation (`LiveWriter`).
"""

import fcntl
import os
import tempfile
import time
from pathlib import Path

LEASE_FILE = "writer.lock"
TAKEOVER_FILE = "writer.takeover"
"""Flocked while a standby replaces a stalled holder, so two standbys never both do."""
STALL_SECONDS = 60.0
"""A holder silent this long is stalled. Longer than any one step of work that cannot beat
(a Tantivy commit of a large rebuild)."""


# -- the writer lease ----------------------------------------------------------------------
class WriterLease:
    """An exclusive, non-blocking `flock` on `<index>/writer.lock` holding the holder's pid.

    flock belongs to the open file, so two LiveIndex objects in one process exclude each other
    as two processes do, and the kernel releases it when the holder dies (even by SIGKILL).
    """

    def __init__(self, base: Path, *, stall_seconds: float = STALL_SECONDS) -> None:
        self.path = Path(base) / LEASE_FILE
        self.stall_seconds = stall_seconds
        self.took_from_stalled = False
        """Whether the lease was taken from a holder that stopped beating (its Tantivy writer
        lock is still held, so the live generation cannot be written)."""
        self._taken_at = 0.0
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if _try_lock(fd):
            self._hold(fd, took_from_stalled=False)
            return True
        stalled = time.time() - os.fstat(fd).st_mtime > self.stall_seconds
        os.close(fd)
        return stalled and self._take_from_stalled()

    def beat(self) -> None:
        """Progress: touch the lock file, so standbys know this holder is not stalled."""
        if self._fd is not None:
            os.utime(self._fd)

    def waited_out(self) -> bool:
        """Whether the holder this lease was taken from has had `stall_seconds` since the
        takeover to let go of the generation (a busy holder steps down well within it)."""
        return time.monotonic() - self._taken_at > self.stall_seconds

    def still_held(self) -> bool:
        """Whether `writer.lock` is still the file this holder locked (not replaced by a
        standby that found this holder stalled)."""
        if self._fd is None:
            return False
        try:
            return os.stat(self.path).st_ino == os.fstat(self._fd).st_ino
        except FileNotFoundError:
            return False

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
            self.took_from_stalled = False

    def _hold(self, fd: int, *, took_from_stalled: bool) -> None:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        self.took_from_stalled = took_from_stalled
        self._taken_at = time.monotonic()

    def _take_from_stalled(self) -> bool:
        """Replace the lease file with a fresh one locked by us, unless another standby is
        doing so or the holder beat meanwhile."""
        guard = os.open(self.path.with_name(TAKEOVER_FILE), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if not _try_lock(guard):
                return False
            try:
                if time.time() - self.path.stat().st_mtime <= self.stall_seconds:
                    return False  # it beat, or another standby just took over
            except FileNotFoundError:
                pass
            fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".writer.lock.")
            os.fchmod(fd, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)  # a file nobody else knows yet: never waits
            self._hold(fd, took_from_stalled=True)
            os.replace(temp, self.path)
            return True
        finally:
            os.close(guard)  # closing releases the guard's flock


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def writer_pid(base: Path) -> int | None:
    """The pid the last lease holder wrote, when that process is still alive."""
    try:
        pid = int((Path(base) / LEASE_FILE).read_text().strip() or 0)
    except (OSError, ValueError):
        return None
    if pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid

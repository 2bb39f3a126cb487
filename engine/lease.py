"""The writer lease: one writer per index directory, across processes.

An exclusive `flock` on `<index>/writer.lock`, which the OS releases when its holder exits or
dies, so a dead writer never blocks the others; the file holds the holder's pid for status.
"""

import fcntl
import os
from pathlib import Path

LEASE_FILE = "writer.lock"


# -- the writer lease ----------------------------------------------------------------------
class WriterLease:
    """An exclusive, non-blocking `flock` on `<index>/writer.lock` holding the holder's pid.

    flock belongs to the open file, so two LiveIndex objects in one process exclude each other
    as two processes do, and the kernel releases it when the holder dies (even by SIGKILL).
    """

    def __init__(self, base: Path) -> None:
        self.path = Path(base) / LEASE_FILE
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


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

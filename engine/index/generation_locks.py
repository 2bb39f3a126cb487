"""Which generations are in use, and one rebuild at a time: what lets a publish remove old
generations without ever removing one that another process builds or serves.

Every process that reads, writes or builds a generation holds a shared `flock` on its folder
(`GenerationHold`); the OS releases it when the process ends, however it ends. Old generations
are removed only by a process holding the index's build lock (`BuildLock`, an exclusive flock
on `<index>/build.lock`), and only those it can lock exclusively: nobody holds them. New
generations are created under the build lock too, so a generation being built, held from the
moment it exists, is never taken for an orphan; two rebuilds run one after the other.

Two `knowhow reindex` started together used to publish over each other: each removed every
generation but its own, the other's half-built one included, and `CURRENT` could end up naming
a folder that no longer existed (`scripts/adversary.py`, the rebuilds-at-once attack).
"""

import contextlib
import fcntl
import os
import secrets
import shutil
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

BUILD_LOCK_FILE = "build.lock"
WAIT_POLL_SECONDS = 0.5
"""How often a rebuild waiting for another one tries the build lock again (and tells
`waiting`, which keeps a live writer's lease beating)."""


class GenerationHold:
    """A shared lock on a generation's folder, held while this process uses the generation;
    released by `release()`, or when the hold is garbage collected (a reader is dropped when
    a newer generation replaces it) or the process ends."""

    def __init__(self, fd: int) -> None:
        self._release = weakref.finalize(self, os.close, fd)

    @classmethod
    def take(cls, generation: Path) -> "GenerationHold | None":
        """Hold `generation`; None when it is gone or being removed."""
        try:
            fd = os.open(generation, os.O_RDONLY | os.O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            removed = os.fstat(fd).st_nlink == 0  # removed between the open and the lock
        except BlockingIOError:  # a publish holds it to remove it
            removed = True
        if removed:
            os.close(fd)
            return None
        return cls(fd)

    def release(self) -> None:
        self._release()

    @contextlib.contextmanager
    def released_on_error(self) -> Iterator[None]:
        """Release the hold if the `with` block fails: a generation that could not be opened
        must not stay held by the traceback of its failure."""
        try:
            yield
        except BaseException:
            self.release()
            raise


class BuildLock:
    """The exclusive lock of one index's rebuilds: whoever creates or removes generations holds
    it. The file holds the holder's pid, for whoever waits."""

    def __init__(self, base: Path) -> None:
        self.path = Path(base) / BUILD_LOCK_FILE

    @contextlib.contextmanager
    def held(self, waiting: Callable[[int | None], None] | None = None) -> Iterator[None]:
        """Hold the lock for the `with` block, waiting while another process holds it (calling
        `waiting` with that process's pid every `WAIT_POLL_SECONDS`)."""
        fd = self._open()
        try:
            while not _try_lock(fd):
                if waiting is not None:
                    waiting(self._holder())
                time.sleep(WAIT_POLL_SECONDS)
            _write_pid(fd)
            yield
        finally:
            os.close(fd)  # closing releases the flock

    @contextlib.contextmanager
    def held_if_free(self) -> Iterator[bool]:
        """Hold the lock for the `with` block if nobody does; yields whether it is held."""
        fd = self._open()
        try:
            free = _try_lock(fd)
            if free:
                _write_pid(fd)
            yield free
        finally:
            os.close(fd)

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)

    def _holder(self) -> int | None:
        try:
            return int(self.path.read_text().strip() or 0) or None
        except (OSError, ValueError):
            return None


def remove_unheld(generations: list[Path]) -> list[Path]:
    """Remove those of `generations` that no process holds (call with the build lock held);
    returns the ones removed. A generation in use stays, to be removed by a later call."""
    removed = []
    for generation in generations:
        try:
            fd = os.open(generation, os.O_RDONLY | os.O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            continue
        try:
            if _try_lock(fd):
                remove_folder(generation, ignore_errors=True)
                removed.append(generation)
        finally:
            os.close(fd)
    return removed


def remove_folder(path: Path, *, ignore_errors: bool = False) -> None:
    """Remove `path` and all it holds, renamed first (to a name beside it that still matches
    `gen-*`, so a removal cut short is swept later).

    Opening a Tantivy index in a folder (tantivy-py's `Index.open`) starts a thread that
    watches its `meta.json`; its first look reloads the reader the open made, on a thread of its
    own, which takes Tantivy's meta lock by path and so creates `.tantivy-meta.lock` if it is
    not there. Nothing lets us wait for that thread, and on a loaded machine it can run after
    the index was used and dropped: a folder removed in place then gets that file back between
    being emptied and being removed ("Directory not empty"). Under its new name the folder is
    out of reach of whatever opens files by the old path. Nothing happens if `path` is gone."""
    moved = path.with_name(f"{path.name}.removing-{secrets.token_hex(4)}")
    try:
        path.rename(moved)
    except OSError:
        if ignore_errors or not path.exists():
            return
        raise
    shutil.rmtree(moved, ignore_errors=ignore_errors)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _write_pid(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)

"""Safe file primitives: atomic writes, session-id -> path resolution, and reading inside the
knowledge root without ever leaving it.

The root is shared and may be written by others, so no link below it is followed, for reading
or for writing: every folder below the root is opened with `O_NOFOLLOW` relative to its parent's
descriptor, so a session folder, `steps/` or a step file that is a symbolic link is refused (the
root itself may be a link: the user chose it). Refusing every link, rather than resolving it and
checking that it stays inside, needs no path arithmetic and cannot be raced: a link that points
inside today can be re-pointed outside between the check and the open. Files are read only when
they are regular (a FIFO would block, `/dev/zero` never ends) and no larger than the limit.
"""

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from engine.core.errors import InvalidInput

_SESSION_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{3,127}")


def validate_session_id(session_id: object, field: str = "sessionId") -> str:
    """Session ids are 4..128 letters, digits, `.`, `_` or `-`, not starting with `.`.

    The one rule for what a session is: the tools accept exactly the ids that discovery
    (`KnowledgeStore.session_ids`) finds as folders, so a session recorded under an id cannot
    be skipped by the next index build. A hidden folder (`.git`, `.cache`) is never a session.
    Anything that could leave the knowledge root (`..`, `/`, absolute paths, NUL) is rejected.
    """
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
        raise InvalidInput(
            field,
            "must be 4-128 characters of letters, digits, '.', '_' or '-', not starting with '.'",
        )
    return session_id


_STEP_STEM = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}")


def validate_step_id(step_id: object, field: str = "stepId") -> str:
    """Step ids are `<sessionId>/<step file stem>`, e.g. `mm-abc-123/0004-mm_click`."""
    if not isinstance(step_id, str) or step_id.count("/") != 1:
        raise InvalidInput(field, "must be '<sessionId>/<step>', e.g. 'mm-abc-123/0004-mm_click'")
    session_id, stem = step_id.split("/")
    validate_session_id(session_id, field)
    if not _STEP_STEM.fullmatch(stem):
        raise InvalidInput(field, "the step part must be letters, digits, '.', '_' or '-'")
    return step_id


def session_dir(root: Path, session_id: str) -> Path:
    """The folder of a session inside `root`, after validating the id."""
    return root / validate_session_id(session_id)


class UnsafeFile(OSError):
    """A file or folder of the knowledge root that is not read or written into: a symbolic
    link, not a regular file, or larger than the limit. `reason` says which, for reports."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


LINK_REASON = "a symbolic link: links inside the knowledge root are never followed"
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW


def _open_subdir(parent: int, name: str, create: bool) -> int:
    """The folder `name` inside the open folder `parent`, never through a link."""
    flags = os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
    except NotADirectoryError:
        # O_DIRECTORY | O_NOFOLLOW on a link fails as "not a directory": say which it is
        if stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
            raise UnsafeFile(LINK_REASON) from None
        raise
    with contextlib.suppress(FileExistsError):  # a concurrent writer made it first
        os.mkdir(name, dir_fd=parent)
    return _open_subdir(parent, name, create=False)


@contextlib.contextmanager
def folder_inside(root: Path, parts: Sequence[str], create: bool = False) -> Iterator[int]:
    """A descriptor of `root/parts…`, each part opened without following a link (raises
    `UnsafeFile` for a link); missing folders are made when `create`. The root may be a link."""
    if create:
        root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            inner = _open_subdir(fd, part, create)
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def read_regular(folder: int, name: str, limit: int) -> bytes:
    """The bytes of the regular file `name` in the open `folder`, at most `limit` of them.

    A link, a FIFO, a device or a folder raises `UnsafeFile` without blocking (`O_NONBLOCK`,
    then `fstat`); so does a file larger than `limit`, checked before and while reading since
    the file may grow."""
    with open_regular(folder, name, limit) as (fd, _):
        return read_open(fd, limit)


@contextlib.contextmanager
def open_regular(folder: int, name: str, limit: int) -> Iterator[tuple[int, os.stat_result]]:
    """The regular file `name` of the open `folder`, open for reading, with its `fstat` (the
    size and modification time of exactly what is read: a build signs every step file), closed
    when the block ends; raises as `read_regular` does. Whether to read it may depend on that
    `fstat` (a record already read from the same file, `engine.records.kept_records`)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile(LINK_REASON) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile("not a regular file (a FIFO, device or folder is never read)")
        if info.st_size > limit:
            raise UnsafeFile(f"larger than the {limit}-byte limit ({info.st_size} bytes)")
        yield fd, info
    finally:
        os.close(fd)


def read_open(fd: int, limit: int) -> bytes:
    """The rest of the open file `fd`, at most `limit` bytes (`UnsafeFile` if it grew past)."""
    chunks, size = [], 0
    while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise UnsafeFile(f"larger than the {limit}-byte limit (grew while read)")
    return b"".join(chunks)


TEMP_FILE = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")
"""The name `_durable_temp` gives a temp file: `.<name>.<12 hex digits>.tmp`."""
STALE_TEMP_SECONDS = 600.0
"""A temp file this old belongs to a write that never finished (its process was killed between
writing and renaming); a write in progress holds one for milliseconds."""


def sweep_stale_temps(folder: Path, now: float, older_than: float = STALE_TEMP_SECONDS) -> int:
    """Remove from `folder` the temp files of writes that never finished: regular files named
    as `_durable_temp` names them, untouched for `older_than` seconds. Returns how many."""
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:  # gone, or not a folder: nothing of ours
        return 0
    for entry in entries:
        if not TEMP_FILE.fullmatch(entry.name):
            continue
        with contextlib.suppress(OSError):  # removed meanwhile, or not ours to remove
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and now - info.st_mtime >= older_than:
                os.unlink(entry.path)
                removed += 1
    return removed


def _durable_temp(folder: int, name: str, data: bytes) -> str:
    """`data` written and fsynced to a new hidden temp file beside `name` in `folder`."""
    while True:
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=folder
            )
        except FileExistsError:
            continue
        break
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.unlink(tmp, dir_fd=folder)
        raise
    return tmp


def write_at(folder: int, name: str, data: bytes) -> None:
    """Replace `name` in the open `folder` atomically: readers see the old file or the new."""
    tmp = _durable_temp(folder, name, data)
    try:
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        os.unlink(tmp, dir_fd=folder)
        raise


def create_at(folder: int, name: str, data: bytes) -> bool:
    """Like `write_at`, but never replaces an existing file; False if `name` exists."""
    tmp = _durable_temp(folder, name, data)
    try:
        os.link(tmp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp, dir_fd=folder)
    return True


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` so that readers see the old file or the new one, never half of it."""
    with folder_inside(path.parent, (), create=True) as folder:
        write_at(folder, path.name, data)


def atomic_create(path: Path, data: bytes) -> bool:
    """Like `atomic_write`, but never replaces an existing file; False if `path` exists."""
    with folder_inside(path.parent, (), create=True) as folder:
        return create_at(folder, path.name, data)

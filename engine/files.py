"""Safe file primitives: atomic writes and session-id -> path resolution."""

import os
import re
import tempfile
from pathlib import Path

from engine.errors import InvalidInput

_SESSION_ID = re.compile(r"[A-Za-z0-9._-]{4,128}")


def validate_session_id(session_id: object, field: str = "sessionId") -> str:
    """Session ids are 4..128 letters, digits, `.`, `_` or `-`, and never only dots.

    Anything that could leave the knowledge root (`..`, `/`, absolute paths, NUL) is rejected.
    """
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
        raise InvalidInput(field, "must be 4-128 characters of letters, digits, '.', '_' or '-'")
    if set(session_id) == {"."}:
        raise InvalidInput(field, "must not consist of dots only")
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


def _durable_temp(path: Path, data: bytes) -> Path:
    """`data` written and fsynced to a hidden temp file beside `path` (same filesystem)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` so that readers see the old file or the new one, never half of it."""
    tmp = _durable_temp(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_create(path: Path, data: bytes) -> bool:
    """Like `atomic_write`, but never replaces an existing file; False if `path` exists."""
    tmp = _durable_temp(path, data)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)
    return True

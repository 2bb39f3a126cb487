"""One error tree for knowhow; every error carries an `MM_…` code and says what to do next.

KnowhowError                      code
├── InvalidInput                  MM_INVALID_INPUT   (names the offending field)
├── NotFound                      MM_NOT_FOUND
├── NoActiveSession               MM_NO_ACTIVE_SESSION
├── WriteFailed                   MM_WRITE_FAILED    (disk full, no permission: nothing written)
└── IndexUnavailable              MM_INDEX_UNAVAILABLE (missing or locked index)
    ├── StaleIndex                MM_INDEX_UNAVAILABLE (built by another schema version)
    └── IndexDamaged              MM_INDEX_UNAVAILABLE (damaged files; rebuilt automatically)
"""

import errno
import os
from pathlib import Path


class KnowhowError(Exception):
    """Root of knowhow's errors; `code` is the stable machine-readable kind."""

    code = "MM_KNOWLEDGE_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class InvalidInput(KnowhowError):
    """A value broke a documented limit; nothing was changed."""

    code = "MM_INVALID_INPUT"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class NotFound(KnowhowError):
    code = "MM_NOT_FOUND"


class NoActiveSession(KnowhowError):
    code = "MM_NO_ACTIVE_SESSION"


class WriteFailed(KnowhowError):
    """The knowledge root refused a write (disk full, no permission, a file where a folder
    should be); whatever the call would have written was not written."""

    code = "MM_WRITE_FAILED"

    @classmethod
    def from_os_error(cls, exc: OSError) -> "WriteFailed":
        return cls(
            f"could not write to the knowledge root{_os_reason(exc)}; nothing was recorded. "
            "Free disk space or fix the root's permissions, then retry."
        )

    @classmethod
    def for_index(cls, exc: OSError, index_dir: Path) -> "WriteFailed":
        """The index could not be written: the knowledge files (the truth) are untouched."""
        return cls(
            f"could not write the index at {index_dir}{_os_reason(exc)}; the knowledge files are "
            "untouched. Free disk space or fix the index folder's permissions, then run "
            "`knowhow reindex`."
        )


def _os_reason(exc: OSError) -> str:
    """` (path): reason [ENAME]` of a refused file operation."""
    reason = os.strerror(exc.errno) if exc.errno else str(exc)
    name = errno.errorcode.get(exc.errno or 0, "")
    where = f" ({exc.filename})" if exc.filename else ""
    return f"{where}: {reason}" + (f" [{name}]" if name else "")


class IndexUnavailable(KnowhowError):
    code = "MM_INDEX_UNAVAILABLE"


class StaleIndex(IndexUnavailable):
    """The index was built with another schema version, or embedded with another model, and
    must be rebuilt."""


class IndexDamaged(IndexUnavailable):
    """A generation's files are damaged; it is rebuilt from the knowledge files (the truth)."""

    def __init__(self, generation: object, reason: str) -> None:
        super().__init__(
            f"the index at {generation} is damaged ({reason}): a running knowhow server "
            "rebuilds it from the knowledge files, retry in a few seconds; with no server "
            "running, `knowhow index` rebuilds it"
        )
        self.reason = reason


class VectorsDamaged(IndexDamaged):
    """A generation's vector store is damaged (`engine.embedding.vectors`). Only the writer
    raises it: the generation is rebuilt, embedding again whatever did not verify, while
    readers go on answering by keywords (saying `degraded`); it is never reported to other
    processes as a damaged index, which would stop their keyword answers too."""

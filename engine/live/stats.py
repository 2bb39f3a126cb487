"""What the live index counts, and the failures in a row that space out its takeovers.

`LiveStats` is reported as it is (`mm_knowledge_status`'s `live`). `Failures` counts a failed
step of the writer's work into it and keeps the run of failures since the last success: the
wait before the next takeover doubles with each, so a full disk is not hammered. It also
counts the worker's turns that failed outside any such step (a crash, which once ended the
worker's thread for good): the next turn waits, doubling the same way.
"""

import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)

MAX_RETRY_SECONDS = 30.0


@dataclass
class LiveStats:
    batches: int = 0
    failedBatches: int = 0
    errors: int = 0
    sessionsIndexed: int = 0
    sessionsAppended: int = 0
    takeovers: int = 0
    lastBatchMs: float = 0.0
    maxBatchMs: float = 0.0
    lastSupersedeMs: float = 0.0
    sessionsFlagged: int = 0
    lastCommitAt: str | None = None
    lastError: str | None = None
    watching: bool = False
    rebuilds: int = 0
    leaseLost: int = 0
    lastRebuildReason: str | None = None
    lastRebuildSeconds: float = 0.0


class Failures:
    """Failed steps of the writer's work: counted in `stats` (a failed batch apart from other
    errors), and in a row since the last success, for the wait before the next takeover."""

    def __init__(self, stats: LiveStats, retry_seconds: float) -> None:
        self.stats = stats
        self.retry_seconds = retry_seconds
        self.in_row = 0
        self.crashes_in_row = 0

    def note(self, what: str, exc: Exception, *, batch: bool = False) -> None:
        self.in_row += 1
        if batch:
            self.stats.failedBatches += 1
        else:
            self.stats.errors += 1
        self.stats.lastError = f"{what}: {type(exc).__name__}: {exc}"
        log.warning("live index: %s failed: %s", what, exc)

    def succeeded(self) -> None:
        self.in_row = 0

    def backoff(self) -> float:
        """Seconds before the next takeover: doubles with each failure in a row, capped so a
        freed disk is used again soon."""
        return self._doubled(self.in_row)

    def crashed(self, exc: BaseException) -> float:
        """A turn of the worker failed: counted as an error; returns the seconds to wait
        before the next turn."""
        self.crashes_in_row += 1
        self.stats.errors += 1
        self.stats.lastError = f"the live index worker: {type(exc).__name__}: {exc}"
        log.warning("live index: the worker failed (%d in a row): %s", self.crashes_in_row, exc)
        return self._doubled(self.crashes_in_row)

    def turned(self) -> None:
        """A turn of the worker went through."""
        self.crashes_in_row = 0

    def failing(self, *, writer_elsewhere: bool) -> str | None:
        """Why this process's live indexing is not working right now (None: it is). Its own
        failures to write do not matter while another process writes for everyone."""
        last = self.stats.lastError
        if self.crashes_in_row:
            return (
                f"new steps are not being indexed: the live index worker failed "
                f"{self.crashes_in_row} times in a row, retrying (last: {last})"
            )
        if self.in_row and not writer_elsewhere:
            return (
                f"new steps are not being indexed: {self.in_row} attempts failed in a row, "
                f"retrying (last: {last})"
            )
        return None

    def _doubled(self, failures: int) -> float:
        return min(self.retry_seconds * 2.0 ** min(failures, 10), MAX_RETRY_SECONDS)

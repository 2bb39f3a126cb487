"""A log nobody can flood: of each kind of record, the first few a minute, then a count.

A client can make the server log (a refused connection, a malformed request), and asyncio logs
a traceback for every connection it fails to accept: a flood of slow requests once filled the
log with tracebacks faster than any disk should take (`scripts/adversary.py`, the slow-header
attack, says how fast). Records of
one kind (same logger, level and message template) pass `BURST` times per `WINDOW_SECONDS`;
the rest are dropped before they are formatted, and the first record let through after the
window says how many were left out.
"""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

BURST = 5
WINDOW_SECONDS = 60.0
MAX_KINDS = 1000
"""Kinds remembered at once (a message formatted before logging is a kind of its own)."""


@dataclass
class _Window:
    ends: float
    passed: int = 0
    left_out: int = 0


class RepeatLimit(logging.Filter):
    """Lets `BURST` records of each kind through per `WINDOW_SECONDS`; counts the others."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._windows: dict[tuple[str, int, str], _Window] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        now = self._clock()
        key = (record.name, record.levelno, str(record.msg))
        window = self._windows.get(key)
        if window is None or now >= window.ends:
            if len(self._windows) >= MAX_KINDS:
                self._windows = {k: w for k, w in self._windows.items() if w.ends > now}
                if len(self._windows) >= MAX_KINDS:
                    self._windows.clear()
            if window is not None and window.left_out:
                record.msg = (
                    f"{record.msg} [{window.left_out:,} more like this left out of the log "
                    f"in the {WINDOW_SECONDS:g} s before]"
                )
            window = self._windows[key] = _Window(now + WINDOW_SECONDS)
        if window.passed < BURST:
            window.passed += 1
            return True
        window.left_out += 1
        return False

"""The sessions that changed, as the live writer takes them: a batch per debounce window.

The watcher (`engine.live.watcher`, while this process writes) and a recorder in this process
name the sessions they touched (`notify`); the writer's thread waits for the first one, collects
what arrives within `debounce_seconds` of it, and indexes that as one batch, one commit. The
watcher's callbacks only enqueue ids, so nothing but the writer's thread touches the index.
"""

import queue
import time
from pathlib import Path

from engine.live.stats import Failures
from engine.live.watcher import RootWatcher


class SessionChanges:
    """Changed session ids queued for the writer's thread, and the watcher that feeds them."""

    def __init__(
        self, root: Path, failures: Failures, *, debounce_seconds: float, watch: bool
    ) -> None:
        self.root = root
        self.debounce_seconds = debounce_seconds
        self.watch = watch
        self._failures = failures
        self._events: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._watcher: RootWatcher | None = None

    @property
    def watched(self) -> bool:
        """Whether a watcher reports changes (else only reconciles find them)."""
        return self._watcher is not None

    def notify(self, session_id: str) -> None:
        self._events.put(session_id)

    def wake(self) -> None:
        """End a `collect` that is waiting (closing)."""
        self._events.put(None)

    def collect(self, timeout: float) -> set[str]:
        """The sessions changed in one debounce window (empty after `timeout` of quiet)."""
        try:
            first = self._events.get(timeout=timeout)
        except queue.Empty:
            return set()
        batch = {first}
        deadline = time.monotonic() + self.debounce_seconds
        while first is not None and (left := deadline - time.monotonic()) > 0:
            try:
                batch.add(self._events.get(timeout=left))
            except queue.Empty:
                break
        return {s for s in batch if s is not None}

    def start_watching(self) -> None:
        """Watch the root, if asked to; a watcher that cannot start (out of inotify watches,
        say) is a counted failure, and the writer reconciles often instead."""
        if not self.watch:
            return
        watcher = RootWatcher(self.root, self.notify)
        try:
            watcher.start()
        except OSError as exc:
            self._failures.note("watching the knowledge root", exc)
            return
        self._watcher = watcher
        self._failures.stats.watching = True

    def stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
            self._failures.stats.watching = False

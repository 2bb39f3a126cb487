"""File events of the knowledge root -> the sessions they touch (watchdog).

The watchdog handler runs on watchdog's own thread, so it does nothing but map a path to its
session and hand the id on (`on_session`, a queue put, `engine.live.changes`); re-indexing is
the writer's work. `session_of` is that mapping as a pure function: only `session.json`,
`superseded.json`, `steps/*.json` and the session and `steps` folders themselves matter; the
hidden temp files of atomic writes, stray files and folders that are not valid session ids are
ignored.
"""

import logging
import os
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    EVENT_TYPE_CLOSED,
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_MOVED,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from engine.core import InvalidInput, validate_session_id
from engine.records import DECISIONS_FILE, SESSION_FILE, STEPS_DIR

log = logging.getLogger(__name__)

WATCHED_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirMovedEvent,
    DirDeletedEvent,
]
"""Only what changes files. Without a filter inotify also reports every open and read: on a
large root the kernel queue overflows, watchdog re-lists every folder (more events), and new
steps wait for the periodic reconcile."""

CHANGES = frozenset(
    {
        EVENT_TYPE_CREATED,
        EVENT_TYPE_MODIFIED,
        EVENT_TYPE_DELETED,
        EVENT_TYPE_MOVED,
        EVENT_TYPE_CLOSED,
    }
)
STOP_TIMEOUT_SECONDS = 5.0


def session_of(root: Path, path: str | bytes, *, is_directory: bool) -> str | None:
    """The session whose index entry a change at `path` invalidates, or None."""
    text = path.decode(errors="replace") if isinstance(path, bytes) else path
    try:
        parts = Path(text).relative_to(root).parts
    except ValueError:
        return None
    if not parts or parts[-1].startswith("."):
        return None
    try:
        session = validate_session_id(parts[0])
    except InvalidInput:
        return None
    if len(parts) == 1:
        return session if is_directory else None
    if len(parts) == 2:
        wanted = (
            parts[1] == STEPS_DIR if is_directory else parts[1] in (SESSION_FILE, DECISIONS_FILE)
        )
        return session if wanted else None
    is_step = len(parts) == 3 and parts[1] == STEPS_DIR and parts[2].endswith(".json")
    return session if is_step and not is_directory else None


class _SessionEvents(FileSystemEventHandler):
    def __init__(self, root: Path, on_session: Callable[[str], None]) -> None:
        self.root = root
        self.on_session = on_session

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in CHANGES:
            return
        for path in (event.src_path, event.dest_path):
            if path:
                # a link to a folder arrives as a file event: treat it as the folder it
                # pretends to be, so that reading it is refused and reported at once
                folder = event.is_directory or os.path.islink(path)
                session = session_of(self.root, path, is_directory=folder)
                if session is not None:
                    self.on_session(session)


class RootWatcher:
    """Watches a knowledge root recursively and reports every session that changed."""

    def __init__(self, root: Path, on_session: Callable[[str], None]) -> None:
        self.root = Path(root).resolve()
        self.on_session = on_session
        self._observer: BaseObserver | None = None

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        observer = Observer()
        observer.schedule(
            _SessionEvents(self.root, self.on_session),
            str(self.root),
            recursive=True,
            event_filter=WATCHED_EVENTS,
        )
        observer.start()
        self._observer = observer
        log.debug("watching %s", self.root)

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(STOP_TIMEOUT_SECONDS)
            self._observer = None

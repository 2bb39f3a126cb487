"""Files the index could not read, by session: `skipped.json` beside each index generation.

Whoever indexes records what it skipped there — the live writer, `knowhow index` and
`knowhow reindex` alike — so that `mm_knowledge_status` and `knowhow status` in any process
report every skipped file and why, not only the skips the process that met them saw. Files
indexed only in part (a batch with unreadable steps, a name of neither form) are kept there
too, marked as warnings.
"""

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

import orjson

from engine.core import atomic_write
from engine.records import Skip

SKIPS_FILE = "skipped.json"
WARNING = "warning"
"""`kind` of a ledger entry for a file indexed as far as it could be read (`SyncReport.warnings`);
entries without a kind are files skipped whole."""


class Skips(Protocol):
    """What an indexing pass reports (`SyncReport`, `LiveReport`): the files it skipped."""

    skipped: list[Skip]
    warnings: list[Skip]


class SkipLedger:
    """Files the index could not read, by session, kept beside the generation so that every
    process (and the next writer) can report them, not only the one that met them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.by_session: dict[str, list[dict[str, str]]] = {}

    def load(self, generation: Path) -> None:
        self.by_session = read_skips(generation)

    def update(self, session_ids: Iterable[str], report: Skips) -> bool:
        """Replace the entries of re-indexed sessions; True when anything changed."""
        grouped: dict[str, list[dict[str, str]]] = defaultdict(list)
        for skip in report.skipped:
            session, entry = self._entry(skip)
            if session:
                grouped[session].append(entry)
        for warning in report.warnings:  # read in part: kept beside the skips, marked
            session, entry = self._entry(warning)
            if session:
                grouped[session].append(entry | {"kind": WARNING})
        before = dict(self.by_session)
        for session_id in session_ids:
            if grouped.get(session_id):
                self.by_session[session_id] = grouped[session_id]
            else:
                self.by_session.pop(session_id, None)
        return before != self.by_session

    def save(self, generation: Path) -> None:
        atomic_write(generation / SKIPS_FILE, orjson.dumps(self.by_session))

    def _entry(self, skip: Skip) -> tuple[str | None, dict[str, str]]:
        try:
            relative = Path(skip.path).relative_to(self.root)
        except ValueError:
            return None, {}
        return relative.parts[0], {"path": relative.as_posix(), "reason": skip.reason}


def record_skips(root: Path, generation: Path, session_ids: Iterable[str], report: Skips) -> None:
    """Replace the skips of `session_ids` (just indexed, or deleted) in `generation`'s ledger."""
    ledger = SkipLedger(root)
    ledger.load(generation)
    if ledger.update(session_ids, report):
        ledger.save(generation)


def read_skips(generation: Path | None) -> dict[str, list[dict[str, str]]]:
    if generation is None:
        return {}
    try:
        data = orjson.loads((generation / SKIPS_FILE).read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}

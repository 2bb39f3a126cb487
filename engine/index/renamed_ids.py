"""The testIds renamed on each screen, beside each generation: `<generation>/renames.json`.

Search answers an old testId with the steps that work with what replaced it, and says so
(`renamedTo:<new> (since <day>)`), including for an element nobody acted on (a balance shown on
the home screen): that takes what supersede detection knows of every screen
(`engine.records.renames`), which readers cannot compute (the facts live with the writer). So
whoever detects writes the renames here: a build for every screen, the live writer again for the
screens it re-planned. Derived from the files like everything in a generation (`knowhow
reindex` writes it afresh); a generation without it answers as before.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from engine.core import atomic_write
from engine.records import Rename

RENAMES_FILE = "renames.json"
SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class RenamedId:
    """One rename as search uses it."""

    screen: str
    old: str
    new: str
    since: str
    """The day the new id was first seen on the screen (`2026-01-25`)."""


RenameMap = Mapping[str, tuple[RenamedId, ...]]
"""old testId (lowercase) -> what it became, one per screen where it was renamed."""


def write_renames(generation: Path, renames: Iterable[Rename]) -> None:
    """Write the generation's renames (sorted: the same renames give the same file); nothing is
    written when the file already says the same."""
    rows = sorted(
        ({"screen": r.screen, "old": r.old, "new": r.new, "since": r.since} for r in renames),
        key=lambda row: (row["old"], row["screen"]),
    )
    data = orjson.dumps({"schemaVersion": SCHEMA_VERSION, "renames": rows})
    path = generation / RENAMES_FILE
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    atomic_write(path, data)


def load_renames(generation: Path) -> list[Rename] | None:
    """The renames the generation's file holds; None when there is no file, or it is not one
    this version wrote (whoever detects writes it again)."""
    try:
        data = orjson.loads((generation / RENAMES_FILE).read_bytes())
        if not isinstance(data, dict) or data.get("schemaVersion") != SCHEMA_VERSION:
            return None
        return [
            Rename(str(r["screen"]), str(r["old"]), str(r["new"]), int(r["since"]), "renamed")
            for r in data["renames"]
        ]
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


def rename_map(renames: Iterable[Rename]) -> dict[str, tuple[RenamedId, ...]]:
    """Renames by old testId (lowercase), as search looks them up."""
    found: dict[str, list[RenamedId]] = {}
    for r in renames:
        since = datetime.fromtimestamp(r.since / 1000, UTC).date().isoformat()
        found.setdefault(r.old.lower(), []).append(RenamedId(r.screen, r.old, r.new, since))
    return {old: tuple(ids) for old, ids in found.items()}

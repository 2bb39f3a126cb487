"""The knowledge root on disk: `<sessionId>/session.json` and `<sessionId>/steps/*.json`.

The files are the source of truth. Reading never fails on one bad file: a corrupt, empty or
half-written JSON file is reported as a `Skip` (path + reason) and the rest loads.
"""

import contextlib
import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from pydantic import ValidationError

from engine.errors import InvalidInput
from engine.files import atomic_create, atomic_write, session_dir, validate_session_id
from engine.labels import labelled
from engine.limits import parse_bounded
from engine.models import (
    SessionMetadata,
    StepRecord,
    Supersession,
    Supersessions,
    now_iso,
    parse_time,
)

SESSION_FILE = "session.json"
DECISIONS_FILE = "superseded.json"
"""Which of the session's steps are superseded (see `engine.supersede`)."""
STEPS_DIR = "steps"
_SAFE_TOOL = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True, slots=True)
class Skip:
    """A file that could not be read, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class FileSig:
    """What identifies one version of a file: modification time and size."""

    mtime_ns: int
    size: int

    def encode(self) -> str:
        return f"{self.mtime_ns}:{self.size}"


@dataclass(slots=True)
class LoadedStep:
    step_id: str
    record: StepRecord
    sig: FileSig


@dataclass(slots=True)
class LoadedSession:
    """One session as read from disk: metadata (real or synthesized) and its readable steps."""

    session_id: str
    metadata: SessionMetadata
    has_metadata_file: bool
    meta_sig: FileSig | None
    steps: list[LoadedStep] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    decisions: dict[str, Supersession] = field(default_factory=dict)
    """Step file stem -> why that step is superseded (`superseded.json`)."""


@dataclass(frozen=True, slots=True)
class Listing:
    """A session's files by signature, read in one pass without opening them. `signature`
    digests the names, sizes and mtimes of `session.json`, `superseded.json` and the step
    files: the indexer keeps it in the manifest to tell which sessions changed."""

    meta_sig: FileSig | None
    decisions_sig: FileSig | None
    files: dict[str, FileSig]
    """Readable step files only (no hidden files, no names that are not UTF-8)."""
    signature: str
    unreadable: int = 0
    """Step entries left out of `files` that must be reported as skipped (a name that is not
    UTF-8, or not a regular file); hidden files are not counted."""


def list_session(root: Path, session_id: str) -> Listing:
    base = Path(root) / session_id
    digest = hashlib.blake2b(digest_size=16)
    meta_sig = _file_sig(base / SESSION_FILE)
    if meta_sig is not None:
        digest.update(f"{SESSION_FILE}:{meta_sig.encode()};".encode())
    decisions_sig = _file_sig(base / DECISIONS_FILE)
    if decisions_sig is not None:
        digest.update(f"{DECISIONS_FILE}:{decisions_sig.encode()};".encode())
    files: dict[str, FileSig] = {}
    unreadable = 0
    try:
        entries = sorted(os.scandir(base / STEPS_DIR), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    for entry in entries:
        if not entry.name.endswith(".json"):
            continue
        try:
            st = entry.stat()
        except FileNotFoundError:
            continue
        sig = FileSig(st.st_mtime_ns, st.st_size)
        # fsencode: a name that is not UTF-8 (surrogate-escaped) still signs, never raises
        digest.update(os.fsencode(entry.name) + f":{sig.encode()};".encode())
        if entry.name.startswith("."):
            continue
        if entry.is_file() and is_readable_name(entry.name):
            files[entry.name] = sig
        else:
            unreadable += 1
    return Listing(meta_sig, decisions_sig, files, digest.hexdigest(), unreadable)


def is_readable_name(name: str) -> bool:
    """Whether a file name is valid UTF-8: other names (surrogate-escaped bytes) cannot be
    step ids, so such files are skipped and reported."""
    try:
        name.encode()
    except UnicodeEncodeError:
        return False
    return True


def printable_path(path: Path | str) -> str:
    """A path for reports and JSON: bytes that are not UTF-8 shown as U+FFFD."""
    return os.fsencode(path).decode(errors="replace")


def _file_sig(path: Path) -> FileSig | None:
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return FileSig(st.st_mtime_ns, st.st_size)


def step_id_for(session_id: str, file_name: str) -> str:
    """`<sessionId>/<file stem>`, the stable id of a step."""
    return f"{session_id}/{file_name.removesuffix('.json')}"


def _sig(path: Path) -> FileSig:
    st = path.stat()
    return FileSig(st.st_mtime_ns, st.st_size)


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        if first["type"] == "json_invalid":  # an empty or half-written file
            return f"invalid JSON: {first['ctx'].get('error', first['msg'])}"
        where = ".".join(str(p) for p in first["loc"]) or "record"
        return f"invalid record: {where}: {first['msg']}"
    if isinstance(exc, orjson.JSONDecodeError):
        return f"invalid JSON: {exc}"
    return f"{type(exc).__name__}: {exc}"


class KnowledgeStore:
    """Reads and writes one knowledge root."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    # -- reading ---------------------------------------------------------------------------
    def session_ids(self) -> list[str]:
        """Session folders (any valid session id, not only `mm-…`), sorted."""
        try:
            entries = list(os.scandir(self.root))
        except FileNotFoundError:
            return []
        ids = []
        for entry in entries:
            if entry.is_dir() and not entry.name.startswith("."):
                with contextlib.suppress(InvalidInput):  # not a session folder
                    ids.append(validate_session_id(entry.name))
        return sorted(ids)

    def step_files(self, session_id: str) -> list[Path]:
        """The session's step files (regular `*.json` files, hidden ones left out), by name."""
        return [path for path, regular in self._step_entries(session_id) if regular]

    def _step_entries(self, session_id: str) -> list[tuple[Path, bool]]:
        """Every `*.json` entry of the steps folder by name, and whether it is a regular file:
        a FIFO or device is never opened (reading it would block or never end), but reported."""
        directory = session_dir(self.root, session_id) / STEPS_DIR
        try:
            entries = [
                (e.name, e.is_file())
                for e in os.scandir(directory)
                if e.name.endswith(".json") and not e.name.startswith(".")
            ]
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [(directory / name, regular) for name, regular in sorted(entries)]

    def read_metadata(self, session_id: str) -> tuple[SessionMetadata | None, Skip | None]:
        path = session_dir(self.root, session_id) / SESSION_FILE
        try:
            meta = parse_bounded(SessionMetadata, path.read_bytes())
        except FileNotFoundError:
            return None, None
        except (OSError, ValueError, ValidationError) as exc:
            return None, Skip(str(path), _reason(exc))
        return meta, None

    def read_decisions(self, session_id: str) -> tuple[dict[str, Supersession], Skip | None]:
        """The session's `superseded.json` (empty when absent; a corrupt one is a Skip)."""
        path = session_dir(self.root, session_id) / DECISIONS_FILE
        try:
            return Supersessions.model_validate_json(path.read_bytes()).steps, None
        except FileNotFoundError:
            return {}, None
        except (OSError, ValueError, ValidationError) as exc:
            return {}, Skip(str(path), _reason(exc))

    def write_decisions(self, session_id: str, decisions: dict[str, Supersession]) -> None:
        """Replace the session's `superseded.json` atomically (removed when empty)."""
        path = session_dir(self.root, session_id) / DECISIONS_FILE
        if not decisions:
            path.unlink(missing_ok=True)
            return
        ordered = dict(sorted(decisions.items()))
        atomic_write(path, _dump(Supersessions(steps=ordered)))

    def has_step(self, step_id: str) -> bool:
        """Whether `<sessionId>/<stem>` names a step file of this root."""
        session_id, _, stem = step_id.partition("/")
        if not stem or "/" in stem or stem.startswith("."):
            return False
        try:
            directory = session_dir(self.root, session_id)
        except InvalidInput:
            return False
        return (directory / STEPS_DIR / f"{stem}.json").is_file()

    def read_step(self, path: Path) -> StepRecord:
        """One step file (a big one cut to `engine.limits`' read limits); raises OSError,
        ValueError or ValidationError when unreadable."""
        return parse_bounded(StepRecord, path.read_bytes())

    def load_session(self, session_id: str) -> LoadedSession:
        """Read a whole session; corrupt files are skipped and reported, never raised."""
        meta, meta_skip = self.read_metadata(session_id)
        meta_path = session_dir(self.root, session_id) / SESSION_FILE
        if meta is not None and meta.sessionId != session_id:
            # The folder is the session's identity (step ids are built from it); a copied
            # folder must not index its steps under the original's id.
            meta_skip = Skip(
                str(meta_path),
                f"sessionId {meta.sessionId!r} differs from its folder; the folder name is used",
            )
            meta = meta.model_copy(update={"sessionId": session_id})
        loaded = LoadedSession(
            session_id=session_id,
            metadata=meta or SessionMetadata(sessionId=session_id, createdAt=""),
            has_metadata_file=meta is not None,
            meta_sig=_sig(meta_path) if meta is not None else None,
        )
        if meta_skip:
            loaded.skipped.append(meta_skip)
        loaded.decisions, decisions_skip = self.read_decisions(session_id)
        if decisions_skip:
            loaded.skipped.append(decisions_skip)
        for path, regular in self._step_entries(session_id):
            if not is_readable_name(path.name):
                reason = "file name is not valid UTF-8"
                loaded.skipped.append(Skip(printable_path(path), reason))
                continue
            if not regular:
                reason = "not a regular file (a folder, FIFO, device or broken link)"
                loaded.skipped.append(Skip(str(path), reason))
                continue
            try:
                sig = _sig(path)
                record = self.read_step(path)
            except FileNotFoundError:
                continue  # deleted while we were reading
            except (OSError, ValueError, ValidationError) as exc:
                loaded.skipped.append(Skip(str(path), _reason(exc)))
                continue
            loaded.steps.append(LoadedStep(step_id_for(session_id, path.name), record, sig))
        if meta is None:
            loaded.metadata = SessionMetadata(
                sessionId=session_id, createdAt=_first_timestamp(loaded.steps)
            )
        return loaded

    def iter_sessions(self) -> Iterator[LoadedSession]:
        for session_id in self.session_ids():
            yield self.load_session(session_id)

    # -- writing ---------------------------------------------------------------------------
    def write_session(self, metadata: SessionMetadata) -> Path:
        """Write `session.json` atomically (creating the session folder)."""
        path = session_dir(self.root, metadata.sessionId) / SESSION_FILE
        atomic_write(path, _dump(metadata))
        return path

    def record_step(self, record: StepRecord) -> str:
        """Write a step as the session's next `<NNNN>-<tool>.json`; returns its step id.

        Labels are derived from the tool and outcome when the record has none. The file is
        created atomically and never overwrites another step, even with concurrent writers.
        """
        session_id = validate_session_id(record.sessionId)
        record = labelled(record)
        directory = session_dir(self.root, session_id) / STEPS_DIR
        tool = _SAFE_TOOL.sub("_", record.tool.name)[:64] or "step"
        data = _dump(record)
        number = _next_number(self.step_files(session_id))
        while True:
            name = f"{number:04d}-{tool}.json"
            if atomic_create(directory / name, data):
                return step_id_for(session_id, name)
            number += 1


def _dump(model: SessionMetadata | StepRecord | Supersessions) -> bytes:
    return orjson.dumps(
        model.model_dump(mode="json", exclude_none=True), option=orjson.OPT_INDENT_2
    )


def _next_number(files: list[Path]) -> int:
    highest = 0
    for path in files:
        head = path.name.split("-", 1)[0]
        if head.isdigit():
            highest = max(highest, int(head))
    return max(highest, len(files)) + 1


def _first_timestamp(steps: list[LoadedStep]) -> str:
    """createdAt of a session without metadata: its earliest readable step time (or now)."""
    times = [s.record.timestamp for s in steps if parse_time(s.record.timestamp)]
    return min(times, key=lambda t: parse_time(t) or 0) if times else now_iso()

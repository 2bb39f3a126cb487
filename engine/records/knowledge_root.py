"""The knowledge root on disk: `<sessionId>/session.json` and `<sessionId>/steps/*.json`.

The files are the source of truth. Reading never fails on one bad file: a corrupt, empty or
half-written JSON file is reported as a `Skip` (path + reason) and the rest loads. Every read and
write goes through `engine.core.files`' descriptors opened without following links: a session
folder, `steps/` or a file that is a symbolic link, a FIFO, a device, or a file over
`MAX_READ_FILE_BYTES` is skipped and reported, never opened (a linked session folder is
indexed as nothing), and writing into a linked session is refused with `MM_INVALID_INPUT`.
"""

import contextlib
import fcntl
import hashlib
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

import orjson
from pydantic import ValidationError
from pydantic_core import from_json

from engine.core import (
    OBSERVATIONS_CACHED,
    InvalidInput,
    UnsafeFile,
    create_at,
    folder_inside,
    open_regular,
    read_open,
    read_regular,
    sweep_stale_temps,
    validate_session_id,
    write_at,
)
from engine.records.batches import read_batch
from engine.records.kept_records import kept_records
from engine.records.labels import labelled
from engine.records.limits import MAX_READ_FILE_BYTES, SMALL_FILE_BYTES, parse_bounded
from engine.records.models import (
    Observation,
    SessionMetadata,
    StepRecord,
    Supersession,
    Supersessions,
    epoch_ms,
    now_iso,
    parse_time,
)
from engine.records.step_names import NEITHER, in_order, name_form, stamped_name, uses_stamps

SESSION_FILE = "session.json"
DECISIONS_FILE = "superseded.json"
"""Which of the session's steps are superseded (see `engine.records.supersede`)."""
STEPS_DIR = "steps"
ROOT_SESSIONS_ASKED = 32
"""Sessions asked how they name steps when a new session's first step is written."""
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
    warnings: list[Skip] = field(default_factory=list)
    """Files read and indexed as far as they could be, and what of them could not be."""
    decisions: dict[str, Supersession] = field(default_factory=dict)
    """Step file stem -> why that step is superseded (`superseded.json`)."""
    refused: bool = False
    """The session folder is a link (reported in `skipped`): nothing of it is indexed."""
    signature: str = ""
    """`Listing.signature` of the files as read (each step file by the `fstat` of what was
    read), so a build need not list and `lstat` them first."""
    content_signature: str = ""
    """`Listing.content_signature` of the files as read."""


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
    UTF-8, not a regular file, a link, or a linked `steps/` folder); hidden files are not
    counted."""
    content_signature: str = ""
    """`signature` without `superseded.json` (`_Signer.content_hexdigest`)."""
    hidden: int = 0
    """Hidden step entries (`.name.json`): signed, never read."""


_FS_ENCODING, _FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


class _Signer:
    """The digest a session's signature is (`Listing.signature`): the name, modification time
    and size of `session.json`, `superseded.json` and every `.json` entry of `steps/` (hidden
    ones too, links as themselves), in name order. `list_session` signs from `lstat`s before
    reading; `KnowledgeStore.load_session` signs the files it reads as it reads them, which is
    the same digest for files that do not change meanwhile."""

    def __init__(self) -> None:
        self._digest = hashlib.blake2b(digest_size=16)
        self._content = hashlib.blake2b(digest_size=16)
        """The same without `superseded.json` (`content_hexdigest`)."""

    def file(self, name: str, sig: FileSig, *, content: bool = True) -> None:
        entry = _entry(name, sig)
        self._digest.update(entry)
        if content:
            self._content.update(entry)

    def entries(self, entries: list[bytes]) -> None:
        """Sign step files at once (each `_entry`): the same digest as one `file` after the
        other, for less, as a long session's every file is signed for each new step."""
        joined = b"".join(entries)
        self._digest.update(joined)
        self._content.update(joined)

    def linked(self, folder: str) -> None:
        self._digest.update(f"linked {folder} folder;".encode())
        self._content.update(f"linked {folder} folder;".encode())

    def hexdigest(self) -> str:
        return self._digest.hexdigest()

    def content_hexdigest(self) -> str:
        """The digest of everything but the decision file: a rebuild that rewrote that file
        itself tells by it whether anything else of the session changed meanwhile."""
        return self._content.hexdigest()


def _entry(name: str, sig: FileSig) -> bytes:
    """What a file signs as; its name encoded as `os.fsencode` does, so that a name that is not
    UTF-8 (surrogate-escaped) still signs."""
    return b"%b:%d:%d;" % (name.encode(_FS_ENCODING, _FS_ERRORS), sig.mtime_ns, sig.size)


def list_session(root: Path, session_id: str) -> Listing:
    """The session's files by signature (`lstat`: a link signs as itself, never followed)."""
    signer = _Signer()
    try:
        with folder_inside(Path(root), (session_id,)) as folder:
            meta_sig = _file_sig(folder, SESSION_FILE)
            decisions_sig = _file_sig(folder, DECISIONS_FILE)
    except (FileNotFoundError, NotADirectoryError):
        meta_sig = decisions_sig = None
    except UnsafeFile:
        signer.linked("session")
        return Listing(None, None, {}, signer.hexdigest(), 0, signer.content_hexdigest())
    _sign_folder_files(signer, meta_sig, decisions_sig)
    files: dict[str, FileSig] = {}
    signed: list[bytes] = []
    unreadable = hidden = 0
    try:
        with folder_inside(Path(root), (session_id, STEPS_DIR)) as folder:
            for entry in _json_entries(folder):
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                sig = FileSig(st.st_mtime_ns, st.st_size)
                signed.append(_entry(entry.name, sig))
                regular = stat.S_ISREG(st.st_mode)
                if entry.name.startswith("."):
                    hidden += 1
                    continue
                if regular and is_readable_name(entry.name):
                    files[entry.name] = sig
                else:
                    unreadable += 1
    except (FileNotFoundError, NotADirectoryError):
        pass
    except UnsafeFile:  # raised before any entry is listed
        signer.linked("steps")
        unreadable += 1
    signer.entries(signed)
    return Listing(
        meta_sig,
        decisions_sig,
        files,
        signer.hexdigest(),
        unreadable,
        signer.content_hexdigest(),
        hidden,
    )


def files_signature(
    meta: FileSig | None, decisions: FileSig | None, files: Mapping[str, FileSig]
) -> str:
    """The `Listing.signature` of a session folder holding exactly these step files (and no
    hidden or unreadable entries): what an index built from them recorded."""
    signer = _Signer()
    _sign_folder_files(signer, meta, decisions)
    signer.entries([_entry(name, files[name]) for name in sorted(files)])
    return signer.hexdigest()


def _sign_folder_files(signer: _Signer, meta: FileSig | None, decisions: FileSig | None) -> None:
    """Sign `session.json` and `superseded.json` (each when present), before the steps."""
    if meta is not None:
        signer.file(SESSION_FILE, meta)
    if decisions is not None:
        signer.file(DECISIONS_FILE, decisions, content=False)


def _json_entries(folder: int) -> list[os.DirEntry[str]]:
    """Every `.json` entry of the open `steps/` folder (hidden ones too), in name order."""
    with os.scandir(folder) as entries:
        return sorted((e for e in entries if e.name.endswith(".json")), key=lambda e: e.name)


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


def _file_sig(folder: int, name: str) -> FileSig | None:
    """Signature of `name` in the open `folder`, or None when absent (a link is not followed)."""
    try:
        st = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return FileSig(st.st_mtime_ns, st.st_size)


def _step_names(folder: int) -> list[str]:
    """Names of the step entries in the open `steps/` folder, sorted: every non-hidden `.json`
    entry, so links, folders and special files are met (and reported as skipped), not hidden."""
    return sorted(
        entry.name
        for entry in os.scandir(folder)
        if entry.name.endswith(".json") and not entry.name.startswith(".")
    )


def parse_step(data: bytes) -> StepRecord:
    """A step file's record (`parse_bounded`), its observation parsed once per distinct value.

    Agents see the same screens again and again: few steps of a corpus have an observation not seen
    before, and the observation is most of a step file. Records share the parsed `Observation`
    (records are never changed in place: a changed record is a copy). The rest is validated from the
    parsed JSON; whatever that path refuses is parsed again the usual way, so a file that cannot be
    read is refused with the same reason as always (and a file read either way gives the same
    record: a test checks both on generated records)."""
    if len(data) > SMALL_FILE_BYTES:
        return parse_bounded(StepRecord, data)
    try:
        raw = from_json(data, allow_inf_nan=False)  # pydantic's parser: its numbers, its strings
        observation = raw.get("observation")
        if isinstance(observation, dict):
            raw["observation"] = _observation(orjson.dumps(observation))
        return StepRecord.model_validate(raw)
    except (ValueError, AttributeError, TypeError):
        # Invalid JSON or record, JSON that is no object, or values orjson does not write
        # as read (an integer beyond 64 bits): the usual way decides.
        return StepRecord.model_validate_json(data)


def _read_step_file(folder: int, name: str) -> tuple[StepRecord | bytes, os.stat_result]:
    """The step file `name` of the open `steps/` folder, with its `fstat`: its record when
    `kept_records` kept it from an earlier read of the same version (the file is not read),
    else its bytes. Raises what `read_regular` raises."""
    with open_regular(folder, name, MAX_READ_FILE_BYTES) as (fd, info):
        kept = kept_records.get(info)
        return (kept if kept is not None else read_open(fd, MAX_READ_FILE_BYTES)), info


def _step_record(read: StepRecord | bytes, info: os.stat_result) -> StepRecord:
    """The record `_read_step_file` read (kept when its file is large); raises what
    `parse_step` raises."""
    if isinstance(read, StepRecord):
        return read
    record = parse_step(read)
    kept_records.keep(info, record)
    return record


@lru_cache(maxsize=OBSERVATIONS_CACHED)
def _observation(data: bytes) -> Observation:
    return Observation.model_validate_json(data)


def step_id_for(session_id: str, file_name: str) -> str:
    """`<sessionId>/<file stem>`, the stable id of a step."""
    return f"{session_id}/{file_name.removesuffix('.json')}"


def _reason(exc: Exception) -> str:
    if isinstance(exc, UnsafeFile):
        return exc.reason
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
        """Session folders, sorted: every folder whose name is a valid session id
        (`validate_session_id`, the rule the tools check ids with; hidden folders are none).
        A link to a folder is listed too, so that reading it is refused and reported rather
        than silent."""
        try:
            entries = list(os.scandir(self.root))
        except FileNotFoundError:
            return []
        ids = []
        for entry in entries:
            with contextlib.suppress(InvalidInput, OSError):  # not a session folder
                if entry.is_dir(follow_symlinks=False) or (entry.is_symlink() and entry.is_dir()):
                    ids.append(validate_session_id(entry.name))
        return sorted(ids)

    def sweep_unfinished_writes(self) -> int:
        """Remove the temp files that writes killed half-way left in session folders (a server
        stopped by SIGTERM while recording); a write in progress is never touched
        (`sweep_stale_temps`). Returns how many were removed."""
        now = time.time()
        removed = 0
        for session_id in self.session_ids():
            folder = self.root / session_id
            removed += sweep_stale_temps(folder, now) + sweep_stale_temps(folder / STEPS_DIR, now)
        return removed

    def is_session_folder(self, session_id: str) -> bool:
        """Whether the folder holds what a session's does: `session.json` or `steps/` (what
        marks a knowledge root: folders like these)."""
        folder = self.root / session_id
        return (folder / SESSION_FILE).is_file() or (folder / STEPS_DIR).is_dir()

    def folder(
        self, session_id: str, *parts: str, create: bool = False
    ) -> contextlib.AbstractContextManager[int]:
        """A descriptor of the session's folder (or a folder inside it), never through a link."""
        return folder_inside(self.root, (validate_session_id(session_id), *parts), create)

    @contextlib.contextmanager
    def _writable(self, session_id: str, *parts: str) -> Iterator[int]:
        """`folder(…, create=True)`, refusing a session folder (or `steps/`) that is a link:
        nothing is ever written outside the root."""
        try:
            with self.folder(session_id, *parts, create=True) as folder:
                yield folder
        except UnsafeFile as exc:
            where = "/".join((session_id, *parts))
            raise InvalidInput(
                "sessionId", f"{where} is {exc.reason}; nothing was written"
            ) from None

    def _read(self, session_id: str, name: str) -> bytes:
        """A file of the session folder (raises FileNotFoundError, UnsafeFile, OSError)."""
        with self.folder(session_id) as folder:
            return read_regular(folder, name, MAX_READ_FILE_BYTES)

    def read_metadata(self, session_id: str) -> tuple[SessionMetadata | None, Skip | None]:
        path = self.root / session_id / SESSION_FILE
        try:
            meta = parse_bounded(SessionMetadata, self._read(session_id, SESSION_FILE))
        except (FileNotFoundError, NotADirectoryError):
            return None, None
        except (OSError, ValueError, ValidationError) as exc:
            return None, Skip(str(path), _reason(exc))
        return meta, None

    def read_decisions(self, session_id: str) -> tuple[dict[str, Supersession], Skip | None]:
        """The session's `superseded.json` (empty when absent; a corrupt one is a Skip)."""
        path = self.root / session_id / DECISIONS_FILE
        try:
            data = self._read(session_id, DECISIONS_FILE)
            return Supersessions.model_validate_json(data).steps, None
        except (FileNotFoundError, NotADirectoryError):
            return {}, None
        except (OSError, ValueError, ValidationError) as exc:
            return {}, Skip(str(path), _reason(exc))

    def write_decisions(self, session_id: str, decisions: dict[str, Supersession]) -> None:
        """Replace the session's `superseded.json` atomically (removed when empty)."""
        with self._writable(session_id) as folder:
            if not decisions:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(DECISIONS_FILE, dir_fd=folder)
                return
            ordered = dict(sorted(decisions.items()))
            write_at(folder, DECISIONS_FILE, _dump(Supersessions(steps=ordered)))

    def has_step(self, step_id: str) -> bool:
        """Whether `<sessionId>/<stem>` names a step file of this root (a regular file)."""
        session_id, _, stem = step_id.partition("/")
        if not stem or "/" in stem or stem.startswith("."):
            return False
        try:
            with self.folder(session_id, STEPS_DIR) as folder:
                st = os.stat(f"{stem}.json", dir_fd=folder, follow_symlinks=False)
        except (InvalidInput, OSError):
            return False
        return stat.S_ISREG(st.st_mode)

    def step_names(self, session_id: str) -> list[str]:
        """Names of the session's step entries, sorted (none when it has no readable folder)."""
        try:
            with self.folder(session_id, STEPS_DIR) as folder:
                return _step_names(folder)
        except (FileNotFoundError, NotADirectoryError, UnsafeFile):
            return []

    def read_step(self, session_id: str, file_name: str) -> StepRecord:
        """One step file (a big one cut to `engine.records.limits`' read limits); raises OSError
        (`UnsafeFile` too), ValueError or ValidationError when unreadable."""
        with self.folder(session_id, STEPS_DIR) as folder:
            return _step_record(*_read_step_file(folder, file_name))

    def load_session(self, session_id: str, only: Collection[str] | None = None) -> LoadedSession:
        """Read a whole session; corrupt files are skipped and reported, never raised. The
        session is signed as it is read (`LoadedSession.signature`). `only`: read just these
        step files (a page of a long session; its signature then signs only them)."""
        signer = _Signer()
        meta_sig = decisions_sig = None
        try:
            with self.folder(session_id) as folder:
                meta_sig = _file_sig(folder, SESSION_FILE)  # before reading: never newer
                decisions_sig = _file_sig(folder, DECISIONS_FILE)
        except UnsafeFile as exc:
            loaded = LoadedSession(
                session_id, SessionMetadata(sessionId=session_id, createdAt=""), False, None
            )
            loaded.skipped.append(Skip(str(self.root / session_id), exc.reason))
            loaded.refused = True
            signer.linked("session")
            loaded.signature = signer.hexdigest()
            loaded.content_signature = signer.content_hexdigest()
            return loaded
        except (FileNotFoundError, NotADirectoryError):
            pass
        _sign_folder_files(signer, meta_sig, decisions_sig)
        meta, meta_skip = self.read_metadata(session_id)
        meta_path = self.root / session_id / SESSION_FILE
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
            meta_sig=meta_sig if meta is not None else None,
        )
        if meta_skip:
            loaded.skipped.append(meta_skip)
        loaded.decisions, decisions_skip = self.read_decisions(session_id)
        if decisions_skip:
            loaded.skipped.append(decisions_skip)
        self._load_steps(loaded, signer, None if only is None else set(only))
        loaded.signature = signer.hexdigest()
        loaded.content_signature = signer.content_hexdigest()
        if meta is None:
            loaded.metadata = SessionMetadata(
                sessionId=session_id, createdAt=_first_timestamp(loaded.steps)
            )
        return loaded

    def _load_steps(self, loaded: LoadedSession, signer: _Signer, only: set[str] | None) -> None:
        """Read the session's step files (only those named in `only`, when given: a page of
        a long session, read without listing the folder again) into `loaded`; unreadable ones
        become Skips. Every `.json` entry read is signed: a file read by the `fstat` of what
        was read, any other entry (hidden, not UTF-8, unreadable) by its `lstat`, as
        `list_session` signs it."""
        directory = self.root / loaded.session_id / STEPS_DIR
        try:
            with self.folder(loaded.session_id, STEPS_DIR) as folder:
                if only is not None:  # an empty page reads nothing
                    for name in sorted(only):
                        self._load_step(loaded, folder, name)
                    loaded.steps = steps_in_order(loaded.steps)
                    return
                for entry in _json_entries(folder):
                    hidden = entry.name.startswith(".")
                    sig = None if hidden else self._load_step(loaded, folder, entry.name)
                    if sig is None:
                        try:
                            st = entry.stat(follow_symlinks=False)
                        except FileNotFoundError:
                            continue  # deleted while we were reading
                        sig = FileSig(st.st_mtime_ns, st.st_size)
                    signer.file(entry.name, sig)
        except (FileNotFoundError, NotADirectoryError):
            return
        except UnsafeFile as exc:
            signer.linked("steps")
            loaded.skipped.append(Skip(str(directory), exc.reason))
        loaded.steps = steps_in_order(loaded.steps)

    def _load_step(self, loaded: LoadedSession, folder: int, name: str) -> FileSig | None:
        """Read one entry of the open `steps/` folder into `loaded` (or a Skip); the signature
        of the file read, None when nothing was read."""
        if not is_readable_name(name):
            path = printable_path(self._step_path(loaded, name))
            loaded.skipped.append(Skip(path, "file name is not valid UTF-8"))
            return None
        try:
            read, info = _read_step_file(folder, name)
        except FileNotFoundError:
            return None
        except OSError as exc:
            loaded.skipped.append(Skip(str(self._step_path(loaded, name)), _reason(exc)))
            return None
        sig = FileSig(info.st_mtime_ns, info.st_size)
        try:
            record = _step_record(read, info)
        except (ValueError, ValidationError) as exc:
            loaded.skipped.append(Skip(str(self._step_path(loaded, name)), _reason(exc)))
            return sig
        loaded.steps.append(LoadedStep(step_id_for(loaded.session_id, name), record, sig))
        warned = step_warnings(name, record)
        if warned:
            path = str(self._step_path(loaded, name))
            loaded.warnings += [Skip(path, reason) for reason in warned]
        return sig

    def _step_path(self, loaded: LoadedSession, name: str) -> Path:
        """Where a step file is, for reports (built only for those: it costs microseconds)."""
        return self.root / loaded.session_id / STEPS_DIR / name

    def iter_sessions(self) -> Iterator[LoadedSession]:
        for session_id in self.session_ids():
            yield self.load_session(session_id)

    # -- writing ---------------------------------------------------------------------------
    def write_session(self, metadata: SessionMetadata) -> Path:
        """Write `session.json` atomically (creating the session folder)."""
        with self._writable(metadata.sessionId) as folder:
            write_at(folder, SESSION_FILE, _dump(metadata))
        return self.root / metadata.sessionId / SESSION_FILE

    def record_step(self, record: StepRecord, *, stamp: Callable[[], str] | None = None) -> str:
        """Write a step as the session's next step file; returns its step id.

        The name follows the session's form (`engine.records.step_names`): the next
        `<NNNN>-<tool>.json`, or `<YYYYMMDD-HHMMSS-mmm>-<tool>.json` of the record's time
        where the session (or, for its first step, the root) uses today's recorder's names.
        Labels are derived from the tool and outcome when the record has none. The file is
        created atomically and never overwrites another step, even with concurrent writers.

        Naming is atomic across processes: the session's `steps/` folder is locked (`flock`)
        while its names are listed and the next one is created, so two recorders never take
        one number (each its own tool name would not collide, and the steps would share a
        place in the session). `stamp`, when given, is the record's time, taken inside that
        lock: numbers then follow the times stamped, whichever process wins the lock.
        """
        session_id = validate_session_id(record.sessionId)
        record = labelled(record)
        tool = _SAFE_TOOL.sub("_", record.tool.name)[:64] or "step"
        with self._writable(session_id, STEPS_DIR) as folder, _locked(folder):
            if stamp is not None:
                record = record.model_copy(update={"timestamp": stamp()})
            data = _dump(record)
            names = _step_names(folder)
            stamps = uses_stamps(names)
            if stamps is None:
                stamps = self._root_uses_stamps(session_id)
            if stamps:
                moment = parse_time(record.timestamp) or datetime.now(UTC)
                name = _create_stamped(folder, names, moment, tool, data)
            else:
                numbered = [n for n in names if name_form(n) != "stamped"]
                name = _create_numbered(folder, numbered, f"-{tool}.json", data)
        return step_id_for(session_id, name)

    def _root_uses_stamps(self, session_id: str) -> bool:
        """Whether the root's latest sessions with step files use today's recorder's names
        (those of the newest session ids first, a few at most: this runs once per session)."""
        others = [s for s in self.session_ids() if s != session_id]
        for other in others[::-1][:ROOT_SESSIONS_ASKED]:
            stamps = uses_stamps(self.step_names(other))
            if stamps is not None:
                return stamps
        return False

    def read_artifact(self, session_id: str, relative: str, limit: int) -> bytes:
        """A file `save_artifact` wrote, by the path a record holds (`<folder>/<file>`, relative
        to the session folder). Recorded paths are not trusted: anything but two plain parts
        (`..`, hidden, absolute, `steps/`) raises `InvalidInput`; a link, a file that is not
        regular or larger than `limit` raises `UnsafeFile`, a missing one FileNotFoundError."""
        parts = relative.split("/")
        if len(parts) != 2 or parts[0] == STEPS_DIR or any(not p or p[0] == "." for p in parts):
            raise InvalidInput("path", "does not name a file saved beside the session's steps")
        with self.folder(session_id, parts[0]) as folder:
            return read_regular(folder, parts[1], limit)

    def save_artifact(self, session_id: str, folder_name: str, suffix: str, data: bytes) -> str:
        """Write `data` as the next `<session>/<folder_name>/<NNNN><suffix>` (a screenshot),
        inside the root like every step; returns its path relative to the session folder."""
        with self._writable(session_id, folder_name) as folder:
            taken = [n for n in os.listdir(folder) if not n.startswith(".")]
            name = _create_numbered(folder, taken, suffix, data)
        return f"{folder_name}/{name}"


def step_warnings(name: str, record: StepRecord) -> list[str]:
    """What of a step file read could not be used, and why: a name of neither form, parts of
    a batch that cannot be read (the rest of the file is indexed)."""
    found = [NEITHER] if name_form(name) is None else []
    batch = read_batch(record)
    return found if batch is None else [*found, *batch.problems]


def steps_in_order(steps: Sequence[LoadedStep]) -> list[LoadedStep]:
    """Loaded steps in step order (`engine.records.step_names`: their file names, and their
    records' times where the names do not decide)."""
    return in_order(steps, _file_name, _record_time)


def _file_name(step: LoadedStep) -> str:
    return step.step_id.split("/", 1)[1]


def _record_time(step: LoadedStep) -> int:
    return epoch_ms(step.record.timestamp)


@contextlib.contextmanager
def _locked(folder: int) -> Iterator[None]:
    """An exclusive `flock` on the open folder, released when the block ends (or the process
    dies: the OS drops it with the descriptor)."""
    fcntl.flock(folder, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(folder, fcntl.LOCK_UN)


def _dump(model: SessionMetadata | StepRecord | Supersessions) -> bytes:
    return orjson.dumps(
        model.model_dump(mode="json", exclude_none=True), option=orjson.OPT_INDENT_2
    )


def _create_numbered(folder: int, taken: list[str], suffix: str, data: bytes) -> str:
    """Create `<NNNN><suffix>` in the open `folder`, the number after those `taken`; never
    overwrites a file, even with concurrent writers. Returns the name."""
    number = _next_number(taken)
    while not create_at(folder, name := f"{number:04d}{suffix}", data):
        number += 1
    return name


def _create_stamped(folder: int, names: list[str], moment: datetime, tool: str, data: bytes) -> str:
    """Create `<YYYYMMDD-HHMMSS-mmm>-<tool>.json` in the open `folder` for `moment`, after
    every stamped name there; never overwrites a file, even with concurrent writers."""
    stamped = [n for n in names if name_form(n) == "stamped"]
    name = stamped_name(moment, tool, max(stamped, default=None))
    while not create_at(folder, name, data):
        name = stamped_name(moment, tool, name)
    return name


def _next_number(names: list[str]) -> int:
    highest = 0
    for name in names:
        head = name.split("-", 1)[0]
        if head.isdigit():
            highest = max(highest, int(head))
    return max(highest, len(names)) + 1


def _first_timestamp(steps: list[LoadedStep]) -> str:
    """createdAt of a session without metadata: its earliest readable step time (or now)."""
    times = [s.record.timestamp for s in steps if parse_time(s.record.timestamp)]
    return min(times, key=lambda t: parse_time(t) or 0) if times else now_iso()

"""One logical session, written as either generation of MetaMask's knowledge records.

knowhow reads knowledge roots written by MetaMask's agent tooling, whose record format moved on.
This writer is ours, written from the published type definitions field by field (not from
their code), so the compatibility suite can write the *same* session both ways and ask the
engine the same questions of each:

- `write_old`: the records our specs describe (IMPROVEMENT-01, as `tests/conftest.py` writes
  them): `steps/0001-mm_click.json`, tool names with the `mm_` prefix, full observations.
- `write_new`: today's records (client-mcp-core 0.5): `steps/20260115-120000-123-click.json`
  (local time, monotonic), tool names without a prefix, `context` on every step,
  `environment`/`timing`, `launch` and `build` in `session.json`, `run_steps` batches (one
  record for the whole batch: `tool.input.steps`, no `tool.target`, the observation after the
  batch), and optionally diff-mode observations (`observation.a11y.diff`: `added` and `removed`
  refs, the `unchanged` count, only changed or new nodes listed).

Both generations redact typed text the same way (`[REDACTED]`, `textRedacted`, `textLength`
when the target names a secret); today's recorder does not look inside a batch, so a password
typed in a `run_steps` batch is written in clear, as it is in the wild.
"""

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

EXTENSION_ID = "hebhblbkkdabgoldnojllkipeoacjioc"
SECRET = re.compile(r"password|seed|srp|phrase|mnemonic|private.*key|secret|api[-_]?key", re.I)
DISCOVERY = {"describe_screen", "list_testids", "accessibility_snapshot", "get_state"}
NAVIGATION = {"navigate", "wait_for_notification"}
INTERACTION = {"click", "type", "wait_for"}
TARGETED = {"click", "type", "wait_for", "get_text"}
"""Tools whose input selects an element (their validated input gets `timeoutMs`)."""
OBSERVATION_RESETS = {"describe_screen", "launch", "cleanup"}
"""After these the daemon forgets the last observation: the next one is not a diff."""

Format = Literal["old", "new"]


@dataclass(frozen=True)
class Node:
    """An accessibility node (`A11yNodeTrimmed`)."""

    ref: str
    role: str
    name: str
    test_id: str | None = None


@dataclass(frozen=True)
class Screen:
    """What an observation shows: the screen, its URL, testIds (id, text) and a11y nodes."""

    name: str | None
    url: str | None = None
    test_ids: Sequence[tuple[str, str]] = ()
    nodes: Sequence[Node] = ()
    hidden: Sequence[str] = ()
    """testIds listed as not visible."""


@dataclass(frozen=True)
class Act:
    """One tool call, without a prefix: `click`, `type`, `navigate`, `switch_to_tab`, …"""

    tool: str
    test_id: str | None = None
    selector: str | None = None
    a11y_ref: str | None = None
    text: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict)
    """Other input (`{"screen": "home"}` for a navigation, `{"action": "add"}`, …)."""

    def raw_args(self) -> dict[str, Any]:
        """The arguments as an agent sends them (a batch records these, unvalidated)."""
        args: dict[str, Any] = {}
        for key, value in (
            ("testId", self.test_id),
            ("selector", self.selector),
            ("a11yRef", self.a11y_ref),
            ("text", self.text),
        ):
            if value is not None:
                args[key] = value
        args.update(self.args)
        return args

    def validated_input(self) -> dict[str, Any]:
        """The input a standalone call is recorded with: zod's defaults filled in."""
        args = self.raw_args()
        if self.tool in TARGETED:
            args.setdefault("timeoutMs", 15000)
        return args

    def target(self) -> dict[str, str] | None:
        """`extractTargetFromInput`: the selection fields present, or none."""
        found = {
            key: value
            for key, value in (
                ("a11yRef", self.a11y_ref),
                ("testId", self.test_id),
                ("selector", self.selector),
            )
            if value is not None
        }
        return found or None


@dataclass(frozen=True)
class Step:
    """A standalone tool call and the observation taken after it (None: none was taken)."""

    act: Act
    seen: Screen | None
    ok: bool = True
    error: tuple[str, str] | None = None


@dataclass(frozen=True)
class Batch:
    """A `run_steps` call: its inner actions, one outcome and the observation after them."""

    acts: Sequence[Act]
    seen: Screen | None
    ok: bool = True
    error: tuple[str, str] | None = None
    stop_on_error: bool = False
    include_observations: str = "all"


@dataclass
class Session:
    """A logical session: metadata and its calls in order, one every `interval`."""

    session_id: str
    created: datetime
    items: list[Step | Batch] = field(default_factory=list)
    goal: str | None = None
    flow_tags: Sequence[str] = ()
    tags: Sequence[str] = ()
    context: str = "e2e"
    state_mode: str = "default"
    fixture_preset: str | None = None
    interval: timedelta = timedelta(seconds=10)

    def step(self, act: Act, seen: Screen | None, **outcome: Any) -> "Session":
        self.items.append(Step(act, seen, **outcome))
        return self

    def batch(self, acts: Iterable[Act], seen: Screen | None, **fields: Any) -> "Session":
        self.items.append(Batch(tuple(acts), seen, **fields))
        return self

    def times(self) -> list[datetime]:
        return [self.created + self.interval * (i + 1) for i in range(len(self.items))]


def iso(moment: datetime) -> str:
    """`2026-01-15T12:00:00.000Z`, as `Date.toISOString()` writes it."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def file_stamp(moment: datetime) -> str:
    """`generateFilesafeTimestamp`: local time, `YYYYMMDD-HHMMSS-mmm`."""
    local = moment.astimezone()
    return local.strftime("%Y%m%d-%H%M%S-") + f"{local.microsecond // 1000:03d}"


def labels(tool: str, target: Mapping[str, str] | None, ok: bool) -> list[str]:
    """`computeLabels` (the same in both generations, on the name without prefix)."""
    found: list[str] = []
    if tool in DISCOVERY:
        found.append("discovery")
    elif tool in NAVIGATION:
        found.append("navigation")
    elif tool in INTERACTION:
        found.append("interaction")
        if any(w in json.dumps(target or {}).lower() for w in ("confirm", "approve", "submit")):
            found.append("confirmation")
    if not ok:
        found.append("error-recovery")
    return found


def sanitized(tool: str, args: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """`sanitizeInput`: the input to record and the redaction fields of `tool` (top level only)."""
    clean: dict[str, Any] = {}
    flags: dict[str, Any] = {}
    for key, value in args.items():
        if tool == "type" and key == "text":
            named = f"{args.get('testId') or ''} {args.get('selector') or ''}"
            if SECRET.search(named) or SECRET.search(key):
                flags = {"textRedacted": True, "textLength": len(str(value))}
                clean[key] = "[REDACTED]"
            else:
                clean[key] = value
        elif SECRET.search(key):
            clean[key] = "[REDACTED]"
        else:
            clean[key] = value
    return clean, flags


def state(seen: Screen | None) -> dict[str, Any]:
    """`ExtensionState` of an observation (`{}` when none was taken)."""
    if seen is None:
        return {}
    return {
        "isLoaded": True,
        "currentUrl": seen.url or f"chrome-extension://{EXTENSION_ID}/home.html",
        "extensionId": EXTENSION_ID,
        "isUnlocked": True,
        "currentScreen": seen.name or "unknown",
        "accountAddress": "0x5cfe73b6021e818b776b421b1c4db2474086a7e1",
        "networkName": "Localhost 8545",
        "chainId": 1337,
        "balance": "25 ETH",
    }


def node_json(node: Node) -> dict[str, Any]:
    data: dict[str, Any] = {"ref": node.ref, "role": node.role, "name": node.name, "path": []}
    if node.test_id:
        data["testId"] = node.test_id
    return data


def observation(seen: Screen | None) -> dict[str, Any]:
    """A full observation (`createDefaultObservation`)."""
    if seen is None:
        return {"state": {}, "testIds": [], "a11y": {"nodes": []}}
    items = []
    for test_id, text in seen.test_ids:
        item: dict[str, Any] = {"testId": test_id, "tag": "button"}
        if text:
            item["text"] = text
        item["visible"] = test_id not in seen.hidden
        items.append(item)
    return {
        "state": state(seen),
        "testIds": items,
        "a11y": {"nodes": [node_json(n) for n in seen.nodes]},
    }


def diffed(current: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    """`compactObservation` in diff mode: changed or new nodes only, with `a11y.diff`; the full
    observation when the diff would list as many nodes."""
    before = {n["ref"]: n for n in previous["a11y"]["nodes"]}
    now = {n["ref"]: n for n in current["a11y"]["nodes"]}
    listed = [n for ref, n in now.items() if before.get(ref) != n]
    added = [ref for ref in now if ref not in before]
    removed = [ref for ref in before if ref not in now]
    if len(listed) >= len(now):
        return current
    unchanged = len(now) - len(listed)
    return {
        **current,
        "a11y": {
            "nodes": listed,
            "diff": {"added": added, "removed": removed, "unchanged": unchanged},
        },
    }


def error_json(ok: bool, error: tuple[str, str] | None) -> dict[str, Any]:
    outcome: dict[str, Any] = {"ok": ok}
    if error:
        outcome["error"] = {"code": error[0], "message": error[1]}
    return outcome


def _write(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def _write_session(folder: Path, session: Session, **today: Any) -> None:
    """`session.json` (SessionMetadata v1), with `today`'s fields (`build`, `launch`) added."""
    metadata = {
        "schemaVersion": 1,
        "sessionId": session.session_id,
        "createdAt": iso(session.created),
        **({"goal": session.goal} if session.goal else {}),
        "flowTags": list(session.flow_tags),
        "tags": list(session.tags),
    }
    _write(folder / "session.json", metadata | today)


def write_old(root: Path, session: Session) -> list[str]:
    """The session as IMPROVEMENT-01 records; returns the step ids. Batches did not exist."""
    folder = root / session.session_id
    _write_session(folder, session)
    ids = []
    for number, (item, moment) in enumerate(zip(session.items, session.times(), strict=True), 1):
        if isinstance(item, Batch):
            raise ValueError("the old format has no batches")
        act = item.act
        name = f"mm_{act.tool}"
        clean, flags = sanitized(act.tool, act.validated_input())
        tool: dict[str, Any] = {"name": name, "input": clean}
        if act.target():
            tool["target"] = act.target()
        tool.update(flags)
        record = {
            "schemaVersion": 1,
            "timestamp": iso(moment),
            "sessionId": session.session_id,
            "tool": tool,
            "timing": {"durationMs": 120},
            "outcome": error_json(item.ok, item.error),
            "observation": observation(item.seen),
            "labels": labels(act.tool, act.target(), item.ok),
        }
        stem = f"{number:04d}-{name}"
        _write(folder / "steps" / f"{stem}.json", record)
        ids.append(f"{session.session_id}/{stem}")
    return ids


def write_new(root: Path, session: Session, *, diff: bool = False) -> list[str]:
    """The session as client-mcp-core 0.5 records it; returns the step ids. With `diff`, each
    observation after the first is written in diff mode where that lists fewer nodes."""
    folder = root / session.session_id
    _write_session(
        folder,
        session,
        build={"buildType": "build:test", "extensionPathResolved": "/repo/dist/chrome"},
        launch={
            "stateMode": session.state_mode,
            "fixturePreset": session.fixture_preset,
            "extensionPath": "/repo/dist/chrome",
            "ports": {"anvil": 8545, "fixtureServer": 12345},
        },
    )
    ids = []
    last_stamp = ""
    previous: dict[str, Any] | None = None
    for item, moment in zip(session.items, session.times(), strict=True):
        stamp = file_stamp(moment)
        while stamp <= last_stamp:  # monotonic per process, as the recorder's names are
            moment += timedelta(milliseconds=1)
            stamp = file_stamp(moment)
        last_stamp = stamp
        if isinstance(item, Batch):
            tool_name = "run_steps"
            steps = [{"tool": a.tool, "args": a.raw_args()} for a in item.acts]
            raw = {
                "steps": steps,
                "stopOnError": item.stop_on_error,
                "includeObservations": item.include_observations,
            }
            target = None
            ok, error = item.ok, item.error
            seen = item.seen if item.include_observations != "none" else None
        else:
            tool_name = item.act.tool
            raw = item.act.validated_input()
            target = item.act.target()
            ok, error, seen = item.ok, item.error, item.seen
        clean, flags = sanitized(tool_name, raw)
        tool: dict[str, Any] = {"name": tool_name, "input": clean}
        if target:
            tool["target"] = target
        tool.update(flags)
        full = observation(seen)
        observed = diffed(full, previous) if diff and previous is not None and seen else full
        record = {
            "schemaVersion": 1,
            "timestamp": iso(moment),
            "sessionId": session.session_id,
            "context": session.context,
            "environment": {"platform": "linux", "nodeVersion": "v20.11.1"},
            "tool": tool,
            "timing": {"durationMs": 120},
            "outcome": error_json(ok, error),
            "observation": observed,
            "labels": labels(tool_name, target, ok),
        }
        stem = f"{stamp}-{tool_name}"
        _write(folder / "steps" / f"{stem}.json", record)
        ids.append(f"{session.session_id}/{stem}")
        previous = None if tool_name in OBSERVATION_RESETS else (full if seen else previous)
    return ids


def write(root: Path, session: Session, fmt: Format, *, diff: bool = False) -> list[str]:
    """`write_old` or `write_new` (`diff` only applies to the new format)."""
    return write_old(root, session) if fmt == "old" else write_new(root, session, diff=diff)


BATCHED = frozenset({"click", "type", "wait_for"})
"""Actions `convert_root` folds into `run_steps` batches when they follow each other."""
BATCH_SIZE = 5
"""At most this many actions per converted batch (runs longer than that are cut)."""


@dataclass
class Conversion:
    """What `convert_root` wrote: counts, and the old steps each new one holds."""

    counts: dict[str, int]
    """sessions, steps (new records), actions (old steps they hold), batches, copied files."""
    sources: dict[str, list[str]]
    """New step id -> the ids of the old steps it holds (several: a batch), in order."""


def convert_root(
    old_root: Path, new_root: Path, *, diff: bool = True, batches: bool = False
) -> Conversion:
    """Rewrite a knowledge root of old records (`gen_corpus.py`'s) as today's: the same steps
    with bare tool names, timestamp file names, `context`, `environment`, `launch`/`build` in
    `session.json` and (with `diff`) diff-mode observations. With `batches`, each run of two or
    more successive clicks, types and waits that all worked (`BATCHED`, at most `BATCH_SIZE`
    at a time) becomes one `run_steps` record, as an agent batching them would leave it: the
    actions as sent (without the defaults validation adds), the time and observation of the
    last, no target; every other step stays one file. A file that is not a readable step record
    is copied as it is, under its own name (the corpus has such files on purpose)."""
    counts = {"sessions": 0, "steps": 0, "actions": 0, "batches": 0, "copied": 0}
    sources: dict[str, list[str]] = {}
    for folder in sorted(p for p in old_root.iterdir() if p.is_dir()):
        target = new_root / folder.name
        (target / "steps").mkdir(parents=True, exist_ok=True)
        counts["sessions"] += 1
        meta = folder / "session.json"
        if meta.is_file():
            _convert_session(meta, target / "session.json")
        last_stamp = ""
        previous: dict[str, Any] | None = None
        steps = folder / "steps"
        paths = sorted(steps.iterdir()) if steps.is_dir() else []
        for group in _groups(paths, batches):
            if isinstance(group, Path):
                (target / "steps" / group.name).write_bytes(group.read_bytes())
                counts["copied"] += 1
                continue
            record = group[0][1] if len(group) == 1 else _batch_record([r for _, r in group])
            moment = datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00"))
            tool = record["tool"]["name"].removeprefix("mm_")
            stamp = file_stamp(moment)
            while stamp <= last_stamp:
                moment += timedelta(milliseconds=1)
                stamp = file_stamp(moment)
            last_stamp = stamp
            record["tool"]["name"] = tool
            record = {
                **{k: v for k, v in record.items() if k not in ("tool", "outcome")},
                "context": "e2e",
                "environment": {"platform": "linux", "nodeVersion": "v20.11.1"},
                "tool": record["tool"],
                "outcome": record["outcome"],
            }
            observed = record["observation"]
            full = observed if isinstance(observed, dict) else None
            if diff and previous is not None and _has_nodes(full):
                record["observation"] = diffed(full, previous)  # type: ignore[arg-type]
            (target / "steps" / f"{stamp}-{tool}.json").write_text(json.dumps(record, indent=2))
            sources[f"{folder.name}/{stamp}-{tool}"] = [f"{folder.name}/{p.stem}" for p, _ in group]
            counts["steps"] += 1
            counts["actions"] += len(group)
            counts["batches"] += len(group) > 1
            if tool in OBSERVATION_RESETS:
                previous = None
            elif _has_nodes(full):
                previous = full
    return Conversion(counts, sources)


Read = tuple[Path, dict[str, Any]]
"""A step file and the record it holds."""


def _groups(paths: Sequence[Path], batches: bool) -> list[Path | list[Read]]:
    """A session's step files in order as what `convert_root` writes of them: a path to copy
    (not a readable record), or the records of one new step (several: a batch)."""
    groups: list[Path | list[Read]] = []
    run: list[Read] = []

    def end_run() -> None:
        for at in range(0, len(run), BATCH_SIZE):
            chunk = run[at : at + BATCH_SIZE]
            groups.extend([chunk] if len(chunk) > 1 else [[r] for r in chunk])
        run.clear()

    for path in paths:
        record = _readable(path)
        if record is None:
            end_run()
            groups.append(path)
        elif batches and _batchable(record):
            run.append((path, record))
        else:
            end_run()
            groups.append([(path, record)])
    end_run()
    return groups


def _readable(path: Path) -> dict[str, Any] | None:
    """The step record in `path`, or None when it is not one `convert_root` can convert."""
    try:
        record = json.loads(path.read_bytes())
        datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00"))
        named = isinstance(record["tool"]["name"], str)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return record if named and "observation" in record else None


def _batchable(record: dict[str, Any]) -> bool:
    outcome = record.get("outcome")
    return (
        record["tool"]["name"].removeprefix("mm_") in BATCHED
        and isinstance(outcome, dict)
        and outcome.get("ok") is True
    )


def _batch_record(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One `run_steps` record for `records` (old records that all worked), as `write_new`
    writes a batch: the actions as sent (the target in the arguments, where an agent gives
    it), the last one's time and observation."""
    last = records[-1]
    steps = []
    for record in records:
        given, target = record["tool"].get("input"), record["tool"].get("target")
        args = (
            {k: v for k, v in given.items() if k != "timeoutMs"} if isinstance(given, dict) else {}
        )
        args |= target if isinstance(target, dict) else {}
        steps.append({"tool": record["tool"]["name"].removeprefix("mm_"), "args": args})
    durations = [r.get("timing", {}).get("durationMs", 0) for r in records]
    return {
        **{k: v for k, v in last.items() if k not in ("tool", "timing", "labels")},
        "tool": {
            "name": "run_steps",
            "input": {"steps": steps, "stopOnError": True, "includeObservations": "all"},
        },
        "timing": {"durationMs": sum(d for d in durations if isinstance(d, int | float))},
        "labels": labels("run_steps", None, True),
    }


def _has_nodes(observation: dict[str, Any] | None) -> bool:
    a11y = observation.get("a11y") if observation else None
    return isinstance(a11y, dict) and isinstance(a11y.get("nodes"), list)


def _convert_session(old: Path, new: Path) -> None:
    """`session.json` with today's `build` and `launch` (a corrupt one is copied as it is)."""
    data = old.read_bytes()
    try:
        meta = json.loads(data)
        meta.setdefault("build", {"buildType": "build:test"})
        meta.setdefault("launch", {"stateMode": "default", "fixturePreset": None})
    except (ValueError, AttributeError):
        new.write_bytes(data)
        return
    new.write_text(json.dumps(meta, indent=2))

"""`run_steps` batches: one record that holds several actions (today's MetaMask records).

A batch's record lists its actions in `tool.input.steps` as the agent sent them (`{tool,
args}`, unvalidated: `navigate_home`-style aliases, `ref` for `a11yRef`), has one outcome and
the observation after its last action, and no `tool.target`. Each action is read here into an
`InnerAction`, which `as_record` turns into a record of its own, so whatever understands a step
(labels, targets, texts, supersede facts) understands each action of a batch.

What the record cannot say is not guessed:
- outcome: a batch that worked worked in every action. A failed batch says only that
  something failed — with `stopOnError` it worked up to an unknown action, without it each
  action ran and some failed — so its actions' outcomes are unknown, unless it holds one action,
  whose outcome the batch's is.
- screen: the first action was taken where the batch started; after an action that stays on
  its screen (typing, waiting, looking) the next one is on the same screen; after a navigation
  to a named screen, on that one; otherwise on the screen the batch ended on when its target is
  seen there, else on an unknown screen (None).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from engine.records.labels import BATCH_TOOL, DISCOVERY_TOOLS, SETUP_TOOLS, tool_action
from engine.records.models import Observation, Outcome, StepRecord, StepTarget, ToolCall

MAX_BATCH_ACTIONS = 100
"""Actions of one batch that are read (MetaMask's own schema allows 50); more are reported."""
ALIASES: Mapping[str, tuple[str, Mapping[str, str]]] = {
    alias: ("navigate", {"screen": screen})
    for screen in ("home", "settings", "notification")
    for alias in (f"navigate_{screen}", f"navigate-{screen}")
}
"""Compound names an agent may send inside a batch, as the recorder's batch runner reads them."""
TARGETED = frozenset({"click", "type", "wait_for", "get_text"})
"""Actions whose arguments select an element (where `ref` stands for `a11yRef`)."""
STAYING = DISCOVERY_TOOLS | SETUP_TOOLS | {"type", "wait_for", "screenshot", "clipboard"}
"""Actions that leave the page where it was: the next action is on the same screen."""
NAMED_SCREENS = frozenset({"home", "settings"})
"""`navigate {screen}` values that are also the screen names observations report."""

ActionOutcome = Literal["ok", "failed", "unknown"]


@dataclass(frozen=True, slots=True)
class InnerAction:
    """One action of a batch, at its position `index` in `tool.input.steps`."""

    index: int
    tool: str
    """The tool as named in the batch (an alias resolved: `navigate_home` -> `navigate`)."""
    input: dict[str, Any]
    target: StepTarget | None


@dataclass(frozen=True, slots=True)
class Batch:
    """The readable actions of a batch record and what could not be read of it."""

    actions: tuple[InnerAction, ...]
    stop_on_error: bool
    problems: tuple[str, ...]
    """Why parts of the batch were left out, e.g. `batch[2] has no tool`."""

    def outcome(self, ok: bool) -> ActionOutcome:
        """Each action's outcome, as far as the batch's one outcome tells it."""
        if ok:
            return "ok"
        return "failed" if len(self.actions) == 1 else "unknown"


def is_batch(record: StepRecord) -> bool:
    """`tool_action(name) == "run_steps"`, said without a lookup: it is asked of every step
    several times (reading, redaction, indexing)."""
    name = record.tool.name
    return name.endswith(BATCH_TOOL) and (name == BATCH_TOOL or name.endswith("_" + BATCH_TOOL))


def read_batch(record: StepRecord) -> Batch | None:
    """The batch `record` holds; None when it is not a `run_steps` record."""
    if not is_batch(record):
        return None
    given = (record.tool.input or {}).get("steps")
    stop = (record.tool.input or {}).get("stopOnError") is True
    if not isinstance(given, list):
        kind = "missing" if given is None else f"{type(given).__name__}, not a list"
        return Batch((), stop, (f"tool.input.steps is {kind}: the batch's actions are unknown",))
    problems: list[str] = []
    actions: list[InnerAction] = []
    for index, raw in enumerate(given[:MAX_BATCH_ACTIONS]):
        read = _inner(index, raw)
        if isinstance(read, str):
            problems.append(read)
        else:
            actions.append(read)
    if len(given) > MAX_BATCH_ACTIONS:
        problems.append(
            f"the batch lists {len(given):,} inner steps (or more: long lists are cut when read); "
            f"the first {MAX_BATCH_ACTIONS} are indexed"
        )
    return Batch(tuple(actions), stop, tuple(problems))


def _inner(index: int, raw: object) -> InnerAction | str:
    """One entry of `steps` read, or why it cannot be."""
    where = f"batch[{index}]"
    if not isinstance(raw, dict):
        return f"{where} is {type(raw).__name__}, not an object with a tool: left out"
    tool = raw.get("tool")
    if not isinstance(tool, str) or not tool.strip():
        return f"{where} has no tool: left out"
    args = raw.get("args")
    args = dict(args) if isinstance(args, dict) else {}
    if tool in ALIASES:
        tool, inject = ALIASES[tool]
        args = {**inject, **args}
    if tool_action(tool) in TARGETED and "ref" in args and "a11yRef" not in args:
        args["a11yRef"] = args.pop("ref")
    picked = {
        k: v for k in ("testId", "selector", "a11yRef") if isinstance(v := args.get(k), str) and v
    }
    target = StepTarget(**picked) if picked else None
    return InnerAction(index, tool, args, target)


def entry_records(record: StepRecord) -> list[StepRecord] | None:
    """Every entry of a batch's `steps` list as a record of its own, readable or not (an
    entry without a tool is still what an agent typed: redaction looks at each alone); None
    when the record holds no list of steps."""
    if not is_batch(record):
        return None
    given = (record.tool.input or {}).get("steps")
    if not isinstance(given, list):
        return None
    records = []
    for index, raw in enumerate(given):
        read = _inner(index, raw)
        if isinstance(read, str):
            args = raw.get("args") if isinstance(raw, dict) else None
            given_args = args if isinstance(args, dict) else {"entry": raw}
            read = InnerAction(index, "", given_args, None)
        records.append(as_record(record, read, "unknown"))
    return records


NO_OBSERVATION = Observation()
"""The observation of every action of a batch: one object, so that what is derived from an
observation and remembered by its identity (`engine.core.ByIdentity`) is derived once, and
the actions of many batches do not push the shared observations of steps out of those
memories. Never changed (records are copied, never changed in place)."""


def as_record(batch: StepRecord, action: InnerAction, outcome: ActionOutcome) -> StepRecord:
    """An action of a batch as a record of its own: the batch's time and session, the
    action's tool, input and target, and no observation (the batch's is after its last
    action). An unknown outcome reads as not ok, without the batch's error: nothing counts
    it as having worked, nor as having failed that way."""
    error = batch.outcome.error if outcome == "failed" else None
    return StepRecord(
        timestamp=batch.timestamp,
        sessionId=batch.sessionId,
        tool=ToolCall(name=action.tool, input=action.input, target=action.target),
        outcome=Outcome(ok=outcome == "ok", error=error),
        observation=NO_OBSERVATION,
    )


def inner_screens(
    batch: Batch,
    started_on: str | None,
    ended_on: str | None,
    seen_at_end: Callable[[InnerAction], bool],
) -> list[str | None]:
    """The screen each action of the batch was taken on (None: unknown), as the module says."""
    screens: list[str | None] = []
    here, known = started_on, True
    for action in batch.actions:
        if not known:
            here = ended_on if seen_at_end(action) else None
        screens.append(here)
        action_name = tool_action(action.tool)
        destination = action.input.get("screen")
        if action_name == "navigate" and destination in NAMED_SCREENS:
            here, known = str(destination), True
        else:
            known = action_name in STAYING
    return screens

"""The actions of a batch step as its document holds them: each resolved, placed and judged.

`engine.records.batches` reads the actions of a `run_steps` record and what its one outcome
tells of each. Here each action gets its target resolved against what the agent saw before the
batch (the recorder resolves a batch's refs against that snapshot: the agent had no other) and
its screen placed; the step's document then carries their words as it carries a step's own —
tools, targets and screens searchable and filterable — and its payload lists them in order
(`BatchEntry`), so evidence names the action (`batch[2].testId:coin-overview-swap`).
"""

from collections.abc import Callable
from dataclasses import dataclass

from engine.index.payload import BatchEntry, ResolvedTarget
from engine.records import (
    UNKNOWN,
    ActionOutcome,
    Batch,
    InnerAction,
    Observation,
    StepRecord,
    as_record,
    inner_screens,
    record_labels,
    selector_test_id,
)


@dataclass(frozen=True, slots=True)
class BatchStep:
    """One action of a batch, analysed."""

    index: int
    record: StepRecord
    """The action as a record of its own (`engine.records.as_record`)."""
    target: ResolvedTarget | None
    screen: str | None
    """The screen it was taken on; None when the record cannot tell."""
    outcome: ActionOutcome

    def entry(self) -> BatchEntry:
        return {
            "index": self.index,
            "tool": self.record.tool.name,
            "target": self.target.payload() if self.target else None,
            "screen": self.screen,
            "outcome": self.outcome,
        }

    def labels(self) -> list[str]:
        return record_labels(self.record)

    def described(self) -> str:
        """How results name its target: `batch[2].testId:coin-overview-swap`."""
        return f"batch[{self.index}].{self.target.describe()}" if self.target else ""


def analyse_batch(
    record: StepRecord,
    batch: Batch,
    resolve: Callable[[StepRecord], ResolvedTarget | None],
    started_on: str | None,
    ended_on: str,
) -> list[BatchStep]:
    """The analysed actions of `batch` (held by `record`), which started on `started_on` and
    ended on `ended_on` (the screen of `record`'s observation)."""
    outcome = batch.outcome(record.outcome.ok)
    records = [as_record(record, action, outcome) for action in batch.actions]
    targets = {a.index: resolve(r) for a, r in zip(batch.actions, records, strict=True)}
    seen_at_end = _seen_in(record.observation, targets)
    end = ended_on if ended_on != UNKNOWN else None
    screens = inner_screens(batch, started_on, end, seen_at_end)
    return [
        BatchStep(action.index, action_record, targets[action.index], screen, outcome)
        for action, action_record, screen in zip(batch.actions, records, screens, strict=True)
    ]


def _seen_in(
    observation: Observation, targets: dict[int, ResolvedTarget | None]
) -> Callable[[InnerAction], bool]:
    """Whether an action's target is among what `observation` shows (by testId or name)."""
    test_ids = {item.testId for item in observation.testIds}
    names = {node.name.strip().lower() for node in observation.a11y.nodes if node.name}

    def seen(action: InnerAction) -> bool:
        target = targets.get(action.index)
        if target is None:
            return False
        test_id = target.test_id or selector_test_id(target.selector)
        return bool(test_id and test_id in test_ids) or bool(
            target.name and target.name.strip().lower() in names
        )

    return seen

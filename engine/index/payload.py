"""The step payload: what a step document stores for display and evidence.

`documents.step_document` writes it (JSON in the stored `payload` field); search, last,
timeline, evidence, snippets and priorKnowledge read it back. One type for both sides, so a
renamed or misspelt key fails the type check instead of silently reading `None`.
"""

from dataclasses import dataclass
from typing import TypedDict

import orjson
import tantivy

from engine.index.clauses import first_value
from engine.records import StepTarget, derive_labels


class PayloadTarget(TypedDict, total=False):
    """The resolved target (empty values left out)."""

    testId: str
    selector: str
    a11yRef: str
    role: str
    name: str


class BatchEntry(TypedDict):
    """One action of a batch step, at its position in the batch."""

    index: int
    tool: str
    target: PayloadTarget | None
    screen: str | None
    """The screen it was taken on (None: the record cannot tell, `engine.records.batches`)."""
    outcome: str
    """`ok`, `failed` or `unknown`: what the batch's one outcome tells of this action."""


class PayloadError(TypedDict):
    code: str | None
    message: str | None


class SupersededBy(TypedDict, total=False):
    stepId: str
    target: str
    timestamp: str


class SupersessionPayload(TypedDict, total=False):
    """What a step's payload says of its supersession (absent when it is not superseded)."""

    supersededAt: str
    supersededBy: SupersededBy
    supersededReason: str


class StepExtras(TypedDict, total=False):
    """What only some steps' payloads say (today's records)."""

    context: str
    """`e2e` or `prod`, when the record says."""
    batch: list[BatchEntry]
    """The actions of a `run_steps` step, in order (its `target` is None)."""
    danger: list[str]
    """The evidence that the step's action destroys something (`engine.records.danger`)."""


class StepPayload(SupersessionPayload, StepExtras):
    tool: str
    screen: str
    """The screen the step's observation shows (after the action)."""
    onScreen: str
    """The screen the action was taken on."""
    url: str | None
    target: PayloadTarget | None
    labels: list[str]
    ok: bool
    error: PayloadError | None
    timestamp: str
    goal: str | None
    flowTags: list[str]
    tags: list[str]
    branch: str | None
    a11y: list[list[str]]
    """[role, name] of the first accessibility nodes."""


def read_payload(doc: tantivy.Document) -> StepPayload:
    """The payload of a step document, as `documents.step_document` wrote it."""
    payload: StepPayload = orjson.loads(first_value(doc, "payload"))
    return payload


@dataclass(frozen=True, slots=True)
class ResolvedTarget:
    test_id: str | None
    selector: str | None
    a11y_ref: str | None
    role: str | None
    name: str | None

    def describe(self) -> str:
        """`testId:send-button`, `selector:#x` or `a11y:button:"Send"` (`ref:e7` if unresolved)."""
        if self.test_id:
            return f"testId:{self.test_id}"
        if self.selector:
            return f"selector:{self.selector[:60]}"
        if self.role or self.name:
            return f'a11y:{self.role or "?"}:"{self.name or ""}"'
        if self.a11y_ref:
            return f"ref:{self.a11y_ref}"
        return ""

    @classmethod
    def from_payload(cls, target: PayloadTarget) -> "ResolvedTarget":
        """The target a step payload stores (the inverse of `payload`)."""
        return cls(
            target.get("testId"),
            target.get("selector"),
            target.get("a11yRef"),
            target.get("role"),
            target.get("name"),
        )

    def payload(self) -> PayloadTarget:
        """The target as stored in the step payload (empty values left out)."""
        target: PayloadTarget = {}
        if self.test_id:
            target["testId"] = self.test_id
        if self.selector:
            target["selector"] = self.selector
        if self.a11y_ref:
            target["a11yRef"] = self.a11y_ref
        if self.role:
            target["role"] = self.role
        if self.name:
            target["name"] = self.name
        return target


def action_views(payload: StepPayload) -> list[tuple[int | None, StepPayload]]:
    """A step's actions, each as a payload of its own with its position in a batch: the step
    itself (position None), or every action of a batch step. An action of a batch has the
    batch's session, time and observation; its own tool, target, screen and outcome; it led to
    where the next action was taken (the last one to the screen the batch ended on), and the
    URL it was taken on is known for the first only."""
    entries = payload.get("batch")
    if entries is None:
        return [(None, payload)]
    views: list[tuple[int | None, StepPayload]] = []
    for at, entry in enumerate(entries):
        target = entry["target"]
        ok = entry["outcome"] == "ok"
        view: StepPayload = {
            **payload,
            "tool": entry["tool"],
            "target": target,
            "onScreen": entry["screen"] or "unknown",
            "screen": _led_to(payload, entries, at),
            "url": payload["url"] if entry["index"] == 0 else None,
            "ok": ok,
            "error": payload["error"] if entry["outcome"] == "failed" else None,
            "labels": derive_labels(entry["tool"], _step_target(target), ok),
        }
        del view["batch"]
        views.append((entry["index"], view))
    return views


def known_actions(payload: StepPayload) -> list[tuple[int | None, StepPayload]]:
    """A step's actions whose outcome its record tells (`action_views`): a failed batch's
    actions are unknown, neither worked nor failed, and count for nothing."""
    views = action_views(payload)
    entries = payload.get("batch")
    if entries is None:
        return views
    return [v for v, e in zip(views, entries, strict=True) if e["outcome"] != "unknown"]


def _led_to(payload: StepPayload, entries: list[BatchEntry], at: int) -> str:
    """Where the action at `at` led: where the next one was taken, or where the batch ended."""
    if at == len(entries) - 1:
        return payload["screen"]
    return entries[at + 1]["screen"] or "unknown"


def _step_target(target: PayloadTarget | None) -> StepTarget | None:
    if not target:
        return None
    return StepTarget(
        testId=target.get("testId"), selector=target.get("selector"), a11yRef=target.get("a11yRef")
    )

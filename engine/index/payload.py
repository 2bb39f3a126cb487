"""The step payload: what a step document stores for display and evidence.

`documents.step_document` writes it (JSON in the stored `payload` field); search, last,
timeline, evidence, snippets and priorKnowledge read it back. One type for both sides, so a
renamed or misspelt key fails the type check instead of silently reading `None`.
"""

from typing import TypedDict

import orjson
import tantivy


class PayloadTarget(TypedDict, total=False):
    """The resolved target (empty values left out)."""

    testId: str
    selector: str
    a11yRef: str
    role: str
    name: str


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


class StepPayload(SupersessionPayload):
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
    payload: StepPayload = orjson.loads(doc["payload"][0])
    return payload

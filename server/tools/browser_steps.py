"""Every browser tool call is recorded as a StepRecord, whether it worked or not.

The observation is taken after the action, as the TypeScript recorder did: discovery tools
record what they saw (testIds, accessibility nodes, priorKnowledge); actions record the screen
state when they worked and the full observation when they failed (what was there instead of
the missing element is what the next agent needs). Secret text is redacted before the record
is written; writing never waits for indexing (the live index picks the file up).
"""

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Generic, TypeVar

from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel

from engine import (
    A11ySnapshot,
    Observation,
    Outcome,
    StepError,
    StepRecord,
    ToolCall,
    now_iso,
    scrub_step,
    with_recalls,
)
from server.browser.actions import StepDraft
from server.browser.driver import BrowserSession, first_line
from server.browser.errors import BrowserError
from server.browser.observe import (
    RefTarget,
    accessibility_nodes,
    collect_test_ids,
    screen_state,
    visible_rule_test_ids,
)
from server.browser.targets import TargetInput
from server.state import ServerState

T = TypeVar("T")
Action = Callable[[BrowserSession, StepDraft], Awaitable[T]]


@dataclass(frozen=True, slots=True)
class Look:
    """An observation, and the refs its accessibility nodes carry (None for state only)."""

    observation: Observation
    refs: dict[str, RefTarget] | None


@dataclass(frozen=True, slots=True)
class Recorded(Generic[T]):
    value: T
    step_id: str
    record: StepRecord


async def look(session: BrowserSession, *, full: bool) -> Look:
    """The screen now: its state, or also its testIds and accessibility nodes."""
    page, rules = session.page, session.rules
    try:
        if not full:
            visible = await visible_rule_test_ids(page, rules)
            state = screen_state(page.url, rules, visible, session.extension_id)
            return Look(Observation(state=state), None)
        test_ids, (nodes, refs) = await asyncio.gather(
            collect_test_ids(page), accessibility_nodes(page)
        )
    except PlaywrightError as exc:
        raise BrowserError(f"could not read the page: {first_line(exc)}") from None
    visible_ids = [t.testId for t in test_ids if t.visible]
    state = screen_state(page.url, rules, visible_ids, session.extension_id)
    observation = Observation(state=state, testIds=test_ids, a11y=A11ySnapshot(nodes=nodes))
    return Look(observation, refs)


async def record_call(
    state: ServerState, tool: str, request: BaseModel, action: Action[T]
) -> Recorded[T]:
    """Run `action` on the session's page and record the step; a BrowserError is recorded,
    then raised (the agent gets the error envelope)."""
    browser = state.browser
    async with browser.lock:
        session = browser.require()
        target = request.step_target() if isinstance(request, TargetInput) else None
        draft = StepDraft(target=target)
        write = partial(_write, state, session, tool, request, draft, now_iso(), time.monotonic())
        try:
            value = await action(session, draft)
        except BrowserError as exc:
            await write(exc)
            raise
        step_id, record = await write(None)
    return Recorded(value, step_id, record)


async def _write(
    state: ServerState,
    session: BrowserSession,
    tool: str,
    request: BaseModel,
    draft: StepDraft,
    timestamp: str,
    started: float,
    error: BrowserError | None,
) -> tuple[str, StepRecord]:
    duration_ms = round((time.monotonic() - started) * 1000)
    observation = draft.observation
    if observation is None:
        observation = await _observe_after(session, failed=error is not None)
    record = StepRecord(
        timestamp=timestamp,
        sessionId=session.session_id,
        tool=ToolCall(
            name=state.browser.prefix + tool,
            input=request.model_dump(mode="json", exclude_none=True) or None,
            target=draft.target,
            textRedacted=True if draft.secret else None,
        ),
        outcome=Outcome(
            ok=error is None,
            error=StepError(code=error.code, message=error.message) if error else None,
        ),
        observation=observation,
        timing={"durationMs": duration_ms},
        artifacts=draft.artifacts,
    )
    record = scrub_step(with_recalls(record, state.offers))
    step_id = await state.write(partial(state.store.record_step, record))
    return step_id, record


async def _observe_after(session: BrowserSession, *, failed: bool) -> Observation:
    """State after a success, everything after a failure; a dead page leaves the state empty."""
    try:
        return (await look(session, full=failed)).observation
    except BrowserError:
        return Observation()

"""The browser tools: launch Chromium, act on the page, observe it — every call recorded.

Same shape as the knowledge tools: validate, one driver call (run by `record_call`, which
writes the step), wrap the typed result. `describe_screen` also asks the engine what worked
last time on this screen (priorKnowledge), returns it and records it in the step's observation.
"""

from functools import partial
from typing import Any

from engine import (
    A11yNode,
    A11ySnapshot,
    IndexUnavailable,
    Observation,
    PriorKnowledge,
    Result,
    ScreenContext,
    ScreenState,
    StepTarget,
    TestIdItem,
    suggestion_offers,
    validate,
)
from server.browser import actions
from server.browser.actions import StepDraft
from server.browser.driver import BrowserSession
from server.browser.inputs import (
    ClickInput,
    LaunchInput,
    ListTestIdsInput,
    NavigateInput,
    NoInput,
    ScreenshotInput,
    TypeInput,
    WaitForInput,
    refuse_file_url,
    schema_of,
)
from server.recording import begin_session
from server.settings import DEMO_APP_URL
from server.state import ServerState
from server.tools.browser_steps import Recorded, look, record_call
from server.tools.spec import ToolSpec
from server.workload import Busy, ClientGone


class StepResult(Result):
    stepId: str = ""
    """The recorded step (`<sessionId>/<NNNN>-<tool>`)."""
    state: ScreenState


class ActionResult(StepResult):
    target: StepTarget | None = None
    textRedacted: bool | None = None


class LaunchResult(StepResult):
    sessionId: str
    session: dict[str, Any]


class DescribeResult(StepResult):
    testIds: list[TestIdItem]
    a11y: A11ySnapshot
    priorKnowledge: PriorKnowledge | None = None
    priorKnowledgeError: str | None = None


class TestIdsResult(StepResult):
    testIds: list[TestIdItem]


class SnapshotResult(StepResult):
    nodes: list[A11yNode]


class ScreenshotResult(StepResult):
    path: str
    width: int
    height: int


class CleanupResult(StepResult):
    sessionId: str
    closed: bool = True


def _acted(recorded: Recorded[None]) -> ActionResult:
    tool = recorded.record.tool
    return ActionResult(
        stepId=recorded.step_id,
        state=recorded.record.observation.state,
        target=tool.target,
        textRedacted=tool.textRedacted,
    )


async def _nothing(session: BrowserSession, draft: StepDraft) -> None:
    """The action of tools whose work is done before (launch) or after (cleanup) the step."""


async def _observed(session: BrowserSession, draft: StepDraft, *, refs: bool) -> Observation:
    """Everything on the screen, as the step's observation; `refs` replaces the a11yRefs."""
    seen = await look(session, full=True)
    if refs:
        session.refs = seen.refs or {}
    draft.observation = seen.observation
    return seen.observation


async def launch(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(LaunchInput, args)
    refuse_file_url(request.url, state.settings.allow_file_urls)
    begin = partial(
        state.write, partial(begin_session, state.store, request.session_request(), state.cwd)
    )
    async with state.browser.lock:
        session = await state.browser.launch(request.options(), begin)
    state.current_session = session.session_id
    recorded = await record_call(state, "launch", request, _nothing)
    return LaunchResult(
        stepId=recorded.step_id,
        state=recorded.record.observation.state,
        sessionId=session.session_id,
        session=session.metadata.model_dump(mode="json", exclude_none=True),
    )


async def navigate(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(NavigateInput, args)
    refuse_file_url(request.url, state.settings.allow_file_urls)
    return _acted(await record_call(state, "navigate", request, partial(actions.navigate, request)))


async def click(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(ClickInput, args)
    return _acted(await record_call(state, "click", request, partial(actions.click, request)))


async def type_text(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(TypeInput, args)
    return _acted(await record_call(state, "type", request, partial(actions.type_text, request)))


async def wait_for(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(WaitForInput, args)
    return _acted(await record_call(state, "wait_for", request, partial(actions.wait_for, request)))


async def _describe(
    state: ServerState, session: BrowserSession, draft: StepDraft
) -> DescribeResult:
    seen = await _observed(session, draft, refs=True)
    context = ScreenContext.seen(
        seen,
        seen.state.currentScreen or "unknown",
        session_id=session.session_id,
        flow_tags=session.metadata.flowTags,
        goal=session.metadata.goal,
    )
    result = DescribeResult(state=seen.state, testIds=seen.testIds, a11y=seen.a11y)
    try:
        prior = await state.query(partial(state.engine.prior_knowledge, context))
    except (IndexUnavailable, Busy, ClientGone) as exc:  # the screen is still worth describing
        return result.model_copy(update={"priorKnowledgeError": exc.message})
    draft.observation = seen.model_copy(update={"priorKnowledge": prior.to_json_dict()})
    state.offers.offer(session.session_id, suggestion_offers(prior))
    return result.model_copy(update={"priorKnowledge": prior})


async def describe_screen(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(NoInput, args)
    recorded = await record_call(state, "describe_screen", request, partial(_describe, state))
    return recorded.value.model_copy(update={"stepId": recorded.step_id})


async def list_testids(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(ListTestIdsInput, args)
    recorded = await record_call(state, "list_testids", request, partial(_observed, refs=False))
    return TestIdsResult(
        stepId=recorded.step_id,
        state=recorded.value.state,
        testIds=recorded.value.testIds[: request.limit],
    )


async def accessibility_snapshot(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(NoInput, args)
    recorded = await record_call(
        state, "accessibility_snapshot", request, partial(_observed, refs=True)
    )
    seen = recorded.value
    return SnapshotResult(stepId=recorded.step_id, state=seen.state, nodes=seen.a11y.nodes)


async def get_state(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(NoInput, args)
    recorded = await record_call(state, "get_state", request, _nothing)
    return StepResult(stepId=recorded.step_id, state=recorded.record.observation.state)


async def screenshot(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(ScreenshotInput, args)
    take = partial(actions.screenshot, request, state.store)
    recorded = await record_call(state, "screenshot", request, take)
    shot = recorded.value
    return ScreenshotResult(
        stepId=recorded.step_id,
        state=recorded.record.observation.state,
        path=str(shot.path),
        width=shot.width,
        height=shot.height,
    )


async def cleanup(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(NoInput, args)
    recorded = await record_call(state, "cleanup", request, _nothing)
    async with state.browser.lock:
        await state.browser.close_session()
    return CleanupResult(
        stepId=recorded.step_id,
        state=recorded.record.observation.state,
        sessionId=recorded.record.sessionId,
    )


_TARGET = (
    "Target exactly one of testId, selector, a11yRef (from the latest snapshot) or a11yHint "
    "{role, name}"
)

BROWSER_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "launch",
        "Launch the browser",
        "Start headless Chromium on a URL or an unpacked extension (extensionPath) and begin a "
        "recorded session tagged with goal, flowTags and tags. Call it first, e.g. "
        f'{{"url": "{DEMO_APP_URL}", "goal": "Send 0.1 ETH", "flowTags": ["send"]}} (the demo '
        "wallet `make run` serves).",
        schema_of(LaunchInput),
        launch,
        LaunchResult,
        read_only=False,
        open_world=True,
    ),
    ToolSpec(
        "navigate",
        "Open a URL",
        'Open an absolute URL or a route of the current page such as "#/send". Use it to jump '
        "to a screen directly; the step is recorded.",
        schema_of(NavigateInput),
        navigate,
        ActionResult,
        read_only=False,
        open_world=True,
    ),
    ToolSpec(
        "click",
        "Click an element",
        f"Click an element; {_TARGET}. Use it with the target of a suggestion from "
        '{prefix}describe_screen, e.g. {"testId": "coin-overview-send"}.',
        schema_of(ClickInput),
        click,
        ActionResult,
        read_only=False,
        open_world=True,
    ),
    ToolSpec(
        "type",
        "Type into a field",
        f"Replace a field's value with text; {_TARGET}. Use it like "
        '{"testId": "send-amount-input", "text": "0.1"}; passwords and recovery phrases are '
        "stored as [REDACTED].",
        schema_of(TypeInput),
        type_text,
        ActionResult,
        read_only=False,
        open_world=True,
    ),
    ToolSpec(
        "wait_for",
        "Wait for an element",
        f"Wait until an element is visible (or hidden, attached, detached); {_TARGET}. Use it "
        'after an action that loads a screen, e.g. {"testId": "confirm-footer-button"}.',
        schema_of(WaitForInput),
        wait_for,
        ActionResult,
        read_only=False,
        open_world=True,
    ),
    ToolSpec(
        "describe_screen",
        "Describe the screen",
        "The current screen, its testIds and accessibility nodes (refs e1, e2, …), and "
        "priorKnowledge: what earlier agents did here (suggestedNextActions that can be "
        "followed now, with a target to pass to {prefix}click or {prefix}type as it is; "
        "laterActions whose target is hidden, disabled or behind a dialog now; similarSteps; "
        "targets to avoid). "
        "Use it on every new screen.",
        schema_of(NoInput),
        describe_screen,
        DescribeResult,
        read_only=False,
        open_world=True,
    ),
    ToolSpec(
        "list_testids",
        "List testIds",
        "The page's data-testid elements (up to 150) with visibility and text. Use it to find "
        "a testId to target.",
        schema_of(ListTestIdsInput),
        list_testids,
        TestIdsResult,
        read_only=False,
        open_world=True,
    ),
    ToolSpec(
        "accessibility_snapshot",
        "Accessibility snapshot",
        "Buttons, links, fields, headings and alerts with role, name and a ref (e1, e2, …) to "
        'target, e.g. {prefix}click {"a11yRef": "e3"}. Use it when elements have no testId; '
        "refs last until the next snapshot.",
        schema_of(NoInput),
        accessibility_snapshot,
        SnapshotResult,
        read_only=False,
        open_world=True,
    ),
    ToolSpec(
        "get_state",
        "Screen state",
        "The current screen name and URL. Use it to check where an action led.",
        schema_of(NoInput),
        get_state,
        StepResult,
        read_only=False,
        open_world=True,
    ),
    ToolSpec(
        "screenshot",
        "Take a screenshot",
        "Save a PNG of the page in the session folder (screenshots are opt-in). Use it to keep "
        'visual evidence, e.g. {"name": "confirm"}.',
        schema_of(ScreenshotInput),
        screenshot,
        ScreenshotResult,
        read_only=False,
        open_world=True,
    ),
    ToolSpec(
        "cleanup",
        "Close the browser",
        "Close the browser and end the session (its records stay searchable). Call it when "
        "the run is over, before launching another.",
        schema_of(NoInput),
        cleanup,
        CleanupResult,
        read_only=False,
        open_world=True,
    ),
)

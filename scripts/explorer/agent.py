"""The deterministic explorer: completes a task through knowhow's MCP browser tools, no LLM.

Without memory it explores: describe the screen, type the task's inputs into the fields whose
accessible name they are keyed by, press the final button when it is there and enabled (in the
section most relevant to the goal), else try the screen's clickable elements one by one —
relevant to the goal first, then form-forward words ("Continue"), then document order, undoing
words ("Cancel") last — describing the screen after each, and back out (navigate to where it
came from) of a screen with nothing left to try or of a page off the app.

With memory the same agent first reads knowledge: one `mm_knowledge_search` for the recipe of an
earlier session that completed the task (`recipe.py`), then on each screen one
`mm_describe_screen`, whose `priorKnowledge` suggestions give the target of each remembered
action as it is *now* (a renamed testId falls back to the element with the same role and name).
It types the remembered fields, and presses the screen's last remembered click (the one that
moved on) at once when it is enabled; when it is not, it replays the screen's other remembered
clicks, latest first, until it can — so an earlier agent's detours are not repeated. A step
that fails, or a screen the recipe does not know, hands over to exploring, from where it is.
"""

import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp import MCPError

from explorer.calls import BudgetExhausted, CallFailed, Calls
from explorer.exploring import Exploration
from explorer.recipe import Frame, Remembered, done_selector, recipe
from explorer.screen import Element, Screen, best, words
from explorer.tasks import Task

ACTION_TIMEOUT_MS = 3_000
"""Per click or type: the apps answer in milliseconds; a disabled target fails fast."""
DONE_TIMEOUT_MS = 5_000
"""How long the success text may take to appear after the final click."""
SEARCH_LIMIT = 100


class Stuck(Exception):
    """The agent cannot see the screen any more (a describe failed)."""


@dataclass
class Report:
    """How one agent did on one task."""

    task: str
    agent: str
    memory: bool
    completed: bool = False
    calls: int = 0
    reason: str = ""
    explored: bool = False
    """Whether it explored (always without memory; with memory, when knowledge fell short)."""
    shown: int = 0
    """Suggestions among the top 3 of every describe (with memory)."""
    precise: int = 0
    """Of those, how many had their preferred target on the screen and enabled."""
    renamed: int = 0
    """Suggestions followed for a remembered testId that is gone from the screen."""
    renamed_correct: int = 0
    """Of those, how many acted on the remembered element (same role and name)."""
    describe_seconds: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def row(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "describe_seconds"}


@dataclass
class _Resolved:
    target: dict[str, Any]
    element: Element | None
    renamed: bool
    """Followed a suggestion whose remembered testId is gone from the screen."""


class Explorer:
    """One agent on one task, over one connected knowhow server."""

    def __init__(self, calls: Calls, task: Task, start_url: str, *, memory: bool, agent: str):
        self.calls = calls
        self.task = task
        self.start_url = start_url
        self.memory = memory
        self.goal = words(task.goal)
        self.origin = _origin(start_url)
        self.report = Report(task=task.name, agent=agent, memory=memory)

    async def run(self) -> Report:
        started = time.perf_counter()
        try:
            self.report.completed = await self._attempt()
            if not self.report.completed and not self.report.reason:
                self.report.reason = "nothing left to try"
        except BudgetExhausted as exc:
            self.report.reason = f"budget: {exc}"
        except (Stuck, CallFailed, MCPError, TimeoutError) as exc:
            self.report.reason = f"{type(exc).__name__}: {exc}"
        finally:
            self.report.calls = self.calls.count
            self.report.seconds = time.perf_counter() - started
            await self._cleanup()
        return self.report

    async def _attempt(self) -> bool:
        launched = await self.calls(
            "mm_launch",
            {
                "url": self.start_url,
                "goal": self.task.goal,
                "flowTags": self.task.flowTags,
                "tags": ["explorer", f"agent-{self.report.agent}"],
            },
        )
        if not launched["ok"]:
            self.report.reason = f"launch failed: {launched['error']['message']}"
            return False
        if self.memory:
            frames = await self._recall()
            if frames and await self._follow(frames):
                return True
        self.report.explored = True
        return await self._explore()

    async def _cleanup(self) -> None:
        try:
            await self.calls.uncounted("mm_cleanup", {})
        except Exception:  # the report matters more than a browser that is already gone
            return

    # -- observing and acting ---------------------------------------------------------------

    async def _look(self) -> Screen:
        envelope = await self.calls("mm_describe_screen", {})
        self.report.describe_seconds.append(self.calls.made[-1].seconds)
        if not envelope["ok"]:
            raise Stuck(f"describe failed: {envelope['error']['message']}")
        screen = Screen.of(envelope["result"])
        if self.memory:
            for suggestion in screen.suggestions[:3]:
                self.report.shown += 1
                self.report.precise += screen.has_target(suggestion["preferredTarget"])
        return screen

    async def _act(self, tool: str, target: dict[str, Any], **extra: Any) -> dict[str, Any] | None:
        args = {**target, **extra, "timeoutMs": ACTION_TIMEOUT_MS}
        envelope = await self.calls(tool, args)
        return envelope["result"] if envelope["ok"] else None

    async def _done(self) -> bool:
        checked = await self.calls(
            "mm_wait_for",
            {"selector": done_selector(self.task.doneText), "timeoutMs": DONE_TIMEOUT_MS},
        )
        return bool(checked["ok"])

    def _input_for(self, name: str | None) -> str | None:
        wanted = (name or "").casefold()
        return next((v for k, v in self.task.inputs.items() if k.casefold() == wanted), None)

    def _is_submit(self, name: str | None) -> bool:
        return (name or "").casefold() == self.task.submit.casefold()

    # -- with memory ------------------------------------------------------------------------

    async def _recall(self) -> list[Frame] | None:
        filters: dict[str, Any] = {"ok": True}
        if self.task.flowTags:
            filters["flowTag"] = self.task.flowTags[0]
        found = await self.calls(
            "mm_knowledge_search",
            {"query": self.task.goal[:200], "filters": filters, "limit": SEARCH_LIMIT},
        )
        if not found["ok"]:
            return None
        return recipe(found["result"]["results"], self.task.doneText)

    async def _follow(self, frames: list[Frame]) -> bool:
        """Each remembered screen in order; False hands over to exploring."""
        position = 0
        while position < len(frames):
            screen = await self._look()
            at = next(
                (i for i in range(position, len(frames)) if frames[i].screen == screen.name),
                None,
            )
            if at is None:
                return False
            frame, position = frames[at], at + 1
            if not await self._fill_remembered(frame, screen):
                return False
            clicks = frame.clicks
            if not clicks:
                continue
            final = position == len(frames) and self._is_submit(clicks[-1].name)
            if not await self._leave(screen, clicks, typed=bool(frame.typed), final=final):
                return False
            if final:
                return True
        return False

    async def _fill_remembered(self, frame: Frame, screen: Screen) -> bool:
        for step in frame.typed:
            text = self._input_for(step.name)
            if text is None:
                continue
            if not await self._do("mm_type", self._resolve(step, screen), step, text=text):
                return False
        return True

    async def _leave(
        self, screen: Screen, clicks: list[Remembered], *, typed: bool, final: bool
    ) -> bool:
        """Press the last remembered click of the screen (the one that moved on) — at once
        when it is there and enabled, or the fields just typed may enable it; when it is not,
        or (for the final button) success does not show, replay the screen's other remembered
        clicks, latest first, pressing it again after each."""
        *before, exit_ = clicks
        way_out = self._resolve(exit_, screen)

        async def press() -> bool:
            return await self._do("mm_click", way_out, exit_) and (not final or await self._done())

        element = way_out.element
        if element is not None and (typed or not element.disabled) and await press():
            return True
        for step in reversed(before):
            if await self._do("mm_click", self._resolve(step, screen), step) and await press():
                return True
        return False

    async def _do(self, tool: str, resolved: _Resolved, step: Remembered, **extra: Any) -> bool:
        result = await self._act(tool, resolved.target, **extra)
        if resolved.renamed:
            self.report.renamed += 1
            hint = ((result or {}).get("target") or {}).get("a11yHint") or {}
            self.report.renamed_correct += (hint.get("role"), hint.get("name")) == (
                step.role,
                step.name,
            )
        return result is not None

    def _resolve(self, step: Remembered, screen: Screen) -> _Resolved:
        """The remembered element as it is now: by the suggestion that names it (its
        preferred target survives renames), else by its testId or its role and name."""
        present = self._element(step, screen)
        for suggestion in screen.suggestions:
            preferred = suggestion["preferredTarget"]
            options = [preferred, *suggestion.get("fallbackTargets", [])]
            if any(_names(option, step) for option in options):
                renamed = bool(step.test_id) and step.test_id not in screen.visible_test_ids
                return _Resolved(self._as_args(preferred, present, screen), present, renamed)
        if step.test_id and step.test_id in screen.visible_test_ids:
            return _Resolved({"testId": step.test_id}, present, False)
        if present is not None:
            return _Resolved(screen.target(present), present, False)
        if step.role and step.name:
            return _Resolved({"a11yHint": {"role": step.role, "name": step.name}}, None, False)
        return _Resolved({"testId": step.test_id}, None, False)

    def _element(self, step: Remembered, screen: Screen) -> Element | None:
        if not (step.role and step.name):
            return None
        return best(screen.named(step.role, step.name), self.goal)

    def _as_args(
        self, preferred: dict[str, Any], present: Element | None, screen: Screen
    ) -> dict[str, Any]:
        """A suggestion's preferred target as tool arguments; a role and name shared by
        several elements becomes the ref of the one in the goal's section."""
        if preferred["type"] == "a11yHint" and present is not None:
            return screen.target(present)
        return {str(preferred["type"]): preferred["value"]}

    # -- without memory ---------------------------------------------------------------------

    async def _explore(self) -> bool:
        explored = Exploration(self.goal, self.task.submit)
        filled = False
        while True:
            screen = await self._look()
            explored.seen(screen)
            if _origin(screen.url) != self.origin:
                await self._navigate(explored.back() or self.start_url)
                continue
            if not filled and await self._fill(screen):
                filled = True  # and look again: what was typed may have enabled buttons
                continue
            filled = False
            submit = explored.final_button(screen)
            if submit is not None:
                explored.press(screen)
                if await self._act("mm_click", screen.target(submit)) and await self._done():
                    return True
                continue
            choice = explored.next_click(screen)
            if choice is None:
                back = explored.back()
                if back is None:
                    return False
                await self._navigate(back)
                continue
            acted = await self._act("mm_click", screen.target(choice))
            explored.clicked(screen, choice, ((acted or {}).get("state") or {}).get("currentUrl"))

    async def _navigate(self, url: str) -> None:
        await self.calls("mm_navigate", {"url": url})

    async def _fill(self, screen: Screen) -> bool:
        """Type every task input whose field is on the screen (again after each click: a
        click may re-render the form); whether anything was typed."""
        typed = False
        for label, text in self.task.inputs.items():
            field_ = best(screen.field(label), self.goal)
            if field_ is not None and not field_.disabled:
                await self._act("mm_type", screen.target(field_), text=text)
                typed = True
        return typed


def _names(option: dict[str, Any], step: Remembered) -> bool:
    """Whether a suggested target is the remembered element (by testId, or role and name)."""
    value = option.get("value")
    if option.get("type") == "testId":
        return bool(step.test_id) and value == step.test_id
    if option.get("type") == "a11yHint" and isinstance(value, dict):
        return (value.get("role"), value.get("name")) == (step.role, step.name) and bool(step.name)
    return False


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"

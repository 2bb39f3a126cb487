"""What an earlier session did for the same task, read back through `mm_knowledge_search`.

One search (the goal as query, the task's first flowTag and `ok` as filters) returns the steps
of earlier sessions that worked. A session is a recipe for the task only if it reached the
task's success check (its `mm_wait_for` on the done text worked); of those, the one with the
fewest actions is followed. Its clicks and typing are grouped by the screen they were taken
on, in order; a return to a screen seen before (backing out of a dead end) drops the detour.
"""

from dataclasses import dataclass, field
from typing import Any

ACTIONS = ("mm_click", "mm_type")


@dataclass(frozen=True, slots=True)
class Remembered:
    """One action that worked in the remembered session."""

    tool: str
    test_id: str | None
    role: str | None
    name: str | None
    step_id: str


@dataclass
class Frame:
    """The remembered actions on one screen, in order; the last click left it."""

    screen: str
    steps: list[Remembered] = field(default_factory=list)

    @property
    def clicks(self) -> list[Remembered]:
        return [s for s in self.steps if s.tool == "mm_click"]

    @property
    def typed(self) -> list[Remembered]:
        """Fields typed into, each once (an explorer may have filled one twice)."""
        seen: dict[tuple[str | None, str | None, str | None], Remembered] = {}
        for step in self.steps:
            if step.tool == "mm_type":
                seen.setdefault((step.test_id, step.role, step.name), step)
        return list(seen.values())


def done_selector(done_text: str) -> str:
    """The first visible element containing the text (Playwright's text engine, substring,
    case-insensitive) — how the explorer checks success, and how a recipe is recognised."""
    return f"text={done_text} >> nth=0"


def recipe(rows: list[dict[str, Any]], done_text: str) -> list[Frame] | None:
    """The shortest session among `rows` (search results) that reached the done text."""
    by_session: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_session.setdefault(str(row["sessionId"]), []).append(row)
    done = done_selector(done_text)
    found: list[list[Frame]] = []
    for steps in by_session.values():
        steps.sort(key=lambda r: str(r["stepId"]))
        if any(_is_check(r, done) for r in steps):
            found.append(frames(steps))
    return min(found, key=lambda f: sum(len(x.steps) for x in f), default=None)


def _is_check(row: dict[str, Any], done: str) -> bool:
    target = row.get("target") or {}
    return bool(row.get("ok")) and row["tool"] == "mm_wait_for" and target.get("selector") == done


def frames(steps: list[dict[str, Any]]) -> list[Frame]:
    """The session's actions grouped by the screen they were taken on (the screen the step
    before landed on), detours cut."""
    result: list[Frame] = []
    screen: str | None = None
    for row in steps:
        target = row.get("target") or {}
        if row["tool"] in ACTIONS and screen is not None and target:
            at = next((i for i, f in enumerate(result) if f.screen == screen), None)
            if at is None:
                result.append(Frame(screen))
            else:
                del result[at + 1 :]
            result[-1].steps.append(
                Remembered(
                    tool=row["tool"],
                    test_id=target.get("testId"),
                    role=target.get("role"),
                    name=target.get("name"),
                    step_id=str(row["stepId"]),
                )
            )
        screen = str(row.get("screen") or "unknown")
    return result

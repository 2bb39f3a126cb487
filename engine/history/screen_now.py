"""What the agent sees now, and which remembered targets it can act on at once.

priorKnowledge suggests targets that worked before; a suggestion is only worth its place near
the top when it can be followed now. The current screen says so through what it shows: the
visible testIds (with their text), the accessibility nodes (with `disabled` and the path of
their ancestors). From those:

- a testId is usable when it is visible and the element its text names is not disabled (a
  wizard's `Next` shown but disabled until the form is filled is not);
- a role and name are usable when at least one such element is shown and not disabled;
- while a dialog is open (a node with a `dialog` or `alertdialog` ancestor, or a dialog node),
  only what is inside it is usable: the page behind a confirmation dialog still shows its
  testIds, but a click on one of them does not reach it;
- a selector that only names a testId (`[data-testid="x"]`) is that testId; one that names a
  text (`text=9.9 ETH >> nth=0`, `button:has-text("Unlock")`) is usable when an element named
  with that text, or a visible testId showing it, is (a wait for a result that is not on the
  screen yet cannot be followed now); any other selector cannot be told: it ranks after what is
  known to be usable.
"""

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

from engine.records import A11yNode, Observation

DIALOG_ROLES = frozenset({"dialog", "alertdialog"})
UNACTIONABLE_ROLES = frozenset({"heading", "dialog", "alert", "status"})
"""Nodes that show a name but are not acted on: a testId's text naming one says nothing of
whether the testId's own element is enabled."""
_TEST_ID_SELECTOR = re.compile(r"""^\[data-testid=(["']?)([^"'\]]+)\1\]$""")
_TEXT_SELECTOR = re.compile(r"""^text=(["']?)(.+?)\1(?: >> nth=\d+)?$""")
_HAS_TEXT = re.compile(r""":has-text\((["'])(.+?)\1\)""")


@dataclass(frozen=True)
class ScreenContext:
    """What the agent sees now."""

    screen: str
    url: str | None = None
    test_ids: Sequence[str] = ()
    a11y: Sequence[tuple[str, str]] = ()  # (role, name)
    session_id: str | None = None
    flow_tags: Sequence[str] = ()
    disabled: Sequence[tuple[str, str]] = ()  # (role, name) of the elements shown disabled
    texts: Sequence[tuple[str, str]] = ()  # (testId, the text it shows) of the testIds shown
    goal: str | None = None
    """The goal of the agent's session: a destructive target it does not ask for is cautioned
    (`engine.history.caution`)."""
    dialog: Sequence[tuple[str, str]] | None = None
    """(role, name) of the elements inside the dialog open now; None when none is open."""

    @classmethod
    def seen(
        cls,
        observation: Observation,
        screen: str,
        session_id: str | None = None,
        flow_tags: Sequence[str] = (),
        goal: str | None = None,
    ) -> "ScreenContext":
        """The context of what a describe observed (`screen`: its name by the screen rules)."""
        nodes = observation.a11y.nodes
        shown = [t for t in observation.testIds if t.visible]
        return cls(
            screen=screen,
            url=observation.state.currentUrl,
            test_ids=[t.testId for t in shown],
            a11y=[(n.role, n.name) for n in nodes],
            session_id=session_id,
            flow_tags=flow_tags,
            disabled=[(n.role, n.name) for n in nodes if getattr(n, "disabled", False)],
            texts=[(t.testId, t.text) for t in shown if t.text],
            goal=goal,
            dialog=dialog_elements(nodes),
        )


def dialog_elements(nodes: Iterable[A11yNode]) -> list[tuple[str, str]] | None:
    """(role, name) of the nodes inside an open dialog (None: no dialog is open)."""
    nodes = list(nodes)
    if not any(
        n.role in DIALOG_ROLES or any(_role(p) in DIALOG_ROLES for p in n.path) for n in nodes
    ):
        return None
    return [(n.role, n.name) for n in nodes if any(_role(p) in DIALOG_ROLES for p in n.path)]


def _role(ancestor: str) -> str:
    """The role of an ancestor as a node's path describes it (`dialog "Delete?"` -> dialog)."""
    return ancestor.split(" ", 1)[0]


class Usable(IntEnum):
    """Whether a target can be acted on now; lower sorts first."""

    YES = 0
    UNKNOWN = 1
    NO = 2


def usability(context: ScreenContext) -> Callable[[str, object], Usable]:
    """How surely a target (`type`, `value` as priorKnowledge names it) can be acted on now
    (module docstring)."""
    shown, disabled = Counter(context.a11y), Counter(context.disabled)
    inside = Counter(context.dialog) if context.dialog is not None else None
    visible = set(context.test_ids)
    text_of = dict(context.texts)

    def element(pair: tuple[str, str]) -> Usable:
        enabled = shown[pair] > disabled[pair]
        reachable = inside is None or inside[pair] > 0
        return Usable.YES if enabled and reachable else Usable.NO

    def test_id(value: str) -> Usable:
        if value not in visible:
            return Usable.NO
        text = text_of.get(value)
        named = [p for p in shown if text and p[1] == text and p[0] not in UNACTIONABLE_ROLES]
        if not named:  # nothing tells its element: visible, and reachable unless a dialog is open
            return Usable.YES if inside is None else Usable.UNKNOWN
        return min(element(pair) for pair in named)

    def text(wanted: str) -> Usable:
        """An element named with the text, or a visible testId showing it (Playwright's text
        selectors match a part of the text, ignoring case)."""
        wanted = wanted.casefold()
        named = [pair for pair in shown if wanted in pair[1].casefold()]
        if named:
            return min(element(pair) for pair in named)
        showing = [t for t, shows in text_of.items() if t in visible and wanted in shows.casefold()]
        return min((test_id(t) for t in showing), default=Usable.NO)

    def usable(kind: str, value: object) -> Usable:
        if kind == "testId" and isinstance(value, str):
            return test_id(value)
        if kind == "a11yHint" and isinstance(value, dict):
            return element((str(value.get("role")), str(value.get("name"))))
        if kind == "selector" and isinstance(value, str):
            if named := selector_test_id(value):
                return test_id(named)
            said = selector_text(value)
            return text(said) if said else Usable.UNKNOWN
        return Usable.UNKNOWN

    return usable


def selector_text(selector: str) -> str | None:
    """The text a selector looks for (`text=9.9 ETH >> nth=0`, `button:has-text("Unlock")`)."""
    selector = selector.strip()
    match = _TEXT_SELECTOR.match(selector) or _HAS_TEXT.search(selector)
    return match[2] if match else None


def selector_test_id(selector: str) -> str | None:
    """The testId a selector names, when that is all it names (`[data-testid="x"]`)."""
    match = _TEST_ID_SELECTOR.match(selector.strip())
    return match[2] if match else None

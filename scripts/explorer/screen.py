"""What the explorer reads from one `mm_describe_screen` result, and how it ranks elements.

The accessibility nodes come in document order, and headings are among them: an element's
*section* is the nearest heading before it. MetaMask's test dapp has ~150 buttons, seven of
them called "Sign", each under its own heading ("Personal Sign", "Sign Typed Data V4", …) and
with no landmark around them, so the section is what tells them apart: an element is relevant
to a task by the words its name and its section share with the goal.

Targets are what a user could say: a testId whose visible text is the element's name (when
the app has testIds), else the role and name, else — for a name used more than once — the
element's ref in this snapshot.
"""

import re
from dataclasses import dataclass, field
from typing import Any

CLICKABLE = frozenset({"button", "link", "menuitem", "checkbox", "radio", "switch", "tab"})
FIELDS = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
FORWARD_WORDS = "continue next confirm submit ok save done review proceed apply"
"""Words of buttons that move a form on: a person tries these before others."""
DIALOGS = frozenset({"dialog", "alertdialog"})
BACKWARD_WORDS = "cancel back close reset lock logout revoke delete remove reject disconnect clear"
"""Words of buttons that undo or leave: tried last."""
STOP_WORDS = "a an the to of and or with in on for from by my your it its this that as at be is see"
_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(_WORD.findall(STOP_WORDS + " then into using use"))


def stem(word: str) -> str:
    """A crude English stem, enough to meet `signing` and `sign`, `tokens` and `token`."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def words(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


FORWARD = words(FORWARD_WORDS)
BACKWARD = words(BACKWARD_WORDS)


@dataclass(frozen=True, slots=True)
class Element:
    ref: str
    role: str
    name: str
    section: str
    """The nearest heading before the element ("" before the first)."""
    disabled: bool
    index: int
    """Position in document order."""
    in_dialog: bool = False
    """Inside a dialog (an ancestor of role dialog or alertdialog)."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.role, self.name, self.section)


@dataclass
class Screen:
    """One description of the screen."""

    name: str
    """The screen's name by the app's screen rules ("unknown" when they do not know it)."""
    url: str
    elements: list[Element]
    visible_test_ids: frozenset[str]
    test_id_by_text: dict[str, str]
    """Visible testIds by their text, for texts that only one of them shows."""
    suggestions: list[dict[str, Any]] = field(default_factory=list)
    text_of_test_id: dict[str, str] = field(default_factory=dict)
    """The text each visible testId shows."""
    dialog_open: bool = False
    """A dialog is open: only what is inside it can be acted on."""
    headings: frozenset[str] = frozenset()
    """The headings shown (sections, not elements: a wait for one is followed all the same)."""

    @classmethod
    def of(cls, described: dict[str, Any]) -> "Screen":
        state = described.get("state") or {}
        url = str(state.get("currentUrl") or "")
        screen = str(state.get("currentScreen") or "unknown")
        elements: list[Element] = []
        headings: set[str] = set()
        section = ""
        for index, node in enumerate((described.get("a11y") or {}).get("nodes") or []):
            role, name = str(node.get("role", "")), str(node.get("name", ""))
            if role == "heading":
                section = name
                headings.add(name)
                continue
            disabled = bool(node.get("disabled"))
            in_dialog = any(str(p).split(" ", 1)[0] in DIALOGS for p in node.get("path") or [])
            elements.append(
                Element(str(node["ref"]), role, name, section, disabled, index, in_dialog)
            )
        shown = [t for t in described.get("testIds") or [] if t.get("visible")]
        texts = [str(t.get("text") or "") for t in shown]
        by_text = {
            text: str(t["testId"])
            for t, text in zip(shown, texts, strict=True)
            if text and texts.count(text) == 1
        }
        prior = described.get("priorKnowledge") or {}
        return cls(
            name=screen,
            url=url,
            elements=elements,
            visible_test_ids=frozenset(str(t["testId"]) for t in shown),
            test_id_by_text=by_text,
            suggestions=list(prior.get("suggestedNextActions") or []),
            text_of_test_id={str(t["testId"]): text for t, text in zip(shown, texts, strict=True)},
            dialog_open=any(e.in_dialog or e.role in DIALOGS for e in elements),
            headings=frozenset(headings),
        )

    @property
    def signature(self) -> frozenset[tuple[str, str, bool]]:
        """What can be done here: every element's role, name and whether it is disabled. The
        final button is pressed again only once this changed (something got enabled)."""
        return frozenset((e.role, e.name, e.disabled) for e in self.elements)

    def named(self, role: str | None, name: str) -> list[Element]:
        """Elements with this accessible name (any clickable role when `role` is None)."""
        wanted = name.casefold()
        return [
            e
            for e in self.elements
            if e.name.casefold() == wanted and (e.role == role if role else e.role in CLICKABLE)
        ]

    def field(self, label: str) -> list[Element]:
        wanted = label.casefold()
        return [e for e in self.elements if e.role in FIELDS and e.name.casefold() == wanted]

    def clickables(self) -> list[Element]:
        return [e for e in self.elements if e.role in CLICKABLE and not e.disabled]

    def target(self, element: Element) -> dict[str, Any]:
        """How to name the element in a tool call: testId, role and name, or ref."""
        same = [e for e in self.elements if (e.role, e.name) == (element.role, element.name)]
        if element.name and len(same) == 1:
            test_id = self.test_id_by_text.get(element.name)
            if test_id and element.role in CLICKABLE:
                return {"testId": test_id}
            return {"a11yHint": {"role": element.role, "name": element.name}}
        return {"a11yRef": element.ref}

    def has_target(self, target: dict[str, Any]) -> bool:
        """Whether a suggestion's preferred target can be followed now: on this screen,
        enabled, and inside the open dialog when there is one. A testId's element is the
        clickable one named by its text, when there is one; a selector cannot be told."""
        kind, value = target.get("type"), target.get("value")
        if kind == "testId":
            if value not in self.visible_test_ids:
                return False
            text = self.text_of_test_id.get(str(value))
            found = self.named(None, text) if text else []
            return self._followable(found) if found else not self.dialog_open
        if kind == "a11yHint" and isinstance(value, dict):
            if value.get("role") == "heading":
                return str(value.get("name")) in self.headings
            return self._followable(self.named(str(value.get("role")), str(value.get("name", ""))))
        return False

    def _followable(self, found: list[Element]) -> bool:
        return any(not e.disabled and (e.in_dialog or not self.dialog_open) for e in found)


def relevance(element: Element, goal: frozenset[str]) -> int:
    """Words the element's name (×3) and its section (×2) share with the goal."""
    return 3 * len(words(element.name) & goal) + 2 * len(words(element.section) & goal)


def best(elements: list[Element], goal: frozenset[str]) -> Element | None:
    """The element most relevant to the goal; the first in the document among equals."""
    return min(elements, key=lambda e: (-relevance(e, goal), e.index), default=None)


def exploration_order(elements: list[Element], goal: frozenset[str]) -> list[Element]:
    """Relevant first; among equals, form-forward words before others, undoing ones last,
    then document order (breadth-first over the screen)."""

    def order(e: Element) -> tuple[int, int, int, int]:
        said = words(e.name)
        return (-relevance(e, goal), -bool(said & FORWARD), bool(said & BACKWARD), e.index)

    return sorted(elements, key=order)

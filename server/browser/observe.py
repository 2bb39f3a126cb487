"""What the page shows: testIds, accessibility nodes and the screen (SPEC-04 §2.1, §2.2).

Everything is read through Playwright's locator API and the accessibility tree — never
`page.evaluate` or a script added to the page: wallets such as MetaMask run under LavaMoat,
whose scuttling breaks injected scripts, and strict CSPs forbid them. Consequences: a testId's
`tag` is the generic `element` (the tag name needs a script), and accessibility nodes come from
`aria_snapshot()` YAML, parsed here. Refs (`e1`, `e2`, …) are given in document order to the
roles an agent acts on or must notice; they are valid until the next snapshot.
"""

import asyncio
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import yaml
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page

from engine import A11yHint, A11yNode, ScreenRules, ScreenState, TestIdItem

MAX_TEST_IDS = 150
MAX_TEXT_CHARS = 100
ELEMENT_READ_TIMEOUT_MS = 1_000
"""Reading one element's attribute or text: short, because an element may have been detached
by a re-render between listing and reading (it is then skipped)."""
ACTIONABLE_ROLES = frozenset(
    {"button", "link", "checkbox", "radio", "switch", "textbox", "combobox", "menuitem"}
)
IMPORTANT_ROLES = frozenset({"dialog", "alert", "status", "heading"})
REF_ROLES = ACTIONABLE_ROLES | IMPORTANT_ROLES
NODE_FLAGS = ("disabled", "checked", "expanded")

_KEY = re.compile(
    r'^(?P<role>[a-z][a-z0-9-]*)(?:\s+"(?P<name>(?:[^"\\]|\\.)*)")?(?P<attrs>(?:\s*\[[^\]]*\])*)$'
)
_ATTR = re.compile(r"\[([^\]=]+)(?:=([^\]]*))?\]")
_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


@dataclass(frozen=True, slots=True)
class RefTarget:
    """How to find a ref's element again: the nth element with this role (and name)."""

    role: str
    name: str
    nth: int


@dataclass(frozen=True, slots=True)
class AriaElement:
    """One line of an aria snapshot: `- button "Continue" [disabled]`."""

    role: str
    name: str
    attrs: dict[str, str]


def parse_key(key: str) -> AriaElement | None:
    """`button "Send" [disabled]` -> role, name and attributes; None for text and properties."""
    match = _KEY.match(key.strip())
    if match is None or match["role"] == "text":
        return None
    name = _unquote(match["name"]) if match["name"] else ""
    attrs = {m[1].strip(): m[2] or "true" for m in _ATTR.finditer(match["attrs"] or "")}
    return AriaElement(match["role"], name, attrs)


def _unquote(name: str) -> str:
    """The name between the quotes, with its JSON-style escapes (`\\"`) resolved."""
    try:
        return str(json.loads(f'"{name}"'))
    except ValueError:
        return name


def _load(snapshot: str) -> list[Any]:
    """The YAML as lists, dicts and strings only (BaseLoader: `- text: 10` stays a string)."""
    try:
        parsed = yaml.load(snapshot, Loader=_LOADER)
    except yaml.YAMLError:
        return []
    return parsed if isinstance(parsed, list) else []


def _walk(items: Iterable[Any], path: tuple[str, ...]) -> Iterable[tuple[AriaElement, list[str]]]:
    """Every element of the parsed YAML in document order, with its ancestors' descriptions."""
    for item in items:
        if isinstance(item, dict) and len(item) == 1:
            key, children = next(iter(item.items()))
        else:
            key, children = item, None
        element = parse_key(str(key))
        if element is None:
            continue
        yield element, list(path)
        if isinstance(children, list):
            label = f'{element.role} "{element.name}"' if element.name else element.role
            yield from _walk(children, (*path, label))


def parse_aria_snapshot(snapshot: str) -> tuple[list[A11yNode], dict[str, RefTarget]]:
    """Nodes of the roles worth a ref (`e1`, `e2`, … in document order) and how to find each."""
    nodes: list[A11yNode] = []
    refs: dict[str, RefTarget] = {}
    by_name: dict[tuple[str, str], int] = {}
    by_role: dict[str, int] = {}
    for element, path in _walk(_load(snapshot), ()):
        if element.role not in REF_ROLES:
            continue
        ref = f"e{len(nodes) + 1}"
        # get_by_role with a name matches that exact name, without one every element of the
        # role: count the same way to find this element again.
        key = (element.role, element.name)
        nth = by_name.get(key, 0) if element.name else by_role.get(element.role, 0)
        by_name[key] = by_name.get(key, 0) + 1
        by_role[element.role] = by_role.get(element.role, 0) + 1
        flags = {f: element.attrs[f] != "false" for f in NODE_FLAGS if f in element.attrs}
        nodes.append(A11yNode(ref=ref, role=element.role, name=element.name, path=path, **flags))
        refs[ref] = RefTarget(element.role, element.name, nth)
    return nodes, refs


def element_hint(snapshot: str) -> A11yHint | None:
    """The role and accessible name of an element from its own aria snapshot's first line."""
    items = _load(snapshot)
    if not items:
        return None
    first = items[0]
    key = next(iter(first)) if isinstance(first, dict) else first
    element = parse_key(str(key))
    if element is None or not element.name:
        return None
    return A11yHint(role=element.role, name=element.name)


async def _read_test_id(element: Locator) -> TestIdItem | None:
    try:
        test_id, visible, text = await asyncio.gather(
            element.get_attribute("data-testid", timeout=ELEMENT_READ_TIMEOUT_MS),
            element.is_visible(),
            element.text_content(timeout=ELEMENT_READ_TIMEOUT_MS),
        )
    except PlaywrightError:
        return None  # detached by a re-render while we were reading
    if not test_id:
        return None
    words = " ".join((text or "").split())[:MAX_TEXT_CHARS]
    return TestIdItem(testId=test_id, tag="element", text=words or None, visible=visible)


async def collect_test_ids(page: Page, limit: int = MAX_TEST_IDS) -> list[TestIdItem]:
    """The first `limit` elements with a `data-testid`, in document order, read concurrently."""
    elements = (await page.locator("[data-testid]").all())[:limit]
    items = await asyncio.gather(*(_read_test_id(e) for e in elements))
    return [item for item in items if item is not None]


async def accessibility_nodes(page: Page) -> tuple[list[A11yNode], dict[str, RefTarget]]:
    return parse_aria_snapshot(await page.locator("body").aria_snapshot())


async def visible_rule_test_ids(page: Page, rules: ScreenRules) -> list[str]:
    """Which of the rules' testIds are visible now (a few cheap probes, for state-only steps)."""
    ids = list(dict.fromkeys(test_id for test_id, _ in rules.test_ids))
    visible = await asyncio.gather(*(page.get_by_test_id(t).first.is_visible() for t in ids))
    return [test_id for test_id, shown in zip(ids, visible, strict=True) if shown]


def screen_state(
    url: str, rules: ScreenRules, visible_test_ids: Iterable[str], extension_id: str | None
) -> ScreenState:
    """URL rules first, then visible testIds, then the hash route (engine.records.screens)."""
    state: dict[str, object] = {
        "currentScreen": rules.detect(url, visible_test_ids),
        "currentUrl": url,
        "isLoaded": True,
    }
    if extension_id:
        state["extensionId"] = extension_id
    return ScreenState.model_validate(state)

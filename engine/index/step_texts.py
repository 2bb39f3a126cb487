"""The texts a step is embedded as: what people call the action, the screen and the workflow.

A step has up to three memories: the **step** (tool verb, target role and visible
name, testId words, the screen acted on, the error), the **screen** it observed (screen name and
what was visible on it) and its **session** (goal, flowTags, tags). Texts are written in plain
words — identifiers split (`coin-overview-send` -> `coin overview send`) — because a sentence
model reads words, not kebab-case. Agents repeat the same actions, so most steps share their
texts: the vector store embeds each distinct text once (5,028 steps of the eval corpus have a
few hundred distinct step texts). A `run_steps` batch tells its actions in one text, nearly
always a new one; its vector is pooled from its actions' texts instead (`pooled_parts`), which
it shares with the steps doing them.
"""

import re
from functools import lru_cache
from urllib.parse import urlsplit

from analyzers import failure_kinds, plain_failures
from engine.embedding import MODEL_ID, Pooled, key_number, pooled_key, text_key
from engine.index.payload import StepPayload, action_views
from engine.index.schema import KEY_COLUMNS
from engine.records import DISCOVERY_TOOLS, tool_action

MAX_SCREEN_NAMES = 12
"""Visible names in a screen text: the first ones (headings and main buttons come first)."""
MAX_BATCH_TEXTS = 8
"""Actions of a batch its text tells and its vector pools (the rest counted): a batch of
thousands of actions costs a build what a few steps cost."""

MEMORY_TYPES = ("step", "screen", "session")
EMBED_TEXTS = "embed_texts"
"""Key of a document dict holding {text key: text} for the index writer to embed (not a field)."""
POOLED_TEXTS = "pooled_texts"
"""Key of a document dict holding {pooled key: `Pooled`} for the index writer to pool from the
vectors of texts it embeds (not a field: `pooled_parts`)."""
OBSERVING_ACTIONS = DISCOVERY_TOOLS | {"screenshot"}

_ID_SEPARATORS = re.compile(r"[-_./#:\s]+")
_QUOTED = re.compile(r'"([^"]*)"')
_CSS_WORDS = re.compile(r"\b(?:data-testid|has-text|placeholder|aria-label|type|nth|text)\b")
_CSS_SYNTAX = re.compile(r"[^A-Za-z0-9_-]+")
_IDENTIFIER = re.compile(r"[\w-]*[-_][\w-]*")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_VERBS = {
    "click": "click",
    "type": "type into",
    "wait_for": "wait for",
    "navigate": "navigate to",
    "launch": "launch the browser with the wallet extension",
    "cleanup": "close the browser",
    "wait_for_notification": "wait for a notification",
    "switch_to_tab": "switch to the tab",
    "close_tab": "close the tab",
    "build": "build the extension",
    "seed_contract": "deploy a test contract",
    "seed_contracts": "deploy test contracts",
    "mock_network": "mock the network",
    "cdp": "send a browser devtools command",
    "set_context": "set the test context",
    "get_context": "check the test context",
    "clipboard": "use the clipboard",
}
_LOOKS = {
    "describe_screen": "look at",
    "list_testids": "list the elements of",
    "accessibility_snapshot": "read the accessibility tree of",
    "get_state": "check the state of",
    "screenshot": "take a screenshot of",
    "get_text": "read the text of",
}
"""Observing steps, whose object is the screen they observed (`look at the send screen`)."""
_OBSERVATION_OPENINGS = tuple(f"{looks} " for looks in _LOOKS.values())
_OBSERVING_TOOL_WORDS = frozenset(action.replace("_", " ") for action in _LOOKS)
UNKNOWN_PAGE = "another page"
"""Where a navigation went when the page it landed on has no screen name and no web address."""
ALERT_ROLES = frozenset({"alert", "alertdialog"})
"""Roles of what a page says went wrong (`Insufficient funds`, `No trade route is available`):
the outcome of the step, which its action text alone does not tell."""
_DECLINES = frozenset({"cancel", "reject", "deny", "decline"})
"""Words of a button that says no to what a screen asks (a connection, a signature, a payment):
a click on it reads `, declining the request`, the outcome people ask about ("say no", "back
out"), where `click button "Cancel"` is on every confirmation screen alike."""
_UNKNOWN_REF = re.compile(r"(Unknown a11yRef)\b.*")
"""`Unknown a11yRef: e18. Available refs: e1, e2, …`: the browser tools name the unknown ref and
list every ref of the page, ids that mean nothing out of that page (each ref and list made
another distinct text to embed: 1,752 texts at 100k steps, 1,543 without them; a quarter of
the tokens)."""


def words(identifier: str | None) -> str:
    """`coin-overview-send` -> `coin overview send`, `sendButton` -> `send button`."""
    if not identifier:
        return ""
    return _words(identifier)


@lru_cache(maxsize=16_384)
def _words(identifier: str) -> str:
    """(cached: the same testIds and screen names recur on every step)"""
    spaced = _CAMEL.sub(" ", identifier)
    return " ".join(w for w in _ID_SEPARATORS.split(spaced) if w).lower()


def selector_words(selector: str) -> str:
    """What a CSS selector names, in words: `[data-testid="unlock-password"]` -> `unlock
    password`, `button:has-text("Unlock")` -> `button Unlock`, `#connectButton` -> `connect
    button`. Selector syntax (`data-testid`, `has-text`, brackets) is no word of the UI."""
    quoted = _QUOTED.findall(selector)
    rest = _CSS_WORDS.sub(" ", _QUOTED.sub(" ", selector))
    parts = [words(part) for part in _CSS_SYNTAX.split(rest) if part]
    parts += [words(text) if _IDENTIFIER.fullmatch(text) else text for text in quoted]
    return " ".join(part for part in parts if part)


def _screen(name: str | None) -> str | None:
    return f"the {words(name)} screen" if name and name != "unknown" else None


def _web_page(url: str | None, a11y: list[list[str]] | None = None) -> str | None:
    """`the web page "E2E Test Dapp" at localhost` for a page outside the wallet (a dapp):
    steps there carry no screen name, and `click` alone is what every step of every page would
    say. A page is called by its first heading when it shows one (`a11y`: what the step
    observed), as people call a site by its title, not its host."""
    if not url or not url.startswith(("http://", "https://")):
        return None
    host = urlsplit(url).hostname or ""
    title = next((name for role, name in a11y or [] if role == "heading" and name), None)
    if title:
        return f'the web page "{title}" at {host}'.rstrip()
    return f"the web page {host}".rstrip()


def step_text(payload: StepPayload, landed_url: str | None = None) -> str:
    """`click button "Send" (coin overview send) on the home screen leading to the send
    screen. Failed: …`; a navigation says where it went (`go to the settings screen from the
    home screen`, `go to the web page localhost`: `landed_url` is the URL the step's
    observation shows), an observing step what it observed (`look at the send screen`), a
    batch its actions in order (`batch_text`; a batch of one action, that action's text, as
    the step doing it alone has it)."""
    views = action_views(payload)
    if len(views) != 1:
        return batch_text(payload)
    return _action_text(views[0][1], landed_url)


def batch_text(payload: StepPayload) -> str:
    """`click button "Send" (coin overview send) on the home screen leading to the send
    screen, then type into textbox "Amount" (send amount input) on the send screen`: the
    batch's first actions (`batch_actions`), then what the page said and the failure, once for
    the whole batch."""
    views = action_views(payload)
    text = ", then ".join(batch_actions(views)) or "run a batch of no readable steps"
    if len(views) > MAX_BATCH_TEXTS:
        text += f", and {len(views) - MAX_BATCH_TEXTS} more steps"
    return text + _outcome_text(payload)


def batch_actions(views: list[tuple[int | None, StepPayload]]) -> list[str]:
    """The texts of a batch's first actions (`MAX_BATCH_TEXTS`), each as a step doing just
    that action has it when nothing went wrong."""
    return [
        _action_text({**view, "a11y": [], "error": None}) for _, view in views[:MAX_BATCH_TEXTS]
    ]


def pooled_parts(payload: StepPayload) -> list[str]:
    """The texts whose vectors a step's vector is the mean of (`engine.embedding.pooled`): for
    a batch of several actions, its first actions' texts (`batch_actions`), then what the page
    said and the failure as a part of its own (`showing "Insufficient funds". Failed: …`: a
    failed batch's record does not say which action failed); none for any other step, whose
    vector is its text's."""
    views = action_views(payload)
    if payload.get("batch") is None or len(views) == 1:
        return []
    outcome = _outcome_text(payload).removeprefix(", ").removeprefix(". ")
    return [*batch_actions(views), outcome] if outcome else batch_actions(views)


def _action_text(payload: StepPayload, landed_url: str | None = None) -> str:
    """`step_text` of one action (a step's own, or one of a batch's)."""
    action = tool_action(payload["tool"])
    target = payload.get("target") or {}
    if not any(target.values()):
        # A target that names nothing (`{"name": ""}` in a file written by another program)
        # is no target: an observation stays one, and no text ends in a dangling preposition.
        target = {}
    acted_on = payload.get("onScreen") or payload.get("screen")
    landed = payload.get("screen")
    if action == "navigate" and not target:
        # A failed navigation stayed where it was: where it "landed" is not where it went.
        ok = payload.get("ok", True)
        went = (_screen(landed) or _web_page(landed_url, payload.get("a11y"))) if ok else None
        parts = ["go to", went or UNKNOWN_PAGE]
        if _screen(acted_on) and (acted_on != landed or not ok):
            parts.append(f"from {_screen(acted_on)}")
        text = " ".join(parts)
    elif action in _LOOKS and not target:
        page = _screen(landed) or _web_page(landed_url, payload.get("a11y"))
        text = f"{_LOOKS[action]} {page or 'the page'}"
    else:
        parts = [_VERBS.get(action) or _LOOKS.get(action) or words(action)]
        if target.get("role"):
            parts.append(target["role"])
        if target.get("name"):
            parts.append(f'"{target["name"]}"')
        if target.get("testId"):
            parts.append(f"({words(target['testId'])})")
        elif target.get("selector"):
            parts.append(f"({selector_words(target['selector'])})")
        place = _screen(acted_on) or _web_page(payload.get("url"), payload.get("a11y"))
        if place:
            parts.append(f"on {place}")
        if _screen(landed) and landed != acted_on:
            parts.append(f"leading to {_screen(landed)}")
        text = " ".join(parts)
    named = f"{target.get('name') or ''} {words(target.get('testId'))}".lower().split()
    if action == "click" and _DECLINES & set(named):
        text += ", declining the request"
    return text + _outcome_text(payload)


def _outcome_text(payload: StepPayload) -> str:
    """What a step's page said went wrong and how it failed (`, showing "…". Failed: …`)."""
    text = ""
    action = tool_action(payload["tool"])
    alerts = [name for role, name in payload.get("a11y", []) if role in ALERT_ROLES and name]
    if alerts:
        text += ", showing " + ", ".join(f'"{name}"' for name in dict.fromkeys(alerts))
    error = payload.get("error")
    if error and (error.get("message") or error.get("code")):
        waited = action.startswith("wait")
        text += f". Failed: {failure_text(error.get('code'), error.get('message'), waited)}"
    return text


def failure_text(code: str | None, message: str | None, waited: bool = True) -> str:
    """`it took too long and timed out: Wait timed out: locator.waitFor: Timeout 30000ms
    exceeded.`: what went wrong in people's words, then the message's first line (a Playwright
    call log after it names selectors, not what happened; no parentheses, which hold a step's
    identifiers: `engine.embedding.text_groups.identifiers`). A wait that timed out
    took too long; a click or a typing that timed out waited for its element, which never
    came (`waited` False): the element was not found."""
    lines = (message or "").strip().splitlines()
    first_line = _UNKNOWN_REF.sub(r"\1", lines[0]) if lines else ""
    plain = plain_failures(code, message)
    if "timeout" in failure_kinds(code, message):
        timed_out = "it took too long and timed out" if waited else "the element never appeared"
        plain.insert(0, timed_out)
    detail = first_line or words(code)
    return f"{', '.join(plain)}: {detail}" if plain else detail


def is_observation_text(text: str) -> bool:
    """Whether `text` is an observing step's own text, as `step_text` writes it (`look at the
    send screen`, `check the state of the web page localhost`): the semantic leg weighs those
    less (`engine.meaning.semantic_leg.OBSERVATION_WEIGHT`). No action's text opens that way."""
    return text.startswith(_OBSERVATION_OPENINGS)


def names_an_observation(app_words: str) -> bool:
    """Whether app words (what a query's everyday expression means: `analyzers.glossary`)
    name an observing step: its text's opening (`look at`, `take a screenshot`) or its tool
    (`describe screen`). A query saying so asks what a screen shows."""
    return app_words in _OBSERVING_TOOL_WORDS or any(
        opening.startswith(f"{app_words} ") for opening in _OBSERVATION_OPENINGS
    )


def screen_text(payload: StepPayload) -> str:
    """`unlock screen: Welcome back!, Password, Unlock` — the screen as observed (empty when
    the step observed nothing)."""
    return observed_screen_text(payload.get("screen"), payload.get("a11y", []))


def observed_screen_text(screen: str | None, a11y: list[list[str]]) -> str:
    """`screen_text` of a payload's `screen` and `a11y` (a build derives it once per parsed
    observation: `documents.Observed`)."""
    names = list(dict.fromkeys(name for _, name in a11y if name))
    if not names and (not screen or screen == "unknown"):
        return ""
    label = words(screen) if screen and screen != "unknown" else "a"
    return f"{label} screen: {', '.join(names[:MAX_SCREEN_NAMES])}".rstrip(": ")


def session_text(payload: StepPayload) -> str:
    """`Send 0.1 ETH to another account (send)` — the goal and its flowTags; empty without both.

    Free tags (`smoke`, `pr-31842`, `agent:claude`) stay out: they say how a run was filed, not
    what it did, and they made most session texts distinct (each distinct text is embedded
    once: many times the model's work at a build). nDCG@10 unchanged to the last digit on
    every query set, in every mode (`scripts/bench_quality.py`). The keyword leg still indexes
    the tags, and `filters.tags` still selects by them."""
    return _session_text(payload.get("goal"), tuple(payload.get("flowTags", ())))


@lru_cache(maxsize=1_024)
def _session_text(goal: str | None, flow_tags: tuple[str, ...]) -> str:
    """(cached: every step of a session asks for the same one)"""
    goal = (goal or "").strip()
    tags = [words(t) for t in flow_tags]
    tag_text = ", ".join(dict.fromkeys(t for t in tags if t))
    if goal and tag_text:
        return f"{goal} ({tag_text})"
    return goal or tag_text


def memory_texts(
    payload: StepPayload, landed_url: str | None = None, screen: str | None = None
) -> dict[str, str]:
    """The non-empty texts of a step's memories, by type (`landed_url`: as `step_text`;
    `screen`: the payload's `screen_text` when known)."""
    texts = {
        "step": step_text(payload, landed_url),
        "screen": screen_text(payload) if screen is None else screen,
        "session": session_text(payload),
    }
    return {kind: text for kind, text in texts.items() if text}


def memory_type(tool_name: str) -> str:
    """`screen` for a step that observed a screen (describe it, list its testIds, …), else
    `step` (an action)."""
    return "screen" if tool_action(tool_name) in OBSERVING_ACTIONS else "step"


def memory_fields(
    payload: StepPayload, landed_url: str | None, screen: str | None = None
) -> dict[str, object]:
    """The fields a step document gets for semantic search: its memory type, the keys of its
    texts per type (`sem_step`, `sem_screen`, `sem_session`; "" when it has none; the first two
    also as numbers, `schema.KEY_COLUMNS`) and the texts to embed under `EMBED_TEXTS`.
    `landed_url`: the URL the step's observation shows (the payload keeps the one acted on);
    `screen`: as `memory_texts`. A batch of several actions has a pooled step vector: its key
    under `POOLED_TEXTS`, its parts' texts under `EMBED_TEXTS`."""
    texts = memory_texts(payload, landed_url, screen)
    keys = {kind: text_key(MODEL_ID, text) for kind, text in texts.items()}
    embed: dict[str, str] = {}
    pooled: dict[str, Pooled] = {}
    parts = pooled_parts(payload)
    if len(parts) > 1:
        keys["step"] = pooled_key(MODEL_ID, parts)
        pooled[keys["step"]] = Pooled(texts["step"], tuple(text_key(MODEL_ID, p) for p in parts))
        embed.update(zip(pooled[keys["step"]].parts, parts, strict=True))
    embed.update((keys[kind], text) for kind, text in texts.items() if keys[kind] not in pooled)
    fields: dict[str, object] = {f"sem_{kind}": keys.get(kind, "") for kind in MEMORY_TYPES}
    fields.update((column, key_number(keys[k])) for k, column in KEY_COLUMNS.items() if k in keys)
    fields["memory_type"] = memory_type(payload["tool"])
    fields[EMBED_TEXTS] = embed
    fields[POOLED_TEXTS] = pooled
    return fields

"""Match evidence: which stored values of a hit contain the query's tokens, and its snippet.

Tantivy's snippet generator cannot see our Python tokens, so evidence is recomputed here from
the step's stored payload with the same analyzer the index used.
"""

from collections.abc import Callable, Iterable

from engine.index import (
    BatchEntry,
    PayloadError,
    PayloadTarget,
    StepPayload,
    route_of,
    value_tokens,
)

MAX_SNIPPET_MATCHES = 3
MAX_SNIPPET_ACTIONS = 4
"""Actions of a batch a snippet names."""


def _holds(value: str | None, tokens: frozenset[str]) -> bool:
    """Whether the value holds any of the tokens (no set of them is made: ~20 values a row)."""
    return bool(value) and not tokens.isdisjoint(value_tokens(value))


def match_evidence(payload: StepPayload, tokens: frozenset[str]) -> list[str]:
    """`matchedFields` of one step payload: the values holding query tokens, strongest first."""
    if not tokens:
        return []  # e.g. the whole identifiers of a query that typed none
    fields: list[str] = []

    def check(value: str | None, label: str) -> bool:
        found = _holds(value, tokens)
        if found:
            fields.append(label)
        return found

    for tag in payload.get("flowTags") or []:
        check(tag, f"flowTag:{tag}")
    check(payload.get("tool"), f"tool:{payload.get('tool')}")
    screen = payload.get("onScreen") or payload.get("screen")
    if screen and screen != "unknown":
        check(screen, f"screen:{screen}")
    _target_evidence(payload.get("target") or {}, "", check)
    for entry in payload.get("batch") or []:  # each action of a batch, named by its position
        at = f"batch[{entry['index']}]."
        _target_evidence(entry["target"] or {}, at, check)
        check(entry["tool"], f"{at}tool:{entry['tool']}")
    check(payload.get("goal"), "goal")
    for label in payload.get("labels") or []:
        if check(label, f"label:{label}"):
            break
    error: PayloadError | dict[str, None] = payload.get("error") or {}
    check(f"{error.get('code') or ''} {error.get('message') or ''}", f"error:{error.get('code')}")
    for role, name in payload.get("a11y") or []:
        if check(name, f'a11y:{role}:"{name}"') or check(role, f"a11y:{role}"):
            break
    for tag in payload.get("tags") or []:
        check(tag, f"tag:{tag}")
    route = route_of(payload.get("url"))
    check(route, f"route:/{route.replace(' ', '/')}")
    check(payload.get("branch"), f"branch:{payload.get('branch')}")
    return list(dict.fromkeys(fields))


def _target_evidence(
    target: PayloadTarget, at: str, check: Callable[[str | None, str], bool]
) -> None:
    """The evidence of a target: `testId:…`, `selector:…`, `target:role:"name"`, each after
    `at` (`batch[2].` for an action of a batch)."""
    if target.get("testId"):
        check(target["testId"], f"{at}testId:{target['testId']}")
    if target.get("selector"):
        check(target["selector"], f"{at}selector:{target['selector']}")
    if target.get("role") or target.get("name"):
        role, name = target.get("role") or "", target.get("name") or ""
        check(f"{role} {name}", f'{at}target:{role}:"{name}"')


def describe_target(target: PayloadTarget | None) -> str | None:
    if not target:
        return None
    if target.get("testId"):
        return f"testId: {target['testId']}"
    if target.get("selector"):
        return f"selector: {str(target['selector'])[:30]}"
    if target.get("role") or target.get("name"):
        role, name = target.get("role", ""), target.get("name", "")
        return f'ref: {target.get("a11yRef", "?")} ({role} "{name}")'
    if target.get("a11yRef"):
        return f"ref: {target['a11yRef']}"
    return None


def batch_summary(entries: list[BatchEntry]) -> str:
    """`batch: click testId: coin-overview-send, type testId: send-amount-input, …`"""
    shown = [
        " ".join(p for p in (e["tool"], describe_target(e["target"])) if p)
        for e in entries[:MAX_SNIPPET_ACTIONS]
    ]
    more = ", …" if len(entries) > MAX_SNIPPET_ACTIONS else ""
    return f"batch: {', '.join(shown) or 'no readable steps'}{more}"


def snippet(payload: StepPayload, matched_fields: Iterable[str]) -> str:
    """SPEC-03 §4.3.4: `match: …` first, then target (a batch: its actions), labels, screen
    and error code."""
    parts = []
    top = list(matched_fields)[:MAX_SNIPPET_MATCHES]
    if top:
        parts.append(f"match: {', '.join(top)}")
    if payload.get("batch") is not None:
        parts.append(batch_summary(payload.get("batch") or []))
    # What the match already shows is not repeated (a testId, the screen, the error code).
    shown = " ".join(top)
    target = payload.get("target") or {}
    described = describe_target(target)
    labels = (f"testId:{target.get('testId')}", f"selector:{target.get('selector')}")
    if described and not any(label in top for label in labels):
        parts.append(described)
    if payload.get("labels"):
        parts.append(f"labels: {', '.join(payload['labels'])}")
    if payload.get("screen") and f"screen:{payload['screen']}" not in shown:
        parts.append(f"screen: {payload['screen']}")
    error = payload.get("error")
    if not payload.get("ok", True) and error and f"error:{error.get('code')}" not in shown:
        parts.append(f"error: {error.get('code')}")
    return ", ".join(parts) or str(payload.get("tool", ""))

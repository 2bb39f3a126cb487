"""Match evidence: which stored values of a hit hold the query's words, and its snippet.

Tantivy's snippet generator cannot see our Python tokens, so evidence is recomputed here from
the step's stored payload with the same analyzer the index used.

A value is evidence only when it holds what the query said (`QueryWords`): a word (its stem,
spellings, synonyms, typo corrections or completions), or an identifier typed whole — that
identifier, or every one of its parts. A value holding only some parts of it is not: for
`coin-overview-send`, the testId `token-overview-button-swap` shares `overview` and nothing the
query asked about. Such a value is named only for a result that has nothing better to show,
and says so: `testId:eth-overview-swap (part: overview)`.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from engine.index import (
    BatchEntry,
    PayloadError,
    PayloadTarget,
    StepPayload,
    route_of,
    value_tokens,
)
from engine.query.plan import PlannedQuery

MAX_SNIPPET_MATCHES = 3
MAX_SNIPPET_ACTIONS = 4
"""Actions of a batch a snippet names."""


@dataclass(frozen=True, slots=True)
class QueryWords:
    """What a value must hold to be evidence of a query: any of `words`, or for some
    identifier of `identifiers`, a token of each of its parts."""

    words: frozenset[str]
    identifiers: tuple[tuple[frozenset[str], ...], ...] = ()
    parts: tuple[tuple[str, frozenset[str]], ...] = ()
    """Each part of an identifier typed whole, as said, with its tokens (`shared`)."""
    identifier_tokens: frozenset[str] = field(init=False)
    """Every token of a part of `identifiers`: a value holding none of them holds no
    identifier (most values of a page; `why` tells them at once)."""

    def __post_init__(self) -> None:
        tokens = frozenset().union(*(part for parts in self.identifiers for part in parts))
        object.__setattr__(self, "identifier_tokens", tokens)

    @classmethod
    def said(cls, plan: PlannedQuery) -> "QueryWords":
        """The query's words, its identifiers typed whole counting as one word each: a part of
        one (`overview` of `coin-overview-send`) is evidence only beside all the others."""
        wholes: dict[str, list[frozenset[str]]] = {}
        words: set[str] = set()
        parts = []
        for concept, tokens in zip(plan.concepts, plan.concept_tokens, strict=True):
            if concept.part_of is None:
                words |= tokens
            else:
                wholes.setdefault(concept.part_of, []).append(tokens)
                parts.append((concept.said, tokens))
        return cls(frozenset(words), tuple(tuple(p) for p in wholes.values()), tuple(parts))

    @property
    def part_tokens(self) -> frozenset[str]:
        return frozenset().union(*(tokens for _, tokens in self.parts))

    def why(self, value: str | None) -> str | None:
        """ "" when the value holds what the query said, else None (a label adds nothing)."""
        if not value:
            return None
        held = value_tokens(value)  # no set is made unless needed: ~20 values a row
        if not self.words.isdisjoint(held):
            return ""
        if self.identifier_tokens.isdisjoint(held):
            return None
        tokens = set(held)
        whole = any(all(not p.isdisjoint(tokens) for p in parts) for parts in self.identifiers)
        return "" if whole else None

    def shared(self, value: str | None) -> str | None:
        """What a value holding parts of an identifier typed whole adds to its label
        (` (part: overview)`), else None."""
        held = set(value_tokens(value)) if value else set()
        said = [part for part, tokens in self.parts if not tokens.isdisjoint(held)]
        return f" (part: {', '.join(dict.fromkeys(said))})" if said else None

    def part_named(self, token: str) -> str:
        """The part as said that a token stands for (`coin` for its completion `coin-swap`)."""
        return next((part for part, tokens in self.parts if token in tokens), token)


Why = Callable[[str | None], str | None]
"""Whether a value is evidence (None: it is not), and what its label then adds."""


def match_evidence(payload: StepPayload, why: Why) -> list[str]:
    """`matchedFields` of one step payload: the values `why` takes as evidence, strongest
    first (`QueryWords.why`, or `QueryWords.shared` for parts)."""
    fields: list[str] = []

    def check(value: str | None, label: str) -> bool:
        added = why(value)
        if added is not None:
            fields.append(label + added)
        return added is not None

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

"""Records -> index documents: the analysis of every field, done once per record.

A step document carries its session's searchable metadata (flowTags, goal, tags, branch,
createdAt), so that one query scores session and step evidence together. A click recorded by
a11y ref (`{"a11yRef": "e7"}`) is resolved to the role and name the ref had in the session's
latest snapshot before it, so "click confirm button" finds it although no testId was used.
"""

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast
from urllib.parse import urlsplit

import orjson

from analyzers import analyze, error_words, failure_kinds
from engine.core import OBSERVATIONS_CACHED, ByIdentity
from engine.index.batch_steps import BatchStep, analyse_batch
from engine.index.payload import (
    ResolvedTarget,
    StepExtras,
    StepPayload,
    SupersededBy,
    SupersessionPayload,
)
from engine.index.schema import COVERAGE_FIELDS, DESTRUCTIVE, DOC_SESSION, DOC_STEP
from engine.index.step_texts import memory_fields, observed_screen_text
from engine.records import (
    EVIDENCE,
    FIELD_TOKENS,
    UNKNOWN,
    A11yNode,
    FactsCollector,
    LoadedSession,
    LoadedStep,
    Observation,
    SessionFacts,
    SessionMetadata,
    StepRecord,
    Supersession,
    action_danger,
    completed,
    default_rules,
    epoch_ms,
    read_batch,
    record_labels,
    says_irreversible,
    scrub_step,
    target_danger,
    tool_action,
)

MAX_TOKEN_CHARS = 100
MAX_PAYLOAD_A11Y = 40
NOTICE_ROLES = frozenset({"alert", "status", "alertdialog"})


@lru_cache(maxsize=262_144)
def value_tokens(value: str) -> tuple[str, ...]:
    """The index tokens of one value (cached: the same labels and names recur on every step).

    Evidence and priorKnowledge use it too, so what they call a match is what the index holds.
    """
    return tuple(t for t in analyze(value) if len(t) <= MAX_TOKEN_CHARS)


def field_text(values: Iterable[str | None]) -> str:
    """Distinct tokens of several values, space-joined for a `whitespace` field; at most
    `FIELD_TOKENS` of them, so one record cannot flood the index's (and typo) vocabulary."""
    return _field_text(tuple(values))


@lru_cache(maxsize=32_768)
def _field_text(values: tuple[str | None, ...]) -> str:
    """(cached: agents see the same screens again and again, so most steps' fields repeat an
    earlier step's values exactly; hashing the values costs a tenth of analysing them)"""
    seen: dict[str, None] = {}
    for value in values:
        if value:
            for token in value_tokens(value):
                seen.setdefault(token, None)
            if len(seen) >= FIELD_TOKENS:
                return " ".join(itertools.islice(seen, FIELD_TOKENS))
    return " ".join(seen)


@lru_cache(maxsize=65_536)
def route_of(url: str | None) -> str:
    """The words of a URL's route: its `#/…` fragment when it has one, else its path.

    `chrome-extension://…/home.html#/send` -> `/send`; hex addresses are dropped.
    """
    if not url:
        return ""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    route = parts.fragment or parts.path
    segments = [s for s in route.split("/") if s and not s.lower().startswith("0x")]
    return " ".join(segments)


@dataclass(slots=True)
class SessionContext:
    """What the agent saw before a step: the screen and URL it acted on, the refs of the latest
    accessibility snapshot, and the visible text of the latest testIds."""

    screen: str | None = None
    url: str | None = None
    refs: dict[str, tuple[str, str]] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    nodes: list[A11yNode] = field(default_factory=list)
    """The latest whole accessibility snapshot (what a diff-mode observation is made from)."""

    def see(self, record: StepRecord) -> StepRecord:
        """`record` as the agent saw it: a diff-mode observation made whole from the snapshot
        before (`engine.records.completed`), every secret scrubbed (`scrub_step`: files
        written by others may hold them)."""
        return scrub_step(completed(record, self.nodes), self.refs)

    def advance(self, scrubbed: StepRecord) -> None:
        """Move past a record already seen through this context (`see`: a secret shown on
        screen must not become a later step's target name; the caller has scrubbed it to use
        it, and scrubbing costs as much as the rest of a step's analysis): its observation
        (taken after the action) is what comes next."""
        seen = observed(scrubbed.observation)
        self.screen = seen.screen
        self.url = scrubbed.observation.state.currentUrl
        if seen.refs is not None:
            self.refs, self.roles = seen.refs, seen.roles
            self.nodes = scrubbed.observation.a11y.nodes
        if seen.texts is not None:
            self.texts = seen.texts


def effective_screen(record: StepRecord) -> str:
    """The recorded screen, or — for records that said `unknown` — what the rules detect."""
    return _screen_of(record.observation)


def _screen_of(obs: Observation) -> str:
    screen = obs.state.currentScreen or UNKNOWN
    if screen != UNKNOWN:
        return screen
    return default_rules().detect(obs.state.currentUrl, (t.testId for t in obs.testIds))


@dataclass(frozen=True, slots=True)
class Observed:
    """What an observation alone gives a step document and the session context (shared, never
    changed: `observed`)."""

    screen: str
    """`effective_screen`."""
    refs: dict[str, tuple[str, str]] | None
    """a11y ref -> (role, name); None when the observation has no snapshot (the context keeps
    the one before)."""
    roles: dict[str, str]
    texts: dict[str, str] | None
    """testId -> visible text; None when the observation lists no testIds."""
    landed: str
    visible: str
    a11y: str
    notice: str
    payload_a11y: list[list[str]]
    screen_text: str
    """`step_texts.screen_text` of a step's payload (its `screen` and `a11y` are these)."""
    irreversible: tuple[str, ...]
    """The texts shown that say an action cannot be undone (`engine.records.danger`)."""


def _observe(obs: Observation) -> Observed:
    nodes = obs.a11y.nodes
    screen = _screen_of(obs)
    payload_a11y = [[n.role, n.name] for n in nodes[:MAX_PAYLOAD_A11Y]]
    return Observed(
        screen=screen,
        refs={n.ref: (n.role, n.name) for n in nodes} if nodes else None,
        roles={n.name.lower(): n.role for n in nodes if n.name},
        texts={t.testId: t.text for t in obs.testIds if t.text} if obs.testIds else None,
        landed=field_text([screen if screen != UNKNOWN else None, route_of(obs.state.currentUrl)]),
        visible=field_text(t.testId for t in obs.testIds),
        a11y=field_text(
            [*(n.name for n in nodes), *(n.role for n in nodes), *(t.text for t in obs.testIds)]
        ),
        notice=field_text(n.name for n in nodes if n.role in NOTICE_ROLES),
        payload_a11y=payload_a11y,
        screen_text=observed_screen_text(screen, payload_a11y),
        irreversible=tuple(
            text
            for text in (*(t.text for t in obs.testIds if t.text), *(n.name for n in nodes))
            if says_irreversible(text)
        ),
    )


observed = ByIdentity(_observe, OBSERVATIONS_CACHED)
"""`Observed` of an observation, derived once per parsed observation (records share them)."""


def resolve_target(record: StepRecord, context: SessionContext) -> ResolvedTarget | None:
    target = record.tool.target
    if target is None:
        return None
    role = name = None
    if target.a11yHint is not None:
        role, name = target.a11yHint.role, target.a11yHint.name
    elif target.a11yRef and target.a11yRef in context.refs:
        role, name = context.refs[target.a11yRef]
    elif target.testId and target.testId in context.texts:
        name = context.texts[target.testId]
        role = context.roles.get(name.lower())
    return ResolvedTarget(target.testId, target.selector, target.a11yRef, role, name)


def session_fields(meta: SessionMetadata) -> dict[str, Any]:
    """Searchable and filterable session metadata, shared by session and step documents."""
    branch = meta.git.branch if meta.git and meta.git.branch else None
    return {
        "session_id": meta.sessionId,
        "created": epoch_ms(meta.createdAt),
        "flow": field_text(meta.flowTags),
        "goal": field_text([meta.goal]),
        "tags": field_text(meta.tags),
        "branch": field_text([branch]),
        "flow_tag": [t.lower() for t in meta.flowTags] or [],
        "tag": [t.lower() for t in meta.tags] or [],
        "branch_name": branch.lower() if branch else "",
        "state_mode": (meta.launched("stateMode") or "").lower(),
        "fixture_preset": (meta.launched("fixturePreset") or "").lower(),
    }


def session_evidence(meta: SessionMetadata) -> dict[str, Any]:
    """Session values shown as match evidence on each step (kept in the step payload)."""
    branch = meta.git.branch if meta.git and meta.git.branch else None
    return {"flowTags": meta.flowTags, "tags": meta.tags, "branchRaw": branch}


def step_document(
    step_id: str,
    record: StepRecord,
    seq: int,
    shared: dict[str, Any],
    context: SessionContext,
    meta: SessionMetadata,
    decision: Supersession | None = None,
    facts: FactsCollector | None = None,
) -> dict[str, Any]:
    """One step (`record` seen through `context`, `SessionContext.see`); `context` is the
    session as the agent saw it just before this step.

    A batch step (`run_steps`) carries its actions' tools, targets, screens and labels as a
    step carries its own (`engine.index.batch_steps`). `decision` (from the session's
    `superseded.json`) flags the step as superseded; `facts` collects what supersede detection
    needs, with the same resolved targets and screens.
    """
    goal = meta.goal
    target = resolve_target(record, context)
    evidence = session_evidence(meta)
    obs = record.observation
    seen = observed(obs)
    error = record.outcome.error
    screen = seen.screen
    on_screen = context.screen or screen
    on_url = context.url or obs.state.currentUrl
    batch = read_batch(record)
    if batch is None:  # a step's own parts (most steps): no batch to fold in
        actions: list[BatchStep] = []
        labels = record_labels(record)
        targets: list[ResolvedTarget | None] = [target]
        screens = [on_screen]
        tools = [record.tool.name]
    else:
        actions = analyse_batch(
            record, batch, lambda r: resolve_target(r, context), context.screen, screen
        )
        labels = list(
            dict.fromkeys([*record_labels(record), *(x for a in actions for x in a.labels())])
        )
        targets = [target, *(a.target for a in actions)]
        screens = [on_screen, *(a.screen for a in actions if a.screen)]
        tools = [record.tool.name, *(a.record.tool.name for a in actions)]
    extras: StepExtras = {}
    context_name = record.context
    if context_name:
        extras["context"] = context_name
    if batch is not None:
        extras["batch"] = [a.entry() for a in actions]
    danger = _danger(record, target, context, on_screen, on_url) or _batch_danger(actions)
    if danger:
        extras["danger"] = danger
    payload: StepPayload = {
        "tool": record.tool.name,
        "screen": screen,
        "onScreen": on_screen,
        "url": on_url,
        "target": target.payload() if target else None,
        "labels": labels,
        "ok": record.outcome.ok,
        "error": {"code": error.code, "message": error.message} if error else None,
        "timestamp": record.timestamp,
        "goal": goal,
        "flowTags": evidence["flowTags"],
        "tags": evidence["tags"],
        "branch": evidence["branchRaw"],
        "a11y": seen.payload_a11y,
        **supersession_fields(decision),
        **extras,
    }
    if facts is not None:
        described = target.describe() if target else ""
        role, name = (target.role, target.name) if target else (None, None)
        facts.add(step_id, record, on_screen, screen, role, name, described)
        for a in actions:
            if a.outcome != "unknown" and a.screen and a.target:
                facts.add(
                    step_id,
                    a.record,
                    a.screen,
                    a.screen,
                    a.target.role,
                    a.target.name,
                    a.described(),
                )
    fields = {
        "tool": field_text([tool_action(tool) for tool in tools]),
        "screen": field_text([s for s in screens if s != "unknown"]),
        "landed": seen.landed,
        "target": field_text([v for t in targets if t for v in (t.test_id, t.selector)]),
        "target_name": field_text([v for t in targets if t for v in (t.role, t.name)]),
        "labels": field_text(labels),
        "visible": seen.visible,
        "a11y": seen.a11y,
        "route": field_text([route_of(on_url)]),
        "error": _error_text(error.code, error.message) if error else "",
        "notice": seen.notice,
    }
    # Tokens the reranker checks query coverage against (`schema.COVERAGE_FIELDS`), kept with
    # the payload so reranking never re-analyses text at query time.
    texts = tuple(fields[name] if name in fields else shared[name] for name in COVERAGE_FIELDS)
    rank = _coverage_rank(record.outcome.ok, texts, fields["error"])
    doc = dict(shared)
    doc.update(fields)
    doc.update(
        {
            "doc_type": DOC_STEP,
            "step_id": step_id,
            "tool_name": sorted({n for t in tools for n in (t.lower(), tool_action(t).lower())}),
            "screen_name": sorted({screen.lower(), *(s.lower() for s in screens)}),
            "ok": "true" if record.outcome.ok else "false",
            "failure": list(failure_kinds(error.code, error.message)) if error else [],
            "superseded": superseded_flag(decision),
            "recalled": [link.stepId for link in record.recalled or []],
            "target_id": sorted({t.test_id.lower() for t in targets if t and t.test_id}),
            "context": context_name or "",
            "danger": DESTRUCTIVE if danger else "",
            "ts": epoch_ms(record.timestamp),
            "seq": seq,
            "payload": orjson.dumps(payload),
            "rank": rank,
            **memory_fields(payload, obs.state.currentUrl, seen.screen_text),
        }
    )
    return doc


def _danger(
    record: StepRecord,
    target: ResolvedTarget | None,
    context: SessionContext,
    on_screen: str,
    on_url: str | None,
) -> list[str]:
    """The evidence that the step's action destroys something (`engine.records.action_danger`):
    from its target, the screen it changed to, what it newly showed, and the text beside its
    target on the screen before."""
    if target is None:
        return []
    obs = record.observation
    seen = observed(obs)
    after_screen, after_url = seen.screen, obs.state.currentUrl
    led_to = " ".join(
        [
            after_screen if after_screen not in (on_screen, UNKNOWN) else "",
            route_of(after_url) if after_url and after_url != on_url else "",
        ]
    )
    warned = list(seen.irreversible)
    if warned:  # newly shown only: a page that always says so is not what this action opened
        before = {*context.texts.values(), *(name for _, name in context.refs.values())}
        warned = [text for text in warned if text not in before]
    return action_danger(
        target.test_id,
        target.selector,
        target.name,
        led_to=led_to.strip() or None,
        opened=warned,
        before=context.texts,
    )


def _batch_danger(actions: list[BatchStep]) -> list[str]:
    """The evidence that an action of a batch destroys something: its target's id or name (a
    batch's record shows nothing between its actions)."""
    found = {
        kind
        for a in actions
        if a.target
        for kind in target_danger(a.target.test_id, a.target.selector, a.target.name)
    }
    return [kind for kind in EVIDENCE if kind in found]


SUPERSESSION_KEYS = ("supersededAt", "supersededBy", "supersededReason")
"""The payload keys `supersession_fields` may set, in the order a step's payload lists them."""


def _error_text(code: str | None, message: str | None) -> str:
    """An error's field text: its code, what people call it (`analyzers.error_words`: the
    message's words alone do not say `timed out` or `disabled`), then its message."""
    return field_text([code, *error_words(code, message), message])


def supersession_fields(decision: Supersession | None) -> SupersessionPayload:
    """What a step's payload says of its supersession (nothing when it is not superseded)."""
    if decision is None:
        return {}
    fields: SupersessionPayload = {"supersededAt": decision.supersededAt}
    if decision.supersededBy is not None:
        by = decision.supersededBy.model_dump(exclude_none=True)
        fields["supersededBy"] = cast(SupersededBy, by)  # the model's fields, typed
    if decision.reason:
        fields["supersededReason"] = decision.reason
    return fields


def superseded_flag(decision: Supersession | None) -> str:
    return "true" if decision is not None else "false"


def reflag_step_document(doc: dict[str, Any], decision: Supersession | None) -> None:
    """A step's document (its payload as bytes) made as `step_document` makes it with
    `decision` instead of the decision it was made with. Only the flag and the payload's
    supersession fields depend on it, so a rebuild re-flags the documents it made before
    detection this way instead of analysing their steps again."""
    payload = orjson.loads(doc["payload"])
    for key in SUPERSESSION_KEYS:
        payload.pop(key, None)
    payload.update(supersession_fields(decision))
    doc["payload"] = orjson.dumps(payload)
    doc["superseded"] = superseded_flag(decision)


@lru_cache(maxsize=8_192)
def _coverage_rank(ok: bool, texts: tuple[str, ...], error: str) -> bytes:
    """`rank_record` of a step's coverage field texts and error text (cached: most steps
    repeat an earlier step's field values, as `_field_text` says)."""
    tokens = dict.fromkeys(" ".join(texts).split())  # ordered: builds are reproducible
    return rank_record(ok, tokens, error.split())


def rank_record(ok: bool, tokens: Iterable[str], error_tokens: Iterable[str]) -> bytes:
    """`ok|tokens|error tokens` (space-separated): the reranker's input, cheap to decode."""
    return f"{int(ok)}|{' '.join(tokens)}|{' '.join(error_tokens)}".encode()


def read_rank_record(data: bytes) -> tuple[bool, str, str]:
    """`rank_record`'s flag and its two token lists, each still one string of tokens separated
    by single spaces (`engine.search.step_search` looks query tokens up in them without
    splitting)."""
    ok, tokens, error_tokens = data.decode().split("|", 2)
    return ok == "1", tokens, error_tokens


def session_document(loaded: LoadedSession, shared: dict[str, Any]) -> dict[str, Any]:
    meta = loaded.metadata
    payload = meta.model_dump(mode="json", exclude_none=True)
    payload["hasMetadata"] = loaded.has_metadata_file
    doc = dict(shared)
    doc.update({"doc_type": DOC_SESSION, "payload": orjson.dumps(payload)})
    return doc


def step_documents(
    steps: Iterable[LoadedStep],
    meta: SessionMetadata,
    context: SessionContext,
    start_seq: int = 0,
    decisions: dict[str, Supersession] | None = None,
    facts: SessionFacts | None = None,
    only: set[str] | None = None,
) -> list[dict[str, Any]]:
    """Documents of consecutive steps of one session; `context` is advanced past them and
    `facts` (when given) extended with them. With `only`, just those steps' documents are
    made (the others are only walked past: re-flagging a few steps re-analyses only them)."""
    shared = session_fields(meta)
    collector = FactsCollector(facts) if facts is not None else None
    docs = []
    for seq, step in enumerate(steps, start_seq):
        record = context.see(step.record)
        if only is None or step.step_id in only:
            decision = decisions.get(step.step_id.split("/", 1)[1]) if decisions else None
            docs.append(
                step_document(step.step_id, record, seq, shared, context, meta, decision, collector)
            )
        context.advance(record)
    return docs


def session_documents(
    loaded: LoadedSession, facts: SessionFacts | None = None
) -> list[dict[str, Any]]:
    """The session document and one document per readable step, in file order; `facts` (when
    given) receives the session's supersede facts and its detected decisions on file. A session
    whose folder is a link (`refused`) makes none: nothing outside the root is searchable."""
    if loaded.refused:
        return []
    docs = [session_document(loaded, session_fields(loaded.metadata))]
    if facts is not None:
        facts.detected = {
            f"{loaded.session_id}/{stem}": decision.supersededBy.stepId
            for stem, decision in loaded.decisions.items()
            if decision.source == "detected" and decision.supersededBy is not None
        }
    docs += step_documents(
        loaded.steps, loaded.metadata, SessionContext(), 0, loaded.decisions, facts
    )
    return docs

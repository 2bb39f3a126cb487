"""What every read sees (`ReadView`) and the filters every retrieval path shares.

Scope, `filters` and the superseded rule become unscored MUST clauses built in one place, so
search, last and sessions can never disagree on what "flowTag send since 24 h" means. The
caller's current session (what scope "current" means) is per conversation: the server or the
CLI passes it with each read, the engine keeps none.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import tantivy

from engine.core import (
    ONE_SESSION,
    KnowledgeFilters,
    LastInput,
    NoActiveSession,
    Scope,
    SearchInput,
    SessionScope,
)
from engine.index import DOC_SESSION, int_range, term, unscored
from engine.query.doc_store_cache import StoredDocs
from engine.query.plan import step_filter
from engine.query.superseded_rule import SUPERSEDED_FIELD, current_steps
from engine.query.term_counts import TermCounts
from engine.records import tool_action

FilterClauses = list[tuple[tantivy.Occur, tantivy.Query]]
"""A query's filters as (occur, query) clauses of a boolean query."""


@dataclass(frozen=True, slots=True)
class ReadView:
    """One read: a searcher of one index generation, its schema, the time and the caller's
    current session."""

    searcher: tantivy.Searcher
    schema: tantivy.Schema
    now: datetime
    current_session: str | None = None
    docs: StoredDocs | None = None
    """The stored documents of `searcher` read so far (`doc`); None: none kept."""
    terms: TermCounts | None = None
    """What `searcher`'s term dictionaries answered so far (`term_counts`); None: none kept."""

    def doc(self, address: tantivy.DocAddress) -> tantivy.Document:
        """The stored document at `address`, kept for later reads when `docs` keeps them."""
        if self.docs is None or self.docs.searcher is not self.searcher:
            return self.searcher.doc(address)
        return self.docs.doc(address)

    def docs_at(self, addresses: Sequence[tantivy.DocAddress]) -> list[tantivy.Document]:
        """The stored documents at `addresses`, in order (`doc` of each)."""
        if self.docs is None or self.docs.searcher is not self.searcher:
            return [self.searcher.doc(address) for address in addresses]
        return self.docs.docs(addresses)

    def term_counts(self) -> TermCounts:
        """The term counts of `searcher`: those kept, or new ones for this read alone."""
        if self.terms is None or self.terms.searcher is not self.searcher:
            return TermCounts(self.searcher)
        return self.terms


def epoch_ms_of(moment: datetime) -> int:
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return int(aware.timestamp() * 1000)


def scope_session(scope: Scope, current_session: str | None) -> str | None:
    """The one session a scope names, or None for "all"."""
    if isinstance(scope, SessionScope):
        return scope.sessionId
    if scope == "current":
        if not current_session:
            raise NoActiveSession(
                'scope "current" needs an active session; start one, or use scope "all" '
                f"or {ONE_SESSION}"
            )
        return current_session
    return None


def filter_clauses(
    view: ReadView,
    scope: Scope,
    filters: KnowledgeFilters | None,
    *,
    steps: bool,
    include_superseded: bool = False,
) -> list[tantivy.Query]:
    """Every retrieval path's filters; steps drop superseded ones unless asked for them
    (`engine.query.superseded_rule`), so no mode can forget it."""
    schema = view.schema
    clauses = [step_filter(schema) if steps else term(schema, "doc_type", DOC_SESSION)]
    if steps and not include_superseded:
        clauses.append(current_steps(schema))
    return clauses + _narrowing(view, scope, filters, steps=steps)


def search_filters(view: ReadView, request: SearchInput) -> FilterClauses:
    """The filters of a search as clauses of the queries it runs: the documents
    `step_clauses` keeps, with the document kind and the superseded rule said as exclusions
    (MUST_NOT a session document, a superseded step) and the rest as unscored MUST clauses.

    Same documents: every document is a step or a session, and every step document says `superseded`
    true or false (`engine.index.documents`). Cheaper: a MUST clause that nearly every document
    holds is sought for every candidate, a sparse exclusion barely (both the keyword tiers and the
    semantic candidates' query got cheaper: `scripts/bench_search_ab.py`)."""
    schema = view.schema
    clauses = [(tantivy.Occur.MustNot, term(schema, "doc_type", DOC_SESSION))]
    if not request.includeSuperseded:
        clauses.append((tantivy.Occur.MustNot, term(schema, SUPERSEDED_FIELD, "true")))
    narrowing = _narrowing(view, request.scope, request.filters, steps=True)
    return clauses + [(tantivy.Occur.Must, unscored(q)) for q in narrowing]


def _narrowing(
    view: ReadView, scope: Scope, filters: KnowledgeFilters | None, *, steps: bool
) -> list[tantivy.Query]:
    """The clauses of a scope and a request's filters (those that narrow the documents of a
    kind down)."""
    schema = view.schema
    clauses: list[tantivy.Query] = []
    session_id = scope_session(scope, view.current_session)
    if session_id:
        clauses.append(term(schema, "session_id", session_id))
    if filters is None:
        return clauses
    if filters.flowTag:
        clauses.append(term(schema, "flow_tag", filters.flowTag.lower()))
    if filters.tag:
        clauses.append(term(schema, "tag", filters.tag.lower()))
    if filters.gitBranch:
        clauses.append(term(schema, "branch_name", filters.gitBranch.lower()))
    if filters.stateMode:
        clauses.append(term(schema, "state_mode", filters.stateMode.lower()))
    if filters.fixturePreset:
        clauses.append(term(schema, "fixture_preset", filters.fixturePreset.lower()))
    if filters.sinceHours:
        since = view.now - timedelta(hours=filters.sinceHours)
        clauses.append(int_range(schema, "created", epoch_ms_of(since), None))
    if steps:
        if filters.screen:
            clauses.append(term(schema, "screen_name", filters.screen.lower()))
        if filters.ok is not None:
            clauses.append(term(schema, "ok", "true" if filters.ok else "false"))
        if filters.tool:  # by its action: `click` and `mm_click` are one
            clauses.append(term(schema, "tool_name", tool_action(filters.tool).lower()))
        if filters.context:
            clauses.append(term(schema, "context", filters.context))
    if filters.after or filters.before:
        # Steps by their own time; sessions by their createdAt.
        clauses.append(
            int_range(
                schema,
                "ts" if steps else "created",
                epoch_ms_of(filters.after) if filters.after else None,
                epoch_ms_of(filters.before) if filters.before else None,
            )
        )
    return clauses


def step_clauses(view: ReadView, request: SearchInput | LastInput) -> list[tantivy.Query]:
    """The filters of a request over steps: its scope, its filters, superseded or not."""
    return filter_clauses(
        view,
        request.scope,
        request.filters,
        steps=True,
        include_superseded=request.includeSuperseded,
    )

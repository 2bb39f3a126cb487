"""The knowledge operations: search, last, sessions, summarize — over the index, never a file scan.

Search retrieves candidates with one boosted Tantivy query over step and session fields of
every session (no session cut, no step cap), then reranks the top window in Python with what
BM25 cannot express: how many of the query's words a step covers, whether it worked, and how
recent its session is. Order is deterministic: score, then session createdAt (newest first),
then stepId.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import tantivy

from analyzers import SynonymTable
from engine.documents import read_rank_record
from engine.errors import InvalidInput, NoActiveSession, NotFound
from engine.evidence import match_evidence, snippet
from engine.index import IndexLayout, IndexReader
from engine.inputs import (
    KnowledgeFilters,
    LastInput,
    Scope,
    SearchInput,
    SessionScope,
    SessionsInput,
    SummarizeInput,
)
from engine.lifecycle import current_steps, is_superseded, superseded_fields
from engine.models import epoch_ms
from engine.prior import PriorKnowledge, ScreenContext, prior_knowledge
from engine.query import PlannedQuery, plan_query, scored_query, step_filter
from engine.results import (
    SearchPage,
    SessionList,
    SessionRecipe,
    SessionSummary,
    StepList,
    StepSummary,
)
from engine.schema import DOC_SESSION
from engine.store import KnowledgeStore
from engine.summarize import summarize_session
from engine.vocabulary import TypoVocabulary

RERANK_WINDOW = 100
COVERAGE_WEIGHT = 1.0
OK_FACTOR = 1.6
RECENCY_FACTORS = ((timedelta(hours=24), 1.2), (timedelta(hours=72), 1.07))


@dataclass(frozen=True, slots=True)
class Candidate:
    step_id: str
    session_id: str
    created: int
    payload: dict[str, Any]
    score: float
    matched_fields: list[str]


def _term(schema: tantivy.Schema, field: str, value: str) -> tantivy.Query:
    return tantivy.Query.term_query(schema, field, value, index_option="basic")


def _range(
    schema: tantivy.Schema, field: str, lower: int | None, upper: int | None
) -> tantivy.Query:
    return tantivy.Query.range_query(
        schema,
        field,
        tantivy.FieldType.Integer,
        lower_bound=lower if lower is not None else -(2**62),
        upper_bound=upper if upper is not None else 2**62,
        include_upper=False,
    )


def _key(address: tantivy.DocAddress) -> tuple[int, int]:
    """A document's identity within one searcher (DocAddress is not hashable)."""
    return (address.segment_ord, address.doc)


def _unscored(query: tantivy.Query) -> tantivy.Query:
    """A filter: it must match, but adds nothing to the score."""
    return tantivy.Query.const_score_query(query, 0.0)


def _ms(moment: datetime) -> int:
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return int(aware.timestamp() * 1000)


class KnowledgeEngine:
    """Library entry point used by the CLI and the MCP server."""

    def __init__(
        self,
        root: Path,
        index_dir: Path,
        *,
        synonyms: SynonymTable | None = None,
        now: Callable[[], datetime] | None = None,
        current_session: str | None = None,
    ) -> None:
        self.root = Path(root)
        self.layout = IndexLayout(index_dir)
        self.synonyms = synonyms or SynonymTable()
        self.now = now or (lambda: datetime.now(UTC))
        self.current_session = current_session
        self._reader: IndexReader | None = None
        self._reader_stamp: int | None = None
        self._typo: TypoVocabulary | None = None
        self._typo_path: Path | None = None

    # -- index access ----------------------------------------------------------------------
    @property
    def reader(self) -> IndexReader:
        """The reader of the live generation, reopened when a rebuild swapped it (noticed by the
        pointer file's mtime: one stat per call, not a read)."""
        stamp = self.layout.stamp()
        if self._reader is None or stamp != self._reader_stamp:
            current = self.layout.current()
            if self._reader is None or (current is not None and current != self._reader.path):
                self._reader = IndexReader.open(self.layout)
            self._reader_stamp = stamp
        return self._reader

    def _vocabulary(self, searcher: tantivy.Searcher) -> TypoVocabulary:
        """The typo vocabulary, rebuilt at most once a minute (and after a rebuild swap)."""
        if self._typo is None or self._typo.stale or self._typo_path != self.reader.path:
            self._typo = TypoVocabulary(searcher)
            self._typo_path = self.reader.path
        return self._typo

    def refresh(self) -> None:
        """See commits made since the last call (by this or another process)."""
        self.reader.reload()

    # -- filters ---------------------------------------------------------------------------
    def _scope_session(self, scope: Scope) -> str | None:
        if isinstance(scope, SessionScope):
            return scope.sessionId
        if scope == "current":
            if not self.current_session:
                raise NoActiveSession(
                    "scope 'current' needs an active session; start one, or use scope 'all' "
                    "or {'sessionId': …}"
                )
            return self.current_session
        return None

    def _filter_clauses(
        self,
        scope: Scope,
        filters: KnowledgeFilters | None,
        *,
        steps: bool,
        include_superseded: bool = False,
    ) -> list[tantivy.Query]:
        """Every retrieval path's filters; steps drop superseded ones unless asked for them
        (`engine.lifecycle`), so no mode can forget it."""
        schema = self.reader.schema
        clauses = [step_filter(schema) if steps else _term(schema, "doc_type", DOC_SESSION)]
        if steps and not include_superseded:
            clauses.append(current_steps(schema))
        session_id = self._scope_session(scope)
        if session_id:
            clauses.append(_term(schema, "session_id", session_id))
        if filters is None:
            return clauses
        if filters.flowTag:
            clauses.append(_term(schema, "flow_tag", filters.flowTag.lower()))
        if filters.tag:
            clauses.append(_term(schema, "tag", filters.tag.lower()))
        if filters.gitBranch:
            clauses.append(_term(schema, "branch_name", filters.gitBranch.lower()))
        if filters.sinceHours:
            since = self.now() - timedelta(hours=filters.sinceHours)
            clauses.append(_range(schema, "created", _ms(since), None))
        if steps:
            if filters.screen:
                clauses.append(_term(schema, "screen_name", filters.screen.lower()))
            if filters.ok is not None:
                clauses.append(_term(schema, "ok", "true" if filters.ok else "false"))
            if filters.tool:
                clauses.append(_term(schema, "tool_name", filters.tool.lower()))
        if filters.after or filters.before:
            # Steps by their own time; sessions by their createdAt.
            clauses.append(
                _range(
                    schema,
                    "ts" if steps else "created",
                    _ms(filters.after) if filters.after else None,
                    _ms(filters.before) if filters.before else None,
                )
            )
        return clauses

    # -- search ----------------------------------------------------------------------------
    def search(self, request: SearchInput) -> SearchPage:
        reader = self.reader
        searcher = reader.searcher()
        plan = plan_query(searcher, request.query, self.synonyms, self._vocabulary(searcher))
        must = self._filter_clauses(
            request.scope,
            request.filters,
            steps=True,
            include_superseded=request.includeSuperseded,
        )
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, _unscored(q)) for q in must]
            + [(tantivy.Occur.Must, scored_query(reader.schema, plan.clauses))]
        )
        end = request.offset + request.limit
        found = searcher.search(query, limit=max(RERANK_WINDOW, end), count=True)
        head = found.hits[:RERANK_WINDOW]
        docs = {_key(address): searcher.doc(address) for _, address in head}
        scores = {_key(address): score for score, address in head}
        if len(plan.clauses) < len(plan.all_clauses):
            scores = self._rescore(docs, plan)
        now_ms = _ms(self.now())
        ranked = []
        for key, doc in docs.items():
            score = scores[key]
            created = int(doc["created"][0])
            ok, step_tokens, error_tokens = read_rank_record(doc["rank"][0])
            factor = _rerank_factor(ok, step_tokens, error_tokens, plan, now_ms - created)
            ranked.append((score * factor, created, str(doc["step_id"][0]), doc))
        ranked.sort(key=lambda r: (-round(r[0], 9), -r[1], r[2]))
        # Past the reranked window, hits follow in BM25 order (never above the window: the
        # rerank factor is >= 1), so every page is a slice of one stable ordering.
        for score, address in found.hits[len(ranked) : end]:
            doc = searcher.doc(address)
            ranked.append((score, int(doc["created"][0]), str(doc["step_id"][0]), doc))
        page = []
        for final, created, step_id, doc in ranked[request.offset : end]:
            payload = orjson.loads(doc["payload"][0])
            fields = match_evidence(payload, plan.tokens)
            page.append(Candidate(step_id, doc["session_id"][0], created, payload, final, fields))
        results = [_summary(c) for c in page]
        total = hit_count(found)
        hint = None
        if total == 0:
            hint = self._empty_hint(request.query)
        return SearchPage(
            query=request.query,
            total=total,
            offset=request.offset,
            limit=request.limit,
            hasMore=request.offset + len(results) < total,
            results=results,
            hint=hint,
        )

    def _rescore(
        self, docs: dict[tuple[int, int], Any], plan: PlannedQuery
    ) -> dict[tuple[int, int], float]:
        """Exact BM25 of every clause for the retrieved candidates only (cheap: an intersection
        with a small set), after retrieval ran on the clauses that fit the posting budget.
        Every candidate matches: its retrieval clauses are among all the clauses."""
        if not docs:
            return {}
        searcher = self.reader.searcher()
        schema = self.reader.schema
        ids = [doc["step_id"][0] for doc in docs.values()]
        query = tantivy.Query.boolean_query(
            [
                (
                    tantivy.Occur.Must,
                    _unscored(tantivy.Query.term_set_query(schema, "step_id", ids)),
                ),
                (tantivy.Occur.Must, scored_query(schema, plan.all_clauses)),
            ]
        )
        rescored = searcher.search(query, limit=len(ids), count=False)
        return {_key(address): score for score, address in rescored.hits}

    def _empty_hint(self, query: str) -> str:
        flows, screens = self.vocabulary()
        return (
            f"No steps match {query!r} with these filters. Known flowTags: "
            f"{', '.join(flows) or 'none'}; known screens: {', '.join(screens) or 'none'}."
        )

    def vocabulary(self) -> tuple[list[str], list[str]]:
        """FlowTags and screens that exist in the index (for helpful empty results)."""
        searcher = self.reader.searcher()
        flows = [t for t, _ in searcher.terms_with_prefix("flow_tag", "", None, 50)]
        screens = [t for t, _ in searcher.terms_with_prefix("screen_name", "", None, 50)]
        return sorted(flows), sorted(s for s in screens if s != "unknown")

    # -- last ------------------------------------------------------------------------------
    def last(self, request: LastInput) -> StepList:
        """The newest `n` steps of the scope, returned oldest first (like `tail`)."""
        reader = self.reader
        searcher = reader.searcher()
        must = self._filter_clauses(
            request.scope,
            request.filters,
            steps=True,
            include_superseded=request.includeSuperseded,
        )
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in must])
        found = searcher.search(query, limit=request.n, count=True, order_by_field="ts")
        steps = []
        for _, address in found.hits:
            doc = searcher.doc(address)
            payload = orjson.loads(doc["payload"][0])
            steps.append(
                Candidate(
                    doc["step_id"][0], doc["session_id"][0], int(doc["ts"][0]), payload, 0.0, []
                )
            )
        steps.sort(key=lambda c: (c.created, c.step_id))
        return StepList(
            total=hit_count(found), steps=[_summary(c, with_score=False) for c in steps]
        )

    # -- sessions --------------------------------------------------------------------------
    def sessions(self, request: SessionsInput) -> SessionList:
        """Newest sessions first, with metadata and step counts."""
        searcher = self.reader.searcher()
        must = self._filter_clauses("all", request.filters, steps=False)
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in must])
        found = searcher.search(query, limit=request.limit, count=True, order_by_field="created")
        sessions = [self._session_summary(searcher, address) for _, address in found.hits]
        sessions.sort(key=lambda s: (-epoch_ms(s.createdAt), s.sessionId))
        return SessionList(total=hit_count(found), sessions=sessions)

    def _session_summary(self, searcher: tantivy.Searcher, address: Any) -> SessionSummary:
        doc = searcher.doc(address)
        meta = orjson.loads(doc["payload"][0])
        schema = self.reader.schema
        session_steps = [
            (tantivy.Occur.Must, _term(schema, "session_id", meta["sessionId"])),
            (tantivy.Occur.Must, step_filter(schema)),
        ]
        steps = searcher.search(tantivy.Query.boolean_query(session_steps), limit=1, count=True)
        failed = searcher.search(
            tantivy.Query.boolean_query(
                [*session_steps, (tantivy.Occur.Must, _term(schema, "ok", "false"))]
            ),
            limit=1,
            count=True,
        )
        git = meta.get("git")
        return SessionSummary(
            sessionId=meta["sessionId"],
            createdAt=meta.get("createdAt", ""),
            goal=meta.get("goal"),
            flowTags=meta.get("flowTags", []),
            tags=meta.get("tags", []),
            git=git,
            stepCount=hit_count(steps),
            failedStepCount=hit_count(failed),
            hasMetadata=meta.get("hasMetadata", True),
        )

    # -- prior knowledge -------------------------------------------------------------------
    def prior_knowledge(self, context: ScreenContext) -> PriorKnowledge:
        """What worked last time on this screen, from every session but the current one."""
        reader = self.reader
        return prior_knowledge(reader.searcher(), reader.schema, context, self.now())

    # -- summarize -------------------------------------------------------------------------
    def summarize(self, request: SummarizeInput) -> SessionRecipe:
        """The recipe of one session (legacy `sessionId` wins over `scope`)."""
        if request.sessionId:
            session_id = request.sessionId
        elif request.scope == "all":
            raise InvalidInput(
                "scope", "summarize needs one session: use 'current' or {'sessionId': …}"
            )
        else:
            session_id = self._scope_session(request.scope) or ""
        if not (self.root / session_id).is_dir():
            raise NotFound(
                f"no session {session_id!r} under {self.root}; list them with mm_knowledge_sessions"
            )
        return summarize_session(KnowledgeStore(self.root).load_session(session_id))

    def newest_session(self) -> str | None:
        """The most recently created session, which scope "current" means by default in the CLI."""
        searcher = self.reader.searcher()
        query = _term(self.reader.schema, "doc_type", DOC_SESSION)
        found = searcher.search(query, limit=1, order_by_field="created")
        if not found.hits:
            return None
        return str(searcher.doc(found.hits[0][1])["session_id"][0])


def hit_count(result: tantivy.SearchResult) -> int:
    """The exact number of matching documents (searches run with `count=True`)."""
    return int(result.count)  # type: ignore[attr-defined]  # missing from tantivy's stub


def _rerank_factor(
    ok: bool, step_tokens: list[str], error_tokens: list[str], plan: PlannedQuery, age_ms: int
) -> float:
    """Multiplier on BM25: query-word coverage, outcome and session recency.

    A step that worked is preferred ("what worked last time"), unless the query is about this
    very failure: some query word is found in its error and nowhere else in the step.
    """
    other = plan.tokens.intersection(step_tokens)
    error = plan.tokens.intersection(error_tokens)
    matched = other | error
    covered = sum(1 for toks in plan.concept_tokens if toks & matched)
    coverage = covered / len(plan.concept_tokens) if plan.concept_tokens else 0.0
    about_failure = any(toks & error and not toks & other for toks in plan.concept_tokens)
    factor = 1 + COVERAGE_WEIGHT * coverage
    if ok or about_failure:
        factor *= OK_FACTOR
    return factor * _recency_factor(age_ms)


def _recency_factor(age_ms: int) -> float:
    for limit, factor in RECENCY_FACTORS:
        if 0 <= age_ms < limit.total_seconds() * 1000:
            return factor
    return 1.0


def _summary(candidate: Candidate, *, with_score: bool = True) -> StepSummary:
    payload = candidate.payload
    return StepSummary(
        stepId=candidate.step_id,
        sessionId=candidate.session_id,
        timestamp=payload.get("timestamp", ""),
        tool=payload.get("tool", ""),
        screen=payload.get("screen") or "unknown",
        snippet=snippet(payload, candidate.matched_fields),
        ok=bool(payload.get("ok")),
        target=payload.get("target"),
        labels=payload.get("labels") or [],
        matchedFields=candidate.matched_fields or None,
        sessionGoal=payload.get("goal"),
        score=round(candidate.score, 4) if with_score else None,
        **(superseded_fields(payload) if is_superseded(payload) else {}),
    )

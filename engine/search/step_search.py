"""Search: one boosted Tantivy query over every session, then a rerank of the top window.

Retrieval runs one query over step and session fields of every session (no session cut, no
step cap), with the shared filters (`engine.query.filters.search_filters`) as unscored clauses. The
query is embedded meanwhile, on its own thread, when the semantic leg is asked. When the query
had more clauses than the posting budget allows, the retrieved candidates are rescored exactly
on all of them. The top window is then reranked in Python with what BM25 cannot express: how
many of the query's words a step covers, whether it worked, and how recent its session is.
Steps holding a whole identifier the query typed form a first tier, ranked above every other
step (`_tiers`). Order is deterministic: tier, score, then session createdAt (newest first),
then stepId; every page is a slice of that one ordering. Every result says why it matched
(`engine.search.matched_fields`).
"""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta

import tantivy

from analyzers import SynonymTable, names_something
from engine.core import (
    Caution,
    KnownValues,
    SearchCoverage,
    SearchInput,
    SearchPage,
    holds_unsafe_chars,
)
from engine.history import caution_for
from engine.index import (
    DESTRUCTIVE,
    RenamedId,
    RenameMap,
    StepPayload,
    all_of,
    doc_key,
    first_value,
    hit_count,
    one_of,
    read_payload,
    read_rank_record,
    term,
    unscored,
)
from engine.meaning import (
    RERANK_WINDOW,
    EmbeddingTimeout,
    Hit,
    QueryEmbedding,
    Related,
    SemanticLeg,
    answer_mode,
    descending,
    keyword_scores,
    meaning_fields,
    query_embedding,
    settle,
    start_meaning,
    with_meaning,
)
from engine.query import (
    NO_RECALLS,
    NO_WORDS,
    SUPERSEDED_FIELD,
    Clause,
    FilterClauses,
    PlannedQuery,
    QueryWords,
    ReadView,
    SessionSources,
    TypoVocabulary,
    by_meaning,
    confidence,
    counted,
    coverage_hint,
    epoch_ms_of,
    held_anywhere,
    holds_any,
    identifier_mask,
    is_superseded,
    lifted,
    plan_query,
    recalls,
    scored_query,
    search_coverage,
    search_filters,
    source_sessions,
    step_filter,
    step_row,
)
from engine.records import DESTRUCTIVE_STEMS
from engine.search.answer_size import bounded_results
from engine.search.matched_fields import page_evidence
from engine.search.session_search import (
    SESSION_STEP_DEPTH,
    matching_sessions,
    session_order,
    session_rows,
)

MAX_RENAMED = 100
"""Superseded exact matches whose successors join the exact tier (most recent first is not
needed: any hundred of them name the same few successors)."""
COVERAGE_WEIGHT = 1.0
OK_FACTOR = 1.6
OBSERVATION_FACTOR = 1.5
"""A step that observed a screen, found by a query asking what a screen shows
(`PlannedQuery.observing`), counts this much more: the keyword leg's reading of the question
that the semantic leg has in its text weights (`engine.meaning.semantic_leg.text_weights`)."""
CAUTION_FACTOR = 0.5
"""A step whose target looks destructive, found by a query that does not ask for that,
counts half: one recording of a click on `delete-account-confirm` named "Send" must not
be the first answer to "send button"."""
RECENCY_FACTORS = ((timedelta(hours=24), 1.2), (timedelta(hours=72), 1.07))
_RECENCY_MS = tuple((limit.total_seconds() * 1000, factor) for limit, factor in RECENCY_FACTORS)


def search(
    view: ReadView,
    request: SearchInput,
    synonyms: SynonymTable,
    typos: TypoVocabulary,
    semantic: SemanticLeg | str,
    related: Related | None = None,
    sources: SessionSources | None = None,
    embedding: QueryEmbedding | None = None,
    renamed: RenameMap | None = None,
) -> SearchPage:
    """`semantic` is the loaded leg, or why it cannot be used (the answer says so); `related`
    counts each result's near-identical memories (`relatedCount`); `sources`: the sessions'
    `sourceSession`s read for this commit so far (else they are read); `embedding`: the
    query's, when the caller started it already (`join.query_embedding`); `renamed`: the
    generation's renamed testIds (`engine.index.renamed_ids`)."""
    searcher, schema = view.searcher, view.schema
    now_ms = epoch_ms_of(view.now)
    filters = search_filters(view, request)
    if request.minSalience > 0:
        salient = _salient_steps(view, request.minSalience, now_ms)
        filters.append((tantivy.Occur.Must, unscored(salient)))
    sessions_asked = request.types == ["session"]
    if request.types and not sessions_asked:
        types = tantivy.Query.term_set_query(schema, "memory_type", request.types)
        filters.append((tantivy.Occur.Must, unscored(types)))
    end = SESSION_STEP_DEPTH if sessions_asked else request.offset + request.limit
    mode_used, degraded = answer_mode(request, semantic)
    if not names_something(request.query):  # nothing to look for: said, not guessed at
        return _nothing_to_search(view, request, mode_used, degraded)
    # The query is embedded (unless the caller started it) and its semantic candidates looked
    # up on the embedding thread while the keyword leg searches.
    meaning = None
    if isinstance(semantic, SemanticLeg) and mode_used != "keyword":
        asked = embedding or query_embedding(request.query, synonyms)
        meaning = start_meaning(semantic, asked, view, request, filters)
    plan = plan_query(view.term_counts(), request.query, synonyms, typos)  # while the query embeds
    ranked: list[Hit] = []
    total = 0
    renames = _renames_of(plan, renamed or {})
    tiers = _tiers(view, plan, filters, renames)
    covers = Coverage(plan)
    leads: list[list[Hit]] = []
    for tier in tiers:
        # A later tier is read only as far as the page reaches past the earlier ones (the
        # successors' tiers take turns: each is read as far as the page reaches).
        need = end if tier.lead else end - total
        hits, count = _rank_tier(view, tier, covers, need, now_ms)
        if tier.lead:
            leads.append(hits)
        else:
            ranked += _take_turns(leads) + hits
            leads = []
        total += count
    page_held = held_anywhere(view, plan, filters, _seen(ranked, plan))
    phrases: list[str] = []  # the texts nearest the query's meaning, when nothing matches
    if meaning is not None:
        try:
            ranked, total, sims = with_meaning(view, request, ranked, total, meaning, plan, filters)
            phrases = meaning.pending.nearest_phrases(sims, view, filters) if total == 0 else []
        except EmbeddingTimeout as slow:  # the keyword answer stands, saying why
            mode_used, degraded = "keyword", str(slow)
    if mode_used == "keyword":
        keyword_scores(ranked)
    descending(ranked)  # in every mode: relative to the best candidate, down the order
    said = _Said(plan, page_held, covers, _narrowed(request))
    if sessions_asked:
        settle(ranked, 0, len(ranked))  # sessions are ordered by all their steps
        queries = [tier.query for tier in tiers]
        return _session_page(view, request, queries, ranked, (mode_used, degraded), phrases, said)
    settle(ranked, request.offset, end)
    page = ranked[request.offset : end]
    payloads = [read_payload(r.doc) for r in page]
    cautions = [
        caution_for(p.get("target") or {}, request.query, {}, p.get("danger") or ())
        for p in payloads
    ]
    if request.offset == 0 and cautions and cautions[0] is not None:
        order = _uncautioned_first(cautions)
        page = [page[i] for i in order]
        payloads = [payloads[i] for i in order]
        cautions = [cautions[i] for i in order]
    evidence = page_evidence(
        view, [(r.key, r.step_id, p) for r, p in zip(page, payloads, strict=True)], plan
    )
    page_sessions = {r.session_id for r in page}
    sessions = (
        sources.of(searcher, schema, page_sessions)
        if sources is not None
        else source_sessions(searcher, schema, page_sessions)
    )
    page_recalls = recalls(searcher, schema, [r.step_id for r in page], now_ms)
    superseded = [is_superseded(p) for p in payloads]
    related_counts = related.counts(view, [r.doc for r in page], superseded) if related else []
    results = [
        step_row(
            r.step_id,
            r.session_id,
            payload,
            score=r.score,
            matched_fields=_with_renames(fields or meaning_fields(r), r, payload, renames),
            session=sessions[r.session_id],
            recalls=page_recalls.get(r.step_id, NO_RECALLS),
            hit={
                "type": r.doc["memory_type"][0] if r.doc["memory_type"] else "step",
                "similarity": round(r.similarity, 4) if r.similarity is not None else None,
                "matchType": r.match_type,
                "relatedCount": related_counts[i] if related_counts else None,
                "confidence": said.confidence(r),
                "caution": cautions[i],
            },
        )
        for i, (r, payload, fields) in enumerate(zip(page, payloads, evidence, strict=True))
    ]
    results = bounded_results(results)
    following = request.offset + len(results)
    return SearchPage(
        query=request.query,
        total=total,
        offset=request.offset,
        limit=request.limit,
        hasMore=following < total,
        nextOffset=following if following < total else None,
        results=results,
        coverage=said.coverage(),
        hint=said.hint(request.query, total),
        known=known_values(searcher, phrases) if total == 0 else None,
        mode=request.mode,
        modeUsed=mode_used,
        degraded=degraded,
    )


def _session_page(
    view: ReadView,
    request: SearchInput,
    tiers: list[tantivy.Query],
    ranked: list[Hit],
    mode: tuple[str, str | None],
    phrases: list[str],
    said: "_Said",
) -> SearchPage:
    """A page of sessions (`types: ["session"]`), ranked by their best step
    (`engine.search.session_search`); `mode`: the mode used and why not the one asked for;
    `said`: what the page says of its coverage and each session's confidence."""
    mode_used, degraded = mode
    if mode_used == "semantic":
        matching = matching_sessions(view, [], ranked)
    else:  # every keyword match, and the semantic hits that match no keyword
        semantic_only = [hit for hit in ranked if hit.keyword is None]
        matching = matching_sessions(view, tiers, semantic_only)
    order = session_order(ranked, matching)
    end = request.offset + request.limit
    results = session_rows(view, order[request.offset : end], said.confidence)
    return SearchPage(
        query=request.query,
        total=len(order),
        offset=request.offset,
        limit=request.limit,
        hasMore=end < len(order),
        nextOffset=end if end < len(order) else None,
        results=results,
        coverage=said.coverage(),
        hint=said.hint(request.query, len(order)),
        known=known_values(view.searcher, phrases) if not order else None,
        mode=request.mode,
        modeUsed=mode_used,
        degraded=degraded,
    )


@dataclass(frozen=True, slots=True)
class _Tier:
    """One query whose hits rank after those of the tiers before it."""

    query: tantivy.Query
    exact: bool = False
    """Its hits hold a whole identifier the query typed (or what it became)."""
    lead: bool = False
    """Its hits worked with what an identifier the query typed was renamed to."""
    failed: bool = False
    """Its hits failed with an error of a kind the query names (`analyzers.failures_named`)."""
    as_whole: bool = False
    """Its hits are scored by the identifiers typed whole, not by stray parts (`_exact_scoring`)."""


def _tiers(
    view: ReadView, plan: PlannedQuery, filters: FilterClauses, renames: list[RenamedId]
) -> list[_Tier]:
    """The queries whose hits are ranked one after the other: first, when an identifier the
    query typed was renamed, the steps that worked with what it became (`_successors`); then
    the exact matches — steps holding a whole identifier the query typed, in any field and
    any spelling (target, visible testIds, labels…), or acting on what such a target was
    renamed to — then, when the query names a failure (`timed out`, `connection refused`:
    `analyzers.failures_named`), the steps that failed with an error of that kind, or when it
    only says that something failed ("why did the unlock fail": `analyzers.names_a_failure`),
    the steps that failed; then the rest. Each tier leaves out the hits of the tiers before
    it.

    An exact id must beat partial matches of its parts however the fields weigh: a testId that
    was only visible (boost 3) would otherwise lose to a clicked `eth-overview-send` that shares
    two of its three parts. A failure named must beat the successes of the same action: "why
    did the confirm click time out" asks for the clicks that timed out, which the many clicks
    on confirm that worked would otherwise bury (their flow, screen and target match too).
    Within the exact tier, a part of the identifier scores only where the identifier is
    (`_exact_scoring`). A query without a compound identifier or a failure named has one tier.
    """
    schema = view.schema
    scored = scored_query(schema, plan.clauses)
    tiers: list[_Tier] = []
    before: list[tantivy.Query] = []  # the hits of earlier tiers, left out of later ones

    def tier(first: tantivy.Query, by: tantivy.Query = scored, **kind: bool) -> None:
        earlier = [(tantivy.Occur.MustNot, q) for q in before]
        found = [(tantivy.Occur.Must, unscored(first)), (tantivy.Occur.Should, by)]
        tiers.append(_Tier(tantivy.Query.boolean_query([*filters, *found, *earlier]), **kind))
        before.append(first)

    exact = plan.exact_clauses()
    if exact:
        for successor in _successors(view, renames):  # each successor's steps once
            tier(successor, exact=True, lead=True)
        renamed, new_ids = _renamed_to(view, exact)
        holds = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, q) for q in (holds_any(schema, exact), *renamed)]
        )
        # A step acting on what a target identifier became holds it as its target, for its
        # score too (it holds none of the query's words).
        acting = {
            new_id: replace(c, token=new_id)
            for c in exact
            if c.field == "target"
            for new_id in new_ids
        }
        whole = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Should, _exact_scoring(schema, plan, plan.clauses)),
                (tantivy.Occur.Should, scored_query(schema, list(acting.values()))),
            ]
        )
        tier(holds, whole, exact=True, as_whole=True)
    failed = term(schema, "ok", "false")
    if plan.failures:
        kinds = tantivy.Query.term_set_query(schema, "failure", list(plan.failures))
        tier(all_of(failed, kinds), failed=True)
    elif plan.failed:
        tier(failed, failed=True)
    rest = [(tantivy.Occur.Must, scored), *((tantivy.Occur.MustNot, q) for q in before)]
    return [*tiers, _Tier(tantivy.Query.boolean_query([*filters, *rest]))]


def _exact_scoring(
    schema: tantivy.Schema, plan: PlannedQuery, clauses: Sequence[Clause]
) -> tantivy.Query:
    """What scores the exact tier: the query's words and identifiers typed whole as anywhere,
    but a part of an identifier (`overview` of `coin-overview-send`) only in a field that holds
    an identifier typed whole. Every step of that tier holds the identifier; a part it holds
    elsewhere is not what the query asked about: `overview` of a failed click on
    `token-overview-button-swap` must not rank it first among the steps that show
    `coin-overview-send`. In the field holding the identifier its parts weigh as before (the
    identifier is made of them), so that how strongly a step holds it is scored as ever."""
    said = QueryWords.said(plan).words
    wholes: dict[str, list[Clause]] = {}
    for clause in plan.exact_clauses():
        wholes.setdefault(clause.field, []).append(clause)
    scored = [(tantivy.Occur.Should, scored_query(schema, [c for c in clauses if c.token in said]))]
    for c in clauses:
        if c.token not in said and c.field in wholes:
            part = tantivy.Query.term_query(schema, c.field, c.token, index_option="freq")
            where = unscored(holds_any(schema, wholes[c.field]))
            held = all_of(where, tantivy.Query.boost_query(part, c.boost))
            scored.append((tantivy.Occur.Should, held))
    return tantivy.Query.boolean_query(scored)


def _renames_of(plan: PlannedQuery, renamed: RenameMap) -> list[RenamedId]:
    """What the whole identifiers the query typed became, one per screen where each was
    renamed (`engine.index.renamed_ids`)."""
    return list(
        dict.fromkeys(r for token in sorted(plan.whole_tokens) for r in renamed.get(token, ()))
    )


def _successors(view: ReadView, renames: list[RenamedId]) -> list[tantivy.Query]:
    """Per new testId an identifier was renamed to, the steps that work with it now:
    successful actions on it, or, for one nobody acts on (a balance on the home screen),
    successful steps that show it."""
    counts, schema = view.term_counts(), view.schema
    queries = []
    for new_id in sorted({r.new.lower() for r in renames}):
        field = "target" if counts.doc_freqs(new_id, ("target",)) else "visible"
        queries.append(all_of(term(schema, "ok", "true"), term(schema, field, new_id)))
    return queries


def _take_turns(tiers: list[list[Hit]]) -> list[Hit]:
    """The successors' tiers in turns: the best step of each successor (one per screen where
    one old id became several), then the second of each, and so on."""
    for hits in tiers:
        for turn, hit in enumerate(hits):
            hit.lead, hit.turn = True, turn
    order = sorted(
        ((hit.turn, number, hit) for number, hits in enumerate(tiers) for hit in hits),
        key=lambda entry: entry[:2],
    )
    return [hit for _, _, hit in order]


def _with_renames(
    fields: list[str], hit: Hit, payload: StepPayload, renames: list[RenamedId]
) -> list[str]:
    """`matchedFields` saying what an identifier of the query was renamed to: first on a step
    that works with the new id (why a step of another id answers), last on a step of the old
    id (it no longer works that way)."""
    if not renames:
        return fields
    acted = str((payload.get("target") or {}).get("testId") or "").lower()
    screen = payload.get("onScreen") or payload.get("screen")
    if hit.lead:
        mine = [r for r in renames if r.new.lower() == acted] or [
            r for r in renames if r.screen == screen
        ]
        return [f"renamedTo:{r.new} (since {r.since})" for r in mine[:1]] + fields
    old = [r for r in renames if r.old.lower() == acted]
    here = [r for r in old if r.screen == screen] or old
    if here:
        return [*fields, f"renamedTo:{here[0].new} (since {here[0].since})"]
    return fields


def _renamed_to(view: ReadView, exact: tuple[Clause, ...]) -> tuple[list[tantivy.Query], list[str]]:
    """What an exact target identifier became: when steps acting on `eth-overview-send` were
    superseded because it was renamed, the steps that superseded them and every step acting on
    the new testId are what the old name finds now (exact matches too); and the new testIds."""
    targets = [c for c in exact if c.field == "target"]
    if not targets:
        return [], []
    flagged = all_of(
        step_filter(view.schema),
        term(view.schema, SUPERSEDED_FIELD, "true"),
        holds_any(view.schema, targets),
    )
    hits = view.searcher.search(flagged, limit=MAX_RENAMED).hits
    successors = [read_payload(view.doc(a)).get("supersededBy") or {} for _, a in hits]
    step_ids = sorted({by["stepId"] for by in successors if by.get("stepId")})
    new_ids = sorted(
        {
            by["target"].removeprefix("testId:").lower()
            for by in successors
            if by.get("target", "").startswith("testId:")
        }
    )
    queries = [
        tantivy.Query.term_set_query(view.schema, "step_id", step_ids),
        tantivy.Query.term_set_query(view.schema, "target", new_ids),
    ]
    return queries, new_ids


def _rank_tier(
    view: ReadView, tier: _Tier, covers: "Coverage", need: int, now_ms: int
) -> tuple[list[Hit], int]:
    """The tier's hits in final order (at least `need` of them when it has that many) and its
    total. The top window is reranked (coverage, outcome, recency, then salience, which never
    lifts a step above an exact one); past it, hits follow in BM25 order, after the window
    whatever their scores, so every page is a slice of one stable ordering."""
    searcher = view.searcher
    limit = max(RERANK_WINDOW, need) if need > 0 else 1
    found = searcher.search(tier.query, limit=limit, count=True)
    total = hit_count(found)
    if need <= 0:
        return [], total
    head = found.hits[:RERANK_WINDOW]
    addresses = [address for _, address in head]
    keys = [doc_key(address) for address in addresses]
    docs = view.docs_at(addresses)
    ids = [str(first_value(doc, "step_id")) for doc in docs]
    created = [int(when or 0) for when in searcher.fast_field_values("created", addresses)]
    scores = [score for score, _ in head]
    left_out = covers.plan.left_out_clauses()
    if left_out:
        dropped = (
            _exact_scoring(view.schema, covers.plan, left_out)
            if tier.as_whole
            else scored_query(view.schema, left_out)
        )
        added = _dropped_scores(view, ids, dropped)
        scores = [score + added.get(key, 0.0) for score, key in zip(scores, keys, strict=True)]
    reranked, coverages, held = [], [], []
    cautioned = _destructive(view, ids, covers.plan)
    for score, doc, when, key in zip(scores, docs, created, keys, strict=True):
        record = first_value(doc, "rank")  # converted from the stored document at each access
        preferred, coverage = covers.of(record, tier.exact)
        factor = _rerank_factor(preferred, coverage, now_ms - when)
        if covers.plan.observing and first_value(doc, "memory_type") == "screen":
            factor *= OBSERVATION_FACTOR
        reranked.append(score * factor * (CAUTION_FACTOR if key in cautioned else 1.0))
        coverages.append(coverage)
        held.append(covers.held(record, tier.exact))
    window_recalls = recalls(searcher, view.schema, ids, now_ms)
    saliences = [window_recalls.get(step_id, NO_RECALLS).salience for step_id in ids]
    finals = lifted(reranked, [c >= 1.0 for c in coverages], saliences)
    # Ordered by the values at hand (a Hit reads its step id from its document each time).
    order = sorted(range(len(head)), key=lambda i: (-round(finals[i], 9), -created[i], ids[i]))
    ranked = [
        Hit(
            keys[i],
            addresses[i],
            view,
            created[i],
            finals[i],
            score=finals[i],
            exact=tier.exact,
            failed=tier.failed,
            coverage=coverages[i],
            held=held[i],
            read=docs[i],
            read_id=ids[i],
        )
        for i in order
    ]
    # Past the window, BM25 order; a document is read only if it reaches a page.
    past = found.hits[len(head) :]
    past_created = searcher.fast_field_values("created", [address for _, address in past])
    ranked += [
        Hit(
            doc_key(address),
            address,
            view,
            int(when or 0),
            score,
            score=score,
            exact=tier.exact,
            failed=tier.failed,
        )
        for (score, address), when in zip(past, past_created, strict=True)
    ]
    return ranked, total


def _dropped_scores(
    view: ReadView, ids: list[str], dropped: tantivy.Query
) -> dict[tuple[int, int], float]:
    """What the clauses retrieval left out (`dropped`, `plan.budget_clauses`) add to the BM25
    of the retrieved candidates (step `ids`): a step's exact score over every clause is its
    retrieval score plus this (BM25 sums its clauses, each scored with the index's
    statistics), so only the left-out clauses are searched, within the candidates (cheap: an
    intersection with a small set). Scoring every clause again there cost more
    (paired: `scripts/bench_search_ab.py`). A candidate holding none of them adds nothing."""
    if not ids:
        return {}
    query = tantivy.Query.boolean_query(
        [
            (tantivy.Occur.Must, one_of(view.schema, "step_id", ids)),
            (tantivy.Occur.Must, dropped),
        ]
    )
    found = view.searcher.search(query, limit=len(ids), count=False)
    return {doc_key(address): score for score, address in found.hits}


TRY_KNOWN = "Try a flowTag or screen from `known`, one of its recorded phrases, or fewer filters."
KNOWN_VALUES = 50
"""flowTags and screens listed at most (each)."""
MAX_KNOWN_CHARS = 64
"""A recorded flowTag or screen name longer than this is left out of `known`."""
MAX_PHRASE_CHARS = 120


def _empty_hint(query: str, narrowed: bool) -> str:
    """What an empty result says: knowhow's words and the query's; what the index knows
    instead is data (`known_values`), never part of the sentence."""
    where = " within the scope and filters" if narrowed else ""
    return f"No steps match {query!r}{where}. {TRY_KNOWN}"


def known_values(searcher: tantivy.Searcher, phrases: list[str]) -> KnownValues:
    """What an empty answer can try instead: the flowTags and screens the index knows and the
    recorded phrases nearest the query's meaning (spec 004), when it was embedded. Recorded
    values, so they are data: a value with control or bidirectional formatting characters
    (`engine.core.holds_unsafe_chars`), or longer than a flowTag or a
    screen name can sensibly be, is left out, and a phrase is cut (`MAX_PHRASE_CHARS`)."""

    def listed(field: str) -> list[str]:
        terms = (t for t, _ in searcher.terms_with_prefix(field, "", None, KNOWN_VALUES * 2))
        kept = [t for t in terms if t != "unknown" and _plain(t, MAX_KNOWN_CHARS)]
        return sorted(kept)[:KNOWN_VALUES]

    return KnownValues(
        flowTags=listed("flow_tag"),
        screens=listed("screen_name"),
        phrases=[p[:MAX_PHRASE_CHARS] for p in phrases if _plain(p, len(p))],
    )


def _plain(value: str, limit: int) -> bool:
    return 0 < len(value) <= limit and not holds_unsafe_chars(value)


def _nothing_to_search(
    view: ReadView, request: SearchInput, mode_used: str, degraded: str | None
) -> SearchPage:
    """The answer to a query that holds no word to look for (`analyzers.names_something`):
    empty, saying so and what the index knows, never results that match a stopword or noise
    near an empty text's meaning."""
    return SearchPage(
        query=request.query,
        total=0,
        offset=request.offset,
        limit=request.limit,
        hasMore=False,
        results=[],
        coverage=SearchCoverage(covered=[], uncovered=[]),
        hint=f"{NO_WORDS.format(query=request.query)} {TRY_KNOWN}",
        known=known_values(view.searcher, []),
        mode=request.mode,
        modeUsed=mode_used,
        degraded=degraded,
    )


def _salient_steps(view: ReadView, min_salience: float, now_ms: int) -> tantivy.Query:
    """The steps at least `min_salience` salient now (a filter clause)."""
    salient = [
        step_id
        for step_id, found in recalls(view.searcher, view.schema, None, now_ms).items()
        if found.salience >= min_salience
    ]
    if not salient:
        return tantivy.Query.empty_query()
    return tantivy.Query.term_set_query(view.schema, "step_id", salient)


class Coverage:
    """What the rerank reads of a window step's rank record (`documents.rank_record`) for one
    query: whether the step is preferred (it worked, or the query is about its very failure:
    some query word is found in its error and nowhere else in the step), its coverage (the
    share of the query's concepts it covers; 1.0: all of them) and which concepts it holds (a
    bit mask, `engine.query.coverage`). Kept per record: steps of a window often share one.

    A step of the exact tier holds the identifiers typed whole, and so their parts, even where
    its record cannot show it (a testId only visible on its screen is not in the record): its
    coverage counts them (`exact`), so the fusion does not read the keyword leg's best answer
    as explaining only part of the query and let meaning reorder the exact matches."""

    def __init__(self, plan: PlannedQuery) -> None:
        self.plan = plan
        # A record's token lists are non-empty tokens without whitespace, one space apart, so a
        # token is in a list exactly when " token " is in " list ": no split, no token strings.
        # Each needle comes with the concepts its token stands for (a bit mask): a record's
        # concepts are those of the needles found, with no set of tokens made per record.
        concepts = plan.concept_tokens
        self._needles = [
            (f" {token} ", mask)
            for token in plan.tokens
            if token.split() == [token]
            and (mask := sum(1 << i for i, toks in enumerate(concepts) if token in toks))
        ]
        self._count = len(concepts)
        self._exact = identifier_mask(plan)
        self._known: dict[bytes, tuple[bool, int]] = {}

    def of(self, record: bytes, exact: bool = False) -> tuple[bool, float]:
        """Whether the step is preferred, and its coverage (`exact`: it is in the exact tier)."""
        preferred, held = self._of(record)
        held |= self._exact if exact else 0
        return preferred, held.bit_count() / self._count if self._count else 0.0

    def held(self, record: bytes, exact: bool = False) -> int:
        """The concepts the record holds, as a bit mask (bit i: `plan.concept_tokens[i]`)."""
        return self._of(record)[1] | (self._exact if exact else 0)

    def _of(self, record: bytes) -> tuple[bool, int]:
        known = self._known.get(record)
        if known is None:
            known = self._known[record] = self._read(record)
        return known

    def _read(self, record: bytes) -> tuple[bool, int]:
        """Preferred (it worked, or some concept is held by its error alone), and the concepts
        held."""
        ok, step_tokens, error_tokens = read_rank_record(record)
        other = self._held_in(step_tokens)
        # A step without an error has no words in it to look up.
        failure = self._held_in(error_tokens) if error_tokens else 0
        return ok or bool(failure & ~other), other | failure

    def _held_in(self, tokens: str) -> int:
        """The concepts a token list of a record holds, as a bit mask."""
        text = f" {tokens} "
        held = 0
        for needle, concepts in self._needles:
            if needle in text:
                held |= concepts
        return held


def _narrowed(request: SearchInput) -> bool:
    """Whether a search looked within a scope or filters the agent chose (not every current
    step of every session)."""
    return request.scope != "all" or request.filters is not None or request.minSalience > 0


class _Said:
    """What a page says of its query: its coverage and hint, and each result's confidence
    (`engine.query.coverage`). `page_held`: the concepts some step within the search's filters
    holds; `covers`: the rerank's reading of rank records (a result's own concepts). The
    concepts the results shown hold (`shown`) are gathered as each one's confidence is asked
    (every result shown, a step or a session's best step, has one): what the hint says they
    match."""

    def __init__(
        self, plan: PlannedQuery, page_held: int, covers: Coverage, narrowed: bool
    ) -> None:
        self.plan, self.page_held, self.covers = plan, page_held, covers
        self.narrowed = narrowed
        self._judged = counted(plan, page_held)
        self.shown = 0
        self.nearest: float | None = None
        """The highest similarity of a result shown (None: none was found by meaning)."""

    def _meant(self) -> int:
        return by_meaning(self.plan, self.page_held, self.nearest)

    def coverage(self) -> SearchCoverage:
        return search_coverage(self.plan, self.page_held, self._meant())

    def confidence(self, hit: Hit) -> float:
        held = self.covers.held(first_value(hit.doc, "rank"), hit.exact)
        self.shown |= held
        if hit.similarity is not None:
            self.nearest = max(self.nearest or 0.0, hit.similarity)
        return confidence(self._judged, self.page_held, held, hit.similarity)

    def hint(self, query: str, total: int) -> str | None:
        shown = self.shown if total else None
        lacks = coverage_hint(self.plan, self.page_held, shown, self.narrowed, self._meant())
        if total:
            return lacks
        return " ".join(filter(None, [lacks, _empty_hint(query, self.narrowed)]))


def _seen(ranked: list[Hit], plan: PlannedQuery) -> int:
    """The concepts the ranked keyword hits hold (those of the rerank windows; a step of the
    exact tier holds the identifiers typed whole)."""
    held = 0
    exact = identifier_mask(plan)
    for hit in ranked:
        held |= hit.held | (exact if hit.exact else 0)
    return held


def _destructive(view: ReadView, ids: list[str], plan: PlannedQuery) -> set[tuple[int, int]]:
    """The window steps whose action looks destructive (`engine.records.danger`, flagged when
    indexed), unless the query asks for destruction itself: one small search within the
    window's steps."""
    if not ids or not DESTRUCTIVE_STEMS.isdisjoint(plan.tokens):
        return set()
    query = all_of(one_of(view.schema, "step_id", ids), term(view.schema, "danger", DESTRUCTIVE))
    found = view.searcher.search(query, limit=len(ids), count=False)
    return {doc_key(address) for _, address in found.hits}


def _uncautioned_first(cautions: list[Caution | None]) -> list[int]:
    """The order of a first page: a result to look twice at (`caution`) is never the first
    answer while the page holds one that is not; the rest keep their places."""
    first = next((i for i, caution in enumerate(cautions) if caution is None), 0)
    return [first, *(i for i in range(len(cautions)) if i != first)]


def _rerank_factor(preferred: bool, coverage: float, age_ms: int) -> float:
    """Multiplier on BM25: query-word coverage, outcome and session recency (`Coverage`): a
    step that worked is preferred ("what worked last time")."""
    factor = 1 + COVERAGE_WEIGHT * coverage
    if preferred:
        factor *= OK_FACTOR
    return factor * _recency_factor(age_ms)


def _recency_factor(age_ms: int) -> float:
    for limit_ms, factor in _RECENCY_MS:
        if 0 <= age_ms < limit_ms:
            return factor
    return 1.0

"""What an answer covers of its query, said so that an agent can tell a real answer from noise.

A search always ranks something first, and its score is relative to the query's best hit: a
page about nothing the records hold looks like any other. So every page says which concepts of
the query (`PlannedQuery.concepts`: words, expressions, whole identifiers) some step within the
search's scope and filters holds — by its words or their stems, spellings, synonyms, glossary
translations, typo corrections or completions — and which none does; a hint says what is
missing in one sentence (an identifier no step holds first); and each result carries a
`confidence` comparable across queries:

    confidence = max(words, meaning(similarity) * covered share of the query)

`words` is the share of the query's concepts the result holds (a whole identifier it holds
counts for its parts); `meaning` is calibrated on the evaluation corpus
(`scripts/bench_similarity.py`: among each judged query's ten nearest steps, about half are
relevant at any similarity below 0.5, three in four at 0.65 and above), and it vouches for a
result only as far as the records hold what the query is about. Words that only shape the
question (`how`, `my`, `of`) count nowhere.
"""

import itertools

import tantivy

from analyzers import is_verb
from engine.core import SearchCoverage
from engine.query.filters import FilterClauses, ReadView
from engine.query.plan import PlannedQuery, holds_any

MEANING_CALIBRATION = ((0.0, 0.0), (0.25, 0.5), (0.5, 0.5), (0.65, 0.75), (0.85, 0.8))
"""(similarity, confidence) points of a match by meaning, linear in between and flat past the
last: the share of relevant steps among the eval's judged queries' ten nearest steps by
similarity band (docs/benchmarks.md, "Similarity calibration")."""
MEANING_AT_MOST = MEANING_CALIBRATION[-1][1]
MEANING_FLOOR = 0.45
"""The whole query's similarity to the nearest result shown from which a word no step holds
counts as said differently (covered by meaning) rather than never recorded. Measured on the
eval corpus (`docs/benchmarks.md`, "Coverage by meaning"): no query about something nobody
recorded goes past 0.40 with a word of its own (`bridge funds to Solana`, the highest), while
most sentences whose words the records say differently (`vault` for the wallet) reach 0.45. A whole
identifier and its parts are never covered by meaning: an exact name is there or it is not."""
NO_WORDS = (
    "The query {query!r} holds no word to search for (only common words, symbols or "
    "punctuation): name a screen, an element, a flow or what happened."
)
"""The hint of a query `analyzers.names_something` finds nothing to search for in."""


def counted(plan: PlannedQuery, held: int) -> list[int]:
    """The concepts an answer is judged on (indexes into `plan.concepts`): every word but those
    that only shape the question, and no part of an identifier that some step holds whole (the
    identifier speaks for its parts). `held`: the concepts some step holds, as a bit mask."""
    concepts = plan.concepts
    whole = {c.said for i, c in enumerate(concepts) if c.identifier and held >> i & 1}
    return [i for i, c in enumerate(concepts) if not c.asks and c.part_of not in whole]


def held_anywhere(view: ReadView, plan: PlannedQuery, filters: FilterClauses, seen: int) -> int:
    """The concepts some step within `filters` holds, as a bit mask: those the ranked keyword
    hits showed (`seen`), and of the others that the index holds at all, those a step within
    the filters holds (one small search each; most queries have none left to ask)."""
    held = seen
    for i, concept in enumerate(plan.concepts):
        if held >> i & 1 or not concept.indexed or concept.asks:
            continue
        clauses = [c for c in plan.all_clauses if c.token in concept.tokens]
        query = tantivy.Query.boolean_query(
            [*filters, (tantivy.Occur.Must, holds_any(view.schema, clauses))]
        )
        if view.searcher.search(query, limit=1, count=False).hits:
            held |= 1 << i
    return held


def by_meaning(plan: PlannedQuery, held: int, nearest: float | None) -> int:
    """The judged concepts no step holds that the results shown match by meaning, as a bit
    mask: every word no step holds (never an identifier typed whole or a part of one) when the
    whole query's similarity to the nearest result shown (`nearest`; None: no result was found
    by meaning) reaches `MEANING_FLOOR`. One word's own similarity cannot tell a word said
    differently from one nobody recorded (`docs/architecture.md`); the sentence's can. An
    everyday verb (`analyzers.is_verb`) needs no floor, only results found by meaning: the
    records say actions with a few tool verbs, so any other verb is an action said otherwise."""
    if nearest is None:
        return 0
    concepts = plan.concepts
    return sum(
        1 << i
        for i in counted(plan, held)
        if not held >> i & 1
        and not concepts[i].identifier
        and concepts[i].part_of is None
        and (nearest >= MEANING_FLOOR or is_verb(concepts[i].said))
    )


def search_coverage(plan: PlannedQuery, held: int, meant: int = 0) -> SearchCoverage:
    """The page's coverage: the judged concepts as typed, held by some step, matched by
    meaning only (`meant`, from `by_meaning`), or neither."""
    concepts = plan.concepts
    judged = counted(plan, held)
    return SearchCoverage(
        covered=[concepts[i].said for i in judged if held >> i & 1],
        byMeaning=[concepts[i].said for i in judged if meant >> i & 1],
        uncovered=[concepts[i].said for i in judged if not (held | meant) >> i & 1],
    )


def coverage_hint(
    plan: PlannedQuery, held: int, shown: int | None, narrowed: bool = False, meant: int = 0
) -> str | None:
    """One sentence on what the answer lacks: the identifiers no step holds, then the other
    concepts no step mentions, then what the results shown do match (`shown`: the concepts the
    results hold, as a bit mask; None: there are no results), so that a word some other step
    holds is never said to be matched by results that match only by meaning; a concept read
    as a typo correction is said too. None when nothing is missing. `narrowed`: the search had
    a scope or filters, within which `held` was counted, so the sentence says so (a word every
    other session holds is not one no step mentions). `meant`: the words no step holds that
    the results match by meaning (`by_meaning`), said as such, never as matched by words."""
    concepts = plan.concepts
    judged = counted(plan, held)
    missing = [concepts[i] for i in judged if not (held | meant) >> i & 1]
    meaning_only = [concepts[i].said for i in judged if meant >> i & 1]
    found = [concepts[i].said for i in judged if (shown or 0) >> i & 1]
    read = [
        f"Read {_quoted(c.said)} as {_quoted(c.read_as)}."
        for i, c in enumerate(concepts)
        if c.read_as and held >> i & 1 and i in judged
    ]
    said = []
    identifiers = [c.said for c in missing if c.identifier]
    words = [c.said for c in missing if not c.identifier]
    step = "step within the scope and filters" if narrowed else "step"
    if identifiers:
        said.append(f"No {step} holds {_either(identifiers)}")
    if words:
        recorded = step if narrowed else "recorded step"
        said.append(f"{'no' if said else 'No'} {recorded} mentions {_either(words)}")
    meaning = (
        [
            f"No {step} says {_both(meaning_only)}; the results match "
            f"{'it' if len(meaning_only) == 1 else 'them'} by meaning, not by words."
        ]
        if meaning_only
        else []
    )
    if not said:
        return " ".join([*meaning, *read]) or None
    if shown is not None:
        said.append(f"results match {_both(found)} only" if found else "results match by meaning")
    return " ".join(["; ".join(said) + ".", *meaning, *read])


def confidence(
    judged: list[int], page_held: int, result_held: int, similarity: float | None
) -> float:
    """A result's confidence (module docstring): the share of the judged concepts
    (`counted(plan, page_held)`, the same for every result of a page) it holds, or what its
    similarity says times the share some step holds, whichever is more."""
    if not judged:
        return 0.0
    words = sum(1 for i in judged if result_held >> i & 1) / len(judged)
    share = sum(1 for i in judged if page_held >> i & 1) / len(judged)
    return round(max(words, meaning(similarity) * share), 2)


def meaning(similarity: float | None) -> float:
    """What a similarity says about a step, calibrated (`MEANING_CALIBRATION`: linear between
    its points, flat past its ends; asked once per result, so plain Python, not numpy's
    `interp`, whose call costs more than the five points)."""
    if not similarity:
        return 0.0
    lowest, value = MEANING_CALIBRATION[0]
    if similarity <= lowest:
        return value
    for (x0, y0), (x1, y1) in itertools.pairwise(MEANING_CALIBRATION):
        if similarity <= x1:
            return y0 + (y1 - y0) * (similarity - x0) / (x1 - x0)
    return MEANING_CALIBRATION[-1][1]


def identifier_mask(plan: PlannedQuery) -> int:
    """The identifiers typed whole and their parts: what a step of the exact tier holds."""
    concepts = plan.concepts
    wholes = {c.said for c in concepts if c.identifier}
    return sum(1 << i for i, c in enumerate(concepts) if c.identifier or c.part_of in wholes)


def _quoted(text: str) -> str:
    return f"'{text}'"


def _either(items: list[str]) -> str:
    quoted = [_quoted(item) for item in items]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _both(items: list[str]) -> str:
    quoted = [_quoted(item) for item in items]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"

"""The rerank reads a step's rank record without splitting it into tokens
(`engine.search.step_search` looks each query token up as " token " in the record's space-separated
lists): what it finds is what the split record holds, for any tokens a record can hold (pipes and
unicode included) and any query tokens."""

from hypothesis import given
from hypothesis import strategies as st

from analyzers import QueryTerm
from engine.index import rank_record
from engine.query import PlannedQuery
from engine.search import Coverage

WORD = st.text(st.characters(codec="utf-8"), min_size=1, max_size=6)
"""Values as analysers may emit them: record tokens come out of `str.split()`, query tokens
are taken as they are (whitespace in one never matches a record token)."""


def split_definition(
    ok: bool, step: list[str], error: list[str], concepts: tuple[frozenset[str], ...]
) -> tuple[bool, float]:
    """Preferred and coverage as the rerank defines them, on the split token lists."""
    tokens = frozenset().union(*concepts)
    other = tokens.intersection(step)
    failure = tokens.intersection(error)
    matched = other | failure
    covered = sum(1 for toks in concepts if toks & matched)
    coverage = covered / len(concepts) if concepts else 0.0
    about_failure = any(toks & failure and not toks & other for toks in concepts)
    return ok or about_failure, coverage


@given(
    ok=st.booleans(),
    step_values=st.lists(WORD, max_size=8),
    error_values=st.lists(WORD, max_size=4),
    concepts=st.lists(st.frozensets(WORD, min_size=1, max_size=3), max_size=4),
)
def test_the_record_is_read_as_its_split_tokens(
    ok: bool, step_values: list[str], error_values: list[str], concepts: list[frozenset[str]]
) -> None:
    step = " ".join(step_values).split()
    error = " ".join(error_values).split()
    record = rank_record(ok, step, error)
    # What the reader sees once the record's `|` separators are split on.
    _, seen_step, seen_error = record.decode().split("|", 2)
    plan = PlannedQuery(
        terms=tuple(QueryTerm(t, 1.0, t, "exact") for toks in concepts for t in toks),
        clauses=(),
        all_clauses=(),
        tokens=frozenset().union(*concepts),
        concept_tokens=tuple(concepts),
        whole_tokens=frozenset(),
    )
    expected = split_definition(ok, seen_step.split(), seen_error.split(), tuple(concepts))
    assert Coverage(plan).of(record) == expected

"""Tantivy query building blocks shared by every read path (search, listing, prior, timeline).

Each one builds a query from exact values, never from query syntax; `hit_count` reads the exact
total of a search run with `count=True`.
"""

from collections.abc import Sequence
from typing import Any

import tantivy


def term(schema: tantivy.Schema, field: str, value: str) -> tantivy.Query:
    """Documents whose raw `field` holds exactly `value`."""
    return tantivy.Query.term_query(schema, field, value, index_option="basic")


def all_of(*queries: tantivy.Query) -> tantivy.Query:
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in queries])


def unscored(query: tantivy.Query) -> tantivy.Query:
    """A filter: it must match, but adds nothing to the score."""
    return tantivy.Query.const_score_query(query, 0.0)


def one_of(schema: tantivy.Schema, field: str, values: Sequence[str]) -> tantivy.Query:
    """A filter: documents whose raw `field` holds any of a few hundred `values` (a page's or a
    window's step ids). One term lookup per value; Tantivy's term-set query walks the field's
    term dictionary instead, which for a unique field such as step_id costs more
    (`scripts/bench_search_ab.py`)."""
    any_value = [(tantivy.Occur.Should, term(schema, field, value)) for value in values]
    return unscored(tantivy.Query.boolean_query(any_value))


def int_range(
    schema: tantivy.Schema, field: str, lower: int | None, upper: int | None
) -> tantivy.Query:
    """`lower <= field < upper`, either bound optional."""
    return tantivy.Query.range_query(
        schema,
        field,
        tantivy.FieldType.Integer,
        lower_bound=lower if lower is not None else -(2**62),
        upper_bound=upper if upper is not None else 2**62,
        include_upper=False,
    )


def doc_key(address: tantivy.DocAddress) -> tuple[int, int]:
    """A document's identity within one searcher (DocAddress is not hashable)."""
    return (address.segment_ord, address.doc)


def first_value(doc: tantivy.Document, field: str) -> Any:
    """The first stored value of `field` (None: none): `doc[field]` converts all its values
    into a list, and a search reads a field or two of hundreds of documents."""
    return doc.get_first(field)


def hit_count(result: tantivy.SearchResult) -> int:
    """The exact number of matching documents (searches run with `count=True`)."""
    return int(result.count)  # type: ignore[attr-defined]  # missing from tantivy's stub


def count(searcher: tantivy.Searcher, query: tantivy.Query) -> int:
    """How many live documents match `query`."""
    return hit_count(searcher.search(query, limit=1, count=True))


def counts_by(searcher: tantivy.Searcher, query: tantivy.Query, field: str) -> dict[int, int]:
    """How many live documents `query` matches per value of the integer fast `field`
    (columnar: no document is read)."""
    agg = {field: {"terms": {"field": field, "size": 1_000_000_000}}}
    buckets = searcher.aggregate(query, agg)[field]["buckets"]
    return {int(bucket["key"]): int(bucket["doc_count"]) for bucket in buckets}

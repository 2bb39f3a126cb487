"""A search's filters said as exclusions keep exactly the documents the MUST form keeps."""

import pytest
import tantivy

from engine.core import SearchInput
from engine.index import all_of
from engine.query import ReadView, search_filters, step_clauses
from tests.conftest import Knowledge
from tests.engine.test_superseded_paths import renamed


def matched(view: ReadView, query: tantivy.Query) -> set[str]:
    """The step ids of the documents a query matches."""
    hits = view.searcher.search(query, limit=1000, count=False).hits
    return {str(view.searcher.doc(address)["step_id"][0]) for _, address in hits}


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"includeSuperseded": True},
        {"scope": {"sessionId": "mm-old"}},
        {"scope": {"sessionId": "mm-old"}, "includeSuperseded": True},
        {"filters": {"flowTag": "send", "ok": True}},
    ],
)
def test_search_filters_keep_the_documents_step_clauses_keep(
    kb: Knowledge, options: dict[str, object]
) -> None:
    old, _ = renamed(kb)  # session documents, current and superseded steps
    kb.session("mm-other", flow_tags=["swap"])
    kb.step("mm-other", test_id="swap-button", screen="swap", ok=False)
    kb.index()
    reader = kb.engine().reader
    view = ReadView(reader.searcher(), reader.schema, kb.now)
    request = SearchInput(query="x", **options)  # type: ignore[arg-type]
    expected = matched(view, all_of(*step_clauses(view, request)))
    every = (tantivy.Occur.Must, tantivy.Query.all_query())
    kept = matched(view, tantivy.Query.boolean_query([*search_filters(view, request), every]))
    assert kept == expected and expected
    assert (old in kept) == request.includeSuperseded

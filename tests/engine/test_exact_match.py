"""An exact identifier ranks first, in any field and any spelling, and every result says why.

A whole identifier the query typed beats every partial match of its parts, however the fields
weigh: a testId that was only visible on screen outranks a click on an element sharing two of
its three parts. When the identifier was renamed, what it was renamed to
counts as exact too.
"""

from hypothesis import given
from hypothesis import strategies as st

from engine import KnowledgeEngine, SearchInput
from tests.conftest import Knowledge
from tests.engine.test_supersede import after_rename, before_rename


def test_a_testid_seen_only_on_screen_beats_partial_matches_of_its_parts(kb: Knowledge) -> None:
    kb.session("mm-partial", flow_tags=["send"], goal="Send ETH")
    partial = kb.step("mm-partial", test_id="eth-overview-send", screen="home")
    swap = kb.step("mm-partial", test_id="coin-overview-swap", screen="home")
    kb.session("mm-seen", goal="Look around")
    seen = kb.step("mm-seen", "mm_describe_screen", screen="home", test_ids=["coin-overview-send"])
    page = kb.search("coin-overview-send")
    ids = [r.stepId for r in page.results]
    assert ids[0] == seen
    assert {partial, swap} <= set(ids[1:])
    assert page.results[0].matchedFields == ["visible:coin-overview-send"]


def test_an_identifier_in_another_spelling_is_an_exact_match(kb: Knowledge) -> None:
    kb.session("mm-spell", flow_tags=["send"])
    kebab = kb.step("mm-spell", "mm_type", test_id="send-amount-input", screen="send")
    parts = kb.step("mm-spell", "mm_type", test_id="send-amount-field", screen="send")
    page = kb.search("send_amount_input")
    assert [r.stepId for r in page.results][:2] == [kebab, parts]
    assert page.results[0].matchedFields[0] == "testId:send-amount-input"


def test_a_renamed_identifier_finds_what_it_was_renamed_to(kb: Knowledge) -> None:
    old = before_rename(kb)  # clicked coin-overview-send, later renamed wallet-send-button
    new = after_rename(kb)
    kb.session("mm-other", goal="Swap")
    other = kb.step("mm-other", test_id="coin-overview-swap", screen="home")
    page = kb.search("coin-overview-send")
    ids = [r.stepId for r in page.results]
    assert old not in ids  # superseded steps stay hidden
    assert ids.index(new) < ids.index(other)


def test_without_an_identifier_there_is_one_tier(kb: Knowledge) -> None:
    kb.session("mm-words", flow_tags=["send"])
    kb.step("mm-words", test_id="eth-overview-send", screen="home")
    kb.step("mm-words", "mm_describe_screen", screen="home", test_ids=["coin-overview-send"])
    page = kb.search("send")
    assert page.total == 2
    assert all(r.matchedFields for r in page.results)


def test_on_the_sample_the_exact_testid_ranks_first(sample: KnowledgeEngine) -> None:
    page = sample.search(SearchInput(query="coin-overview-send", limit=5))
    for result in page.results:
        assert "visible:coin-overview-send" in (result.matchedFields or [])
    assert not any("eth-overview-send" in (r.target or {}).get("testId", "") for r in page.results)


WORDS = ["send", "coin-overview-send", "confirm", "swap", "sned eth", "unlock", "home", "Next"]


@given(query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join))
def test_every_result_says_why_it_matched(sample: KnowledgeEngine, query: str) -> None:
    page = sample.search(SearchInput(query=query, limit=100))
    assert all(r.matchedFields for r in page.results)


def test_a_tool_named_as_recorded_ranks_the_steps_that_worked_first(kb: Knowledge) -> None:
    """Tools are indexed without their prefix (`click`): `mm_click` typed whole would only
    complete to the error code `mm_click_failed` and put that tool's failures first."""
    kb.session("mm-tool", flow_tags=["send"])
    worked = kb.step("mm-tool", test_id="confirm-footer-button", screen="confirm-transaction")
    error = ("MM_CLICK_FAILED", "Operation failed: locator.click: Element is not enabled")
    failed = kb.step(
        "mm-tool", test_id="confirm-footer-button", screen="home", ok=False, error=error
    )
    ids = [r.stepId for r in kb.search("mm_click confirm", mode="keyword").results]
    assert ids.index(worked) < ids.index(failed)

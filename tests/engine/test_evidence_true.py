"""`matchedFields` is true: a field is named as evidence only when it holds what the query said —
a word, or an identifier typed whole (that identifier, or every one of its parts). A field that
holds no more than some parts of such an identifier is named only as a part, and only for a
result that has nothing better to show.
"""

import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import KnowledgeEngine, SearchInput
from engine.index import value_tokens
from tests.conftest import Knowledge

PARTS = ["coin", "overview", "send", "swap", "token"]
IDENTIFIERS = ["-".join(ids) for ids in itertools.permutations(PARTS, 3)]
"""Every testId of three different parts: most share a part or two with any other."""
_PART_LABEL = re.compile(r"^(?P<label>.+) \(part: (?P<parts>[^)]+)\)$")


@pytest.fixture(scope="module")
def identifiers(module_kb: Knowledge) -> Knowledge:
    """A click on each identifier (every fourth one failed and names it in its error), and a
    screen that shows every tenth one."""
    kb = module_kb
    kb.session("mm-ids", goal="Look around")
    for number, test_id in enumerate(IDENTIFIERS):
        error = ("MM_WAIT_TIMEOUT", f"waiting for [data-testid={test_id}]")
        failed = number % 4 == 0
        kb.step("mm-ids", test_id=test_id, ok=not failed, error=error if failed else None)
    kb.step("mm-ids", "mm_describe_screen", test_ids=IDENTIFIERS[::10])
    kb.index()
    return kb


def value_of(field: str) -> str:
    """The value a `matchedFields` entry names (`testId:coin-send-swap` -> coin-send-swap)."""
    return field.split(":", 1)[1]


@given(query=st.sampled_from(IDENTIFIERS))
def test_a_field_named_as_evidence_holds_the_identifier_or_all_its_parts(
    identifiers: Knowledge, query: str
) -> None:
    parts = set(query.split("-"))
    page = identifiers.search(query, mode="keyword", limit=100)
    assert page.results
    for result in page.results:
        assert result.matchedFields, result.stepId
        for field in result.matchedFields:
            part = _PART_LABEL.match(field)
            label = part["label"] if part else field
            if label.startswith("error:"):  # its message names the step's own target
                label = f"testId:{(result.target or {}).get('testId')}"
            assert label.startswith(("testId:", "visible:")), field
            held = set(value_tokens(value_of(label)))
            if part:
                assert set(part["parts"].split(", ")) <= held & parts, field
                assert not parts <= held, field
            else:
                assert parts <= held, field


def test_a_part_is_named_only_for_a_result_without_better_evidence(
    identifiers: Knowledge,
) -> None:
    page = identifiers.search("coin-overview-send", mode="keyword", limit=100)
    for result in page.results:
        labelled = [f for f in result.matchedFields or [] if "(part: " in f]
        assert not labelled or len(labelled) == len(result.matchedFields or []), result


def test_on_the_sample_a_failed_click_on_another_testid_is_not_the_answer(
    sample: KnowledgeEngine,
) -> None:
    """`coin-overview-send` is never clicked in the sample, only shown: a failed click on
    `token-overview-button-swap` shares `overview` with it, and neither ranks first nor lists
    that testId or its error as evidence."""
    for mode in ("keyword", "hybrid"):
        page = sample.search(SearchInput(query="coin-overview-send", mode=mode, limit=20))
        assert page.results[0].ok, mode
        for result in page.results:
            assert result.matchedFields == ["visible:coin-overview-send"], (mode, result)

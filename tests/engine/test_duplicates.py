"""Duplicates, clusters and `relatedCount` with the real model on a small real index (spec 004).

The fixture records what agents repeat: the same confirm click three times (one of them later
superseded), a send click seen on two screens, two import-token clicks that differ only by
their number, screens observed again and again, and sessions of two kinds of goal.
"""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from engine.core import (
    ClusterInput,
    DuplicateGroup,
    DuplicateList,
    DuplicatesInput,
    InvalidInput,
    SupersedeInput,
    validate,
)
from engine.embedding import TEXTS_FILE, TextGroups, identifiers
from engine.index import IndexLayout, supersede_step
from tests.conftest import Knowledge

UNLOCK_A11Y = [("e1", "heading", "Welcome back!"), ("e2", "textbox", "Password")]
CONFIRM = "confirm-footer-button"
SUPERSEDED = "mm-confirm/0002-mm_click"


@pytest.fixture(scope="module")
def kb(module_kb: Knowledge) -> Knowledge:
    kb = module_kb
    for n, hours in ((1, 3), (2, 4)):
        session = kb.session(f"mm-unlock-{n}", hours_ago=hours, goal="Unlock the wallet")
        kb.step(session, "mm_describe_screen", screen="unlock", a11y=UNLOCK_A11Y)
        kb.step(session, "mm_type", test_id="unlock-password", text="pw", screen="unlock")
    for n, hours in ((1, 5), (2, 6)):
        session = kb.session(f"mm-swap-{n}", hours_ago=hours, goal="Swap ETH for DAI tokens")
        kb.step(session, test_id="swap-button", screen="swap")
    send = kb.session("mm-send", hours_ago=7, goal="Send ETH to a friend", flow_tags=["send"])
    kb.step(send, test_id="coin-overview-send", screen="home")
    kb.step(send, test_id="coin-overview-send", screen="send")  # same target, another screen
    confirm = kb.session("mm-confirm", hours_ago=8, goal="Confirm", flow_tags=["send"])
    for _ in range(3):  # the very same text three times
        kb.step(confirm, test_id=CONFIRM, screen="confirm-transaction")
    tokens = kb.session("mm-tokens", hours_ago=9, goal="Import tokens")
    kb.step(tokens, test_id="import-token-1", screen="tokens")
    kb.step(tokens, test_id="import-token-2", screen="tokens")  # only the number differs
    # One of the three confirms no longer works: hidden unless includeSuperseded.
    supersede_step(kb.store, SupersedeInput(stepId=SUPERSEDED, reason="the button moved"))
    kb.index()
    return kb


def duplicates(kb: Knowledge, **fields: object) -> DuplicateList:
    return kb.engine().find_duplicates(validate(DuplicatesInput, fields))


def group_with(found: DuplicateList, step_id: str) -> DuplicateGroup | None:
    """The group listing `step_id` among its examples."""
    return next((g for g in found.groups if step_id in g.examples), None)


def test_identical_texts_are_one_group_with_count_and_examples(kb: Knowledge) -> None:
    found = duplicates(kb, types=["step"])
    confirm = [g for g in found.groups if g.text and "confirm footer button" in g.text]
    assert len(confirm) == 1
    group = confirm[0]
    assert group.type == "step" and group.count == 2 and group.distinctTexts == 1
    assert group.minSimilarity == 1.0
    assert sorted(group.examples) == ["mm-confirm/0001-mm_click", "mm-confirm/0003-mm_click"]
    assert found.similarityThreshold == 0.95 and found.types == ["step"]
    assert found.total == len(found.groups) and not found.hasMore


def test_superseded_steps_are_left_out_unless_asked_for(kb: Knowledge) -> None:
    default = duplicates(kb, types=["step"])
    shown = duplicates(kb, types=["step"], includeSuperseded=True)
    assert group_with(default, SUPERSEDED) is None
    group = group_with(shown, SUPERSEDED)
    assert group is not None and group.count == 3
    assert shown.memories == default.memories + 1


def test_different_identifiers_never_merge_even_at_threshold_zero(kb: Knowledge) -> None:
    """At threshold 0 every text with the same identifiers is one group; token-1 and token-2
    (and different testIds) stay apart however alike they embed."""
    found = duplicates(kb, types=["step"], similarityThreshold=0.0)
    send = group_with(found, "mm-send/0001-mm_click")
    assert send is not None and send.count == 2 and send.distinctTexts == 2
    assert send.variants and send.minSimilarity < 1.0
    assert group_with(found, "mm-tokens/0001-mm_click") is None  # import-token-1: alone
    assert group_with(found, "mm-tokens/0002-mm_click") is None  # import-token-2: alone
    for group in found.groups:
        texts = [group.text or "", *group.variants]
        assert len({identifiers(t) for t in texts}) == 1, texts


def test_threshold_one_groups_only_identical_texts(kb: Knowledge) -> None:
    found = duplicates(kb, similarityThreshold=1.0, limit=100)
    assert all(g.distinctTexts == 1 for g in found.groups)
    assert group_with(found, "mm-send/0001-mm_click") is None


def test_screens_and_sessions_have_duplicates_too(kb: Knowledge) -> None:
    found = duplicates(kb, types=["screen", "session"])
    kinds = {(g.type, g.count) for g in found.groups}
    assert ("screen", 2) in kinds  # the unlock screen, described in two sessions
    sessions = {tuple(sorted(g.examples)) for g in found.groups if g.type == "session"}
    assert ("mm-unlock-1", "mm-unlock-2") in sessions
    assert ("mm-swap-1", "mm-swap-2") in sessions


def test_filters_apply_to_duplicates(kb: Knowledge) -> None:
    found = duplicates(kb, filters={"tag": "none"}, types=["step"])
    assert found.groups == [] and found.memories == 0
    found = duplicates(kb, filters={"flowTag": "send"}, types=["step"], similarityThreshold=0.0)
    sessions = {e.split("/")[0] for g in found.groups for e in g.examples}
    assert sessions == {"mm-send", "mm-confirm"}


def test_related_count_on_every_search_result(kb: Knowledge) -> None:
    page = kb.search("confirm footer button", mode="keyword")
    confirms = [r for r in page.results if r.target and r.target.get("testId") == CONFIRM]
    assert [r.relatedCount for r in confirms] == [1, 1]  # the other current one
    assert all(r.relatedCount is not None for r in page.results)
    shown = kb.search("confirm footer button", mode="keyword", includeSuperseded=True)
    flagged = [r for r in shown.results if r.isSuperseded]
    assert [r.relatedCount for r in flagged] == [2]  # both current ones share its group
    token = kb.search("import-token-1", mode="keyword").results[0]
    assert token.target == {"testId": "import-token-1"} and token.relatedCount == 0


def test_clusters_are_deterministic_and_described(kb: Knowledge) -> None:
    request = validate(ClusterInput, {"type": "step", "nClusters": 3})
    first = kb.engine().cluster(request)
    assert kb.engine().cluster(request) == first  # a fresh engine: the same clusters
    assert len(first.clusters) == 3 and first.memories == sum(c.size for c in first.clusters)
    for found in first.clusters:
        assert found.size >= 1 and found.topTerms and found.text and found.examples
    assert [c.size for c in first.clusters] == sorted(
        (c.size for c in first.clusters), reverse=True
    )


def test_sessions_cluster_by_goal(kb: Knowledge) -> None:
    found = kb.engine().cluster(validate(ClusterInput, {"type": "session", "nClusters": 5}))
    by_text = {c.text: c for c in found.clusters}
    assert by_text["Unlock the wallet"].size == 2
    assert "unlock" in by_text["Unlock the wallet"].topTerms
    assert sorted(by_text["Swap ETH for DAI tokens"].examples) == ["mm-swap-1", "mm-swap-2"]


def test_fewer_distinct_texts_than_clusters_says_so(kb: Knowledge) -> None:
    found = kb.engine().cluster(validate(ClusterInput, {"type": "screen", "nClusters": 50}))
    assert 1 <= len(found.clusters) < 50 and found.hint and "distinct texts" in found.hint


def test_superseded_steps_are_left_out_of_clusters_unless_asked_for(kb: Knowledge) -> None:
    default = kb.engine().cluster(validate(ClusterInput, {"nClusters": 2}))
    shown = kb.engine().cluster(validate(ClusterInput, {"nClusters": 2, "includeSuperseded": True}))
    assert shown.memories == default.memories + 1


@pytest.mark.parametrize(
    ("model", "args", "field"),
    [
        (DuplicatesInput, {"similarityThreshold": 1.5}, "similarityThreshold"),
        (DuplicatesInput, {"similarityThreshold": -0.1}, "similarityThreshold"),
        (DuplicatesInput, {"similarityThreshold": "0.9"}, "similarityThreshold"),
        (DuplicatesInput, {"types": ["steps"]}, "types.0"),
        (DuplicatesInput, {"types": "step"}, "types"),
        (DuplicatesInput, {"types": []}, "types"),
        (DuplicatesInput, {"limit": 0}, "limit"),
        (ClusterInput, {"nClusters": 1}, "nClusters"),
        (ClusterInput, {"nClusters": 51}, "nClusters"),
        (ClusterInput, {"nClusters": 2.5}, "nClusters"),
        (ClusterInput, {"type": "action"}, "type"),
        (ClusterInput, {"type": ["step"]}, "type"),
    ],
)
def test_bad_input_names_the_field(model: type, args: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        validate(model, args)
    assert caught.value.message.startswith(f"{field}:")


def test_a_store_without_texts_groups_identical_texts_only(tmp_path: Path) -> None:
    """A generation written before texts were kept: nothing merges by similarity."""
    kb = Knowledge(tmp_path)
    kb.session("mm-a", goal="Send")
    kb.step("mm-a", test_id="coin-overview-send", screen="home")
    kb.step("mm-a", test_id="coin-overview-send", screen="home")  # the same text
    kb.step("mm-a", test_id="coin-overview-send", screen="send")  # alike, never merged here
    kb.index()
    generation = IndexLayout(kb.index_dir).current()
    assert generation is not None
    (generation / TEXTS_FILE).unlink()
    found = duplicates(kb, types=["step"], similarityThreshold=0.0)
    assert [(g.count, g.distinctTexts, g.text) for g in found.groups] == [(2, 1, None)]
    assert [r.relatedCount for r in kb.search("coin overview send", mode="keyword").results]


def test_identifiers_are_numbers_and_parenthesized_names() -> None:
    assert identifiers("click (sr 52) on the home screen") != identifiers("click (sr 53) on it")
    assert identifiers('click "Token 1"') != identifiers('click "Token 2"')
    assert identifiers('click button "Send" (coin overview send) on the home screen') == (
        identifiers('click "Send" (coin overview send) leading to the send screen')
    )


unit_vectors = st.lists(
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=4, max_size=4).filter(
        lambda v: sum(x * x for x in v) > 0.01
    ),
    min_size=1,
    max_size=40,
)


class _Store:
    """The part of a `VectorReader` that grouping reads."""

    def __init__(self, rows: list[list[float]]) -> None:
        matrix = np.array(rows, np.float32)
        self.matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
        self.keys = [f"k{i}" for i in range(len(rows))]
        self.rows = {k: i for i, k in enumerate(self.keys)}


@given(unit_vectors, st.floats(0, 1), st.integers(0, 40))
def test_grouping_holds_members_within_the_threshold_of_their_leader(
    rows: list[list[float]], threshold: float, cut: int
) -> None:
    store = _Store(rows)
    # float32 products of one pair differ in their last bits between matrix shapes (a block
    # against its leaders, or against itself): a similarity that close to the threshold may be
    # on either side of it depending on when its row was grouped.
    assume(bool(np.all(np.abs(store.matrix @ store.matrix.T - threshold) > 1e-5)))
    texts = {k: f"text ({i % 3})" for i, k in enumerate(store.keys)}
    whole = TextGroups(threshold)
    whole.extend(store, texts)  # type: ignore[arg-type]
    leaders = whole.leaders()
    for row, leader in enumerate(leaders):
        assert leader <= row and leaders[leader] == leader
        assert float(store.matrix[row] @ store.matrix[leader]) >= threshold - 1e-6
        assert identifiers(texts[store.keys[row]]) == identifiers(texts[store.keys[leader]])
    # Grouping a store as it grows, asked about in between, gives the same groups as at once.
    grown = TextGroups(threshold)
    grown.extend(_Store(rows[:cut] or rows[:1]), texts)  # type: ignore[arg-type]
    grown.group_of("k0")
    grown.extend(store, texts)  # type: ignore[arg-type]
    assert grown.leaders() == leaders


def test_screen_results_count_the_same_screen_seen_elsewhere(kb: Knowledge) -> None:
    page = kb.search("unlock", mode="keyword", types=["screen"])
    assert page.results and all(r.relatedCount == 1 for r in page.results)

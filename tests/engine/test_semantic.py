"""Semantic and hybrid search with the real model on a small real index (spec 004).

The fixture records what agents do on a few MetaMask screens; the queries are written in other
words than the records, as people ask.
"""

import threading
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime
import pytest
import tantivy
from hypothesis import given
from hypothesis import strategies as st

from analyzers import SynonymTable
from engine import KnowledgeEngine
from engine.core import InvalidInput, SearchInput, validate
from engine.embedding import (
    DIMENSION,
    KEYS_FILE,
    META_FILE,
    MODEL_ID,
    MODEL_PATH_ENV,
    ROWS_FILE,
    TEXTS_FILE,
    Embedder,
    Vectors,
    embedder,
    text_key,
)
from engine.index import IndexLayout, is_observation_text, rebuild
from engine.meaning import (
    CHECKED_BY,
    EMBED_TIMEOUT_ENV,
    OBSERVATION_WEIGHT,
    SCREEN_WEIGHT,
    QueryEmbedding,
    SemanticLeg,
    configured_embed_timeout,
    embed_soon,
    query_embedding,
    top_rows,
)
from tests.conftest import Knowledge
from tests.engine.test_live import wait_for

UNLOCK_A11Y = [("e1", "heading", "Welcome back!"), ("e2", "textbox", "Password")]


@pytest.fixture(scope="module")
def kb(module_kb: Knowledge) -> Knowledge:
    kb = module_kb
    kb.session("mm-unlock", hours_ago=3, goal="Unlock the wallet", flow_tags=["unlock"])
    kb.step("mm-unlock", "mm_describe_screen", screen="unlock", a11y=UNLOCK_A11Y)
    kb.step(
        "mm-unlock",
        "mm_type",
        test_id="unlock-password",
        text="pw",
        screen="unlock",
        a11y=UNLOCK_A11Y,
    )
    kb.step("mm-unlock", test_id="unlock-submit", screen="home")
    kb.session("mm-send", hours_ago=5, goal="Send ETH to a friend", flow_tags=["send"])
    for _ in range(3):  # agents repeat themselves: the same texts, embedded once
        kb.step("mm-send", test_id="coin-overview-send", screen="send")
    kb.step("mm-send", "mm_type", test_id="recipient-address", text="0xabc", screen="send")
    kb.step("mm-send", test_id="confirm-footer-button", screen="home")
    kb.session("mm-settings", hours_ago=7, goal="Change the display language")
    kb.step("mm-settings", test_id="locale-select", screen="settings")
    kb.index()
    return kb


def search(kb: Knowledge, query: str, **fields: object):  # type: ignore[no-untyped-def]
    return kb.engine().search(validate(SearchInput, {"query": query, **fields}))


def test_words_people_use_find_the_login_screen_first(kb: Knowledge) -> None:
    page = search(kb, "user login interface", mode="semantic")
    assert page.modeUsed == "semantic" and page.results
    assert page.results[0].sessionId == "mm-unlock"
    unrelated = [r.similarity for r in page.results if r.sessionId == "mm-settings"]
    assert all(s < page.results[0].similarity for s in unrelated)  # type: ignore[operator]


def test_hybrid_finds_a_paraphrase_keywords_miss_and_says_how_it_matched(kb: Knowledge) -> None:
    keyword = search(kb, "open the vault with my secret", mode="keyword")
    hybrid = search(kb, "open the vault with my secret")
    assert keyword.total == 0
    assert hybrid.mode == hybrid.modeUsed == "hybrid" and hybrid.degraded is None
    assert hybrid.results[0].stepId == "mm-unlock/0002-mm_type"
    assert hybrid.results[0].matchType == "semantic"
    for row in hybrid.results:
        assert row.matchType in ("keyword", "semantic", "both")
        assert row.similarity is not None and 0 <= row.similarity <= 1
        assert row.type in ("step", "screen") and row.score is not None


def test_the_glossary_lets_keywords_read_everyday_words(kb: Knowledge) -> None:
    """`passcode` is no word of the records; the glossary reads it as `password`."""
    page = search(kb, "my passcode", mode="keyword")
    assert page.results[0].stepId == "mm-unlock/0002-mm_type"
    assert "testId:unlock-password" in page.results[0].matchedFields


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_unlock_with_a_passcode_finds_the_unlock_screen_first(kb: Knowledge, mode: str) -> None:
    page = search(kb, "get in with my passcode", mode=mode)
    sessions = [r.sessionId for r in page.results]
    assert sessions[0] == "mm-unlock"
    unlock = [i for i, s in enumerate(sessions) if s == "mm-unlock"]
    assert unlock == list(range(len(unlock)))  # every unlock step above every other


def test_min_similarity_drops_only_semantic_hits(kb: Knowledge) -> None:
    loose = search(kb, "password")
    strict = search(kb, "password", minSimilarity=1.0)
    keyword = search(kb, "password", mode="keyword")
    keyword_ids = {r.stepId for r in keyword.results}
    assert {r.stepId for r in strict.results} == keyword_ids
    assert strict.total == keyword.total
    assert any(r.matchType == "semantic" for r in loose.results)
    assert loose.total > keyword.total


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "keyword"])
def test_an_exact_test_id_comes_first_in_every_mode(kb: Knowledge, mode: str) -> None:
    page = search(kb, "confirm-footer-button", mode=mode)
    assert page.results[0].target["testId"] == "confirm-footer-button"  # type: ignore[index]


@pytest.mark.parametrize("offset", [1000, 10_000])
def test_offset_past_the_end_keeps_the_total(kb: Knowledge, offset: int) -> None:
    first = search(kb, "pay someone")
    past = search(kb, "pay someone", offset=offset)
    assert past.results == [] and past.total == first.total and not past.hasMore


def test_pages_are_slices_of_one_order(kb: Knowledge) -> None:
    whole = [r.stepId for r in search(kb, "send money", limit=100).results]
    paged = [
        r.stepId
        for offset in range(0, len(whole), 2)
        for r in search(kb, "send money", limit=2, offset=offset).results
    ]
    assert paged == whole and len(set(whole)) == len(whole)


def test_types_and_filters_hold_in_the_semantic_leg(kb: Knowledge) -> None:
    screens = search(kb, "welcome back password", mode="semantic", types=["screen"])
    assert screens.results and {r.type for r in screens.results} == {"screen"}
    on_send = search(kb, "user login interface", filters={"screen": "send"})
    assert on_send.results and {r.sessionId for r in on_send.results} == {"mm-send"}
    one = search(kb, "user login interface", scope={"sessionId": "mm-settings"})
    assert {r.sessionId for r in one.results} <= {"mm-settings"}


def test_a_query_of_punctuation_is_answered_by_keywords(kb: Knowledge) -> None:
    page = search(kb, "?!", mode="semantic")
    assert page.modeUsed == "keyword" and page.degraded is None


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"mode": "fuzzy"}, "mode"),
        ({"minSimilarity": 1.5}, "minSimilarity"),
        ({"minSimilarity": "high"}, "minSimilarity"),
        ({"types": ["workflow"]}, "types"),
        ({"types": []}, "types"),
    ],
)
def test_bad_semantic_options_name_the_field(fields: dict[str, object], name: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        validate(SearchInput, {"query": "send", **fields})
    assert raised.value.field.startswith(name)


def test_each_distinct_text_is_embedded_once_under_its_model(kb: Knowledge) -> None:
    generation = IndexLayout(kb.index_dir).current()
    assert generation is not None
    keys = (generation / KEYS_FILE).read_text().split()
    assert len(keys) == len(set(keys))
    assert (generation / ROWS_FILE).stat().st_size == len(keys) * DIMENSION * 4
    assert f'"{MODEL_ID}"' in (generation / META_FILE).read_text()
    step_text = "click (coin overview send) on the send screen"
    assert text_key(MODEL_ID, step_text) in keys


def test_an_unloadable_model_falls_back_to_keywords_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "model.onnx"
    broken.write_bytes(b"not a model")
    monkeypatch.setenv(MODEL_PATH_ENV, str(broken))
    kb = Knowledge(tmp_path / "kb")
    kb.session("mm-fallback", goal="Send ETH")
    kb.step("mm-fallback", test_id="coin-overview-send", screen="home")
    page = search(kb, "send")  # indexing could not embed either: keyword search still works
    assert page.modeUsed == "keyword" and page.mode == "hybrid"
    assert page.degraded and "sha256" in page.degraded
    assert [r.stepId for r in page.results] == ["mm-fallback/0001-mm_click"]
    assert page.results[0].similarity is None and page.results[0].matchType == "keyword"
    assert "keyword mode" in caplog.text and "sha256" in caplog.text
    status = kb.engine().semantic_status()
    assert status["modeUsed"] == "keyword" and "sha256" in str(status["degraded"])
    assert status["integerProducts"] is None  # no model runs


def test_status_says_how_this_cpu_multiplies(kb: Knowledge) -> None:
    """Where uint8 x int8 products are exact (`embedder._signed_products_exact`) the model runs
    them, else uint8 x uint8; the status says which (the speeds differ, the vectors do not)."""
    expected = "uint8 x int8" if embedder._signed_products_exact(onnxruntime) else "uint8 x uint8"
    status = kb.engine().semantic_status()
    assert status["modeUsed"] == "hybrid" and status["integerProducts"] == expected


def test_a_slow_model_answers_by_keywords_loudly(
    kb: Knowledge, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The model stays stuck until the test lets it go (no clock decides the outcome)."""
    release = threading.Event()
    real_embed = Embedder.embed_tokens  # how a search embeds its query (`semantic_leg.embed_soon`)

    def stuck(self: Embedder, ids: Any, mask: Any) -> Vectors:
        release.wait(timeout=60)
        return real_embed(self, ids, mask)

    monkeypatch.setattr(Embedder, "embed_tokens", stuck)
    engine = kb.engine(embed_timeout=0.05)
    try:
        page = engine.search(validate(SearchInput, {"query": "coin overview send"}))
    finally:
        release.set()
    assert page.mode == "hybrid" and page.modeUsed == "keyword"
    assert page.degraded and "longer than 50 ms" in page.degraded
    assert page.results and all(r.matchType == "keyword" for r in page.results)
    assert "keyword mode" in caplog.text
    last = engine.semantic_status()["lastDegraded"]
    assert isinstance(last, dict) and "longer than 50 ms" in last["reason"]
    monkeypatch.setattr(Embedder, "embed_tokens", real_embed)
    engine.embed_timeout = 60.0  # the released model may still be finishing the stuck query
    again = engine.search(validate(SearchInput, {"query": "coin overview send"}))
    assert again.modeUsed == "hybrid" and again.degraded is None  # a slow answer is not cached


def test_an_embedding_started_before_the_search_answers_the_same(
    kb: Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a search has loaded the model, the engine starts the next query's embedding before
    it even checks the index (`KnowledgeEngine._early_embedding`): the answer is the one a
    search that embeds its query itself gives (an engine's first search)."""
    started: list[QueryEmbedding | None] = []
    early_embedding = KnowledgeEngine._early_embedding

    def spy(self: KnowledgeEngine, request: SearchInput) -> QueryEmbedding | None:
        started.append(early_embedding(self, request))
        return started[-1]

    monkeypatch.setattr(KnowledgeEngine, "_early_embedding", spy)
    request = validate(SearchInput, {"query": "how do I get into my wallet"})
    itself = kb.engine(cache_searches=False).search(request)
    warmed = kb.engine(cache_searches=False)
    warmed.search(validate(SearchInput, {"query": "send some ether"}))
    early = warmed.search(request)
    assert started[0] is None and started[1] is None  # each engine's first search
    last = started[2]
    assert last is not None and last.vector is not None and last.vector.done()
    assert early.modeUsed == "hybrid" and any(r.similarity for r in early.results)
    assert early.model_dump() == itself.model_dump()


def test_a_cached_answer_does_not_run_the_model(
    kb: Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedding a search starts early is cancelled when the cache answers: the
    embedding thread (held busy here, so the search's run waits behind) skips it."""
    engine = kb.engine()
    request = validate(SearchInput, {"query": "how do I get into my wallet"})
    first = engine.search(request)
    leg = engine.semantic()
    assert isinstance(leg, SemanticLeg)
    gate, runs = threading.Event(), []
    real_embed = Embedder.embed_tokens

    def counted(self: Embedder, ids: Any, mask: Any) -> Vectors:
        gate.wait(timeout=60)
        runs.append(ids.shape[1])
        return real_embed(self, ids, mask)

    monkeypatch.setattr(Embedder, "embed_tokens", counted)
    held = embed_soon(leg.embedder, "hold the embedding thread")
    try:
        again = engine.search(request)
    finally:
        gate.set()
    after = embed_soon(leg.embedder, "the last job")
    assert held.result(timeout=60) is not None and after.result(timeout=60) is not None
    assert again == first and len(runs) == 2  # the two held jobs ran; the search's did not


def test_a_dropped_engine_keeps_no_file_of_its_index_mapped(tmp_path: Path) -> None:
    """The embedding thread lets go of a search's job once it is done: the job holds the
    search's read view, whose Tantivy searcher kept the generation's segment files mapped (and
    a thread watching its `meta.json`) until another search came, long after the engine."""
    own = Knowledge(tmp_path)
    own.session("mm-send", goal="Send ETH to a friend")
    own.step("mm-send", test_id="coin-overview-send", screen="send")
    engine = own.engine()
    page = engine.search(validate(SearchInput, {"query": "send the coins", "mode": "hybrid"}))
    assert page.modeUsed == "hybrid"
    del engine
    maps = Path("/proc/self/maps")
    wait_for(lambda: str(own.index_dir) not in maps.read_text())


@pytest.mark.parametrize(
    ("value", "seconds"), [(None, 1.0), ("250", 0.25), ("0", 1.0), ("soon", 1.0)]
)
def test_the_embedding_timeout_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str | None, seconds: float
) -> None:
    if value is None:
        monkeypatch.delenv(EMBED_TIMEOUT_ENV, raising=False)
    else:
        monkeypatch.setenv(EMBED_TIMEOUT_ENV, value)
    assert configured_embed_timeout() == seconds


def test_a_rebuild_copies_the_vectors_it_has_and_embeds_only_new_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = Knowledge(tmp_path)
    kb.session("mm-send", goal="Send ETH")
    kb.step("mm-send", test_id="coin-overview-send", screen="home")
    kb.index()
    old = IndexLayout(kb.index_dir).current()
    assert old is not None
    old_keys = (old / KEYS_FILE).read_text().split()
    old_rows = (old / ROWS_FILE).read_bytes()
    old_texts = (old / TEXTS_FILE).read_bytes()
    broken = tmp_path / "model.onnx"
    broken.write_bytes(b"not a model")
    monkeypatch.setenv(MODEL_PATH_ENV, str(broken))  # nothing can be embedded now
    rebuild(kb.store, kb.index_dir)
    new = IndexLayout(kb.index_dir).current()
    assert new is not None and new != old
    assert (new / KEYS_FILE).read_text().split() == old_keys  # every vector copied, none lost
    assert (new / ROWS_FILE).read_bytes() == old_rows
    assert (new / TEXTS_FILE).read_bytes() == old_texts  # what was embedded, copied too
    monkeypatch.delenv(MODEL_PATH_ENV)
    kb.step("mm-send", test_id="confirm-footer-button", screen="confirm")
    rebuild(kb.store, kb.index_dir)  # a new text: embedded, the others copied
    newest = IndexLayout(kb.index_dir).current()
    assert newest is not None
    keys = (newest / KEYS_FILE).read_text().split()
    assert keys[: len(old_keys)] == old_keys and len(keys) > len(old_keys)
    assert (newest / ROWS_FILE).read_bytes()[: len(old_rows)] == old_rows


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_session_search_answers_with_the_sessions_of_the_matching_steps(
    kb: Knowledge, mode: str
) -> None:
    """A session is found by any of its steps: the sessions of a session search are exactly
    those of the step search, ranked by their best step, and `total` counts them all."""
    query = "open the vault with my secret" if mode != "keyword" else "send"
    steps = search(kb, query, mode=mode, limit=100)
    sessions = search(kb, query, mode=mode, limit=100, types=["session"])
    by_rank = list(dict.fromkeys(row.sessionId for row in steps.steps()))
    assert [row.sessionId for row in sessions.sessions()] == by_rank
    assert sessions.total == len(by_rank) and not sessions.hasMore
    for row in sessions.sessions():
        assert row.type == "session" and row.matchType in ("keyword", "semantic", "both")
        assert row.matchedSteps and all(s.startswith(f"{row.sessionId}/") for s in row.matchedSteps)
    first = sessions.sessions()[0]
    assert first.matchedSteps[0] == steps.steps()[0].stepId
    assert first.session.id == first.sessionId and first.session.stepCount > 0


def test_a_session_result_is_the_workflow_goal_screens_and_actions(kb: Knowledge) -> None:
    page = search(kb, "open the vault with my secret", types=["session"])
    first = page.sessions()[0]
    assert first.sessionId == "mm-unlock" and first.session.goal == "Unlock the wallet"
    assert first.screens == ["unlock", "home"]
    assert [a.target for a in first.actions] == ["testId:unlock-password", "testId:unlock-submit"]
    assert first.to_json_dict()["type"] == "session"


def test_session_pages_are_slices_of_one_order(kb: Knowledge) -> None:
    whole = [r.sessionId for r in search(kb, "send money", types=["session"]).sessions()]
    paged = [
        r.sessionId
        for offset in range(len(whole))
        for r in search(kb, "send money", types=["session"], limit=1, offset=offset).sessions()
    ]
    assert paged == whole
    past = search(kb, "send money", types=["session"], offset=50)
    assert past.results == [] and past.total == len(whole) and not past.hasMore


def test_sessions_are_searched_alone(kb: Knowledge) -> None:
    with pytest.raises(InvalidInput) as bad:
        search(kb, "send", types=["session", "step"])
    assert bad.value.field == "types"


def test_an_empty_answer_suggests_the_nearest_recorded_phrases(kb: Knowledge) -> None:
    """Spec 004's helpful empty result: nothing passes the similarity asked for, so the hint
    names the recorded texts nearest the query's meaning (keyword mode embeds nothing)."""
    empty = search(kb, "open the vault with my secret", minSimilarity=1.0)
    assert empty.total == 0 and empty.known is not None
    assert "unlock" in empty.known.phrases[0]
    keyword = search(kb, "open the vault with my secret", mode="keyword")
    assert keyword.total == 0 and keyword.known is not None and keyword.known.phrases == []


def test_a_recorded_phrase_that_would_display_reordered_is_not_suggested(tmp_path: Path) -> None:
    """A page's heading reaches a step's text; one holding a right-to-left override would show
    an agent other text than is stored (CVE-2021-42574): an empty answer leaves it out, as it
    leaves out control characters, and still suggests the plain ones."""
    kb = Knowledge(tmp_path)
    kb.session("mm-bidi", goal="Connect the dapp")
    page = "http://localhost:8080/"
    evil = [("e1", "heading", "Pay \u202eevil")]
    kb.step("mm-bidi", test_id="sendButton", url=page, screen="unknown", a11y=evil)
    plain = [("e1", "heading", "Test Dapp")]
    kb.step("mm-bidi", test_id="connectButton", url=page, screen="unknown", a11y=plain)
    empty = search(kb, "open the vault with my secret", minSimilarity=1.0)
    assert empty.total == 0 and empty.known is not None
    assert empty.known.phrases
    assert not any("\u202e" in phrase or "evil" in phrase for phrase in empty.known.phrases)


def test_the_nearest_phrases_are_those_of_steps_the_filters_keep(kb: Knowledge) -> None:
    """Suggesting a phrase that no step within the filters says would lead the agent into a
    second empty answer: with the settings session's steps only, the unlock texts are gone."""
    everywhere = search(kb, "open the vault with my secret", minSimilarity=1.0)
    in_settings = search(
        kb,
        "open the vault with my secret",
        minSimilarity=1.0,
        scope={"sessionId": "mm-settings"},
    )
    settings = search(kb, "settings", scope={"sessionId": "mm-settings"}, mode="keyword")
    assert everywhere.total == in_settings.total == 0 and settings.total > 0
    assert everywhere.known is not None and in_settings.known is not None
    assert any("unlock" in phrase for phrase in everywhere.known.phrases)
    suggested = in_settings.known.phrases
    assert suggested and not any("unlock" in phrase for phrase in suggested)


def test_candidates_are_scored_from_the_key_columns_as_from_the_stored_keys(kb: Knowledge) -> None:
    """The u64 key columns a search scores candidates by say what the stored keys say."""
    engine = kb.engine()
    leg = engine.semantic()
    assert isinstance(leg, SemanticLeg)
    sims = leg.start("send money to a friend", then=lambda found: found).result()
    searcher = engine.reader.searcher()
    steps = tantivy.Query.term_query(engine.reader.schema, "doc_type", "step")
    addresses = [address for _, address in searcher.search(steps, limit=100).hits]

    def cos(values: list[str]) -> float:
        row = leg.vectors.rows.get(values[0]) if values and values[0] else None
        return float(sims.cos[row]) if row is not None else 0.0

    docs = [searcher.doc(address) for address in addresses]
    expected = [
        max(0.0, (cos(d["sem_step"]) + SCREEN_WEIGHT * cos(d["sem_screen"])) / (1 + SCREEN_WEIGHT))
        for d in docs
    ]
    assert len(addresses) >= 9 and len(set(expected)) > 3  # texts of several kinds
    assert sims.of_documents(searcher, addresses) == expected


@pytest.mark.parametrize("observing", [False, True])
def test_what_the_query_did_not_ask_for_counts_less(kb: Knowledge, observing: bool) -> None:
    """An observing step's own text (`look at the unlock screen`) is near every query about
    its screen: its cosine counts `OBSERVATION_WEIGHT`, every other text's counts whole; for a
    query asking what a screen shows (`observing`), the other way round."""
    leg = kb.engine().semantic()
    assert isinstance(leg, SemanticLeg)
    query = "look at the unlock screen"
    sims = leg.start(query, then=lambda found: found, observing=observing).result()
    cosines = leg.vectors.matrix @ leg.embedder.embed([query])[0]
    texts = leg.vectors.texts()
    observations = [is_observation_text(texts[key]) for key in leg.vectors.keys]
    assert any(observations) and not all(observations)
    weights = [OBSERVATION_WEIGHT if o != observing else 1.0 for o in observations]
    expected = [c * w for c, w in zip(cosines, weights, strict=True)]
    assert sims.cos.tolist() == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    ("query", "observing"),
    [
        ("what does the unlock screen look like", True),
        ("grab a picture of the send page", True),
        ("unlock the wallet with my password", False),
        ("look-at", False),  # an identifier's words are the app's own: no expression
    ],
)
def test_a_search_says_when_its_query_asks_what_a_screen_shows(
    kb: Knowledge, monkeypatch: pytest.MonkeyPatch, query: str, observing: bool
) -> None:
    """Its everyday words mean an observation (`look at`, `take a screenshot`:
    `analyzers.glossary`), and the semantic leg weighs the texts for it."""
    asked: list[bool] = []
    start = SemanticLeg.start

    def recorded(
        leg: SemanticLeg, text: str, then: Any, observing: bool = False, vector: Any = None
    ) -> Any:
        asked.append(observing)
        return start(leg, text, then, observing, vector)

    monkeypatch.setattr(SemanticLeg, "start", recorded)
    kb.engine().search(SearchInput(query=query, mode="semantic"))
    assert asked == [observing]


@given(
    st.lists(
        st.sampled_from([0.9, 0.5, 0.5, 0.25, 0.0, -0.0, -0.3, float("nan")])
        | st.floats(-1.0, 1.0, width=32),
        max_size=300,
    ),
    st.integers(1, 80),
)
def test_the_nearest_texts_are_those_a_full_sort_puts_first(values: list[float], k: int) -> None:
    """`top_rows` picks and orders rows as a stable sort of every value would: ties (repeated
    values, -0.0 and 0.0) in row order, NaNs last."""
    cos = np.array(values, np.float32)
    assert top_rows(cos, k).tolist() == np.argsort(-cos, kind="stable")[:k].tolist()


def test_a_check_is_embedded_as_the_wait_that_checks_it() -> None:
    """A test checks by waiting for what should show: the embedded text says so, and only for
    a check."""
    asked = query_embedding("how can I tell the site now sees my account", SynonymTable())
    assert asked.text.endswith(f"({CHECKED_BY})")
    assert CHECKED_BY not in query_embedding("open the site", SynonymTable()).text

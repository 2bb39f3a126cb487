"""Superseded steps, detected from later sessions' evidence and kept in `superseded.json`."""

import shutil
import tempfile
import threading
import time
from operator import attrgetter
from pathlib import Path
from typing import Any

import pytest
import tantivy
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import KnowledgeEngine
from engine.core import InvalidInput, NotFound
from engine.history import ScreenContext
from engine.index import (
    FactsLedger,
    decisions_lock,
    indexer,
    remove_folder,
    supersede,
    write_detected,
)
from engine.live import LiveIndex
from engine.records import (
    MISSING,
    Action,
    Detected,
    KnowledgeStore,
    Known,
    Rename,
    Retry,
    ScreenFacts,
    Seen,
    SessionFacts,
    SessionMetadata,
    Supersession,
    now_iso,
    plan,
    plan_screen,
    renames_on,
    selector_test_id,
)
from tests.conftest import Knowledge

OLD = [("coin-overview-send", "Send"), ("coin-overview-swap", "Swap")]
NEW = [("wallet-send-button", "Send"), ("wallet-swap-button", "Swap")]
A11Y = [("e1", "button", "Send"), ("e2", "button", "Swap")]
SEND_SCREEN = [("recipient-address-input", "")]


def before_rename(kb: Knowledge, session_id: str = "mm-old", hours_ago: float = 30.0) -> str:
    """An agent on the old UI: looks at home, clicks Send by its testId (it worked)."""
    kb.session(session_id, hours_ago=hours_ago, flow_tags=["send"], goal="Send ETH")
    kb.step(session_id, "mm_describe_screen", screen="home", test_ids=OLD, a11y=A11Y)
    return kb.step(session_id, test_id="coin-overview-send", screen="send", test_ids=SEND_SCREEN)


def after_rename(
    kb: Knowledge, session_id: str = "mm-new", hours_ago: float = 2.0, looks: int = 2
) -> str:
    """An agent on the renamed UI: looks at home `looks` times, clicks Send by its new testId."""
    kb.session(session_id, hours_ago=hours_ago, flow_tags=["send"], goal="Send ETH")
    for _ in range(looks):
        kb.step(session_id, "mm_describe_screen", screen="home", test_ids=NEW, a11y=A11Y)
    return kb.step(session_id, test_id="wallet-send-button", screen="send", test_ids=SEND_SCREEN)


def decisions(kb: Knowledge, session_id: str) -> dict[str, dict[str, object]]:
    found, skip = kb.store.read_decisions(session_id)
    assert skip is None
    return {stem: d.model_dump(exclude_none=True) for stem, d in found.items()}


def test_a_renamed_testid_supersedes_the_old_steps_by_the_new_one(kb: Knowledge) -> None:
    old = before_rename(kb)
    new = after_rename(kb)
    kb.index()
    decided = decisions(kb, "mm-old")
    assert list(decided) == [old.split("/", 1)[1]]
    entry = decided[old.split("/", 1)[1]]
    assert entry["source"] == "detected" and entry["evidence"] == "renamed"
    assert entry["supersededBy"] == {
        "stepId": new,
        "target": "testId:wallet-send-button",
        "timestamp": kb.store.read_step("mm-new", f"{new.split('/', 1)[1]}.json").timestamp,
    }
    assert decisions(kb, "mm-new") == {}


def test_one_look_at_the_new_ui_is_not_enough(kb: Knowledge) -> None:
    before_rename(kb)
    after_rename(kb, looks=1)
    kb.index()
    assert decisions(kb, "mm-old") == {}


def test_a_half_loaded_page_is_not_evidence(kb: Knowledge) -> None:
    """Two looks at a home screen that lacks the old id and also lacks any "Send" element."""
    before_rename(kb)
    kb.session("mm-loading", hours_ago=2)
    for _ in range(3):
        kb.step("mm-loading", "mm_describe_screen", screen="home", test_ids=[("app-logo", "Demo")])
    kb.step("mm-loading", test_id="app-logo", screen="home")
    kb.index()
    assert decisions(kb, "mm-old") == {}


def test_a_later_sighting_of_the_old_testid_cancels_the_decision(kb: Knowledge) -> None:
    """A branch that still has the old UI keeps its steps: the old id is seen after the new."""
    before_rename(kb)
    after_rename(kb)
    kb.index()
    assert decisions(kb, "mm-old") != {}
    kb.session("mm-branch", hours_ago=1)
    kb.step("mm-branch", "mm_describe_screen", screen="home", test_ids=OLD, a11y=A11Y)
    kb.index()
    assert decisions(kb, "mm-old") == {}


def test_not_found_then_the_same_element_working_supersedes(kb: Knowledge) -> None:
    old = before_rename(kb)
    kb.session("mm-retry", hours_ago=2)
    kb.not_found("mm-retry", "coin-overview-send", screen="home", a11y=A11Y)
    retry = kb.step("mm-retry", a11y_ref="e1", screen="send")
    kb.index()
    entry = decisions(kb, "mm-old")[old.split("/", 1)[1]]
    assert entry["evidence"] == "not-found"
    assert entry["supersededBy"]["stepId"] == retry  # type: ignore[index]


def indexed_steps(kb: Knowledge) -> dict[str, bytes]:
    """Every step document's stored payload."""
    engine = KnowledgeEngine(kb.root, kb.index_dir)
    searcher = engine.reader.searcher()
    query = tantivy.Query.term_query(engine.reader.schema, "doc_type", "step", "basic")
    docs = [searcher.doc(a) for _, a in searcher.search(query, limit=1000).hits]
    return {d["step_id"][0]: d["payload"][0] for d in docs}


def test_reindex_from_the_files_reproduces_every_flag(kb: Knowledge) -> None:
    old = before_rename(kb)
    after_rename(kb)
    kb.index()  # detects, writes the decision, re-indexes just the flagged step
    written = (kb.root / "mm-old" / "superseded.json").read_bytes()
    detected = indexed_steps(kb)
    assert flagged(kb) == {old}
    remove_folder(kb.index_dir)
    kb.index()  # from the files: the decision is read, nothing is detected anew
    assert (kb.root / "mm-old" / "superseded.json").read_bytes() == written
    assert indexed_steps(kb) == detected
    assert flagged(kb) == {old}


def test_a_first_build_ranks_exactly_like_a_rebuild_of_the_same_files(kb: Knowledge) -> None:
    """The first build writes the decision files; a rebuild reads them. Both must give the
    same results, scores included (re-flagged steps once left deleted documents behind that
    still counted in BM25 statistics: bench-quality moved by 0.01 nDCG between runs)."""
    before_rename(kb)
    before_rename(kb, "mm-old-2", hours_ago=20)
    after_rename(kb)
    queries = ["send", "click send button", "coin overview send", "wallet send"]

    def results() -> list[str]:
        return [kb.search(q, includeSuperseded=True, limit=50).model_dump_json() for q in queries]

    first = results()
    assert kb.index().sessions_flagged == 0  # settled: nothing new to detect
    remove_folder(kb.index_dir)
    assert results() == first


def test_a_first_build_analyses_each_session_once(
    kb: Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Detection runs before any document is added, so a first build over a root without
    decision files reads and analyses each session once (it used to build everything a second
    time from the files it had just written); the flagged steps' documents are re-flagged, not
    analysed again."""
    old = before_rename(kb)
    after_rename(kb)
    sessions: list[str] = []
    steps: list[set[str]] = []
    real_session, real_steps = indexer.prepare_session, indexer.prepare_steps

    def prepare_session(root: Path, session_id: str, signature: str | None = None) -> Any:
        sessions.append(session_id)
        return real_session(root, session_id, signature)

    def prepare_steps(root: Path, session_id: str, step_ids: set[str]) -> Any:
        steps.append(step_ids)
        return real_steps(root, session_id, step_ids)

    monkeypatch.setattr(indexer, "prepare_session", prepare_session)
    monkeypatch.setattr(indexer, "prepare_steps", prepare_steps)
    assert kb.index().sessions_flagged == 1
    assert sorted(sessions) == ["mm-new", "mm-old"]
    assert steps == []
    assert flagged(kb) == {old}


def test_a_step_recorded_while_a_first_build_detects_is_indexed_by_the_next_sync(
    kb: Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild adds what it read before detection; a step recorded into a flagged session
    meanwhile is not among its documents, so the session must not be signed as indexed."""
    old = before_rename(kb)
    after_rename(kb)
    late: list[str] = []
    real = write_detected

    def detect_while_an_agent_records(*args: Any, **kwargs: Any) -> Any:
        flagged = real(*args, **kwargs)
        late.append(kb.step("mm-old", test_id="coin-overview-buy", screen="home"))
        return flagged

    monkeypatch.setattr(indexer, "write_detected", detect_while_an_agent_records)
    assert kb.index().sessions_flagged == 1
    assert late[0] not in indexed_steps(kb)
    monkeypatch.setattr(indexer, "write_detected", real)
    report = kb.index()
    assert report.sessions_indexed == 1  # mm-old, read again
    assert late[0] in indexed_steps(kb)
    assert flagged(kb) == {old}


def test_worker_processes_build_what_this_process_builds(
    kb: Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk build analyses sessions in worker processes (forked from a fork server); the
    index, flags included, must be the one this process alone would build."""
    olds = {before_rename(kb, f"mm-old-{i:02}", hours_ago=30 + i) for i in range(70)}
    after_rename(kb)
    after_rename(kb, "mm-new2", hours_ago=1.5)  # history of 70 sessions needs two to outweigh
    assert len(kb.store.session_ids()) > indexer.PARALLEL_MIN_SESSIONS
    assert kb.index().sessions_flagged == 70
    in_workers = indexed_steps(kb)
    assert flagged(kb) == olds
    remove_folder(kb.index_dir)
    monkeypatch.setattr(indexer, "PARALLEL_MIN_SESSIONS", 10_000)
    assert kb.index().sessions_flagged == 0  # the files are settled
    assert indexed_steps(kb) == in_workers


def test_detection_does_not_depend_on_the_order_sessions_are_read() -> None:
    """An element's identity is its first sighting's; which sighting is first must not depend
    on the ledger's order (live writer: order of change; rebuild: order of the manifest)."""
    home = "home"
    clicked = Action(
        "s-a/0001-mm_click",
        0,
        "t0",
        home,
        "old-id",
        "button",
        "",
        True,
        None,
        "testId:old-id",
        "click",
    )
    a = SessionFacts("s-a", {home: [clicked]}, {home: {"old-id": Seen(1, 1, 1, "button", "send")}})
    b = SessionFacts("s-b", {}, {home: {"old-id": Seen(1, 1, 1, "button", "transfer")}})
    renamed = Action(
        "s-c/0003-mm_click",
        11,
        "t11",
        home,
        "new-id",
        "button",
        "send",
        True,
        None,
        "testId:new-id",
        "click",
    )
    c = SessionFacts(
        "s-c", {home: [renamed]}, {home: {"new-id": Seen(10, 10, 2, "button", "send")}}
    )
    assert plan([a, b, c]) == plan([c, b, a]) == plan([b, a, c])


def test_explicit_supersede_checks_its_input_and_writes_nothing_when_wrong(kb: Knowledge) -> None:
    kb.session("mm-hand", hours_ago=3)
    first = kb.step("mm-hand", test_id="a-button")
    second = kb.step("mm-hand", test_id="b-button")
    third = kb.step("mm-hand", test_id="c-button")
    with pytest.raises(InvalidInput, match="supersededBy: a step cannot supersede itself"):
        supersede(kb.store, first, first, None)
    with pytest.raises(NotFound, match="stepId"):
        supersede(kb.store, "mm-hand/9999-mm_click", second, None)
    with pytest.raises(NotFound, match="supersededBy"):
        supersede(kb.store, first, "mm-hand/../x", None)
    with pytest.raises(InvalidInput, match="supersededBy"):
        supersede(kb.store, first, None, None)
    assert decisions(kb, "mm-hand") == {}
    supersede(kb.store, first, second, "the a-button moved")
    by = decisions(kb, "mm-hand")[first.split("/")[1]]["supersededBy"]
    assert by["target"] == "testId:b-button"  # type: ignore[index]
    supersede(kb.store, second, third, None)
    with pytest.raises(InvalidInput, match="cycle"):
        supersede(kb.store, third, first, None)
    assert set(decisions(kb, "mm-hand")) == {first.split("/")[1], second.split("/")[1]}
    supersede(kb.store, third, None, "the c-button is gone")
    assert decisions(kb, "mm-hand")[third.split("/")[1]]["reason"] == "the c-button is gone"


def test_detection_never_replaces_an_explicit_decision(kb: Knowledge) -> None:
    old = before_rename(kb)
    kb.index()
    supersede(kb.store, old, None, "known to be flaky")
    after_rename(kb)
    kb.index()
    entry = decisions(kb, "mm-old")[old.split("/", 1)[1]]
    assert entry["source"] == "explicit" and entry["reason"] == "known to be flaky"


@pytest.mark.parametrize(
    ("selector", "test_id"),
    [
        ('[data-testid="coin-overview-send"]', "coin-overview-send"),
        ("[data-testid='x']", "x"),
        ("[data-testid=x]", "x"),
        ("button.send", None),
        ('div [data-testid="x"]', None),
        (None, None),
    ],
)
def test_a_selector_names_a_testid_only_when_it_is_exactly_one(
    selector: str | None, test_id: str | None
) -> None:
    assert selector_test_id(selector) == test_id


def test_prior_knowledge_never_suggests_the_superseded_target(kb: Knowledge) -> None:
    before_rename(kb, "mm-old1", hours_ago=50)
    before_rename(kb, "mm-old2", hours_ago=40)  # the old target has more history than the new
    after_rename(kb)
    after_rename(kb, "mm-new2", hours_ago=1.5)  # two sessions' evidence outweighs two of history
    kb.session("mm-now", hours_ago=0.1)
    home_now = ScreenContext(
        screen="home",
        test_ids=[t for t, _ in NEW],
        a11y=[(role, name) for _, role, name in A11Y],
        session_id="mm-now",
    )
    prior = kb.engine().prior_knowledge(home_now)
    clicks = [s for s in prior.suggestedNextActions if s.action == "click"]
    assert clicks and clicks[0].preferredTarget.value == "wallet-send-button"
    suggested = [s.preferredTarget.value for s in prior.suggestedNextActions]
    fallbacks = [f.value for s in prior.suggestedNextActions for f in s.fallbackTargets]
    assert "coin-overview-send" not in suggested + fallbacks
    assert all(s.sessionId in {"mm-new", "mm-new2"} for s in prior.similarSteps)


def flagged(kb: Knowledge) -> set[str]:
    """Step ids the index flags as superseded (read only: a live writer may hold the index)."""
    engine = KnowledgeEngine(kb.root, kb.index_dir)
    searcher = engine.reader.searcher()
    query = tantivy.Query.term_query(engine.reader.schema, "superseded", "true", "basic")
    return {
        searcher.doc(address)["step_id"][0] for _, address in searcher.search(query, limit=100).hits
    }


def test_the_live_indexer_detects_a_rename_as_sessions_are_recorded(kb: Knowledge) -> None:
    old = before_rename(kb)
    kb.index()
    live = LiveIndex(kb.store, kb.index_dir, retry_seconds=0.2)
    assert live.start(wait=10)
    try:
        after_rename(kb)
        decided = kb.root / "mm-old" / "superseded.json"
        deadline = time.monotonic() + 20
        while not (decided.exists() and old in flagged(kb)):
            assert time.monotonic() < deadline, "the live index did not flag the old step"
            time.sleep(0.05)
    finally:
        live.close()
    assert live.stats.sessionsFlagged == 1 and live.stats.failedBatches == 0


def test_a_text_field_without_a_name_is_superseded_by_the_agents_retry(kb: Knowledge) -> None:
    kb.session("mm-typed", hours_ago=30)
    old = kb.step("mm-typed", "mm_type", test_id="currency-input", text="0.1", screen="send")
    kb.session("mm-retyped", hours_ago=2)
    kb.step("mm-retyped", "mm_describe_screen", screen="send", test_ids=["send-amount-input"])
    kb.not_found("mm-retyped", "currency-input", "mm_type", screen="send")
    kb.step("mm-retyped", "mm_describe_screen", screen="send", test_ids=["send-amount-input"])
    retry = kb.step("mm-retyped", "mm_type", test_id="send-amount-input", screen="send")
    kb.index()
    entry = decisions(kb, "mm-typed")[old.split("/", 1)[1]]
    assert entry["evidence"] == "not-found"
    assert entry["supersededBy"]["stepId"] == retry  # type: ignore[index]


def test_a_retry_on_an_element_with_another_name_is_not_a_replacement(kb: Knowledge) -> None:
    before_rename(kb)
    kb.session("mm-other", hours_ago=2)
    kb.not_found("mm-other", "coin-overview-send", screen="home", a11y=A11Y)
    kb.step("mm-other", a11y_ref="e2", screen="swap")  # clicked Swap instead
    kb.index()
    assert decisions(kb, "mm-old") == {}


def test_a_decision_written_meanwhile_is_never_lost(kb: Knowledge) -> None:
    """Detection (the live writer) and mm_knowledge_supersede both rewrite superseded.json: the
    one that read first must not overwrite what the other added. The test holds the lock as
    detection does, reads, lets an explicit supersede start, then writes."""
    kb.session("mm-race", hours_ago=3)
    first = kb.step("mm-race", test_id="a-button")
    second = kb.step("mm-race", test_id="b-button")
    with decisions_lock(kb.store):
        found, _ = kb.store.read_decisions("mm-race")
        explicit = threading.Thread(target=supersede, args=(kb.store, first, None, "moved"))
        explicit.start()
        explicit.join(0.3)  # it waits for the lock (without one, it writes now and is lost)
        found[second.split("/")[1]] = Supersession(
            supersededAt=now_iso(), source="detected", reason="simulated detection"
        )
        kb.store.write_decisions("mm-race", found)
    explicit.join(10)
    assert set(decisions(kb, "mm-race")) == {first.split("/")[1], second.split("/")[1]}


SCREENS = ("home", "send")
FAILURE_CODES = ("MM_TARGET_NOT_FOUND", "MM_WAIT_TIMEOUT", "MM_TIMEOUT")
TEST_IDS = ("a", "b", "send-old", "send-new")
"""Two ids sharing a part (a rename by parts can occur) and two sharing none."""


@st.composite
def session_facts(draw: st.DrawFn, session_id: str) -> SessionFacts:
    """A small random session: actions and sightings over two screens, four testIds and few
    names and times (so renames, retries and not-found failures all occur)."""
    facts = SessionFacts(session_id)
    for n in range(draw(st.integers(0, 6))):
        screen = draw(st.sampled_from(SCREENS))
        test_id = draw(st.sampled_from([*TEST_IDS, None]))
        ok = draw(st.booleans())
        ts = draw(st.integers(1, 12))
        facts.actions.setdefault(screen, []).append(
            Action(
                f"{session_id}/{n:04d}-mm_click",
                ts,
                f"t{ts}",
                screen,
                test_id,
                draw(st.sampled_from(["button", ""])),
                draw(st.sampled_from(["send", "send", ""])),
                ok,
                None
                if ok
                else draw(
                    st.sampled_from(["MM_TARGET_NOT_FOUND", "MM_WAIT_TIMEOUT", "MM_TIMEOUT"])
                ),
                f"testId:{test_id}",
                draw(st.sampled_from(["click", "type"])),
            )
        )
    for screen in draw(st.sets(st.sampled_from(SCREENS))):
        for test_id in draw(st.sets(st.sampled_from(TEST_IDS), min_size=1)):
            first = draw(st.integers(1, 12))
            last = draw(st.integers(first, 12))
            role = draw(st.sampled_from(["button", ""]))
            name = draw(st.sampled_from(["send", "send", "swap", ""]))
            count = draw(st.integers(1, 3))
            facts.seen.setdefault(screen, {})[test_id] = Seen(first, last, count, role, name)
    return facts


def decided(detections: list[Detected]) -> dict[str, tuple[str, str]]:
    return {d.step_id: (d.by.step_id, d.evidence) for d in detections}


def same_element(role: str, name: str, other_role: str, other_name: str) -> bool:
    return bool(name) and name == other_name and (not role or not other_role or role == other_role)


def known_as(
    test_id: str, worked: list[Action], seen: list[tuple[str, str, Seen]]
) -> tuple[str, str]:
    """The role and name a testId is known by: its latest named action's that worked, else
    its first named sighting's (by session id)."""
    named = [a for a in worked if a.name]
    if named:
        latest = max(named, key=attrgetter("ts", "step_id"))
        return latest.role, latest.name
    firsts = sorted((sid, s.role, s.name) for sid, t, s in seen if t == test_id and s.name)
    return firsts[0][1:] if firsts else ("", "")


def rules(sessions: list[SessionFacts]) -> dict[str, tuple[str, str]]:
    """The detection rules written plainly over every session's facts, reading everything:
    the planner's indexes (which read only what happened after a testId's last use) must
    decide the same."""
    order = attrgetter("ts", "step_id")
    out: dict[str, tuple[str, str]] = {}
    for screen in {screen for f in sessions for screen in f.screens()}:
        actions = [a for f in sessions for a in f.actions.get(screen, [])]
        seen = [(f.session_id, t, s) for f in sessions for t, s in f.seen.get(screen, {}).items()]
        for test_id in {a.test_id for a in actions if a.test_id}:
            mine = [a for a in actions if a.test_id == test_id]
            worked = [a for a in mine if a.ok]
            if not worked:
                continue
            since = max([s.last for _, t, s in seen if t == test_id] + [a.ts for a in worked])
            role, name = known_as(test_id, worked, seen)
            found = None
            observed = sum(
                s.count
                for _, t, s in seen
                if t != test_id and s.first > since and same_element(role, name, s.role, s.name)
            )
            works = [
                a
                for a in actions
                if a.ok
                and a.ts > since
                and a.test_id != test_id
                and same_element(role, name, a.role, a.name)
            ]
            if observed >= 2 and works:
                found = (min(works, key=order), "renamed")
            failed = [a for a in mine if not a.ok and a.error_code in MISSING]
            for miss in sorted((a for a in failed if a.ts > since), key=order):
                if found is not None:
                    break
                session = miss.step_id.split("/")[0]
                later = [a for a in actions if a.step_id.split("/")[0] == session]
                retry = next((a for a in later if a.ts > miss.ts and a.tool == miss.tool), None)
                if retry is None or not retry.ok or retry.test_id == test_id:
                    continue
                if name and retry.name and not same_element(role, name, retry.role, retry.name):
                    continue
                found = (retry, "not-found")
            if found is not None and not plain_outweighs(test_id, since, found[0], actions, seen):
                found = None
            rename = plain_renames(screen, actions, seen).get(test_id)
            if rename and not plain_outweighs(test_id, since, rename.new, actions, seen):
                rename = None
            successors = [
                a for a in actions if rename and a.ok and a.test_id == rename.new and a.ts > since
            ]
            if found is None and rename and successors:
                found = (min(successors, key=order), rename.evidence)
            if found is not None:
                out |= {a.step_id: (found[0].step_id, found[1]) for a in worked}
    return out


def plain_outweighs(
    test_id: str,
    since: int,
    successor: Action | str,
    actions: list[Action],
    seen: list[tuple[str, str, Seen]],
) -> bool:
    """`outweighs` read plainly: the sessions that show `successor` replaced `test_id` after
    `since` (its own, those that saw or used the new id after, those where `test_id` was not
    found after) are two or more, or outnumber by less than two the others where it worked."""

    def session(step_id: str) -> str:
        return step_id.split("/")[0]

    new_id = successor if isinstance(successor, str) else successor.test_id
    evidence = set() if isinstance(successor, str) else {session(successor.step_id)}
    if new_id:
        evidence |= {sid for sid, t, s in seen if t == new_id and s.last > since}
        evidence |= {
            session(a.step_id) for a in actions if a.test_id == new_id and a.ok and a.ts > since
        }
    evidence |= {
        session(a.step_id)
        for a in actions
        if a.test_id == test_id and not a.ok and a.error_code in MISSING and a.ts > since
    }
    if len(evidence) >= 2:
        return True
    worked_in = {session(a.step_id) for a in actions if a.test_id == test_id and a.ok}
    return len(worked_in - evidence) < 2


def plain_renames(
    screen: str, actions: list[Action], seen: list[tuple[str, str, Seen]]
) -> dict[str, Rename]:
    """What `renames_on` is given, read plainly from every action and sighting of a screen."""
    ids: dict[str, Known] = {}
    for test_id in {t for _, t, _ in seen} | {a.test_id for a in actions if a.ok and a.test_id}:
        sightings = [s for _, t, s in seen if t == test_id]
        worked = [a for a in actions if a.ok and a.test_id == test_id]
        role, name = known_as(test_id, worked, seen)
        ids[test_id] = Known(
            min([s.first for s in sightings] + [a.ts for a in worked]),
            max([s.last for s in sightings] + [a.ts for a in worked]),
            sum(s.count for s in sightings),
            role,
            name,
        )
    retries = []
    for miss in actions:
        if miss.ok or miss.error_code not in MISSING or miss.test_id not in ids:
            continue
        if miss.ts <= ids[miss.test_id].last:
            continue
        session = miss.step_id.split("/")[0]
        later = [a for a in actions if a.step_id.split("/")[0] == session]
        retry = next((a for a in later if a.ts > miss.ts and a.tool == miss.tool), None)
        if retry is not None and retry.ok and retry.test_id:
            retries.append(Retry(miss.test_id, retry.test_id, retry.ts))
    return renames_on(screen, ids, retries)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_the_live_ledger_judges_again_everything_a_change_can_alter(data: st.DataObject) -> None:
    """Sessions arrive, change and disappear in any order: the ledger's screen indexes stay
    equal to ones built from scratch, and every decision a change alters is on a testId the
    ledger marked to judge again (what the live writer re-plans); the planner decides what
    the rules written plainly decide."""
    ledger = FactsLedger({})
    for _ in range(data.draw(st.integers(1, 8))):
        session_id = data.draw(st.sampled_from(["s1", "s2", "s3", "s4"]))
        new = data.draw(st.none() | session_facts(session_id))
        old = ledger.facts.get(session_id)
        before = decided(plan(ledger.facts.values()))
        ledger.update(session_id, new)
        after = decided(plan(ledger.facts.values()))
        assert after == rules(list(ledger.facts.values()))
        pending = ledger.take_pending()
        targets: dict[str, set[tuple[str, str | None]]] = {}  # a step's, before and after
        for facts in [*ledger.facts.values(), *([old] if old else [])]:
            for screen, actions in facts.actions.items():
                for a in actions:
                    targets.setdefault(a.step_id, set()).add((screen, a.test_id))
        for step_id in before.keys() | after.keys():
            if before.get(step_id) != after.get(step_id) and step_id in targets:
                assert any(t in pending.get(s, set()) for s, t in targets[step_id])
        for screen, view in ledger.screens.items():
            fresh = ScreenFacts(screen)
            for facts in ledger.facts.values():
                fresh.add(facts)
            assert decided(plan_screen(view)) == decided(plan_screen(fresh))
            assert {t: s for t, s in view.seen.items()} == fresh.seen
            assert view.acted == fresh.acted and view.sessions == fresh.sessions


def actions_of(facts: SessionFacts) -> list[Action]:
    return [a for actions in facts.actions.values() for a in actions]


def on_file(store: KnowledgeStore, session_id: str) -> dict[str, str]:
    """A session's decisions on file: step id -> superseded by."""
    found, _ = store.read_decisions(session_id)
    return {
        f"{session_id}/{stem}": d.supersededBy.stepId for stem, d in found.items() if d.supersededBy
    }


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_live_replanning_keeps_every_sessions_decisions_equal_to_a_full_plan(
    data: st.DataObject,
) -> None:
    """Sessions arrive, change, lose their decision file and disappear; after each live
    re-plan (which compares only the changed sessions while a testId's verdict stands), every
    session's detected decisions, in the ledger and on file, are those a full plan makes."""
    with tempfile.TemporaryDirectory() as folder:
        store = KnowledgeStore(Path(folder))
        ledger = FactsLedger({})
        for _ in range(data.draw(st.integers(1, 8))):
            session_id = data.draw(st.sampled_from(["mm-s1", "mm-s2", "mm-s3", "mm-s4"]))
            known = ledger.facts.get(session_id)
            if known is not None and data.draw(st.booleans()):
                # its decision file removed by hand: the same facts, no decisions on file
                (store.root / session_id / "superseded.json").unlink(missing_ok=True)
                new: SessionFacts | None = SessionFacts(session_id, known.actions, known.seen)
            else:
                new = data.draw(st.none() | session_facts(session_id))
            if new is None:
                shutil.rmtree(store.root / session_id, ignore_errors=True)
            else:
                store.write_session(SessionMetadata(sessionId=session_id, createdAt=now_iso()))
                new.detected = on_file(store, session_id)  # what indexing would read
            ledger.update(session_id, new)
            write_detected(store, ledger, ledger.take_pending())
            expected = {d.step_id: d.by.step_id for d in plan(ledger.facts.values())}
            steps = {a.step_id for f in ledger.facts.values() for a in actions_of(f) if a.test_id}
            held = {s: by for f in ledger.facts.values() for s, by in f.detected.items()}
            files = {s: by for sid in ledger.facts for s, by in on_file(store, sid).items()}
            # a decision about a step that is gone, or no longer acts on a testId, stays on
            # file (nothing judges that step again)
            assert {s: b for s, b in held.items() if s in steps} == expected
            assert {s: b for s, b in files.items() if s in steps} == expected


def click(step_id: str, ts: int, test_id: str) -> Action:
    """A successful click on the element named "send" by `test_id`."""
    screen, target = "home", f"testId:{test_id}"
    return Action(
        step_id, ts, f"t{ts}", screen, test_id, "button", "send", True, None, target, "click"
    )


def test_a_decision_file_removed_by_hand_is_written_again_while_the_verdict_stands(
    tmp_path: Path,
) -> None:
    """The live re-plan compares only changed sessions while a testId's verdict stands: the
    session whose file lost its decision is one of them."""
    store = KnowledgeStore(tmp_path)
    ledger = FactsLedger({})
    old = SessionFacts(
        "mm-old",
        {"home": [click("mm-old/0001-mm_click", 1, "a")]},
        {"home": {"a": Seen(1, 1, 1, "button", "send")}},
    )
    new = SessionFacts(
        "mm-new",
        {"home": [click("mm-new/0001-mm_click", 6, "b")]},
        {"home": {"b": Seen(5, 5, 2, "button", "send")}},
    )
    for facts in (old, new, SessionFacts("mm-old", old.actions, old.seen)):
        store.write_session(SessionMetadata(sessionId=facts.session_id, createdAt=now_iso()))
        (store.root / facts.session_id / "superseded.json").unlink(missing_ok=True)
        ledger.update(facts.session_id, facts)
        write_detected(store, ledger, ledger.take_pending())
    assert on_file(store, "mm-old") == {"mm-old/0001-mm_click": "mm-new/0001-mm_click"}

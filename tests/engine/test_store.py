"""The knowledge root on disk: atomic writes, step numbering, labels, bad files, session ids."""

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest

from engine.core import InvalidInput, SearchInput, SessionsInput, validate_session_id
from engine.records import KnowledgeStore, SessionMetadata, StepRecord, list_session

GOOD_STEP = {
    "timestamp": "2026-01-15T10:00:00.000Z",
    "sessionId": "mm-bad-files",
    "tool": {"name": "mm_click", "target": {"testId": "send-button"}},
    "outcome": {"ok": True},
}


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def read_json(path: Path) -> dict:
    return orjson.loads(path.read_bytes())


# -- writing -----------------------------------------------------------------------------------


def test_writes_leave_only_the_final_files(kb):
    kb.session("mm-atomic", goal="Send ETH")
    kb.step("mm-atomic", "mm_describe_screen")
    kb.step("mm-atomic", "mm_click", test_id="send-button")
    assert files_under(kb.root) == [
        "mm-atomic/session.json",
        "mm-atomic/steps/0001-mm_describe_screen.json",
        "mm-atomic/steps/0002-mm_click.json",
    ]


def test_rewriting_session_json_replaces_it_whole(kb):
    kb.session("mm-rewrite", goal="a much longer goal than the one that replaces it")
    kb.session("mm-rewrite", goal="short")
    meta = read_json(kb.root / "mm-rewrite" / "session.json")
    assert meta["goal"] == "short"
    assert files_under(kb.root) == ["mm-rewrite/session.json"]


def test_record_step_numbers_files_and_returns_step_ids(kb):
    ids = [
        kb.step("mm-numbers", "mm_describe_screen"),
        kb.step("mm-numbers", "mm_click", test_id="send-button"),
        kb.step("mm-numbers", "mm_type", test_id="amount", text="0.1"),
    ]
    assert ids == [
        "mm-numbers/0001-mm_describe_screen",
        "mm-numbers/0002-mm_click",
        "mm-numbers/0003-mm_type",
    ]
    step = read_json(kb.root / "mm-numbers" / "steps" / "0003-mm_type.json")
    assert step["tool"] == {
        "name": "mm_type",
        "input": {"text": "0.1"},
        "target": {"testId": "amount"},
    }


def test_record_step_never_overwrites_an_existing_file(kb):
    kb.step("mm-no-clobber")
    steps = kb.root / "mm-no-clobber" / "steps"
    foreign = steps / "0007-mm_click.json"
    foreign.write_bytes(b'{"written": "by someone else"}')
    assert kb.step("mm-no-clobber") == "mm-no-clobber/0008-mm_click"
    assert foreign.read_bytes() == b'{"written": "by someone else"}'
    assert len(list(steps.iterdir())) == 3


def test_tool_names_are_made_safe_for_file_names(kb):
    assert kb.step("mm-odd-tool", "../../mm click!") == "mm-odd-tool/0001-.._.._mm_click_"
    assert files_under(kb.root) == ["mm-odd-tool/steps/0001-.._.._mm_click_.json"]


def test_concurrent_writers_never_lose_a_step(kb):
    records = [kb.record("mm-concurrent", text=f"step {i}") for i in range(40)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = list(pool.map(kb.store.record_step, records))
    assert len(set(ids)) == 40
    loaded = kb.store.load_session("mm-concurrent")
    assert loaded.skipped == []
    assert sorted(s.record.tool.input["text"] for s in loaded.steps) == sorted(
        f"step {i}" for i in range(40)
    )
    assert not [p for p in (kb.root / "mm-concurrent" / "steps").iterdir() if p.name[0] == "."]


# -- labels (IMPROVEMENT-01 §4.2) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "target", "ok", "labels"),
    [
        ("mm_describe_screen", {}, True, ["discovery"]),
        ("mm_list_testids", {}, True, ["discovery"]),
        ("mm_accessibility_snapshot", {}, True, ["discovery"]),
        ("mm_get_state", {}, True, ["discovery"]),
        ("mm_navigate", {}, True, ["navigation"]),
        ("mm_wait_for_notification", {}, True, ["navigation", "confirmation"]),
        ("mm_click", {"test_id": "send-button"}, True, ["interaction"]),
        ("mm_type", {"test_id": "amount-input"}, True, ["interaction"]),
        ("mm_wait_for", {"test_id": "tx-list"}, True, ["interaction"]),
        ("mm_click", {}, True, ["interaction"]),
        ("mm_click", {"test_id": "confirm-footer-button"}, True, ["interaction", "confirmation"]),
        ("mm_click", {"selector": "button.Approve-btn"}, True, ["interaction", "confirmation"]),
        (
            "mm_click",
            {"test_id": "page-container-footer-SUBMIT"},
            True,
            ["interaction", "confirmation"],
        ),
        ("mm_type", {"a11y_ref": "e-confirm"}, True, ["interaction", "confirmation"]),
        (
            "mm_click",
            {"test_id": "confirm-btn"},
            False,
            ["interaction", "confirmation", "error-recovery"],
        ),
        ("mm_click", {"test_id": "send-button"}, False, ["interaction", "error-recovery"]),
        ("mm_describe_screen", {}, False, ["discovery", "error-recovery"]),
        ("mm_navigate", {}, False, ["navigation", "error-recovery"]),
        ("mm_launch", {}, True, []),
        ("mm_screenshot", {}, True, []),
        ("mm_cleanup", {}, False, ["error-recovery"]),
        ("click", {"test_id": "approve"}, True, ["interaction", "confirmation"]),
    ],
)
def test_record_step_derives_labels(kb, tool, target, ok, labels):
    step_id = kb.step("mm-labels", tool, ok=ok, **target)
    path = kb.root / "mm-labels" / "steps" / f"{step_id.split('/')[1]}.json"
    assert read_json(path)["labels"] == labels


@pytest.mark.parametrize(
    ("tool", "labels"),
    [
        ("describe_screen", ["discovery"]),
        ("wait_for", ["interaction"]),
        ("wait_for_notification", ["navigation", "confirmation"]),
        ("my_app_click", ["interaction"]),
    ],
)
def test_labels_do_not_depend_on_the_tool_prefix(kb, tool, labels):
    kb.step("mm-prefixes", tool)
    assert kb.store.load_session("mm-prefixes").steps[0].record.labels == labels


@pytest.mark.parametrize("labels", [["custom"], []])
def test_record_step_keeps_labels_the_recorder_gave(kb, labels):
    kb.step("mm-own-labels", test_id="confirm-button", ok=False, labels=labels)
    loaded = kb.store.load_session("mm-own-labels")
    assert loaded.steps[0].record.labels == labels


# -- reading: bad files are reported skips ----------------------------------------------------

BAD_FILES = {
    "0002-corrupt.json": (b"{not json at all", "invalid JSON"),
    "0003-empty.json": (b"", "invalid JSON"),
    "0004-half.json": (orjson.dumps(GOOD_STEP)[:40], "invalid JSON"),
    "0005-invalid.json": (orjson.dumps({**GOOD_STEP, "tool": None}), "invalid record: tool"),
    "0006-no-outcome.json": (
        orjson.dumps({k: v for k, v in GOOD_STEP.items() if k != "outcome"}),
        "invalid record: outcome",
    ),
    "0007-array.json": (b"[1, 2, 3]", "invalid record"),
    "0008-binary.json": (b"\xff\xfe\x00garbage", "invalid JSON"),
}


@pytest.fixture
def root_with_bad_files(kb):
    kb.session("mm-bad-files", goal="Send with some broken step files")
    kb.step("mm-bad-files", test_id="send-button")
    steps = kb.root / "mm-bad-files" / "steps"
    for name, (data, _) in BAD_FILES.items():
        (steps / name).write_bytes(data)
    (steps / "0009-mm_click.json").write_bytes(
        orjson.dumps({**GOOD_STEP, "tool": {"name": "mm_click", "target": {"testId": "confirm"}}})
    )
    (steps / ".0010-mm_click.json.abc123.tmp").write_bytes(b"{half")  # a crashed writer's temp
    (steps / "notes.txt").write_text("not a step")
    kb.session("mm-healthy", goal="Swap tokens")
    kb.step("mm-healthy", test_id="swap-button")
    return kb


def test_bad_step_files_are_reported_and_the_rest_loads(root_with_bad_files):
    kb = root_with_bad_files
    loaded = kb.store.load_session("mm-bad-files")
    assert [s.step_id for s in loaded.steps] == [
        "mm-bad-files/0001-mm_click",
        "mm-bad-files/0009-mm_click",
    ]
    steps = kb.root / "mm-bad-files" / "steps"
    reasons = {skip.path: skip.reason for skip in loaded.skipped}
    assert set(reasons) == {str(steps / name) for name in BAD_FILES}
    for name, (_, reason) in BAD_FILES.items():
        assert reasons[str(steps / name)].startswith(reason)


def test_a_session_read_is_signed_as_its_listing_signs_it(root_with_bad_files, tmp_path):
    """A build signs a new session from the files it reads (no listing first): the signature
    must be the listing's, whatever the folder holds, or every later sync would re-index it."""
    kb = root_with_bad_files
    steps = kb.root / "mm-bad-files" / "steps"
    (steps / ".hidden.json").write_text("{}")
    (steps / os.fsdecode(b"0011-\xff.json")).write_text("{}")
    (steps / "0012-link.json").symlink_to(steps / "0009-mm_click.json")
    os.mkfifo(steps / "0013-fifo.json")
    (steps / "0014-folder.json").mkdir()
    (kb.root / "mm-bad-files" / "superseded.json").write_text('{"steps": {}}')
    kb.step("mm-no-meta", test_id="send-button")
    outside = tmp_path / "outside"
    (outside / "steps").mkdir(parents=True)
    (kb.root / "mm-linked-folder").symlink_to(outside, target_is_directory=True)
    (kb.root / "mm-linked-steps").mkdir()
    (kb.root / "mm-linked-steps" / "steps").symlink_to(outside / "steps")
    sessions = kb.store.session_ids()
    assert {"mm-bad-files", "mm-no-meta", "mm-linked-folder", "mm-linked-steps"} <= set(sessions)
    for session_id in sessions:
        loaded = kb.store.load_session(session_id)
        assert loaded.signature == list_session(kb.root, session_id).signature, session_id
    signatures = {list_session(kb.root, s).signature for s in sessions}
    assert len(signatures) == len(sessions)


def test_bad_step_files_do_not_stop_indexing_or_search(root_with_bad_files):
    kb = root_with_bad_files
    report = kb.index()
    assert report.sessions_indexed == 2
    assert report.steps_indexed == 3
    assert sorted(s.path for s in report.skipped) == sorted(
        str(kb.root / "mm-bad-files" / "steps" / name) for name in BAD_FILES
    )
    assert all(s.reason for s in report.skipped)
    engine = kb.engine()
    confirm = engine.search(SearchInput(query="confirm"))
    assert [r.stepId for r in confirm.results] == ["mm-bad-files/0009-mm_click"]
    assert engine.search(SearchInput(query="swap")).total == 1


def test_corrupt_session_json_is_reported_and_its_steps_stay_searchable(kb):
    kb.step("mm-corrupt-meta", test_id="send-button", at=kb.now.replace(hour=9))
    meta = kb.root / "mm-corrupt-meta" / "session.json"
    meta.write_bytes(b'{"sessionId": "mm-corrupt-meta", "createdAt": ')
    loaded = kb.store.load_session("mm-corrupt-meta")
    assert [s.path for s in loaded.skipped] == [str(meta)]
    assert loaded.skipped[0].reason.startswith("invalid JSON")
    assert loaded.metadata.createdAt == "2026-01-15T09:00:00.000Z"
    assert not loaded.has_metadata_file
    page = kb.search("send")
    assert [r.stepId for r in page.results] == ["mm-corrupt-meta/0001-mm_click"]


def test_session_without_session_json_loads_with_its_first_step_time(kb):
    kb.step("mm-no-meta", "mm_navigate", screen="home", at=kb.now.replace(hour=8, minute=30))
    kb.step("mm-no-meta", test_id="swap-button", screen="swap")
    loaded = kb.store.load_session("mm-no-meta")
    assert not loaded.has_metadata_file
    assert loaded.metadata.sessionId == "mm-no-meta"
    assert loaded.metadata.createdAt == "2026-01-15T08:30:00.000Z"

    engine = kb.engine()
    found = engine.search(SearchInput(query="swap button", mode="keyword"))
    assert [r.stepId for r in found.results] == ["mm-no-meta/0002-mm_click"]
    [session] = engine.sessions(SessionsInput()).sessions
    assert (session.sessionId, session.createdAt, session.stepCount, session.hasMetadata) == (
        "mm-no-meta",
        "2026-01-15T08:30:00.000Z",
        2,
        False,
    )


def test_unknown_fields_survive_a_round_trip(kb):
    spec_example = {
        "build": {"buildType": "build:test"},
        "createdAt": "2026-01-15T12:00:00.000Z",
        "flowTags": ["send"],
        "git": {"branch": "feature/foo", "commit": "abc123", "dirty": True},
        "goal": "Run send flow smoke test",
        "launch": {
            "stateMode": "default",
            "fixturePreset": None,
            "extensionPath": "dist/chrome",
            "ports": {"anvil": 8545, "fixtureServer": 12345},
        },
        "schemaVersion": 1,
        "sessionId": "mm-20260115-abc",
        "tags": ["smoke"],
        "recorder": {"name": "future-recorder", "version": 3},
    }
    kb.store.write_session(SessionMetadata.model_validate(spec_example))
    assert read_json(kb.root / "mm-20260115-abc" / "session.json") == spec_example
    meta, skip = kb.store.read_metadata("mm-20260115-abc")
    assert skip is None
    assert meta.model_extra == {"recorder": {"name": "future-recorder", "version": 3}}

    step = {
        **GOOD_STEP,
        "sessionId": "mm-20260115-abc",
        "durationMs": 120,
        "tool": {"name": "mm_click", "target": {"testId": "x", "frame": "main"}, "retries": 2},
        "outcome": {"ok": True, "warnings": ["slow"]},
        "observation": {
            "state": {"currentScreen": "home", "isUnlocked": True},
            "screenshot": "a.png",
        },
        "labels": ["interaction"],
    }
    kb.store.record_step(StepRecord.model_validate(step))
    written = read_json(kb.root / "mm-20260115-abc" / "steps" / "0001-mm_click.json")
    assert written["durationMs"] == 120
    assert written["tool"]["retries"] == 2
    assert written["tool"]["target"]["frame"] == "main"
    assert written["outcome"]["warnings"] == ["slow"]
    assert written["observation"]["state"]["isUnlocked"] is True
    assert written["observation"]["screenshot"] == "a.png"


# -- session ids -------------------------------------------------------------------------------

BAD_SESSION_IDS = [
    "..",
    "....",
    "../../etc",
    "../mm-escape",
    "mm/../../x",
    "a/b/c",
    "/etc/passwd",
    "/tmp/mm-abs",
    "C:\\Windows",
    "mm-\x00-nul",
    "abc",
    "",
    "mm session",
    "x" * 129,
]


@pytest.mark.parametrize("session_id", BAD_SESSION_IDS)
def test_unsafe_session_ids_are_rejected_before_touching_disk(kb, tmp_path, session_id):
    before = files_under(tmp_path)
    with pytest.raises(InvalidInput) as write_meta:
        kb.store.write_session(SessionMetadata(sessionId=session_id, createdAt="2026-01-15"))
    with pytest.raises(InvalidInput) as write_step:
        kb.store.record_step(kb.record(session_id))
    with pytest.raises(InvalidInput):
        kb.store.load_session(session_id)
    for raised in (write_meta.value, write_step.value):
        assert raised.code == "MM_INVALID_INPUT"
        assert raised.field == "sessionId"
    assert files_under(tmp_path) == before


@pytest.mark.parametrize("session_id", ["mm-20260115-abc", "send.flow_2", "ABCD", "x" * 128])
def test_safe_session_ids_are_accepted(session_id):
    assert validate_session_id(session_id) == session_id


def test_only_folders_with_valid_session_ids_are_sessions(kb):
    kb.step("mm-real")
    kb.step("send.flow_2")
    for name in ("ab", ".hidden-session", "bad name", "has~tilde"):
        (kb.root / name / "steps").mkdir(parents=True)
    (kb.root / "stray-file.json").write_text("{}")
    assert kb.store.session_ids() == ["mm-real", "send.flow_2"]


def test_a_missing_root_has_no_sessions(tmp_path):
    store = KnowledgeStore(tmp_path / "does-not-exist")
    assert store.session_ids() == []
    assert list(store.iter_sessions()) == []


def test_artifacts_are_numbered_and_never_written_through_a_link(tmp_path: Path) -> None:
    """Screenshots go through the store like steps: a session folder (or its `screenshots/`)
    swapped for a link during a browser session is refused, and nothing lands outside."""
    store = KnowledgeStore(tmp_path / "root")
    assert store.save_artifact("mm-shots1", "screenshots", "-home.png", b"png") == (
        "screenshots/0001-home.png"
    )
    assert store.save_artifact("mm-shots1", "screenshots", "-home.png", b"png2") == (
        "screenshots/0002-home.png"
    )
    outside = tmp_path / "outside"
    (outside / "screenshots").mkdir(parents=True)
    (store.root / "mm-linked1").symlink_to(outside, target_is_directory=True)
    (store.root / "mm-shots2").mkdir()
    (store.root / "mm-shots2" / "screenshots").symlink_to(outside / "screenshots")
    for session_id in ("mm-linked1", "mm-shots2"):
        with pytest.raises(InvalidInput, match=r"sessionId: .*link"):
            store.save_artifact(session_id, "screenshots", "-home.png", b"secret page")
    assert list(outside.rglob("*")) == [outside / "screenshots"]

"""`engine.records.limits.check_record`: what a recorded record may hold, and the field it names."""

import os
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.core import InvalidInput, SummarizeInput
from engine.index import field_text
from engine.records import (
    FIELD_TOKENS,
    KEPT_FILE_BYTES,
    MAX_INT,
    MAX_TEXT_CHARS,
    MIN_INT,
    READ_LIST_ITEMS,
    READ_TEXT_CHARS,
    SMALL_FILE_BYTES,
    bounded_text,
    check_record,
)
from tests.conftest import Knowledge, bytes_read

SMALL_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(MIN_INT, MAX_INT)
    | st.floats(allow_nan=False)
    | st.text(max_size=50),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=40,
)
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
)


@given(SMALL_JSON)
def test_small_records_pass(value: Any) -> None:
    check_record({"tool": {"name": "mm_click", "input": value}})


@given(ANY_JSON)
def test_anything_passes_or_names_a_field(value: Any) -> None:
    try:
        check_record({"extra": value})
    except InvalidInput as exc:
        assert exc.field.startswith(("extra", "record"))


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"goal": "g" * (MAX_TEXT_CHARS + 1)}, "goal"),
        ({"build": {"n": MAX_INT + 1}}, "build.n"),
        ({"a": [1, {"b": [MIN_INT - 1]}]}, "a[1].b[0]"),
        ({"k" * (MAX_TEXT_CHARS + 1): 1}, "k" * (MAX_TEXT_CHARS + 1)),
        ({"tool": {"input": {"text": "pass\ud800word"}}}, "tool.input.text"),
    ],
)
def test_the_field_over_a_limit_is_named(record: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_record(record)
    assert caught.value.field == field


def test_bounded_text_keeps_short_values_and_cuts_long_ones() -> None:
    assert bounded_text("short", 10) == "short"
    assert bounded_text("x" * 11, 10) == "x" * 9 + "…"


# -- files written by other programs: cut when read -----------------------------------------
def big_failure(kb: Knowledge, message: str, nodes: int = 0) -> str:
    """A step file whose error message (and accessibility snapshot) another program made big."""
    kb.session("mm-big-one", goal="swap")
    a11y = [(f"e{i}", "button", f"Node {i}") for i in range(nodes)]
    return kb.step("mm-big-one", ok=False, error=("SWAP_FAILED", message), a11y=a11y)


def test_a_small_file_is_read_as_it_is(kb: Knowledge) -> None:
    message = "quote expired " * 300  # 4,200 characters in a file under SMALL_FILE_BYTES
    step_id = big_failure(kb, message)
    path = kb.root / "mm-big-one" / "steps" / f"{step_id.split('/')[1]}.json"
    assert path.stat().st_size <= SMALL_FILE_BYTES
    error = kb.store.read_step("mm-big-one", path.name).outcome.error
    assert error is not None and error.message == message


def test_a_big_file_is_cut_before_it_is_indexed_or_shown(kb: Knowledge) -> None:
    head = "quokka marmot slippage "
    message = head + "filler " * 50_000 + "wombat"  # 350 KB; its last word past the cut
    big_failure(kb, message, nodes=READ_LIST_ITEMS + 100)
    loaded = kb.store.load_session("mm-big-one")
    record = loaded.steps[0].record
    assert record.outcome.error is not None
    assert record.outcome.error.message == bounded_text(message)
    assert len(record.observation.a11y.nodes) == READ_LIST_ITEMS

    page = kb.search("quokka marmot")
    assert [r.sessionId for r in page.results] == ["mm-big-one"]
    assert page.results[0].matchedFields == ["error:SWAP_FAILED"]
    assert kb.search("wombat").total == 0  # words past the cut are not indexed

    recipe = kb.engine().summarize(SummarizeInput(scope={"sessionId": "mm-big-one"}))
    assert len(recipe.failures[0].errorMessage or "") == READ_TEXT_CHARS
    assert len(orjson.dumps(recipe.to_json_dict())) < 10 * READ_TEXT_CHARS


def test_a_very_large_file_is_decoded_once_while_it_is_unchanged(kb: Knowledge) -> None:
    step_id = big_failure(kb, "quote expired " + "filler " * 300_000)  # 2.1 MB
    path = kb.root / "mm-big-one" / "steps" / f"{step_id.split('/')[1]}.json"
    assert path.stat().st_size > KEPT_FILE_BYTES
    engine = kb.engine()
    ask = SummarizeInput(scope={"sessionId": "mm-big-one"})
    first = engine.summarize(ask)

    before = bytes_read()
    again = engine.summarize(ask)
    assert bytes_read() - before < KEPT_FILE_BYTES  # the step file was opened, not read
    assert again == first

    mtime = path.stat().st_mtime_ns  # written again, its modification time restored
    path.write_bytes(path.read_bytes().replace(b"quote expired", b"quote revoked"))
    os.utime(path, ns=(mtime, mtime))
    changed = engine.summarize(ask).failures[0].errorMessage or ""
    assert changed.startswith("quote revoked")


def test_one_field_of_one_step_indexes_a_bounded_vocabulary() -> None:
    words = " ".join(f"word{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{i}" for i in range(5000))
    assert len(field_text([words]).split()) == FIELD_TOKENS

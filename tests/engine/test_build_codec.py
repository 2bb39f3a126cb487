"""The bulk build's fast paths give what the plain paths give: `parse_step` (observations parsed
once per distinct value) against pydantic's own JSON parsing, and the writer's JSON documents
against the dicts they encode."""

import base64
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from engine.core import ByIdentity
from engine.index import EMBED_TEXTS, encode_documents
from engine.records import StepRecord, parse_step

TEXT = st.text(max_size=12)
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12,
)
MAYBE = st.one_of(JSON_VALUE, TEXT)
"""A field's value: usually of its type, sometimes anything (a record written by others)."""
NODE = st.fixed_dictionaries(
    {"ref": MAYBE, "role": MAYBE, "name": MAYBE}, optional={"path": st.lists(MAYBE, max_size=2)}
)
OBSERVATION = st.fixed_dictionaries(
    {},
    optional={
        "state": st.fixed_dictionaries({}, optional={"currentScreen": MAYBE, "currentUrl": MAYBE}),
        "testIds": st.lists(
            st.fixed_dictionaries({"testId": MAYBE}, optional={"text": MAYBE}), max_size=3
        ),
        "a11y": st.fixed_dictionaries({}, optional={"nodes": st.lists(NODE, max_size=3)}),
        "extra": JSON_VALUE,
    },
)
RECORD = st.fixed_dictionaries(
    {
        "timestamp": MAYBE,
        "sessionId": MAYBE,
        "tool": st.fixed_dictionaries(
            {"name": MAYBE}, optional={"textLength": MAYBE, "input": JSON_VALUE}
        ),
        "outcome": st.fixed_dictionaries({"ok": st.one_of(st.booleans(), MAYBE)}),
    },
    optional={"observation": st.one_of(OBSERVATION, JSON_VALUE), "args": JSON_VALUE},
)


def _either(data: bytes) -> tuple[str, Any]:
    """("ok", the record as JSON) or ("error", the first error), as the indexer reports it."""
    try:
        return "ok", parse_step(data).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        return "error", (first["type"], first["loc"], first["msg"])


def _plain(data: bytes) -> tuple[str, Any]:
    try:
        return "ok", StepRecord.model_validate_json(data).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        return "error", (first["type"], first["loc"], first["msg"])


@given(RECORD)
def test_parse_step_reads_records_as_pydantic_does(record: dict[str, Any]) -> None:
    data = orjson.dumps(record)
    assert _either(data) == _plain(data)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{",
        b"[]",
        b'"text"',
        b'{"timestamp": "t", "sessionId": "s", "tool": {"name": "x"}, "outcome": {"ok": 1}, '
        b'"observation": null}',
        b'{"timestamp": "t", "sessionId": "s", "tool": {"name": "x"}, "outcome": {"ok": true}, '
        b'"observation": {"testIds": [{"testId": 7}]}}',
        b'{"timestamp": "t", "sessionId": "s", "tool": {"name": "x"}, "outcome": {"ok": true}, '
        b'"size": 123456789012345678901234567890}',
        b'{"timestamp": "t", "sessionId": "s", "tool": {"name": "x\\ud800"}, "outcome": {}}',
    ],
)
def test_parse_step_refuses_what_pydantic_refuses_with_the_same_error(data: bytes) -> None:
    assert _either(data) == _plain(data)


def test_records_with_one_observation_share_it_and_stay_apart() -> None:
    observation = {"testIds": [{"testId": "send-button", "text": "Send"}]}
    first, second = (
        parse_step(
            orjson.dumps(
                {
                    "timestamp": f"2026-01-0{day}T00:00:00Z",
                    "sessionId": "s",
                    "tool": {"name": "mm_click"},
                    "outcome": {"ok": True},
                    "observation": observation,
                }
            )
        )
        for day in (1, 2)
    )
    assert first.observation is second.observation
    assert (first.timestamp, second.timestamp) == ("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")


@given(
    st.dictionaries(st.sampled_from(["goal", "payload", "ts", "tags"]), JSON_VALUE | st.binary())
)
def test_encoded_documents_are_the_dicts_with_bytes_in_base64(doc: dict[str, Any]) -> None:
    texts = {"k1": "send eth"}
    encoded = encode_documents([doc | {EMBED_TEXTS: texts}])
    assert encoded.texts == texts
    decoded = orjson.loads(encoded.json[0])
    expected = {
        k: base64.b64encode(v).decode() if isinstance(v, bytes) else v for k, v in doc.items()
    }
    assert decoded == orjson.loads(orjson.dumps(expected))


def test_values_derived_by_identity_are_derived_once_per_object() -> None:
    calls: list[list[int]] = []

    def derive(obj: list[int]) -> int:
        calls.append(obj)
        return sum(obj)

    derived = ByIdentity(derive, size=2)
    first, equal, third = [1, 2], [1, 2], [5]
    assert [derived(first), derived(first), derived(equal), derived(third)] == [3, 3, 3, 5]
    assert [c is first for c in calls] == [True, False, False]  # `equal` is another object
    derived(first)  # the oldest entry (`first`) was dropped when `third` came: derived again
    assert len(calls) == 4

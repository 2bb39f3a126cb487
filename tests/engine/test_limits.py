"""`engine.limits.check_record`: what a recorded record may hold, and the field it names."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import InvalidInput
from engine.limits import (
    MAX_INT,
    MAX_TEXT_CHARS,
    MIN_INT,
    bounded_items,
    bounded_text,
    check_record,
)

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
    ],
)
def test_the_field_over_a_limit_is_named(record: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_record(record)
    assert caught.value.field == field


def test_bounded_values_keep_short_ones_and_cut_long_ones() -> None:
    assert bounded_text("short", 10) == "short"
    assert bounded_text("x" * 11, 10) == "x" * 9 + "…"
    assert bounded_items(range(10), 3) == [0, 1, 2]

"""Input limits of IMPROVEMENT-01 §5, exactly; a violation is one InvalidInput naming its field."""

import pytest

from engine.core import (
    InvalidInput,
    KnowhowError,
    LastInput,
    SearchInput,
    SessionScope,
    SessionsInput,
    SummarizeInput,
    validate,
)

Q = {"query": "send"}


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (SearchInput, {"query": "x"}),
        (SearchInput, {"query": "x" * 200}),
        (SearchInput, {**Q, "limit": 1}),
        (SearchInput, {**Q, "limit": 100}),
        (SearchInput, {**Q, "offset": 0}),
        (SearchInput, {**Q, "scope": "current"}),
        (SearchInput, {**Q, "scope": "all"}),
        (SearchInput, {**Q, "scope": {"sessionId": "mm-abcd"}}),
        (SearchInput, {**Q, "filters": {"sinceHours": 1}}),
        (SearchInput, {**Q, "filters": {"sinceHours": 720}}),
        (
            SearchInput,
            {**Q, "filters": {"flowTag": "s", "tag": "t", "screen": "h", "gitBranch": "m"}},
        ),
        (SearchInput, {**Q, "filters": {"ok": False, "tool": "click"}}),
        (SearchInput, {**Q, "filters": {"after": "2026-01-15T10:00:00Z", "before": "2026-01-16"}}),
        (LastInput, {}),
        (LastInput, {"n": 1}),
        (LastInput, {"n": 200}),
        (SessionsInput, {}),
        (SessionsInput, {"limit": 1}),
        (SessionsInput, {"limit": 50}),
        (SummarizeInput, {}),
        (SummarizeInput, {"sessionId": "mm-abcd"}),
        (SummarizeInput, {"scope": {"sessionId": "mm-abcd"}}),
    ],
)
def test_values_at_the_limits_are_accepted(model, data):
    assert isinstance(validate(model, data), model)


def test_defaults_follow_the_spec():
    search = validate(SearchInput, Q)
    assert (search.limit, search.offset, search.scope, search.filters) == (20, 0, "all", None)
    assert (validate(LastInput, {}).n, validate(LastInput, {}).scope) == (20, "current")
    assert validate(SessionsInput, {}).limit == 10
    assert validate(SummarizeInput, {}).scope == "current"
    assert validate(SearchInput, {**Q, "scope": {"sessionId": "mm-abcd"}}).scope == SessionScope(
        sessionId="mm-abcd"
    )


@pytest.mark.parametrize(
    ("model", "data", "field"),
    [
        (SearchInput, {}, "query"),
        (SearchInput, {"query": ""}, "query"),
        (SearchInput, {"query": "x" * 201}, "query"),
        (SearchInput, {"query": 5}, "query"),
        (SearchInput, {**Q, "limit": 0}, "limit"),
        (SearchInput, {**Q, "limit": 101}, "limit"),
        (SearchInput, {**Q, "limit": "5"}, "limit"),
        (SearchInput, {**Q, "limit": 2.5}, "limit"),
        (SearchInput, {**Q, "limit": True}, "limit"),
        (SearchInput, {**Q, "offset": -1}, "offset"),
        (SearchInput, {**Q, "scope": "mine"}, "scope"),
        (SearchInput, {**Q, "scope": {"sessionId": "abc"}}, "scope.sessionId"),
        (SearchInput, {**Q, "scope": {"session": "mm-abcd"}}, "scope.sessionId"),
        (SearchInput, {**Q, "filters": {"sinceHours": 0}}, "filters.sinceHours"),
        (SearchInput, {**Q, "filters": {"sinceHours": 721}}, "filters.sinceHours"),
        (SearchInput, {**Q, "filters": {"sinceHours": "24"}}, "filters.sinceHours"),
        (SearchInput, {**Q, "filters": {"flowTag": ""}}, "filters.flowTag"),
        (SearchInput, {**Q, "filters": {"tag": ""}}, "filters.tag"),
        (SearchInput, {**Q, "filters": {"screen": ""}}, "filters.screen"),
        (SearchInput, {**Q, "filters": {"gitBranch": ""}}, "filters.gitBranch"),
        (SearchInput, {**Q, "filters": {"after": "yesterday"}}, "filters.after"),
        (SearchInput, {**Q, "filters": {"color": "red"}}, "filters.color"),
        (SearchInput, {**Q, "filters": []}, "filters"),
        (SearchInput, {**Q, "sessionId": "mm-abcd"}, "sessionId"),
        (SearchInput, {**Q, "bogus": 1}, "bogus"),
        (LastInput, {"n": 0}, "n"),
        (LastInput, {"n": 201}, "n"),
        (LastInput, {"n": "20"}, "n"),
        (LastInput, {"query": "send"}, "query"),
        (LastInput, {"filters": {"sinceHours": 0}}, "filters.sinceHours"),
        (SessionsInput, {"limit": 0}, "limit"),
        (SessionsInput, {"limit": 51}, "limit"),
        (SessionsInput, {"scope": "all"}, "scope"),
        (SessionsInput, {"filters": {"sinceHours": 721}}, "filters.sinceHours"),
        (SummarizeInput, {"sessionId": "abc"}, "sessionId"),
        (SummarizeInput, {"sessionId": "../../etc/passwd"}, "sessionId"),
        (SummarizeInput, {"scope": "everything"}, "scope"),
        (SummarizeInput, {"limit": 5}, "limit"),
    ],
)
def test_violations_raise_invalid_input_naming_the_field(model, data, field):
    with pytest.raises(InvalidInput) as raised:
        validate(model, data)
    error = raised.value
    assert isinstance(error, KnowhowError)
    assert error.code == "MM_INVALID_INPUT"
    assert error.field == field
    assert error.message.startswith(f"{field}: ")
    assert error.to_dict() == {"code": "MM_INVALID_INPUT", "message": error.message}


@pytest.mark.parametrize("session_id", ["../etc", "/abs/path", "mm/../x", "....", "mm-\x00-x"])
def test_unsafe_session_ids_in_a_scope_are_rejected(session_id):
    with pytest.raises(InvalidInput) as raised:
        validate(SearchInput, {**Q, "scope": {"sessionId": session_id}})
    assert raised.value.code == "MM_INVALID_INPUT"


def test_an_unsafe_scope_session_id_is_reported_at_its_path():
    with pytest.raises(InvalidInput) as raised:
        validate(SearchInput, {**Q, "scope": {"sessionId": "../etc"}})
    assert raised.value.field == "scope.sessionId"


def test_inputs_are_frozen():
    search = validate(SearchInput, Q)
    with pytest.raises(ValueError):
        search.limit = 5

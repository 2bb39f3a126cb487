"""`tokenize`: SPEC-03 FR-1..3 (§4.1.5) plus properties over any unicode text."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from analyzers import MIN_TOKEN_LENGTH, STOPWORDS, tokenize


def is_lower(token: str) -> bool:
    return "".join(c.lower() for c in token) == token


# -- SPEC-03 §4.1.5 `describe('tokenize')` ------------------------------------------------------


def test_splits_query_into_individual_words():
    tokens = tokenize("send flow ETH to another account")
    assert {"send", "eth", "another", "account"} <= set(tokens)


def test_removes_stopwords():
    tokens = tokenize("send to the account")
    assert "to" not in tokens
    assert "the" not in tokens
    assert tokens == ["send", "account"]


def test_removes_short_tokens():
    tokens = tokenize("a b cd efg")
    assert "a" not in tokens
    assert "b" not in tokens
    assert tokens == ["cd", "efg"]


@pytest.mark.parametrize("text", ["", "   ", "\t\n", None])
def test_handles_empty_and_whitespace_strings(text):
    assert tokenize(text) == []


def test_deduplicates_tokens():
    assert tokenize("send send SEND") == ["send"]


# -- SPEC-03 §8.1: the tool prefix is a stopword ----------------------------------------------


@pytest.mark.parametrize("text", ["mm_click", "mcp click", "MM-CLICK"])
def test_tool_prefix_words_are_stopwords(text):
    assert tokenize(text) == ["click"]


# -- tables: scripts, emoji, punctuation -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Send ETH → 0xAbC123", ["send", "eth", "0xabc123"]),
        ("coin-overview-send-button", ["coin", "overview", "send", "button"]),
        ("send_token_btn", ["send", "token", "btn"]),  # `_` separates, as in SPEC's [^a-z0-9]+
        ("发送 按钮", ["发送", "按钮"]),
        ("送信ボタンを押す", ["送信ボタンを押す"]),  # no spaces: one token, still searchable
        ("확인 버튼", ["확인", "버튼"]),
        ("Überweisung BESTÄTIGEN", ["überweisung", "bestätigen"]),
        ("ΣΤΕΙΛΕ ΠΟΣΟΣ", ["στειλε", "ποσοσ"]),  # per-char lowering: no final-sigma rule
        ("send 🚀 tokens 👍🏽", ["send", "tokens"]),
        ("🚀🚀🚀", []),
        ("Ｓｅｎｄ", ["send"]),  # full-width letters are NFKC-normalized to ASCII
        ("a1 b2 c", ["a1", "b2"]),
    ],
)
def test_tokenize_table(text, expected):
    assert tokenize(text) == expected


# -- properties --------------------------------------------------------------------------------


@given(st.text())
def test_tokenize_never_raises(text):
    assert all(isinstance(token, str) for token in tokenize(text))


@given(st.text())
@example("İstanbul ΣΑΣ ǅemal")
def test_tokens_are_lowercase_distinct_long_enough_and_not_stopwords(text):
    tokens = tokenize(text)
    assert len(tokens) == len(set(tokens))
    for token in tokens:
        assert is_lower(token)
        assert len(token) >= MIN_TOKEN_LENGTH
        assert token not in STOPWORDS

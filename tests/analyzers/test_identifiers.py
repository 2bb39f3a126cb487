"""`split_identifier` / `tokenize_identifier`: SPEC-03 §4.4.3 (FR-7), tables and properties.

Our `tokenize_identifier` puts the whole identifier first when it has several parts, so SPEC-03's
exact lists are `tokenize_identifier(x)[1:]`.
"""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from analyzers import MIN_TOKEN_LENGTH, STOPWORDS, split_identifier, tokenize_identifier


def is_lower(token: str) -> bool:
    return "".join(c.lower() for c in token) == token


# -- SPEC-03 §4.4.3 `describe('tokenizeIdentifier')` -------------------------------------------


def test_splits_kebab_case():
    tokens = tokenize_identifier("coin-overview-send-button")
    assert tokens == ["coin-overview-send-button", "coin", "overview", "send", "button"]


def test_splits_camel_case():
    assert tokenize_identifier("sendTokenButton")[1:] == ["send", "token", "button"]


def test_splits_snake_case():
    assert tokenize_identifier("send_token_btn")[1:] == ["send", "token", "btn"]


def test_handles_mixed_formats():
    tokens = tokenize_identifier("coin-overview_sendButton")
    assert {"coin", "overview", "send", "button"} <= set(tokens)


def test_handles_uppercase_abbreviations():
    tokens = tokenize_identifier("sendETHButton")
    assert {"send", "eth", "button"} <= set(tokens)


@pytest.mark.parametrize("identifier", ["", None])
def test_returns_empty_list_for_empty_input(identifier):
    assert tokenize_identifier(identifier) == []
    assert split_identifier(identifier) == []


# -- tables ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("identifier", "parts"),
    [
        ("coin-overview-send-button", ["coin", "overview", "send", "button"]),
        ("sendTokenButton", ["send", "token", "button"]),
        ("send_token_btn", ["send", "token", "btn"]),
        ("sendETHButton", ["send", "eth", "button"]),
        ("HTMLParser", ["html", "parser"]),
        ("ABBRevCase", ["abb", "rev", "case"]),  # SPEC's ([A-Z]+)([A-Z][a-z]) rule
        ("token-asset-0x539-ETH", ["token", "asset", "0", "x", "539", "eth"]),
        ("a11yRef", ["a", "11", "y", "ref"]),
        ("page.confirm-footer__button", ["page", "confirm", "footer", "button"]),
        ("button[data-testid='send']", ["button", "data", "testid", "send"]),
        ("发送-button", ["发送", "button"]),
        ("確認ボタン", ["確認ボタン"]),
        ("send-🚀-button", ["send", "button"]),
        ("👍", []),
        ("Überweisung-BESTÄTIGEN", ["überweisung", "bestätigen"]),
        ("step٣٤done", ["step", "٣٤", "done"]),  # Arabic-Indic digits are digits
        ("x²", ["x", "²"]),
    ],
)
def test_split_identifier_table(identifier, parts):
    assert split_identifier(identifier) == parts


@pytest.mark.parametrize(
    ("identifier", "tokens"),
    [
        ("sendETHButton", ["sendethbutton", "send", "eth", "button"]),
        ("HTMLParser", ["htmlparser", "html", "parser"]),
        ("ABBRevCase", ["abbrevcase", "abb", "rev", "case"]),
        # single characters (`0`, `x`) are dropped from the parts, never from the whole
        ("token-asset-0x539-ETH", ["token-asset-0x539-eth", "token", "asset", "539", "eth"]),
        ("a11yRef", ["a11yref", "11", "ref"]),
        # SPEC-03 §8.1: `mm` is a stopword, so `mm_click` matches only on `click`
        ("mm_click", ["mm_click", "click"]),
        ("send", ["send"]),  # one part: no separate whole
        ("Send", ["send"]),
        ("发送-button", ["发送-button", "发送", "button"]),
        ("👍", []),
    ],
)
def test_tokenize_identifier_table(identifier, tokens):
    assert tokenize_identifier(identifier) == tokens


def test_tokenize_identifier_deduplicates_parts():
    assert tokenize_identifier("send-send-SEND") == ["send-send-send", "send"]


# -- properties --------------------------------------------------------------------------------


# Enclosed capitals (Ⓐ, 🄰, 🅰, …) are the only characters that are "uppercase" but not letters;
# `test_enclosed_capitals_are_separators_like_their_lowercase` covers them.
identifier_chars = st.characters().filter(lambda c: c.isalnum() or not c.isupper())


@given(st.text(alphabet=identifier_chars))
@example("coin-overview_sendETHButton2")
@example("ΣΑΣ")
@example("İstanbul")
def test_split_parts_are_exactly_the_letters_and_digits(identifier):
    parts = split_identifier(identifier)
    assert all(parts)
    assert "".join(parts) == "".join(c.lower() for c in identifier if c.isalnum())


@pytest.mark.parametrize("upper", ["Ⓐ", "🄰", "🅰"])
def test_enclosed_capitals_are_separators_like_their_lowercase(upper):
    assert split_identifier(f"send{upper}button") == ["send", "button"]


@given(st.text())
def test_split_identifier_never_raises(identifier):
    assert all(isinstance(part, str) for part in split_identifier(identifier))


@given(st.text())
def test_split_parts_are_lowercase(identifier):
    assert all(is_lower(part) for part in split_identifier(identifier))


@given(st.text())
def test_tokenize_identifier_never_raises(identifier):
    assert all(isinstance(token, str) for token in tokenize_identifier(identifier))


@given(st.text())
def test_tokenize_identifier_is_lowercase_and_distinct(identifier):
    tokens = tokenize_identifier(identifier)
    assert all(is_lower(token) for token in tokens)
    assert len(tokens) == len(set(tokens))


@given(st.text())
@example("mm_click")
@example("a-b-cd")
def test_tokenize_identifier_parts_are_searchable_split_parts(identifier):
    parts = split_identifier(identifier)
    tokens = tokenize_identifier(identifier)
    words = tokens[1:] if len(parts) > 1 else tokens
    for token in words:
        assert len(token) >= MIN_TOKEN_LENGTH
        assert token not in STOPWORDS
        assert token in parts


@given(st.text())
@example("sendTokenButton")
@example(" coin-overview ")
def test_tokenize_identifier_keeps_the_whole_identifier_first(identifier):
    parts = split_identifier(identifier)
    tokens = tokenize_identifier(identifier)
    if len(parts) > 1:
        assert tokens[0] == "".join(c.lower() for c in identifier.strip())
    else:
        assert tokens == [p for p in parts if len(p) >= MIN_TOKEN_LENGTH and p not in STOPWORDS]

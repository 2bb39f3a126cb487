"""`analyze` (index side) and `analyze_query` (query side): one pipeline, weighted query terms."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from analyzers import (
    Glossary,
    SynonymTable,
    analyze,
    analyze_query,
    names_nothing,
    names_something,
)
from analyzers.analyze import GLOSSARY_WEIGHT, SYNONYM_WEIGHT

NO_SYNONYMS = SynonymTable(groups=(), glossary=Glossary(concepts=()))


def is_lower(token: str) -> bool:
    return "".join(c.lower() for c in token) == token


def weights(query: str) -> dict[str, float]:
    """Each token's weight: the highest it has for any concept of the query."""
    found: dict[str, float] = {}
    for term in analyze_query(query):
        found[term.token] = max(found.get(term.token, 0.0), term.weight)
    return found


# -- analyze -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        (
            "Click coin-overview-send, then sending tokens",
            ["click", "coin-overview-send", "coin", "overview", "send", "then", "token"],
        ),
        ("mm_click", ["mm_click", "click"]),
        ("Send 0.1 ETH", ["send", "0.1", "eth"]),
        ("sendETHButton", ["sendethbutton", "send", "eth", "button"]),
        ("the to a", []),
        ("发送 按钮 🚀", ["发送", "按钮"]),
        ("", []),
        (None, []),
    ],
)
def test_analyze_table(text, tokens):
    assert analyze(text) == tokens


@pytest.mark.parametrize(
    ("a", "b"),
    [("sending", "send"), ("sends", "Send"), ("swaps", "swap"), ("Swapped", "SWAP")],
)
def test_inflections_meet_in_the_index(a, b):
    assert analyze(a) == analyze(b)


@given(st.text())
def test_analyze_never_raises(text):
    assert all(isinstance(token, str) for token in analyze(text))


@given(st.text())
@example("Hello-World ΣΑΣ İ")
def test_index_tokens_are_lowercase_distinct_and_survive_a_whitespace_field(text):
    tokens = analyze(text)
    assert len(tokens) == len(set(tokens))
    for token in tokens:
        assert is_lower(token)
        assert token.split() == [token]


# -- analyze_query -----------------------------------------------------------------------------


def test_query_words_weigh_one_and_their_synonyms_less():
    terms = weights("transfer ETH")
    assert terms["transfer"] == 1.0
    assert terms["eth"] == 1.0
    assert terms["send"] == terms["pay"] == SYNONYM_WEIGHT < 1.0


def test_synonyms_belong_to_the_concept_of_the_word_typed():
    terms = {t.token: t for t in analyze_query("transfer")}
    assert terms["send"].concept == "transfer"
    assert terms["send"].kind == "synonym"
    assert terms["transfer"].kind == "exact"


def test_a_compound_is_looked_up_whole_and_by_parts():
    terms = {t.token: t for t in analyze_query("coin-overview-send")}
    assert terms["coin-overview-send"].kind == "whole"
    assert {"coin", "overview", "send"} <= set(terms)


def test_an_identifier_is_looked_up_whole_in_every_common_spelling():
    terms = {t.token: t for t in analyze_query("send_amount_input")}
    assert terms["send_amount_input"].weight == 1.0
    assert terms["send_amount_input"].kind == "whole"
    for spelling in ("send-amount-input", "sendamountinput"):
        assert terms[spelling].kind == "spelling"
        assert terms[spelling].concept == "send_amount_input"
        assert terms[spelling].weight == 1.0


def test_tool_prefix_never_becomes_a_query_term():  # SPEC-03 §8.1
    # the whole tool name (in its spellings) and its action (with the action's synonyms),
    # never `mm` alone
    assert set(weights("mm_click")) == {"mm_click", "mm-click", "mmclick", "click", "press", "tap"}


def test_stopword_only_query_has_no_terms():
    assert analyze_query("the to a an") == []


def test_sign_in_is_the_compound_the_synonym_table_knows():
    terms = weights("sign in")
    assert {"signin", "unlock", "login"} <= set(terms)
    assert "sign" not in terms


def test_a_word_typed_keeps_full_weight_when_also_a_synonym_of_another():
    terms = weights("send transfer")
    assert terms["send"] == terms["transfer"] == 1.0


@given(st.text())
def test_analyze_query_never_raises(text):
    assert all(term.token for term in analyze_query(text))


@given(st.text())
def test_query_tokens_are_lowercase_and_distinct_per_concept(text):
    pairs = [(term.token, term.concept) for term in analyze_query(text)]
    assert len(pairs) == len(set(pairs))
    tokens = [token for token, _ in pairs]
    assert all(is_lower(token) and token.split() == [token] for token in tokens)


@given(st.text())
def test_query_terms_weigh_one_or_the_synonym_or_glossary_weight(text):
    weight = {"synonym": SYNONYM_WEIGHT, "glossary": GLOSSARY_WEIGHT}
    for term in analyze_query(text):
        assert term.weight == weight.get(term.kind, 1.0)


@given(st.text())
@example("Click coin-overview-send, then sending tokens")
@example("sign in")
def test_without_synonyms_every_query_token_is_an_index_token_of_the_same_text(text):
    """The one-pipeline guarantee: a query finds the text it was typed from (other spellings
    of an identifier are looked for too, like synonyms)."""
    terms = analyze_query(text, NO_SYNONYMS)
    assert {t.token for t in terms if t.kind != "spelling"} <= set(analyze(text))


def test_every_concept_says_how_the_query_typed_it():
    said = {term.concept: term.said for term in analyze_query("Send ETH with coin-overview-send")}
    assert said["send"] == "Send"
    assert said["eth"] == "ETH"
    assert said["coin-overview-send"] == "coin-overview-send"
    assert said["overview"] == "overview"  # a part of the identifier, as split


def test_an_expression_is_said_as_typed():
    said = {term.concept: term.said for term in analyze_query("restore from the seed words")}
    assert "seed words" in said.values()


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("the and of to with a", False),
        ("?!... --- ;; ()", False),
        ("🦊💸🔥", False),
        ("how do I", False),
        ("tests flows", False),
        ("why didn't it", False),
        ("how do I send ETH?", True),
        ("发送以太币给朋友", True),
        ("coin-overview-send", True),
    ],
)
def test_a_query_names_something_unless_it_only_shapes_a_sentence(query, names):
    assert names_something(query) is names


@given(st.text(max_size=60))
@example("tests")
def test_a_query_naming_something_has_a_concept_that_does(text):
    if names_something(text):
        assert any(not names_nothing(t.said) for t in analyze_query(text, NO_SYNONYMS))

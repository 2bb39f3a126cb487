"""Synonyms: SPEC-03 §4.5.4 `expandWithSynonyms`, symmetry, and user tables from JSON."""

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzers import DEFAULT_SYNONYM_GROUPS, SynonymTable, expand_with_synonyms, stem, tokenize

DEFAULT_WORDS = sorted({word for group in DEFAULT_SYNONYM_GROUPS for word in group})
TABLE = SynonymTable()

# -- SPEC-03 §4.5.4 `describe('expandWithSynonyms')` -------------------------------------------


def test_expands_canonical_terms_to_synonyms():
    assert {"send", "transfer", "pay"} <= set(expand_with_synonyms(["send"]))


def test_expands_synonym_terms_to_canonical_and_other_synonyms():
    assert {"send", "transfer", "pay"} <= set(expand_with_synonyms(["transfer"]))


def test_does_not_expand_non_action_terms():
    assert expand_with_synonyms(["eth", "account", "balance"]) == ["eth", "account", "balance"]


def test_handles_multiple_tokens_with_some_having_synonyms():
    expanded = expand_with_synonyms(["send", "eth"])
    assert {"send", "transfer", "eth"} <= set(expanded)
    assert "ethereum" not in expanded


def test_deduplicates_results():
    expanded = expand_with_synonyms(["send", "transfer"])
    assert len(expanded) == len(set(expanded))


def test_input_words_come_first_in_order():
    assert expand_with_synonyms(["eth", "approve"])[:2] == ["eth", "approve"]


# -- symmetry ----------------------------------------------------------------------------------

tokens = st.one_of(st.sampled_from([stem(w) for w in DEFAULT_WORDS]), st.text(max_size=12))
groups = st.lists(st.lists(st.text(max_size=10), max_size=4), max_size=5)


@given(tokens, tokens)
def test_default_synonyms_are_symmetric(a, b):
    assert (b in TABLE.synonyms_of(a)) == (a in TABLE.synonyms_of(b))


@given(groups, st.data())
def test_any_table_is_symmetric_and_never_lists_a_word_as_its_own_synonym(raw_groups, data):
    table = SynonymTable(groups=tuple(tuple(g) for g in raw_groups))
    stems = sorted({stem(t) for g in raw_groups for w in g for t in tokenize(w)} | {"send"})
    a = data.draw(st.sampled_from(stems))
    b = data.draw(st.sampled_from(stems))
    assert (b in table.synonyms_of(a)) == (a in table.synonyms_of(b))
    assert a not in table.synonyms_of(a)


def test_expansion_of_table_words_is_symmetric():
    asymmetric = [
        (a, b)
        for a in DEFAULT_WORDS
        for b in DEFAULT_WORDS
        if (b in expand_with_synonyms([a])) != (a in expand_with_synonyms([b]))
    ]
    assert asymmetric == []


@given(st.lists(st.one_of(st.sampled_from(DEFAULT_WORDS), st.text(max_size=12)), max_size=6))
def test_expansion_contains_its_input_and_never_raises(words):
    expanded = expand_with_synonyms(words)
    assert set(words) <= set(expanded)
    assert len(expanded) == len(set(expanded))
    assert expanded[: len(dict.fromkeys(words))] == list(dict.fromkeys(words))


@pytest.mark.parametrize(
    ("word", "synonyms"),
    [
        ("send", {"transfer", "pay"}),
        ("approve", {"confirm", "accept", "allow"}),
        ("reject", {"deny", "cancel", "decline"}),
        ("unlock", {"login", "signin"}),
        ("swap", {"exchange", "trade"}),
    ],
)
def test_default_groups(word, synonyms):
    assert synonyms <= set(expand_with_synonyms([word]))


def test_groups_do_not_leak_into_each_other():
    assert "swap" not in expand_with_synonyms(["send"])
    assert "reject" not in expand_with_synonyms(["approve"])


# -- SynonymTable.from_json --------------------------------------------------------------------


def test_from_json_adds_groups_and_keeps_the_defaults():
    table = SynonymTable.from_json(b'{"groups": [["bridge", "crosschain"]]}')
    assert table.synonyms_of(stem("bridge")) == {stem("crosschain")}
    assert table.synonyms_of("send") == TABLE.synonyms_of("send")
    assert expand_with_synonyms(["crosschain"], table) == ["crosschain", "bridge"]


def test_from_json_accepts_text_and_can_drop_the_defaults():
    table = SynonymTable.from_json('{"groups": [["bridge", "crosschain"]]}', include_defaults=False)
    assert table.synonyms_of("send") == frozenset()
    assert expand_with_synonyms(["bridge"], table) == ["bridge", "crosschain"]


def test_from_json_merges_a_word_that_is_already_in_a_default_group():
    table = SynonymTable.from_json(orjson.dumps({"groups": [["send", "remit"]]}))
    assert {"transfer", "pay", "remit"} <= set(expand_with_synonyms(["send"], table))
    assert "send" in expand_with_synonyms(["remit"], table)


@pytest.mark.parametrize(
    "data",
    [
        b"[]",
        b'{"synonyms": []}',
        b'{"groups": {"send": ["transfer"]}}',
        b'{"groups": ["send", "transfer"]}',
        b'{"groups": [["send", 3]]}',
        b'{"groups": [[null]]}',
        b"not json",
        b"",
    ],
)
def test_from_json_rejects_bad_shapes_with_value_error(data):
    with pytest.raises(ValueError):
        SynonymTable.from_json(data)

"""A query's form, read from general English: a sentence leans on meaning, a question asking
what a screen shows asks for what screens were observed to hold."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzers import (
    asks_for_a_check,
    asks_what_is_shown,
    default_glossary,
    is_sentence,
    places_named,
)


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ("what is shown when a site asks to connect", True),
        ("what's on the signature popup", True),
        ("what did the first screen of onboarding show", True),
        ("what fields are on the transaction review before I accept", True),
        ("which buttons appear on the home screen", True),
        # a way, a cause, an event, or where something is: not what a screen shows
        ("how do I send ETH", False),
        ("which button opens the swap page", False),
        ("what happened when I clicked send", False),
        ("which network is the wallet on", False),
        ("show the interface in another language", False),
    ],
)
def test_a_question_asking_what_a_screen_shows_is_read_as_one(query: str, shown: bool) -> None:
    assert asks_what_is_shown(query) is shown


@pytest.mark.parametrize(
    ("query", "sentence"),
    [
        ("the box for how much to pay could not be found", True),
        ("where do I put the address of the person receiving the money", True),
        ("send flow", False),
        ("confirm footer button send screen", False),
        ("why did coin-overview-send fail on the home page", False),
    ],
)
def test_a_sentence_is_told_from_words_looked_for(query: str, sentence: bool) -> None:
    assert is_sentence(query) is sentence


def test_a_phrasal_verb_split_by_an_indefinite_pronoun_reads_as_its_expression() -> None:
    glossary = default_glossary()
    assert glossary.meanings("shut everything down") == glossary.meanings("shut down")
    assert glossary.meanings("shut down")


@pytest.mark.parametrize(
    ("query", "places"),
    [
        ("swap page", {"swap"}),
        ("errors on the unlock screen", {"unlock"}),
        ("what does the home view show", {"home"}),
        # where the query goes is not where something is done
        ("get to the preferences page", set()),
        ("go into the wallet's settings page", set()),
        ("how do I send ETH", set()),
        ("page", set()),
    ],
)
def test_a_place_is_the_word_before_page_screen_or_view(query: str, places: set[str]) -> None:
    assert places_named(query) == places


@given(st.lists(st.sampled_from(["the", "swap", "page", "to", "screen", "send", "on", "view"])))
def test_every_place_named_is_a_word_of_the_query_before_a_place_noun(said: list[str]) -> None:
    query = " ".join(said)
    for place in places_named(query):
        at = [i for i, word in enumerate(said[:-1]) if word == place]
        assert any(said[i + 1] in {"page", "screen", "view"} for i in at)


@pytest.mark.parametrize(
    ("query", "check"),
    [
        ("how can I tell the site now sees my account", True),
        ("make sure the transfer shows up in the activity list", True),
        ("check that the signature result is displayed", True),
        ("verify the dapp shows it is connected", True),
        # an action, a button's word, a question of another kind
        ("confirm the transaction", False),
        ("click the check box", False),
        ("how do I send ETH", False),
        ("tell me what the swap page shows", False),
    ],
)
def test_a_question_asking_how_to_check_something_is_read_as_one(query: str, check: bool) -> None:
    assert asks_for_a_check(query) is check

"""A query's form, read from general English: a sentence leans on meaning, a question asking
what a screen shows asks for what screens were observed to hold."""

import pytest

from analyzers import asks_what_is_shown, default_glossary, is_sentence


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

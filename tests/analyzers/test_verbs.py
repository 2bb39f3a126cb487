"""The verbs of everyday English, inflected by rule: what coverage reads as an action said in
other words."""

import pytest

from analyzers import is_verb
from analyzers.verbs import BASE_VERBS, IRREGULAR, inflections


@pytest.mark.parametrize(
    "word", ["pay", "pays", "paying", "paid", "arrived", "proposes", "sharing", "stopped", "tidied"]
)
def test_the_forms_of_an_everyday_verb_are_verbs(word: str) -> None:
    assert is_verb(word)


@pytest.mark.parametrize("word", ["airdrop", "rewards", "Solana", "key", "stake", "hardware"])
def test_things_are_not_verbs(word: str) -> None:
    """What nobody recorded shows up as a thing: those stay flagged when no step holds them."""
    assert not is_verb(word)


def test_every_form_is_a_verb_and_a_regular_one_starts_like_its_verb() -> None:
    for verb in sorted(BASE_VERBS):
        for form in inflections(verb):
            assert is_verb(form) and is_verb(form.upper())
            assert form in IRREGULAR.get(verb, ()) or form[0] == verb[0]

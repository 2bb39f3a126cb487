"""The verbs of everyday English, inflected by rule: what coverage reads as an action said in
other words."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzers import is_verb
from analyzers.verbs import BASE_VERBS, inflections


@pytest.mark.parametrize(
    "word", ["pay", "pays", "paying", "paid", "arrived", "proposes", "sharing", "stopped", "tidied"]
)
def test_the_forms_of_an_everyday_verb_are_verbs(word: str) -> None:
    assert is_verb(word)


@pytest.mark.parametrize("word", ["airdrop", "rewards", "Solana", "key", "stake", "hardware"])
def test_things_are_not_verbs(word: str) -> None:
    """What nobody recorded shows up as a thing: those stay flagged when no step holds them."""
    assert not is_verb(word)


@given(st.sampled_from(sorted(BASE_VERBS)))
def test_every_form_is_a_verb_and_starts_like_its_verb(verb: str) -> None:
    for form in inflections(verb):
        assert is_verb(form) and is_verb(form.upper())
        assert form[0] == verb[0]

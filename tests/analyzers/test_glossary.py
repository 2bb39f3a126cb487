"""The wallet glossary: everyday words add the app's words to a query, never take any away."""

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from analyzers import (
    Glossary,
    QueryTerm,
    SynonymTable,
    analyze_query,
    default_glossary,
    split_identifier,
    stem,
)
from analyzers.analyze import GLOSSARY_WEIGHT, SYNONYM_WEIGHT
from analyzers.glossary import FILLERS, MAX_FILLERS, query_words
from analyzers.glossary_data import DEFAULT_CONCEPTS

PLAIN = SynonymTable(glossary=Glossary(concepts=()))
"""The same synonyms without a glossary: what a query was before the glossary."""
EXPRESSION_WORDS = sorted({w for _, _, says in DEFAULT_CONCEPTS for e in says for w in e.split()})
words = st.sampled_from(EXPRESSION_WORDS) | st.from_regex(r"[a-z]{2,8}", fullmatch=True)
queries = st.lists(words, min_size=1, max_size=8).map(" ".join) | st.text(max_size=40)


def glossary_terms(query: str) -> dict[str, float]:
    return {t.token: t.weight for t in analyze_query(query) if t.kind == "glossary"}


def test_everyday_words_bring_the_app_words_at_a_lower_weight() -> None:
    assert glossary_terms("unlock with my passcode") == {"password": GLOSSARY_WEIGHT}
    assert {"secret", "recovery", "phras", "srp"} <= set(glossary_terms("type the seed words"))
    assert "eth" in glossary_terms("send some ether")
    assert GLOSSARY_WEIGHT < SYNONYM_WEIGHT < 1.0


def test_the_longest_expression_wins_and_its_words_are_one_concept() -> None:
    terms = {t.token: t for t in analyze_query("write down the seed words")}
    assert terms["seed"].concept == terms["word"].concept == terms["srp"].concept == "seed words"
    assert terms["seed"].weight == terms["word"].weight == 1.0


def test_adjacent_expressions_meaning_the_same_thing_are_one() -> None:
    (match,) = default_glossary().matches(query_words("raise the priority charge"))
    assert match.expression == "priority charge" and "gas fee" in match.means


def test_a_compound_identifier_is_matched_only_whole() -> None:
    assert default_glossary().matches(query_words("coin-overview-send")) == []
    assert default_glossary().matches(query_words("sendCoinsButton")) == []
    (match,) = default_glossary().matches(query_words("an erc-20 token"))
    assert (match.start, match.end) == (1, 2) and "token" in match.means


def test_gloss_is_the_query_followed_by_what_it_means() -> None:
    assert default_glossary().gloss("wire some ether") == "wire some ether (send, ETH)"
    assert default_glossary().gloss("coin-overview-send") is None


def strongest(terms: list[QueryTerm]) -> dict[str, float]:
    """Each token's highest weight (a token may stand for several concepts of a query)."""
    found: dict[str, float] = {}
    for term in terms:
        found[term.token] = max(found.get(term.token, 0.0), term.weight)
    return found


@given(queries)
@example("wire some ether over to a pal")
@example("seed words seed words")
def test_expansion_never_removes_or_weakens_the_query_s_own_terms(query: str) -> None:
    before = strongest(analyze_query(query, PLAIN))
    after = strongest(analyze_query(query))
    assert all(after[token] >= weight for token, weight in before.items())
    added = {t.token: t for t in analyze_query(query) if t.token not in before}
    assert all(t.kind == "glossary" and t.weight == GLOSSARY_WEIGHT for t in added.values())


@given(queries)
def test_expansion_is_deterministic(query: str) -> None:
    assert analyze_query(query) == analyze_query(query)
    assert Glossary().gloss(query) == default_glossary().gloss(query)


@given(queries)
def test_the_gloss_starts_with_the_query(query: str) -> None:
    gloss = default_glossary().gloss(query)
    assert gloss is None or gloss.startswith(query.strip())


identifier_words = st.sampled_from([w for w in EXPRESSION_WORDS if w.isalnum()]) | st.from_regex(
    r"[a-z]{2,8}", fullmatch=True
)
identifier_parts = st.lists(identifier_words, min_size=2, max_size=5)
WHOLE_EXPRESSIONS = {
    tuple(s for w in query_words(e) for s in w) for _, _, says in DEFAULT_CONCEPTS for e in says
}


@given(identifier_parts, st.sampled_from(["-", "_", "camel"]))
def test_identifier_queries_are_unchanged(parts: list[str], style: str) -> None:
    """An identifier (kebab, snake, camelCase) gains nothing unless it spells one whole
    expression (`erc-20`): its exact tier is the identifier alone."""
    if style == "camel":
        identifier = parts[0] + "".join(p.capitalize() for p in parts[1:])
    else:
        identifier = style.join(parts)
    if tuple(stem(p) for p in split_identifier(identifier)) in WHOLE_EXPRESSIONS:
        return
    assert glossary_terms(identifier) == {}
    assert analyze_query(identifier) == analyze_query(identifier, PLAIN)


def test_users_extend_the_glossary_through_the_synonyms_file() -> None:
    table = SynonymTable.from_json(
        orjson.dumps({"glossary": [{"says": ["moolah"], "means": ["balance"]}]})
    )
    assert {t.token for t in analyze_query("check my moolah", table)} >= {"moolah", "balanc"}
    assert "password" in {t.token for t in analyze_query("my passcode", table)}  # defaults stay
    only_mine = SynonymTable.from_json(
        orjson.dumps({"groups": [], "glossary": [{"says": ["moolah"], "means": ["balance"]}]}),
        include_defaults=False,
    )
    assert "password" not in {t.token for t in analyze_query("my passcode", only_mine)}


@pytest.mark.parametrize(
    "glossary",
    [
        {"says": "moolah", "means": ["balance"]},
        [{"says": ["moolah"]}],
        [{"says": [], "means": ["balance"]}],
        [{"says": ["moolah"], "means": [3]}],
        ["moolah"],
    ],
)
def test_a_malformed_glossary_is_refused_with_the_reason(glossary: object) -> None:
    with pytest.raises(ValueError, match="glossary"):
        SynonymTable.from_json(orjson.dumps({"glossary": glossary}))


def test_the_built_in_glossary_is_broad_and_never_translates_an_app_word_to_itself() -> None:
    assert len(DEFAULT_CONCEPTS) >= 40
    for name, means, says in DEFAULT_CONCEPTS:
        assert means and says, name
    assert default_glossary().matches(query_words("send")) == []


PHRASES = sorted(
    {
        e
        for _, _, says in DEFAULT_CONCEPTS
        for e in says
        if len(e.split()) > 1 and e.replace(" ", "").isalpha()
    }
)


def test_a_phrasal_verb_split_by_a_pronoun_or_particle_is_still_found() -> None:
    """`turn it off` means what `turn off` means; `log me back in` what `log in` means."""
    glossary = default_glossary()
    (off,) = glossary.matches(query_words("turn it off"))
    assert (off.start, off.end) == (0, 3)
    assert off.means == glossary.matches(query_words("turn off"))[0].means
    (back_in,) = glossary.matches(query_words("please log me back in"))
    assert (back_in.start, back_in.end) == (1, 5) and "unlock" in back_in.means
    assert glossary.matches(query_words("turn it back again off")) == []  # 3 fillers: too far
    assert glossary.matches(query_words("turn it")) == []  # never ends on a filler


FILLER_STEMS = {stem(word) for word in FILLERS}


@given(
    st.sampled_from(PHRASES),
    st.integers(0, 10),
    st.lists(st.sampled_from(FILLERS), min_size=1, max_size=MAX_FILLERS),
)
@example("go ahead", 0, ["back"])  # `go back` is an expression itself: it wins
@example("turn off", 0, ["it"])
def test_fillers_inside_an_expression_keep_its_meaning(
    expression: str, at: int, fillers: list[str]
) -> None:
    """Up to `MAX_FILLERS` filler words between an expression's words: its app words are still
    found, unless the fillers and its words spell another expression (`go back ahead`: `go back`
    is one, and an expression spelled word for word wins over one with words passed over)."""
    glossary = default_glossary()
    plain = glossary.matches(query_words(expression))
    words_ = expression.split()
    if len(plain) != 1 or (plain[0].start, plain[0].end) != (0, len(words_)):
        return  # not one match of all its words on its own (a shorter one wins inside it)
    at = 1 + at % (len(words_) - 1)
    found = glossary.matches(query_words(" ".join([*words_[:at], *fillers, *words_[at:]])))
    spelled_with_a_filler = any(
        FILLER_STEMS & {s for word in query_words(match.expression) for s in word}
        and match.expression != plain[0].expression
        for match in found
    )
    if not spelled_with_a_filler:
        assert set(plain[0].means) <= {word for match in found for word in match.means}


@pytest.mark.parametrize(
    ("query", "means"),
    [
        ("I don't have enough money for this", "insufficient funds"),
        ("refuse to connect", "reject"),
        ("what does the confirmation popup look like", "describe screen"),
        ("something was covered by a popup", "intercepts pointer events"),
        ("no offer for my tokens", "no trade route is available"),
    ],
)
def test_outcomes_refusals_and_looking_are_glossed(query: str, means: str) -> None:
    """Outcomes, refusals and looking at a screen in everyday words."""
    assert means in (default_glossary().gloss(query) or "")


def test_covering_a_cost_is_not_something_covering_a_button() -> None:
    assert "intercepts" not in glossary_terms("enough money to cover the fee")


@pytest.mark.parametrize(
    ("query", "means"),
    [
        ("a cross-chain transfer", "bridge"),  # `crosschain` alone missed `cross-chain`
        ("move coins across chains", "bridge"),
        ("from one chain to another", "bridge"),
        ("send some coins to my sister", "recipient"),
        ("paste the destination address", "address"),
        ("pay the miners more", "gas fee"),
    ],
)
def test_bridging_people_places_and_fees_are_glossed(query: str, means: str) -> None:
    """Moving between chains, who gets the money, where it goes and who is paid for a
    transaction."""
    assert means in (default_glossary().gloss(query) or "")


def test_switching_to_another_chain_is_not_bridging() -> None:
    """Going to another network is the network switcher's job, not a transfer between chains."""
    assert "bridge" not in (default_glossary().gloss("switch to another chain") or "")

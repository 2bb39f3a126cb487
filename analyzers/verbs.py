"""The verbs of general English: how a query says what was done, which the records never say
in its words.

A recorded step names what it did with a closed set of tool verbs (`click`, `type into`, `wait
for`, `go to`, `look at`: `engine.index.step_texts`); an agent says it with any verb of English
("paying someone", "the offer never arrived", "lower or raise the fee"). So an English verb no
step holds is an action said in other words, not a thing nobody recorded: what nobody recorded
shows up as a thing — a feature, a token, a chain, a screen (`airdrop`, `rewards`, `Solana`,
`dark mode`). Coverage therefore never flags a query for a verb alone when meaning found results
(`engine.query.coverage.by_meaning`).

The list is of words that are first of all verbs in everyday English (`pay`, `arrive`,
`propose`), inflected by rule (`pays`, `paying`, `paid`): words as often nouns or adjectives
(`reward`, `claim`, `export`, `key`, `stake`, `lock`) are left out, so a query about such a
thing is still flagged when no step holds it.
"""

from functools import cache

BASE_VERBS: frozenset[str] = frozenset(
    {
        *("accept", "achieve", "add", "admit", "agree", "allow", "announce", "appear", "apply"),
        *("arrive", "attempt", "avoid", "become", "begin", "behave", "believe", "belong"),
        *("borrow", "bother", "break", "bring", "build", "buy", "carry", "catch", "cause"),
        *("choose", "clarify", "collect", "complain", "complete", "conclude", "consider"),
        *("contain", "continue", "convert", "convince", "correct", "create", "decide"),
        *("declare", "deliver", "depend", "describe", "deserve", "destroy", "determine"),
        *("develop", "disappear", "discover", "display", "eat", "emerge", "enable"),
        *("encounter", "encourage", "enter", "establish", "expect", "explain", "fail"),
        *("fall", "feel", "fetch", "fill", "find", "finish", "fix", "follow", "forget"),
        *("forgive", "freeze", "gather", "grab", "grant", "grow", "handle", "hang", "happen"),
        *("hate", "hear", "help", "hesitate", "hide", "hit", "hold", "hope", "hurry"),
        *("identify", "ignore", "imagine", "improve", "include", "increase", "indicate"),
        *("inform", "insist", "install", "intend", "introduce", "invite", "involve", "join"),
        *("jump", "kick", "kill", "leave", "lend", "lie", "listen", "live", "locate"),
        *("lose", "love", "lower", "manage", "mention", "mind", "miss", "move", "notice"),
        *("obtain", "occur", "offer", "omit", "operate", "owe", "own", "pass", "pay"),
        *("perform", "permit", "persuade", "pick", "place", "plan", "prefer", "prepare"),
        *("pretend", "prevent", "proceed", "produce", "promise", "propose", "protect"),
        *("prove", "provide", "publish", "pull", "push", "raise", "reach", "react", "realize"),
        *("receive", "recognize", "recommend", "reduce", "refer", "reflect", "refuse"),
        *("regret", "reject", "relate", "rely", "remain", "remember", "remind", "remove"),
        *("repeat", "replace", "reply", "represent", "require", "respond", "retry", "return"),
        *("reveal", "ride", "rise", "roll", "ruin", "rush", "see", "seek", "sell", "shake"),
        *("share", "shoot", "shut", "sit", "sleep", "slide", "solve", "speak", "spend"),
        *("stand", "start", "stay", "steal", "stick", "stop", "succeed", "suffer", "suggest"),
        *("supply", "suppose", "surprise", "survive", "suspect", "swear", "teach", "tend"),
        *("thank", "throw", "tidy", "touch", "travel", "treat", "trust", "understand"),
        *("vanish", "visit", "wake", "walk", "want", "warn", "wash", "watch", "wear", "win"),
        *("wish", "wonder", "worry", "write", "yield"),
    }
)
"""Words first of all verbs in everyday English, in their base form."""
IRREGULAR: dict[str, tuple[str, ...]] = {
    "become": ("became",),
    "begin": ("began", "begun"),
    "break": ("broke", "broken"),
    "bring": ("brought",),
    "build": ("built",),
    "buy": ("bought",),
    "catch": ("caught",),
    "choose": ("chose", "chosen"),
    "eat": ("ate", "eaten"),
    "fall": ("fell", "fallen"),
    "feel": ("felt",),
    "find": ("found",),
    "forget": ("forgot", "forgotten"),
    "forgive": ("forgave", "forgiven"),
    "freeze": ("froze", "frozen"),
    "grow": ("grew", "grown"),
    "hang": ("hung",),
    "hear": ("heard",),
    "hide": ("hid", "hidden"),
    "hold": ("held",),
    "leave": ("left",),
    "lend": ("lent",),
    "lie": ("lay", "lain"),
    "lose": ("lost",),
    "pay": ("paid",),
    "ride": ("rode", "ridden"),
    "rise": ("rose", "risen"),
    "see": ("saw", "seen"),
    "seek": ("sought",),
    "sell": ("sold",),
    "shake": ("shook", "shaken"),
    "shoot": ("shot",),
    "sit": ("sat",),
    "sleep": ("slept",),
    "slide": ("slid",),
    "speak": ("spoke", "spoken"),
    "spend": ("spent",),
    "stand": ("stood",),
    "steal": ("stole", "stolen"),
    "stick": ("stuck",),
    "swear": ("swore", "sworn"),
    "teach": ("taught",),
    "throw": ("threw", "thrown"),
    "understand": ("understood",),
    "wake": ("woke", "woken"),
    "wear": ("wore", "worn"),
    "win": ("won",),
    "write": ("wrote", "written"),
}
"""Past forms English does not make by rule."""
_VOWELS = frozenset("aeiou")


def inflections(verb: str) -> frozenset[str]:
    """A base verb and its regular forms (`pay` -> `pays`, `payed`, `paying`; `arrive` ->
    `arrives`, `arrived`, `arriving`; `stop` -> `stopped`, `stopping` as well), with its
    irregular ones (`IRREGULAR`). Forms a rule makes that English does not use do no harm:
    nobody types them."""
    forms = {verb, *IRREGULAR.get(verb, ())}
    stem = verb[:-1] if verb.endswith("e") and not verb.endswith("ee") else verb
    if verb.endswith(("s", "x", "z", "ch", "sh")):
        forms.add(verb + "es")
    elif verb.endswith("y") and verb[-2:-1] not in _VOWELS:
        forms |= {verb[:-1] + "ies", verb[:-1] + "ied"}
    else:
        forms.add(verb + "s")
    forms |= {stem + "ed", stem + "ing"}
    if verb.endswith("ie"):
        forms.add(verb[:-2] + "ying")
    if len(verb) > 2 and verb[-1] not in _VOWELS | {"w", "x", "y"} and verb[-2] in _VOWELS:
        forms |= {verb + verb[-1] + "ed", verb + verb[-1] + "ing"}
    return frozenset(forms)


@cache
def _verb_forms() -> frozenset[str]:
    return frozenset(form for verb in BASE_VERBS for form in inflections(verb))


def is_verb(word: str) -> bool:
    """Whether a word is a form of an everyday English verb (`BASE_VERBS`).

    >>> is_verb("paying"), is_verb("arrived"), is_verb("paid"), is_verb("airdrop")
    (True, True, True, False)
    """
    return word.lower() in _verb_forms()

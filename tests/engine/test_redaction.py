"""Secrets never stored in clear: every form the adversarial run used.

Each record below typed a secret in one of the ways the adversarial run found kept in clear; the
scrubber must cut it, and every copy of it, from the record. Written unscrubbed (as another recorder
would), the index and the summaries must not hold it either.
"""

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import StepRecord, scrub_step
from engine.history import summarize_session
from engine.records import REDACTED, is_secret, looks_like_secret
from tests.conftest import Knowledge

PASSWORD = "Zanzibar-Quokka-77"
PHRASE_WORDS = [
    "quokka",
    "wombat",
    "zephyr",
    "fjord",
    "glyph",
    "kiwi",
    "lynx",
    "mango",
    "nymph",
    "oryx",
    "pixel",
    "quartz",
]
PHRASE = " ".join(PHRASE_WORDS)
PRIVATE_KEY = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
EARLIER = {"e5": ("textbox", "Password")}


def step(tool: dict[str, Any], **extra: Any) -> StepRecord:
    data = {
        "timestamp": "2026-01-15T12:00:00.000Z",
        "sessionId": "mm-secret",
        "tool": {"name": "mm_type", **tool},
        "outcome": {"ok": True},
        **extra,
    }
    return StepRecord.model_validate(data)


CASES: dict[str, tuple[StepRecord, str]] = {
    "a11yHint Password textbox": (
        step(
            {
                "input": {"text": PASSWORD},
                "target": {"a11yHint": {"role": "textbox", "name": "Password"}},
            }
        ),
        PASSWORD,
    ),
    "a11yRef of an earlier snapshot": (
        step({"input": {"text": PASSWORD}, "target": {"a11yRef": "e5"}}),
        PASSWORD,
    ),
    "testId unlock-pwd": (
        step({"input": {"text": PASSWORD}, "target": {"testId": "unlock-pwd"}}),
        PASSWORD,
    ),
    "input type password": (
        step({"input": {"inputType": "password", "text": PASSWORD}, "target": {"testId": "f"}}),
        PASSWORD,
    ),
    "phrase as words": (
        step({"input": {"text": PHRASE}, "target": {"testId": "import-input"}}),
        PHRASE,
    ),
    "phrase as a list": (
        step({"input": {"text": PHRASE_WORDS}, "target": {"testId": "import-input"}}),
        PHRASE_WORDS[3],
    ),
    "private key": (
        step({"input": {"text": "0x" + PRIVATE_KEY}, "target": {"testId": "import-input"}}),
        PRIVATE_KEY,
    ),
    "input.password": (
        step({"input": {"password": PASSWORD}, "target": {"testId": "unlock-submit"}}),
        PASSWORD,
    ),
    "nested input.fill.text": (
        step({"input": {"fill": {"selector": "#password", "text": PASSWORD}}}),
        PASSWORD,
    ),
    "textRedacted with copies": (
        step(
            {"input": {"text": REDACTED}, "target": {"testId": "f"}, "textRedacted": True},
            args={"text": PASSWORD},
            outcome={"ok": False, "error": {"code": "MM_X", "message": f'fill("{PASSWORD}")'}},
            observation={"testIds": [{"testId": "field", "text": f"typed {PASSWORD}"}]},
        ),
        PASSWORD,
    ),
    "textRedacted left in clear": (
        step({"input": {"text": PASSWORD}, "textRedacted": True}),
        PASSWORD,
    ),
    "phrase shown on screen": (
        step(
            {"name": "mm_describe_screen"},
            observation={
                "testIds": [{"testId": "recovery-phrase-reveal", "tag": "div", "text": PHRASE}],
                "a11y": {"nodes": [{"ref": "e1", "role": "paragraph", "name": PHRASE}]},
            },
        ),
        PHRASE_WORDS[5],
    ),
    "value of a secret input observed": (
        step(
            {"name": "mm_describe_screen"},
            observation={"testIds": [{"testId": "unlock-pwd", "tag": "input", "text": PASSWORD}]},
        ),
        PASSWORD,
    ),
}


def strings(value: Any) -> list[str]:
    """Every string value of a JSON structure."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


@pytest.mark.parametrize("case", CASES)
def test_every_copy_of_a_secret_is_cut(case: str) -> None:
    record, secret = CASES[case]
    scrubbed = scrub_step(record, EARLIER)
    assert not [s for s in strings(scrubbed.model_dump(mode="json")) if secret in s]
    if record.tool.input:
        assert scrubbed.tool.textRedacted is True


def test_text_length_of_the_typed_secret_is_kept() -> None:
    record, _ = CASES["testId unlock-pwd"]
    scrubbed = scrub_step(record)
    assert scrubbed.tool.input == {"text": REDACTED}
    assert scrubbed.tool.textLength == len(PASSWORD)


def test_a_ref_is_resolved_only_with_its_snapshot() -> None:
    """Without the earlier snapshot the ref says nothing: the caller must pass it."""
    record, _ = CASES["a11yRef of an earlier snapshot"]
    assert scrub_step(record) is record
    assert scrub_step(record, EARLIER).tool.input == {"text": REDACTED}


CHIP_GRID = {
    "testIds": [
        {"testId": f"recovery-phrase-chip-{i}", "tag": "div", "text": f"{i + 1}. {word}"}
        for i, word in enumerate(PHRASE_WORDS)
    ],
    "a11y": {
        "nodes": [
            {"ref": f"e{i}", "role": "listitem", "name": w} for i, w in enumerate(PHRASE_WORDS)
        ]
    },
}
A11Y_GRID = {
    "a11y": {
        "nodes": [
            {"ref": f"e{i}{part}", "role": "generic", "name": name}
            for i, word in enumerate(PHRASE_WORDS)
            for part, name in (("n", f"{i + 1}."), ("w", word), ("g", ""))
        ]
    }
}


@pytest.mark.parametrize("observation", [CHIP_GRID, A11Y_GRID], ids=["testIds", "a11y only"])
def test_a_phrase_shown_a_word_per_chip_is_cut_word_by_word(observation: dict[str, Any]) -> None:
    """The reveal and confirm screens show the phrase a word per element: no word may stay,
    not even the three-letter ones or the numbered forms."""
    record = step({"name": "mm_describe_screen"}, observation=observation)
    texts = strings(scrub_step(record).model_dump(mode="json"))
    assert not [t for t in texts for word in PHRASE_WORDS if word in t.split()]
    assert not [t for t in texts if any(word in t for word in PHRASE_WORDS if len(word) >= 4)]


ORDINARY = [
    step({"input": {"text": "0.01"}, "target": {"testId": "amount-input"}}),
    step({"input": {"text": "Send 0.01 ETH to account two"}, "target": {"testId": "memo"}}),
    step(
        {"name": "mm_click", "target": {"testId": "reveal-seed-phrase"}},
        observation={
            "testIds": [{"testId": "reveal-seed-phrase", "text": "Reveal Secret Recovery Phrase"}]
        },
    ),
    step(
        {"name": "mm_click", "target": {"testId": "import-srp-confirm"}},
        observation={"testIds": [{"testId": "import-srp-confirm", "tag": "button", "text": "Go"}]},
    ),
    step(
        {"name": "mm_describe_screen"},
        observation={
            "testIds": [{"testId": "srp-reveal-continue", "tag": "button", "text": "Continue"}],
            "a11y": {
                "nodes": [
                    {"ref": f"e{i}", "role": "tab", "name": name}
                    for i, name in enumerate(["tokens", "nfts", "activity", "send", "swap"] * 2)
                ]
            },
        },
    ),
]


@pytest.mark.parametrize("record", ORDINARY)
def test_ordinary_steps_are_left_alone(record: StepRecord) -> None:
    assert scrub_step(record) is record


@pytest.mark.parametrize(
    ("description", "secret"),
    [
        ("unlock-pwd", True),
        ("unlockPwd", True),
        ("create-password-input", True),
        ("srp-input-import__srp-note", True),
        ("textbox Private key", True),
        ("spinner", False),
        ("pin-extension-done", False),
        ("passenger-count", False),
        ("send-amount", False),
    ],
)
def test_secret_descriptions(description: str, secret: bool) -> None:
    assert is_secret(description) is secret


def test_what_looks_like_a_secret() -> None:
    assert looks_like_secret(PHRASE) and looks_like_secret(PHRASE_WORDS)
    assert looks_like_secret(PRIVATE_KEY) and looks_like_secret("0x" + PRIVATE_KEY)
    assert not looks_like_secret("send the tokens to my other account please right now ok")
    assert not looks_like_secret("0xabc")


SECRET_TEXT = st.text(min_size=4, max_size=40).filter(
    lambda s: s.strip() == s and s not in REDACTED and s != REDACTED
)
TARGETS = [
    {"testId": "unlock-password"},
    {"a11yHint": {"role": "textbox", "name": "Secret Recovery Phrase word 1"}},
    {"selector": "input[type=password]"},
]


@given(secret=SECRET_TEXT, target=st.sampled_from(TARGETS), redacted=st.booleans())
def test_no_copy_survives_whatever_the_secret(
    secret: str, target: dict[str, Any], redacted: bool
) -> None:
    """Whatever is typed into a secret field, no string of the record still holds it."""
    record = step(
        {"input": {"text": secret}, "target": target, "textRedacted": redacted or None},
        args={"text": secret},
        outcome={"ok": False, "error": {"code": "MM_X", "message": f"could not fill {secret}"}},
        observation={"testIds": [{"testId": "echo", "text": secret}]},
    )
    scrubbed = scrub_step(record)
    assert not [s for s in strings(scrubbed.model_dump(mode="json")) if secret in s]


def files_holding(folder: Path, needle: str) -> list[Path]:
    data = needle.encode()
    return [p for p in folder.rglob("*") if p.is_file() and data in p.read_bytes().lower()]


def test_secrets_in_files_of_others_never_reach_the_index(kb: Knowledge) -> None:
    """Records written unscrubbed (another recorder) are scrubbed again when indexed: the
    secret is in no index file and no search or summary finds or shows it."""
    session = kb.session("mm-others", goal="unlock and import")
    snapshot = kb.record(session, "mm_describe_screen", a11y=[("e5", *EARLIER["e5"])])
    for record, _ in CASES.values():
        kb.store.record_step(snapshot)  # where the a11yRef case's `e5` comes from
        kb.store.record_step(record.model_copy(update={"sessionId": session}))
    raw = b"".join(p.read_bytes() for p in kb.root.rglob("*.json"))
    secrets = ["zanzibar", "quokka", "wombat", PRIVATE_KEY]
    assert all(s.encode() in raw.lower() for s in secrets), "the files of others hold them"
    kb.index()
    for secret in secrets:
        assert files_holding(kb.index_dir, secret) == [], secret
        found = orjson.dumps([r.model_dump() for r in kb.search(secret).results])
        assert secret.encode() not in found.lower(), secret
    recipe = orjson.dumps(summarize_session(kb.store.load_session(session)).model_dump())
    assert not [s for s in secrets if s.encode() in recipe.lower()]

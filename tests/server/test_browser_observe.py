"""The pure parts of the browser tools: aria snapshot parsing, screen rules, targets, schemas,
extension ids — and that no code of ours runs a script in the page."""

import base64
import hashlib
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from engine.core import InvalidInput, validate
from engine.records import default_rules
from server.browser.actions import resolve_url
from server.browser.driver import InvalidScreenRules, extension_id, load_screen_rules, start_url
from server.browser.inputs import ClickInput, LaunchInput, TypeInput, schema_of
from server.browser.observe import element_hint, parse_aria_snapshot, parse_key
from server.cli import app
from tests.server.browser_helpers import DEMO_RULES
from tests.server.mcp_helpers import REPO

# What Chromium 156 / Playwright 1.65 answered for a page of awkward names (quotes, colons,
# brackets, a typed value, duplicates, nesting).
SNAPSHOT = """\
- main:
  - 'heading "Let''s \\"go\\": now" [level=2]'
  - button "quote \\" and \\\\ backslash": x
  - button "[x] y"
  - 'link "Link: 1"':
    - /url: /x
  - checkbox "Agree" [checked]
  - button "Continue" [disabled]
  - button "Continue"
  - text: "10"
  - dialog "Confirm it":
    - button "OK"
    - textbox "Name"
  - 'textbox "no: name ''x''"': typed secret
  - list:
    - listitem:
      - textbox
  - button "Menu" [expanded]
"""


def test_aria_snapshot_nodes_get_refs_in_document_order() -> None:
    nodes, refs = parse_aria_snapshot(SNAPSHOT)
    assert [(n.ref, n.role, n.name) for n in nodes] == [
        ("e1", "heading", 'Let\'s "go": now'),
        ("e2", "button", 'quote " and \\ backslash'),
        ("e3", "button", "[x] y"),
        ("e4", "link", "Link: 1"),
        ("e5", "checkbox", "Agree"),
        ("e6", "button", "Continue"),
        ("e7", "button", "Continue"),
        ("e8", "dialog", "Confirm it"),
        ("e9", "button", "OK"),
        ("e10", "textbox", "Name"),
        ("e11", "textbox", "no: name 'x'"),
        ("e12", "textbox", ""),
        ("e13", "button", "Menu"),
    ]
    flags = {n.ref: n.model_dump(exclude={"ref", "role", "name", "path"}) for n in nodes}
    assert flags["e5"] == {"checked": True} and flags["e6"] == {"disabled": True}
    assert flags["e13"] == {"expanded": True} and flags["e7"] == {}
    assert nodes[9].path == ["main", 'dialog "Confirm it"']
    assert nodes[11].path == ["main", "list", "listitem"]
    # The second "Continue" is the second element of that role and name; the unnamed textbox
    # is the third textbox (get_by_role without a name matches every textbox).
    assert (refs["e7"].nth, refs["e6"].nth, refs["e12"].nth) == (1, 0, 2)
    assert "typed secret" not in orjson.dumps([n.model_dump() for n in nodes]).decode()


def test_element_hint_is_the_role_and_name_of_the_first_line() -> None:
    hint = element_hint('- textbox "Password": hunter2')
    assert hint is not None and (hint.role, hint.name) == ("textbox", "Password")
    hint = element_hint("- 'button \"Pay: now\" [disabled]'")
    assert hint is not None and hint.name == "Pay: now"
    assert element_hint("- textbox") is None  # no name: nothing that survives a rename
    assert element_hint("") is None
    assert parse_key("text") is None and parse_key("/url") is None


@given(st.text(max_size=300))
def test_parsing_any_text_never_raises_and_numbers_refs(text: str) -> None:
    nodes, refs = parse_aria_snapshot(text)
    assert [n.ref for n in nodes] == [f"e{i}" for i in range(1, len(nodes) + 1)] == list(refs)
    element_hint(text)


@pytest.mark.parametrize(
    ("route", "screen"),
    [
        ("#/unlock", "unlock"),
        ("#/", "home"),
        ("#/activity", "home"),
        ("#/send", "send"),
        ("#/swap", "swap"),
        ("#/confirm-transaction", "confirm-transaction"),
        ("#/settings", "settings"),
    ],
)
def test_demo_rules_name_every_route_of_the_demo_app(route: str, screen: str) -> None:
    rules = load_screen_rules(DEMO_RULES)
    for query in ("", "?variant=renamed"):
        # account-menu-icon is visible on every unlocked route of the demo app.
        assert (
            rules.detect(f"http://127.0.0.1:8123/{query}{route}", ["account-menu-icon"]) == screen
        )


def test_metamask_rules_would_call_the_demo_swap_screen_home() -> None:
    """Why the demo app ships its own rules."""
    swap = "http://127.0.0.1:8123/#/swap"
    assert default_rules().detect(swap, ["account-menu-icon", "swap-amount-input"]) == "home"
    assert load_screen_rules(None) is default_rules()


def test_a_bad_rules_file_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "rules.json"
    bad.write_text('{"url": [["(", "x"]]}')
    with pytest.raises(InvalidScreenRules, match=r"rules\.json"):
        load_screen_rules(bad)
    with pytest.raises(InvalidScreenRules):
        load_screen_rules(tmp_path / "missing.json")


def test_extension_ids_are_chromiums(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"manifest_version": 3, "name": "x", "version": "1"}')
    digest = hashlib.sha256(str(tmp_path.resolve()).encode()).hexdigest()[:32]
    assert extension_id(tmp_path) == digest.translate(
        str.maketrans("0123456789abcdef", "abcdefghijklmnop")
    )
    key = base64.b64encode(b"public key bytes").decode()
    (tmp_path / "manifest.json").write_text(orjson.dumps({"key": key}).decode())
    assert extension_id(tmp_path) == "".join(
        chr(ord("a") + int(c, 16)) for c in hashlib.sha256(b"public key bytes").hexdigest()[:32]
    )
    (tmp_path / "home.html").write_text("<p>")
    assert start_url(None, tmp_path, "abc") == "chrome-extension://abc/home.html"
    assert start_url("http://x/", tmp_path, "abc") == "http://x/"


def test_routes_resolve_against_the_current_page() -> None:
    assert (
        resolve_url("#/send", "http://h:1/?variant=renamed#/")
        == "http://h:1/?variant=renamed#/send"
    )
    assert resolve_url("http://other/", "http://h:1/#/") == "http://other/"


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"testId": "a", "selector": "#a"},
        {"a11yRef": "7"},
        {"a11yHint": {"role": "buton", "name": "Send"}},
        {"a11yHint": {"role": "button"}},
        {"testId": "a", "timeoutMs": 0},
        {"testId": "a", "timeoutMs": "5"},
        {"testId": "a", "force": True},
    ],
)
def test_a_target_is_exactly_one_valid_locator(args: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        validate(ClickInput, args)


def test_valid_targets_and_launches() -> None:
    hint = validate(ClickInput, {"a11yHint": {"role": "button", "name": "Send"}})
    target = hint.step_target()
    assert target.a11yHint is not None and target.a11yHint.name == "Send"
    assert validate(TypeInput, {"a11yRef": "e3", "text": ""}).timeoutMs > 0
    with pytest.raises(InvalidInput, match="url"):
        validate(LaunchInput, {"url": "ftp://x"})
    with pytest.raises(InvalidInput, match="extensionPath"):
        validate(LaunchInput, {"extensionPath": str(REPO)})
    with pytest.raises(InvalidInput, match="url, extensionPath"):
        validate(LaunchInput, {"goal": "nothing to open"})


def test_schemas_are_generated_without_noise() -> None:
    schema = schema_of(ClickInput)
    assert schema["additionalProperties"] is False
    assert schema["properties"]["testId"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 200,
        "description": "The data-testid",
    }
    text = orjson.dumps(schema).decode()
    assert '"title"' not in text and '"null"' not in text


FORBIDDEN = re.compile(
    r"\.\s*(evaluate|evaluate_all|evaluate_handle|add_init_script|expose_function|"
    r"expose_binding|add_script_tag)\s*\("
)


def test_no_code_of_ours_runs_a_script_in_the_page() -> None:
    """LavaMoat scuttling and strict CSPs break injected scripts (SPEC-04 §2.1)."""
    sources = [p for d in ("server", "engine") for p in sorted((REPO / d).rglob("*.py"))]
    assert any(p.name == "observe.py" for p in sources)
    offenders = [
        f"{p.relative_to(REPO)}:{n}"
        for p in sources
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if FORBIDDEN.search(line)
    ]
    assert offenders == []
    assert FORBIDDEN.search("await page.evaluate('1')") and FORBIDDEN.search(
        "ctx.add_init_script(x)"
    )


def test_serve_refuses_an_unreadable_rules_file(tmp_path: Path) -> None:
    bad = tmp_path / "rules.json"
    bad.write_text("{not json")
    args = ["serve", "--root", str(tmp_path / "root"), "--index", str(tmp_path / "index")]
    result = CliRunner().invoke(app, [*args, "--screen-rules", str(bad)])
    assert result.exit_code == 2, result.output
    assert "cannot serve" in result.output and "screen rules" in result.output
    assert not (tmp_path / "index").exists()

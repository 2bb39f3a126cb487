"""The web page's guarded routes over plain HTTP, against a real server: screenshots only from
inside their session, changes only from the page itself, the same Host/Origin rules as MCP.

Every refusal leaves the knowledge root as it was (`superseded.json` is never written)."""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import orjson
import pytest

from explorer import knowhow_command
from tests.server.mcp_helpers import free_port, stop
from tests.server.ui_helpers import PNG, SWAP_SESSION, UiServer, ui_server

pytestmark = pytest.mark.slow
STEP = f"{SWAP_SESSION}/0007-mm_click"
DECISIONS = Path(SWAP_SESSION) / "superseded.json"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    with ui_server(tmp_path_factory.mktemp("ui-guard")) as running:
        yield running


def page_token(server: UiServer) -> str:
    html = server.get("/ui/").text
    return html.split('name="knowhow-page" content="', 1)[1].split('"', 1)[0]


def supersede_body(reason: str = "the button moved") -> bytes:
    return orjson.dumps({"stepId": STEP, "reason": reason})


def test_a_good_screenshot_is_served_as_an_image(server: UiServer) -> None:
    answer = server.get(f"/ui/shot?step={server.shot_steps['good']}")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/png"
    assert answer.content == PNG


@pytest.mark.parametrize(
    ("case", "status"),
    [("traversal", 400), ("absolute", 400), ("missing", 404), ("huge", 400), ("link", 400)],
)
def test_a_screenshot_outside_its_session_missing_or_huge_is_refused(
    server: UiServer, case: str, status: int
) -> None:
    answer = server.get(f"/ui/shot?step={server.shot_steps[case]}")
    assert answer.status_code == status, answer.text
    assert answer.json()["ok"] is False
    assert "root:" not in answer.text  # /etc/passwd never leaks


@pytest.mark.parametrize("step", ["../../etc/passwd", f"{SWAP_SESSION}/..", "mm-x/../../y"])
def test_a_step_id_that_could_leave_the_root_is_refused(server: UiServer, step: str) -> None:
    answer = server.get(f"/ui/shot?step={step}")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "MM_INVALID_INPUT"


def test_a_foreign_origin_cannot_supersede(server: UiServer) -> None:
    token = page_token(server)
    answer = server.post(
        "/ui/api/supersede",
        supersede_body(),
        **{"Content-Type": "application/json", "X-Knowhow-Page": token},
        Origin="http://evil.example",
    )
    assert answer.status_code == 403
    assert not (server.root / DECISIONS).exists()


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "application/json"},  # no page token: a form or fetch from elsewhere
        {"Content-Type": "text/plain", "X-Knowhow-Page": "TOKEN"},  # a simple cross-site POST
        {
            "Content-Type": "application/json",
            "X-Knowhow-Page": "TOKEN",
            "Sec-Fetch-Site": "cross-site",
        },
        {"Content-Type": "application/json", "X-Knowhow-Page": "stale"},
    ],
)
def test_a_change_not_sent_by_the_page_changes_nothing(
    server: UiServer, headers: dict[str, str]
) -> None:
    token = page_token(server)
    sent = {k: v.replace("TOKEN", token) for k, v in headers.items()}
    answer = server.post("/ui/api/supersede", supersede_body(), **sent)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "MM_INVALID_INPUT"
    assert not (server.root / DECISIONS).exists()


def test_a_foreign_host_is_refused_on_loopback(server: UiServer) -> None:
    assert server.get("/ui/", Host="attacker.example").status_code == 421


def test_pages_forbid_inline_and_foreign_scripts(server: UiServer) -> None:
    policy = server.get("/ui/").headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy


def test_supersede_then_restore_is_what_the_tool_writes(server: UiServer) -> None:
    token = page_token(server)
    headers = {"Content-Type": "application/json", "X-Knowhow-Page": token}
    done = server.post("/ui/api/supersede", supersede_body("renamed in 12.3"), **headers).json()
    assert done["ok"] is True and done["result"]["source"] == "explicit"
    stored = orjson.loads((server.root / DECISIONS).read_bytes())
    assert stored["steps"]["0007-mm_click"]["reason"] == "renamed in 12.3"
    body = orjson.dumps({"stepId": STEP})
    restored = server.post("/ui/api/restore", body, **headers).json()
    assert restored["ok"] is True, restored
    assert not (server.root / DECISIONS).exists()  # the only decision withdrawn
    again = server.post("/ui/api/restore", body, **headers).json()
    assert again["error"]["code"] == "MM_INVALID_INPUT"  # nothing to restore


def test_a_detected_supersession_is_not_restored_by_hand(server: UiServer) -> None:
    token = page_token(server)
    headers = {"Content-Type": "application/json", "X-Knowhow-Page": token}
    detected = "mm-mk7503cd-qnpu07/0035-mm_click"
    before = (server.root / "mm-mk7503cd-qnpu07" / "superseded.json").read_bytes()
    answer = server.post("/ui/api/restore", orjson.dumps({"stepId": detected}), **headers).json()
    assert answer["error"]["code"] == "MM_INVALID_INPUT"
    assert "detection" in answer["error"]["message"]
    assert (server.root / "mm-mk7503cd-qnpu07" / "superseded.json").read_bytes() == before


def test_knowhow_ui_starts_a_server_and_says_where_or_opens_the_running_one(
    server: UiServer, tmp_path: Path
) -> None:
    """Without a browser (`--no-open`) the command prints the page's address; when a knowhow
    server already answers there, it prints that one's and returns at once."""
    port = free_port()
    args = ["ui", "--no-open", "--port", str(port), "--root", str(server.root)]
    with (tmp_path / "ui.log").open("w") as errlog:
        started = subprocess.Popen(
            [*knowhow_command(), *args, "--index", str(tmp_path / "index")],
            stdout=subprocess.PIPE,
            stderr=errlog,
        )
    try:
        assert started.stdout is not None
        line = started.stdout.readline().decode()
        assert line.strip() == f"knowhow's page: http://127.0.0.1:{port}/ui/"
        assert httpx2.get(line.split(": ", 1)[1].strip(), timeout=30).status_code == 200
        again = subprocess.run(
            [*knowhow_command(), "ui", "--no-open", "--port", str(port)],
            capture_output=True,
            timeout=60,
            check=True,
        )
        assert again.stdout.decode().strip() == line.strip()
    finally:
        stop(started)
        if started.stdout is not None:
            started.stdout.close()

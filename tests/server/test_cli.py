"""The `knowhow` CLI through typer's CliRunner, on a real root and index."""

import json
import os

import pytest
from typer.testing import CliRunner

from engine.index import IndexLayout
from server.cli import app

SEND, SWAP = "mm-cli-send", "mm-cli-swap"


@pytest.fixture(autouse=True)
def no_knowhow_environment(monkeypatch):
    for name in ("KNOWHOW_ROOT", "KNOWHOW_INDEX", "KNOWHOW_SYNONYMS", "KNOWHOW_SESSION"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def cli(kb):
    kb.session(SWAP, hours_ago=50, goal="Swap ETH for DAI", flow_tags=["swap"])
    kb.step(SWAP, test_id="swap-button", screen="swap")
    kb.session(SEND, hours_ago=1, goal="Send 0.1 ETH", flow_tags=["send"], branch="feature/send")
    kb.step(SEND, "mm_describe_screen", screen="home")
    kb.step(SEND, test_id="coin-overview-send-button", screen="send")
    kb.step(SEND, test_id="send-continue", ok=False, screen="send", error=("TIMEOUT", "slow"))
    kb.step(SEND, test_id="send-continue", screen="confirm")
    runner = CliRunner()

    def run(*args):
        return runner.invoke(app, [*args, "--root", str(kb.root), "--index", str(kb.index_dir)])

    run.kb = kb
    return run


def json_lines(result):
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def ok_result(result):
    assert result.exit_code == 0, result.output
    [body] = json_lines(result)
    assert body["ok"] is True
    return body["result"]


def error_of(result):
    assert result.exit_code == 2, result.output
    [body] = json_lines(result)
    assert body["ok"] is False
    return body["error"]


def test_index_reports_what_it_did_in_the_envelope(cli):
    report = ok_result(cli("index", "--json"))
    assert (report["sessionsIndexed"], report["steps"], report["skipped"]) == (2, 5, [])
    again = ok_result(cli("index", "--json"))
    assert (again["sessionsIndexed"], again["sessionsUnchanged"]) == (0, 2)


def test_index_failure_is_an_error_envelope_not_a_traceback(cli, tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the index folder should be")
    args = ["index", "--json", "--root", str(cli.kb.root), "--index", str(blocked / "index")]
    error = error_of(CliRunner().invoke(app, args))
    assert error["code"] == "MM_WRITE_FAILED"
    assert (
        "not-a-folder" in error["message"] and "knowledge files are untouched" in error["message"]
    )


def test_index_names_skipped_files(cli):
    bad = cli.kb.root / SEND / "steps" / "0009-broken.json"
    bad.write_text("{")
    result = cli("index")
    assert result.exit_code == 0
    assert "indexed 5 steps in 2 sessions" in result.stdout
    assert "skipped" in result.stderr
    assert "0009-broken.json" in result.stderr


def test_reindex_builds_a_new_generation(cli):
    cli("index", "--json")
    report = ok_result(cli("reindex", "--json"))
    assert report["sessionsIndexed"] == 2
    assert IndexLayout(cli.kb.index_dir).current().name == "gen-0002"


def test_search_json(cli):
    cli("index")
    page = ok_result(cli("search", "send continue", "--json", "--limit", "2"))
    assert (page["total"], page["limit"], page["hasMore"]) == (4, 2, True)  # goal: "Send …"
    top = page["results"][0]
    assert top["stepId"] == f"{SEND}/0004-mm_click"
    assert top["target"] == {"testId": "send-continue"}
    assert "testId:send-continue" in top["matchedFields"]


def test_search_filters_from_options(cli):
    cli("index")
    failed = ok_result(cli("search", "send", "--json", "--failed", "--tool", "click"))
    assert [r["stepId"] for r in failed["results"]] == [f"{SEND}/0003-mm_click"]
    swaps = ok_result(cli("search", "eth", "--json", "--flow-tag", "swap"))
    assert [r["sessionId"] for r in swaps["results"]] == [SWAP]
    one = ok_result(cli("search", "eth", "--json", "--scope", SWAP))
    assert [r["stepId"] for r in one["results"]] == [f"{SWAP}/0001-mm_click"]


def test_search_human_output(cli):
    cli("index")
    result = cli("search", "swap")
    assert result.exit_code == 0
    assert "search 'swap'" in result.stdout


def test_search_marks_a_result_that_deserves_caution(cli):
    step_id = cli.kb.step(SEND, test_id="delete-account-confirm", screen="home")
    cli("index")
    [row] = [
        r for r in ok_result(cli("search", "home", "--json"))["results"] if r["stepId"] == step_id
    ]
    assert row["caution"]["reasons"] == ["destructive"]
    table = cli("search", "home").stdout
    [line] = [line for line in table.splitlines() if step_id.split("/")[1] in line]
    assert "(caution)" in line
    assert not any("(caution)" in other for other in table.splitlines() if other != line)


def test_sessions_json(cli):
    cli("index")
    found = ok_result(cli("sessions", "--json"))
    assert [(s["sessionId"], s["stepCount"], s["failedStepCount"]) for s in found["sessions"]] == [
        (SEND, 4, 1),
        (SWAP, 1, 0),
    ]
    branch = ok_result(cli("sessions", "--json", "--git-branch", "feature/send"))
    assert [s["sessionId"] for s in branch["sessions"]] == [SEND]


def test_last_json_defaults_to_the_newest_session(cli):
    cli("index")
    steps = ok_result(cli("last", "--json", "-n", "2"))
    assert [s["stepId"] for s in steps["steps"]] == [
        f"{SEND}/0003-mm_click",
        f"{SEND}/0004-mm_click",
    ]
    everywhere = ok_result(cli("last", "--json", "-n", "10", "--scope", "all"))
    assert everywhere["total"] == 5
    swap = ok_result(cli("last", "--json", "--session", SWAP))
    assert [s["stepId"] for s in swap["steps"]] == [f"{SWAP}/0001-mm_click"]


def test_summarize_json(cli):
    cli("index")
    recipe = ok_result(cli("summarize", "--json"))
    assert recipe["session"]["sessionId"] == SEND
    assert recipe["screens"] == ["home", "send", "confirm"]
    assert recipe["failures"][0]["recoveredBy"]["stepId"] == f"{SEND}/0004-mm_click"
    swap = ok_result(cli("summarize", SWAP, "--json"))
    assert [a["target"] for a in swap["actions"]] == ["testId:swap-button"]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("search", "", "--json"), "MM_INVALID_INPUT"),
        (("search", "x" * 201, "--json"), "MM_INVALID_INPUT"),
        (("search", "send", "--json", "--limit", "101"), "MM_INVALID_INPUT"),
        (("search", "send", "--json", "--since-hours", "721"), "MM_INVALID_INPUT"),
        (("search", "send", "--json", "--scope", "../etc"), "MM_INVALID_INPUT"),
        (("last", "--json", "-n", "0"), "MM_INVALID_INPUT"),
        (("sessions", "--json", "--limit", "51"), "MM_INVALID_INPUT"),
        (("summarize", "--json", "--scope", "all"), "MM_INVALID_INPUT"),
        (("summarize", "mm-never-recorded", "--json"), "MM_NOT_FOUND"),
    ],
)
def test_errors_exit_2_with_the_error_envelope(cli, args, code):
    cli("index")
    error = error_of(cli(*args))
    assert error["code"] == code
    assert error["message"]


def test_invalid_input_names_the_field(cli):
    cli("index")
    assert error_of(cli("search", "send", "--json", "--limit", "0"))["message"].startswith("limit:")


def test_errors_without_json_go_to_stderr(cli):
    cli("index")
    result = cli("search", "send", "--limit", "0")
    assert result.exit_code == 2
    assert "MM_INVALID_INPUT" in result.stderr
    assert result.stdout == ""


def test_search_without_an_index_says_how_to_build_it(cli):
    error = error_of(cli("search", "send", "--json"))
    assert error["code"] == "MM_INDEX_UNAVAILABLE"
    assert "knowhow index" in error["message"]


def test_settings_come_from_the_environment(cli, monkeypatch):
    monkeypatch.setenv("KNOWHOW_ROOT", str(cli.kb.root))
    monkeypatch.setenv("KNOWHOW_INDEX", str(cli.kb.index_dir))
    runner = CliRunner()
    assert runner.invoke(app, ["index"]).exit_code == 0
    page = ok_result(runner.invoke(app, ["search", "swap", "--json"]))
    assert page["results"][0]["sessionId"] == SWAP


def test_synonym_file_from_the_environment_is_used(cli, monkeypatch, tmp_path):
    synonyms = tmp_path / "synonyms.json"
    synonyms.write_text('{"groups": [["exchange", "dex"], ["swap", "dex"]]}')
    monkeypatch.setenv("KNOWHOW_SYNONYMS", str(synonyms))
    cli("index")
    page = ok_result(cli("search", "dex", "--json"))
    assert [r["sessionId"] for r in page["results"]] == [SWAP]


def test_batch_search_writes_a_trec_run_and_prints_latencies(cli, tmp_path):
    cli("index")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        '{"qid": "q1", "query": "swap"}\n\n{"qid": "q2", "query": "send continue"}\n'
        '{"qid": "q3", "query": "nothing matches qqqzzz"}\n'
    )
    run_file = tmp_path / "run.trec"
    result = cli("batch-search", "--queries", str(queries), "--run", str(run_file), "--k", "2")
    assert result.exit_code == 0, result.output
    latencies = json.loads(result.stdout.splitlines()[-1])
    assert set(latencies) == {"p50_ms", "p95_ms", "p99_ms", "cpu_p50_ms"}
    assert 0 <= latencies["p50_ms"] <= latencies["p95_ms"] <= latencies["p99_ms"]
    assert latencies["cpu_p50_ms"] >= 0
    rows = [line.split() for line in run_file.read_text().splitlines()]
    assert [(r[0], r[1], r[3], r[5]) for r in rows] == [
        ("q1", "Q0", "1", "knowhow"),
        ("q2", "Q0", "1", "knowhow"),
        ("q2", "Q0", "2", "knowhow"),
    ]
    assert rows[0][2] == f"{SWAP}/0001-mm_click"
    assert float(rows[1][4]) >= float(rows[2][4])


def test_batch_search_skips_an_empty_query_by_name_and_answers_the_rest(cli, tmp_path):
    cli("index")
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"qid": "q1", "query": ""}\n{"qid": "q2", "query": "send"}\n')
    run_file = tmp_path / "run.trec"
    result = cli("batch-search", "--queries", str(queries), "--run", str(run_file))
    assert result.exit_code == 0
    assert "skipped query 'q1'" in result.stderr
    answered = {line.split()[0] for line in run_file.read_text().splitlines()}
    assert answered == {"q2"}


def test_a_step_name_that_is_not_utf8_is_skipped_and_reported(cli):
    """Attack: one such name crashed index/reindex and left orphan generations."""
    steps = cli.kb.root / SEND / "steps"
    (steps / os.fsdecode(b"0009-\xff\xfe.json")).write_bytes(b"{}")
    for command in ("index", "reindex"):
        result = cli(command, "--json")
        assert result.exit_code == 0, result.output
        [body] = json_lines(result)
        report = body.get("result", body)
        assert report["steps"] == 5
        assert [s["path"] for s in report["skipped"]] == [str(steps / "0009-\ufffd\ufffd.json")]
        assert "UTF-8" in report["skipped"][0]["reason"]
    generations = sorted(p.name for p in cli.kb.index_dir.iterdir() if p.name.startswith("gen-"))
    assert generations[-1] == IndexLayout(cli.kb.index_dir).current().name == "gen-0002"
    assert cli.kb.search("swap").total == 1
    assert cli.kb.search("coin overview send").total >= 1


def test_timeline_json_around_a_step_and_across_sessions(cli):
    cli("index")
    anchor = f"{SEND}/0002-mm_click"
    line = ok_result(cli("timeline", anchor, "--before", "1", "--after", "1", "--json"))
    assert line["anchor"]["stepId"] == anchor
    assert [s["stepId"] for s in line["before"]] == [f"{SEND}/0001-mm_describe_screen"]
    assert [s["stepId"] for s in line["after"]] == [f"{SEND}/0003-mm_click"]
    assert line["sessions"][SEND]["goal"] == "Send 0.1 ETH"
    across = ok_result(cli("timeline", "--query", "swap button", "--scope", "all", "--json"))
    assert across["anchor"]["stepId"] == f"{SWAP}/0001-mm_click"
    assert [s["stepId"] for s in across["after"]][:1] == [f"{SEND}/0001-mm_describe_screen"]
    assert error_of(cli("timeline", anchor, "--before", "51", "--json"))["message"].startswith(
        "before"
    )
    human = cli("timeline", anchor)
    assert human.exit_code == 0 and anchor in human.stdout and "Send 0.1 ETH" in human.stdout


def test_supersede_writes_the_decision_and_the_next_index_hides_the_step(cli):
    cli("index")
    old, new = f"{SWAP}/0001-mm_click", f"{SEND}/0002-mm_click"
    done = ok_result(cli("supersede", old, "--by", new, "--json"))
    assert done["supersededBy"]["stepId"] == new
    assert (cli.kb.root / SWAP / "superseded.json").is_file()
    cli("index")
    found = ok_result(cli("search", "swap button", "--json"))["results"]
    assert found and old not in {r["stepId"] for r in found}
    cycle = error_of(cli("supersede", new, "--by", old, "--json"))
    assert cycle["code"] == "MM_INVALID_INPUT" and cycle["message"].startswith("supersededBy")


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_batch_search_leaves_superseded_steps_out(cli, tmp_path, mode):
    old, new = f"{SWAP}/0001-mm_click", f"{SEND}/0002-mm_click"
    ok_result(cli("supersede", old, "--by", new, "--json"))
    cli("index")
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"qid": "q1", "query": "swap button"}\n')
    run_file = tmp_path / "run.trec"
    result = cli("batch-search", "--queries", str(queries), "--run", str(run_file), "--mode", mode)
    assert result.exit_code == 0, result.output
    found = [line.split()[2] for line in run_file.read_text().splitlines()]
    assert found and old not in found


def test_duplicates_and_cluster_json_and_tables(cli):
    cli("index")
    found = ok_result(cli("duplicates", "--type", "step", "--threshold", "0", "--json"))
    [group] = [g for g in found["groups"] if "send continue" in (g["text"] or "")]
    assert group["count"] == 2 and group["distinctTexts"] == 2
    assert sorted(group["examples"]) == [f"{SEND}/0003-mm_click", f"{SEND}/0004-mm_click"]
    assert ok_result(cli("duplicates", "--flow-tag", "swap", "--json"))["groups"] == []
    clusters = ok_result(cli("cluster", "--type", "step", "-n", "2", "--json"))
    assert len(clusters["clusters"]) == 2 and clusters["memories"] == 4
    assert "top terms" in cli("cluster", "-n", "2").stdout
    assert "send continue" in cli("duplicates", "--threshold", "0").stdout


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("duplicates", "--threshold", "1.5"), "similarityThreshold"),
        (("duplicates", "--type", "workflow"), "types.0"),
        (("duplicates", "--limit", "0"), "limit"),
        (("cluster", "--clusters", "51"), "nClusters"),
        (("cluster", "-n", "1"), "nClusters"),
        (("cluster", "--type", "action"), "type"),
    ],
)
def test_duplicates_and_cluster_bad_input_names_the_field(cli, args, field):
    assert error_of(cli(*args, "--json"))["message"].startswith(f"{field}:")


@pytest.mark.parametrize(
    ("queries", "says"),
    [
        (None, "queries: cannot read"),  # no such file
        ("", "queries: cannot read"),  # a folder
        ('{"qid": "q1", "query": "swap"}\nswap\n', "queries: line 2 is not JSON"),
        ('{"qid": "q1", "query": "swap"}\n["q2", "send"]\n', "queries: line 2 is not an object"),
        ('{"query": "swap"}\n', "queries: line 1 has no qid"),
    ],
)
def test_batch_search_refuses_a_queries_file_it_cannot_read_in_one_line(
    cli, tmp_path, queries, says
):
    """Attack: a missing file, a folder or a bad line printed a traceback (and a missing file
    left an empty run file behind)."""
    cli("index")
    path = tmp_path / "queries"
    if queries is not None:
        path.mkdir() if queries == "" else path.write_text(queries)
    run_file = tmp_path / "run.trec"
    result = cli("batch-search", "--queries", str(path), "--run", str(run_file))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"MM_INVALID_INPUT: {says}"), result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.output
    assert not run_file.exists()


def test_batch_search_names_a_run_file_it_cannot_write(cli, tmp_path):
    cli("index")
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"qid": "q1", "query": "swap"}\n')
    result = cli("batch-search", "--queries", str(queries), "--run", str(tmp_path / "no" / "run"))
    assert result.exit_code == 2, result.output
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.output
    assert str(tmp_path / "no" / "run") in result.stderr

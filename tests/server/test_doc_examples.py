"""Every MCP example in the README, in docs/ and in the tools' own descriptions finds something on
the data `make run` installs, called through a real MCP client over stdio.

What counts as an example (so a new one cannot escape the test):
- in markdown, a code span or a line of a code block that is a tool name and its JSON arguments,
  `mm_knowledge_search {"query": "swap"}`;
- a code block of JSON objects in a section whose heading names a tool (`### mm_knowledge_last`):
  that tool's arguments;
- in a markdown table with a column whose header says "example", each code span of that column
  that starts with `{`, for the tool named in the row's first cell;
- in a tool's description, each JSON object it shows, for that tool (or for the tool named
  just before it).
An example that is not valid JSON (`"mm-…"` is valid JSON, `{…}` is not) fails, as does one
whose call answers an error or nothing at all. Knowledge tools are called on one server: the
examples that read first, then those that write (start a session, record, supersede). Browser
tool examples need a browser and an app, so they are checked against the tool's input schema.
"""

import inspect
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client

from server.cli.demo import demo
from tests.server.first_hour import KNOWHOW, envelope, made_run, spawned

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
WRITERS = ("knowledge_start_session", "knowledge_record_step", "knowledge_supersede")
TOOL = re.compile(r"mm_[a-z_]+")
SPAN = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Example:
    where: str
    tool: str
    text: str

    def arguments(self) -> dict[str, Any]:
        try:
            args = json.loads(self.text)
        except json.JSONDecodeError as error:
            raise AssertionError(f"{self.where}: example is not JSON: {self.text}") from error
        assert isinstance(args, dict), f"{self.where}: {self.text}"
        return args


def documents() -> list[Path]:
    """The README, every page of docs/ and the agent skills."""
    docs = sorted((REPO / "docs").rglob("*.md"))
    return [REPO / "README.md", *docs, *sorted((REPO / "skills").glob("*/SKILL.md"))]


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def markdown_examples(path: Path) -> list[Example]:
    found: list[Example] = []
    example_column: int | None = None
    heading_tool: str | None = None  # the tool a `### mm_…` section is about
    block: list[str] | None = None  # the lines of a fenced block under such a heading
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        where = f"{path.relative_to(REPO)}:{number}"
        if line.startswith("#"):
            named = TOOL.search(line)
            heading_tool = named[0] if named else None
        if line.lstrip().startswith("```"):
            if block is None:
                block = [] if line.strip() in ("```", "```json") else None
            else:
                found += block_examples(where, heading_tool, "\n".join(block))
                block = None
            continue
        if block is not None:
            block.append(line)
        pieces = [line.strip()] if block is not None else SPAN.findall(line)
        for piece in pieces:
            call = re.fullmatch(r"(mm_[a-z_]+)\s+(\{.*\})", piece.strip())
            if call:
                found.append(Example(where, call[1], call[2]))
        if not line.lstrip().startswith("|"):
            example_column = None
            continue
        row = cells(line)
        if any("example" in cell.lower() for cell in row):
            example_column = next(i for i, c in enumerate(row) if "example" in c.lower())
            continue
        if example_column is None or example_column >= len(row):
            continue
        tool = TOOL.search(row[0])
        for span in SPAN.findall(row[example_column]):
            if tool and span.startswith("{"):
                found.append(Example(where, tool[0], span))
    return found


def block_examples(where: str, tool: str | None, text: str) -> list[Example]:
    """The JSON objects of a code block in a tool's section: that tool's arguments. (A block
    of `mm_… {…}` lines is read line by line instead.)"""
    if tool is None or not text.lstrip().startswith("{"):
        return []
    found, decoder, at = [], json.JSONDecoder(), 0
    while at < len(text):
        start = text.find("{", at)
        if start < 0:
            break
        try:
            _, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            return [Example(where, tool, text)]  # reported as not JSON
        found.append(Example(where, tool, text[start:end]))
        at = end
    return found


def description_examples(name: str, description: str) -> list[Example]:
    found, decoder, at = [], json.JSONDecoder(), 0
    while (start := description.find("{", at)) >= 0:
        try:
            value, end = decoder.raw_decode(description, start)
        except json.JSONDecodeError:
            at = start + 1
            continue
        if isinstance(value, dict):  # for this tool, unless another one is named just before
            named = re.search(r"(mm_[a-z_]+)\s*$", description[:start])
            tool = named[1] if named else name
            found.append(Example(f"{name} description", tool, description[start:end]))
        at = end
    return found


def found_something(result: Any) -> bool:
    """An answer with content: no empty page, list or count."""
    if not isinstance(result, dict) or not result:
        return False
    for key in ("total", "memories"):
        if key in result and not result[key]:
            return False
    lists = ("results", "steps", "sessions", "groups", "clusters", "screens")
    return all(result[key] for key in lists if key in result)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_run(tmp_path_factory.mktemp("clone"))


def test_the_docs_have_examples_of_every_knowledge_tool() -> None:
    tools = {e.tool for path in documents() for e in markdown_examples(path)}
    expected = {
        "mm_knowledge_search",
        "mm_knowledge_last",
        "mm_knowledge_sessions",
        "mm_knowledge_summarize",
        "mm_knowledge_timeline",
        "mm_knowledge_session_context",
        "mm_knowledge_find_duplicates",
        "mm_knowledge_cluster",
        "mm_knowledge_status",
    }
    assert expected <= tools, expected - tools


async def call_every_example(client: Client) -> list[str]:
    """Each example called; what went wrong, one line each."""
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    examples = [e for path in documents() for e in markdown_examples(path)]
    for name, tool in listed.items():
        examples += description_examples(name, tool.description or "")
    assert examples
    problems: list[str] = []
    knowledge = [e for e in examples if e.tool.startswith("mm_knowledge_")]
    others = [e for e in examples if not e.tool.startswith("mm_knowledge_")]
    for example in [*sorted(knowledge, key=lambda e: e.tool.endswith(WRITERS)), *others]:
        try:
            args = example.arguments()
        except AssertionError as error:
            problems.append(str(error))
            continue
        if example.tool not in listed:
            problems.append(f"{example.where}: no tool {example.tool}")
        elif example in knowledge:
            answer = await envelope(client, example.tool, args)
            if not answer["ok"] or not found_something(answer["result"]):
                problems.append(f"{example.where}: {example.tool} {example.text} -> {answer}"[:600])
        else:
            try:
                jsonschema.validate(args, listed[example.tool].input_schema)
            except jsonschema.ValidationError as error:
                problems.append(f"{example.where}: {example.tool} {example.text}: {error.message}")
    return problems


async def test_every_example_answers_with_something(clone: Path, tmp_path: Path) -> None:
    serve = ["serve", "--root", str(clone / "test-artifacts" / "llm-knowledge")]
    serve += ["--index", str(clone / "index-data")]
    async with spawned(str(KNOWHOW), serve, clone, tmp_path / "server.log") as client:
        problems = await call_every_example(client)
    assert not problems, "\n".join(problems)


async def test_launch_examples_open_the_demo_wallet(clone: Path, tmp_path: Path) -> None:
    """The `mm_launch` examples an agent meets (the tool's description, and the error of a
    browser tool called before it) open the demo wallet `make run` serves, not the MCP
    endpoint beside it."""
    serve = ["serve", "--root", str(clone / "test-artifacts" / "llm-knowledge")]
    serve += ["--index", str(clone / "index-data")]
    async with spawned(str(KNOWHOW), serve, clone, tmp_path / "server.log") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        shown = description_examples("mm_launch", listed["mm_launch"].description or "")
        refused = await envelope(client, "mm_describe_screen", {})
        assert refused["error"]["code"] == "MM_NO_ACTIVE_SESSION", refused
        shown += description_examples("mm_launch", refused["error"]["message"])
    app_port = inspect.signature(demo).parameters["app_port"].default
    assert len(shown) == 2
    assert {e.arguments()["url"] for e in shown} == {f"http://127.0.0.1:{app_port}/"}

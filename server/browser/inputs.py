"""Validated inputs of the browser tools, and the JSON schemas agents see (generated from them).

Unknown keys are rejected; every violation becomes one `MM_INVALID_INPUT` naming the field.
No spec fixes these schemas, so they are generated from the models (one source of truth) and
only trimmed of pydantic's noise: titles, and `null` branches of optional fields.
"""

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from engine import InvalidInput, Strict
from server.browser.driver import ACTION_TIMEOUT_MS, LaunchOptions
from server.browser.observe import MAX_TEST_IDS
from server.browser.targets import TargetInput
from server.inputs import StartSessionInput, Tag
from server.schemas import Schema, inline_refs

WAIT_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = 120_000
URL_SCHEMES = ("http://", "https://", "file://", "chrome-extension://", "about:")

TimeoutMs = Annotated[
    int, Field(ge=1, le=MAX_TIMEOUT_MS, strict=True, description="Milliseconds to wait")
]
Tags = Annotated[list[Tag], Field(max_length=20)]


FILE_URLS = "file://"
"""URLs of the files of the machine the server runs on: refused unless the operator allows them
(`refuse_file_url`)."""


def _absolute_url(value: str) -> str:
    if not value.startswith(URL_SCHEMES):
        raise ValueError(f"must start with one of {', '.join(URL_SCHEMES)}")
    return value


def refuse_file_url(url: str | None, allowed: bool) -> None:
    """`MM_INVALID_INPUT` for a `file://` URL unless the operator `allowed` them
    (`--allow-file-urls`): an agent opening one reads any file the server's user can (its SSH
    keys, a wallet's vault) through the browser tools' observations and screenshots. A page to
    test is served over http(s), loopback included."""
    if url is not None and url.startswith(FILE_URLS) and not allowed:
        raise InvalidInput(
            "url",
            "file:// URLs open the files of the machine the server runs on and are refused; "
            "serve the page over http(s) (loopback is fine), or start the server with "
            "--allow-file-urls (KNOWHOW_ALLOW_FILE_URLS=true) to allow them",
        )


class LaunchInput(Strict):
    url: (
        Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description="The page to open (absolute; file:// only when the server allows it)",
            ),
        ]
        | None
    ) = None
    extensionPath: (
        Annotated[
            str,
            Field(
                min_length=1,
                max_length=1000,
                description="An unpacked extension's folder (with manifest.json) to load",
            ),
        ]
        | None
    ) = None
    goal: (
        Annotated[
            str,
            Field(min_length=1, max_length=500, description="What this run is for, in a sentence"),
        ]
        | None
    ) = None
    flowTags: Tags = Field(
        default_factory=list, description="Flows this run covers: send, swap, connect, …"
    )
    tags: Tags = Field(default_factory=list, description="Free-form tags, e.g. smoke")
    headless: Annotated[
        bool, Field(strict=True, description="false shows the browser window (needs a display)")
    ] = True

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else _absolute_url(value)

    @field_validator("extensionPath")
    @classmethod
    def _unpacked_extension(cls, value: str | None) -> str | None:
        if value is not None and not (Path(value) / "manifest.json").is_file():
            raise ValueError(f"no manifest.json in {value}: give an unpacked extension's folder")
        return value

    @model_validator(mode="after")
    def _something_to_open(self) -> "LaunchInput":
        if not (self.url or self.extensionPath):
            raise ValueError("give url, extensionPath or both")
        return self

    def options(self) -> LaunchOptions:
        extension = Path(self.extensionPath) if self.extensionPath else None
        return LaunchOptions(url=self.url, extension=extension, headless=self.headless)

    def session_request(self) -> StartSessionInput:
        launch: dict[str, Any] = {"stateMode": "default", "headless": self.headless}
        if self.extensionPath:
            launch["extensionPath"] = self.extensionPath
        if self.url:
            launch["url"] = self.url
        return StartSessionInput(
            goal=self.goal, flowTags=self.flowTags, tags=self.tags, launch=launch
        )


class NavigateInput(Strict):
    url: Annotated[
        str,
        Field(min_length=1, max_length=2000, description='Absolute URL, or a route like "#/send"'),
    ]
    timeoutMs: TimeoutMs = ACTION_TIMEOUT_MS * 3

    @field_validator("url")
    @classmethod
    def _url_or_route(cls, value: str) -> str:
        return value if value.startswith("#") else _absolute_url(value)


class ClickInput(TargetInput):
    timeoutMs: TimeoutMs = ACTION_TIMEOUT_MS


class TypeInput(TargetInput):
    text: Annotated[str, Field(max_length=10_000, description="Replaces the field's value")]
    timeoutMs: TimeoutMs = ACTION_TIMEOUT_MS


class WaitForInput(TargetInput):
    state: Annotated[
        Literal["visible", "hidden", "attached", "detached"],
        Field(description="The state to wait for"),
    ] = "visible"
    timeoutMs: TimeoutMs = WAIT_TIMEOUT_MS


class ListTestIdsInput(Strict):
    limit: Annotated[
        int, Field(ge=1, le=MAX_TEST_IDS, strict=True, description="At most this many testIds")
    ] = MAX_TEST_IDS


class ScreenshotInput(Strict):
    name: Annotated[
        str,
        Field(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="The PNG's name in the session folder"),
    ] = "screen"
    fullPage: Annotated[
        bool, Field(strict=True, description="The whole page, not only what is visible")
    ] = False


class NoInput(Strict):
    """No arguments."""


def schema_of(model: type[BaseModel]) -> Schema:
    """The model's JSON schema without titles, with optional fields as their plain type, and
    self-contained: clients fill arguments from a property's own `type` and many (the MCP
    Inspector among them) do not follow `$ref`, so nested models are inlined, not `$defs`."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})
    return _trim(inline_refs(schema, definitions))  # type: ignore[no-any-return]


def _trim(node: Any) -> Any:
    if isinstance(node, list):
        return [_trim(item) for item in node]
    if not isinstance(node, dict):
        return node
    branches = node.get("anyOf")
    if isinstance(branches, list) and {"type": "null"} in branches and len(branches) == 2:
        kept = next(b for b in branches if b != {"type": "null"})
        node = {**{k: v for k, v in node.items() if k != "anyOf"}, **kept}
    return {
        k: _trim(v)
        for k, v in node.items()
        if not (k == "title" and isinstance(v, str)) and not (k == "default" and v is None)
    }

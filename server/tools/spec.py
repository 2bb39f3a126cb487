"""What an MCP tool is: its contract (name, title, description, schema, hints) and its handler.

`server.app` lists every spec in `tools/list` and calls its handler with the server's state.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp import types

from engine import Result
from server import schemas
from server.arguments import container_properties
from server.output_schemas import output_schema
from server.state import ServerState

Handler = Callable[[ServerState, dict[str, Any]], Awaitable[Result]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    """Without the configurable prefix: `knowledge_search` is served as `mm_knowledge_search`."""
    title: str
    description: str
    input_schema: schemas.Schema
    handler: Handler
    result: type[Result]
    """What the handler returns: the tool's declared `outputSchema` is generated from it."""
    read_only: bool = True
    open_world: bool = False
    """True for tools that act on a web page (the browser tools)."""

    @property
    def container_arguments(self) -> dict[str, frozenset[str]]:
        """The arguments a client may send as JSON text, and their kinds (`server.arguments`)."""
        return container_properties(self.input_schema)

    def describe(self, prefix: str) -> types.Tool:
        return types.Tool(
            name=prefix + self.name,
            title=self.title,
            description=self.description.replace("{prefix}", prefix),
            input_schema=self.input_schema,
            output_schema=output_schema(self.result),
            annotations=types.ToolAnnotations(
                title=self.title,
                read_only_hint=self.read_only,
                destructive_hint=False,
                idempotent_hint=self.read_only,
                open_world_hint=self.open_world,
            ),
        )

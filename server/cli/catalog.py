"""What `knowhow --help` says: the commands in the order it lists them, each in one line, and
the text above them. Standard library only: the `knowhow` script prints the overview without
loading the app, and the app (`server.cli.commands`) gives each command the same line.
"""

HELP = """knowhow: what earlier agents did in a web UI, searchable from the shell and over MCP.

Human-readable by default, --json for machines. Errors print {"ok": false, "error": …}
(with --json) or a one-line message, and exit with status 2. With a server of the same root
and index running (knowhow daemon start, or knowhow serve --transport http), search, last,
sessions, summarize, timeline and status are answered by it, in milliseconds."""

COMMANDS: dict[str, str] = {
    "index": "Bring the index up to date with the knowledge root (build it the first time)",
    "reindex": "Rebuild the index from the files into a new generation, swapped in atomically",
    "status": "The health of the index: documents, sessions, skipped files, lag, writer, model",
    "search": "Search steps of all sessions (or one scope), best first, with match evidence",
    "last": "The last N steps of the current session (or of a scope), oldest first",
    "sessions": "Recent sessions, newest first: goal, flowTags, tags, git and step counts",
    "summarize": "A session's recipe: screens, actions that worked, failures and recoveries",
    "timeline": "The steps before and after a step, in its session or across sessions by time",
    "supersede": "Mark a step superseded: it no longer works as recorded",
    "duplicates": "Groups of near-identical memories, largest first, with example ids",
    "cluster": "Cluster one type of memory by meaning: size, top terms and examples",
    "batch-search": "Answer every query of a file with one loaded index; write a TREC run",
    "demo": "Index the root and show example searches; --serve also serves MCP and a demo app",
    "serve": "Serve the knowledge tools over MCP: stdio by default, HTTP with --transport",
    "daemon": "Start, check or stop a background server that answers searches in milliseconds",
    "mcp-config": "Print MCP client configs that start knowhow serve here, ready to paste",
    "ui": "Open the web page: search, sessions, screens, charts and curation in a browser",
}


def overview() -> str:
    """`knowhow --help`: usage, the text above, the options and one line per command."""
    width = max(len(name) for name in COMMANDS) + 2
    lines = ["Usage: knowhow [--version | --help] COMMAND [OPTIONS] [ARGS]...", ""]
    lines += ["  " + line if line else "" for line in HELP.splitlines()]
    lines += ["", "Options:", "  --version".ljust(width + 2) + "Print the version and exit"]
    lines += ["  --help".ljust(width + 2) + "Show this message and exit", "", "Commands:"]
    lines += [f"  {name.ljust(width)}{line}" for name, line in COMMANDS.items()]
    lines += ["", "knowhow COMMAND --help tells a command's options."]
    return "\n".join(lines) + "\n"

"""The `knowhow` script: the version, the overview of commands, or a command answered by a
running server, without loading anything heavy; every other command through the Typer app
(`server.cli.commands`).

Only the standard library is imported before the app is needed, so `knowhow --version` and a
search a server answers start as fast as Python does.
"""

import sys

from server.cli import catalog, client


def main() -> None:
    argv = sys.argv[1:]
    if argv in ([], ["--help"]):
        sys.stdout.write(catalog.overview())
        return
    if argv == ["--version"]:
        from server.version import knowhow_version  # importlib.metadata: only for this

        sys.stdout.write(f"knowhow {knowhow_version()}\n")
        return
    served = client.answer(argv)
    if served is not None:
        sys.exit(served)
    from server.cli.commands import run

    sys.exit(run(argv))

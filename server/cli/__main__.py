"""`python -m server.cli` runs the command line, as the `knowhow` script does."""

from server.cli.entry import main

main()

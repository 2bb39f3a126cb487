"""An index in a folder this process cannot write (a read-only mount: a CI artifact, a shared
volume; or no permission) is served as it is.

Its manifest is SQLite in WAL mode, whose readers create a `-shm` file beside it when there is
none: in such a folder even a read-only open failed ("unable to open database file"), and the
index was reported damaged, with a promise of a rebuild that could never happen there. There
the manifest is opened `immutable` (nothing in this process can change it; a writer elsewhere
closed it, checkpointing its log, before the folder became read-only to us). And Tantivy, even
to read, creates a lock file in the index folder: there it opens a folder of links to the
generation's files, made in a private temp folder of this process (`tantivy_folder`).
"""

import atexit
import contextlib
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

_LINKS: list[Path] = []
"""This process's private folder of link folders (made when first needed, removed at exit)."""


def folder_read_only(folder: Path) -> bool:
    """Whether this process cannot create files in `folder` (`access` says so for a
    read-only mount even to root)."""
    return folder.is_dir() and not os.access(folder, os.W_OK)


def read_manifest_connection(path: Path) -> sqlite3.Connection:
    """A read-only connection to a generation's manifest database."""
    uri = f"{path.absolute().as_uri()}?mode=ro"
    if folder_read_only(path.parent):
        uri += "&immutable=1"
    return sqlite3.connect(uri, uri=True)


def tantivy_folder(generation: Path) -> Path:
    """The folder to open Tantivy on: the generation itself, or, when this process cannot write
    it, a folder of links to its files (its lock files left out: Tantivy creates its own)."""
    if not folder_read_only(generation):
        return generation
    if not _LINKS:
        _LINKS.append(Path(tempfile.mkdtemp(prefix="knowhow-read-only-")))
        atexit.register(shutil.rmtree, _LINKS[0], True)
    links = _LINKS[0] / str(abs(hash(str(generation.absolute())))) / generation.name
    links.mkdir(parents=True, exist_ok=True)
    names = {entry.name for entry in generation.iterdir() if not entry.name.endswith(".lock")}
    for name in names:
        with contextlib.suppress(FileExistsError):
            (links / name).symlink_to(generation.absolute() / name)
    for stale in links.iterdir():
        if stale.is_symlink() and stale.name not in names:
            stale.unlink()  # a file a writer elsewhere removed since (a merged segment)
    return links

"""The endpoint file: where a running server of a knowledge root answers the command line.

`knowhow serve --transport http` writes `knowhow-server.json` into its index folder once the
index is open (mode 0600, written whole or not at all) and removes it when it stops: its pid,
address, root, index, synonyms file, start time and a secret made for this one run. The file is
a claim, not proof: the command line (`server.cli.client`) believes it only for this root and
index, on a loopback address, with the pid alive and a server that proves it knows the secret
(an HMAC of a fresh nonce) before the query is sent. Standard library only: the `knowhow`
script reads it before anything heavy is loaded.
"""

import contextlib
import hashlib
import hmac
import json
import os
from typing import NamedTuple

ENDPOINT_FILE = "knowhow-server.json"
IDENTITY_PATH = "/knowhow/cli/identity"
RUN_PATH = "/knowhow/cli/run"
SECRET_HEADER = "X-Knowhow-Secret"


class EndpointRefused(Exception):
    """An endpoint file that cannot be believed; the message says why, in a few words."""


class Endpoint(NamedTuple):
    pid: int
    host: str
    port: int
    root: str
    index_dir: str
    synonyms: str | None
    secret: str
    started: str
    """When the server started (ISO time, UTC), for `knowhow daemon status`."""


KINDS: tuple[type | tuple[type, ...], ...] = (int, str, int, str, str, (str, type(None)), str, str)
"""What each field of an `Endpoint` holds, checked when the file is read."""


def endpoint_path(index: str) -> str:
    return os.path.join(index, ENDPOINT_FILE)


def new_secret() -> str:
    return os.urandom(32).hex()


def proof(secret: str, nonce: str) -> str:
    """What a server that knows `secret` answers to `nonce`: the secret itself never travels
    before the server has shown it knows it."""
    return hmac.new(secret.encode(), nonce.encode(), hashlib.sha256).hexdigest()


def write_endpoint(endpoint: Endpoint, index: str) -> None:
    """Write the file atomically (a temporary file renamed over it), readable by its owner
    only: it holds the secret."""
    temporary = os.path.join(index, f".{ENDPOINT_FILE}.{os.getpid()}.tmp")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(handle, "w") as file:
            json.dump(endpoint._asdict(), file)
        os.replace(temporary, endpoint_path(index))
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def read_endpoint(index: str) -> Endpoint | None:
    """The endpoint file of `index`; None when there is none, `EndpointRefused` when it is not
    one (a half-written or foreign file)."""
    path = endpoint_path(index)
    try:
        with open(path, "rb") as file:
            data = json.loads(file.read(1 << 16))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise EndpointRefused(f"cannot read {path} ({exc})") from None
    try:
        endpoint = Endpoint(**data)
    except TypeError:
        raise EndpointRefused(f"{path} is not an endpoint file") from None
    if not all(isinstance(value, kind) for value, kind in zip(endpoint, KINDS, strict=True)):
        raise EndpointRefused(f"{path} is not an endpoint file")
    return endpoint


def remove_endpoint(index: str, pid: int) -> None:
    """Remove the file if it is still this process's (another server may have written its own
    since)."""
    try:
        current = read_endpoint(index)
    except EndpointRefused:
        return
    if current is not None and current.pid == pid:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(endpoint_path(index))

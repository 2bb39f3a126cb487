"""What a new user and the browser tests try knowhow on, shipped with it.

`sample_root/` holds recorded sessions that `knowhow demo` copies into an empty knowledge root;
`demo_app/` is the demo wallet (a static MetaMask-like app; its README has the password and the
routes); `test_dapp/provider.js` is the wallet MetaMask's test dapp needs; `apps` serves the
two apps on localhost. Nothing else in the server imports this package: it is loaded by the
`demo` command, the tests and the benchmarks only.
"""

from pathlib import Path

from server.demo.apps import (
    DEMO_APP,
    PROVIDER_PATH,
    demo_app,
    metamask_test_dapp,
    metamask_test_dapp_installed,
)

SAMPLE_ROOT = Path(__file__).parent / "sample_root"

__all__ = [
    "DEMO_APP",
    "PROVIDER_PATH",
    "SAMPLE_ROOT",
    "demo_app",
    "metamask_test_dapp",
    "metamask_test_dapp_installed",
]

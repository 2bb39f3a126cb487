"""Chromium under Playwright: one browser per server lifespan, started by `mm_launch`.

Debian's `/usr/bin/chromium` is used when present (or the configured `KNOWHOW_CHROMIUM`), else
Playwright's own browser; `playwright install` is never needed on a machine with Chromium.
Every launch gets a fresh user-data-dir (a persistent context, so an unpacked extension can be
loaded the same way as a plain URL is opened) that is deleted when the session ends. Timeouts
are named here; a tool's `timeoutMs` overrides the action timeout for one call.
"""

import base64
import hashlib
import logging
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import orjson
from playwright.async_api import BrowserContext, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from engine import NoActiveSession, ScreenRules, SessionMetadata, default_rules
from server.browser.errors import LaunchFailed, SessionAlreadyRunning
from server.browser.observe import RefTarget
from server.settings import DEMO_APP_URL

log = logging.getLogger(__name__)

DEBIAN_CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--no-sandbox",  # the sandbox needs a non-root user; tests and CI run as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
LAUNCH_TIMEOUT_MS = 30_000
NAVIGATION_TIMEOUT_MS = 15_000
ACTION_TIMEOUT_MS = 5_000
CLOSE_TIMEOUT_SECONDS = 10.0
EXTENSION_PAGES = ("home.html",)
"""Opened when a launch names an extension but no URL (MetaMask's full-screen page)."""


class InvalidScreenRules(ValueError):
    """The screen-rules file cannot be read; the server does not start."""


def load_screen_rules(path: Path | None) -> ScreenRules:
    """The app's screen rules (`--screen-rules FILE`), else MetaMask's defaults."""
    if path is None:
        return default_rules()
    try:
        return ScreenRules.from_json(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise InvalidScreenRules(f"screen rules {path}: {exc}") from None


def chromium_executable(configured: Path | None) -> Path | None:
    """The configured Chromium, else Debian's, else None: Playwright's own browser."""
    if configured is not None:
        return configured
    return DEBIAN_CHROMIUM if DEBIAN_CHROMIUM.exists() else None


def extension_id(path: Path) -> str:
    """The id Chromium gives an unpacked extension: from its manifest `key` when it has one,
    else from its absolute path — so it is known without waiting for a background page."""
    manifest = orjson.loads((path / "manifest.json").read_bytes())
    key = manifest.get("key")
    seed = base64.b64decode(key) if isinstance(key, str) else str(path.resolve()).encode()
    digest = hashlib.sha256(seed).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


def start_url(url: str | None, extension: Path | None, ext_id: str | None) -> str | None:
    """The page to open: the given URL, else the extension's full-screen page or popup."""
    if url or extension is None or ext_id is None:
        return url
    manifest = orjson.loads((extension / "manifest.json").read_bytes())
    action = manifest.get("action") or manifest.get("browser_action") or {}
    pages = [p for p in EXTENSION_PAGES if (extension / p).is_file()]
    page = pages[0] if pages else action.get("default_popup")
    return f"chrome-extension://{ext_id}/{page}" if page else None


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    url: str | None
    extension: Path | None
    headless: bool


@dataclass
class BrowserSession:
    """The running browser of one recorded session."""

    metadata: SessionMetadata
    context: BrowserContext
    page: Page
    user_data_dir: Path
    rules: ScreenRules
    prefix: str
    """The tool-name prefix, for messages that name the next tool to call."""
    extension_id: str | None = None
    refs: dict[str, RefTarget] = field(default_factory=dict)
    """a11yRef -> element, from the latest accessibility snapshot."""

    @property
    def session_id(self) -> str:
        return self.metadata.sessionId


class BrowserDriver:
    """Holds Playwright and at most one browser session; closed by the server's lifespan.

    Browser tools hold `lock` for their whole call, so concurrent calls of one agent never
    interleave on the page.
    """

    def __init__(self, chromium: Path | None, rules: ScreenRules, prefix: str) -> None:
        self.chromium = chromium
        self.rules = rules
        self.prefix = prefix
        self.lock = anyio.Lock()
        self._playwright: Playwright | None = None
        self._session: BrowserSession | None = None

    def require(self) -> BrowserSession:
        if self._session is None:
            raise NoActiveSession(
                f"no browser session: call {self.prefix}launch first "
                f'(e.g. {{"url": "{DEMO_APP_URL}", "flowTags": ["send"]}})'
            )
        return self._session

    async def launch(
        self, options: LaunchOptions, begin: Callable[[], Awaitable[SessionMetadata]]
    ) -> BrowserSession:
        """Start Chromium, open the start page, then `begin` the recorded session; a failed
        launch leaves no session behind."""
        if self._session is not None:
            raise SessionAlreadyRunning(
                f"session {self._session.session_id} is running; call {self.prefix}cleanup first"
            )
        ext_id = extension_id(options.extension) if options.extension else None
        context, user_data = await self._start_chromium(options)
        try:
            page = context.pages[0] if context.pages else await context.new_page()
            url = start_url(options.url, options.extension, ext_id)
            if url:
                await page.goto(url, wait_until="domcontentloaded")
            metadata = await begin()
        except BaseException as exc:
            await _close(context, user_data)
            if isinstance(exc, PlaywrightError):
                raise LaunchFailed(
                    f"Chromium started but {options.url or 'the extension'} did not open: "
                    f"{first_line(exc)}. Is the app served, and the URL right?"
                ) from None
            raise
        self._session = BrowserSession(
            metadata, context, page, user_data, self.rules, self.prefix, ext_id
        )
        return self._session

    async def _start_chromium(self, options: LaunchOptions) -> tuple[BrowserContext, Path]:
        if self._playwright is None:
            self._playwright = await async_playwright().start()
        executable = chromium_executable(self.chromium)
        args = list(CHROMIUM_ARGS)
        if options.extension is not None:
            path = options.extension.resolve()
            args += [f"--disable-extensions-except={path}", f"--load-extension={path}"]
        user_data = Path(tempfile.mkdtemp(prefix="knowhow-chromium-"))
        try:
            context = await self._playwright.chromium.launch_persistent_context(
                user_data,
                executable_path=executable,
                headless=options.headless,
                args=args,
                timeout=LAUNCH_TIMEOUT_MS,
            )
        except PlaywrightError as exc:
            shutil.rmtree(user_data, ignore_errors=True)
            where = executable or "Playwright's bundled Chromium"
            raise LaunchFailed(
                f"Chromium ({where}) did not start: {first_line(exc)}. Install it "
                "(apt-get install chromium) or set KNOWHOW_CHROMIUM / --chromium to its path."
            ) from None
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
        log.info("Chromium %s started (headless=%s)", executable or "(bundled)", options.headless)
        return context, user_data

    async def close_session(self) -> None:
        """Close the browser and delete its profile; the recorded session stays on disk."""
        session, self._session = self._session, None
        if session is not None:
            await _close(session.context, session.user_data_dir)

    async def aclose(self) -> None:
        """End of the server's lifespan: the session, then Playwright's driver process."""
        await self.close_session()
        playwright, self._playwright = self._playwright, None
        if playwright is not None:
            with anyio.move_on_after(CLOSE_TIMEOUT_SECONDS, shield=True):
                await playwright.stop()


async def _close(context: BrowserContext, user_data: Path) -> None:
    with anyio.move_on_after(CLOSE_TIMEOUT_SECONDS, shield=True):
        try:
            await context.close()
        except PlaywrightError as exc:  # already gone (crashed or closed by hand)
            log.warning("closing Chromium: %s", first_line(exc))
    shutil.rmtree(user_data, ignore_errors=True)


def first_line(exc: PlaywrightError) -> str:
    """Playwright messages append a call log; the first line says what happened."""
    text = (exc.message or str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__

"""The browser tools' errors: each an `MM_…` code of the TypeScript recorder and a next step.

KnowhowError (engine.core.errors)
└── BrowserError                  MM_BROWSER_ERROR      (the browser crashed or was closed)
    ├── LaunchFailed              MM_LAUNCH_FAILED      (no Chromium, bad extension, bad flags)
    ├── SessionAlreadyRunning     MM_SESSION_ALREADY_RUNNING
    ├── NavigationFailed          MM_NAVIGATION_FAILED
    ├── TargetNotFound            MM_TARGET_NOT_FOUND   (no such element, or a stale a11yRef)
    ├── WaitTimeout               MM_WAIT_TIMEOUT       (present, but not ready in time)
    ├── ClickFailed               MM_CLICK_FAILED
    ├── TypeFailed                MM_TYPE_FAILED
    └── ScreenshotFailed          MM_SCREENSHOT_FAILED

Calls without a browser raise engine's `NoActiveSession` (MM_NO_ACTIVE_SESSION). A failed step
is still recorded with its code and message: the failures of one agent are the `avoid` list
of the next.
"""

from engine import KnowhowError


class BrowserError(KnowhowError):
    code = "MM_BROWSER_ERROR"


class LaunchFailed(BrowserError):
    code = "MM_LAUNCH_FAILED"


class SessionAlreadyRunning(BrowserError):
    code = "MM_SESSION_ALREADY_RUNNING"


class NavigationFailed(BrowserError):
    code = "MM_NAVIGATION_FAILED"


class TargetNotFound(BrowserError):
    code = "MM_TARGET_NOT_FOUND"


class WaitTimeout(BrowserError):
    code = "MM_WAIT_TIMEOUT"


class ClickFailed(BrowserError):
    code = "MM_CLICK_FAILED"


class TypeFailed(BrowserError):
    code = "MM_TYPE_FAILED"


class ScreenshotFailed(BrowserError):
    code = "MM_SCREENSHOT_FAILED"

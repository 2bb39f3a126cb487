"""Targets of the browser tools: `testId` | `selector` | `a11yRef` | `a11yHint`, and how each
becomes a Playwright locator (role and testId locators, STYLE 20).

An `a11yRef` (`e7`) names a node of the latest accessibility snapshot and is resolved to the
same role and name (the nth such element), so a ref never needs a script in the page. An
`a11yHint` `{role, name}` is the element with that role and exact accessible name — what the
priorKnowledge suggests when a remembered testId was renamed.
"""

from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_type_hints

from playwright.async_api import Locator, Page
from pydantic import Field, field_validator, model_validator

from engine import A11yHint, StepTarget, Strict
from server.browser.errors import TargetNotFound
from server.browser.observe import RefTarget

ARIA_ROLES = frozenset(get_args(get_type_hints(Page.get_by_role)["role"]))
"""The roles Playwright's get_by_role accepts (read from its signature)."""


class HintInput(Strict):
    role: Annotated[str, Field(min_length=1, max_length=40, description="ARIA role, e.g. button")]
    name: Annotated[
        str, Field(min_length=1, max_length=500, description='Exact accessible name, e.g. "Send"')
    ]

    @field_validator("role")
    @classmethod
    def _known_role(cls, value: str) -> str:
        if value not in ARIA_ROLES:
            raise ValueError(f"unknown ARIA role {value!r}; e.g. button, textbox, link")
        return value


WAYS = ("testId", "selector", "a11yRef", "a11yHint")
"""The ways to find an element; a target gives exactly one."""


class TargetInput(Strict):
    """Exactly one way to find the element. A target as a search result or a priorKnowledge
    entry gives it (`{"testId": …, "role": "button", "name": "Send"}`) is taken as it is:
    `role` and `name` beside another way say what the element was, and alone they are the way
    (as `a11yHint`)."""

    testId: (
        Annotated[str, Field(min_length=1, max_length=200, description="The data-testid")] | None
    ) = None
    selector: (
        Annotated[
            str, Field(min_length=1, max_length=1000, description="A Playwright/CSS selector")
        ]
        | None
    ) = None
    a11yRef: (
        Annotated[
            str,
            Field(
                pattern=r"^e[0-9]{1,5}$",
                description="A ref of the latest accessibility snapshot, e.g. e3",
            ),
        ]
        | None
    ) = None
    a11yHint: HintInput | None = Field(
        default=None, description="The element with this ARIA role and exact accessible name"
    )
    role: (
        Annotated[
            str,
            Field(
                max_length=40,
                description="ARIA role; with name alone, the element with this role and name",
            ),
        ]
        | None
    ) = None
    name: (
        Annotated[str, Field(max_length=500, description="Accessible name (with role)")] | None
    ) = None

    @model_validator(mode="before")
    @classmethod
    def _role_and_name(cls, data: Any) -> Any:
        """`{role, name}` without another way is `a11yHint` (the search results' shape)."""
        if not isinstance(data, dict) or any(data.get(way) is not None for way in WAYS):
            return data
        if data.get("role") is None and data.get("name") is None:
            return data
        rest = {key: value for key, value in data.items() if key not in ("role", "name")}
        return rest | {"a11yHint": {"role": data.get("role"), "name": data.get("name")}}

    @model_validator(mode="after")
    def _exactly_one(self) -> "TargetInput":
        given = [v for v in (self.testId, self.selector, self.a11yRef, self.a11yHint) if v]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of testId, selector, a11yRef, a11yHint (or role and name)"
            )
        return self

    def step_target(self) -> StepTarget:
        """The target as recorded (the role and name are added once the element is found)."""
        hint = A11yHint(role=self.a11yHint.role, name=self.a11yHint.name) if self.a11yHint else None
        return StepTarget(
            testId=self.testId, selector=self.selector, a11yRef=self.a11yRef, a11yHint=hint
        )


@dataclass(frozen=True, slots=True)
class Located:
    locator: Locator
    label: str
    """For messages: `testId "send-button"`, `a11yRef e3 (button "Send")`, …"""
    hint: A11yHint | None
    """Role and name, when the target itself says them (a11yRef, a11yHint)."""


def by_role(page: Page, role: str, name: str) -> Locator:
    """`get_by_role(role, name=name, exact=True)`, or every element of the role without a name."""
    if not name:
        return page.get_by_role(role)  # type: ignore[arg-type]  # role checked by ARIA_ROLES
    return page.get_by_role(role, name=name, exact=True)  # type: ignore[arg-type]


def locate(page: Page, target: TargetInput, refs: dict[str, RefTarget], prefix: str) -> Located:
    """The locator of a target; an a11yRef missing from the latest snapshot fails here."""
    if target.testId:
        return Located(page.get_by_test_id(target.testId), f'testId "{target.testId}"', None)
    if target.selector:
        return Located(page.locator(target.selector), f'selector "{target.selector}"', None)
    if target.a11yHint:
        role, name = target.a11yHint.role, target.a11yHint.name
        return Located(
            by_role(page, role, name), f'{role} "{name}"', A11yHint(role=role, name=name)
        )
    ref = target.a11yRef or ""
    known = refs.get(ref)
    if known is None:
        available = ", ".join(refs) or "none (no snapshot yet)"
        raise TargetNotFound(
            f"Unknown a11yRef: {ref}. Available refs: {available}. Refs come from the latest "
            f"{prefix}describe_screen or {prefix}accessibility_snapshot; call "
            f"{prefix}describe_screen again for fresh refs."
        )
    hint = A11yHint(role=known.role, name=known.name) if known.name else None
    label = f'a11yRef {ref} ({known.role} "{known.name}")'
    return Located(by_role(page, known.role, known.name).nth(known.nth), label, hint)


def stale_ref(located: Located, prefix: str) -> TargetNotFound:
    return TargetNotFound(
        f"{located.label} is stale: the screen changed since the snapshot that gave it. "
        f"Call {prefix}describe_screen again and use a ref from it."
    )

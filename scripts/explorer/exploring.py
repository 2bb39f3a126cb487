"""What the explorer remembers within one run (never across runs): what it tried where, what a
click revealed, and the way back. Pure bookkeeping over `Screen`s, so it is tested without a
browser.

A place is the screen's name from the app's rules (the same screen under two URLs, such as the
demo wallet's `#/` and `#/activity`, is one place), or its URL when the rules do not know it.
A click that kept the URL and made new clickable elements appear (a menu) is an *opener*: it
may be pressed again while something it revealed is hidden and untried, because the menu has
closed since.
"""

from dataclasses import dataclass, field

from explorer.screen import Element, Screen, best, exploration_order

Key = tuple[str, str, str]


def place(screen: Screen) -> str:
    return screen.name if screen.name and screen.name != "unknown" else screen.url


@dataclass
class Exploration:
    goal: frozenset[str]
    submit: str
    tried: set[tuple[str, Key]] = field(default_factory=set)
    reveals: dict[tuple[str, Key], frozenset[Key]] = field(default_factory=dict)
    pressed: dict[str, frozenset[tuple[str, str, bool]]] = field(default_factory=dict)
    """The place as it was when the final button was last pressed there."""
    trail: list[str] = field(default_factory=list)
    """URLs to go back to, the latest last."""
    last: tuple[Screen, Element] | None = None
    """The latest click that kept the URL, until the next look shows what it revealed."""

    def seen(self, screen: Screen) -> None:
        if self.last is not None:
            before, opener = self.last
            if place(before) == place(screen):
                new = _keys(screen) - _keys(before)
                if new:
                    self.reveals[(place(screen), opener.key)] = frozenset(new)
            self.last = None

    def final_button(self, screen: Screen) -> Element | None:
        """The enabled final button most relevant to the goal — unless it was pressed here
        before and nothing on the screen changed since."""
        if self.pressed.get(place(screen)) == screen.signature:
            return None
        enabled = [e for e in screen.named(None, self.submit) if not e.disabled]
        return best(enabled, self.goal)

    def press(self, screen: Screen) -> None:
        self.pressed[place(screen)] = screen.signature

    def next_click(self, screen: Screen) -> Element | None:
        here, visible = place(screen), _keys(screen)

        def worth(element: Element) -> bool:
            if element.name.casefold() == self.submit.casefold():
                return False
            if (here, element.key) not in self.tried:
                return True
            hidden = self.reveals.get((here, element.key), frozenset()) - visible
            return any((here, key) not in self.tried for key in hidden)

        return next(
            (e for e in exploration_order(screen.clickables(), self.goal) if worth(e)), None
        )

    def clicked(self, screen: Screen, element: Element, landed: str | None) -> None:
        self.tried.add((place(screen), element.key))
        if landed and landed != screen.url:
            self.trail.append(screen.url)
        else:
            self.last = (screen, element)

    def back(self) -> str | None:
        return self.trail.pop() if self.trail else None


def _keys(screen: Screen) -> set[Key]:
    return {e.key for e in screen.clickables()}

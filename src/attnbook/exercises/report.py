"""The report a checker returns: one line per case, readable in a notebook."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Report:
    """What a checker found. ``passed`` is True only if every case passed."""

    exercise: str
    lines: list[tuple[bool, str]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.lines) and all(ok for ok, _ in self.lines)

    def check(self, ok: bool, message: str) -> bool:
        self.lines.append((bool(ok), message))
        return bool(ok)

    def run(self, description: str, case: Callable[[], str | None]) -> bool:
        """Run one case; it returns None when right or a sentence saying what is wrong."""
        try:
            problem = case()
        except Exception as exc:  # the learner's code may fail in any way; report it
            problem = f"your function raised {type(exc).__name__}: {exc}"
        return self.check(
            problem is None, description if problem is None else f"{description}: {problem}"
        )

    def __str__(self) -> str:
        head = f"{self.exercise}: {'all checks passed' if self.passed else 'not yet'}"
        body = [f"  {'✓' if ok else '✗'} {message}" for ok, message in self.lines]
        return "\n".join([head, *body])

    def _repr_markdown_(self) -> str:
        return "```text\n" + str(self) + "\n```"

    def __repr__(self) -> str:
        return str(self)

"""Checking a run's answer against what the run itself fetched and saw.

A final answer counts as correct only when all of these hold, each computed from the
run, never from the scripted answer text:

1. **Coverage**: the scenario's solver, fed only the tool results the run fetched (a
   :class:`CallLog` records every call, direct or made from a snippet), computes the
   right answer. A classic run with zero tool calls fails here.
2. **Facts**: the answer states the scenario's facts and none of its wrong candidates.
3. **Backed figures**: every number the answer states appears in what the model saw
   (the prompt, the tool results and ``run_code`` output in its context) or, when the
   run's *direct* calls alone cover the answer, in the solver's result over them (the
   sums a model may work out from raw data it read). A ``run_code`` answer cannot quote
   a figure its snippets never printed.

A number is a free-standing figure: ``6,210.00``, ``53.5%``, ``-55%``, ``14400``; digits
inside identifiers (``INV-2025-302``, ``DOC-201``, ``e101``), dates and times are not.
Whole numbers up to 10 need no backing: they are the counts a model reads off a short
list it was shown ("three members", "all 4 regions"), not figures it could make up.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from ptcbox.bench._scenario import Fetch, MissingData, Scenario

__all__ = [
    "CallLog",
    "LoggedCall",
    "Verdict",
    "check_run",
    "figures",
    "live_fetch",
    "unbacked_figures",
]

Via = Literal["direct", "code"]

_FIGURE = re.compile(r"(?<![\w.\-/])(?<!\d:)[-+]?(\d+(?:\.\d+)?)(?![\w\-/:]|\.\d)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_COUNTABLE = 10


@dataclass(frozen=True, slots=True)
class LoggedCall:
    """One tool call a run made.

    Attributes:
        tool: The tool's name.
        key: The bound arguments (defaults applied) as canonical JSON.
        via: ``"direct"`` (a model tool call) or ``"code"`` (made from a snippet).
        ok: The call returned normally.
        result: Its return value, or the exception it raised.
    """

    tool: str
    key: str
    via: Via
    ok: bool
    result: Any


class CallLog:
    """Records every call of a scenario's tools and serves their results to a solver.

    Args:
        tools: The scenario's tool functions.
    """

    def __init__(self, tools: Sequence[Callable[..., Any]]) -> None:
        self._signatures = {fn.__name__: inspect.signature(fn) for fn in tools}
        self.calls: list[LoggedCall] = []

    def key(self, tool: str, *args: Any, **kwargs: Any) -> str:
        """Canonical JSON of a call's arguments, bound by the tool's signature."""
        bound = self._signatures[tool].bind(*args, **kwargs)
        bound.apply_defaults()
        return json.dumps(bound.arguments, sort_keys=True, default=str)

    def wrap(self, fn: Callable[..., Any], via: Via) -> Callable[..., Any]:
        """Return ``fn`` with every call recorded (same name, signature and docstring)."""
        name = fn.__name__

        @functools.wraps(fn)
        def logged(*args: Any, **kwargs: Any) -> Any:
            key = self.key(name, *args, **kwargs)
            try:
                result = fn(*args, **kwargs)
            except Exception as exc:
                self.calls.append(LoggedCall(name, key, via, ok=False, result=exc))
                raise
            self.calls.append(LoggedCall(name, key, via, ok=True, result=result))
            return result

        return logged

    def fetch(self, via: Iterable[Via] = ("direct", "code")) -> Fetch:
        """Return a :class:`Fetch` that answers only from recorded calls made ``via``.

        A call that was made and failed re-raises its exception; a call never made
        raises :class:`MissingData`.
        """
        allowed = set(via)

        def fetch(tool: str, /, **arguments: Any) -> Any:
            key = self.key(tool, **arguments)
            failure: Exception | None = None
            for logged in self.calls:
                if logged.tool == tool and logged.key == key and logged.via in allowed:
                    if logged.ok:
                        return logged.result
                    failure = logged.result
            if failure is not None:
                raise failure
            shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
            raise MissingData(f"the run never fetched {tool}({shown})")

        return fetch


def live_fetch(tools: Sequence[Callable[..., Any]]) -> Fetch:
    """Return a :class:`Fetch` that calls the tools themselves (for tests)."""
    by_name = {fn.__name__: fn for fn in tools}

    def fetch(tool: str, /, **arguments: Any) -> Any:
        return by_name[tool](**arguments)

    return fetch


def figures(text: str) -> list[str]:
    """The free-standing numbers of ``text``, thousands separators removed, unsigned.

    Args:
        text: Any text.

    Returns:
        The numbers as written, e.g. ``["6210.00", "53.5", "55"]``.
    """
    return [match.group(1) for match in _FIGURE.finditer(_THOUSANDS.sub("", text))]


def _backs(value: Decimal, figure: str) -> bool:
    places = len(figure.partition(".")[2])
    return value.quantize(Decimal(1).scaleb(-places)) == Decimal(figure)


def unbacked_figures(answer: str, evidence: Iterable[str]) -> list[str]:
    """The figures of ``answer`` that no figure of ``evidence`` backs.

    A figure is backed by an evidence number that rounds to it at the figure's own
    precision (``53.5`` is backed by ``53.46``; ``6210`` by ``6210.0``); whole numbers
    up to 10 are counts and need no backing.

    Args:
        answer: The final answer.
        evidence: Texts the model saw, and derived results it may quote.

    Returns:
        The unbacked figures, in answer order.
    """
    values = {Decimal(number) for text in evidence for number in figures(text)}
    return [
        f
        for f in figures(answer)
        if not ("." not in f and int(f) <= _COUNTABLE)
        and not any(_backs(value, f) for value in values)
    ]


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a run's answer is correct, and why not.

    Attributes:
        correct: Every check passed.
        problem: The first check that failed, worded for a reader; ``None`` if correct.
    """

    correct: bool
    problem: str | None = None


def _solve(scenario: Scenario, fetch: Fetch) -> tuple[Any, str | None]:
    try:
        return scenario.solve(fetch), None
    except MissingData as exc:
        return None, str(exc)
    except Exception as exc:  # the solver hit a failed call it needed
        return None, f"a call the answer needs failed: {type(exc).__name__}: {exc}"


def check_run(scenario: Scenario, answer: str, log: CallLog, seen: Iterable[str]) -> Verdict:
    """Check a run's final answer (see the module docstring for the three checks).

    Args:
        scenario: The scenario.
        answer: The run's final answer.
        log: Every tool call the run made.
        seen: The tool results and ``run_code`` outputs in the model's context.

    Returns:
        The verdict.
    """
    solution, missing = _solve(scenario, log.fetch())
    if missing is not None:
        return Verdict(False, f"coverage: {missing}")
    if solution != scenario.expected:
        return Verdict(False, "coverage: the fetched data gives a different answer")
    if not scenario.check(answer):
        return Verdict(False, "facts: the answer misses a fact or names a wrong candidate")
    evidence = [scenario.prompt, *seen]
    derived, _ = _solve(scenario, log.fetch(via=("direct",)))
    if derived is not None:
        evidence.append(repr(derived))
    unbacked = unbacked_figures(answer, evidence)
    if unbacked:
        return Verdict(False, f"figures: {', '.join(unbacked)} not in anything the run saw")
    return Verdict(True)

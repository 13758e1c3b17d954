"""The data model of a benchmark scenario: tools, a task, its answer, three trajectories.

A :class:`Scenario` is a realistic tool-using task over deterministic data. It carries
the tools (plain typed functions with Google-style docstrings, the way a developer
registers them), the task prompt, the correct answer computed independently of the tools,
a solver that recomputes the answer from tool results (to check what a run actually
fetched), and three scripted trajectories of the kind a capable model produces:

* ``classic``: tool calls turn by turn, several calls in one turn wherever a model can
  make them in parallel, every tool result flowing through the model's context;
* ``ptc``: ``run_code`` calls only. A snippet relies only on what the stubs document;
  where they do not document a format the trajectory first prints a sample, and where a
  snippet would rest on a guess the first attempt fails and is fixed;
* ``hybrid``: the model is offered the direct tools *and* ``run_code`` (Anthropic's
  ``allowed_callers`` lets one tool be called both ways) and takes whichever path is
  cheaper for each step.

The design follows Anthropic's programmatic tool calling write-up (the team-budget
example) and the classic-versus-code comparison of the CodeAct paper.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = [
    "RUN_CODE",
    "Fetch",
    "MissingData",
    "Scenario",
    "ScriptedCall",
    "ScriptedTurn",
    "Shape",
    "call",
    "final",
    "normalize_answer",
    "run_code",
    "turn",
]

RUN_CODE = "run_code"
"""Name of the code tool in PTC and hybrid trajectories."""

Shape = Literal[
    "fan-out", "search and read", "single lookup", "two lookups", "free text", "chained lookups"
]
"""What a task looks like: ``fan-out`` (many calls, large results, a small answer: the
shape that favours code), ``search and read`` (one search, one large document), or one
of the low-advantage shapes (small results, or text the model must read itself)."""

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


class Fetch(Protocol):
    """How a solver gets tool results: ``fetch("get_expenses", employee_id="e1")``.

    Raises :class:`MissingData` when the run being checked never made that call, and
    the tool's own exception when the call failed.
    """

    def __call__(self, tool: str, /, **arguments: Any) -> Any: ...


class MissingData(LookupError):
    """A solver needed a tool result the run being checked never fetched."""


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One tool call a scripted model makes.

    Attributes:
        name: The tool's name (``"run_code"`` for a code call).
        arguments: The call's arguments, JSON-compatible.
    """

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ScriptedTurn:
    """One assistant turn of a scripted trajectory.

    Attributes:
        text: What the model writes (reasoning shown to the user, or the final answer).
        tool_calls: The calls it makes in this turn; several calls are issued in
            parallel, the way models emit them in one message.
    """

    text: str = ""
    tool_calls: tuple[ScriptedCall, ...] = ()

    @property
    def is_final(self) -> bool:
        """``True`` for a turn without tool calls (the answer)."""
        return not self.tool_calls


def call(name: str, **arguments: Any) -> ScriptedCall:
    """Build a :class:`ScriptedCall` from keyword arguments.

    Args:
        name: The tool's name.
        **arguments: The call's arguments.

    Returns:
        The call.
    """
    return ScriptedCall(name=name, arguments=dict(arguments))


def run_code(code: str) -> ScriptedCall:
    """Build a ``run_code`` call; the snippet is dedented and stripped.

    Args:
        code: The Python snippet.

    Returns:
        The call.
    """
    return ScriptedCall(name=RUN_CODE, arguments={"code": textwrap.dedent(code).strip() + "\n"})


def turn(*tool_calls: ScriptedCall, text: str = "") -> ScriptedTurn:
    """Build a turn that makes ``tool_calls`` (in parallel when more than one).

    Args:
        *tool_calls: The calls.
        text: Text the model writes beside the calls.

    Returns:
        The turn.
    """
    return ScriptedTurn(text=text, tool_calls=tuple(tool_calls))


def final(text: str) -> ScriptedTurn:
    """Build the closing turn: the final answer, no tool calls.

    Args:
        text: The answer.

    Returns:
        The turn.
    """
    return ScriptedTurn(text=textwrap.dedent(text).strip())


def normalize_answer(text: str) -> str:
    """Normalize answer text for fact matching.

    Lowercases, drops thousands separators (``12,345`` -> ``12345``), ``$`` signs, ``**``
    markdown emphasis and backticks, and folds runs of whitespace to one space.

    Args:
        text: Answer text.

    Returns:
        The normalized text.
    """
    text = _THOUSANDS.sub("", text)
    text = text.replace("$", "").replace("**", "").replace("`", "")
    return " ".join(text.lower().split())


@dataclass(frozen=True, slots=True)
class Scenario:
    """A benchmark task: tools over deterministic data, a prompt, the answer, trajectories.

    To add a scenario to the suite, write a module under ``ptcbox.bench.scenarios`` that
    defines ``SCENARIO`` and list it in that package's ``SCENARIOS``.

    Attributes:
        name: Short identifier, e.g. ``"budget_overruns"``.
        title: One line for tables.
        prompt: The user's task, as sent to the model.
        tools: The tool functions (typed, Google-style docstrings).
        reference: Computes the correct answer straight from the scenario's data,
            without going through the tools.
        solve: Computes the same answer from tool results only, fetched through its
            :class:`Fetch` argument. Run against what a trajectory fetched, it tells
            whether the calls made cover the data the answer needs; the numbers in its
            result are the figures a model may derive from raw tool results it saw.
        expected: The correct answer, written down (tests check ``reference()`` and
            ``solve`` over the live tools both equal it).
        facts: Strings every correct final answer contains (compared after
            :func:`normalize_answer`), derived from ``expected``.
        classic: The classic trajectory (direct tool calls).
        ptc: The programmatic trajectory (``run_code`` calls only).
        hybrid: The trajectory with direct tools and ``run_code`` both offered.
        absent: Strings a correct answer must not contain (wrong candidates).
        shape: What the task looks like (:data:`Shape`).
        explores: The PTC trajectory already starts by looking at the data (so
            ``--strict`` adds no exploration call).
        expected_tool_errors: How many tool calls of the classic trajectory fail by
            design (a scenario with a tool that fails for some inputs).
    """

    name: str
    title: str
    prompt: str
    tools: tuple[Callable[..., Any], ...]
    reference: Callable[[], Any]
    solve: Callable[[Fetch], Any]
    expected: Any
    facts: tuple[str, ...]
    classic: tuple[ScriptedTurn, ...]
    ptc: tuple[ScriptedTurn, ...]
    hybrid: tuple[ScriptedTurn, ...]
    absent: tuple[str, ...] = ()
    shape: Shape = "fan-out"
    explores: bool = False
    expected_tool_errors: int = 0

    def check(self, answer: str) -> bool:
        """Tell whether ``answer`` states the correct result.

        Args:
            answer: The model's final answer text.

        Returns:
            ``True`` when every fact is present and no wrong candidate is.
        """
        text = normalize_answer(answer)
        if not all(normalize_answer(fact) in text for fact in self.facts):
            return False
        return not any(normalize_answer(wrong) in text for wrong in self.absent)

    def tool_names(self) -> tuple[str, ...]:
        """Return the names of the scenario's tools, in order."""
        return tuple(fn.__name__ for fn in self.tools)

    def trajectory(self, mode: str) -> tuple[ScriptedTurn, ...]:
        """Return the scripted trajectory of ``mode`` (``classic``, ``ptc``, ``hybrid``).

        Raises:
            ValueError: If ``mode`` is not one of the three.
        """
        if mode == "classic":
            return self.classic
        if mode == "ptc":
            return self.ptc
        if mode == "hybrid":
            return self.hybrid
        raise ValueError(f"mode must be 'classic', 'ptc' or 'hybrid', got {mode!r}")

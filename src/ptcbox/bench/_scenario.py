"""The data model of a benchmark scenario: tools, a task, its answer, two trajectories.

A :class:`Scenario` is a realistic multi-tool task over deterministic data. It carries
the tools (plain typed functions with Google-style docstrings, the way a developer
registers them), the task prompt, the correct answer computed independently of the tools,
and two scripted trajectories of the kind a capable model produces:

* ``classic``: tool calls turn by turn (several calls in one turn where a model would
  make them in parallel), every tool result flowing through the model's context;
* ``ptc``: one or a few ``run_code`` calls whose snippet does the work and prints only
  what the model needs, then the final answer.

The design follows Anthropic's programmatic tool calling write-up (the team-budget
example) and the classic-versus-code comparison of the CodeAct paper.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "RUN_CODE",
    "Scenario",
    "ScriptedCall",
    "ScriptedTurn",
    "call",
    "final",
    "normalize_answer",
    "run_code",
    "turn",
]

RUN_CODE = "run_code"
"""Name of the code tool in PTC trajectories."""

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


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

    Attributes:
        name: Short identifier, e.g. ``"budget_overruns"``.
        title: One line for tables.
        prompt: The user's task, as sent to the model.
        tools: The tool functions (typed, Google-style docstrings).
        reference: Computes the correct answer straight from the scenario's data,
            without going through the tools.
        expected: The correct answer, written down (tests check ``reference()`` equals it).
        facts: Strings every correct final answer contains (compared after
            :func:`normalize_answer`).
        absent: Strings a correct answer must not contain (wrong candidates).
        classic: The classic trajectory (direct tool calls).
        ptc: The programmatic trajectory (``run_code`` calls).
        code_facts: Strings the PTC snippets' combined output must contain, so a PTC run
            is only counted correct when the code itself found the answer.
        expected_tool_errors: How many tool calls of the classic trajectory fail by
            design (a scenario with a tool that fails for some inputs).
    """

    name: str
    title: str
    prompt: str
    tools: tuple[Callable[..., Any], ...]
    reference: Callable[[], Any]
    expected: Any
    facts: tuple[str, ...]
    classic: tuple[ScriptedTurn, ...]
    ptc: tuple[ScriptedTurn, ...]
    absent: tuple[str, ...] = ()
    code_facts: tuple[str, ...] = field(default=())
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

    def check_code_output(self, output: str) -> bool:
        """Tell whether the PTC snippets' output holds the answer (``code_facts``).

        Args:
            output: The rendered results of every ``run_code`` call, joined.

        Returns:
            ``True`` when every code fact is present.
        """
        text = normalize_answer(output)
        return all(normalize_answer(fact) in text for fact in self.code_facts or self.facts)

    def tool_names(self) -> tuple[str, ...]:
        """Return the names of the scenario's tools, in order."""
        return tuple(fn.__name__ for fn in self.tools)

"""What each trajectory kind is offered, and the trajectories as played.

* classic: the scenario's tools as direct tools. Their descriptions carry the same
  ``Returns:`` documentation the ``run_code`` stubs show (the arguments' docs are in
  the JSON schema), so both sides know the same about the data.
* ptc: only ``run_code``, whose stubs list the tools.
* hybrid: both, the way Anthropic's ``allowed_callers`` offers one tool to direct calls
  and to code execution at once. Every request carries the direct definitions (with
  their docs) and a ``run_code`` whose description lists the same tools as one-line
  signatures (:class:`HybridRunCode`): the docs are not repeated, but both sets are
  sent and counted.

``--strict`` (:func:`trajectory_for` with ``strict=True``) makes every trajectory that
uses ``run_code`` start with a call that prints a sample of each tool's result, unless
the scenario's PTC trajectory already explores.
"""

from __future__ import annotations

import inspect
from typing import Any

import docstring_parser

from ptcbox.agent_glue._introspect import describe
from ptcbox.agent_glue._registry import ToolRegistry
from ptcbox.agent_glue._run_code import RunCodeTool
from ptcbox.agent_glue._tokens import count_request_tokens
from ptcbox.agent_glue._tool import Tool
from ptcbox.bench._checks import CallLog
from ptcbox.bench._results import Mode
from ptcbox.bench._scenario import RUN_CODE, Scenario, ScriptedTurn, run_code, turn
from ptcbox.projections._stubs import format_annotation
from ptcbox.runtimes import CodeRuntime

__all__ = ["HybridRunCode", "build_toolset", "classic_description", "definition_tokens",
           "explore_turn", "trajectory_for"]  # fmt: skip

_SAMPLE_CHARS = 400


def classic_description(fn: object) -> str:
    """A direct tool's description: the docstring's text and its ``Returns:`` section.

    Args:
        fn: The tool function.

    Returns:
        The description, with the ``Returns:`` block worded as the stubs word it.
    """
    parsed = docstring_parser.parse(inspect.getdoc(fn) or "")
    text = describe(parsed)
    if parsed.returns is not None and parsed.returns.description:
        text += "\n\nReturns:\n    " + " ".join(parsed.returns.description.split())
    return text


class HybridRunCode(RunCodeTool):
    """``run_code`` offered beside the direct tools: its stubs are signatures only.

    The direct tool definitions already carry each tool's docs, so the code tool names
    the same functions without repeating them (one definition, two callers, as with
    Anthropic's ``allowed_callers``).

    Args:
        tools: The tools the code may call (the same ones offered directly).
        **options: Passed to :class:`~ptcbox.agent_glue.RunCodeTool`.
    """

    def __init__(self, tools: ToolRegistry, **options: Any) -> None:
        super().__init__(tools, **options)
        self._registry = tools

    @property
    def description(self) -> str:
        """The intro, then one ``def name(...) -> ...: ...`` line per tool."""
        intro = super().description.split("\n\n```python", 1)[0]
        lines = [
            f"def {t.signature_text}"
            + f" -> {format_annotation(t.signature.return_annotation)}: ..."
            for t in self._registry
        ]
        return (
            f"{intro}\n\nThe direct tools above are also predefined functions here "
            "(their descriptions say what they return):\n\n```python\n" + "\n".join(lines) + "\n```"
        )


def build_toolset(
    scenario: Scenario, mode: Mode, runtime: CodeRuntime, log: CallLog
) -> ToolRegistry:
    """Return what the model is offered, every tool call recorded in ``log``.

    Args:
        scenario: The scenario.
        mode: ``"classic"``, ``"ptc"`` or ``"hybrid"`` (see the module docstring).
        runtime: Runs the snippets.
        log: Records each call with how it was made (``direct`` or ``code``).

    Returns:
        The toolset for :func:`~ptcbox.agent_glue.step`.
    """
    direct = [
        Tool(log.wrap(fn, "direct"), description=classic_description(fn), is_parallel_safe=True)
        for fn in scenario.tools
    ]
    if mode == "classic":
        return ToolRegistry(direct)
    code_tools = ToolRegistry([log.wrap(fn, "code") for fn in scenario.tools])
    if mode == "hybrid":
        return ToolRegistry([*direct, HybridRunCode(code_tools, runtime=runtime, max_timeout=60.0)])
    return ToolRegistry([RunCodeTool(code_tools, runtime=runtime, max_timeout=60.0)])


def definition_tokens(toolset: ToolRegistry) -> int:
    """Tokens of the tool definitions one request carries (``o200k_base``)."""
    return count_request_tokens("", toolset.definitions(), []) - count_request_tokens("", [], [])


def explore_turn(scenario: Scenario) -> ScriptedTurn:
    """A ``run_code`` turn that prints a short sample of each tool's result.

    Each tool is called once with the arguments of its first call in the classic
    trajectory; a list shows its length and first item, everything is cut to 400
    characters, and a failing call prints its error.
    """
    first: dict[str, dict[str, object]] = {}
    for step in scenario.classic:
        for scripted in step.tool_calls:
            first.setdefault(scripted.name, scripted.arguments)
    calls = [
        f"({name!r}, lambda: {name}({', '.join(f'{k}={v!r}' for k, v in args.items())}))"
        for name, args in first.items()
    ]
    code = (
        "for name, fetch in [\n    "
        + ",\n    ".join(calls)
        + f""",
]:
    try:
        value = fetch()
    except Exception as exc:
        print(name, "failed:", exc)
        continue
    if isinstance(value, list):
        value = {{"items": len(value), "first": value[0] if value else None}}
    print(name, "->", repr(value)[:{_SAMPLE_CHARS}])
"""
    )
    return turn(run_code(code), text="First a look at what each tool returns.")


def trajectory_for(
    scenario: Scenario, mode: Mode, *, strict: bool = False
) -> tuple[ScriptedTurn, ...]:
    """The scripted trajectory of ``mode``, with the exploration ``strict`` asks for.

    Args:
        scenario: The scenario.
        mode: The trajectory kind.
        strict: Put :func:`explore_turn` before the first ``run_code`` turn, unless the
            scenario already explores or the trajectory never calls ``run_code``.

    Returns:
        The turns to play.
    """
    turns = scenario.trajectory(mode)
    if not strict or mode == "classic" or scenario.explores:
        return turns
    for index, step in enumerate(turns):
        if any(c.name == RUN_CODE for c in step.tool_calls):
            return (*turns[:index], explore_turn(scenario), *turns[index:])
    return turns

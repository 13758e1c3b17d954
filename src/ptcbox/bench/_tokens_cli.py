"""``ptcbox bench tokens``: the token benchmark over the scenario suite, from the shell.

Every scenario is run three ways (classic tool calls, ``run_code`` only, hybrid).
Scripted by default (the scenarios' trajectories, so the numbers are reproducible); with
``--base-url`` and ``--model`` (and ``OPENAI_API_KEY`` or ``--api-key``) the same
scenarios are run by a real model through the OpenAI SDK, and the API's own ``usage``
is reported beside our counts.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ptcbox._execute import RUNTIME_NAMES, aclose_runtime, make_runtime
from ptcbox.agent_glue._provider import ChatProvider
from ptcbox.bench._chart import write_chart
from ptcbox.bench._report import print_report, render_markdown
from ptcbox.bench._results import MODES, Mode, ScenarioComparison, TokenReport, TrajectoryRun
from ptcbox.bench._runner import DEFAULT_MAX_TURNS, ProviderFactory, run_scenario
from ptcbox.bench._scenario import Scenario
from ptcbox.bench.scenarios import SCENARIOS, get_scenario
from ptcbox.projections._stubs import count_tokens
from ptcbox.runtimes import CodeRuntime

__all__ = ["main", "run_token_benchmark"]

DEFAULT_CHART = "benchmarks/results/tokens.png"


async def run_token_benchmark(
    scenarios: Sequence[Scenario] = SCENARIOS,
    *,
    runtime: str | CodeRuntime = "subprocess",
    provider_factory: ProviderFactory | None = None,
    model: str = "scripted",
    max_turns: int = DEFAULT_MAX_TURNS,
    strict: bool = False,
    on_run: Callable[[TrajectoryRun], object] | None = None,
) -> TokenReport:
    """Run every scenario three ways (classic, PTC, hybrid) and collect the results.

    Args:
        scenarios: The scenarios, in table order.
        runtime: The runtime of the PTC snippets: ``"thread"`` or ``"subprocess"`` (one
            new runtime for the whole benchmark, closed at the end), or an open runtime
            (left open).
        provider_factory: Makes the model per run; ``None`` plays the scripts.
        model: The model's name for the report.
        max_turns: Most model turns per run.
        strict: Scripted trajectories that use ``run_code`` explore the data first.
        on_run: Called with each finished run.

    Returns:
        The report (no chart yet; see :func:`~ptcbox.bench.write_chart`).

    Raises:
        ValueError: If ``runtime`` is not a known runtime name.
    """
    count_tokens("load the encoding before timing anything")
    owned = isinstance(runtime, str)
    code_runtime = make_runtime(runtime) if isinstance(runtime, str) else runtime
    comparisons: list[ScenarioComparison] = []
    try:
        await code_runtime.execute("pass", {})  # start workers before anything is timed
        for scenario in scenarios:
            comparisons.append(
                await run_scenario(
                    scenario,
                    code_runtime,
                    provider_factory=provider_factory,
                    max_turns=max_turns,
                    strict=strict,
                    on_run=on_run,
                )
            )
    finally:
        if owned:
            await aclose_runtime(code_runtime)
    return TokenReport(
        model=model,
        runtime=type(code_runtime).__name__,
        comparisons=tuple(comparisons),
        strict=strict,
    )


def _openai_factory(base_url: str, model: str, api_key: str) -> ProviderFactory:
    import openai  # noqa: PLC0415

    from ptcbox.agent_glue._openai import OpenAIChatProvider  # noqa: PLC0415

    client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=2)

    def make(scenario: Scenario, mode: Mode) -> ChatProvider:
        return OpenAIChatProvider(client, model, temperature=0.0)

    return make


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ptcbox bench tokens",
        description="Token cost of classic tool calling vs run_code vs hybrid (both "
        "offered) over realistic tool-using scenarios (tokens counted with o200k_base; "
        "costs at Anthropic list prices, with and without prompt caching).",
    )
    parser.add_argument("--scenario", action="append", default=[], metavar="NAME",
                        help="run only this scenario (repeatable); see --list")  # fmt: skip
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("--runtime", choices=RUNTIME_NAMES, default="subprocess",
                        help="runtime of the run_code snippets (default: subprocess)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--chart", default=DEFAULT_CHART, metavar="PNG",
                        help=f"where to write the chart (default: {DEFAULT_CHART})")  # fmt: skip
    parser.add_argument("--no-chart", action="store_true", help="do not draw the chart")
    parser.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint: run a real model")
    parser.add_argument("--model", help="the real model's name (with --base-url)")
    parser.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    parser.add_argument("--strict", action="store_true",
                        help="every scripted run_code trajectory first prints a sample of "
                        "each tool's result")  # fmt: skip
    parser.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS,
                        help="most model turns per run")  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the token benchmark from the command line (``ptcbox bench tokens``).

    Args:
        argv: Arguments without the program name; ``None`` for ``sys.argv[1:]``.

    Returns:
        ``0`` when every run answered correctly, ``1`` when one did not, ``2`` for bad
        usage (unknown scenario, ``--base-url`` without ``--model`` or API key).
    """
    parser = _parser()
    args = parser.parse_args(argv)
    err = Console(stderr=True)
    if args.list:
        for scenario in SCENARIOS:
            print(f"{scenario.name:22} {scenario.shape:16} {scenario.title}")
        return 0
    try:
        scenarios = [get_scenario(name) for name in args.scenario] or list(SCENARIOS)
    except KeyError as exc:
        err.print(f"error: {exc.args[0]}")
        return 2
    factory: ProviderFactory | None = None
    model = "scripted"
    if args.base_url or args.model:
        api_key = args.api_key or os.environ.get("OPENAI_API_KEY")
        if not (args.base_url and args.model and api_key):
            err.print("error: a real model needs --base-url, --model and an API key "
                      "(--api-key or $OPENAI_API_KEY)")  # fmt: skip
            return 2
        factory = _openai_factory(args.base_url, args.model, api_key)
        model = args.model
    report = asyncio.run(_run_with_progress(scenarios, args, factory, model, err))
    if not args.no_chart:
        try:
            path = write_chart(report, args.chart)
            report = dataclasses.replace(report, chart_path=str(path))
        except ImportError as exc:
            err.print(f"chart skipped: {exc}")
    if args.markdown:
        Path(args.markdown).write_text(render_markdown(report), encoding="utf-8")
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print_report(report, Console(highlight=False, width=max(140, Console().width)))
    return 0 if report.all_correct else 1


async def _run_with_progress(
    scenarios: list[Scenario],
    args: argparse.Namespace,
    factory: ProviderFactory | None,
    model: str,
    console: Console,
) -> TokenReport:
    progress = Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=args.json or not console.is_terminal,
    )
    with progress:
        task = progress.add_task("running scenarios", total=len(MODES) * len(scenarios))

        def on_run(run: TrajectoryRun) -> None:
            progress.update(task, advance=1, description=f"{run.scenario} ({run.mode})")

        return await run_token_benchmark(
            scenarios,
            runtime=args.runtime,
            provider_factory=factory,
            model=model,
            max_turns=args.max_turns,
            strict=args.strict,
            on_run=on_run,
        )


if __name__ == "__main__":
    sys.exit(main())

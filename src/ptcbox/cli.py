"""The ``ptcbox`` command line: ``run``, ``demo``, ``bench`` and ``mcp``.

Exit codes: ``0`` success; ``1`` the snippet failed (``CodeResult.return_code``), or the
demo's answer was wrong; ``2`` bad usage (unreadable file, bad ``--tools``, unknown
runtime).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.markup import escape

from ptcbox._cli_bench import BENCHMARKS, run_benchmark
from ptcbox._cli_support import UsageError, import_file, read_source
from ptcbox._console import Output
from ptcbox._execute import DEFAULT_RUNTIME, RUNTIME_NAMES, aexecute
from ptcbox._result import CodeResult
from ptcbox._toolset import resolve_tools
from ptcbox.projections import ToolProjection
from ptcbox.sandbox import SandboxPolicy

__all__ = ["BENCHMARKS", "load_tools", "main"]

_POLICIES = ("default", "strict", "data", "trusted")
_POLICY_HELP = (
    "sandbox policy preset (data: numpy and pandas, subprocess runtime only, needs the data extra)"
)
_MAX_VALUE_CHARS = 2000


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ptcbox`` command line.

    Args:
        argv: Arguments without the program name; ``None`` for ``sys.argv[1:]``.

    Returns:
        The process exit code (see the module docstring).
    """
    parser = _parser()
    args, extra = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    if args.command != "bench" and extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "demo":
            return _cmd_demo(args)
        if args.command == "mcp":
            return _cmd_mcp(args, parser)
        if args.command == "bench":
            if args.benchmark is None:
                parser.parse_args(["bench", "--help"])
            return run_benchmark(args.benchmark, extra)
    except UsageError as exc:
        print(f"ptcbox {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `ptcbox demo | head`: stop quietly, as Unix tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    parser.print_help()
    return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ptcbox",
        description="Programmatic tool calling: run model-written Python that calls tools, "
        "sandboxed, under a timeout.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="run a snippet file with tools and print the result",
        description="Run FILE (or stdin with '-') with the tools named by --tools. "
        "Exit code: 0 ok, 1 the code failed, 2 bad usage.",
    )
    run.add_argument("file", metavar="FILE", help="Python source file, or '-' for stdin")
    run.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="a list of functions, a mapping, a tool registry or one function, as "
        "module:attr (the current directory is importable) or path/to/file.py:attr; "
        "may be repeated",
    )
    _runtime_option(run)
    run.add_argument("--timeout", type=_positive_float, metavar="S", help="seconds")
    run.add_argument("--policy", choices=_POLICIES, default="default", help=_POLICY_HELP)
    run.add_argument("--json", action="store_true", help="print CodeResult.to_dict() as JSON")

    demo = commands.add_parser(
        "demo",
        help="answer a question over an SQLite expense database with model-style snippets",
    )
    _runtime_option(demo)

    _mcp_parser(commands)

    bench = commands.add_parser("bench", help="benchmarks (run from a source checkout)")
    benchmarks = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    for name, (text, _load) in BENCHMARKS.items():
        benchmarks.add_parser(name, help=text, add_help=False)
    return parser


def _runtime_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runtime",
        choices=RUNTIME_NAMES,
        default=None,
        help=f"where the code runs (default: {DEFAULT_RUNTIME})",
    )


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("ptcbox")
    except PackageNotFoundError:
        return "unknown"


# --- ptcbox run ------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    code = read_source(args.file)
    namespace = _merge_tools(args.tools)
    policy = _policy(args.policy)
    try:
        result = asyncio.run(
            aexecute(code, namespace, runtime=args.runtime, timeout=args.timeout, policy=policy)
        )
    except (TypeError, ValueError, ImportError) as exc:  # ImportError: --policy data, no extra
        raise UsageError(str(exc)) from exc
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        _print_human(result)
    return result.return_code


def load_tools(spec: str) -> object:
    """Load the object a ``--tools`` argument names.

    Args:
        spec: ``module:attr`` (the current directory is importable; ``attr`` may be
            dotted) or ``path/to/file.py:attr``.

    Returns:
        The attribute: a list of functions, a mapping, a registry, or one function.

    Raises:
        UsageError: If the spec is malformed, the module cannot be imported, or the
            attribute does not exist.
    """
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise UsageError(f"--tools expects MODULE:ATTR (for example mytools:TOOLS), got {spec!r}")
    if target.endswith(".py") or os.sep in target:
        path = Path(target)
        if not path.is_file():
            raise UsageError(f"--tools {spec}: no file {path}")
        module = import_file(path, f"ptcbox_tools_{path.stem}")
    else:
        cwd = os.getcwd()
        if cwd not in sys.path:
            sys.path.insert(0, cwd)
        try:
            module = importlib.import_module(target)
        except Exception as exc:
            raise UsageError(
                f"--tools {spec}: cannot import {target!r}: {type(exc).__name__}: {exc}"
            ) from exc
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"--tools {spec}: {target} has no attribute {attr!r}") from None
    return obj


def _merge_tools(specs: list[str]) -> dict[str, ToolProjection]:
    namespace: dict[str, ToolProjection] = {}
    origin: dict[str, str] = {}
    for spec in specs:
        obj = load_tools(spec)
        if callable(obj) and not hasattr(obj, "projections") and not isinstance(obj, type):
            obj = [obj]  # one function (or projection) names one tool
        try:
            tools = resolve_tools(obj)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"--tools {spec}: {exc}") from exc
        for name, projection in tools.items():
            if name in namespace:
                raise UsageError(f"tool {name!r} is defined by both {origin[name]} and {spec}")
            namespace[name] = projection
            origin[name] = spec
    return namespace


def _policy(preset: str) -> SandboxPolicy | None:
    presets = {
        "strict": SandboxPolicy.strict,
        "data": SandboxPolicy.data,
        "trusted": SandboxPolicy.trusted,
    }
    return presets[preset]() if preset in presets else None


def _print_human(result: CodeResult) -> None:
    out = Output()
    out.raw(result.stdout)
    if result.stderr:
        sys.stderr.write(result.stderr if result.stderr.endswith("\n") else result.stderr + "\n")
        sys.stderr.flush()
    if result.value is not None:
        text = json.dumps(result.to_dict()["value"], ensure_ascii=False)
        if len(text) > _MAX_VALUE_CHARS:
            text = text[: _MAX_VALUE_CHARS - 20] + f" ... ({len(text)} chars)"
        out.line(f"value: {text}", "[bold]value:[/] " + escape(text))
    out.result_summary(result)


# --- ptcbox demo -----------------------------------------------------------------------


def _cmd_demo(args: argparse.Namespace) -> int:
    from ptcbox.demo import run_demo  # noqa: PLC0415 (keeps `ptcbox run` start-up lean)

    return asyncio.run(run_demo(args.runtime))


# --- ptcbox mcp ------------------------------------------------------------------------


def _mcp_parser(commands: Any) -> None:
    mcp = commands.add_parser("mcp", help="serve run_code over MCP (needs the mcp extra)")
    serve = mcp.add_subparsers(dest="mcp_command", metavar="COMMAND").add_parser(
        "serve",
        help="serve a run_code tool over MCP (stdio, or streamable HTTP with --http)",
        description="Serve run_code over MCP. Its description holds the tools' stubs; "
        "--upstream connects MCP servers whose tools the code can call (a code-mode proxy).",
    )
    serve.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="local tools, as for ptcbox run; may be repeated",
    )
    serve.add_argument(
        "--upstream",
        action="append",
        default=[],
        metavar="SPEC",
        help='an MCP server: a command line ("python server.py") or a URL; '
        "PREFIX=SPEC prefixes its tool names; may be repeated",
    )
    serve.add_argument(
        "--direct", action="store_true", help="also list the upstream tools as tools of their own"
    )
    serve.add_argument(
        "--discovery",
        action="store_true",
        help="list names and summaries only; code calls search_tools()/help()",
    )
    serve.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at /mcp")
    _runtime_option(serve)
    serve.add_argument("--policy", choices=_POLICIES, default="default", help=_POLICY_HELP)
    serve.add_argument(
        "--timeout",
        type=_positive_float,
        default=30.0,
        metavar="S",
        help="cap of one run_code execution in seconds (default 30)",
    )


def _cmd_mcp(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.mcp_command != "serve":
        parser.parse_args(["mcp", "--help"])
    try:
        from ptcbox.mcp import serve_command  # noqa: PLC0415 - the optional mcp extra
    except ImportError as exc:
        raise UsageError(f"needs the mcp extra: pip install 'ptcbox[mcp]' ({exc})") from exc
    if not args.tools and not args.upstream:
        raise UsageError("give the tools to serve: --tools MODULE:ATTR and/or --upstream SPEC")
    return serve_command(
        _merge_tools(args.tools),
        upstreams=args.upstream,
        runtime=args.runtime,
        policy=_policy(args.policy),
        http=args.http,
        direct=args.direct,
        discovery=args.discovery,
        max_timeout=args.timeout,
    )


if __name__ == "__main__":
    sys.exit(main())

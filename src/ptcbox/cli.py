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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.markup import escape

from ptcbox._console import Output
from ptcbox._execute import DEFAULT_RUNTIME, RUNTIME_NAMES, aexecute
from ptcbox._result import CodeResult
from ptcbox._toolset import resolve_tools
from ptcbox.projections import ToolProjection
from ptcbox.sandbox import SandboxPolicy

__all__ = ["BENCHMARKS", "load_tools", "main"]

BenchMain = Callable[[list[str]], int]
"""A benchmark's entry point: takes its own command-line arguments, returns an exit code."""

_POLICIES = ("default", "strict", "data", "trusted")
_POLICY_HELP = (
    "sandbox policy preset (data: numpy and pandas, subprocess runtime only, needs the data extra)"
)
_MAX_VALUE_CHARS = 2000


class UsageError(Exception):
    """Bad command-line input; reported on stderr with exit code 2."""


def benchmark_file(name: str) -> Callable[[], BenchMain]:
    """Return a loader for ``benchmarks/<name>.py``'s ``main(argv) -> int``.

    ``benchmarks/`` ships with the source tree, not the wheel: it is looked up in
    ``$PTCBOX_BENCHMARKS_DIR``, next to the ``src/`` this package was installed from
    (editable install), then in the current directory.
    """

    def load() -> BenchMain:
        path = _benchmarks_dir() / f"{name}.py"
        if not path.is_file():
            raise UsageError(f"no benchmark script at {path}")
        module = _import_file(path, f"ptcbox_benchmarks_{name}")
        entry = getattr(module, "main", None)
        if not callable(entry):
            raise UsageError(f"{path} has no main(argv) function")
        return entry  # type: ignore[no-any-return]

    return load


BENCHMARKS: dict[str, tuple[str, Callable[[], BenchMain]]] = {
    "latency": (
        "latency of trivial, tool-calling and CPU-bound snippets per runtime vs plain exec",
        benchmark_file("latency"),
    ),
    "tokens": (
        "token cost of classic tool calling vs run_code vs hybrid over the scenario suite",
        lambda: importlib.import_module("ptcbox.bench").main,  # ships in the package
    ),
    "peers": (
        "speed of ptcbox's runtimes vs smolagents, pydantic-monty and toolregistry PTC",
        benchmark_file("peers"),
    ),
    "throughput": (
        "sustained executions/s and new-source latency of every runtime vs monty and fork",
        benchmark_file("throughput"),
    ),
    "subprocess-latency": (
        "SubprocessRuntime: warm vs empty pool, throughput, worker and host memory",
        benchmark_file("subprocess_latency"),
    ),
    "sandbox-overhead": (
        "cost of the sandbox guards per kind of code, vs plain exec",
        benchmark_file("sandbox_overhead"),
    ),
    "corpus": (
        "share of model-style snippets each runtime runs exactly as CPython does",
        benchmark_file("corpus"),
    ),
    "mcp-catalog": (
        "tokens over a 48-tool MCP server: classic vs run_code vs discovery (mcp extra)",
        benchmark_file("mcp_catalog"),
    ),
    "mcp-overhead": (
        "per-call cost of an MCP tool call from a snippet vs from the host (mcp extra)",
        benchmark_file("mcp_overhead"),
    ),
}
"""``ptcbox bench`` subcommands: name -> (help text, loader of the entry point)."""


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
            return BENCHMARKS[args.benchmark][1]()(extra)
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
    code = _read_code(args.file)
    namespace = _merge_tools(args.tools)
    policy = _policy(args.policy)
    try:
        result = asyncio.run(
            aexecute(code, namespace, runtime=args.runtime, timeout=args.timeout, policy=policy)
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        _print_human(result)
    return result.return_code


def _read_code(file: str) -> str:
    try:
        if file == "-":
            return sys.stdin.read()
        return Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {file}: {exc}") from exc


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
        module = _import_file(path, f"ptcbox_tools_{path.stem}")
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


# --- ptcbox bench ----------------------------------------------------------------------


def _benchmarks_dir() -> Path:
    candidates = []
    if env := os.environ.get("PTCBOX_BENCHMARKS_DIR"):
        candidates.append(Path(env))
    candidates.append(Path(__file__).resolve().parents[2] / "benchmarks")
    candidates.append(Path.cwd() / "benchmarks")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise UsageError(
        "benchmarks/ was not found: the benchmarks ship with the source tree; run this "
        "from a clone installed with pip install -e . (or set PTCBOX_BENCHMARKS_DIR)"
    )


def _import_file(path: Path, module_name: str) -> Any:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    directory = str(path.resolve().parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise UsageError(f"cannot import {path}: {type(exc).__name__}: {exc}") from exc
    return module


if __name__ == "__main__":
    sys.exit(main())

"""Every example runs and prints what it promises; the README's code and commands hold."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
README = ROOT / "README.md"

TESTED_ELSEWHERE = {
    "openai_agent.py": "tests/agent_glue (the agent-glue helper's example)",
    "cli_snippet.py": "a snippet for ptcbox run, run by the cli_tools tests below",
    "mcp_tools.py": "tests/mcp/test_mcp_examples.py (needs the mcp extra)",
    "mcp_inventory_server.py": "tests/mcp/test_mcp_examples.py (the MCP examples' server)",
    "fastmcp_code_mode.py": "tests/integrations/test_fastmcp_example.py (the fastmcp extra)",
}


def run_python(*args: str, cwd: Path = ROOT, stdin: str | None = None) -> str:
    done = subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_basic() -> None:
    out = run_python(str(EXAMPLES / "basic.py"))
    assert "apples: $6.00 in stock\nplums: $8.75 in stock\n" in out
    assert "as expected: KeyError 'kiwis' True" in out
    assert "value: ['apples', 'plums']" in out
    assert "7 tool calls, failed: ['get_stock']" in out
    assert "return code: 1 error type: ZeroDivisionError" in out
    model_view = out.split("what a model sees:\n", 1)[1]
    assert model_view.startswith("[error: ZeroDivisionError]\n```\n")
    assert "division by zero" in model_view


def test_async_gather_runs_tool_calls_concurrently() -> None:
    out = run_python(str(EXAMPLES / "async_gather.py"))
    assert "ACME: 101.50\nGLOBEX: 58.25\nINITECH: 12.00\nUMBRELLA: 230.75\n" in out
    assert "most expensive: UMBRELLA" in out
    match = re.search(r"tool calls: 4 peak in flight: (\d+)", out)
    assert match is not None, out
    assert int(match.group(1)) > 1  # gather really overlapped the calls


def test_sessions_keep_variables_only_inside_the_session() -> None:
    out = run_python(str(EXAMPLES / "sessions.py"))
    assert "first call ok: True\n2 orders\ntotal: 62.0\n" in out
    assert "outside the session: NameError" in out


def test_cli_tools_module() -> None:
    out = run_python(str(EXAMPLES / "cli_tools.py"))
    assert out.startswith("Lisbon: 17.5 °C, sun\nNairobi: 24.0 °C, rain\nOslo: -3.0 °C, snow\n")
    assert "warmest: Nairobi" in out
    assert "--- ok in" in out


def test_cli_tools_module_through_the_module_form() -> None:
    ptcbox = Path(sys.executable).with_name("ptcbox")
    done = subprocess.run(
        [str(ptcbox), "run", "cli_snippet.py", "--tools", "cli_tools:TOOLS", "--json"],
        cwd=EXAMPLES,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"value": "Nairobi"' in done.stdout


@pytest.mark.parametrize(
    "example", ["pydantic_ai_agent.py", "openai_agents_agent.py", "langchain_agent.py"]
)
def test_framework_examples_answer_the_demo_question(example: str, tmp_path: Path) -> None:
    from ptcbox.demo import create_database, expected_answer

    environment = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / example)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**environment, "NO_COLOR": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    expected = expected_answer(create_database(tmp_path / "expenses.db"))
    answer = done.stdout.split("A:\n", 1)[1]
    assert answer.splitlines()[: len(expected)] == [
        f"- {row['name']}: ${row['over_by']:,.2f} over" for row in expected
    ]
    if example != "langchain_agent.py":  # the fake chat model reports no usage
        assert re.search(r"usage: 2 requests, [1-9]\d* input \+ [1-9]\d* output tokens", answer)


FRAMEWORK_EXAMPLES = {"pydantic_ai_agent.py", "openai_agents_agent.py", "langchain_agent.py"}


def test_every_example_is_tested() -> None:
    tested = {"basic.py", "async_gather.py", "sessions.py", "cli_tools.py", *FRAMEWORK_EXAMPLES}
    present = {path.name for path in EXAMPLES.glob("*.py")}
    assert present - tested - set(TESTED_ELSEWHERE) == set()
    assert tested <= present


# --- README -----------------------------------------------------------------------------


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", _readme(), flags=re.S)


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_blocks_run(index: int, tmp_path: Path) -> None:
    block = _blocks("python")[index]
    if "SandboxPolicy.data()" in block:  # the data preset's example needs the `data` extra
        pytest.importorskip("numpy")
        pytest.importorskip("pandas")
    run_python("-", cwd=tmp_path, stdin=block)


def test_readme_has_exactly_two_setup_commands_and_ci_runs_the_second() -> None:
    setup = _readme().split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)```", setup, flags=re.S)
    assert len(commands) == 2
    demo, tests = (c.strip() for c in commands)
    assert "\n" not in demo and "\n" not in tests
    assert demo.endswith(".venv/bin/ptcbox demo")
    assert ".venv/bin/python -m pytest" in tests
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests in ci_lines, "README's test command must be byte-identical to .ci/run's"


def test_readme_cli_lines_parse() -> None:
    """Every `ptcbox ...` line in the README's CLI section is accepted by the parser."""
    from ptcbox.cli import _parser

    cli_section = _readme().split("## Command line", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in re.findall(r"```bash\n(.*?)```", cli_section, flags=re.S)[0].splitlines()]
    assert lines
    for line in lines:
        words = shlex.split(line.split("#", 1)[0].split("<", 1)[0])
        assert words[0] == "ptcbox"
        args, extra = _parser().parse_known_args(words[1:])
        assert args.command in {"run", "demo", "bench"}
        assert not extra

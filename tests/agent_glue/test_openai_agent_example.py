"""examples/openai_agent.py runs: by default against its scripted local server, and
against any endpoint given --base-url, --model and OPENAI_API_KEY."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptcbox.agent_glue import ScriptedError, ScriptedOpenAIServer
from ptcbox.demo import create_database, expected_answer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "openai_agent.py"
sys.path.insert(0, str(EXAMPLE.parent))

import openai_agent  # noqa: E402


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLE), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


@pytest.mark.slow
def test_example_runs_against_the_scripted_server_by_default(tmp_path: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    expected = expected_answer(create_database(tmp_path / "expenses.db"))
    assert f"A: {len(expected)} engineers went over their Q3 travel budget:" in done.stdout
    for row in expected:
        assert f"{row['name']} ({row['id']}): ${row['over_by']:,.2f} over" in done.stdout
    assert "> run_code(" in done.stdout and "< run_code: ok" in done.stdout
    assert "stop: completed; 2 requests;" in done.stdout


@pytest.mark.slow
def test_example_uses_base_url_model_and_api_key() -> None:
    with ScriptedOpenAIServer(openai_agent.scripted_turns()) as server:
        done = _run(
            "--base-url",
            server.base_url,
            "--model",
            "my-model",
            env={"OPENAI_API_KEY": "sk-test-key"},
        )
        bodies = server.requests
    assert done.returncode == 0, done.stderr
    assert [body["model"] for body in bodies] == ["my-model", "my-model"]
    assert "stop: completed" in done.stdout


def test_example_reports_a_failing_endpoint() -> None:
    with ScriptedOpenAIServer([ScriptedError("model 'nope' not found", 404)]) as server:
        done = _run("--base-url", server.base_url, "--model", "nope", env={"OPENAI_API_KEY": "k"})
    assert done.returncode == 2
    assert "error: the model API failed: NotFoundError" in done.stderr
    assert "model 'nope' not found" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("flag", ["--help"])
def test_example_help(flag: str) -> None:
    done = _run(flag)
    assert done.returncode == 0 and "--base-url" in done.stdout and "--model" in done.stdout

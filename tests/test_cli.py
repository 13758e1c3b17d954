"""The ``ptcbox`` command line, run as a real subprocess through the installed entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from ptcbox import cli

_SCRIPT = Path(sys.executable).with_name("ptcbox")
_COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "ptcbox.cli"]

TOOLS_MODULE = '''
"""Tools for the CLI tests."""

def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b

def fail(reason: str) -> None:
    """Always raises."""
    raise RuntimeError(reason)

TOOLS = [add, fail]
MAPPING = {"plus": add}
NOT_TOOLS = 42

class _Registry:
    def projections(self):
        from ptcbox import DirectProjection
        return {"add": DirectProjection(name="add", fn=add)}

REGISTRY = _Registry()

class Holder:
    tools = [add]
'''


def ptcbox_cli(
    *args: str, cwd: Path, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run(
        [*_COMMAND, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "mytools.py").write_text(TOOLS_MODULE)
    (tmp_path / "ok.py").write_text("print('sum', add(a=2, b=3))\nadd(10, 20)\n")
    return tmp_path


def test_run_prints_stdout_then_a_plain_summary(workdir: Path) -> None:
    done = ptcbox_cli("run", "ok.py", "--tools", "mytools:TOOLS", cwd=workdir)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "sum 5"
    assert "value: 30" in lines
    assert any(line.startswith("--- ok in ") and "2 tool calls" in line for line in lines)
    assert any(line.split()[:3] == ["add", "2", "0"] for line in lines)  # tool, calls, errors
    assert "\x1b[" not in done.stdout  # not a terminal: no escape codes


def test_run_json_is_the_result_dict(workdir: Path) -> None:
    done = ptcbox_cli("run", "ok.py", "--tools", "mytools:TOOLS", "--json", cwd=workdir)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["stdout"] == "sum 5\n"
    assert data["value"] == 30
    assert data["return_code"] == 0
    assert [c["name"] for c in data["tool_calls"]] == ["add", "add"]
    assert data["tool_calls"][1]["arguments"] == {"a": 10, "b": 20}


def test_a_failing_snippet_exits_1_and_says_why(workdir: Path) -> None:
    (workdir / "bad.py").write_text(
        "try:\n    fail(reason='nope')\nexcept ToolError as e:\n    print('caught', e)\n1 / 0\n"
    )
    done = ptcbox_cli("run", "bad.py", "--tools", "mytools:TOOLS", cwd=workdir)
    assert done.returncode == 1
    assert "caught" in done.stdout and "nope" in done.stdout
    assert "failed (ZeroDivisionError)" in done.stdout
    assert "fail failed: RuntimeError: nope" in done.stdout
    as_json = ptcbox_cli("run", "bad.py", "--tools", "mytools:TOOLS", "--json", cwd=workdir)
    assert as_json.returncode == 1
    data = json.loads(as_json.stdout)
    assert data["error_type"] == "ZeroDivisionError"
    assert data["tool_calls"][0]["ok"] is False


def test_timeout_and_stdin(workdir: Path) -> None:
    done = ptcbox_cli(
        "run", "-", "--timeout", "0.5", "--json", cwd=workdir, stdin="while True:\n    pass\n"
    )
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["timed_out"] is True and data["error_type"] == "TimeoutError"


@pytest.mark.parametrize(
    "spec",
    [
        "mytools:MAPPING",
        "mytools:REGISTRY",
        "mytools:Holder.tools",
        "mytools.py:TOOLS",
        "mytools:add",
    ],
)
def test_every_tools_form(workdir: Path, spec: str) -> None:
    name = "plus" if spec.endswith("MAPPING") else "add"
    done = ptcbox_cli("run", "-", "--tools", spec, "--json", cwd=workdir, stdin=f"{name}(a=1, b=2)")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["value"] == 3


def test_tools_from_a_file_path_outside_the_cwd(
    workdir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    done = ptcbox_cli(
        "run", str(workdir / "ok.py"), "--tools", f"{workdir / 'mytools.py'}:TOOLS", cwd=elsewhere
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("sum 5\n")


def test_policy_option(workdir: Path) -> None:
    snippet = "print(().__class__.__name__)"
    default = ptcbox_cli("run", "-", "--json", cwd=workdir, stdin=snippet)
    assert default.returncode == 1
    trusted = ptcbox_cli("run", "-", "--json", "--policy", "trusted", cwd=workdir, stdin=snippet)
    assert trusted.returncode == 0, trusted.stdout
    assert json.loads(trusted.stdout)["stdout"] == "tuple\n"


def test_policy_data_option(workdir: Path) -> None:
    pytest.importorskip("pandas")
    snippet = "import pandas as pd\nprint(int(pd.DataFrame({'a': [1, 2, 3]})['a'].sum()))"
    default = ptcbox_cli("run", "-", "--json", cwd=workdir, stdin=snippet)
    assert default.returncode == 1 and json.loads(default.stdout)["error_type"] == "ImportError"
    data = ptcbox_cli("run", "-", "--json", "--policy", "data", cwd=workdir, stdin=snippet)
    assert data.returncode == 0, data.stdout + data.stderr
    assert json.loads(data.stdout)["stdout"] == "6\n"
    thread = ptcbox_cli(
        "run", "-", "--policy", "data", "--runtime", "thread", cwd=workdir, stdin=snippet
    )
    assert thread.returncode == 2
    assert "numpy and pandas run only in SubprocessRuntime" in thread.stderr


def test_policy_data_without_the_extra_is_a_usage_error(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    hide_modules: Callable[..., None],
) -> None:
    """Without numpy/pandas, `--policy data` printed an ImportError traceback (exit 1)."""
    hide_modules("numpy", "pandas")
    monkeypatch.chdir(workdir)
    assert cli.main(["run", "ok.py", "--tools", "mytools:TOOLS", "--policy", "data"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptcbox run: the policy allows numpy and pandas, which are not ")
    assert "pip install 'ptcbox[data]'" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "missing.py"], "cannot read missing.py"),
        (["run", "ok.py", "--tools", "mytools"], "expects MODULE:ATTR"),
        (["run", "ok.py", "--tools", "nosuchmodule:X"], "cannot import 'nosuchmodule'"),
        (["run", "ok.py", "--tools", "mytools:NOPE"], "has no attribute 'NOPE'"),
        (["run", "ok.py", "--tools", "mytools:NOT_TOOLS"], "got int"),
        (["run", "ok.py", "--tools", "mytools:TOOLS", "--tools", "mytools:add"], "defined by both"),
        (["run", "ok.py", "--timeout", "-1"], "positive number"),
        (["run", "ok.py", "--runtime", "docker"], "invalid choice"),
        (["run", "ok.py", "--bogus"], "unrecognized arguments"),
    ],
)
def test_usage_errors_exit_2(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(workdir)
    with pytest.raises(SystemExit) as raised:  # argparse errors exit directly
        raise SystemExit(cli.main(args))
    assert raised.value.code == 2
    assert message in capsys.readouterr().err


def test_usage_error_through_the_entry_point(workdir: Path) -> None:
    done = ptcbox_cli("run", "ok.py", "--tools", "mytools:NOPE", cwd=workdir)
    assert done.returncode == 2
    assert "has no attribute 'NOPE'" in done.stderr


def test_help_and_version(workdir: Path) -> None:
    bare = ptcbox_cli(cwd=workdir)
    assert bare.returncode == 2 and "run" in bare.stdout and "demo" in bare.stdout
    version = ptcbox_cli("--version", cwd=workdir)
    assert version.returncode == 0 and version.stdout.startswith("ptcbox ")
    bench = ptcbox_cli("bench", cwd=workdir)
    assert "latency" in bench.stdout


def test_demo_prints_ok(tmp_path: Path) -> None:
    done = ptcbox_cli("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("check against a direct SQL query: OK (7 engineers)") == 2
    assert "demo: every answer OK" in done.stdout
    assert "7 of 14 engineers went over their Q3 travel budget" in done.stdout
    assert "get_budget failed: LookupError: no travel budget set for e014 in Q3" in done.stdout


def test_bench_latency_quick_json(tmp_path: Path) -> None:
    table = tmp_path / "latency.md"
    done = ptcbox_cli(
        "bench", "latency", "--quick", "--json", "--markdown", str(table), cwd=tmp_path, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    names = [r["name"] for r in data["runners"]]
    rows = [line for line in table.read_text().splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| runner | `print(1)` | 100 tool calls |")
    assert [row.split(" | ")[0][2:] for row in rows[1:]] == names  # one row per runner
    assert "--markdown benchmarks/results/latency.md" in table.read_text()
    assert names[0] == "plain exec (baseline)"
    assert any(name.startswith("ThreadRuntime") for name in names)
    for runner in data["runners"]:
        assert runner["error"] is None, runner
        assert runner["skipped"] or set(runner["median_s"]) == {"trivial", "tools100", "loop200k"}
    thread = next(r for r in data["runners"] if r["name"] == "ThreadRuntime, default policy")
    assert {t["metric"] for t in thread["targets"]} == {
        "trivial_ms",
        "overhead_us_per_call",
        "loop_ratio",
    }


def test_bench_latency_help_reaches_the_benchmark(tmp_path: Path) -> None:
    done = ptcbox_cli("bench", "latency", "--help", cwd=tmp_path)
    assert done.returncode == 0
    assert "--quick" in done.stdout


def test_subprocess_runtime_option(workdir: Path) -> None:
    script = textwrap.dedent("print(add(a=1, b=1))")
    done = ptcbox_cli(
        "run", "-", "--tools", "mytools:TOOLS", "--runtime", "subprocess", cwd=workdir, stdin=script
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("2\n")


@pytest.mark.parametrize("name", sorted(cli.BENCHMARKS))
def test_every_bench_subcommand_loads_and_answers_help(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = cli.BENCHMARKS[name][1]()
    with pytest.raises(SystemExit) as raised:
        entry(["--help"])
    assert raised.value.code == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(cli.BENCHMARKS))
def test_bench_subcommand_usage_names_the_subcommand(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv0 = sys.argv[0]
    with pytest.raises(SystemExit) as raised:
        cli.main(["bench", name, "--help"])
    assert raised.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: ptcbox bench {name} ")
    assert sys.argv[0] == argv0  # restored
    with pytest.raises(SystemExit) as raised:
        cli.main(["bench", name, "--no-such-option"])
    assert raised.value.code == 2
    assert f"ptcbox bench {name}: error: unrecognized arguments" in capsys.readouterr().err


def _run_bytes(*args: str, cwd: Path, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120", "LC_ALL": "C", "LANG": "C"}
    env.pop("PYTHONIOENCODING", None)  # C locale: stdin's text layer uses surrogateescape
    return subprocess.run(
        [*_COMMAND, *args], cwd=cwd, input=stdin, capture_output=True, timeout=120,
        env=env, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("source", "where"),
    [
        (b"print(1)\n\xff\xfe = 2\n", "byte 0xff on line 2"),
        (b"\xff\n", "byte 0xff on line 1"),
        (b"# coding: ascii\nprint('\xc3\xa9')\n", "not valid ascii text (byte 0xc3 on line 2)"),
    ],
)
def test_source_that_is_not_text_is_a_usage_error(workdir: Path, source: bytes, where: str) -> None:
    """Invalid bytes on stdin or in FILE: exit code 2 and one clear line, no traceback,
    nothing run (under a C locale stdin's text layer used to let them through)."""
    (workdir / "bad.py").write_bytes(source)
    for args, name in ((("run", "-"), "stdin"), (("run", "bad.py"), "bad.py")):
        done = _run_bytes(*args, cwd=workdir, stdin=source)
        err = done.stderr.decode()
        assert done.returncode == 2, err
        assert err.startswith(f"ptcbox run: cannot read {name}: it is not valid "), err
        assert where in err and "save the code as UTF-8" in err, err
        assert "Traceback" not in err and done.stdout == b""


def test_source_is_decoded_as_cpython_decodes_a_script(workdir: Path) -> None:
    """A PEP 263 coding line, a BOM and CRLF newlines, from stdin and from FILE."""
    cases = [
        b"# -*- coding: latin-1 -*-\nprint('\xe9')\n",
        b"\xef\xbb\xbfprint('\xc3\xa9')\r\n",
        b"print('\xc3\xa9')\r\nprint(2)\r\n",
    ]
    for source in cases:
        (workdir / "src.py").write_bytes(source)
        plain = subprocess.run(
            [sys.executable, "src.py"], cwd=workdir, capture_output=True, check=True,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        )  # fmt: skip
        for args in (("run", "-"), ("run", "src.py")):
            done = _run_bytes(*args, "--json", cwd=workdir, stdin=source)
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout)["stdout"] == plain.stdout.decode(), source
    bad = _run_bytes("run", "-", cwd=workdir, stdin=b"# coding: nope\nprint(1)\n")
    assert bad.returncode == 2
    assert bad.stderr.decode() == "ptcbox run: cannot read stdin: unknown encoding: nope\n"


def test_python_dash_m_ptcbox_is_the_ptcbox_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ptcbox", "run", "-"],
        input="print(6 * 7)\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "42" in done.stdout

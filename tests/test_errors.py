"""The exception tree: messages built from typed fields."""

from __future__ import annotations

import pickle
import signal

from ptcbox import errors


def test_every_error_derives_from_the_base() -> None:
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.PtcboxError)


def test_limit_errors_carry_limit_observed_and_unit() -> None:
    exc = errors.ToolCallLimitExceeded(limit=5, observed=6)
    assert (exc.limit_name, exc.limit, exc.observed, exc.unit) == ("max_tool_calls", 5, 6, "calls")
    assert str(exc) == "max_tool_calls exceeded: 6 calls > limit 5 calls"
    big = errors.ArithmeticLimitExceeded("**", limit=4_000_000, observed=332_192_810, unit="bits")
    assert "332,192,810 bits > limit 4,000,000 bits" in str(big)
    assert isinstance(big, errors.LimitExceeded)


def test_tool_error_message_and_pickling() -> None:
    exc = errors.ToolError("get_budget", "KeyError: 'e9'")
    assert str(exc) == "tool 'get_budget' failed: KeyError: 'e9'"
    again = pickle.loads(pickle.dumps(exc))
    assert (again.tool_name, again.message) == ("get_budget", "KeyError: 'e9'")


def test_worker_crashed_names_the_signal() -> None:
    assert "signal 9 (SIGKILL)" in str(errors.WorkerCrashed(signal_number=signal.SIGKILL))
    assert "exited with status 3" in str(errors.WorkerCrashed(exit_code=3))
    assert str(errors.WorkerCrashed(detail="broken pipe")) == (
        "the worker process died: broken pipe"
    )


def test_host_errors_say_what_to_do() -> None:
    assert "create a new one" in str(errors.RuntimeClosedError("ThreadRuntime"))
    assert "start a new session" in str(errors.SessionEndedError("timed out"))

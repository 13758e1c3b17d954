"""CodeResult and ToolCallRecord: the frozen contract, to_dict() and render()."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ptcbox import CodeResult, ToolCallRecord


def test_seed_constructor_stays_valid_and_defaults_are_neutral() -> None:
    result = CodeResult(stdout="hi\n", stderr="", return_code=0, error=None)
    assert result.ok
    assert result.error_type is None
    assert result.timed_out is False
    assert result.value is None
    assert result.tool_calls == ()
    assert result.duration_s == 0.0
    assert result.truncated is False


def test_result_is_frozen_and_slotted() -> None:
    result = CodeResult(stdout="", stderr="", return_code=0, error=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.stdout = "x"  # type: ignore[misc]
    assert not hasattr(result, "__dict__")


def test_to_dict_always_json_encodes() -> None:
    record = ToolCallRecord(name="t", arguments={"when": {1, 2}, "obj": object()}, ok=True)
    result = CodeResult(
        stdout="ok \ud800",
        stderr="",
        return_code=1,
        error="boom \udfff",
        error_type="ValueError",
        value={"nan": float("nan"), "b": b"\xff"},
        tool_calls=(record,),
    )
    data = result.to_dict()
    text = json.dumps(data, allow_nan=False)
    assert "\ufffd" in data["stdout"]  # type: ignore[operator]
    decoded = json.loads(text)
    assert decoded["tool_calls"][0]["arguments"] == {"when": [1, 2], "obj": "<object object>"}
    assert decoded["value"] == {"nan": "NaN", "b": "base64:/w=="}


def test_render_success_shows_stdout_and_value() -> None:
    result = CodeResult(stdout="a\nb\n", stderr="", return_code=0, error=None, value=[1, "x"])
    assert result.render() == 'a\nb\n[value] [1, "x"]'


def test_render_failure_labels_the_error_type() -> None:
    result = CodeResult(
        stdout="before\n",
        stderr="",
        return_code=1,
        error="Traceback ...\nZeroDivisionError: division by zero",
        error_type="ZeroDivisionError",
    )
    text = result.render()
    assert text.startswith("before\n[error: ZeroDivisionError] Traceback")


def test_render_mentions_truncation_and_stderr() -> None:
    result = CodeResult(stdout="x", stderr="warn\n", return_code=0, error=None, truncated=True)
    assert result.render() == (
        "x\n[stderr]\nwarn\n[output was truncated to the sandbox's byte limit]"
    )


def test_render_of_nothing_is_explicit() -> None:
    assert CodeResult(stdout="", stderr="", return_code=0, error=None).render() == "[no output]"


def test_render_cuts_the_middle_and_keeps_both_ends() -> None:
    result = CodeResult(stdout="HEAD" + "x" * 10_000 + "TAIL", stderr="", return_code=0, error=None)
    text = result.render(max_chars=500)
    assert len(text) <= 500
    assert text.startswith("HEAD")
    assert text.endswith("TAIL")
    assert "characters omitted" in text


def test_render_refuses_a_tiny_budget() -> None:
    with pytest.raises(ValueError, match="at least 200"):
        CodeResult(stdout="", stderr="", return_code=0, error=None).render(max_chars=10)

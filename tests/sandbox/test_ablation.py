"""The guard-ablation seam (tests only): off unless the variable is set, read once."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ptcbox.sandbox import _ablation


def test_nothing_is_off_in_a_normal_run() -> None:
    if os.environ.get(_ablation.ENV_VAR):
        pytest.skip("this run ablates a guard on purpose (benchmarks/guard_ablation.py)")
    assert frozenset() == _ablation.OFF
    assert not any(_ablation.off(name) for name in (*_ablation.GUARDS, *_ablation.WALLS))


def test_a_misspelt_switch_is_an_error_not_a_silent_no_op() -> None:
    with pytest.raises(KeyError):
        _ablation.off("atribute")
    done = subprocess.run(
        [sys.executable, "-c", "import ptcbox"],
        env={**os.environ, _ablation.ENV_VAR: "atribute"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0 and "unknown switches ['atribute']" in done.stderr


def test_setting_the_variable_after_import_changes_nothing() -> None:
    script = (
        "import os\nfrom ptcbox.sandbox import _ablation\n"
        f"os.environ[{_ablation.ENV_VAR!r}] = 'attribute'\n"
        "import importlib\nfrom ptcbox.sandbox import _guards\n"
        "print(_ablation.off('attribute'), sorted(_ablation.OFF))"
    )
    env = {k: v for k, v in os.environ.items() if k != _ablation.ENV_VAR}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout == "False []\n", done.stderr

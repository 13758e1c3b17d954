"""Reuse mode's reset after ``done`` (``worker._reuse.Reuse.reset``) and the host's retry
of a run sent to a worker whose reset failed (``_recycle.Recycler.failed_reset``).

The reset runs after the worker sent its result, while the host reads it; a worker
whose reset fails exits with ``EXIT_RESET_FAILED`` before reading anything more, so a
run the host handed it meanwhile is run on another worker. Trusted-policy code stands
in for what could make a reset fail (it may change modules, which persists in a reused
worker under that policy, see the README's reuse table).
"""

from __future__ import annotations

import pytest

from ptcbox import SubprocessRuntime
from ptcbox.runtimes.subprocess.worker._reuse import EXIT_RESET_FAILED
from ptcbox.sandbox import SandboxPolicy
from runtimes._leaks import no_leaks

pytestmark = pytest.mark.anyio

TRUSTED = SandboxPolicy.trusted()
MARK = "import json, os\njson._ptc_served = True\nos.getpid()"
EXIT_IF_MARKED = (
    "import json, os\nif getattr(json, '_ptc_served', False):\n    os._exit({code})\nos.getpid()"
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("code", [EXIT_RESET_FAILED, 72], ids=["reset_failed", "other_exit"])
async def test_a_run_on_a_worker_that_left_before_reading_it_is_run_again(code: int) -> None:
    """One worker at a time: the second run goes to the reused worker, which exits at
    once, sending nothing. Exit status ``EXIT_RESET_FAILED``: the run is retried on a
    new worker and succeeds there (its pid is new). Control: any other status is a
    crash of this execution, as before (``WorkerCrashed``)."""
    runtime = SubprocessRuntime(TRUSTED, max_workers=1, max_executions_per_worker=10)
    async with no_leaks(), runtime:
        first = await runtime.execute(MARK, {})
        assert first.ok, first.error
        second = await runtime.execute(EXIT_IF_MARKED.format(code=code), {})
        if code == EXIT_RESET_FAILED:
            assert (second.error, second.stdout) == (None, "")
            assert isinstance(second.value, int) and second.value != first.value
        else:
            assert second.error_type == "WorkerCrashed", second.error
        after = await runtime.execute("1 + 1", {})
        assert after.value == 2


async def test_a_run_that_sent_something_first_is_never_run_again() -> None:
    """The retry is only for a run of which the host received nothing: one that printed
    (its output reached the host) and then exited with the same status is a crash."""
    code = (
        "import json, os, sys\nif getattr(json, '_ptc_served', False):\n"
        "    print('started', flush=True)\n    sys.stdout.flush()\n    import time\n"
        f"    time.sleep(0.2)\n    os._exit({EXIT_RESET_FAILED})\nos.getpid()"
    )
    runtime = SubprocessRuntime(TRUSTED, max_workers=1, max_executions_per_worker=10)
    async with no_leaks(), runtime:
        assert (await runtime.execute(MARK, {})).ok
        second = await runtime.execute(code, {})
        assert second.error_type == "WorkerCrashed", second.error
        assert second.stdout == "started\n"


async def test_a_failed_reset_retires_the_worker_and_the_next_run_succeeds() -> None:
    """A snippet replaces ``decimal.DefaultContext`` (the reset restores its fields:
    it now fails). Its own result is intact; the worker is not used again and every
    later execution succeeds. Control: without the replacement the worker serves again
    (the same pid)."""
    runtime = SubprocessRuntime(TRUSTED, max_workers=1, max_executions_per_worker=10)
    async with no_leaks(), runtime:
        plain = await runtime.execute("import os\nos.getpid()", {})
        again = await runtime.execute("import os\nos.getpid()", {})
        assert plain.ok and again.value == plain.value  # control: reused
        broken = await runtime.execute(
            "import decimal, os\ndecimal.DefaultContext = None\nos.getpid()", {}
        )
        assert (broken.error, broken.value) == (None, plain.value)
        pids = set()
        for _ in range(5):
            result = await runtime.execute("import os\nos.getpid()", {})
            assert result.ok, result.error
            pids.add(result.value)
        assert plain.value not in pids

"""A compromised SubprocessRuntime worker on the wire (issue 13, item 9).

Stand-in for a compromised worker: trusted-policy code writing raw frames to its socket
(the audit hook allows writes to descriptors it already holds). Each attack has a
positive control showing what the frame does when it stays within the rules.
"""

from __future__ import annotations

import textwrap

import pytest

from attacks.test_redteam2 import FIND_SOCKET
from ptcbox import DirectProjection, SubprocessRuntime
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio

TOOLS = {"add": DirectProjection("add", lambda a, b: a + b)}
POLICY = SandboxPolicy.trusted().replace(max_output_bytes=100_000)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _forge_done(value: str) -> str:
    """Trusted code that sends a 'done' carrying ``value`` (Python source), then waits."""
    return FIND_SOCKET + textwrap.dedent(f"""
        done = {{"t": "done", "value": {value}, "error": None, "error_type": None,
                "truncated": False}}
        os.write(fd, message(done))
        import time
        time.sleep(30)
    """)


async def test_a_done_value_over_the_cap_is_refused_by_the_host() -> None:
    """5M small items in 15 MB of JSON decoded to +390 MB and stayed in the result.
    Control: the very same frames are decoded into the result when the cap allows them
    (both checks are keyed on max_output_bytes)."""
    wide = POLICY.replace(max_output_bytes=100_000_000)
    async with SubprocessRuntime(wide) as runtime:
        for n in (150_000, 3_000_000):
            control = await runtime.execute(_forge_done(f"[0] * {n:_}"), TOOLS, timeout=60)
            assert control.ok and control.value == [0] * n, control.error  # decoded, kept
    async with SubprocessRuntime(POLICY) as runtime:
        items = await runtime.execute(_forge_done("[0] * 150_000"), TOOLS)
        assert items.error_type == "WireProtocolError" and items.value is None, items.error
        assert (items.error or "").startswith(
            "WireProtocolError: the 'done' value is over the output cap: at least "
        )
        assert (items.error or "").endswith("> 200,000 (max_output_bytes=100,000, twice)")
        big = await runtime.execute(_forge_done("[0] * 3_000_000"), TOOLS)
        assert big.error_type == "WireProtocolError" and big.value is None, big.error
        assert big.error == (
            "WireProtocolError: a 9,000,079-byte message that is not a tool call from the worker"
        )


FORGED = FIND_SOCKET + textwrap.dedent("""
    forged = {"t": "done", "value": "FORGED", "error": None, "error_type": None,
              "truncated": False}
""")
NOW = FORGED + "os.write(fd, message(forged))\nimport time\ntime.sleep(30)\n"


async def test_a_session_worker_cannot_answer_the_next_execute_in_advance() -> None:
    """A session's every 'done' must carry the nonce of its execute, sent in an 'id'
    message just before 'run': a 'done' the worker queued earlier (it cannot know the
    next nonce) is refused like this one, which carries none. (Queuing from a thread
    after the real 'done' is walled off too: workers cannot start threads, with
    RLIMIT_NPROC=0 as an unprivileged user.)"""
    async with SubprocessRuntime(POLICY) as runtime:
        control = await runtime.execute(NOW, TOOLS)
        assert control.value == "FORGED"  # control: outside a session no nonce is asked
        async with runtime.session() as session:
            honest = await session.execute("n = 41\nn + 1", TOOLS)
            assert honest.ok and honest.value == 42, honest.error  # a real 'done' passes
            forged = await session.execute(NOW, TOOLS)
            assert forged.value is None and forged.error_type == "WireProtocolError"
            assert forged.error == (
                "WireProtocolError: a 'done' message that does not answer this execution "
                "(wrong or missing nonce)"
            )


HOLD = """
import asyncio
async def main():
    blob = "x" * 1_000_000
    await asyncio.gather(*(slow_echo(data=blob) for _ in range(12)))
await main()
"""


async def test_host_memory_held_for_one_execution_is_capped() -> None:
    """Item 1: 12 concurrent calls with 1 MB each held by the host; a 5 MB budget ends
    the execution with LimitExceeded (control: the default 256 MiB budget runs it)."""
    import asyncio as aio

    async def slow_echo(data: str) -> int:
        await aio.sleep(0.5)
        return len(data)

    tools = {"slow_echo": DirectProjection("slow_echo", slow_echo)}
    async with SubprocessRuntime() as runtime:
        control = await runtime.execute(HOLD, tools, timeout=30)
        assert control.ok, control.error
    small = SandboxPolicy(max_host_memory_bytes=5_000_000)
    async with SubprocessRuntime(small) as runtime:
        capped = await runtime.execute(HOLD, tools, timeout=30)
    assert capped.error_type == "LimitExceeded", capped.error
    assert (capped.error or "").startswith("LimitExceeded: max_host_memory_bytes exceeded: "), (
        capped.error
    )
    assert "> limit 5,000,000 bytes (tool-call arguments in progress" in (capped.error or "")

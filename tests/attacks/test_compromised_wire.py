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
    """5M small items in 15 MB of JSON decoded to +390 MB and stayed in the result."""
    async with SubprocessRuntime(POLICY) as runtime:
        control = await runtime.execute(_forge_done("list(range(1000))"), TOOLS)
        assert control.ok and control.value == list(range(1000))  # positive control
        items = await runtime.execute(_forge_done("[0] * 150_000"), TOOLS)
        assert items.error_type == "WireProtocolError", items.error
        assert "the 'done' value is over the output cap: at least " in (items.error or "")
        big = await runtime.execute(_forge_done("[0] * 3_000_000"), TOOLS)
        assert big.error_type == "WireProtocolError", big.error
        assert "-byte message that is not a tool call from the worker" in (big.error or "")


FORGED = FIND_SOCKET + textwrap.dedent("""
    forged = {"t": "done", "value": "FORGED", "error": None, "error_type": None,
              "truncated": False}
""")
NOW = FORGED + "os.write(fd, message(forged))\nimport time\ntime.sleep(30)\n"
LATER = FORGED + textwrap.dedent("""
    import threading, time
    def later():
        time.sleep(0.3)  # after this execute's own 'done': queued for the next one
        os.write(fd, message(forged))
    threading.Thread(target=later, daemon=True).start()
    "first"
""")


async def test_a_session_worker_cannot_answer_the_next_execute_in_advance() -> None:
    async with SubprocessRuntime(POLICY) as runtime:
        control = await runtime.execute(NOW, TOOLS)
        assert control.value == "FORGED"  # control: outside a session no nonce is asked
        async with runtime.session() as session:
            first = await session.execute(LATER, TOOLS)
            assert first.ok and first.value == "first", first.error
            second = await session.execute("import time\ntime.sleep(1)\n'honest'", TOOLS)
            assert second.value != "FORGED"
            assert second.error_type == "WireProtocolError", second
            assert "does not answer this execution (wrong or missing nonce)" in (second.error or "")
        async with runtime.session() as session:  # a forged 'done' in the same execute
            now = await session.execute(NOW, TOOLS)
            assert now.error_type == "WireProtocolError" and now.value is None

"""A large frame from the worker is never decoded on the event loop (issue 13, item 9).

Each 16 MiB call frame decoded on the loop stalled it 1-1.4 s. Over 1 MiB, the loop
hands the socket to a channel thread, which decodes it.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from ptcbox import DirectProjection, SubprocessRuntime
from ptcbox.runtimes._wire import parse_message
from ptcbox.runtimes.subprocess import _execution

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def echo(data: str) -> int:
    return len(data)


@pytest.mark.parametrize("size", [3_000_000, 1000])
async def test_large_frames_are_decoded_off_the_loop(
    monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    loop_thread = threading.current_thread()
    decoded: list[tuple[int, bool]] = []

    def recording(kind: int, payload: bytes, **options: Any) -> dict[str, Any]:
        decoded.append((len(payload), threading.current_thread() is loop_thread))
        return parse_message(kind, payload, **options)

    monkeypatch.setattr(_execution, "parse_message", recording)
    tools = {"echo": DirectProjection("echo", echo)}
    async with SubprocessRuntime() as runtime:
        result = await runtime.execute(f"await echo(data='x' * {size})", tools)
    assert result.ok and result.value == size, result.error
    call = max(decoded)
    assert call[0] > size
    assert call[1] is (size < 1 << 20)  # small frames: on the loop, as before

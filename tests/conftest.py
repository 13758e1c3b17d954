"""Suite-wide fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ptcbox import _execute


@pytest.fixture(autouse=True, scope="module")
def _close_shared_default_runtimes() -> Iterator[None]:
    """Close ``execute()``'s shared default runtimes after each test module.

    They live until interpreter exit by design (warm workers are reused), and their
    pool refills in the background; left open, their processes would show up in the
    leak checks (``psutil`` children) of whatever module runs next.
    """
    yield
    _execute._LOOP.shutdown()

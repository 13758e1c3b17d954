"""Suite-wide fixtures."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator

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


@pytest.fixture
def hide_modules(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """``hide_modules("numpy", ...)``: ``importlib.util.find_spec`` finds none of them
    (as if not installed) until the test ends."""

    def hide(*names: str) -> None:
        real = importlib.util.find_spec
        monkeypatch.setattr(
            importlib.util,
            "find_spec",
            lambda name, *args: None if name in names else real(name, *args),
        )

    return hide


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep every test of the session's one Ray cluster on one pytest-xdist worker.

    With ``-n 2 --dist loadgroup`` (the README's test command) each xdist worker is its
    own session; grouping the Ray tests means one cluster is started, not one per worker.
    """
    for item in items:
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec is not None else {}
        uses_ray = "ray_cluster" in getattr(item, "fixturenames", ())
        if uses_ray or params.get("runtime_name") == "ray" or "/ray/" in item.nodeid:
            item.add_marker(pytest.mark.xdist_group("ray"))

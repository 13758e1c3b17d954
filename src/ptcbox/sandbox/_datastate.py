"""Process-wide state of numpy and pandas that one execution could hand to the next.

A ``SubprocessRuntime`` worker of :meth:`SandboxPolicy.data` is forked from a template
that imported numpy and pandas; a reused worker (``max_executions_per_worker``) then runs
several executions in one process. Two pieces of their state are process-wide, not per
thread or per context variable (numpy's print options and error handling are context
variables: a fresh :class:`contextvars.Context` per execution resets them):

* numpy's legacy global generator (``np.random.seed``, ``np.random.rand``, pandas'
  ``df.sample()`` without ``random_state``): every worker forked from one template would
  start from the same state (the same "random" numbers in every execution), and a reused
  one would continue the previous execution's sequence, or its seed. Each execution gets
  a new generator seeded from the operating system's entropy, as a new CPython process
  would (:func:`fresh_numpy_random`).
* pandas' options (``pd.set_option``, ``pd.options.display.max_rows = 5``): restored to
  the template's values after each execution of a reused worker (:class:`PandasOptions`),
  through ``pd.set_option`` so that options with callbacks reset what they configured.

Nothing here imports numpy or pandas: a process that has not imported them has none of
their state.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["PandasOptions", "fresh_numpy_random"]


def fresh_numpy_random() -> None:
    """Give numpy's global generator (``np.random.*``) a new, OS-seeded bit generator.

    Replaces whatever a snippet set (``np.random.seed``, ``set_state``,
    ``set_bit_generator``) and the cached second normal deviate of the legacy
    ``RandomState``; no-op when numpy.random was never imported in this process.
    """
    nprandom = sys.modules.get("numpy.random")
    if nprandom is not None:
        nprandom.set_bit_generator(nprandom.MT19937())


def _flat(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        if type(value) is dict:
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


class PandasOptions:
    """pandas' option values as they are now, and a way back to them.

    No-op when pandas was never imported in this process.
    """

    def __init__(self) -> None:
        self._config = sys.modules.get("pandas._config.config")
        self._saved = self._current()

    def _current(self) -> dict[str, Any]:
        if self._config is None:
            return {}
        return _flat(self._config._global_config)

    def restore(self) -> bool:
        """Set every option that changed back to its saved value.

        Returns:
            ``False`` when an option appeared or disappeared (the process cannot be
            brought back to its saved state), else ``True``.
        """
        now = self._current()
        if now.keys() != self._saved.keys():
            return False
        changed = [key for key, value in now.items() if value is not self._saved[key]]
        if changed:
            set_option = sys.modules["pandas"].set_option
            for key in changed:
                set_option(key, self._saved[key])
        return True

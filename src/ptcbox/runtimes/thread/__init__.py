"""ThreadRuntime: snippets run in a worker thread of the host process.

- :mod:`~ptcbox.runtimes.thread._runtime`: :class:`ThreadRuntime`, one execution.
- :mod:`~ptcbox.runtimes.thread._session`: :class:`ThreadSession`, kept globals.
- :mod:`~ptcbox.runtimes.thread._job`: the body a snippet thread runs for one execution.
- :mod:`~ptcbox.runtimes.thread._control`: how a snippet thread is stopped.
- :mod:`~ptcbox.runtimes.thread._reaper`: re-injects the stop into threads not yet out.
- :mod:`~ptcbox.runtimes.thread._pool`: its threads, one fresh thread per execution.
- :mod:`~ptcbox.runtimes.thread._tools`: tools, ``print`` and ``sleep`` as the thread
  sees them, routed to the host's event loop.
"""

from ptcbox.runtimes.thread._runtime import ThreadRuntime
from ptcbox.runtimes.thread._session import ThreadSession

__all__ = ["ThreadRuntime", "ThreadSession"]

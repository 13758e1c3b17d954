"""SubprocessRuntime, host side: snippets run in pre-forked, locked-down worker processes.

Everything here runs in the host process; :mod:`ptcbox.runtimes.subprocess.worker` is
the code that runs in the child, and the two speak :mod:`ptcbox.runtimes._wire`.

- :mod:`~ptcbox.runtimes.subprocess._runtime`: :class:`SubprocessRuntime`.
- :mod:`~ptcbox.runtimes.subprocess._session`: :class:`SubprocessSession`.
- :mod:`~ptcbox.runtimes.subprocess._pool`: the template process and the idle workers.
- :mod:`~ptcbox.runtimes.subprocess._handle`: one worker process as the host sees it.
- :mod:`~ptcbox.runtimes.subprocess._execution`: one execution on the host's side.
- :mod:`~ptcbox.runtimes.subprocess._calls`: the tool calls a worker asks for.
- :mod:`~ptcbox.runtimes.subprocess._prepared`: an execution's check and ``run`` frame.
- :mod:`~ptcbox.runtimes.subprocess._compile`: short new and repeated snippets compiled
  by the host.
- :mod:`~ptcbox.runtimes.subprocess._result`: a worker's report as a ``CodeResult``.
- :mod:`~ptcbox.runtimes.subprocess._threads`: the threads that read a worker's channel.
"""

from ptcbox.runtimes.subprocess._pool import WorkerStartError
from ptcbox.runtimes.subprocess._runtime import SubprocessRuntime
from ptcbox.runtimes.subprocess._session import SubprocessSession

__all__ = ["SubprocessRuntime", "SubprocessSession", "WorkerStartError"]

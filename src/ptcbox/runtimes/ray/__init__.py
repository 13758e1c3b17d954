"""RayRuntime: SubprocessRuntime pools hosted by Ray actors across a cluster.

Needs the ``ray`` extra (``pip install 'ptcbox[ray]'``); Ray is imported when a
:class:`RayRuntime` is created, never by ``import ptcbox``.

- :mod:`~ptcbox.runtimes.ray._runtime`: :class:`RayRuntime`, the caller's side.
- :mod:`~ptcbox.runtimes.ray._session`: :class:`RaySession`.
- :mod:`~ptcbox.runtimes.ray._pool`: the actors, their slots, back-pressure, replacement.
- :mod:`~ptcbox.runtimes.ray._caller`: one execution's events, tools run in the caller.
- :mod:`~ptcbox.runtimes.ray._actor`: the actor (a SubprocessRuntime on its node).
- :mod:`~ptcbox.runtimes.ray._proxy`: the actor's tools that forward calls to the caller.
- :mod:`~ptcbox.runtimes.ray._messages`: the JSON that crosses between the two.
"""

from ptcbox.runtimes.ray._runtime import RayRuntime
from ptcbox.runtimes.ray._session import RaySession

__all__ = ["RayRuntime", "RaySession"]

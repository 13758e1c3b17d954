"""``operator.attrgetter`` / ``methodcaller`` that read attributes through the guard.

The stdlib's versions turn a string into attribute access in C, past the sandbox's
attribute guard (``attrgetter('__class__.__subclasses__')``). These read every dotted
part with the snippet's ``getattr`` guard, so they refuse exactly what ``obj.name`` refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["guarded_getters"]


def guarded_getters(getattr_: Callable[..., Any]) -> dict[str, Any]:
    """``{"attrgetter": ..., "methodcaller": ...}`` using ``getattr_`` for each lookup."""

    class attrgetter:  # noqa: N801 - the stdlib's name
        """attrgetter(attr, ...) -- sandboxed: each part is read with the getattr guard."""

        __slots__ = ("_attrs", "_paths")

        def __init__(self, attr: str, *attrs: str) -> None:
            names = (attr, *attrs)
            for name in names:
                if not isinstance(name, str):
                    raise TypeError("attribute name must be a string")
            self._attrs = names
            self._paths = tuple(tuple(name.split(".")) for name in names)

        def _one(self, obj: Any, path: tuple[str, ...]) -> Any:
            for part in path:
                obj = getattr_(obj, part)
            return obj

        def __call__(self, obj: Any, /) -> Any:
            if len(self._paths) == 1:
                return self._one(obj, self._paths[0])
            return tuple(self._one(obj, path) for path in self._paths)

        def __repr__(self) -> str:
            return f"operator.attrgetter({', '.join(map(repr, self._attrs))})"

        def __reduce__(self) -> Any:
            raise TypeError("cannot pickle 'operator.attrgetter' object")

    class methodcaller:  # noqa: N801 - the stdlib's name
        """methodcaller(name, /, *args, **kwargs) -- sandboxed: the method is read with
        the getattr guard."""

        __slots__ = ("_args", "_kwargs", "_name")

        def __init__(self, name: str, /, *args: Any, **kwargs: Any) -> None:
            if not isinstance(name, str):
                raise TypeError("method name must be a string")
            self._name, self._args, self._kwargs = name, args, kwargs

        def __call__(self, obj: Any, /) -> Any:
            return getattr_(obj, self._name)(*self._args, **self._kwargs)

        def __repr__(self) -> str:
            parts = [repr(self._name), *map(repr, self._args)]
            parts += [f"{k}={v!r}" for k, v in self._kwargs.items()]
            return f"operator.methodcaller({', '.join(parts)})"

        def __reduce__(self) -> Any:
            raise TypeError("cannot pickle 'operator.methodcaller' object")

    for cls in (attrgetter, methodcaller):
        cls.__module__ = "operator"
    return {"attrgetter": attrgetter, "methodcaller": methodcaller}

"""The public API: ``__all__`` lists are sorted and complete, and every public name is documented.

The rules (what "public" means in ptcbox):

1. A *package* (``ptcbox`` and each ``ptcbox.<sub>`` with an ``__init__``) declares its
   public API in ``__all__``, sorted the way ``ruff`` (RUF022) sorts it, without
   duplicates, and every listed name resolves. Code lives in private ``_name.py``
   modules, whose ``__all__`` is what they offer their siblings (not the API).
2. The top level re-exports everything of ``ptcbox.errors`` and of its own private
   modules (``ptcbox._name``, except the internal helpers in ``INTERNAL_MODULES``), plus
   every name the README imports from ``ptcbox``.
3. Closure: every ptcbox class a user receives from or hands to the public API (in the
   annotations of a public function, of a public class's methods and properties, or as
   a base of a public class) is itself public, so it can be named and looked up.
4. Every public name has a docstring: classes and functions their own ``__doc__``
   (not the one ``dataclass`` generates), public methods and properties defined in a
   public class too; constants and type aliases an attribute docstring (a string
   literal right after the assignment).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import ptcbox
from ptcbox import errors

ROOT = Path(__file__).resolve().parents[1]

INTERNAL_MODULES: dict[str, str] = {
    "ptcbox._jsonable": "conversion helpers shared by the runtimes; not part of the API",
    "ptcbox._datavalues": "numpy/pandas values as plain data for the wire; not part of the API",
    "ptcbox._cli_bench": "the benchmarks behind `ptcbox bench`; the command line is the API",
    "ptcbox._cli_support": "usage errors and file loading of the command line; not the API",
    "ptcbox._loop": "the private event loop thread behind execute(); not part of the API",
    "ptcbox._tracing": "span helpers for the facade and the agent glue; spans are the API",
    "ptcbox._tracing_calls": "the tool-call spans' wrapper; spans are the API",
    "ptcbox._render": "the layout behind CodeResult.render(); not part of the API",
}
"""Private modules whose ``__all__`` is for sibling modules, with the reason."""


def _walk() -> tuple[list[str], list[str]]:
    """Module and package names from the source tree (nothing imported at collection)."""
    base = Path(ptcbox.__file__).resolve().parent
    modules, packages = [], []
    for path in sorted(base.rglob("*.py")):
        parts = list(path.relative_to(base.parent).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts.pop()
            packages.append(".".join(parts))
        modules.append(".".join(parts))
    return sorted(modules), sorted(packages)


MODULES, PACKAGES = _walk()


def _is_private(module_name: str) -> bool:
    return module_name.rsplit(".", 1)[-1].startswith("_")


def _ruff_sort_key(name: str) -> tuple[int, str]:
    # RUF022: SCREAMING_SNAKE_CASE first, then CamelCase, then everything else.
    if name.isupper() or (name.upper() == name and any(c.isalpha() for c in name)):
        return (0, name)
    if name[:1].isupper():
        return (1, name)
    return (2, name)


@pytest.mark.parametrize("package", PACKAGES)
def test_package_all_is_sorted_unique_and_resolves(package: str) -> None:
    module = importlib.import_module(package)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{package} must declare __all__"
    assert list(exported) == sorted(exported, key=_ruff_sort_key), f"{package}.__all__ unsorted"
    assert len(set(exported)) == len(exported), f"{package}.__all__ has duplicates"
    for name in exported:
        assert hasattr(module, name), f"{package}.__all__ lists {name!r}, which is missing"


def _public_names() -> dict[int, str]:
    """id(object) -> a public dotted name, for every class in some package's __all__."""
    found: dict[int, str] = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            found.setdefault(id(getattr(module, name)), f"{package}.{name}")
    return found


def _ptcbox_classes() -> dict[str, list[type]]:
    """Class name -> the classes of that name defined in ptcbox modules."""
    index: dict[str, list[type]] = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module_name:
                index.setdefault(value.__name__, []).append(value)
    return index


def _annotation_texts(obj: Any) -> list[str]:
    texts: list[str] = []
    functions: list[Any] = []
    if isinstance(obj, type):
        for attr, value in vars(obj).items():
            if attr.startswith("_") and attr != "__init__":
                continue
            target = value.fget if isinstance(value, property) else value
            if isinstance(target, staticmethod | classmethod):
                target = target.__func__
            if isinstance(target, types.FunctionType):
                functions.append(target)
        texts += [str(t) for t in inspect.get_annotations(obj).values()]
    elif isinstance(obj, types.FunctionType):
        functions.append(obj)
    for function in functions:
        texts += [str(t) for t in function.__annotations__.values()]
    return texts


def test_classes_reachable_through_the_api_are_public() -> None:
    public = _public_names()
    classes = _ptcbox_classes()
    problems: list[str] = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            used: set[type] = set()
            for text in _annotation_texts(obj):
                for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
                    if not word.startswith("_"):
                        used.update(classes.get(word, ()))
            if isinstance(obj, type):
                used.update(b for b in obj.__mro__[1:] if b.__module__.startswith("ptcbox"))
            for cls in used:
                if id(cls) not in public and not cls.__name__.startswith("_"):
                    problems.append(
                        f"{package}.{name} exposes {cls.__module__}.{cls.__qualname__}, "
                        "which no package exports"
                    )
    assert not problems, "\n".join(sorted(set(problems)))


def _readme_imports() -> set[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    names: set[str] = set()
    for block in re.findall(r"```python\n(.*?)```", readme, flags=re.S):
        tree = ast.parse(block)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "ptcbox":
                names.update(alias.name for alias in node.names)
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "ptcbox"
            ):
                names.add(node.attr)
    return names


def test_top_level_reexports_errors_private_modules_and_readme_names() -> None:
    top = set(ptcbox.__all__)
    wanted: dict[str, str] = {}
    for name in errors.__all__:
        wanted[name] = "ptcbox.errors"
    for module_name in MODULES:
        if module_name.count(".") == 1 and _is_private(module_name):
            if module_name in INTERNAL_MODULES:
                continue
            for name in getattr(importlib.import_module(module_name), "__all__", ()):
                wanted[name] = module_name
    for name in _readme_imports():
        wanted.setdefault(name, "README.md")
    missing = {name: source for name, source in wanted.items() if name not in top}
    assert not missing, f"ptcbox.__all__ lacks {missing}"


def _has_attribute_docstring(name: str, package: str) -> bool:
    """Whether some module of ``package`` assigns ``name`` and follows it with a string."""
    candidates = [m for m in MODULES if m == package or m.startswith(package + ".")]
    for module_name in candidates:
        source = inspect.getsource(importlib.import_module(module_name))
        body = ast.parse(source).body
        for node, after in itertools.pairwise(body):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            elif sys.version_info >= (3, 12) and isinstance(node, ast.TypeAlias):
                targets = [node.name]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets) and (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                return True
    return False


def _own_doc(obj: Any) -> str | None:
    doc = obj.__dict__.get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)
    if not isinstance(doc, str) or not doc.strip():
        return None
    if isinstance(obj, type) and doc.startswith(f"{obj.__name__}("):
        return None  # generated by @dataclass
    return doc


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_has_a_docstring(package: str) -> None:
    problems: list[str] = []
    module = importlib.import_module(package)
    for name in getattr(module, "__all__", ()):
        problems += _doc_problems(package, name, getattr(module, name))
    assert not problems, "\n".join(problems)


def _doc_problems(package: str, name: str, obj: Any) -> list[str]:
    problems: list[str] = []
    documented_kinds = type | types.FunctionType | types.BuiltinFunctionType | types.ModuleType
    if isinstance(obj, documented_kinds) or (callable(obj) and hasattr(obj, "__wrapped__")):
        if not _own_doc(obj):
            problems.append(f"{package}.{name} has no docstring")
    elif not _has_attribute_docstring(name, package):
        problems.append(f"{package}.{name} needs a docstring: a string after its assignment")
    if isinstance(obj, type):
        for attr, value in vars(obj).items():
            if attr.startswith("_"):
                continue
            target = value.fget if isinstance(value, property) else value
            if isinstance(target, staticmethod | classmethod):
                target = target.__func__
            if isinstance(target, types.FunctionType) and not _own_doc(target):
                problems.append(f"{package}.{name}.{attr} has no docstring")
    return problems

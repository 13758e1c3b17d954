"""Loading the corpus: ``snippets/<category>.txt`` files of model-style snippets.

File format (one file per category; the file name without ``.txt`` is the category)::

    ### weather-warmest: pick the warmest city from several tool calls
    reports = [get_weather(c) for c in ["Oslo", "Lisbon"]]
    print(max(reports, key=lambda r: r["temp"])["city"])

    ### next-id: what this one shows
    ...

A snippet starts at a line ``### <id>: <notes>`` and runs to the next such line; blank
lines at its end are dropped. Ids are lower-case words joined by ``-`` and unique across
the corpus. To add a snippet, append it to the right file and run ``python
tests/corpus/freeze.py`` to record CPython's output for it in ``expected.json``.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DATA_DIR",
    "DATA_EXPECTED_PATH",
    "EXPECTED_PATH",
    "HERE",
    "KNOWN_FAILURES_PATH",
    "Snippet",
    "expected_python",
    "load_expected",
    "load_known_failures",
    "load_snippets",
    "python_version",
]

HERE = Path(__file__).resolve().parent
SNIPPETS_DIR = HERE / "snippets"
EXPECTED_PATH = HERE / "expected.json"
KNOWN_FAILURES_PATH = HERE / "known_failures.json"
DATA_DIR = HERE / "data"
"""The data category (numpy/pandas, run under ``SandboxPolicy.data()`` in
SubprocessRuntime only): its snippets and its own ``expected.json``."""
DATA_EXPECTED_PATH = DATA_DIR / "expected.json"

_HEADER = re.compile(r"^### (?P<id>[^:]+): (?P<notes>.+)$")
_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_ASYNC_NODES = (ast.Await, ast.AsyncFunctionDef, ast.AsyncFor, ast.AsyncWith)


@dataclass(frozen=True)
class Snippet:
    """One corpus entry.

    Attributes:
        id: Unique id, e.g. ``"fmt-thousands"``.
        category: The file it comes from, e.g. ``"formatting"``.
        notes: What the snippet exercises (one line).
        code: The snippet's source text.
    """

    id: str
    category: str
    notes: str
    code: str

    @property
    def sha(self) -> str:
        """The first 16 hex digits of the code's SHA-256 (ties an expectation to its code)."""
        return hashlib.sha256(self.code.encode()).hexdigest()[:16]

    @property
    def awaits(self) -> bool:
        """The snippet awaits somewhere, so it gets the ``async def`` tools."""
        return any(isinstance(node, _ASYNC_NODES) for node in ast.walk(ast.parse(self.code)))


def _parse(path: Path) -> list[Snippet]:
    category = path.stem
    found: list[Snippet] = []
    current: tuple[str, str] | None = None
    lines: list[str] = []

    def close() -> None:
        if current is not None:
            code = "\n".join(lines).rstrip() + "\n"
            found.append(Snippet(current[0], category, current[1], code))

    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = _HEADER.match(line)
        if match is None:
            if current is None and line.strip():
                raise ValueError(f"{path.name}:{number}: code before the first ### header")
            lines.append(line)
            continue
        close()
        if not _ID.match(match["id"]):
            raise ValueError(f"{path.name}:{number}: bad snippet id {match['id']!r}")
        current, lines = (match["id"], match["notes"].strip()), []
    close()
    return found


def load_snippets(directory: Path = SNIPPETS_DIR) -> list[Snippet]:
    """Every snippet of every category file, in file order, ids checked unique."""
    snippets: list[Snippet] = []
    for path in sorted(directory.glob("*.txt")):
        snippets.extend(_parse(path))
    seen: set[str] = set()
    for snippet in snippets:
        if snippet.id in seen:
            raise ValueError(f"snippet id {snippet.id!r} is used twice")
        seen.add(snippet.id)
    return snippets


def load_expected(path: Path = EXPECTED_PATH) -> dict[str, dict[str, Any]]:
    """``expected.json``'s snippets: id -> {sha, stdout, return_code, error_type, ...}."""
    if not path.exists():
        return {}
    data: dict[str, dict[str, Any]] = json.loads(path.read_text())["snippets"]
    return data


def expected_python(path: Path = EXPECTED_PATH) -> str | None:
    """The ``major.minor`` CPython version ``expected.json`` was frozen with.

    Error messages and reprs change between versions, so an expectation only holds for
    the interpreter that produced it.
    """
    if not path.exists():
        return None
    version: str = json.loads(path.read_text())["python"]
    return version


def python_version() -> str:
    """This interpreter's ``major.minor``."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def load_known_failures() -> dict[str, dict[str, str]]:
    """``known_failures.json``: runtime name -> {snippet id: "class N: reason"}."""
    if not KNOWN_FAILURES_PATH.exists():
        return {}
    data: dict[str, dict[str, str]] = json.loads(KNOWN_FAILURES_PATH.read_text())
    return data

"""Cost of issue 12's isolation: one side of an interleaved A/B run against a baseline.

Times, in milliseconds per execution (median of ``--n`` after a warmup), what issue 12's
last fixes touch: a fresh thread per ThreadRuntime execution (``print(1)``, 100 sync tool
calls), sync tools called from asyncio code in the execution's own threads (``gather``
of 10), SubprocessRuntime's single-use channel and tool threads, and the stdlib caches
snippets bypass (``strptime``/``fnmatch``/``struct`` 200 times). Run each side in its own
process, alternating, and compare medians measured in the same run::

    for i in 1 2 3; do
      PYTHONPATH=/path/to/baseline/src python benchmarks/isolation_ab.py --label main
      PYTHONPATH=src python benchmarks/isolation_ab.py --label branch
    done
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from ptcbox import SubprocessRuntime, ThreadRuntime, resolve_tools

__all__ = ["main"]


def echo(x: int) -> int:
    """Return x."""
    return x


CASES = {
    "print(1)": "print(1)",
    "100 sync calls": "for i in range(100):\n    echo(x=i)",
    "gather 10 sync": "import asyncio\nawait asyncio.gather(*(echo(x=i) for i in range(10)))",
    "stdlib caches x200": (
        "import datetime, fnmatch, struct\n"
        "for i in range(200):\n"
        "    datetime.datetime.strptime('2024-01-02', '%Y-%m-%d')\n"
        "    fnmatch.fnmatch('a.py', '*.py')\n"
        "    struct.unpack('<i', b'abcd')\n"
    ),
}


async def _time(runtime: Any, code: str, n: int) -> float:
    tools = resolve_tools([echo])
    for _ in range(max(3, n // 10)):
        result = await runtime.execute(code, tools, timeout=30)
        assert result.ok, result.error
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        await runtime.execute(code, tools, timeout=30)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


async def _run(n: int) -> dict[str, float]:
    out: dict[str, float] = {}
    async with ThreadRuntime() as thread:
        for name, code in CASES.items():
            out[f"thread {name}"] = await _time(thread, code, n)
    async with SubprocessRuntime() as sub:
        for name in ("print(1)", "100 sync calls", "gather 10 sync"):
            out[f"subprocess {name}"] = await _time(sub, CASES[name], max(n // 4, 10))
    return out


def main(argv: list[str] | None = None) -> int:
    """Print one JSON line: ``{"label": ..., "case": median_ms, ...}``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--label", default="run")
    parser.add_argument("--n", type=int, default=200, help="timed executions per case")
    args = parser.parse_args(argv)
    print(json.dumps({"label": args.label, **asyncio.run(_run(args.n))}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

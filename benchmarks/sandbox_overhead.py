"""What the sandbox costs: guarded snippets against plain ``exec`` in the same process.

Two tables:

1. **Loops** (200k iterations each): plain ``exec`` of ``compile(code)`` as the baseline,
   then the same code compiled by :func:`ptcbox.sandbox.compile_snippet` and run in
   :func:`ptcbox.sandbox.build_globals` globals under the default, strict and trusted
   policies, and under the default policy with ``os_enforced_limits=True`` (what
   ``SubprocessRuntime`` compiles). Targets: default <= 1.5x, trusted <= 1.1x,
   os_enforced <= 1.2x of plain ``exec`` (issue 2 / 3, measured on the arithmetic loop).
2. **Per-execution overhead** in microseconds: ``build_globals``, a compile-cache hit, the
   whole trivial snippet (cache hit + build_globals + exec of ``print(1)``), one guarded
   attribute read, one guarded ``*``.

Run::

    .venv/bin/python benchmarks/sandbox_overhead.py            # full run, ~20 s
    .venv/bin/python benchmarks/sandbox_overhead.py --quick    # smoke test
    .venv/bin/python benchmarks/sandbox_overhead.py --json
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from ptcbox.sandbox import SandboxPolicy, build_globals, compile_snippet

__all__ = ["LOOPS", "main", "measure_loops", "measure_overhead"]

LOOPS: dict[str, str] = {
    "arith": ("total = 0\nfor i in range(200_000):\n    if i % 3 == 0:\n        total += i * i\n"),
    "append_dict": (
        "items = []\n"
        "index = {}\n"
        "for i in range(200_000):\n"
        "    items.append(i)\n"
        "    index[i % 100] = index.get(i % 100, 0) + 1\n"
    ),
    "objects": (
        "class Acc:\n"
        "    def __init__(self):\n"
        "        self.n = 0\n"
        "        self._seen = []\n"
        "    def add(self, x):\n"
        "        self.n += x\n"
        "        self._seen.append(x)\n"
        "acc = Acc()\n"
        "for i in range(200_000):\n"
        "    acc.add(i)\n"
    ),
    "strings": (
        "parts = []\n"
        "for i in range(200_000):\n"
        "    s = str(i)\n"
        "    if s.startswith('1'):\n"
        "        parts.append(s.upper() + '-' + s)\n"
        "out = ','.join(parts[:1000])\n"
    ),
    "fstrings": (
        "rows = []\nfor i in range(200_000):\n    rows.append(f'{i}: {i * 0.5:.2f} {i!r:>8}')\n"
    ),
    "generators": (  # a check per generator-expression step and per resumed yield (R1)
        "def gen(n):\n"
        "    for i in range(n):\n"
        "        yield i\n"
        "total = sum(x * 2 for x in gen(200_000))\n"
    ),
}

VARIANTS: list[tuple[str, SandboxPolicy, bool]] = [
    ("default", SandboxPolicy(), False),
    ("strict", SandboxPolicy.strict(), False),
    ("trusted", SandboxPolicy.trusted(), False),
    ("os_enforced", SandboxPolicy(), True),
]


def measure_loops(repeat: int) -> dict[str, dict[str, float]]:
    """Median seconds per loop and variant (``"plain"`` is the baseline).

    The variants run round-robin, in a shuffled order, inside each repetition, so a load
    spike from other processes hits all of them alike instead of skewing one column.
    """
    results: dict[str, dict[str, float]] = {}
    sink = io.StringIO()
    for name, code in LOOPS.items():
        runners: dict[str, Callable[[], None]] = {}
        plain = compile(code, "<plain>", "exec")
        runners["plain"] = lambda plain=plain: exec(plain, {"__name__": "__main__"})
        for label, policy, enforced in VARIANTS:
            compiled = compile_snippet(code, policy, os_enforced_limits=enforced)

            def run(compiled: Any = compiled, policy: SandboxPolicy = policy) -> None:
                g = build_globals(policy, tools={}, stdout=sink, stderr=sink)
                exec(compiled.code, g)

            runners[label] = run
        samples: dict[str, list[float]] = {label: [] for label in runners}
        for fn in runners.values():
            fn()  # warm up
        order = list(runners.items())
        shuffler = random.Random(name)
        for _ in range(repeat):
            shuffler.shuffle(order)  # no variant always runs first (position effects)
            for label, fn in order:
                gc.collect()
                start = time.perf_counter()
                fn()
                samples[label].append(time.perf_counter() - start)
        results[name] = {label: statistics.median(v) for label, v in samples.items()}
    return results


def _per_call(fn: Callable[[], Any], number: int, repeat: int) -> float:
    best = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best.append((time.perf_counter() - start) / number)
    return statistics.median(best) * 1e6


def measure_overhead(number: int, repeat: int) -> dict[str, float]:
    """Median microseconds of the per-execution sandbox steps."""
    policy = SandboxPolicy()
    sink = io.StringIO()
    tools = {f"tool{i}": print for i in range(10)}
    compile_snippet("print(1)", policy)
    plain = compile("print(1)", "<plain>", "exec")

    def trivial() -> None:
        compiled = compile_snippet("print(1)", policy)
        g = build_globals(policy, tools=tools, stdout=sink, stderr=sink)
        exec(compiled.code, g)

    def trivial_plain() -> None:
        exec(plain, {"print": lambda *a: sink.write(" ".join(map(str, a)) + "\n")})

    g = build_globals(policy, tools={}, stdout=sink, stderr=sink)
    getattr_guard, mul_guard = g["__builtins__"]["_getattr_"], g["__builtins__"]["_mul_"]
    obj = [1]
    out = {
        "build_globals (10 tools)": _per_call(
            lambda: build_globals(policy, tools=tools, stdout=sink, stderr=sink), number, repeat
        ),
        "compile cache hit": _per_call(lambda: compile_snippet("print(1)", policy), number, repeat),
        "trivial snippet, sandbox": _per_call(trivial, number, repeat),
        "trivial snippet, plain exec": _per_call(trivial_plain, number, repeat),
        "guarded getattr (_getattr_)": _per_call(
            lambda: getattr_guard(obj, "copy"), number, repeat
        ),
        "plain getattr": _per_call(lambda: obj.copy, number, repeat),
        "guarded * (_mul_)": _per_call(lambda: mul_guard(3, 7), number, repeat),
        "plain *": _per_call(lambda: 3 * 7, number, repeat),
    }
    return out


def _print_tables(loops: dict[str, dict[str, float]], overhead: dict[str, float]) -> None:
    labels = ["plain"] + [v[0] for v in VARIANTS]
    print("Loops, 200k iterations: median ms (ratio to plain exec)")
    print(f"{'loop':<12}" + "".join(f"{label:>22}" for label in labels))
    for name, row in loops.items():
        cells = []
        for label in labels:
            ms = row[label] * 1e3
            ratio = row[label] / row["plain"]
            cells.append(f"{ms:>12.2f} ({ratio:4.2f}x)")
        print(f"{name:<12}" + "".join(f"{c:>22}" for c in cells))
    print("targets (arith loop): default <= 1.5x, trusted <= 1.1x, os_enforced <= 1.2x")
    print()
    print("Per-execution overhead: median microseconds")
    for name, us in overhead.items():
        print(f"  {name:<32}{us:>10.2f} us")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the tables (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--quick", action="store_true", help="few repetitions (smoke test)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else 31
    number, orepeat = (200, 3) if args.quick else (20_000, 7)
    loops = measure_loops(repeat)
    overhead = measure_overhead(number, orepeat)
    if args.json:
        json.dump({"loops_s": loops, "overhead_us": overhead}, sys.stdout, indent=2)
        print()
    else:
        _print_tables(loops, overhead)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Reuse mode: nothing of one execution is visible to the next in the same worker.

``SubprocessRuntime(max_executions_per_worker=N)`` runs several executions in one
worker process. Each attack sets some state in a first execution and reads it in a
second one that runs in the same worker (the test makes sure of it: the worker is the
pool's only one). The positive control runs the same pair in a session of the same
policy, where state is meant to persist: the second snippet does see the first one's
state there, so the probe really detects it. Under reuse it sees the defaults.

Then the retirement rules: after an execution that failed, timed out, crashed, hit a
limit, had its output truncated or in which the sandbox refused something (even when
the snippet caught the refusal), the worker is not reused.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from ptcbox import SubprocessRuntime
from ptcbox.sandbox import SandboxPolicy

from .conftest import TOOLS

pytestmark = pytest.mark.anyio

RESTRICTED, TRUSTED = "restricted", "trusted"

CPU_BURN = (  # uses 0.3 s of CPU (the view's clocks measure durations as CPython's do)
    "import time\nstart = time.process_time()\n"
    "while time.process_time() - start < 0.3:\n    pass\n"
    "assert time.thread_time() >= 0.3"
)

# id: (policy, first snippet, second snippet, second's stdout after the first in a
# session, second's stdout (or "!ErrorType") in a reused worker)
LEAKS: dict[str, tuple[str, str, str, str, str]] = {
    "globals": (
        RESTRICTED,
        "leak = 'L1'\ndef f(): return 2",
        "print(leak, f())",
        "L1 2\n",
        "!NameError",
    ),
    "decimal_context": (
        RESTRICTED,
        "import decimal\ndecimal.getcontext().prec = 5",
        "import decimal\nprint(decimal.getcontext().prec, decimal.Decimal(1) / 3)",
        "5 0.33333\n",
        "28 0.3333333333333333333333333333\n",
    ),
    "decimal_default_context": (
        RESTRICTED,
        "import decimal\nd = decimal.DefaultContext\nd.prec = 7\nd.traps[decimal.Inexact] = True",
        "import decimal\nc = decimal.Context()\n"
        "print(decimal.DefaultContext.prec, c.prec, c.traps[decimal.Inexact])",
        "7 7 True\n",
        "28 28 False\n",
    ),
    "warnings_filters": (
        RESTRICTED,
        "import warnings\nwarnings.filterwarnings('error')",
        "import warnings\nwarnings.warn('w')\nprint('ran on')",
        "!UserWarning",
        "ran on\n",
    ),
    "logging_config": (
        RESTRICTED,
        "import logging\nlogging.basicConfig(level=logging.DEBUG)",
        "import logging\nprint(logging.getLogger().level)",
        "10\n",
        "30\n",
    ),
    "random_state": (
        RESTRICTED,
        "import random\nrandom.seed(1)",
        "import random\nprint(random.random() == 0.13436424411240122)",
        "True\n",
        "False\n",
    ),
    # redteam24: the process's CPU clocks counted every execution the worker ran, so the
    # next one read how much CPU the earlier ones used (a channel from one to the next)
    "cpu_clocks": (
        RESTRICTED,
        CPU_BURN,
        "import time\nprint(time.process_time() < 0.3, time.thread_time() < 0.3)",
        "False False\n",
        "True True\n",
    ),
    "context_variables": (
        TRUSTED,
        "import contextvars, json\njson.var = contextvars.ContextVar('v')\njson.var.set(5)",
        "import json\nprint(json.var.get(0))",
        "5\n",
        "0\n",
    ),
    "files_in_working_directory": (
        TRUSTED,
        "import os\nopen('leak.txt', 'w').write('x')\n"
        "os.makedirs('a/b')\nopen('a/b/c', 'w').write('y')",
        "import os\nprint(sorted(os.listdir('.')))",
        "['a', 'leak.txt']\n",
        "[]\n",
    ),
    "working_directory": (
        TRUSTED,
        "import os\nos.mkdir('sub')\nos.chdir('sub')",
        "import os\nprint(os.getcwd() == os.environ['HOME'])",
        "False\n",
        "True\n",
    ),
    "environment": (
        TRUSTED,
        "import os\nos.environ['PTCBOX_LEAK'] = '1'",
        "import os\nprint(os.environ.get('PTCBOX_LEAK'))",
        "1\n",
        "None\n",
    ),
}


def _policy(kind: str) -> SandboxPolicy:
    return SandboxPolicy.trusted() if kind == TRUSTED else SandboxPolicy()


def _seen(result: Any) -> str:
    return result.stdout if result.ok else f"!{result.error_type}"


@pytest.fixture
async def runtimes() -> AsyncIterator[dict[str, Any]]:
    made = {
        kind: SubprocessRuntime(_policy(kind), min_idle=0, max_executions_per_worker=50)
        for kind in (RESTRICTED, TRUSTED)
    }
    made.update(
        {
            f"{kind}-session": SubprocessRuntime(_policy(kind), min_idle=0)
            for kind in (RESTRICTED, TRUSTED)
        }
    )
    yield made
    for runtime in made.values():
        await runtime.aclose()


async def _in_one_worker(runtime: SubprocessRuntime, first: str, second: str) -> Any:
    """Run both in the same worker (the pool's only one); return the second's result."""
    one = await runtime.execute(first, TOOLS)
    assert one.ok, one.error
    pool = runtime._pool
    assert len(pool._workers) == 1 and len(pool._idle) == 1  # recycled, nothing else
    (worker,) = pool._idle
    uses = runtime._recycler._uses[worker]
    two = await runtime.execute(second, TOOLS)
    assert worker not in pool._idle or runtime._recycler._uses.get(worker) == uses + 1
    assert worker.pid in pool._workers or not two.ok  # it ran there (retired if it failed)
    return two


@pytest.mark.parametrize("name", sorted(LEAKS))
async def test_state_of_one_execution_does_not_reach_the_next(
    name: str, runtimes: dict[str, Any]
) -> None:
    kind, first, second, leaked, clean = LEAKS[name]
    async with runtimes[f"{kind}-session"].session() as session:  # positive control
        assert (await session.execute(first, TOOLS)).ok
        assert _seen(await session.execute(second, TOOLS)) == leaked
    assert _seen(await _in_one_worker(runtimes[kind], first, second)) == clean


# id: (policy, snippet run after a clean one in the same worker, execute's timeout)
RETIRING: dict[str, tuple[str, str, float | None]] = {
    "error": (RESTRICTED, "raise ValueError('boom')", None),
    "timeout": (RESTRICTED, "while True:\n    pass", 1.0),
    "crash": (TRUSTED, "import os\nos._exit(3)", None),
    "memory_limit": (RESTRICTED, "data = bytearray(1 << 40)", None),
    "output_truncated": (RESTRICTED, "print('x' * 3_000_000)", None),
    "refusal_caught": (
        RESTRICTED,
        "import json\ntry:\n    json.leak = 1\nexcept Exception:\n    pass\nprint('ok')",
        None,
    ),
    "import_refusal_caught": (
        RESTRICTED,
        "try:\n    import os\nexcept ImportError:\n    pass\nprint('ok')",
        None,
    ),
    # redteam24: a module attribute the view withholds (its AttributeError caught) did
    # not retire the worker, though the README lists guarded attributes
    "view_refusal_caught": (
        RESTRICTED,
        "import typing\ntry:\n    typing.get_overloads\nexcept AttributeError:\n    pass\n"
        "print('ok')",
        None,
    ),
    "limit_caught": (
        RESTRICTED,
        "try:\n    big = 10 ** (10 ** 9)\nexcept Exception:\n    pass\nprint('ok')",
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(RETIRING))
async def test_a_worker_is_retired_after_a_failure_or_refusal(
    name: str, runtimes: dict[str, Any]
) -> None:
    kind, code, timeout = RETIRING[name]
    runtime = runtimes[kind]
    assert (await runtime.execute("print(1)", TOOLS)).ok
    pool = runtime._pool
    (worker,) = pool._idle  # recycled after the clean execution
    result = await runtime.execute(code, TOOLS, timeout=timeout)
    if name.endswith("caught"):  # the snippet went on, as it would in CPython
        assert result.ok and result.stdout == "ok\n", result.error
    else:
        assert not result.ok or result.truncated
    assert worker not in pool._idle and worker not in runtime._recycler._uses
    assert (await runtime.execute("print(2)", TOOLS)).stdout == "2\n"  # a fresh worker serves
    assert pool._idle and pool._idle[0] is not worker


async def test_a_worker_serves_at_most_n_executions() -> None:
    async with SubprocessRuntime(min_idle=0, max_executions_per_worker=3) as runtime:
        pool = runtime._pool
        served = []
        for _ in range(7):
            assert (await runtime.execute("print(1)", TOOLS)).ok
            served.append(pool._idle[0] if pool._idle else None)
        # three executions per worker: recycled twice, then retired (nothing idle)
        assert served[0] is served[1] is not None and served[2] is None
        assert served[3] is served[4] is not None and served[3] is not served[0]
        assert served[5] is None


async def test_the_default_is_a_fresh_process_per_execution() -> None:
    async with SubprocessRuntime(min_idle=0) as runtime:
        assert (await runtime.execute("print(1)", TOOLS)).ok
        assert not runtime._pool._idle and not runtime._recycler._uses


def test_max_executions_per_worker_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_executions_per_worker must be at least 1"):
        SubprocessRuntime(max_executions_per_worker=0)


async def test_a_worker_that_kept_memory_is_retired(runtimes: dict[str, Any]) -> None:
    """Trusted code can keep data in a module: 100 MiB kept retires the worker."""
    runtime = runtimes[TRUSTED]
    assert (await runtime.execute("print(1)", TOOLS)).ok
    pool = runtime._pool
    (worker,) = pool._idle
    result = await runtime.execute("import json\njson.kept = b'x' * (100 << 20)", TOOLS)
    assert result.ok, result.error
    assert worker not in pool._idle and worker not in runtime._recycler._uses
    small = await runtime.execute("import json\nprint(hasattr(json, 'kept'))", TOOLS)
    assert small.stdout == "False\n"  # a fresh worker: the module state went with the old one


# A generator suspended in its try block and kept in a reference cycle: its `finally`
# runs when the garbage collector frees it. In a reused worker that used to be during
# the *next* execution, which then printed the first one's text and recorded its tool
# call (red-team finding, this stop). Now the cycle is collected before the first
# execution's `done` is sent, and a worker that left such garbage is retired.
FINALIZER_FIRST = """\
def g():
    try:
        yield 1
    finally:
        print("A-finalizer", search("issued by A"))
x = g()
next(x)
c = [x]
c.append(c)
del x, c
"""
FINALIZER_SECOND = "junk = [{} for _ in range(5000)]\nprint('B')"


async def test_a_finalizer_of_one_execution_never_runs_in_the_next(
    runtimes: dict[str, Any],
) -> None:
    async with runtimes["restricted-session"].session() as session:  # positive control
        assert (await session.execute(FINALIZER_FIRST, TOOLS)).ok
        carried = await session.execute(FINALIZER_SECOND, TOOLS)
        assert "A-finalizer" in carried.stdout, carried  # the finally runs in the next one
    runtime = runtimes[RESTRICTED]
    first = await runtime.execute(FINALIZER_FIRST, TOOLS)
    assert first.ok, first.error
    # the finally ran in the first execution's time, and is the first one's
    assert first.stdout == "A-finalizer r:issued by A\n", first
    assert [call.name for call in first.tool_calls] == ["search"]
    second = await runtime.execute(FINALIZER_SECOND, TOOLS)
    assert second.ok and second.stdout == "B\n", second
    assert [call.name for call in second.tool_calls] == []


# A finally that leaves a new suspended generator in a new cycle each time it runs:
# collecting never ends, so the worker is retired rather than carry one into the next.
REARMING_FIRST = FINALIZER_FIRST.replace(
    '        print("A-finalizer", search("issued by A"))\n',
    '        print("A-finalizer", search("issued by A"))\n'
    "        h = g()\n        next(h)\n        k = [h]\n        k.append(k)\n",
)


async def test_a_finalizer_that_rearms_itself_retires_the_worker(
    runtimes: dict[str, Any],
) -> None:
    runtime = runtimes[RESTRICTED]
    assert (await runtime.execute("print(1)", TOOLS)).ok
    pool = runtime._pool
    (worker,) = pool._idle  # recycled after the clean execution
    first = await runtime.execute(REARMING_FIRST, TOOLS)
    assert first.ok and first.stdout.startswith("A-finalizer r:issued by A\n"), first
    assert worker not in pool._idle and worker not in runtime._recycler._uses  # retired
    second = await runtime.execute(FINALIZER_SECOND, TOOLS)
    assert second.ok and second.stdout == "B\n", second
    assert [call.name for call in second.tool_calls] == []


# numpy's legacy global generator and pandas' options are process-wide: a reused data
# worker used to continue the previous execution's seeded sequence (and its options);
# every worker forked from one template started from the same generator state.
DATA_LEAKS: dict[str, tuple[str, str, str]] = {
    # id: (first snippet, second snippet, second's stdout after the first in a session)
    "numpy_seed": (
        "import numpy as np\nnp.random.seed(1)\nnp.random.rand()",
        "import numpy as np\nprint(np.random.rand())",
        "0.7203244934421581\n",  # the second number after seed(1)
    ),
    "numpy_cached_gauss": (
        "import numpy as np\nnp.random.seed(3)\nnp.random.standard_normal()",
        "import numpy as np\nprint(np.random.get_state()[3])",
        "1\n",  # the legacy generator keeps the second deviate of its pair
    ),
    "numpy_set_state": (
        "import numpy as np\nnp.random.set_state(('MT19937', np.arange(624), 0))",
        "import numpy as np\nprint(np.random.get_state()[1][:3].tolist())",
        "[0, 1, 2]\n",
    ),
    "pandas_df_sample": (
        "import numpy as np\nnp.random.seed(7)",
        "import pandas as pd\nprint(pd.Series(range(100)).sample(3).tolist())",
        "[37, 26, 78]\n",  # pandas draws from numpy's global generator
    ),
    "pandas_options": (
        "import pandas as pd\npd.set_option('display.max_rows', 3)\n"
        "pd.set_option('display.precision', 2)",
        "import pandas as pd\n"
        "print(pd.get_option('display.max_rows'), pd.get_option('display.precision'))",
        "3 2\n",
    ),
}


@pytest.fixture(scope="module")
def data_policy() -> SandboxPolicy:
    pytest.importorskip("numpy")
    pytest.importorskip("pandas")
    return SandboxPolicy.data()


async def test_numpy_and_pandas_state_does_not_reach_the_next_execution(
    data_policy: SandboxPolicy,
) -> None:
    async with (
        SubprocessRuntime(data_policy, min_idle=0) as plain,
        SubprocessRuntime(data_policy, min_idle=0, max_executions_per_worker=50) as reused,
    ):
        defaults = await reused.execute(
            "import pandas as pd\n"
            "print(pd.get_option('display.max_rows'), pd.get_option('display.precision'))",
            TOOLS,
        )
        for name, (first, second, leaked) in DATA_LEAKS.items():
            async with plain.session() as session:  # positive control: state persists
                assert (await session.execute(first, TOOLS)).ok
                assert _seen(await session.execute(second, TOOLS)) == leaked, name
            seen = _seen(await _in_one_worker(reused, first, second))
            assert seen != leaked and not seen.startswith("!"), (name, seen)
            if name == "pandas_options":
                assert seen == defaults.stdout == "60 6\n"
            if name == "numpy_cached_gauss":
                assert seen == "0\n"


async def test_each_fresh_data_worker_draws_its_own_random_numbers(
    data_policy: SandboxPolicy,
) -> None:
    """Workers forked from one template used to share its generator state."""
    snippet = "import numpy as np\nnp.random.randint(0, 2**62, size=2).tolist()"
    async with SubprocessRuntime(data_policy, min_idle=0) as runtime:
        values = [(await runtime.execute(snippet, TOOLS)).value for _ in range(4)]
    assert all(isinstance(value, list) for value in values), values
    assert len({tuple(value) for value in values}) == 4, values

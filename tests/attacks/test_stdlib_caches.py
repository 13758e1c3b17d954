"""Issue 12: a snippet's object never becomes a key of a process-wide stdlib cache.

A key of the snippet's making (a ``str``/``int`` subclass, an ``IPv4Address`` subclass)
with a chosen ``__hash__`` and an ``__eq__`` that says yes answers later lookups of
the host and of other executions with the snippet's value. Each attack runs in a child
Python (a success poisons the process). The positive control is the same snippet under
``SandboxPolicy.trusted()`` in ThreadRuntime, which has no such guard: the host's own
call then returns the snippet's answer. Under the default policy the host's answer is
right and the cache holds none of the snippet's objects.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import pytest

from attacks._child import child_output
from ptcbox import ThreadRuntime
from ptcbox.sandbox import SandboxPolicy

CHILD = """
import asyncio, gc, sys
from ptcbox import ThreadRuntime
from ptcbox.sandbox import SandboxPolicy
gc.disable()  # the snippet's objects stay alive, as in a cycle the collector has not seen
mode, attack, host = sys.argv[1], sys.argv[2], sys.argv[3]
policy = SandboxPolicy.trusted() if mode == "trusted" else SandboxPolicy()
async def main():
    async with ThreadRuntime(policy) as runtime:
        result = await runtime.execute(attack, {}, timeout=10)
        print("snippet", result.ok, result.stdout.strip(), result.error_type)
asyncio.run(main())
try:
    exec(host)
except BaseException as exc:
    print("host raised", type(exc).__name__)
"""

KEY_CLASS = """
class K({base}):
    def __hash__(self):
        return hash({target!r})
    def __eq__(self, other):
        return True
"""

SNIPPET_KEYS_ALIVE = (  # the snippet's keys a cache keeps alive after the execution
    "import gc\nprint('host', sum(type(o).__name__ == 'K' for o in gc.get_objects()))"
)

ATTACKS = {
    # datetime.strptime's regex cache (_strptime._regex_cache), keyed by the format
    "strptime": (
        KEY_CLASS.format(base="str", target="%Y-%m-%d")
        + "import datetime\nprint(datetime.datetime.strptime('01-2024-02', K('%d-%Y-%m')))",
        "import datetime\nprint('host', datetime.datetime.strptime('2024-01-02', '%Y-%m-%d'))",
        "host 2024-01-02 00:00:00",
    ),
    # time.strptime (the sandbox's time view): the same cache
    "time.strptime": (
        KEY_CLASS.format(base="str", target="%Y")
        + "import time\nprint(time.strptime('03', K('%m')).tm_mon)",
        "import time\nprint('host', time.strptime('2024', '%Y').tm_year)",
        "host 2024",
    ),
    # struct's format cache (in C), keyed by the format
    "struct": (
        KEY_CLASS.format(base="str", target="<i")
        + "import struct\nprint(struct.unpack(K('>i'), bytes([0, 0, 0, 1])))",
        "import struct\nprint('host', struct.unpack('<i', bytes([1, 0, 0, 0])))",
        "host (1,)",
    ),
    # ipaddress's netmask cache, keyed by the prefix (str or int)
    "netmask": (
        KEY_CLASS.format(base="int", target="23")
        + "import ipaddress\nprint(ipaddress.IPv4Network(('10.0.0.0', K(8))))",
        "import ipaddress\nprint('host', ipaddress.IPv4Network('10.0.0.0/23'))",
        "host 10.0.0.0/23",
    ),
    # ipaddress's lru_cache'd is_private, keyed by the address object itself
    "is_private": (
        "import ipaddress\n"
        "class A(ipaddress.IPv4Address):\n"
        "    def __hash__(self):\n"
        "        return hash(ipaddress.IPv4Address('10.0.0.1'))\n"
        "    def __eq__(self, other):\n"
        "        return True\n"
        "print(A('9.9.9.9').is_private)",
        "import ipaddress\nprint('host', ipaddress.ip_address('10.0.0.1').is_private)",
        "host True",
    ),
    # enum.Flag's pseudo-members, keyed by value: re.I | re.M is RegexFlag(10)
    "flag": (
        KEY_CLASS.format(base="int", target=10) + "import re\nprint(int(re.RegexFlag(K(34))))",
        "import re\nprint('host', repr(re.I | re.M))",
        "host re.IGNORECASE|re.MULTILINE",
    ),
    # fnmatch's typed lru_cache: the snippet's key stays in it (and its __eq__ would
    # run in host lookups of an equal hash)
    "fnmatch": (
        KEY_CLASS.format(base="str", target="*.py")
        + "import fnmatch\nprint(fnmatch.fnmatch('a.py', K('*.py')))",
        SNIPPET_KEYS_ALIVE,
        "host 0",
    ),
    # urllib.parse.urlsplit's typed lru_cache: the same
    "urlsplit": (
        KEY_CLASS.format(base="str", target="http://x/")
        + "import urllib.parse\nprint(urllib.parse.urlsplit(K('http://x/')).netloc)",
        SNIPPET_KEYS_ALIVE,
        "host 0",
    ),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
@pytest.mark.parametrize("mode", ["trusted", "restricted"])
def test_a_snippet_key_never_answers_the_hosts_cache_lookups(mode: str, name: str) -> None:
    attack, host, right = ATTACKS[name]
    out = child_output(CHILD, mode, attack, host, timeout=60)
    assert "snippet True" in out, out  # the snippet's own call works in both modes
    if mode == "trusted":  # the positive control: the host gets the snippet's answer
        assert right not in out, out
    else:
        assert right in out, out


ZONEINFO_CHILD = """
import asyncio, gc
from ptcbox import ThreadRuntime
gc.disable()
A = '''
import zoneinfo
class K(str):
    def __hash__(self):
        return hash("Europe/Oslo")
    def __eq__(self, other):
        return True
K.keep = zoneinfo.ZoneInfo(K("UTC"))
print(K.keep)
'''
B = '''
import zoneinfo, datetime
tz = zoneinfo.ZoneInfo('Europe/Oslo')
print(datetime.datetime(2024, 7, 1, tzinfo=tz).utcoffset())
'''
async def main():
    async with ThreadRuntime() as runtime:
        for code in (A, B):
            result = await runtime.execute(code, {}, timeout=10)
            print(result.ok, result.stdout.strip(), result.error_type)
asyncio.run(main())
"""


def test_zoneinfo_cache_of_the_view_takes_exact_keys() -> None:
    """The sandbox's ``ZoneInfo`` caches instances per class, for every execution:
    execution A's key must not answer B's ``ZoneInfo('Europe/Oslo')`` (before the fix
    B got A's UTC zone, offset 0:00:00)."""
    out = child_output(ZONEINFO_CHILD, timeout=60)
    assert "True UTC None" in out, out
    assert "True 2:00:00 None" in out, out


# == re.Scanner and re.template: the regex deadline ======================================

SCANNER = 'import re\nprint(re.Scanner([(r"(a|aa)+$", None)]).scan("a" * {n} + "b"))'


async def _gaps_while(runtime: Any, code: str, timeout: float) -> tuple[Any, float, float]:
    """Run ``code``; return the result, the seconds it took and the host loop's longest
    gap meanwhile (a tick every 10 ms)."""
    ticks = [time.perf_counter()]

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.01)
            ticks.append(time.perf_counter())

    ticker = asyncio.ensure_future(tick())
    result = await runtime.execute(code, {}, timeout=timeout)
    ticks.append(time.perf_counter())  # the gap up to the result counts too
    ticker.cancel()
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    return result, ticks[-1] - ticks[0], max(gaps)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_re_scanner_matches_under_the_deadline() -> None:
    """``re.Scanner`` was the stdlib's, compiled for CPython's engine: a catastrophic
    phrase held the GIL (the host's loop froze) past the timeout. The sandbox's Scanner
    matches with the sandbox's patterns. Control: under the trusted policy the stdlib's
    Scanner blocks the host's loop for the whole match (a lower bound: load only makes
    it longer)."""
    async with ThreadRuntime(SandboxPolicy.trusted()) as trusted:
        control, _, gap = await _gaps_while(trusted, SCANNER.format(n=34), timeout=60)
    assert control.ok, control.error
    assert gap > 0.3, gap
    async with ThreadRuntime() as runtime:
        result, elapsed, gap = await _gaps_while(runtime, SCANNER.format(n=80), timeout=1)
        assert result.timed_out, result
        assert elapsed < 1 + 3, elapsed
        assert gap < 2.0, gap
        tokens = await runtime.execute(
            "import re\n"
            "sc = re.Scanner([(r'[a-z]+', lambda s, t: ('id', t)), (r'\\d+', lambda s, t: int(t)),"
            " (r'\\s+', None)])\n"
            "print(sc.scan('ab 12 cd!'))",
            {},
        )
        assert tokens.stdout == "([('id', 'ab'), 12, ('id', 'cd')], '!')\n", tokens.error
        template = await runtime.execute("import re\nre.template('a+')", {})
    assert template.error_type == "AttributeError"
    assert "re.template is not available in the sandbox: deprecated" in str(template.error)
    assert "line 2" in str(template.error)


# == process-wide state a snippet can set ================================================

STATE_CODE = """
import statistics, random, logging, warnings, uuid
statistics.NormalDist().samples(3)
uuid.uuid1(node=1)
random.seed(7)
logging.getLogger("asyncio").setLevel(50)
logging.disable(50)
warnings.simplefilter("ignore")
print("ok")
"""


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["trusted", "restricted"])
async def test_a_snippet_leaves_the_hosts_random_logging_and_warnings_alone(mode: str) -> None:
    """``NormalDist().samples()`` and ``uuid.uuid1(node=...)`` drew from the host's
    global ``random`` generator (advancing the sequence a host seeded); ``random.seed``,
    logging and warnings settings are the execution's own. Control: trusted code
    changes all of them in the host."""
    import logging
    import random
    import warnings

    policy = SandboxPolicy.trusted() if mode == "trusted" else SandboxPolicy()
    random.seed(42)
    expected = [random.random() for _ in range(3)]
    random.seed(42)
    with warnings.catch_warnings():
        filters = list(warnings.filters)
        asyncio_level = logging.getLogger("asyncio").level
        try:
            async with ThreadRuntime(policy) as runtime:
                result = await runtime.execute(STATE_CODE, {}, timeout=10)
            assert result.stdout == "ok\n", result.error
            changed = (
                [random.random() for _ in range(3)] != expected,
                logging.getLogger("asyncio").level != asyncio_level,
                logging.root.manager.disable != 0,
                warnings.filters != filters,
            )
        finally:
            logging.getLogger("asyncio").setLevel(asyncio_level)
            logging.disable(logging.NOTSET)
    assert changed == ((True,) * 4 if mode == "trusted" else (False,) * 4), changed

"""The stdlib views of issue 11 class 4 on both runtimes: code runs as CPython runs it."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.anyio

CASES: dict[str, tuple[str, str, str]] = {
    "sys-streams": (
        "import sys\nsys.stdout.write('a\\n')\nprint('b', file=sys.stdout)\n"
        "print('c', file=sys.stderr)\nsys.stderr.write('d\\n')\nsys.stdout.flush()",
        "a\nb\n",
        "c\nd\n",
    ),
    "sys-facts": (
        "import sys\nprint(sys.argv, sys.version_info >= (3, 11), sys.maxsize > 2**31,\n"
        "      sys.byteorder in ('little', 'big'), sys.implementation.name,\n"
        "      sys.getrecursionlimit() >= 1000, sys.float_info.epsilon < 1e-10)",
        "['<snippet>'] True True True cpython True True\n",
        "",
    ),
    "sys-exc-info": (
        "import sys\ntry:\n    1/0\nexcept ZeroDivisionError:\n    t, v, tb = sys.exc_info()\n"
        "    print(t.__name__, v, tb.tb_lineno)",
        "ZeroDivisionError division by zero 3\n",
        "",
    ),
    "io-csv": (
        "import csv, io\nbuf = io.StringIO()\nw = csv.DictWriter(buf, ['a', 'b'])\n"
        "w.writeheader()\nw.writerow({'a': 1, 'b': 'x'})\n"
        "print(list(csv.DictReader(io.StringIO(buf.getvalue()))))\n"
        "b = io.BytesIO()\nb.write(b'hi')\nprint(b.getvalue(), isinstance(buf, io.StringIO))",
        "[{'a': '1', 'b': 'x'}]\nb'hi' True\n",
        "",
    ),
    "pprint-redirect": (
        "import contextlib, io, pprint\nbuf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n    pprint.pprint({'b': 1, 'a': [1] * 30})\n"
        "    print('inside')\nprint(buf.getvalue().count('\\n'), pprint.pformat({'z': 1, 'y': 2}))",
        "32 {'y': 2, 'z': 1}\n",
        "",
    ),
    "traceback": (
        "import traceback\ndef f():\n    raise KeyError('k')\ntry:\n    f()\n"
        "except KeyError:\n    traceback.print_exc()\n"
        "    lines = traceback.format_exc().splitlines()\n"
        "print(lines[-1], len(lines))",
        "KeyError: 'k' 4\n",
        'Traceback (most recent call last):\n  File "<snippet>", line 5, in <module>\n'
        "  File \"<snippet>\", line 3, in f\nKeyError: 'k'\n",
    ),
    "traceback-chain": (
        "import traceback\ntry:\n    try:\n        1/0\n    except ZeroDivisionError as e:\n"
        "        raise ValueError('bad') from e\nexcept ValueError as e:\n"
        "    text = ''.join(traceback.format_exception(e))\n"
        "print('direct cause' in text, text.strip().splitlines()[-1])",
        "True ValueError: bad\n",
        "",
    ),
    "logging": (
        "import logging\nlogging.basicConfig(level=logging.INFO, format='%(levelname)s:%(name)s:"
        "%(message)s')\nlog = logging.getLogger('app')\nlog.debug('hidden')\nlog.info('n=%d', 3)\n"
        "try:\n    1/0\nexcept ZeroDivisionError:\n    log.exception('failed')",
        "",
        'INFO:app:n=3\nERROR:app:failed\nTraceback (most recent call last):\n  File "<snippet>", '
        "line 7, in <module>\nZeroDivisionError: division by zero\n",
    ),
    "logging-last-resort": (
        "import logging\nlogging.getLogger('x').warning('careful')",
        "",
        "careful\n",
    ),
    "warnings": (
        "import warnings\nwarnings.warn('old', DeprecationWarning)\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    warnings.warn('x')\nprint(len(caught), caught[0].category.__name__)\n"
        "warnings.simplefilter('ignore')\nwarnings.warn('quiet')",
        "1 UserWarning\n",
        "<snippet>:2: DeprecationWarning: old\n",
    ),
    "copy-types-operator": (
        "import copy, types, operator\nns = types.SimpleNamespace(a=1)\nns.b = [2]\n"
        "c = copy.deepcopy(ns)\nc.b.append(3)\nprint(ns, c)\n"
        "print(operator.attrgetter('a')(ns), operator.methodcaller('upper')('x'))\n"
        "print(sorted([ns, c], key=operator.attrgetter('a'))[0].b)",
        "namespace(a=1, b=[2]) namespace(a=1, b=[2, 3])\n1 X\n[2]\n",
        "",
    ),
    "calendar-zoneinfo": (
        "import calendar, datetime, zoneinfo\nprint(calendar.monthrange(2024, 2))\n"
        "tz = zoneinfo.ZoneInfo('Europe/Oslo')\n"
        "print(datetime.datetime(2024, 7, 1, 12, tzinfo=tz).utcoffset(), repr(tz))",
        "(3, 29)\n2:00:00 zoneinfo.ZoneInfo(key='Europe/Oslo')\n",
        "",
    ),
    "bytes-modules": (
        "import zlib, gzip, struct, binascii, base64\n"
        "print(zlib.decompress(zlib.compress(b'ab' * 50)) == b'ab' * 50,\n"
        "      gzip.decompress(gzip.compress(b'x')),\n"
        "      struct.unpack('<HI', struct.pack('<HI', 1, 2)),\n"
        "      binascii.hexlify(b'\\x01\\xff'), zlib.crc32(b'a'))",
        "True b'x' (1, 2) b'01ff' 3904355907\n",
        "",
    ),
    "text-modules": (
        "import difflib, html, urllib.parse, shlex, fnmatch, unicodedata, textwrap\n"
        "print(difflib.get_close_matches('appel', ['apple', 'ape', 'peach']))\n"
        "print(html.escape('<a>'), urllib.parse.urlparse('https://x.org/p?q=1').query,\n"
        "      shlex.split('a \"b c\"'), fnmatch.fnmatch('f.csv', '*.csv'),\n"
        "      unicodedata.name('é'))",
        "['apple', 'ape']\n&lt;a&gt; q=1 ['a', 'b c'] True LATIN SMALL LETTER E WITH ACUTE\n",
        "",
    ),
    "abc-numbers-graphlib": (
        "import abc, numbers, graphlib, array, ipaddress, secrets, cmath, collections.abc\n"
        "class Base(abc.ABC):\n    @abc.abstractmethod\n    def run(self): ...\n"
        "try:\n    Base()\nexcept TypeError:\n    print('abstract')\n"
        "print(isinstance(3, numbers.Integral), list(graphlib.TopologicalSorter({'b': {'a'}})"
        ".static_order()))\nprint(array.array('i', [1, 2]).tolist(), "
        "ipaddress.ip_address('10.0.0.1').is_private, len(secrets.token_hex(4)),\n"
        "      cmath.sqrt(-1), isinstance({}, collections.abc.Mapping))",
        "abstract\nTrue ['a', 'b']\n[1, 2] True 8 1j True\n",
        "",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_stdlib_view_runs_as_cpython_runs_it(runtime: Any, case: str) -> None:
    code, stdout, stderr = CASES[case]
    result = await runtime.execute(code, {}, timeout=20)
    assert result.error is None, result.error
    assert (result.stdout, result.stderr) == (stdout, stderr)

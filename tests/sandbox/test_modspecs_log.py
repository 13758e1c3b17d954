"""The logging and warnings views: private per execution, snippet frames only."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable

import pytest

from ptcbox.errors import PolicyViolation


def test_each_execution_has_its_own_logger_hierarchy(sandbox_run: Callable) -> None:
    code = "import logging\nlog = logging.getLogger('shared.name')\nlog.setLevel(5)\nlog"
    first, second = sandbox_run(code).value, sandbox_run(code).value
    assert first is not second
    assert logging.getLogger("shared.name").level == logging.NOTSET  # the host's


def test_handlers_stay_out_of_the_process_registry(sandbox_run: Callable) -> None:
    host = logging.StreamHandler()
    host.set_name("console")  # a host handler in logging's process-wide registry
    try:
        before = dict(logging._handlers)  # type: ignore[attr-defined]
        code = "import logging\nh = logging.StreamHandler()\nh.set_name('console')\nh.close()"
        sandbox_run(code)
        assert dict(logging._handlers) == before  # type: ignore[attr-defined]
        assert logging._handlers["console"] is host  # type: ignore[attr-defined]
    finally:
        host.close()


def test_brace_formats_take_plain_names_only(sandbox_run: Callable) -> None:
    with pytest.raises(PolicyViolation, match="not a plain name"):
        sandbox_run("import logging\nlogging.Formatter('{name.__class__}', style='{')")
    ran = sandbox_run(
        "import logging\nf = logging.Formatter('{levelname}:{message}', style='{')\n"
        "f.format(logging.makeLogRecord({'msg': 'hi', 'levelname': 'INFO'}))"
    )
    assert ran.value == "INFO:hi"


def test_basic_config_refuses_files(sandbox_run: Callable) -> None:
    with pytest.raises(PolicyViolation, match="files are not accessible"):
        sandbox_run("import logging\nlogging.basicConfig(filename='app.log')")


def test_records_name_snippet_frames_only(sandbox_run: Callable) -> None:
    code = "import logging, io\nbuf = io.StringIO()\nlog = logging.getLogger('a')\n"
    code += "log.addHandler(logging.StreamHandler(buf))\nlog.propagate = False\n"
    code += (
        "log.handlers[0].setFormatter(logging.Formatter('%(filename)s:%(lineno)d %(message)s'))\n"
    )
    code += "log.warning('w', stacklevel=9, stack_info=True)\nbuf.getvalue()"
    text = sandbox_run(code).value
    assert text.startswith("<snippet>:7 w\nStack (most recent call last):\n")
    assert ".py" not in text


def test_warning_filters_do_not_leak(sandbox_run: Callable) -> None:
    before = list(warnings.filters)
    ran = sandbox_run("import warnings\nwarnings.simplefilter('ignore')\nwarnings.warn('x')")
    assert (ran.stderr, warnings.filters) == ("", before)
    assert sandbox_run("import warnings\nwarnings.warn('y')").stderr.endswith("UserWarning: y\n")

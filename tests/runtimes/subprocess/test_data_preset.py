"""SandboxPolicy.data(): real numpy and pandas in SubprocessRuntime (the template imports
them), dataframe code over tool results, limits, values and the ThreadRuntime refusal."""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any

import pytest

import ptcbox
from ptcbox import SandboxPolicy
from ptcbox.runtimes import ThreadRuntime

pytest.importorskip("numpy")
pytest.importorskip("pandas")

DATA = SandboxPolicy.data()
TRUSTED_DATA = SandboxPolicy.trusted().replace(allowed_imports=DATA.allowed_imports)
"""Trusted, with numpy and pandas imported by the template (a trusted worker cannot import
numpy behind the audit hook: numpy imports ctypes)."""


def get_orders(region: str | None = None) -> list[dict[str, Any]]:
    """Orders, optionally of one region."""
    rows = [
        {"id": 1, "region": "EU", "sku": "A", "amount": 120.0, "day": "2024-03-01"},
        {"id": 2, "region": "US", "sku": "B", "amount": 80.5, "day": "2024-03-02"},
        {"id": 3, "region": "EU", "sku": "B", "amount": 42.0, "day": "2024-03-02"},
        {"id": 4, "region": "APAC", "sku": "A", "amount": 300.0, "day": "2024-03-05"},
        {"id": 5, "region": "US", "sku": "A", "amount": 19.9, "day": "2024-03-07"},
    ]
    return [r for r in rows if region is None or r["region"] == region]


def get_prices() -> list[dict[str, Any]]:
    """Unit prices per SKU."""
    return [{"sku": "A", "price": 10.0}, {"sku": "B", "price": 2.5}]


def record(value: Any) -> str:
    """Echo the type and value a tool received."""
    return f"{type(value).__name__}:{value!r}"


TOOLS = [get_orders, get_prices, record]


def plain(code: str) -> str:
    """The output of plain CPython ``exec`` with the same tools."""
    out = io.StringIO()
    namespace: dict[str, Any] = {f.__name__: f for f in TOOLS}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<plain>", "exec"), namespace)
    return out.getvalue()


def run(code: str, policy: SandboxPolicy = DATA, **kwargs: Any) -> ptcbox.CodeResult:
    return ptcbox.execute(code, tools=TOOLS, policy=policy, runtime="subprocess", **kwargs)


def test_dataframe_code_over_tool_results_runs() -> None:
    code = """\
import pandas as pd
import numpy as np
df = pd.DataFrame(get_orders())
df["day"] = pd.to_datetime(df["day"])
prices = pd.DataFrame(get_prices())
merged = df.merge(prices, on="sku", how="left")
big = merged[merged["amount"] > 40].sort_values("amount", ascending=False)
print(big[["id", "region", "amount"]].to_string(index=False))
by = merged.groupby("region").agg(total=("amount", "sum"), n=("id", "count"))
print(by.sort_values("total", ascending=False).to_string())
print(merged["sku"].value_counts().to_dict())
print(pd.pivot_table(merged, index="region", columns="sku", values="amount",
                     aggfunc="sum", fill_value=0).to_string())
a = merged["amount"].to_numpy()
print(round(float(a.mean()), 2), round(float(a.std()), 2), float(np.percentile(a, 50)))
print(np.argsort(a).tolist(), merged["day"].dt.day.tolist())
print(merged.describe().loc["mean", "amount"].round(2))
print(df.to_csv(index=False).splitlines()[0])
"""
    result = run(code)
    assert result.error is None, result.error
    assert result.stdout == plain(code)
    lines = result.stdout.splitlines()
    assert lines[1].split() == ["4", "APAC", "300.0"]
    assert "{'A': 3, 'B': 2}" in result.stdout
    assert "[4, 2, 1, 0, 3] [1, 2, 2, 5, 7]" in result.stdout


def test_print_info_and_warnings_reach_the_executions_streams() -> None:
    code = """\
import pandas as pd
df = pd.DataFrame(get_orders())
df.info()
df.columns = [c.upper() for c in df.columns]
df.index.name = "row"
print(df.columns.tolist(), df.index.name)
"""
    result = run(code)
    assert result.error is None, result.error
    assert "RangeIndex: 5 entries" in result.stdout
    assert "['ID', 'REGION', 'SKU', 'AMOUNT', 'DAY'] row" in result.stdout


def test_values_and_tool_arguments_become_plain_data() -> None:
    code = """\
import numpy as np
import pandas as pd
df = pd.DataFrame(get_orders())
print(record(np.int64(3)), record(np.float32(1.5)), record(np.bool_(True)))
print(record(np.array([1, 2])), record(df["amount"].sum()))
{"n": np.int64(5), "arr": np.arange(3), "rows": df[["id", "amount"]].head(2),
 "s": df.set_index("id")["region"].head(2), "idx": df.columns, "ts": pd.Timestamp("2024-03-01")}
"""
    result = run(code)
    assert result.error is None, result.error
    assert result.stdout.splitlines() == [
        "int:3 float:1.5 bool:True",
        "list:[1, 2] float:562.4",
    ]
    value = result.value
    assert value["n"] == 5 and value["arr"] == [0, 1, 2]
    assert value["rows"] == [{"id": 1, "amount": 120.0}, {"id": 2, "amount": 80.5}]
    assert value["s"] == {"1": "EU", "2": "US"}  # JSON object keys are strings
    assert value["idx"] == ["id", "region", "sku", "amount", "day"]
    assert value["ts"] == "2024-03-01T00:00:00"


def test_a_huge_array_is_a_memory_error_not_a_crash() -> None:
    policy = DATA.replace(max_memory_bytes=256 << 20)
    code = "import numpy as np\nprint('start')\na = np.ones(10**9)\nprint(a.sum())"
    result = run(code, policy=policy)
    assert result.error_type == "MemoryLimitExceeded", result
    assert "line 3, in <module>\n    a = np.ones(10**9)\nMemoryError: Unable to allocate" in (
        result.error or ""
    )
    assert "more than max_memory_bytes=268,435,456 bytes" in (result.error or "")
    assert result.stdout == "start\n"


def test_the_import_is_paid_by_the_template_not_the_execution() -> None:
    run("import pandas")  # the runtime and its template exist now
    result = run(
        "import time\nt = time.perf_counter()\nimport pandas, numpy\n"
        "print(time.perf_counter() - t < 0.05)"
    )
    assert result.stdout == "True\n", result


def test_worker_threads_are_capped_and_coretype_untouched() -> None:
    code = """\
import os, threading
import numpy
print(os.environ["OPENBLAS_NUM_THREADS"], os.environ["OMP_NUM_THREADS"], threading.active_count())
print(os.environ.get("OPENBLAS_CORETYPE"))
"""
    result = run(code, policy=TRUSTED_DATA)
    assert result.error is None, result.error
    first, coretype = result.stdout.splitlines()
    assert first.split()[:2] == ["1", "1"]
    assert coretype == str(os.environ.get("OPENBLAS_CORETYPE"))


def test_thread_runtime_refuses_the_data_preset_with_the_reason() -> None:
    with pytest.raises(ValueError, match="numpy and pandas run only in SubprocessRuntime"):
        ThreadRuntime(DATA)
    with pytest.raises(ValueError, match="cannot be interrupted at the time limit"):
        ptcbox.execute("print(1)", policy=DATA, runtime="thread")
    ThreadRuntime(SandboxPolicy.trusted().replace(allowed_imports=DATA.allowed_imports))


def test_the_default_policy_still_refuses_numpy() -> None:
    result = run("import numpy", policy=SandboxPolicy())
    assert result.error_type == "ImportError"
    assert "import of 'numpy' is not allowed in the sandbox" in (result.error or "")


def test_read_csv_of_tool_text_works() -> None:
    code = """\
import io
import pandas as pd
text = "sku,qty\\nA,3\\nB,5\\n"
df = pd.read_csv(io.StringIO(text))
print(int(df["qty"].sum()), df.to_json(orient="records"))
"""
    result = run(code)
    assert result.error is None, result.error
    assert result.stdout == '8 [{"sku":"A","qty":3},{"sku":"B","qty":5}]\n'


def test_version_and_module_metadata_read_as_in_cpython() -> None:
    code = (
        "import numpy as np\nimport pandas as pd\n"
        "print(np.__version__, pd.__version__, np.__name__, pd.__name__)\n"
        "print(np.__doc__.split()[:3], type(np.__version__).__name__)"
    )
    result = run(code)
    assert result.error is None, result.error
    assert result.stdout == plain(code)
    refused = run("import numpy as np\nprint(np.__file__)")
    assert refused.error_type == "PolicyViolation"
    assert 'access to attribute "__file__" is not allowed' in (refused.error or "")

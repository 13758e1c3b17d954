# ruff: noqa: E501  (a table of snippets, one attack per entry)
"""Routes out of the sandbox through numpy and pandas (SandboxPolicy.data()).

Each attack does the forbidden thing for real in the positive control: under
``SandboxPolicy.trusted()`` in SubprocessRuntime (numpy/pandas imported by the template,
nothing hardened; the file routes write and read files in the worker's own directory), or
in plain CPython in a child process where the trusted worker's audit hook stops the route
itself (numpy's ctypes objects import ``ctypes``). Under ``SandboxPolicy.data()`` the same
snippet is refused with the guard's own message on the line of the attack. Setup lines
that the sandbox refuses (``open()``, a first write) are wrapped in ``try`` so that the
refusal asserted is the one of the attack itself.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import ptcbox
from ptcbox import SandboxPolicy

pytest.importorskip("numpy")
pytest.importorskip("pandas")

DATA = SandboxPolicy.data()
TRUSTED = SandboxPolicy.trusted().replace(allowed_imports=DATA.allowed_imports)

P = "import numpy as np\nimport pandas as pd\n"


def _setup(line: str) -> str:
    """A setup statement that may fail (it does in the sandbox): 4 lines."""
    return f"try:\n    {line}\nexcept Exception:\n    pass\n"


_FILES = "reads or writes files; get data through the tools"
_PICKLE_NP = "pickling: unpickling runs arbitrary code; use json or tolist()"
_PICKLE_PD = "pickling: unpickling runs arbitrary code; use to_dict() or to_json()"
_EVAL = (
    "runs its own expression evaluator with attribute access; use boolean masks, e.g. "
    "df[(df['price'] > 10) & (df['region'] == 'EU')], and plain column arithmetic"
)
_HOST = "(the sandbox does not describe the machine it runs on)"
_TESTS = "runs the library's test suite from the host's installation (files, pytest)"
_NAME = (
    "is not allowed: pandas looks names up on the object, and private and special "
    "attributes are off limits"
)


def _path(owner: str, name: str) -> str:
    return (
        f"{owner}.{name}() with a path is not available in the sandbox (it writes files); "
        f"call it without one to get the text, e.g. text = df.{name}(), or pass an io.StringIO"
    )


# id: (snippet, line, error type, the guard's message, what the trusted run shows)
ATTACKS: dict[str, tuple[str, int, str, str, str]] = {
    "np_save": (
        P + 'np.save("a.npy", np.arange(3))\nprint("saved", np.load("a.npy").tolist())',
        3, "AttributeError", f"numpy.save is not available in the sandbox: {_FILES}", "saved [0, 1, 2]",
    ),
    "np_load_allow_pickle": (
        P + _setup('np.save("o.npy", np.array([{"k": 1}], dtype=object), allow_pickle=True)')
        + 'print("unpickled", np.load("o.npy", allow_pickle=True)[0])',
        7, "AttributeError",
        f"numpy.load is not available in the sandbox: {_FILES} (and np.load(allow_pickle=True) "
        "unpickles)",
        "unpickled {'k': 1}",
    ),
    "np_loadtxt": (
        P + _setup('open("l.txt", "w").write("1 2\\n")') + 'print("read", np.loadtxt("l.txt").tolist())',
        7, "AttributeError",
        f"numpy.loadtxt is not available in the sandbox: {_FILES}; parse text yourself or with "
        "pandas.read_csv(io.StringIO(text))",
        "read [1.0, 2.0]",
    ),
    "np_fromfile": (
        P + _setup('open("f.bin", "wb").write(bytes(3))')
        + 'print("read", np.fromfile("f.bin", dtype="u1").tolist())',
        7, "AttributeError",
        f"numpy.fromfile is not available in the sandbox: {_FILES}; use np.frombuffer(data) or "
        "np.array(values)",
        "read [0, 0, 0]",
    ),
    "np_memmap": (
        P + _setup('open("m.bin", "wb").write(bytes(2))')
        + 'print("mapped", np.memmap("m.bin", dtype="u1", mode="r").tolist())',
        7, "AttributeError", "numpy.memmap is not available in the sandbox: maps files into memory",
        "mapped [0, 0]",
    ),
    "ndarray_tofile": (
        P + 'a = np.arange(2, dtype="u1")\na.tofile("b.bin")\nprint("wrote", np.fromfile("b.bin", dtype="u1").tolist())',
        4, "PolicyViolation",
        f"ndarray.tofile is not available in the sandbox: {_FILES}; use arr.tolist() or "
        "arr.tobytes()",
        "wrote [0, 1]",
    ),
    "ndarray_tofile_unbound": (
        P + 'a = np.arange(2, dtype="u1")\nnp.ndarray.tofile(a, "c.bin")\nprint("wrote", np.fromfile("c.bin", dtype="u1").tolist())',
        4, "PolicyViolation",
        f"ndarray.tofile is not available in the sandbox: {_FILES}; use arr.tolist() or "
        "arr.tobytes()",
        "wrote [0, 1]",
    ),
    "scalar_tofile": (
        P + 'x = np.uint8(7)\nx.tofile("s.bin")\nprint("wrote", np.fromfile("s.bin", dtype="u1").tolist())',
        4, "PolicyViolation",
        f"uint8.tofile is not available in the sandbox: {_FILES}; use arr.tolist() or "
        "arr.tobytes()",
        "wrote [7]",
    ),
    "ndarray_dumps": (
        P + 'a = np.arange(3)\nprint("pickle", a.dumps()[:2])',
        4, "PolicyViolation", f"ndarray.dumps is not available in the sandbox: {_PICKLE_NP}",
        "pickle b'\\x80",
    ),
    "ndarray_dump": (
        P + 'a = np.arange(3)\na.dump("d.pkl")\nprint("unpickled", np.load("d.pkl", allow_pickle=True).tolist())',
        4, "PolicyViolation", f"ndarray.dump is not available in the sandbox: {_PICKLE_NP}",
        "unpickled [0, 1, 2]",
    ),
    "ndarray_ctypes": (
        P + 'a = np.arange(3)\nprint("pointer", a.ctypes.data > 0)',
        4, "PolicyViolation",
        "ndarray.ctypes is not available in the sandbox: raw memory access through ctypes",
        "pointer True",
    ),
    "as_strided_out_of_bounds": (
        P + 'a = np.arange(2)\nprint("strided", np.lib.stride_tricks.as_strided(a, shape=(3,), strides=(0,)).tolist())',
        4, "AttributeError",
        "numpy.lib is not available in the sandbox (modules and private attributes of modules "
        "are not exposed)",
        "strided [0, 0, 0]",
    ),
    "import_npy_format": (
        'import numpy.lib.format as f\nprint("format", f.read_array.__name__)',
        1, "ImportError", "import of 'numpy.lib.format' is not allowed in the sandbox; allowed",
        "format read_array",
    ),
    "pd_read_pickle": (
        P + _setup('pd.DataFrame({"a": [1]}).to_pickle("p.pkl")')
        + 'print("unpickled", pd.read_pickle("p.pkl").to_dict())',
        7, "AttributeError", f"pandas.read_pickle is not available in the sandbox: {_PICKLE_NP}",
        "unpickled {'a': {0: 1}}",
    ),
    "df_to_pickle": (
        P + 'df = pd.DataFrame({"a": [1]})\ndf.to_pickle("q.pkl")\nprint("unpickled", pd.read_pickle("q.pkl").to_dict())',
        4, "PolicyViolation", f"NDFrame.to_pickle() is not available in the sandbox: {_PICKLE_PD}",
        "unpickled {'a': {0: 1}}",
    ),
    "df_to_pickle_unbound": (
        P + 'df = pd.DataFrame({"a": [1]})\npd.DataFrame.to_pickle(df, "cr.pkl")\nprint("unpickled", pd.read_pickle("cr.pkl").to_dict())',
        4, "PolicyViolation", f"NDFrame.to_pickle() is not available in the sandbox: {_PICKLE_PD}",
        "unpickled {'a': {0: 1}}",
    ),
    "df_to_pickle_methodcaller": (
        P + 'import operator\ndf = pd.DataFrame({"a": [1]})\noperator.methodcaller("to_pickle", "mc.pkl")(df)\nprint("unpickled", pd.read_pickle("mc.pkl").to_dict())',
        5, "PolicyViolation", f"NDFrame.to_pickle() is not available in the sandbox: {_PICKLE_PD}",
        "unpickled {'a': {0: 1}}",
    ),
    "df_to_pickle_by_name": (
        P + 'df = pd.DataFrame({"a": [1]})\n'
        + _setup('df.agg("to_pickle", path="g.pkl")').replace("Exception", "AttributeError")
        + 'print("unpickled", pd.read_pickle("g.pkl").to_dict())',
        5, "PolicyViolation", f"'to_pickle' is not available in the sandbox: {_PICKLE_PD}",
        "unpickled {'a': {0: 1}}",
    ),
    "df_to_csv_path": (
        P + 'df = pd.DataFrame({"a": [1]})\ndf.to_csv("x.csv")\nprint("wrote", pd.read_csv("x.csv").to_dict())',
        4, "PolicyViolation", _path("NDFrame", "to_csv"), "wrote {'Unnamed: 0': {0: 0}, 'a': {0: 1}}",
    ),
    "series_to_json_path": (
        P + 's = pd.Series([1, 2])\ns.to_json("x.json")\nprint("wrote", pd.read_json("x.json", typ="series").tolist())',
        4, "PolicyViolation", _path("NDFrame", "to_json"), "wrote [1, 2]",
    ),
    "df_to_string_buf": (
        P + 'df = pd.DataFrame({"a": [1]})\ndf.to_string(buf="x.txt")\nprint("wrote", pd.read_csv("x.txt").shape)',
        4, "PolicyViolation", _path("DataFrame", "to_string"), "wrote (1, 1)",
    ),
    "df_to_html_path": (
        P + 'df = pd.DataFrame({"a": [1]})\ndf.to_html("x.html")\nprint("wrote", pd.read_csv("x.html", sep="\\t").shape[0] > 3)',
        4, "PolicyViolation", _path("DataFrame", "to_html"), "wrote True",
    ),
    "subclass_super_to_csv": (
        P + 'class D(pd.DataFrame):\n    pass\nd = D({"a": [1]})\nsuper(D, d).to_csv("sc.csv")\nprint("wrote", pd.read_csv("sc.csv").shape)',
        6, "PolicyViolation", _path("NDFrame", "to_csv"), "wrote (1, 2)",
    ),
    "pd_read_csv_path": (
        P + _setup('pd.DataFrame({"a": [5]}).to_csv("r.csv", index=False)')
        + 'print("read", pd.read_csv("r.csv").to_dict())',
        7, "PolicyViolation",
        "pandas.read_csv() reads only io.StringIO or io.BytesIO in the sandbox (paths and URLs "
        "are file and network access): pandas.read_csv(io.StringIO(text))",
        "read {'a': {0: 5}}",
    ),
    "pd_read_json_path": (
        P + _setup('pd.DataFrame({"a": [5]}).to_json("r.json")')
        + 'print("read", pd.read_json("r.json").to_dict())',
        7, "PolicyViolation",
        "pandas.read_json() reads only io.StringIO or io.BytesIO in the sandbox (paths and URLs "
        "are file and network access): pandas.read_json(io.StringIO(text))",
        "read {'a': {0: 5}}",
    ),
    "df_query_dunder": (
        P + 'df = pd.DataFrame({"a": [1, 2]})\nprint("evaluated", df.query("a == a.__len__()").shape)',
        4, "PolicyViolation", f"DataFrame.query() is not available in the sandbox: {_EVAL}",
        "evaluated (1, 1)",
    ),
    "df_eval_dunder": (
        P + 'df = pd.DataFrame({"a": [1, 2]})\nprint("evaluated", df.eval("a.__class__.__name__"))',
        4, "PolicyViolation", f"DataFrame.eval() is not available in the sandbox: {_EVAL}",
        "evaluated Series",
    ),
    "pd_eval": (
        P + 'x = 1\nprint("evaluated", pd.eval("x.__class__.__name__"))',
        4, "AttributeError", f"pandas.eval is not available in the sandbox: {_EVAL}",
        "evaluated int",
    ),
    "apply_private_by_name": (
        P + 'df = pd.DataFrame({"a": [1, 2]})\nprint(df.apply("__getattribute__", args=("_mgr",)))',
        4, "PolicyViolation", f"method name '__getattribute__' {_NAME}", "BlockManager",
    ),
    "groupby_apply_private_by_name": (
        P + 'df = pd.DataFrame({"k": [1, 1], "v": [2, 3]})\nprint("private", type(df.groupby("k").apply("__getattribute__", "_grouper")).__name__)',
        4, "PolicyViolation", f"method name '__getattribute__' {_NAME}", "private BaseGrouper",
    ),
    "series_groupby_agg_dunder": (
        P + 'df = pd.DataFrame({"k": [1, 1], "v": [2, 3]})\nprint(df.groupby("k")["v"].agg("__class__"))',
        4, "PolicyViolation", f"method name '__class__' {_NAME}", "GroupBy.__init__()",
    ),
    "series_groupby_filter_dunder": (
        P + 'df = pd.DataFrame({"k": [1, 1], "v": [2, 3]})\nprint(df.groupby("k")["v"].filter("__class__"))',
        4, "PolicyViolation", f"method name '__class__' {_NAME}", "truth value of a Series",
    ),
    "plot_accessor": (
        P + 'df = pd.DataFrame({"a": [1]})\nprint("plot", type(df.plot).__name__)',
        4, "PolicyViolation",
        "DataFrame.plot() is not available in the sandbox: plots render through matplotlib to "
        "files; print numbers or to_string()",
        "plot PlotAccessor",
    ),
    # host information: the trusted worker prints the host's uname, build paths, install path
    "np_show_runtime": (
        P + 'np.show_runtime()',
        3, "AttributeError",
        "numpy.show_runtime is not available in the sandbox: prints the host's operating "
        f"system (uname), CPU features and thread libraries {_HOST}",
        "'uname': uname_result(system='Linux'",
    ),
    "np_show_config": (
        P + 'np.show_config()',
        3, "AttributeError",
        "numpy.show_config is not available in the sandbox: prints the host's build "
        f"configuration (compilers, library paths) {_HOST}",
        "Build Dependencies:",
    ),
    "np_get_include": (
        P + 'print("path", np.get_include())',
        3, "AttributeError",
        "numpy.get_include is not available in the sandbox: returns a path of the host's "
        "installation (no C code is built here)",
        "path /",
    ),
    "np_test": (
        P + 'print("tester", type(np.test).__name__)',
        3, "AttributeError", f"numpy.test is not available in the sandbox: {_TESTS}",
        "tester PytestTester",
    ),
    "pd_test": (
        P + 'print("tester", pd.test.__name__)',
        3, "AttributeError", f"pandas.test is not available in the sandbox: {_TESTS}",
        "tester test",
    ),
}  # fmt: skip


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_data_route_proves_its_guard(attack: str) -> None:
    code, line, error_type, message, leaked = ATTACKS[attack]
    trusted = ptcbox.execute(code, policy=TRUSTED, runtime="subprocess", timeout=60)
    assert leaked in trusted.stdout + (trusted.error or ""), trusted  # the route is real
    result = ptcbox.execute(code, policy=DATA, runtime="subprocess", timeout=60)
    assert result.error_type == error_type, result
    error = result.error or ""
    assert error.count('File "<snippet>"') == 1, error
    assert f'File "<snippet>", line {line}, in <module>' in error, error
    last = error.rstrip().splitlines()[-1]
    assert last.startswith(f"{error_type}: {message}"), error
    assert result.stdout == ""


RAW_MEMORY = 'AI = {"shape": (4,), "typestr": "|u1", "data": (4096, False), "version": 3}\n'
READ = "print('raw', a.dtype)\nprint(a.tobytes()[:1] if a.dtype.kind == 'u' else 'no address')"
RAW_ROUTES = {
    "vars": "class H:\n    pass\nh = H()\nvars(h)['__array_interface__'] = AI\n"
    "a = np.asarray(h)\n" + READ,
    "getattr_hook": "class G:\n    def __getattr__(self, name):\n"
    "        if name == '__array_interface__':\n            return AI\n"
    "        raise AttributeError(name)\na = np.asarray(G())\n" + READ,
}


@pytest.mark.parametrize("route", sorted(RAW_ROUTES))
def test_snippet_objects_cannot_hand_numpy_a_raw_address(route: str) -> None:
    """``__array_interface__["data"]`` is an address numpy trusts: reading page 4096
    kills the trusted worker; in the sandbox numpy sees no interface (an object array)."""
    code = "import numpy as np\n" + RAW_MEMORY + RAW_ROUTES[route]
    trusted = ptcbox.execute(code, policy=TRUSTED, runtime="subprocess", timeout=60)
    assert trusted.error_type == "WorkerCrashed", trusted
    assert "SIGSEGV" in (trusted.error or "")
    result = ptcbox.execute(code, policy=DATA, runtime="subprocess", timeout=60)
    assert result.error is None, result.error
    assert result.stdout == "raw object\nno address\n"


CTYPES_ROUTES: dict[str, tuple[str, str, str]] = {
    "bit_generator_ctypes": (
        "g = np.random.PCG64(1)\nprint('fnptr', type(g.ctypes.next_uint64).__name__)",
        "fnptr CFunctionType",
        "PolicyViolation: PCG64.ctypes is not available in the sandbox: raw memory access "
        "through ctypes",
    ),
    "ctypeslib": (
        "x = 1\nprint('ctypeslib', np.ctypeslib.as_array.__name__)",
        "ctypeslib as_array",
        "AttributeError: numpy.ctypeslib is not available in the sandbox: raw memory access "
        "through ctypes",
    ),
}


@pytest.mark.parametrize("route", sorted(CTYPES_ROUTES))
def test_ctypes_routes_are_refused(route: str) -> None:
    """Control in plain CPython (a trusted worker's audit hook refuses importing ctypes)."""
    body, leaked, message = CTYPES_ROUTES[route]
    code = "import numpy as np\n" + body
    control = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert control.stdout.strip() == leaked
    result = ptcbox.execute(code, policy=DATA, runtime="subprocess", timeout=60)
    assert 'File "<snippet>", line 3, in <module>' in (result.error or ""), result
    assert (result.error or "").rstrip().endswith(message), result.error


@pytest.mark.parametrize(
    ("snippet", "message"),
    [
        ("df.style", "DataFrame.style() is not available in the sandbox: renders through jinja2"),
        (
            "df.to_clipboard()",
            "NDFrame.to_clipboard() is not available in the sandbox: runs a clipboard program",
        ),
        ("df.hist()", "DataFrame.hist() is not available in the sandbox: plots render"),
        (
            "df.agg(['sum', 'to_parquet'])",
            "'to_parquet' is not available in the sandbox: writes files",
        ),
        (  # its trusted control stops at the worker's audit hook (it imports subprocess)
            "pd.show_versions()",
            "pandas.show_versions is not available in the sandbox: prints the host's operating "
            f"system (uname), locale, paths and installed packages {_HOST}",
        ),
        ("np.info(np.sum)", "numpy.info is not available in the sandbox"),
    ],
)
def test_routes_without_a_working_control_are_refused_too(snippet: str, message: str) -> None:
    """Routes whose real effect needs a package or program absent here (jinja2, a
    clipboard, pyarrow): refused by the same guards all the same."""
    code = P + 'df = pd.DataFrame({"a": [1]})\nx = ' + snippet
    result = ptcbox.execute(code, policy=DATA, runtime="subprocess", timeout=60)
    assert 'File "<snippet>", line 4, in <module>' in (result.error or ""), result
    assert message in (result.error or "").rstrip().splitlines()[-1], result.error


def test_a_function_dict_cannot_hand_numpy_a_raw_address() -> None:
    """A snippet function's ``__dict__`` is read-only through ``vars()``: numpy reads
    ``__array_interface__`` from it (classes shadow it, functions cannot)."""
    code = (
        "import numpy as np\n" + RAW_MEMORY + "def f():\n    pass\n"
        "vars(f)['__array_interface__'] = AI\na = np.asarray(f)\n" + READ
    )
    trusted = ptcbox.execute(code, policy=TRUSTED, runtime="subprocess", timeout=60)
    assert trusted.error_type == "WorkerCrashed", trusted
    result = ptcbox.execute(code, policy=DATA, runtime="subprocess", timeout=60)
    assert result.error_type == "TypeError", result
    assert 'File "<snippet>", line 5, in <module>' in (result.error or "")
    assert (
        (result.error or "")
        .rstrip()
        .endswith("TypeError: 'mappingproxy' object does not support item assignment")
    )


def test_show_versions_prints_the_host_in_plain_cpython() -> None:
    """The positive control of the refused ``pd.show_versions()`` above (the trusted worker's
    audit hook stops it at its ``import subprocess``): plain CPython prints the host."""
    shown = subprocess.run(
        [sys.executable, "-c", "import pandas\npandas.show_versions()"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert "OS" in shown.stdout and "machine" in shown.stdout, shown.stdout

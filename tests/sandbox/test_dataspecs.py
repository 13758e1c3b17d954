"""numpy/pandas views, the data attribute rule and sealed snippet classes (in-process)."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox import DEFAULT_ALLOWED_IMPORTS, SandboxPolicy
from ptcbox.sandbox._dataspecs import (
    DATA_ATTRS,
    DATA_RUNTIME_REASON,
    data_attribute,
    memory_only,
    seal_class,
    uses_data_libs,
)
from ptcbox.sandbox._names import NOT_NATIVE_ATTRS
from ptcbox.sandbox._policy import DATA_IMPORTS


def test_the_preset_is_the_default_allowlist_plus_numpy_and_pandas() -> None:
    policy = SandboxPolicy.data()
    assert policy.allowed_imports == DEFAULT_ALLOWED_IMPORTS | DATA_IMPORTS
    assert policy.restricted and policy.max_memory_bytes == SandboxPolicy().max_memory_bytes
    assert uses_data_libs(policy.allowed_imports)
    assert not uses_data_libs(SandboxPolicy().allowed_imports)
    assert uses_data_libs(frozenset({"numpy.linalg"}))
    assert "SubprocessRuntime" in DATA_RUNTIME_REASON


def test_import_ptcbox_stays_lean() -> None:
    import subprocess
    import sys

    code = (
        "import sys, ptcbox\nptcbox.SandboxPolicy.data()\n"
        "print('numpy' in sys.modules, 'pandas' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False False"


def test_data_names_are_never_read_natively() -> None:
    assert set(DATA_ATTRS) <= NOT_NATIVE_ATTRS


def test_data_attribute_refuses_only_on_numpy_and_pandas_objects() -> None:
    np = pytest.importorskip("numpy")

    class Own:
        def dumps(self) -> str:
            return "mine"

    data_attribute(Own(), "dumps")  # the snippet's own method of that name
    data_attribute("text", "ctypes")
    for obj in (np.arange(2), np.float64(1.0), np.ndarray, np.random.PCG64(1)):
        with pytest.raises(PolicyViolation, match="is not available in the sandbox"):
            data_attribute(obj, "ctypes")

    class Sub(np.ndarray):
        pass

    with pytest.raises(PolicyViolation, match=r"Sub\.tofile is not available"):
        data_attribute(Sub, "tofile")
    arr = np.arange(2).view(Sub)
    with pytest.raises(PolicyViolation, match=r"Sub\.dump is not available"):
        data_attribute(super(Sub, arr), "dump")


def test_memory_only_readers_take_buffers_not_paths() -> None:
    seen: list[Any] = []
    reader = memory_only(lambda source, **kw: seen.append((source, kw)) or "ok", "pandas.read_x")
    buffer = io.StringIO("a\n1\n")
    assert reader(buffer, sep=",") == "ok" and seen == [(buffer, {"sep": ","})]
    for bad in ("/etc/passwd", b"/etc/passwd", "https://example.com/x.csv", None):
        with pytest.raises(PolicyViolation, match=r"pandas\.read_x\(\) reads only io\.StringIO"):
            reader(bad)


@pytest.fixture
def sealing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seal as a data worker does (only for this test: the process is shared)."""
    from ptcbox.sandbox import _dataspecs

    monkeypatch.setattr(_dataspecs, "_sealing", [True])


def test_classes_are_not_sealed_outside_data_workers() -> None:
    class G:
        def __getattr__(self, name: str) -> str:
            return name

    seal_class(G)
    assert G().__deepcopy__ == "__deepcopy__"  # as in CPython
    assert "__array_interface__" not in G.__dict__


@pytest.mark.usefixtures("sealing")
def test_protocol_classes_keep_their_members() -> None:
    from typing import Protocol, runtime_checkable

    @runtime_checkable
    class Priced(Protocol):
        def price(self) -> float: ...

    seal_class(Priced)

    class Product:
        def price(self) -> float:
            return 1.0

    seal_class(Product)
    assert isinstance(Product(), Priced)


@pytest.mark.usefixtures("sealing")
def test_sealed_getattr_never_sees_special_names() -> None:
    calls: list[str] = []

    class G:
        def __getattr__(self, name: str) -> str:
            calls.append(name)
            return "answer"

    seal_class(G)
    assert G().anything == "answer"
    with pytest.raises(AttributeError):
        G().__array_interface__  # noqa: B018
    assert not hasattr(G(), "__deepcopy__")
    assert calls == ["anything"]


@pytest.mark.usefixtures("sealing")
def test_sealed_classes_shadow_raw_protocols_in_the_instance_dict() -> None:
    np = pytest.importorskip("numpy")

    class H:
        pass

    seal_class(H)
    h = H()
    vars(h)["__array_interface__"] = {"shape": (1,), "typestr": "|u1", "data": (0, False)}
    assert not hasattr(h, "__array_interface__")
    assert np.asarray(h).dtype == object
    with pytest.raises(PolicyViolation, match="cannot be set in the sandbox"):
        h.__array_interface__ = {}


def test_vars_of_a_snippet_function_is_read_only() -> None:
    import ptcbox

    code = "def f():\n    pass\nf.tag = 1\nprint(dict(vars(f)))\nvars(f)['x'] = 2"
    result = ptcbox.execute(code, runtime="thread")
    assert result.stdout == "{'tag': 1}\n"
    assert result.error_type == "TypeError", result
    assert "line 5" in (result.error or "")


def test_a_missing_data_library_is_named_with_the_extra(
    hide_modules: Callable[..., None],
) -> None:
    from ptcbox.runtimes import SubprocessRuntime
    from ptcbox.sandbox._dataspecs import missing_data_libs

    hide_modules("pandas")
    assert missing_data_libs(SandboxPolicy.data().allowed_imports) == ["pandas"]
    assert missing_data_libs(SandboxPolicy().allowed_imports) == []
    with pytest.raises(ImportError, match=r"allows pandas, which is not installed: pip install"):
        SubprocessRuntime(SandboxPolicy.data())

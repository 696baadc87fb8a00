"""ParamsStruct: a kernel params struct filled by member name, read by real C."""

from __future__ import annotations

import ctypes
import gc
import shutil
import subprocess
import sys
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import tvmdevice
from tvmdevice import _abi
from tvmdevice.headers import structs_header
from tvmdevice.layout import Field, Layout
from tvmdevice.memory import address_of
from tvmdevice.params import ParamsStruct

CSRC = Path(__file__).parent / "csrc"
needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler `cc` on PATH")

QUANT = Layout("tvmd_pt_quant_t", (
    Field("input_offset", "int32_t", doc="-input zero point"),
    Field("output_offset", "int32_t", doc="output zero point"),
))
PARAMS = Layout("tvmd_pt_params_t", (
    Field("kind", "uint32_t"),
    Field("count", "int32_t", doc="elements of weights, multiplier and scratch"),
    Field("q", QUANT),
    Field("macs", "uint64_t"),
    Field("small", "int8_t"),
    Field("big", "int64_t"),
    Field("shape", "int32_t", (4,)),
    Field("grid", "int16_t", (2, 3)),
    Field("scale", "float"),
    Field("ratio", "double"),
    Field("bytes", "size_t"),
    Field("weights", "const int16_t*"),
    Field("multiplier", "const int32_t*"),
    Field("scratch", "int32_t*"),
    Field("absent", "const int8_t*"),
    Field("qs", QUANT, (2,)),
), doc="every kind of member a params struct may have")


@dataclass(frozen=True)
class FakeOpData:
    """Stands in for an op data dataclass: some members, plus fields the struct does not have."""

    op_index: int
    op_type: str
    count: int
    input_offset: int
    output_offset: int
    macs: int
    multiplier: np.ndarray


def _op_data() -> FakeOpData:
    mult = np.array([1 << 30, 1 << 29, 1 << 28], np.int32)
    mult.flags.writeable = False
    return FakeOpData(op_index=4, op_type="CONV_2D", count=3, input_offset=128, output_offset=-5,
                      macs=2**40 + 7, multiplier=mult)


def _extras() -> dict:
    return dict(kind=7, small=-128, big=-(2**63), shape=[1, 2, 3, 4], grid=np.arange(6, dtype=np.int16).reshape(2, 3),
                scale=0.1, ratio=1 / 3, bytes=2**40, weights=np.array([-3, 100, 32767], np.int16),
                scratch=np.zeros(3, np.int32), absent=None,
                qs=[{"input_offset": 1, "output_offset": 2}, {"input_offset": -1, "output_offset": -2}])


def _params(**override) -> ParamsStruct:
    op = _op_data()
    return ParamsStruct(PARAMS, op, **{"q": op, **_extras(), **override})


# ---------------------------------------------------------------- filling


def test_fills_from_a_dataclass_plus_extras():
    p = _params()
    v = p.values
    assert (v["kind"], v["count"], v["macs"], v["big"]) == (7, 3, 2**40 + 7, -(2**63))
    assert dict(v["q"]) == {"input_offset": 128, "output_offset": -5}
    assert v["shape"] == (1, 2, 3, 4) and v["grid"] == ((0, 1, 2), (3, 4, 5))
    assert v["scale"] == float(np.float32(0.1)) and v["ratio"] == 1 / 3
    assert np.array_equal(v["multiplier"], [1 << 30, 1 << 29, 1 << 28])
    assert v["absent"] is None and [dict(q) for q in v["qs"]][1] == {"input_offset": -1, "output_offset": -2}
    assert p.layout == PARAMS and p.nbytes == PARAMS.size and p.address % PARAMS.alignment == 0


def test_bytes_are_the_host_struct():
    p = _params()
    raw = p.tobytes()
    at = PARAMS.offset_of
    assert int.from_bytes(raw[at("macs"):at("macs") + 8], "little", signed=False) == 2**40 + 7
    assert int.from_bytes(raw[at("q") + 4:at("q") + 8], "little", signed=True) == -5
    assert int.from_bytes(raw[at("weights"):at("weights") + 8], "little") == address_of(p.values["weights"])
    assert raw[at("absent"):at("absent") + 8] == bytes(8)


def test_extras_take_precedence_over_values():
    assert _params(count=2).values["count"] == 2


def test_fills_from_a_mapping_and_ignores_keys_that_are_not_members():
    p = ParamsStruct(QUANT, {"input_offset": 3, "output_offset": 4, "unrelated": object()})
    assert dict(p.values) == {"input_offset": 3, "output_offset": 4}


def test_a_missing_member_is_an_error_naming_every_missing_one():
    op = _op_data()
    extras = _extras()
    del extras["scale"], extras["absent"]
    with pytest.raises(ValueError, match=r"tvmd_pt_params_t: no value for members scale, absent"):
        ParamsStruct(PARAMS, op, q=op, **extras)


def test_a_missing_nested_member_names_its_path():
    with pytest.raises(ValueError, match=r"tvmd_pt_params_t\.q: no value for member output_offset"):
        _params(q={"input_offset": 1})
    with pytest.raises(ValueError, match=r"tvmd_pt_params_t\.qs\[1\]: no value for member input_offset"):
        _params(qs=[{"input_offset": 1, "output_offset": 2}, {"output_offset": 2}])


def test_a_keyword_that_is_not_a_member_is_an_error():
    with pytest.raises(ValueError, match="tvmd_pt_params_t has no member wieghts"):
        _params(wieghts=None)


def test_values_must_be_a_mapping_or_a_dataclass():
    with pytest.raises(TypeError, match="mapping or a dataclass"):
        ParamsStruct(QUANT, [1, 2])


@pytest.mark.parametrize("member, value, words", [
    ("weights", np.zeros(3, np.int8), "needs a int16 array, got int8"),
    ("weights", [1, 2, 3], "needs a numpy array or None, got list"),
    ("weights", np.zeros(6, np.int16)[::2], "C-contiguous"),
    ("scratch", np.zeros(3, np.int64), "needs a int32 array, got int64"),
])
def test_pointer_members_need_contiguous_arrays_of_the_pointee_dtype(member, value, words):
    with pytest.raises((TypeError, ValueError), match=words):
        _params(**{member: value})


def test_a_read_only_array_needs_a_const_pointer():
    ro = np.zeros(3, np.int32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="not const"):
        _params(scratch=ro)
    assert _params().values["multiplier"].flags.writeable is False  # const member: fine


@pytest.mark.parametrize("ctype, low, high", [
    ("int8_t", -(2**7), 2**7 - 1), ("uint8_t", 0, 2**8 - 1), ("int16_t", -(2**15), 2**15 - 1),
    ("uint16_t", 0, 2**16 - 1), ("int32_t", -(2**31), 2**31 - 1), ("uint32_t", 0, 2**32 - 1),
    ("int64_t", -(2**63), 2**63 - 1), ("uint64_t", 0, 2**64 - 1), ("size_t", 0, 2**64 - 1),
])
def test_integers_are_range_checked_for_their_c_type(ctype, low, high):
    layout = Layout("tvmd_pt_one_t", (Field("x", ctype),))
    assert ParamsStruct(layout, x=low).values["x"] == low
    assert ParamsStruct(layout, x=high).values["x"] == high
    for bad in (low - 1, high + 1):
        with pytest.raises(ValueError, match=rf"tvmd_pt_one_t\.x: {bad} is out of range for {ctype}"):
            ParamsStruct(layout, x=bad)


def test_array_elements_are_range_checked():
    with pytest.raises(ValueError, match=r"tvmd_pt_params_t\.grid\[1\]\[2\]: 40000 is out of range for int16_t"):
        _params(grid=[[0, 0, 0], [0, 0, 40000]])


@pytest.mark.parametrize("value, error", [(1.5, TypeError), ("3", TypeError), (None, TypeError)])
def test_integer_members_refuse_non_integers(value, error):
    with pytest.raises(error, match="needs an integer"):
        _params(kind=value)


def test_booleans_and_numpy_scalars_are_integers():
    p = _params(kind=True, count=np.int64(3), small=np.int8(-1))
    assert (p.values["kind"], p.values["count"], p.values["small"]) == (1, 3, -1)


@pytest.mark.parametrize("member, value", [("scale", float("nan")), ("scale", 1e39), ("ratio", float("inf"))])
def test_reals_must_be_finite_in_their_type(member, value):
    with pytest.raises(ValueError, match="is not a finite"):
        _params(**{member: value})


@pytest.mark.parametrize("member, value, words", [
    ("shape", [1, 2, 3], r"shape: expected 4 elements"),
    ("grid", [[1, 2, 3]], r"grid: expected 2 elements"),
    ("grid", [[1, 2, 3], [4, 5]], r"grid\[1\]: expected 3 elements"),
    ("qs", [{"input_offset": 1, "output_offset": 2}], r"qs: expected 2 elements"),
])
def test_arrays_need_exactly_their_shape(member, value, words):
    with pytest.raises(ValueError, match=words):
        _params(**{member: value})


# ---------------------------------------------------------------- the capsule


def test_capsule_is_a_params_capsule_at_the_struct():
    p = _params()
    assert _abi.params_address(p) == p.address
    assert _abi.params_address(p.capsule) == p.address


def test_the_capsule_keeps_the_struct_and_its_arrays_alive():
    weights = np.array([5, 6, 7], np.int16)
    watch_weights = weakref.ref(weights)
    p = _params(weights=weights)
    watch_struct = weakref.ref(p)
    capsule = p.capsule
    address = p.address
    del p, weights
    gc.collect()
    assert watch_struct() is not None and watch_weights() is not None
    assert _abi.params_address(capsule) == address
    struct = watch_struct()
    assert struct is not None and np.array_equal(struct.values["weights"], [5, 6, 7])
    del struct, capsule
    gc.collect()
    assert watch_struct() is None and watch_weights() is None


def test_capsule_does_not_leak_references():
    p = _params()
    before = sys.getrefcount(p)
    capsules = [p.capsule for _ in range(10)]
    assert sys.getrefcount(p) == before + 10
    del capsules
    assert sys.getrefcount(p) == before


# ---------------------------------------------------------------- read by C


_KERNEL_CAPSULE_NAME = ctypes.c_char_p(b"tvmdevice.kernel")  # outlives every capsule made from it


@pytest.fixture(scope="module")
def read_params_kernel(tmp_path_factory):
    """The C kernel of csrc/read_params.c, compiled against the header generated from PARAMS."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler `cc` on PATH")
    build = tmp_path_factory.mktemp("read_params")
    (build / "params_test.h").write_text(structs_header("TVMD_PT_PARAMS_H_", [PARAMS]))
    lib = build / "read_params.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", tvmdevice.get_include(),
                    "-I", str(build), str(CSRC / "read_params.c"), "-o", str(lib)], check=True)
    dll = ctypes.CDLL(str(lib))
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    kernel = ctypes.addressof(ctypes.c_char.in_dll(dll, "tvmd_pt_read_params"))
    return dll, lambda: new_capsule(kernel, _KERNEL_CAPSULE_NAME, None)


def _invoke(read_params_kernel, params) -> tuple[list[int], list[float]]:
    _, capsule = read_params_kernel
    ints, reals = np.zeros(32, np.int64), np.zeros(2, np.float64)
    assert _abi.invoke_kernel(capsule(), params, [address_of(ints), address_of(reals)], 0) == 0
    return ints.tolist(), reals.tolist()


def _expected_ints(v) -> list[int]:
    return [v["kind"], v["count"], v["q"]["input_offset"], v["q"]["output_offset"], v["macs"], v["small"],
            v["big"], *v["shape"], *(x for row in v["grid"] for x in row), v["bytes"],
            int(v["weights"][:v["count"]].sum()), int(v["multiplier"][v["count"] - 1]), 1,
            *(x for q in v["qs"] for x in (q["input_offset"], q["output_offset"]))]


def test_a_c_kernel_reads_every_member(read_params_kernel):
    p = _params()
    ints, reals = _invoke(read_params_kernel, p)
    expected = _expected_ints(p.values)
    assert ints[:len(expected)] == expected
    assert reals == [p.values["scale"], p.values["ratio"]]
    assert p.values["scratch"].tolist() == [-6, 200, 65534]  # the kernel wrote through the non-const pointer


def test_a_c_kernel_reads_arrays_kept_alive_only_by_the_capsule(read_params_kernel):
    p = _params(weights=np.array([1, 2, 3], np.int16), scratch=np.zeros(3, np.int32))
    capsule = p.capsule
    expected = _expected_ints(p.values)
    del p
    gc.collect()
    np.zeros(1 << 16, np.int16)  # reuse freed memory, were the arrays freed
    ints, _ = _invoke(read_params_kernel, capsule)
    assert ints[:len(expected)] == expected


# ---------------------------------------------------------------- as C source


def _print_statements(layout: Layout, values, expr: str, label: str, arrays: dict[str, str]):
    """printf statements for every scalar of a struct value, with the value each must print."""
    out: list[tuple[str, str, int | float]] = []

    def scalar(ctype: str, c: str, name: str, value) -> None:
        if ctype in ("float", "double"):  # %.17g reads back as the same double
            out.append((f'printf("{name} %.17g\\n", (double){c});', name, float(value)))
        elif ctype.startswith("u") or ctype == "size_t":
            out.append((f'printf("{name} %llu\\n", (unsigned long long){c});', name, value))
        else:
            out.append((f'printf("{name} %lld\\n", (long long){c});', name, value))

    def walk(f: Field, value, c: str, name: str) -> None:
        if isinstance(value, tuple):
            for i, item in enumerate(value):
                walk(f, item, f"{c}[{i}]", f"{name}[{i}]")
        elif isinstance(f.ctype, Layout):
            for inner in f.ctype.fields:
                walk(inner, value[inner.name], f"{c}.{inner.name}", f"{name}.{inner.name}")
        elif f.is_pointer:
            target = arrays.get(name, "NULL")
            out.append((f'printf("{name} %d\\n", {c} == {target});', name, 1))
        else:
            scalar(str(f.ctype), c, name, value)

    for f in layout.fields:
        walk(f, values[f.name], f"{expr}.{f.name}", f"{label}{f.name}")
    return out


@needs_cc
def test_c_initializer_compiles_warning_free_and_holds_the_values(tmp_path):
    p = _params(scale=-1.25e-7, ratio=-2.5e300, small=-1, macs=2**64 - 1, bytes=2**64 - 1,
                shape=[-(2**31), 2**31 - 1, 0, -1])
    arrays = {"weights": "tvmd_pt_weights", "multiplier": "tvmd_pt_multiplier", "scratch": "tvmd_pt_scratch"}
    text = p.c_initializer("tvmd_pt_call_3", arrays)
    assert text.startswith("static const tvmd_pt_params_t tvmd_pt_call_3 = {\n  .kind = 7u,\n")
    assert "  .absent = NULL,\n" in text and "  .weights = tvmd_pt_weights,\n" in text
    prints = _print_statements(PARAMS, p.values, "tvmd_pt_call_3", "", arrays)
    (tmp_path / "params_test.h").write_text(structs_header("TVMD_PT_PARAMS_H_", [PARAMS]))
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "params_test.h"\n'
        "static const int16_t tvmd_pt_weights[3] = {-3, 100, 32767};\n"
        "static const int32_t tvmd_pt_multiplier[3] = {1 << 30, 1 << 29, 1 << 28};\n"
        "static int32_t tvmd_pt_scratch[3];\n"
        + text + "int main(void) {\n" + "".join(f"  {c}\n" for c, _, _ in prints) + "  return 0;\n}\n")
    exe = tmp_path / "main"
    done = subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", str(tmp_path),
                           str(tmp_path / "main.c"), "-o", str(exe)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
    printed = {name: (float(x) if isinstance(want, float) else int(x))
               for (name, x), (_, _, want) in zip((line.split() for line in lines), prints)}
    assert printed == {name: want for _, name, want in prints}
    assert len(lines) == len(prints) == len(printed) == 28
    assert printed["big"] == -(2**63) and printed["shape[0]"] == -(2**31) and printed["macs"] == 2**64 - 1
    assert printed["scale"] == float(np.float32(-1.25e-7)) and printed["ratio"] == -2.5e300


def test_c_initializer_needs_a_name_for_every_non_null_pointer():
    with pytest.raises(ValueError, match=r"pointer member 'scratch' is not NULL.*array_names\['scratch'\]"):
        _params().c_initializer("x", {"weights": "w", "multiplier": "m"})
    with pytest.raises(ValueError, match="not a C identifier"):
        _params().c_initializer("1x", {})


def test_c_initializer_keys_nested_pointers_by_path():
    inner = Layout("tvmd_pt_inner_t", (Field("table", "const uint8_t*"),))
    outer = Layout("tvmd_pt_outer_t", (Field("inner", inner), Field("items", inner, (2,))))
    table = np.arange(4, dtype=np.uint8)
    p = ParamsStruct(outer, inner={"table": table}, items=[{"table": None}, {"table": table}])
    text = p.c_initializer("o", {"inner.table": "t0", "items[1].table": "t1"})
    assert ".table = t0," in text and ".table = NULL," in text and ".table = t1," in text


# ---------------------------------------------------------------- the Cython helper plugins cimport

_PLUGIN_PYX = '''
# cython: language_level=3
from libc.stdint cimport int32_t, uintptr_t
from tvmdevice.capsules cimport params_capsule

cdef class Owner:
    cdef int32_t value
    cdef object __weakref__

    def __init__(self, int32_t value):
        self.value = value

    @property
    def capsule(self):
        return params_capsule(&self.value, self)

    @property
    def address(self):
        return <uintptr_t>&self.value
'''


@needs_cc
@pytest.mark.slow
def test_a_plugin_cimports_the_owner_holding_capsule(tmp_path):
    """A plugin's Cython builds against ``tvmdevice/capsules.pxd`` and its capsule keeps the owner alive."""
    pytest.importorskip("Cython")
    (tmp_path / "tvmd_pt_plugin.pyx").write_text(_PLUGIN_PYX)
    core = str(Path(tvmdevice.__file__).resolve().parent.parent)
    setup = ("from setuptools import setup, Extension\nfrom Cython.Build import cythonize\n"
             f"setup(ext_modules=cythonize([Extension('tvmd_pt_plugin', ['tvmd_pt_plugin.pyx'], "
             f"include_dirs=[{tvmdevice.get_include()!r}])], "
             f"include_path=[{core!r}], quiet=True), script_args=['-q', 'build_ext', '--inplace'])\n")
    done = subprocess.run([sys.executable, "-c", setup], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        import tvmd_pt_plugin  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    owner = tvmd_pt_plugin.Owner(41)
    watch, capsule, address = weakref.ref(owner), owner.capsule, owner.address
    del owner
    gc.collect()
    assert watch() is not None and _abi.params_address(capsule) == address
    del capsule
    gc.collect()
    assert watch() is None

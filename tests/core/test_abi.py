"""The kernel-call ABI: capsules are validated before any pointer is called."""

from __future__ import annotations

import datetime  # noqa: F401 - provides a foreign PyCapsule (datetime.datetime_CAPI)

import numpy as np
import pytest

from tvmdevice import _abi
from tvmdevice.errors import ABIMismatchError
from tvmdevice.memory import address_of
from tvmdevice.testing import _fixtures


def test_valid_kernel_is_accepted_and_callable():
    name, fn, struct = _abi.kernel_info(_fixtures.increment_kernel())
    assert name == "tvmd_test_increment_s8" and fn and struct
    src = np.array([-128, -1, 0, 126, 127], np.int8)
    dst = np.zeros_like(src)
    status = _abi.invoke_kernel(_fixtures.increment_kernel(), _fixtures.IncrementParams(5),
                                [address_of(src), address_of(dst)], 0)
    assert status == 0
    assert dst.tolist() == [-127, 0, 1, 127, -128]


def test_kernel_status_is_returned():
    assert _abi.invoke_kernel(_fixtures.failing_kernel(), None, [], 0) == 7


@pytest.mark.parametrize("version, size, words", [
    (_abi.ABI_VERSION + 1, _abi.KERNEL_STRUCT_SIZE, "ABI version 2"),
    (_abi.ABI_VERSION, _abi.KERNEL_STRUCT_SIZE - 8, "struct is 16 bytes"),
])
def test_version_or_size_mismatch_is_an_error_not_a_crash(version, size, words):
    broken = _fixtures.BrokenKernel(version, size)
    with pytest.raises(ABIMismatchError, match=words):
        _abi.kernel_info(broken.capsule)
    with pytest.raises(ABIMismatchError):
        _abi.invoke_kernel(broken.capsule, None, [], 0)


@pytest.mark.parametrize("obj", [object(), "tvmdevice.kernel", lambda: None])
def test_non_capsules_are_refused(obj):
    with pytest.raises(ABIMismatchError, match="PyCapsule named 'tvmdevice.kernel'"):
        _abi.kernel_info(obj)


def test_foreign_capsule_is_refused():
    import datetime as dt

    capsule = dt.datetime_CAPI
    with pytest.raises(ABIMismatchError, match="datetime.datetime_CAPI"):
        _abi.kernel_info(capsule)
    with pytest.raises(ABIMismatchError, match="tvmdevice.params"):
        _abi.params_address(capsule)


def test_headers_and_pxd_ship_with_the_package():
    import os

    import tvmdevice

    inc = tvmdevice.get_include()
    for h in ("c_device_api.h", "kernel_abi.h", "quant.h"):
        assert os.path.isfile(os.path.join(inc, "tvmdevice", h))
    pkg = os.path.dirname(tvmdevice.__file__)
    for pxd in ("c_device_api.pxd", "kernel_abi.pxd", "quant.pxd"):
        assert os.path.isfile(os.path.join(pkg, pxd))

"""``Executor.tensor(i)`` answers every index: the tensor's values, or one error saying why there are none."""

from __future__ import annotations

import numpy as np
import pytest

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.aot.builder._common import TT
from tvmdevice.errors import TensorUnavailableError, TVMDeviceError


def _model_with_an_unused_tensor() -> tuple[bytes, int]:
    b = ModelBuilder(seed=2)
    x = b.input((1, 8), scale=0.05)
    b.output(b.fully_connected(x, 4))
    unused = b._tensor((1, 5), TT.INT8, 0.01, 0).index  # in the table, used by no operator
    return b.build(), unused


def test_a_tensor_no_operator_uses_is_refused_in_one_sentence_even_when_preserving_all():
    model, unused = _model_with_an_unused_tensor()
    with tvmdevice.compile(model, target="c", preserve_all_tensors=True).executor() as ex:
        ex.run([np.zeros((1, 8), np.int8)])
        with pytest.raises(TensorUnavailableError) as info:
            ex.tensor(unused)
    message = str(info.value)
    assert message == (f"tensor #{unused} ('t{unused}') is not materialised in any memory: "
                       "no operator reads or writes it")
    assert isinstance(info.value, TVMDeviceError) and isinstance(info.value, KeyError)


@pytest.mark.parametrize("index", [-1, 99, 1.5, True])
def test_an_index_out_of_range_is_refused_naming_the_tensor_count(index):
    model, _ = _model_with_an_unused_tensor()
    module = tvmdevice.compile(model, target="c")
    with module.executor() as ex:
        expected = rf"tensor index {index!r} is out of range: the model has {len(module.graph.tensors)} tensors"
        with pytest.raises(TensorUnavailableError, match=expected):
            ex.tensor(index)


def test_every_tensor_an_operator_uses_is_readable_when_preserving_all():
    model, unused = _model_with_an_unused_tensor()
    module = tvmdevice.compile(model, target="c", preserve_all_tensors=True)
    used = {t for op in module.graph.operators for t in (*op.inputs, *op.outputs) if t >= 0}
    with module.executor() as ex:
        ex.run([np.ones((1, 8), np.int8)])
        for t in sorted(used):
            assert ex.tensor(t).shape == tuple(module.graph.tensors[t].shape)

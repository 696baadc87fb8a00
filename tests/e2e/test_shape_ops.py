"""The shape and data-movement operators, every option, int8 and int16: each model built by the
builder, run by tflite-micro (which accepts every one) and by every installed device that claims the
operator, every tensor bit-exact."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder, TensorRef
from tvmdevice.aot.builder._common import TT
from tvmdevice.testing.oracle import tflm_run

Build = Callable[[ModelBuilder, TensorRef], "TensorRef | list[TensorRef]"]

X = (1, 4, 5, 3)

#: name -> (builder body, input shape, input dtype).
CASES: dict[str, tuple[Build, tuple[int, ...], str]] = {
    "transpose_nchw": (lambda b, x: b.transpose(x, [0, 3, 1, 2]), X, "int8"),
    "transpose_int16": (lambda b, x: b.transpose(x, [2, 1, 0, 3]), X, "int16"),
    "transpose_5d": (lambda b, x: b.transpose(x, [4, 0, 3, 1, 2]), (2, 3, 1, 4, 5), "int8"),
    "transpose_2d": (lambda b, x: b.transpose(x, [1, 0]), (7, 9), "int8"),
    "slice": (lambda b, x: b.slice(x, [0, 1, 2, 0], [1, -1, 2, 2]), X, "int8"),
    "slice_int64_index": (lambda b, x: b.slice(x, [0, 0, 1, 1], [1, 3, 4, -1], index_dtype="int64"), X, "int8"),
    "slice_int16": (lambda b, x: b.slice(x, [0, 1, 2, 0], [1, -1, 2, 2]), X, "int16"),
    "slice_5d": (lambda b, x: b.slice(x, [1, 0, 0, 1, 2], [1, 3, 1, 2, -1]), (2, 3, 1, 4, 5), "int8"),
    "strided_slice_negative": (lambda b, x: b.strided_slice(x, [0, 3, -1, 0], [1, 0, 0, 3], [1, -1, -2, 2]), X,
                               "int8"),
    "strided_slice_shrink": (lambda b, x: b.strided_slice(x, [0, 1, 0, 0], [1, 2, 5, 3], [1, 1, 2, 1],
                                                          shrink_axis_mask=3), X, "int8"),
    "strided_slice_masks": (lambda b, x: b.strided_slice(x, [0, 7, 0, 1], [1, 3, 1, 3], [1, 1, 1, 1],
                                                         begin_mask=2, end_mask=4), X, "int8"),
    "strided_slice_clamped": (lambda b, x: b.strided_slice(x, [-9, -2, 1, -5], [9, 99, -1, 9], [1, 1, 3, 1]), X,
                              "int8"),
    "strided_slice_int16": (lambda b, x: b.strided_slice(x, [0, 1, 0, 0], [1, 4, 5, 3], [1, 2, 2, 1]), X, "int16"),
    "split_axis1": (lambda b, x: b.split(x, 2, 1), X, "int8"),
    "split_last_int16": (lambda b, x: b.split(x, 3, -1), X, "int16"),
    "split_v": (lambda b, x: b.split_v(x, [1, -1, 2], 2), X, "int8"),
    "split_v_int16": (lambda b, x: b.split_v(x, [3, 1], -3), X, "int16"),
    "pack_axis1": (lambda b, x: b.pack([x, x], 1), X, "int8"),
    "pack_last_int16": (lambda b, x: b.pack([x, x, x], 4), X, "int16"),
    "unpack": (lambda b, x: b.unpack(x, 2), X, "int8"),
    "unpack_last_int16": (lambda b, x: b.unpack(x, -1), X, "int16"),
    "squeeze_all": (lambda b, x: b.squeeze(x), (1, 4, 1, 3), "int8"),
    "squeeze_dims_int16": (lambda b, x: b.squeeze(x, [2]), (1, 4, 1, 3), "int16"),
    "expand_dims_last": (lambda b, x: b.expand_dims(x, -1), X, "int8"),
    "expand_dims_1_int16": (lambda b, x: b.expand_dims(x, 1), X, "int16"),
    "gather_axis2": (lambda b, x: b.gather(x, [3, 0, 1, 1], axis=2), X, "int8"),
    "gather_2d_positions": (lambda b, x: b.gather(x, [[3, 0], [1, 1]], axis=1), X, "int8"),
    "gather_negative_axis": (lambda b, x: b.gather(x, [2, 2, 0], axis=-1), X, "int8"),
    "gather_batch_dims": (lambda b, x: b.gather(x, [[1, 0, 2], [2, 2, 1]], axis=1, batch_dims=1), (2, 3, 4), "int8"),
    "pad_int16": (lambda b, x: b.pad(x, [[0, 0], [1, 2], [0, 1], [2, 0]]), X, "int16"),
    "padv2_value": (lambda b, x: b.padv2(x, [[0, 0], [1, 2], [0, 1], [2, 0]], 7), X, "int8"),
    "padv2_zero_point": (lambda b, x: b.padv2(x, [[0, 0], [1, 2], [0, 1], [2, 0]]), X, "int8"),
    "padv2_int16": (lambda b, x: b.padv2(x, [[1, 0], [0, 3], [2, 2], [0, 1]], -300), X, "int16"),
    "concat_axis0": (lambda b, x: b.concatenation([x, x], axis=0), X, "int8"),
    "concat_axis1_int16": (lambda b, x: b.concatenation([x, x, x], axis=1), X, "int16"),
    "concat_axis_minus2": (lambda b, x: b.concatenation([x, x], axis=-2), X, "int8"),
    "concat_last_int16": (lambda b, x: b.concatenation([x, x], axis=3), X, "int16"),
    "resize_nearest": (lambda b, x: b.resize_nearest(x, (7, 11)), X, "int8"),
    "resize_nearest_align": (lambda b, x: b.resize_nearest(x, (7, 11), align_corners=True), X, "int8"),
    "resize_nearest_half": (lambda b, x: b.resize_nearest(x, (3, 11), half_pixel_centers=True), X, "int8"),
    "resize_nearest_int16": (lambda b, x: b.resize_nearest(x, (8, 10)), X, "int16"),
    "resize_bilinear": (lambda b, x: b.resize_bilinear(x, (7, 11)), X, "int8"),
    "resize_bilinear_align": (lambda b, x: b.resize_bilinear(x, (7, 11), align_corners=True), X, "int8"),
    "resize_bilinear_half": (lambda b, x: b.resize_bilinear(x, (3, 11), half_pixel_centers=True), X, "int8"),
    "resize_bilinear_down": (lambda b, x: b.resize_bilinear(x, (2, 2)), (2, 9, 7, 2), "int8"),
    "broadcast_to": (lambda b, x: b.broadcast_to(x, (2, 4, 5, 3)), (4, 1, 3), "int8"),
    "broadcast_to_int16": (lambda b, x: b.broadcast_to(x, (3, 4, 2)), (4, 1), "int16"),
    "broadcast_to_int64_shape": (lambda b, x: b.broadcast_to(x, (3, 1, 2, 6), index_dtype="int64"), (1, 2, 1),
                                 "int8"),
}

#: Targets whose devices claim some of these operators (each operator runs on the first that takes it).
TARGETS = ["c", "cmsis-nn, c"]


def make_model(body: Build, shape: tuple[int, ...], dtype: str, zero_point: int = 3) -> bytes:
    b = ModelBuilder(seed=0)
    x = b.input(shape, 0.05, 0 if dtype == "int16" else zero_point, dtype=dtype)
    ys = body(b, x)
    for y in ys if isinstance(ys, list) else [ys]:
        b.output(y)
    return b.build()


def random_input(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, size=shape).astype(dtype)


def _target_or_skip(target: str) -> None:
    names = set(tvmdevice.get_registry().device_names())
    missing = [d.split()[0] for d in target.split(",") if d.split()[0] not in names]
    if missing:
        pytest.skip(f"device(s) {missing} not installed (pip install ./plugins/<plugin>)")


def compare(model: bytes, target: str, inputs: list[np.ndarray]) -> int:
    """Run ``model`` on ``target`` and in tflite-micro; every non-constant tensor equal; returns how many."""
    module = tvmdevice.compile(model, target, preserve_all_tensors=True)
    with module.executor() as ex:
        ex.check_plan()
        outputs = ex.run(inputs)
        ref = tflm_run(model, inputs)
        for k, out in enumerate(outputs):
            np.testing.assert_array_equal(out, ref.output(k).reshape(out.shape), err_msg=f"output {k}")
        compared = 0
        for i, tensor in enumerate(module.graph.tensors):
            if not tensor.is_constant:
                np.testing.assert_array_equal(ex.tensor(i), ref.tensor(i, tensor.shape), err_msg=f"tensor {i}")
                compared += 1
    return compared


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_operator_and_option_bit_exact(case, target):
    _target_or_skip(target)
    body, shape, dtype = CASES[case]
    model = make_model(body, shape, dtype)
    for seed in (0, 1):
        assert compare(model, target, [random_input(shape, dtype, seed)]) >= 2


def test_placement_runs_each_operator_on_the_host_kernel():
    module = tvmdevice.compile(make_model(CASES["transpose_nchw"][0], X, "int8"), "c")
    assert [p.call.name for p in module.placement.ops] == ["strided_copy"]
    views = tvmdevice.compile(make_model(CASES["squeeze_all"][0], (1, 4, 1, 3), "int8"), "c")
    assert [p.is_view for p in views.placement.ops] == [True]


# ----------------------------------------------------------- hypothesis
_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_shapes = st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple)


@_SETTINGS
@given(shape=_shapes, data=st.data(), dtype=st.sampled_from(["int8", "int16"]))
def test_transpose_any_permutation(shape, data, dtype):
    perm = data.draw(st.permutations(range(len(shape))))
    model = make_model(lambda b, x: b.transpose(x, perm), shape, dtype)
    compare(model, "c", [random_input(shape, dtype, 0)])


@_SETTINGS
@given(shape=_shapes, data=st.data())
def test_strided_slice_any_indices_and_masks(shape, data):
    rank = len(shape)
    begin = data.draw(st.lists(st.integers(-6, 6), min_size=rank, max_size=rank))
    end = data.draw(st.lists(st.integers(-6, 6), min_size=rank, max_size=rank))
    strides = data.draw(st.lists(st.integers(-3, 3).filter(bool), min_size=rank, max_size=rank))
    begin_mask, end_mask = data.draw(st.integers(0, 2**rank - 1)), data.draw(st.integers(0, 2**rank - 1))
    b = ModelBuilder()
    x = b.input(shape, 0.05, 0)
    y = b.strided_slice(x, begin, end, strides, begin_mask=begin_mask, end_mask=end_mask)
    if 0 in y.shape:
        return  # an empty slice: nothing to compare (tvmdevice refuses empty tensors)
    b.output(y)
    compare(b.build(), "c", [random_input(shape, "int8", 1)])


@_SETTINGS
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 6), st.integers(1, 6), st.integers(1, 3)),
       size=st.tuples(st.integers(1, 13), st.integers(1, 13)), bilinear=st.booleans(),
       mode=st.sampled_from(["plain", "align", "half"]))
def test_resize_any_size(shape, size, bilinear, mode):
    method = "resize_bilinear" if bilinear else "resize_nearest"
    model = make_model(lambda b, x: getattr(b, method)(x, size, align_corners=mode == "align",
                                                       half_pixel_centers=mode == "half"), shape, "int8")
    compare(model, "c", [random_input(shape, "int8", 2)])


@_SETTINGS
@given(shape=_shapes, data=st.data())
def test_gather_and_split_v_any_axis(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    positions = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=5))
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(n - 1, 1)), max_size=3)))) if n > 1 else []
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]

    def body(b, x):
        return [b.gather(x, positions, axis=axis)] + b.split_v(x, sizes, axis)

    compare(make_model(body, shape, "int8"), "c", [random_input(shape, "int8", 3)])


@pytest.mark.parametrize("case", sorted(CASES))
def test_numpy_oracle_matches_tflite_micro(case):
    from tvmdevice.aot.frontend import load_tflite
    from tvmdevice.testing import reference as kernels

    body, shape, dtype = CASES[case]
    model = make_model(body, shape, dtype)
    graph = load_tflite(model)
    x = random_input(shape, dtype, 4)
    values = kernels.run_graph(graph, [x])
    ref = tflm_run(model, [x])
    for i, tensor in enumerate(graph.tensors):
        if not tensor.is_constant:
            np.testing.assert_array_equal(values[i], ref.tensor(i, tensor.shape), err_msg=f"tensor {i}")


def test_a_computed_gather_position_out_of_range_fails_the_run_as_in_tflite_micro():
    b = ModelBuilder()
    x = b.input((3, 4), 0.05)
    pos = b._tensor((2,), TT.INT32)  # positions computed at run time: a graph input
    b.spec.inputs.append(pos.index)
    b.output(b.gather(x, pos, axis=0))
    module = tvmdevice.compile(b.build(), "c")
    data = random_input((3, 4), "int8", 0)
    with module.executor() as ex:
        good = ex.run([data, np.array([2, 0], dtype=np.int32)])[0]
        np.testing.assert_array_equal(good, data[[2, 0]])
        with pytest.raises(tvmdevice.errors.TVMDeviceError, match="GATHER"):
            ex.run([data, np.array([1, 3], dtype=np.int32)])


@pytest.mark.parametrize("body, shape, match", [
    (lambda b, x: b.transpose(x, [5, 4, 3, 2, 1, 0]), (1, 2, 1, 2, 1, 2), "up to 5 dimensions"),
    (lambda b, x: b.strided_slice(x, [0] * 5, [1, 2, 1, 2, 2], [1] * 5), (1, 2, 1, 2, 2), "up to 4 dimensions"),
], ids=["transpose-6d", "strided-slice-5d"])
def test_ranks_tflite_micro_refuses_are_refused_by_name(body, shape, match):
    model = make_model(body, shape, "int8")
    with pytest.raises(tvmdevice.errors.PlacementError, match=match):
        tvmdevice.compile(model, "c")


def test_a_move_between_different_quantizations_is_refused():
    b = ModelBuilder()
    x = b.input((1, 4, 5, 3), 0.05, 3)
    y = b.transpose(x, [0, 2, 1, 3])
    b.spec.tensors[y.index].scales = [0.1]
    b.output(y)
    with pytest.raises(tvmdevice.errors.PlacementError, match="does not rescale"):
        tvmdevice.compile(b.build(), "c")


@pytest.mark.parametrize("body, match", [
    (lambda b, x: b.resize_bilinear(x, (5, 5), align_corners=True, half_pixel_centers=True), "both set"),
    (lambda b, x: b.gather(x, [0, 7], axis=1), "position 7 is outside"),
    (lambda b, x: b.strided_slice(x, [0, 9, 0, 0], [1, 10, 5, 3], [1, 1, 1, 1], shrink_axis_mask=2),
     "reads indices"),
], ids=["resize-both-options", "gather-constant-position", "strided-slice-past-the-end"])
def test_models_tflite_micro_cannot_run_are_format_errors(body, match):
    from tvmdevice.aot.frontend import ModelFormatError, load_tflite

    b = ModelBuilder()
    x = b.input(X, 0.05)
    try:
        y = body(b, x)
    except (IndexError, ValueError):  # the builder's own shape arithmetic gives up first
        pytest.skip("the builder cannot write this model")
    b.output(y)
    with pytest.raises(ModelFormatError, match=match):
        load_tflite(b.build())

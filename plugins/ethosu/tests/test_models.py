"""The four shared models on the functional model: placement, and bit-exactness with tflite-micro.

Compiled as a user compiles them, the NPU's operators form multi-operator partitions (their
intermediate tensors live in Vela's scratch); compiled with every tensor preserved, each operator is
a partition of its own, and every tensor it writes is compared with TFLM's, not only the model's
outputs (a SOFTMAX output on random inputs is nearly one-hot and would hide differences).
"""

from __future__ import annotations

import numpy as np
import pytest
from tvmdevice.testing.oracle import tflm_run

import tvmdevice_ethosu

#: model -> (operators on ethos-u, operators per partition, (declined operator type, the command named)...)
EXPECTED = {
    "hello_world_int8": (3, [3], ()),
    "ad_fc_autoencoder_int8": (10, [10], ()),
    "micro_speech_int8": (3, [3], ()),
    "kws_dscnn_int8": (12, [12], ()),
}


@pytest.fixture(scope="module")
def compiled(registry, models_dir):
    from tvmdevice.aot.compiler import compile

    cache = {}

    def get(name, preserve=False):
        if (name, preserve) not in cache:
            path = models_dir / f"{name}.tflite"
            cache[name, preserve] = (path.read_bytes(), compile(str(path), "ethos-u, c", registry=registry,
                                                                  preserve_all_tensors=preserve))
        return cache[name, preserve]

    return get


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_placement(compiled, name):
    _, module = compiled(name)
    on_npu, sizes, declined = EXPECTED[name]
    assert [len([op for op in p.ops if op.type != "RESHAPE"]) for p in module.placement.partitions] == sizes
    ops = [p for p in module.placement.ops if not p.is_alias]
    assert sum(p.device == "ethos-u" and p.op_type != "RESHAPE" for p in ops) == on_npu
    refused = [(p.op_type, reason) for p in ops if p.device != "ethos-u" for _, reason in p.declined]
    assert len(refused) == len(declined)
    for (op_type, reason), (want_type, command) in zip(refused, declined):
        assert op_type == want_type and f"does not implement {command}" in reason, reason
    for part in module.placement.partitions:
        details = module.prepared[part.first].details
        assert details["vela_npu_cycles"] > 0 and details["vela_macs"] > 0


@pytest.mark.parametrize("preserve", [False, True], ids=["partitions", "every-tensor"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bit_exact_with_tflite_micro(compiled, name, preserve):
    model, module = compiled(name, preserve)
    rng = np.random.default_rng(23)
    # every partition's outputs when each tensor is kept; else the last partition's (not reused after it)
    parts = module.placement.partitions if preserve else module.placement.partitions[-1:]
    partition_outputs = [t for part in parts for t in part.outputs]
    with module.executor() as ex:
        shapes = [module.graph.tensors[i].shape for i in module.graph.inputs]
        for _ in range(3):
            xs = [rng.integers(-128, 128, size=s, dtype=np.int8) for s in shapes]
            ys = ex.run(xs)
            ref = tflm_run(model, xs)
            for t in partition_outputs:
                want = ref.tensor(t, module.graph.tensors[t].shape)
                np.testing.assert_array_equal(ex.tensor(t), want, err_msg=f"tensor {t}")
            for k, y in enumerate(ys):
                np.testing.assert_array_equal(np.asarray(y).reshape(ref.output(k).shape), ref.output(k))
        device = next(d for d in ex.devices if d.type.name == "ethos-u")
        counters = tvmdevice_ethosu.counters(device)
    macs = sum(module.prepared[p.first].details["vela_macs"] for p in module.placement.partitions)
    assert counters["launches"] == 3 * len(module.placement.partitions)
    assert counters["macs"] == 3 * macs
    assert counters["commands"] > 0 and counters["operations"] > 0


@pytest.mark.parametrize("options", [
    "-system_config=Ethos_U55_Deep_Embedded -memory_mode=Shared_Sram",  # weights DMA'd into SRAM first
    "-accelerator_config=ethos-u55-32 -memory_mode=Sram_Only -system_config=Ethos_U55_High_End_Embedded",
    "-accelerator_config=ethos-u55-256 -optimise=Size",
])
def test_other_configurations_are_bit_exact_too(registry, models_dir, options):
    from tvmdevice.aot.compiler import compile

    path = models_dir / "kws_dscnn_int8.tflite"
    model = path.read_bytes()
    module = compile(str(path), f"ethos-u {options}, c", registry=registry)
    assert sum(p.device == "ethos-u" and p.op_type != "RESHAPE" for p in module.placement.ops) == 12
    rng = np.random.default_rng(5)
    with module.executor() as ex:
        xs = [rng.integers(-128, 128, size=module.graph.tensors[i].shape, dtype=np.int8) for i in module.graph.inputs]
        (y,) = ex.run(xs)
        for t in module.placement.partitions[-1].outputs:  # the partition's output: the model's, SOFTMAX's
            np.testing.assert_array_equal(ex.tensor(t), tflm_run(model, xs).tensor(t, module.graph.tensors[t].shape))
        np.testing.assert_array_equal(np.asarray(y).reshape(-1), tflm_run(model, xs).output(0).reshape(-1))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_operator_runs_on_ethos_u_ahead_of_cmsis_nn(registry, models_dir, name):
    """The issue's target, "ethos-u, cmsis-nn, c": every operator of the four models on the NPU, one partition."""
    from tvmdevice.aot.compiler import compile

    if "cmsis-nn" not in registry.device_names():
        pytest.skip("tvmdevice-cmsis is not installed (pip install ./plugins/cmsis)")
    path = models_dir / f"{name}.tflite"
    model = path.read_bytes()
    module = compile(str(path), "ethos-u, cmsis-nn, c", registry=registry)
    assert {p.device for p in module.placement.ops if not p.is_view} == {"ethos-u"}
    assert len(module.placement.partitions) == 1
    rng = np.random.default_rng(11)
    xs = [rng.integers(-128, 128, size=module.graph.tensors[i].shape, dtype=np.int8) for i in module.graph.inputs]
    with module.executor() as ex:
        (y,) = ex.run(xs)
    want = tflm_run(model, xs).output(0)
    np.testing.assert_array_equal(np.asarray(y).reshape(want.shape), want)

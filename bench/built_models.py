"""The built workloads the speed benchmarks measure beside the shared models (``tvmdevice.aot.builder``).

The shapes where the host and the microcontroller kernels are weakest on small vision nets: a ResNet-style
model, a ResNet-8 block with its 3-channel stem, a MobileNetV1 block with an 8-channel 48x48 depthwise and a
MobileNetV2 224x224 stem.  :data:`BUILT` is the one list of them: ``bench_cmsis.py`` times them on the host,
``bench_mcu.py`` counts their operators' instructions on Cortex-M.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

__all__ = ["BUILT", "Built", "mobilenet_v1_block", "mobilenet_v2_stem", "resnet8_block", "resnet_style"]


def resnet_style(blocks: int = 3) -> bytes:
    """[1,32,32,16] -> CONV 3x3 -> ``blocks`` x (CONV 3x3 RELU -> CONV 3x3 -> ADD skip) -> AVG POOL -> FC 10."""
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder(name="resnet_style", seed=5)
    x = b.input((1, 32, 32, 16), scale=1 / 64, zero_point=0)
    h = b.conv2d(x, filters=16, kernel=3, padding="SAME", activation="RELU", per_channel=True, out_scale=0.03,
                 out_zero_point=-128)
    for _ in range(blocks):
        y = b.conv2d(h, filters=16, kernel=3, padding="SAME", activation="RELU", per_channel=True, out_scale=0.03,
                     out_zero_point=-128)
        y = b.conv2d(y, filters=16, kernel=3, padding="SAME", per_channel=True, out_scale=0.05, out_zero_point=0)
        h = b.add(h, y, activation="RELU", out_scale=0.04, out_zero_point=-128)
    p = b.avg_pool2d(h, pool=8, stride=8)
    b.output(b.fully_connected(b.reshape(p, (1, -1)), 10, out_scale=0.1))
    return b.build()


def resnet8_block() -> bytes:
    """ResNet-8's stem and first block on a 32x32 RGB image: [1,32,32,3] -> CONV 3x3 to 16 RELU (the 3-channel
    first layer) -> CONV 3x3 RELU -> CONV 3x3 -> ADD the stem's output, RELU."""
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder(name="resnet8_block", seed=13)
    x = b.input((1, 32, 32, 3), scale=1 / 128, zero_point=0)
    stem = b.conv2d(x, filters=16, kernel=3, padding="SAME", activation="RELU", per_channel=True, out_scale=0.03,
                    out_zero_point=-128)
    y = b.conv2d(stem, filters=16, kernel=3, padding="SAME", activation="RELU", per_channel=True, out_scale=0.03,
                 out_zero_point=-128)
    y = b.conv2d(y, filters=16, kernel=3, padding="SAME", per_channel=True, out_scale=0.05, out_zero_point=0)
    b.output(b.add(stem, y, activation="RELU", out_scale=0.04, out_zero_point=-128))
    return b.build()


def mobilenet_v1_block() -> bytes:
    """A MobileNetV1 block of a 96x96 vision model at width 0.25: [1,48,48,8] -> DEPTHWISE 3x3 RELU6 -> CONV 1x1
    to 16 RELU6 (the 8-channel depthwise takes every pixel through the vector loops' channel tail)."""
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder(name="mobilenet_v1_block", seed=7)
    x = b.input((1, 48, 48, 8), scale=1 / 32, zero_point=-128)
    d = b.depthwise_conv2d(x, kernel=3, padding="SAME", activation="RELU6", out_scale=6 / 255, out_zero_point=-128)
    b.output(b.conv2d(d, filters=16, kernel=1, activation="RELU6", out_scale=6 / 255, out_zero_point=-128))
    return b.build()


def mobilenet_v2_stem() -> bytes:
    """A MobileNetV2 224x224 stem: [1,224,224,3] -> CONV 3x3 /2 to 32 RELU6 (its whole bordered image, 307 KB
    of int16, is over cmsis-nn's default scratch cap on the host)."""
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder(name="mobilenet_v2_stem", seed=11)
    x = b.input((1, 224, 224, 3), scale=1 / 64, zero_point=0)
    b.output(b.conv2d(x, filters=32, kernel=3, stride=2, padding="SAME", activation="RELU6", out_scale=6 / 255,
                      out_zero_point=-128))
    return b.build()


class Built(NamedTuple):
    """A built workload: how to build it and what it is."""

    build: Callable[[], bytes]
    what: str


#: Name -> the built workload, in the order the benchmarks report them.
BUILT: dict[str, Built] = {
    "resnet_style": Built(resnet_style, "3 residual blocks, [1,32,32,16]"),
    "resnet8_block": Built(resnet8_block, "[1,32,32,3] stem 3x3 to 16 + a residual block"),
    "mobilenet_v1_block": Built(mobilenet_v1_block, "[1,48,48,8] depthwise 3x3 + 1x1 to 16"),
    "mobilenet_v2_stem": Built(mobilenet_v2_stem, "[1,224,224,3] conv 3x3 /2 to 32"),
}

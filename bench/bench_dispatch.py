"""Per-operator dispatch overhead of the executor's run loop.

A graph of many tiny operators, so that the time is dispatch, not compute:

  * C path: N one-element C kernels (``tvmdevice.testing._fixtures.increment``)
    in the Cython run loop, per-step cost = dispatch + a trivial kernel;
  * executor: a generated model of N tiny ADD operators compiled for each
    available target (``c`` runs Python reference kernels; ``cmsis-nn`` C
    kernels through the same run loop), timed per operator over a whole run
    (activate and deactivate included).

Target: under 1 us per operator on the C path.

    python bench/bench_dispatch.py [--ops 500] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def c_path_ns(n_ops: int, repeat: int) -> float:
    from tvmdevice.aot._runloop import RunLoop

    from tvmdevice.memory import address_of
    from tvmdevice.testing import _fixtures

    bufs = [np.zeros(1, np.int8) for _ in range(n_ops + 1)]
    loop = RunLoop(n_ops, lambda i, s: RuntimeError(f"step {i} failed: {s}"))
    params = _fixtures.IncrementParams(1)
    for i in range(n_ops):
        loop.add_kernel(_fixtures.increment_kernel(), params, [address_of(bufs[i]), address_of(bufs[i + 1])], 0)
    samples = []
    for _ in range(repeat):
        t = time.perf_counter_ns()
        for _ in range(100):
            loop.run()
        samples.append((time.perf_counter_ns() - t) / 100 / n_ops)
    if int(bufs[-1][0]) != n_ops % 256 - 256 * (n_ops % 256 > 127):
        raise AssertionError("the kernel chain did not run")
    return min(samples)


def tiny_add_model(n_ops: int) -> bytes:
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder(name="tiny_adds", seed=0)
    x = b.input((1, 1), scale=0.05, zero_point=0)
    for _ in range(n_ops):
        x = b.add(x, x, out_scale=0.05, out_zero_point=0)
    b.output(x)
    return b.build()


def executor_ns(model: bytes, target: str, n_ops: int, repeat: int) -> float:
    import tvmdevice

    module = tvmdevice.compile(model, target)
    with module.executor() as ex:
        ex.set_inputs([np.ones((1, 1), np.int8)])
        ex.invoke()
        samples = []
        for _ in range(repeat):
            t = time.perf_counter_ns()
            for _ in range(10):
                ex.invoke()
            samples.append((time.perf_counter_ns() - t) / 10 / n_ops)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    import tvmdevice

    c_ns = c_path_ns(args.ops, args.repeat)
    print(f"C run loop, {args.ops} one-element kernels: {c_ns:8.1f} ns/op   (target < 1000 ns)")
    model = tiny_add_model(args.ops)
    names = tvmdevice.get_registry().device_names()
    for target in ["c", "cmsis-nn, c", "woofles, c"]:
        if all(d.strip() in names for d in target.split(",")):
            ns = executor_ns(model, target, args.ops, args.repeat)
            print(f"executor, {args.ops} ADD ops on '{target}':{'':>{14 - len(target)}} {ns:8.1f} ns/op")
    return 0 if c_ns < 1000 else 1


if __name__ == "__main__":
    sys.exit(main())

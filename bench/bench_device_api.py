"""Device API call overhead and import/discovery time, in one run.

Reports, side by side:
  * a bound Device API call (``device.get_current_stream()``: framework method
    -> implementation resolved at creation),
  * a plain Python method call returning an attribute (the floor),
  * the same hook called through pluggy (what trace mode costs),
and ``import tvmdevice`` + discovery of the installed plugins, in a fresh
interpreter.  Targets: bound <= 3x plain; import + discovery < 100 ms.

    python bench/bench_device_api.py [--repeat 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import timeit


class Plain:
    def __init__(self) -> None:
        self.current_stream = 0

    def get_current_stream(self) -> int:
        return self.current_stream


def per_call_ns(stmt, number: int, repeat: int) -> float:
    times = timeit.repeat(stmt, number=number, repeat=repeat)
    return min(times) / number * 1e9


def import_and_discovery_ms(repeat: int) -> float:
    code = ("import time; t = time.perf_counter(); import tvmdevice; "
            "tvmdevice.get_registry().device_types(); print((time.perf_counter() - t) * 1000)")
    samples = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout) for _ in range(repeat)]
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    import tvmdevice

    reg = tvmdevice.get_registry()
    dev = reg.create_device("c", trace=False)
    dev.init()
    dev.open()
    traced = reg.create_device("c", trace=True)
    traced.init()
    traced.open()
    plain = Plain()
    # pluggy restricted to the owner, as trace mode calls it (other device
    # plugins must not see a device that is not theirs).
    owner = reg.plugin_for("c").plugin
    others = [r.plugin for r in reg.records() if r.status == "loaded" and r.plugin is not owner]
    hook = reg.pm.subset_hook_caller("tvmdevice_get_current_stream", remove_plugins=others)

    results = {
        "plain_method_ns": per_call_ns(plain.get_current_stream, args.number, args.repeat),
        "bound_device_api_ns": per_call_ns(dev.get_current_stream, args.number, args.repeat),
        "traced_device_api_ns": per_call_ns(traced.get_current_stream, args.number // 10, args.repeat),
        "pluggy_hook_ns": per_call_ns(lambda: hook(device=dev), args.number // 10, args.repeat),
    }
    results["bound_over_plain"] = results["bound_device_api_ns"] / results["plain_method_ns"]
    results["pluggy_over_bound"] = results["pluggy_hook_ns"] / results["bound_device_api_ns"]
    results["import_and_discovery_ms"] = import_and_discovery_ms(args.repeat)
    results["devices_discovered"] = reg.device_names()
    dev.release()
    traced.release()

    print(f"plain method call            {results['plain_method_ns']:8.1f} ns")
    print(f"bound Device API call        {results['bound_device_api_ns']:8.1f} ns   "
          f"{results['bound_over_plain']:.2f}x plain (target <= 3x)")
    print(f"same hook through pluggy     {results['pluggy_hook_ns']:8.1f} ns   "
          f"{results['pluggy_over_bound']:.1f}x bound")
    print(f"traced Device API call       {results['traced_device_api_ns']:8.1f} ns")
    print(f"import tvmdevice + discovery {results['import_and_discovery_ms']:8.1f} ms   (target < 100 ms) "
          f"devices: {', '.join(results['devices_discovered'])}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    ok = results["bound_over_plain"] <= 3 and results["import_and_discovery_ms"] < 100
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

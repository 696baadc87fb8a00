"""The operators the ethos-u device can claim: those Vela's own supported-operator checks name that
the functional model runs, read on first use (never a list kept here).

Vela's compiler core (``ethosu.regor``) documents its TFLite supported-operator checks per
architecture (``tflite_operator_constraints("EthosU55")``, the source of Vela's ``SUPPORTED_OPS.md``).
Each operator it names that tvmdevice's operator layer knows (views aside: they run no kernel) is
written as the default single-operator model (:func:`tvmdevice.aot.builder.single_op_model`) in its
own data types, in int8 and in int16, with the default options and at the parameter edges
(:data:`_EDGES`) the operator takes; a kernel key (:func:`tvmdevice.ops.kernel_key`) is claimed
when the device's own check accepts every one of those models of every data type the key covers:
Vela places it on the NPU and the functional model implements every command and field of the
stream Vela made for it.  So an int16 variant (or a key one kernel serves for int8 and int16) is
claimed only where the functional model runs it, and the claims grow with the functional model.

Reading them compiles about fifty small models with Vela (a few seconds), once per process:
:class:`VelaOperators` is the lazy set the device declares as its ``operators`` (the registry never
reads a partition-compiling device's claims at discovery; ``tvmdevice plugins`` and the operator
table do).  Declared operators are held to the conformance kit's kernels check (bit-exact with the
host reference across their parameters).
"""

from __future__ import annotations

from collections.abc import Iterator, Set

__all__ = ["ARCHITECTURE", "VelaOperators", "vela_operator_names"]

#: The architecture whose constraints name the operators (the device runs Ethos-U55 streams).
ARCHITECTURE = "EthosU55"
#: The input data types the default single-operator model is written in (None: the builder's own, float32
#: for QUANTIZE).
_DTYPES = (None, "int8", "int16")


#: Beside the default model, the parameter edges a claim must also run where the operator takes them
#: (a declared key is held to every such case, e.g. by the int16 kernels' suite): a window crossing the
#: input's edge (SAME padding), and a broadcast across five dimensions.
_EDGES: tuple[dict, ...] = (
    {"input_shape": (1, 7, 7, 3), "pool": 3, "stride": 2, "padding": "SAME"},
    {"input_shape": (2, 3, 4, 2, 3), "input2_shape": (3, 1, 1, 3)},
)


def vela_operator_names() -> tuple[str, ...]:
    """The TFLite builtin operators Vela's supported-operator checks name for :data:`ARCHITECTURE`.

    Vela writes some without the builtin's underscores (``ARGMAX``): matched by their letters.
    """
    import ethosu.regor
    import tflite

    builtins = {name.replace("_", ""): name for name in vars(tflite.BuiltinOperator) if not name.startswith("_")}
    named = ethosu.regor.tflite_operator_constraints(ARCHITECTURE)
    return tuple(sorted(builtins[n.replace("_", "")] for n in named if n.replace("_", "") in builtins))


def _claims() -> frozenset[str]:
    from tvmdevice.aot.builder import single_op_model
    from tvmdevice.aot.frontend import load_tflite
    from tvmdevice.errors import TVMDeviceError
    from tvmdevice.ops import OPERATORS, analyze, kernel_key

    from .device import DEVICE_TYPE
    from .placement import check_operator

    options = DEVICE_TYPE.default_options()
    runs: dict[str, bool] = {}  # kernel key -> every data type of it tried ran
    for op_type in vela_operator_names():
        if op_type not in OPERATORS:
            continue
        for dtype in _DTYPES:
            for edge in ({},) + _EDGES:
                try:
                    params = dict(edge) if dtype is None else {"input_dtype": dtype, **edge}
                    graph = load_tflite(single_op_model(op_type, **params), name=op_type.lower())
                    (op,) = graph.operators
                    op_data = analyze(graph, op)
                except (TVMDeviceError, ValueError, KeyError, TypeError):
                    if not edge:
                        break  # the builder or the importer has no such variant
                    continue  # the operator takes no such parameter, or no kernel of any device runs it
                if op.type != op_type or (op_data is not None and op_data.is_view):
                    break  # a view (RESHAPE and kin) runs no kernel on any device
                key = kernel_key(op.type, op_data)
                # one key may cover both data types (CONCATENATION, PAD...) and the edges: claimed only if all run
                runs[key] = runs.get(key, True) and check_operator(options, graph, op) is None
    return frozenset(key for key, ran in runs.items() if ran)


class VelaOperators(Set[str]):
    """The device's kernel keys (:func:`_claims`), computed when first used.

    Compared and hashed by identity, so declaring it in the :class:`~tvmdevice.plugin.DeviceType`
    reads nothing.
    """

    def __init__(self) -> None:
        self._keys: frozenset[str] | None = None

    @property
    def keys(self) -> frozenset[str]:
        if self._keys is None:
            self._keys = _claims()
        return self._keys

    def __contains__(self, key: object) -> bool:
        return key in self.keys

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.keys))

    def __len__(self) -> int:
        return len(self.keys)

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"VelaOperators({sorted(self._keys) if self._keys is not None else 'not read yet'})"

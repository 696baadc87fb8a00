"""What every operator of the layer has: a signature, op data, and its definition."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator

__all__ = ["OpData", "Operand", "Signature", "OpDef", "INT8", "INT16", "INT32", "INT64", "FLOAT32", "SHAPE_TYPES",
           "kernel_key"]

INT8 = frozenset({np.dtype("i1")})
INT16 = frozenset({np.dtype("<i2")})
INT64 = frozenset({np.dtype("<i8")})
INT32 = frozenset({np.dtype("<i4")})
FLOAT32 = frozenset({np.dtype("<f4")})
#: Index-like operands (shapes, paddings): TFLite models use int32 or int64.
SHAPE_TYPES = frozenset({np.dtype("<i4"), np.dtype("<i8")})


@dataclass(frozen=True)
class OpData:
    """What TFLM's Prepare computes for one operator; devices add only their packing and limits.

    :ivar op_index: the operator's index in the graph.
    :ivar op_type: its TFLite type.
    """

    op_index: int
    op_type: str

    #: The data-type variant its kernel must implement: ``""`` for the int8
    #: kernels every device of the operator has, else e.g. ``"int16"`` or
    #: ``"int8->int16"`` (:func:`kernel_key`).
    variant: ClassVar[str] = ""

    @property
    def is_view(self) -> bool:
        """Whether the operator's output aliases its input (RESHAPE and kin): no kernel runs."""
        return False


@dataclass(frozen=True)
class Operand:
    """What one operand of an operator may be.

    :ivar name: its role (``"input"``, ``"filter"``, ``"bias"``...).
    :ivar dtypes: the numpy dtypes a model may give it.
    :ivar constant: it must be a constant tensor.
    :ivar optional: it may be absent (index -1) or left off the end.
    :ivar may_be_absent: with ``optional``, whether index -1 is accepted; ``False`` where
        tflite-micro takes the operand's presence from the input count and then reads it
        (DEPTHWISE_CONV_2D's bias), so only leaving it off the end makes it optional.
    """

    name: str
    dtypes: frozenset
    constant: bool = False
    optional: bool = False
    may_be_absent: bool = True


@dataclass(frozen=True)
class Signature:
    """The operands and options of an operator type.

    :ivar inputs: input operands in order; with ``variadic`` the first one repeats.
    :ivar outputs: output operands.
    :ivar options: the option names of :attr:`tvmdevice.ir.Operator.options`.
    :ivar variadic: any number (at least one) of inputs, each like ``inputs[0]``.
    :ivar variadic_outputs: any number (at least one) of outputs, each like ``outputs[0]``
        (SPLIT, SPLIT_V, UNPACK).
    """

    inputs: tuple[Operand, ...]
    outputs: tuple[Operand, ...]
    options: tuple[str, ...] = ()
    variadic: bool = False
    variadic_outputs: bool = False

    def output_roles(self, n_outputs: int) -> tuple[Operand, ...]:
        """The roles of ``n_outputs`` outputs (the first role repeated when variadic)."""
        return self.outputs * n_outputs if self.variadic_outputs else self.outputs

    def roles(self, n_inputs: int) -> tuple[Operand, ...]:
        """The roles of ``n_inputs`` inputs (the first role repeated when variadic)."""
        return self.inputs * n_inputs if self.variadic else self.inputs

    @property
    def required_inputs(self) -> int:
        return 1 if self.variadic else sum(not r.optional for r in self.inputs)


@dataclass(frozen=True)
class OpDef:
    """One operator type of the layer.

    :ivar signature: its operands and options.
    :ivar validate: structural checks (raises :class:`~tvmdevice.errors.ModelFormatError`).
    :ivar analyze: validate + TFLM's op data (also raises :class:`~tvmdevice.errors.Refusal`).
    """

    signature: Signature
    validate: Callable[["Graph", "Operator"], None]
    analyze: Callable[["Graph", "Operator"], OpData | None]


def kernel_key(op_type: str, op_data: OpData | None) -> str:
    """The name a device declares to run this operator variant: ``"ADD"`` (int8), ``"ADD:int16"``...

    A device type's ``operators`` lists these keys; an operator whose op data
    has a variant goes only to devices that declare that variant's key.
    """
    variant = getattr(op_data, "variant", "")
    return f"{op_type}:{variant}" if variant else op_type

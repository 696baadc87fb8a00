"""The tvmdevice plugin specification: the C Device API as pluggy hookspecs.

This module *is* the contract between the framework and device plugins.
Each hook states its role, its arguments, what it returns, whether it is
``firstresult``, the C function it corresponds to, and who implements it.
``docs/device-api.md`` is generated from these docstrings
(``python -m tvmdevice.docgen``) and a test fails when the two disagree.

How the framework calls these hooks
-----------------------------------
A device plugin owns the device types it returns from
:func:`tvmdevice_device_types`.  For every other hook the framework calls
**only the owning plugin's implementation** for a given device: it resolves
that implementation once per device when the device is created, and calls it
directly on the hot path.  In trace mode (``tvmdevice.tracing``) the same call
goes through pluggy, restricted to the owner, so that observer plugins'
``hookwrapper`` implementations see every call.  Priority between devices
comes from the target string, never from pluggy's registration order.

A plugin that serves several device types receives calls for all of them and
tells them apart by ``device.type.name``.

Required and optional hooks
---------------------------
Hooks marked *Required* must be implemented by every device plugin (the
plugin is refused at load time otherwise).  Hooks marked *Optional* have a
framework default, described in the hook, used when the owner does not
implement them.  The data-space hooks (AllocDataSpace, FreeDataSpace,
CopyDataFromTo) are optional for host-memory devices, whose default is the
framework's host heap (``tvmdevice.memory``), and required for
separate-memory devices.

Errors
------
Hooks signal failure by raising a :class:`tvmdevice.errors.TVMDeviceError`
subclass (each maps to a C ``tvmd_status_t`` code).  Any other exception is
wrapped in :class:`~tvmdevice.errors.TVMDeviceError` naming the plugin, the
device and the hook.  After a failed lifecycle hook the device is *faulted*:
Deactivate, Close and Destroy still work, nothing else does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import pluggy

if TYPE_CHECKING:  # pragma: no cover - imports for annotations only
    from .device import Device
    from .device_type import DeviceType
    from .export import DeviceSources
    from .ir import Graph, Operator
    from .kernel import PreparedCall
    from .ops import OpData
    from .partition import Partition

PROJECT_NAME = "tvmdevice"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

# --------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------


@hookspec
def tvmdevice_device_types() -> Sequence["DeviceType"]:
    """Announce the device types this plugin provides.

    Called once per plugin when it is loaded.  The framework validates every
    record (name, aliases, plugin API version, layout, options) and refuses
    the whole plugin, with a warning naming its distribution, if any record
    is invalid or a name collides with another plugin's.

    :returns: the plugin's :class:`~tvmdevice.device_type.DeviceType` records;
        an empty sequence for observer-only plugins.

    Not ``firstresult``: every plugin answers for itself.

    C: none (registration happens on the host).

    Required.  Implemented by every device plugin.
    """


# --------------------------------------------------------------------------
# Lifecycle: uninitialized -init-> initialized -open-> opened -activate-> active
# --------------------------------------------------------------------------


@hookspec
def tvmdevice_init(device: "Device", options: dict[str, Any]) -> None:
    """Set up the platform device: uninitialized -> initialized.

    Contract: the application is bringing the platform up.  The framework has
    already allocated the device's zeroed, aligned ``tvm_device_<name>_t``
    (``device.handle``); the plugin fills it from the target options.  No
    device memory is available yet.

    :param device: the device being initialized.
    :param options: the device's target options, typed, defaults filled in.
    :returns: nothing.

    Not ``firstresult``.

    C: ``int32_t TVMDevice<Name>Init(tvm_device_<name>_t* device)``

    Required.  Implemented by device plugins.
    """


@hookspec
def tvmdevice_destroy(device: "Device") -> None:
    """Tear the platform device down: initialized -> uninitialized.

    Contract: the reverse of Init; release anything Init acquired.  Only legal
    when the device is closed.  The framework frees the struct afterwards.

    :param device: the device being destroyed.
    :returns: nothing.

    Not ``firstresult``.

    C: ``int32_t TVMDevice<Name>Destroy(tvm_device_<name>_t* device)``

    Required.  Implemented by device plugins.
    """


@hookspec
def tvmdevice_open(device: "Device") -> None:
    """Make device memory available: initialized -> opened.

    Contract: an executor is being instantiated.  After Open, AllocDataSpace
    and CopyDataFromTo work, so the executor can preload constants.  Memory
    allocated after Open persists until Close.

    :param device: the device being opened.
    :returns: nothing.

    Not ``firstresult``.

    C: ``int32_t TVMDevice<Name>Open(tvm_device_<name>_t* device)``

    Required.  Implemented by device plugins.
    """


@hookspec
def tvmdevice_close(device: "Device") -> None:
    """Release the device: opened -> initialized.

    Contract: the executor is destroyed; the device may be released for
    others to use.  Everything allocated since Open is freed: before calling
    the hook the framework frees, through FreeDataSpace/FreeWorkspace/
    FreeStream, whatever the application left allocated, and reports it as a
    :class:`~tvmdevice.errors.LeakWarning`.  Close succeeds in the framework's
    bookkeeping even when the hook raises.

    :param device: the device being closed.
    :returns: nothing.

    Not ``firstresult``.

    C: ``int32_t TVMDevice<Name>Close(tvm_device_<name>_t* device)``

    Required.  Implemented by device plugins.
    """


@hookspec
def tvmdevice_activate(device: "Device") -> None:
    """Get ready to compute with low latency: opened -> active.

    Contract: start of ``run()``; the device leaves any low-power state that
    would hurt inference latency.  Kernels may only be launched while active.

    :param device: the device being activated.
    :returns: nothing.

    Not ``firstresult``.

    C: ``int32_t TVMDevice<Name>Activate(tvm_device_<name>_t* device)``

    Required.  Implemented by device plugins.
    """


@hookspec
def tvmdevice_deactivate(device: "Device") -> None:
    """Compute is finished for now: active -> opened.

    Contract: end of ``run()``; the device may re-enter a low-power state but
    **must keep device memory** (contents survive until the next Activate).

    :param device: the device being deactivated.
    :returns: nothing.

    Not ``firstresult``.

    C: ``int32_t TVMDevice<Name>Deactivate(tvm_device_<name>_t* device)``

    Required.  Implemented by device plugins.
    """


# --------------------------------------------------------------------------
# Device API: device and attributes
# --------------------------------------------------------------------------


@hookspec(firstresult=True)
def tvmdevice_set_device(device: "Device") -> None:
    """Make ``device`` the current device for following calls on this thread.

    :param device: the device to select.
    :returns: nothing.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void DeviceAPI::SetDevice(Device dev)``

    Optional.  Default: nothing to do (single-instance devices).
    """


@hookspec(firstresult=True)
def tvmdevice_get_attr(device: "Device", kind: int) -> Any:
    """Answer a device attribute query.

    :param device: the device asked.
    :param kind: a :class:`tvmdevice.attrs.DeviceAttrKind` value (TVM numbering,
        ``kExist`` = 0 ... ``kImagePitchAlignment`` = 16).
    :returns: the attribute value (int or str), or ``None`` when the attribute
        does not apply to this device ("not applicable", as TVM leaves the
        return value unset).

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void DeviceAPI::GetAttr(Device dev, DeviceAttrKind kind, TVMRetValue* rv)``

    Required.  Implemented by device plugins.
    """


@hookspec(firstresult=True)
def tvmdevice_get_target_property(device: "Device", property: str) -> Any:
    """Answer a target property query (TVM's ``-from_device`` expansion).

    :param device: the device asked.
    :param property: the property name, e.g. ``"mcpu"`` or ``"sram_kb"``.
    :returns: the value, or ``None`` when the device does not know it.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void DeviceAPI::GetTargetProperty(Device dev, const std::string& property, TVMRetValue* rv)``

    Optional.  Default: the device's target option of that name, else ``None``.
    """


@hookspec(firstresult=True)
def tvmdevice_get_data_size(device: "Device", shape: tuple[int, ...], dtype: str,
                            mem_scope: str | None) -> int:
    """Physical bytes needed to store a tensor on this device.

    :param device: the device asked.
    :param shape: tensor shape.
    :param dtype: numpy dtype name, e.g. ``"int8"``.
    :param mem_scope: memory scope, ``None`` or ``"global"`` for plain memory.
    :returns: the size in bytes.
    :raises NotSupportedError: for a memory scope the device does not have.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``size_t DeviceAPI::GetDataSize(const DLTensor& arr, Optional<String> mem_scope)``

    Optional.  Default: element count times element size for the global scope.
    """


# --------------------------------------------------------------------------
# Device API: data space
# --------------------------------------------------------------------------


@hookspec(firstresult=True)
def tvmdevice_alloc_data_space(device: "Device", nbytes: int, alignment: int,
                               type_hint: str | None) -> int:
    """Allocate ``nbytes`` of device memory.

    Only legal while the device is opened or active.  The framework tracks
    the returned pointer (and frees it at Close if the application did not).

    :param device: the device to allocate on.
    :param nbytes: size in bytes (may be 0; the pointer is still unique).
    :param alignment: required alignment in bytes, a power of two.
    :param type_hint: element dtype name, or ``None``.
    :returns: the data pointer: a host address for host-memory devices, a
        device address otherwise.
    :raises DeviceMemoryError: out of memory; the message gives requested,
        free and largest free block.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void* DeviceAPI::AllocDataSpace(Device dev, size_t nbytes, size_t alignment, DLDataType type_hint)``

    Optional for host-memory devices.  Default: a zeroed, aligned block of the device's
    :class:`~tvmdevice.memory.HostHeap` (``tvmdevice.memory.host_heap(device)``), counted in its
    ``bytes_in_use`` and refused beyond the capacity the plugin gave the heap.  Separate-memory
    devices must implement it.
    """


@hookspec(firstresult=True)
def tvmdevice_alloc_data_space_scoped(device: "Device", shape: tuple[int, ...], dtype: str,
                                      mem_scope: str | None) -> int:
    """Allocate memory for a tensor of ``shape``/``dtype`` in a memory scope.

    :param device: the device to allocate on.
    :param shape: tensor shape (``ndim`` is ``len(shape)``).
    :param dtype: numpy dtype name.
    :param mem_scope: memory scope; ``None`` or ``"global"`` for plain memory.
    :returns: the data pointer, as for :func:`tvmdevice_alloc_data_space`.
    :raises NotSupportedError: for a memory scope the device does not have.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void* DeviceAPI::AllocDataSpace(Device dev, int ndim, const int64_t* shape, DLDataType dtype, Optional<String> mem_scope)``

    Optional.  Default: GetDataSize, then AllocDataSpace with 64-byte alignment,
    for the global scope only.
    """


@hookspec(firstresult=True)
def tvmdevice_free_data_space(device: "Device", ptr: int) -> None:
    """Free memory returned by AllocDataSpace.

    The framework has already checked that ``ptr`` is a live allocation of
    this device (double frees and foreign pointers never reach the plugin).
    If the hook raises, the block stays tracked as live: Close calls this
    hook again for it (and reports it as a leak if that fails too), so an
    implementation must accept a second call for a block it failed to free.

    :param device: the owning device.
    :param ptr: the data pointer to free.
    :returns: nothing.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void DeviceAPI::FreeDataSpace(Device dev, void* ptr)``

    Optional for host-memory devices.  Default: returns the block to the device's
    :class:`~tvmdevice.memory.HostHeap`.  Separate-memory devices must implement it.
    """


@hookspec(firstresult=True)
def tvmdevice_copy_data_from_to(device: "Device", src: int, src_offset: int, dst: int,
                                dst_offset: int, nbytes: int, src_device: "Device | None",
                                dst_device: "Device | None", type_hint: str | None,
                                stream: int | None) -> None:
    """Copy ``nbytes`` from ``src + src_offset`` to ``dst + dst_offset``.

    Covers host->device, device->host and device->device.  ``device`` is the
    device responsible for the copy: the one with separate memory if either
    side has it.  The framework has checked both ranges lie inside live
    allocations (or host buffers) before the call.  The copy may be
    asynchronous on ``stream``; StreamSync makes it visible to the host.

    :param device: the device performing the copy.
    :param src: source data pointer.
    :param src_offset: byte offset into ``src``.
    :param dst: destination data pointer.
    :param dst_offset: byte offset into ``dst``.
    :param nbytes: number of bytes.
    :param src_device: the device owning ``src``; ``None`` for plain host memory.
    :param dst_device: the device owning ``dst``; ``None`` for plain host memory.
    :param type_hint: element dtype name, or ``None``.
    :param stream: the stream to order the copy on; ``None`` for the current stream.
    :returns: nothing.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void DeviceAPI::CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset, size_t num_bytes, Device dev_from, Device dev_to, DLDataType type_hint, TVMStreamHandle stream)``

    Optional for host-memory devices.  Default: a synchronous host ``memcpy``.
    Separate-memory devices must implement it.
    """


# --------------------------------------------------------------------------
# Device API: streams
# --------------------------------------------------------------------------


@hookspec(firstresult=True)
def tvmdevice_create_stream(device: "Device") -> int:
    """Create a stream of execution.

    :param device: the device.
    :returns: a non-zero stream handle (0 is the default stream).

    ``firstresult``: the owner's implementation is the only one called.

    C: ``TVMStreamHandle DeviceAPI::CreateStream(Device dev)``

    Optional.  Default: a fresh handle on a synchronous device.
    """


@hookspec(firstresult=True)
def tvmdevice_free_stream(device: "Device", stream: int) -> None:
    """Free a stream created by CreateStream, after finishing its work.

    :param device: the device.
    :param stream: the handle to free.
    :returns: nothing.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void DeviceAPI::FreeStream(Device dev, TVMStreamHandle stream)``

    Optional.  Default: nothing to do on a synchronous device.
    """


@hookspec(firstresult=True)
def tvmdevice_stream_sync(device: "Device", stream: int) -> None:
    """Block until all work queued on ``stream`` has completed.

    :param device: the device.
    :param stream: the stream; 0 is the default stream.
    :returns: nothing.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void DeviceAPI::StreamSync(Device dev, TVMStreamHandle stream)``

    Optional.  Default: nothing to do on a synchronous device.
    """


@hookspec(firstresult=True)
def tvmdevice_set_stream(device: "Device", stream: int) -> None:
    """Make ``stream`` the device's current stream.

    :param device: the device.
    :param stream: the stream handle.
    :returns: nothing.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void DeviceAPI::SetStream(Device dev, TVMStreamHandle stream)``

    Optional.  Default: the framework records the current stream.
    """


@hookspec(firstresult=True)
def tvmdevice_get_current_stream(device: "Device") -> int:
    """The device's current stream.

    :param device: the device.
    :returns: the current stream handle (0 for the default stream).

    ``firstresult``: the owner's implementation is the only one called.

    C: ``TVMStreamHandle DeviceAPI::GetCurrentStream(Device dev)``

    Optional.  Default: the stream last set with SetStream, else 0.
    """


@hookspec(firstresult=True)
def tvmdevice_sync_stream_from_to(device: "Device", event_src: int, event_dst: int) -> None:
    """Order ``event_dst`` after the work queued so far on ``event_src``.

    Work queued on ``event_dst`` after this call starts only when everything
    queued on ``event_src`` before it has completed.

    :param device: the device owning both streams.
    :param event_src: the stream to wait for.
    :param event_dst: the stream that waits.
    :returns: nothing.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void DeviceAPI::SyncStreamFromTo(Device dev, TVMStreamHandle event_src, TVMStreamHandle event_dst)``

    Optional.  Default: nothing to do on a synchronous device.
    """


# --------------------------------------------------------------------------
# Device API: workspace and pointers
# --------------------------------------------------------------------------


@hookspec(firstresult=True)
def tvmdevice_alloc_workspace(device: "Device", nbytes: int, type_hint: str | None) -> int:
    """Allocate temporary scratch memory for a kernel.

    Workspace is allocated and freed in stack order and is the only source
    of kernel scratch memory (kernels never allocate).

    :param device: the device.
    :param nbytes: size in bytes.
    :param type_hint: element dtype name, or ``None``.
    :returns: the data pointer.
    :raises DeviceMemoryError: out of memory.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void* DeviceAPI::AllocWorkspace(Device dev, size_t nbytes, DLDataType type_hint)``

    Optional.  Default: AllocDataSpace with 64-byte alignment (on a host-memory
    device without its own AllocDataSpace: a block of its host heap).
    """


@hookspec(firstresult=True)
def tvmdevice_free_workspace(device: "Device", ptr: int) -> None:
    """Free scratch memory from AllocWorkspace.

    As with FreeDataSpace, a block whose free raised stays tracked and is
    freed again at Close.

    :param device: the device.
    :param ptr: the pointer to free.
    :returns: nothing.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``void DeviceAPI::FreeWorkspace(Device dev, void* ptr)``

    Optional.  Default: FreeDataSpace.
    """


@hookspec(firstresult=True)
def tvmdevice_supports_device_pointer_arithmetics_on_host(device: "Device") -> bool:
    """Whether the host may do arithmetic on this device's data pointers.

    :param device: the device.
    :returns: ``True`` when ``ptr + k`` computed on the host is a valid device
        pointer.

    ``firstresult``: the owner's implementation is the only one called.

    C: ``bool DeviceAPI::SupportsDevicePointerArithmeticsOnHost()``

    Optional.  Default: ``True`` for host-memory devices, ``False`` otherwise.
    """


# --------------------------------------------------------------------------
# Kernels (compile time)
# --------------------------------------------------------------------------


@hookspec(firstresult=True)
def tvmdevice_check_operator(device_type: "DeviceType", options: dict[str, Any],
                             graph: "Graph", op: "Operator", op_data: "OpData | None") -> str | None:
    """Say cheaply whether this device may run ``op``: a pre-filter before prepare.

    Placement asks the devices of a target in order.  A device that passes
    this check is then asked to prepare the operator
    (:func:`tvmdevice_prepare_operator`), which makes the real decision; a
    refusal here only saves that work.  A refusal's reason is shown in the
    placement report.  View operators (RESHAPE, SQUEEZE, EXPAND_DIMS) are
    never asked: they alias their input and run on no device.

    :param device_type: the device type asked.
    :param options: its target options.
    :param graph: the model graph (tensor shapes, dtypes, quantization).
    :param op: the operator.
    :param op_data: the operator's TFLM op data from the operator layer
        (:func:`tvmdevice.ops.analyze`), computed once per operator and shared
        by every device; ``None`` for an operator type the layer does not know.
    :returns: ``None`` to accept; otherwise a short reason for refusing.

    ``firstresult``: the owner's implementation is the only one called.

    C: none (compile time).

    Optional.  Default: accept exactly the operators in ``device_type.operators``: the op
    type for the int8 kernels, ``"<OP>:<variant>"`` for a data-type variant
    (:func:`tvmdevice.ops.kernel_key`, e.g. ``"ADD:int16"``).
    """


@hookspec(firstresult=True)
def tvmdevice_memory_capacity(device_type: "DeviceType", options: dict[str, Any]) -> int | None:
    """Bytes of device memory a compiled model may use on this device.

    Placement keeps what the device holds — preloaded constants, every
    activation buffer of its operators and each call's scratch — within this
    budget, counting every buffer as if all were alive at once, so the memory
    plan always fits: an operator that would overflow it is declined (with
    the figures as the reason) and goes to the next device of the target.
    This is the only place device memory is judged.

    :param device_type: the device type asked.
    :param options: its target options (e.g. ``-sram_kb``).
    :returns: the capacity in bytes, or ``None`` when memory is not a limit
        the device wants placement to respect (host memory).

    ``firstresult``: the owner's implementation is the only one called.

    C: none (compile time).

    Optional.  Default: ``None``.
    """


@hookspec(firstresult=True)
def tvmdevice_workspace_capacity(device_type: "DeviceType", options: dict[str, Any]) -> int | None:
    """The largest scratch (bytes) one call may have on this device.

    Scratch is planned with the rest of memory, in the device's pool; this
    is the device's own limit on one call's share of it (CMSIS-NN's
    ``-scratch_kb``).  Placement declines, with the figures as the reason,
    an operator whose prepared call needs more (``PreparedCall.scratch_bytes``)
    and tries the next device of the target.

    :param device_type: the device type asked.
    :param options: its target options.
    :returns: the limit in bytes, or ``None`` for no limit of its own.

    ``firstresult``: the owner's implementation is the only one called.

    C: none (compile time).

    Optional.  Default: ``None``.
    """


@hookspec(firstresult=True)
def tvmdevice_prepare_operator(device_type: "DeviceType", options: dict[str, Any],
                               graph: "Graph", op: "Operator", op_data: "OpData | None") -> "PreparedCall":
    """Prepare one operator: validate, compute parameters, pick a kernel — or refuse.

    This is placement's decision: placement asks the devices of the target
    in order (those whose :func:`tvmdevice_check_operator` passed) and keeps
    the first prepared call that also fits the device's limits
    (:func:`tvmdevice_workspace_capacity`, :func:`tvmdevice_memory_capacity`).
    It runs at compile time, at most once per operator and device.  Every
    bound a kernel relies on (shapes, strides, buffer sizes, quantization
    parameters) is validated here, so the C kernel never reads or writes
    outside its buffers.

    :param device_type: the device type that accepted ``op``.
    :param options: its target options.
    :param graph: the model graph.
    :param op: the operator.
    :param op_data: the operator's TFLM op data (see
        :func:`tvmdevice_check_operator`); a device adds only its own packing
        and limits to it.
    :returns: a :class:`~tvmdevice.kernel.PreparedCall`.
    :raises NotSupportedError: (``Refusal`` or any subclass) when this device
        cannot run the operator with these parameters: a refusal, recorded
        in the placement report with the operator, the device and the
        reason; the next device of the target is tried.

    ``firstresult``: the owner's implementation is the only one called.

    C: none (compile time); the returned kernel is a ``tvmd_kernel_t``.

    Required for devices that declare operators.
    """


@hookspec(firstresult=True)
def tvmdevice_prepare_partition(device_type: "DeviceType", options: dict[str, Any], graph: "Graph",
                                partition: "Partition") -> "PreparedCall":
    """Compile one partition — consecutive operators — into one call, or refuse.

    Asked only of a device that declares ``compiles_partitions`` (an NPU whose
    compiler takes whole subgraphs).  Placement groups, in execution order,
    the operators that pass this device's :func:`tvmdevice_check_operator`
    (view operators between two of them join) into a
    :class:`~tvmdevice.partition.Partition` and asks for one prepared call for
    all of them, at compile time, once per partition.  Its tensors that no
    operator outside reads stay inside the call (in its scratch); the memory
    plan holds the partition's inputs, outputs and scratch.  Every bound the C
    relies on is validated here.

    :param device_type: the device type whose check accepted every operator.
    :param options: its target options.
    :param graph: the model graph.
    :param partition: the operators, and the tensors crossing the partition's edge.
    :returns: a :class:`~tvmdevice.kernel.PreparedCall` whose buffers are the
        partition's inputs in order, then its outputs, then its scratch
        (``scratch_bytes``); its ``details`` are shown by ``tvmdevice info``.
    :raises NotSupportedError: (``Refusal`` or any subclass) when the device
        cannot compile it: recorded in the placement report for each of the
        operators, which are then offered one by one to the next devices.

    ``firstresult``: the owner's implementation is the only one called.

    C: none (compile time); the returned kernel is a ``tvmd_kernel_t``.

    Required for devices that declare ``compiles_partitions``.
    """


@hookspec(firstresult=True)
def tvmdevice_prepare_copy(device_type: "DeviceType", options: dict[str, Any], nbytes: int,
                           to_device: bool) -> "PreparedCall | None":
    """A C kernel for one copy step of a run between host memory and the device's memory, or None.

    The executor asks once per copy step of the schedule, when it binds the
    plan.  A device with separate memory returns a call whose C kernel does
    the whole copy synchronously — what CopyDataFromTo followed by
    StreamSync of the default stream does, with the same effect on the
    device's state — so a run whose every step is C runs in C (the run
    loop calls it as ``fn(params, buffers, device)`` with ``buffers`` =
    ``{src, dst}``: a host pointer and a device address).

    :param device_type: the device type whose memory is one side of the copy.
    :param options: its target options.
    :param nbytes: the bytes every run copies (fixed by the plan; may be put in the params).
    :param to_device: ``True`` host -> device, ``False`` device -> host.
    :returns: a :class:`~tvmdevice.kernel.PreparedCall` with a C kernel, or
        ``None``: each run calls :func:`tvmdevice_copy_data_from_to` and
        :func:`tvmdevice_stream_sync` instead.

    ``firstresult``: the owner's implementation is the only one called.

    C: none (bind time); the returned kernel is a ``tvmd_kernel_t``.

    Optional.  Default: ``None``.
    """


# --------------------------------------------------------------------------
# Export (firmware)
# --------------------------------------------------------------------------


@hookspec(firstresult=True)
def tvmdevice_export_sources(device_type: "DeviceType", options: dict[str, Any],
                             cpu: str, calls: "Sequence[PreparedCall]") -> "DeviceSources | None":
    """The C a device contributes to a model exported for ``cpu``.

    ``tvmdevice export`` (:meth:`~tvmdevice.aot.compiler.CompiledModule.export`)
    asks every device of the target once per CPU it builds for.  The result
    names the device's portable C sources and include folders (shipped in the
    plugin's wheel), its generated headers (``tvm_device_<name>.h``, params
    structs), the defines and flags for that CPU, and which parts of the C
    Device API the sources define (lifecycle, separate-memory functions, a
    configure function run after Init).  See
    :class:`~tvmdevice.export.DeviceSources` for the C contract.

    Name all of the device's C: the export builds, for each CPU, only the
    sources whose non-static definitions the model's calls reach once that
    CPU's preprocessor has removed the other instruction sets' code, and ships
    only those and the headers they include (``tvmdevice.export.select``).
    How the C is split into files does not matter.

    :param device_type: the device type being exported.
    :param options: its target options.
    :param cpu: one of :data:`~tvmdevice.export.EXPORT_CPUS` (``"host"``,
        ``"cortex-m55"``, ``"cortex-m4"``, ``"cortex-m3"``).
    :param calls: the prepared calls the exported model makes on this device
        (:class:`~tvmdevice.kernel.PreparedCall`, in operator order), so the
        device can size what its C keeps outside the memory plan for this model
        (see :class:`~tvmdevice.export.StaticMemory`).
    :returns: a :class:`~tvmdevice.export.DeviceSources`, or ``None`` when the
        device cannot be exported for ``cpu`` (the export then fails, naming
        the device and the operators placed on it).

    ``firstresult``: the owner's implementation is the only one called.

    C: none (export time).

    Optional.  Default: ``None`` (the device does not export).
    """

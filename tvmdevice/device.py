"""Device instances: the lifecycle state machine and the checked Device API.

A :class:`Device` is one instance of a :class:`~tvmdevice.device_type.DeviceType`
with its target options.  It owns the zeroed, aligned ``tvm_device_<name>_t``
storage (``handle``), enforces the lifecycle (:mod:`tvmdevice.lifecycle`),
validates every Device API call before the plugin sees it, tracks
allocations and streams, and frees what is left at Close.

The plugin's implementations are resolved once, when the device is created
(:mod:`tvmdevice.binding`), and called directly: no pluggy dispatch per call
unless the device was created in trace mode.
"""

from __future__ import annotations

import operator
import warnings
from typing import TYPE_CHECKING, Any, Callable

from .attrs import DeviceAttrKind
from .binding import plugin_function
from .device_type import DeviceType, MemoryKind
from .errors import (
    DeviceMemoryError,
    InvalidArgumentError,
    LeakWarning,
    LifecycleError,
    NotSupportedError,
    TVMDeviceError,
)
from .lifecycle import DOWNWARD, TRANSITIONS, State, Transition
from .memory import Allocation, address_of, aligned_empty, check_alignment
from .teardown import Steps, deferred_interrupts

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .binding import Binding

# numpy is imported lazily (first use): `import tvmdevice` plus plugin
# discovery must stay cheap, and only devices that move data need it.

__all__ = ["Device", "HOST_MEMORY"]

#: Marker for "plain host memory" as the source or destination of a copy.
HOST_MEMORY = None

#: Alignment of the device struct storage (cache line; covers any C type).
STRUCT_ALIGNMENT = 64


class Device:
    """One device instance.

    Create devices through :meth:`tvmdevice.registry.Registry.create_device`
    (or a :class:`~tvmdevice.target.Target`), not directly.

    :ivar type: the :class:`DeviceType`.
    :ivar options: typed target options, defaults filled in.
    :ivar state: the current :class:`~tvmdevice.lifecycle.State`.
    :ivar faulted: set after a failed lifecycle hook; only the way down is open.
    :ivar handle: the ``tvm_device_<name>_t`` storage (a uint8 numpy view).
    :ivar plugin_state: a dict the owning plugin may use for Python-side state.
    """

    def __init__(self, device_type: DeviceType, options: dict[str, Any], binding: "Binding",
                 *, device_id: int = 0) -> None:
        self.type = device_type
        self.options = dict(options)
        self.device_id = device_id
        self.state = State.UNINITIALIZED
        self.faulted = False
        self.handle = aligned_empty(device_type.layout.size, max(STRUCT_ALIGNMENT, device_type.layout.alignment))
        self._handle_address = address_of(self.handle)
        self.plugin_state: dict[str, Any] = {}
        self.allocations: dict[int, Allocation] = {}
        self.streams: set[int] = set()
        self.current_stream = 0
        self.leaked: list[Allocation | int] = []
        self._fields: dict[str, "np.ndarray"] | None = None
        self._binding = binding
        binding.bind(self)
        self.get_current_stream = _checked_getter(self, "tvmdevice_get_current_stream")  # type: ignore[method-assign]

    # ------------------------------------------------------------------ naming
    @property
    def name(self) -> str:
        return self.type.name

    @property
    def fields(self) -> dict[str, "np.ndarray"]:
        """numpy views of the struct's members (``device.fields["active"][0] = 1``), built once.

        Writes go straight into the ``tvm_device_<name>_t`` the C side sees.
        """
        if self._fields is None:
            from .layout import struct_view

            self._fields = struct_view(self.type.layout, self.handle)
        return self._fields

    @property
    def handle_address(self) -> int:
        """Address of the ``tvm_device_<name>_t`` struct: the ``resource_handle`` (fixed for the device's life)."""
        return self._handle_address

    @property
    def memory(self) -> MemoryKind:
        return self.type.memory

    def __repr__(self) -> str:
        flag = ", faulted" if self.faulted else ""
        return f"<Device {self.name}:{self.device_id} {self.state.value}{flag}>"

    # --------------------------------------------------------------- lifecycle
    def init(self) -> None:
        """Init: uninitialized -> initialized (see ``tvmdevice_init``)."""
        self._transition(Transition.INIT, self._binding.hook("tvmdevice_init"), self.options)

    def open(self) -> None:
        """Open: initialized -> opened; device memory becomes available."""
        self._transition(Transition.OPEN, self._binding.hook("tvmdevice_open"))

    def activate(self) -> None:
        """Activate: opened -> active; kernels may run."""
        self._transition(Transition.ACTIVATE, self._binding.hook("tvmdevice_activate"))

    def deactivate(self) -> None:
        """Deactivate: active -> opened; device memory is kept."""
        self._transition(Transition.DEACTIVATE, self._binding.hook("tvmdevice_deactivate"))

    def close(self) -> None:
        """Close: opened -> initialized; frees (and reports) anything left allocated.

        The Close hook runs even if freeing the leftovers was interrupted.
        """
        self._check_transition(Transition.CLOSE)
        steps = Steps(f"closing device {self.name!r}")
        steps.run(self._free_leftovers)
        steps.run(self._release_orphans)
        steps.run(self._transition, Transition.CLOSE, self._binding.hook("tvmdevice_close"))
        steps.raise_errors()

    def destroy(self) -> None:
        """Destroy: initialized -> uninitialized."""
        self._transition(Transition.DESTROY, self._binding.hook("tvmdevice_destroy"))
        self.handle[:] = 0  # the struct is released; a later Init sees it zeroed

    def release(self) -> None:
        """Walk the device down to uninitialized from wherever it is.

        Every step runs even after an earlier one failed (a failed hook still
        moves the device down, see :mod:`tvmdevice.lifecycle`), and Ctrl-C is
        held back until the device is uninitialized.  Then what failed is
        raised: one error as itself, several as a
        :class:`~tvmdevice.errors.TeardownError`, an interrupt before both.
        """
        with deferred_interrupts():
            steps = Steps(f"releasing device {self.name!r}")
            for state, step in ((State.ACTIVE, self.deactivate), (State.OPENED, self.close),
                                (State.INITIALIZED, self.destroy)):
                if self.state is state:
                    steps.run(step)
            steps.raise_errors()

    def _check_transition(self, transition: Transition) -> None:
        source, _ = TRANSITIONS[transition]
        if self.state is not source:
            raise LifecycleError(
                f"device {self.name!r}: cannot {transition.value} in state {self.state.value!r} "
                f"(only from {source.value!r})"
            )
        if self.faulted and transition not in DOWNWARD:
            raise LifecycleError(
                f"device {self.name!r} is faulted after a failed hook; only deactivate, close and "
                f"destroy are allowed now"
            )

    def _transition(self, transition: Transition, hook: Callable[..., Any], *args: Any) -> None:
        self._check_transition(transition)
        try:
            hook(*args)
        except BaseException as exc:
            raise self._transition_failed(transition, exc) from exc
        _, target = TRANSITIONS[transition]
        self.state = target
        if target is State.UNINITIALIZED:
            self.faulted = False

    def _transition_failed(self, transition: Transition, exc: BaseException) -> BaseException:
        """Record that ``transition``'s hook failed with ``exc``; the error to raise (``raise ... from exc``).

        The device moves to the transition's target state, faulted (see :mod:`tvmdevice.lifecycle`).
        Also called by the executor when it made the call itself (a C lifecycle called from its run loop).
        """
        _, target = TRANSITIONS[transition]
        self.state = target
        # Back at uninitialized there is nothing left to release: a new
        # Init starts from a fresh, zeroed struct.
        self.faulted = target is not State.UNINITIALIZED
        if not self.faulted:
            self.handle[:] = 0
        return self._wrap(exc, transition.hook_name)

    def _free_leftovers(self) -> None:
        """Free every block and stream still tracked, then report them (LeakWarning).

        Each one is freed through its hook and dropped from tracking whether
        or not the hook succeeds: after Close the device owns no memory, and
        a hook that failed is named in the report.  Interrupts raised by a
        hook are re-raised once everything is released.
        """
        leftovers = list(self.allocations.values())
        streams = sorted(self.streams)
        if not leftovers and not streams:
            return
        self.leaked.extend(leftovers)
        self.leaked.extend(streams)
        steps = Steps(f"freeing the leftovers of device {self.name!r}")
        failures: list[str] = []
        for alloc in leftovers:
            hook = "tvmdevice_free_workspace" if alloc.kind == "workspace" else "tvmdevice_free_data_space"
            failures += self._force_free(steps, hook, alloc.ptr, f"{alloc.kind} block {alloc.ptr:#x}")
            self.allocations.pop(alloc.ptr, None)
        for stream in streams:
            failures += self._force_free(steps, "tvmdevice_free_stream", stream, f"stream {stream}")
            self.streams.discard(stream)
        self.current_stream = 0
        # Warn only now: under `-W error` a warning is an exception, and it must
        # not stop the release half-way.
        steps.run(self._report_leftovers, leftovers, streams, failures)
        steps.raise_errors()

    def _release_orphans(self) -> None:
        """Release what the framework's own host heap still holds after every tracked block was freed.

        Such a block was handed out by an allocation call that then failed
        (so it was never tracked).  Only the framework's heap is the
        framework's to clear: a plugin's own memory is the plugin's business
        at Close.
        """
        heap = self.plugin_state.get("heap")
        if heap is None or not len(heap) or not self._binding.is_default("tvmdevice_alloc_data_space"):
            return
        blocks, nbytes = len(heap), heap.bytes_in_use
        heap.clear()
        warnings.warn(f"device {self.name!r}: {blocks} host block(s), {nbytes} B, handed out by an allocation "
                      f"that then failed were never tracked; released at Close", LeakWarning, stacklevel=2)

    def _force_free(self, steps: Steps, hook: str, handle: int, what: str) -> list[str]:
        """Free one leftover through ``hook``: a failure is returned for the report, an interrupt kept."""
        try:
            self._binding.hook(hook)(handle)
        except Exception as exc:  # noqa: BLE001 - a broken free must not block Close
            return [f"device {self.name!r}: freeing leaked {what} failed ({type(exc).__name__}: {exc}); "
                    f"the framework dropped it, plugin {self._binding.owner_name!r} may still hold it"]
        except BaseException as exc:  # noqa: BLE001 - re-raised once every leftover is released
            steps.errors.append(exc)
        return []

    def _report_leftovers(self, leftovers: list[Allocation], streams: list[int], failures: list[str]) -> None:
        described = ", ".join(f"{a.kind} {a.nbytes} B at {a.ptr:#x}" for a in leftovers)
        if streams:
            described += (", " if described else "") + f"{len(streams)} stream(s)"
        warnings.warn(f"device {self.name!r} closed with {described} still allocated; freed by the framework",
                      LeakWarning, stacklevel=2)
        for failure in failures:
            warnings.warn(failure, LeakWarning, stacklevel=2)

    def _require(self, *states: State, what: str) -> None:
        if self.faulted:
            raise LifecycleError(f"device {self.name!r} is faulted after a failed hook; {what} is refused, "
                                 f"only deactivate, close and destroy are allowed now")
        if self.state not in states:
            allowed = " or ".join(repr(s.value) for s in states)
            raise LifecycleError(f"device {self.name!r}: {what} needs the device {allowed}, "
                                 f"it is {self.state.value!r}")

    def _wrap(self, exc: BaseException, hook: str) -> BaseException:
        """What a hook's exception becomes: a TVMDeviceError naming plugin, device and hook."""
        if isinstance(exc, TVMDeviceError):
            return exc
        if not isinstance(exc, Exception):
            return exc  # KeyboardInterrupt and friends pass through untouched
        plugin = self._binding.owner_name
        if isinstance(exc, MemoryError):
            # A plugin whose backing store is host memory may run out of it.
            return DeviceMemoryError(f"plugin {plugin!r}, device {self.name!r}: {hook} ran out of "
                                     f"host memory ({exc or 'MemoryError'})")
        return TVMDeviceError(f"plugin {plugin!r}, device {self.name!r}: {hook} raised "
                              f"{type(exc).__name__}: {exc}")

    # ----------------------------------------------------- device & attributes
    def set_device(self) -> None:
        """SetDevice."""
        self._call("tvmdevice_set_device")

    def get_attr(self, kind: DeviceAttrKind | int) -> Any:
        """GetAttr; ``None`` means not applicable to this device."""
        try:
            kind = DeviceAttrKind(kind)
        except ValueError:
            raise InvalidArgumentError(f"unknown DeviceAttrKind {kind!r}") from None
        if kind is DeviceAttrKind.kExist:
            # Existence is answered by the plugin too, but a plugin must never
            # claim a device that was not initialized exists.
            if self.state is State.UNINITIALIZED:
                return 0
        return self._call("tvmdevice_get_attr", int(kind))

    def get_target_property(self, property: str) -> Any:
        """GetTargetProperty; ``None`` when unknown."""
        return self._call("tvmdevice_get_target_property", property)

    def get_data_size(self, shape: tuple[int, ...], dtype: str, mem_scope: str | None = None) -> int:
        """GetDataSize."""
        shape = _check_shape(shape)
        return int(self._call("tvmdevice_get_data_size", shape, _dtype_name(dtype), mem_scope))

    # -------------------------------------------------------------- data space
    def alloc_data_space(self, nbytes: int, alignment: int = 64, type_hint: str | None = None) -> int:
        """AllocDataSpace (flat form); returns the data pointer."""
        self._require(State.OPENED, State.ACTIVE, what="AllocDataSpace")
        nbytes = _check_nbytes(nbytes)
        alignment = check_alignment(alignment)
        ptr = int(self._call("tvmdevice_alloc_data_space", nbytes, alignment, type_hint))
        return self._track(ptr, nbytes, alignment, "data", type_hint)

    def alloc_data_space_scoped(self, shape: tuple[int, ...], dtype: str, mem_scope: str | None = None) -> int:
        """AllocDataSpace (shaped form with memory scope)."""
        self._require(State.OPENED, State.ACTIVE, what="AllocDataSpace")
        shape = _check_shape(shape)
        dtype = _dtype_name(dtype)
        nbytes = self.get_data_size(shape, dtype, mem_scope)
        if self._binding.is_default("tvmdevice_alloc_data_space_scoped"):
            # The default goes through the checked flat form, which tracks it.
            if mem_scope not in (None, "global"):
                raise NotSupportedError(f"device {self.name!r} has no memory scope {mem_scope!r}")
            return self.alloc_data_space(nbytes, 64, dtype)
        ptr = int(self._call("tvmdevice_alloc_data_space_scoped", shape, dtype, mem_scope))
        return self._track(ptr, nbytes, 64, "data", dtype)

    def free_data_space(self, ptr: int) -> None:
        """FreeDataSpace; double frees and foreign pointers are errors.

        The block stays tracked until the hook succeeds: if it fails, Close
        frees the block again and reports it.
        """
        self._tracked(ptr, "data", "FreeDataSpace")
        self._call("tvmdevice_free_data_space", ptr)
        del self.allocations[ptr]

    def alloc_workspace(self, nbytes: int, type_hint: str | None = None) -> int:
        """AllocWorkspace: scratch memory for kernels."""
        self._require(State.OPENED, State.ACTIVE, what="AllocWorkspace")
        nbytes = _check_nbytes(nbytes)
        ptr = int(self._call("tvmdevice_alloc_workspace", nbytes, type_hint))
        return self._track(ptr, nbytes, 1, "workspace", type_hint)

    def free_workspace(self, ptr: int) -> None:
        """FreeWorkspace; tracked until the hook succeeds, as for :meth:`free_data_space`."""
        self._tracked(ptr, "workspace", "FreeWorkspace")
        self._call("tvmdevice_free_workspace", ptr)
        del self.allocations[ptr]

    def supports_device_pointer_arithmetics_on_host(self) -> bool:
        """SupportsDevicePointerArithmeticsOnHost."""
        return bool(self._call("tvmdevice_supports_device_pointer_arithmetics_on_host"))

    def _track(self, ptr: int, nbytes: int, alignment: int, kind: str, type_hint: str | None) -> int:
        if ptr in self.allocations:
            raise DeviceMemoryError(f"plugin {self._binding.owner_name!r} returned pointer {ptr:#x} "
                                    f"that is already allocated on device {self.name!r}")
        if alignment > 1 and ptr % alignment:
            raise DeviceMemoryError(f"plugin {self._binding.owner_name!r} returned pointer {ptr:#x} "
                                    f"not aligned to {alignment} bytes")
        self.allocations[ptr] = Allocation(ptr, nbytes, alignment, kind, type_hint)
        return ptr

    def _tracked(self, ptr: int, kind: str, what: str) -> Allocation:
        """The live allocation ``ptr`` of ``kind``; anything else is refused before the plugin sees it."""
        alloc = self.allocations.get(ptr)
        if alloc is None:
            raise DeviceMemoryError(f"device {self.name!r}: {what} of {ptr:#x}, which is not a live "
                                    f"allocation of this device (double free or foreign pointer)")
        if alloc.kind != kind:
            raise DeviceMemoryError(f"device {self.name!r}: {what} of {ptr:#x}, which is a {alloc.kind} "
                                    f"allocation")
        return alloc

    def find_allocation(self, ptr: int, nbytes: int) -> Allocation | None:
        """The live allocation containing ``[ptr, ptr + nbytes)``, if any."""
        alloc = self.allocations.get(ptr)
        if alloc is not None and alloc.contains(ptr, nbytes):
            return alloc
        for alloc in self.allocations.values():
            if alloc.contains(ptr, nbytes):
                return alloc
        return None

    # ------------------------------------------------------------------ copies
    def copy_data_from_to(self, src: "int | np.ndarray", src_offset: int, dst: "int | np.ndarray",
                          dst_offset: int, nbytes: int, src_device: "Device | None",
                          dst_device: "Device | None", type_hint: str | None = None,
                          stream: int | None = None) -> None:
        """CopyDataFromTo with byte offsets; either side may be a numpy array (host memory).

        The copy is performed by whichever side has separate memory (or by
        this device when both are host memory); both byte ranges are checked.
        """
        nbytes = _check_nbytes(nbytes)
        src_ptr = _resolve_side(src, src_offset, nbytes, src_device, "source")
        dst_ptr = _resolve_side(dst, dst_offset, nbytes, dst_device, "destination")
        if _is_array(dst) and not dst.flags.writeable:  # type: ignore[union-attr]
            raise InvalidArgumentError("copy destination array is read-only")
        performer = _copy_performer(self, src_device, dst_device)
        performer._require(State.OPENED, State.ACTIVE, what="CopyDataFromTo")
        if stream is not None and stream != 0 and stream not in performer.streams:
            raise InvalidArgumentError(f"device {performer.name!r}: unknown stream {stream}")
        performer._call("tvmdevice_copy_data_from_to", src_ptr - src_offset, src_offset,
                        dst_ptr - dst_offset, dst_offset, nbytes, src_device, dst_device,
                        type_hint, stream)

    def upload(self, array: "np.ndarray", ptr: int, offset: int = 0, stream: int | None = None) -> None:
        """Copy a host array into this device's memory at ``ptr + offset``."""
        import numpy as np

        array = np.ascontiguousarray(array)
        self.copy_data_from_to(array, 0, ptr, offset, array.nbytes, HOST_MEMORY, self,
                               array.dtype.name, stream)

    def download(self, ptr: int, out: "np.ndarray", offset: int = 0, stream: int | None = None) -> "np.ndarray":
        """Copy ``out.nbytes`` from ``ptr + offset`` into the host array ``out`` (synchronised)."""
        if not out.flags.c_contiguous:
            raise InvalidArgumentError("download target must be a C-contiguous array")
        self.copy_data_from_to(ptr, offset, out, 0, out.nbytes, self, HOST_MEMORY, out.dtype.name, stream)
        # A copy with no stream goes to the current one, so that is what must finish.
        self.stream_sync(stream if stream is not None else self.get_current_stream())
        return out

    # ----------------------------------------------------------------- streams
    def create_stream(self) -> int:
        """CreateStream; returns a non-zero handle."""
        self._require(State.OPENED, State.ACTIVE, what="CreateStream")
        stream = int(self._call("tvmdevice_create_stream"))
        if stream == 0 or stream in self.streams:
            raise TVMDeviceError(f"plugin {self._binding.owner_name!r} returned an invalid stream handle {stream}")
        self.streams.add(stream)
        return stream

    def free_stream(self, stream: int) -> None:
        """FreeStream."""
        self._check_stream(stream, allow_default=False)
        self._call("tvmdevice_free_stream", stream)
        self.streams.discard(stream)
        if self.current_stream == stream:
            self.current_stream = 0

    def stream_sync(self, stream: int = 0) -> None:
        """StreamSync."""
        self._check_stream(stream)
        self._call("tvmdevice_stream_sync", stream)

    def set_stream(self, stream: int) -> None:
        """SetStream."""
        self._check_stream(stream)
        self._call("tvmdevice_set_stream", stream)
        self.current_stream = stream

    def get_current_stream(self) -> int:
        """GetCurrentStream.  (Replaced per instance by a faster checked call, see :func:`_checked_getter`.)"""
        return int(self._call("tvmdevice_get_current_stream"))

    def sync_stream_from_to(self, event_src: int, event_dst: int) -> None:
        """SyncStreamFromTo: work queued on ``event_dst`` waits for ``event_src``."""
        self._check_stream(event_src)
        self._check_stream(event_dst)
        self._call("tvmdevice_sync_stream_from_to", event_src, event_dst)

    def _check_stream(self, stream: int, allow_default: bool = True) -> None:
        if stream == 0 and allow_default:
            return
        if stream not in self.streams:
            raise InvalidArgumentError(f"device {self.name!r}: unknown stream {stream!r}")

    # --------------------------------------------------------------- dispatch
    def _call(self, hook: str, *args: Any) -> Any:
        try:
            return self._binding.hook(hook)(*args)
        except TVMDeviceError:
            raise
        except Exception as exc:
            raise self._wrap(exc, hook) from exc


def _checked_getter(device: Device, hook: str) -> Callable[[], Any]:
    """``device``'s ``hook`` as a no-argument call for a hot getter, its errors wrapped like every hook's.

    The implementation is bound once; when it is ``partial(fn, device)`` the
    partial is skipped, so the call costs what the raw implementation did
    while a plugin's exception still comes out naming the plugin, the
    device and the hook.
    """
    bound = device._binding.hook(hook)
    fn = plugin_function(bound, device)
    if fn is not None:

        def call_fn() -> Any:
            try:
                return fn(device)
            except TVMDeviceError:
                raise
            except Exception as exc:
                raise device._wrap(exc, hook) from exc

        return call_fn

    def call_bound() -> Any:
        try:
            return bound()
        except TVMDeviceError:
            raise
        except Exception as exc:
            raise device._wrap(exc, hook) from exc

    return call_bound


def _as_index(value: Any) -> int | None:
    """``value`` as an int if it is an integer (Python or numpy), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _is_array(value: Any) -> bool:
    return hasattr(value, "__array_interface__") and hasattr(value, "flags")


def _dtype_name(dtype: Any) -> str:
    import numpy as np

    try:
        return np.dtype(dtype).name
    except TypeError:
        raise InvalidArgumentError(f"unknown dtype {dtype!r}") from None


def _check_nbytes(nbytes: int) -> int:
    n = _as_index(nbytes)
    if n is None or n < 0:
        raise InvalidArgumentError(f"byte count must be a non-negative int, got {nbytes!r}")
    return n


def _check_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    try:
        out = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"shape must be a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise InvalidArgumentError(f"shape has a negative dimension: {out}")
    return out


def _resolve_side(side: "int | np.ndarray", offset: int, nbytes: int, owner: "Device | None", what: str) -> int:
    """Pointer to the first byte of one side of a copy, after checking the range."""
    if _as_index(offset) is None or offset < 0:
        raise InvalidArgumentError(f"{what} offset must be a non-negative int, got {offset!r}")
    if not isinstance(side, int) and _is_array(side):
        if owner is not None and owner.memory is not MemoryKind.HOST:
            raise InvalidArgumentError(f"{what} is a host array but its device {owner.name!r} has separate memory")
        if not side.flags.c_contiguous:
            raise InvalidArgumentError(f"{what} array must be C-contiguous")
        if offset + nbytes > side.nbytes:
            raise InvalidArgumentError(f"{what} range [{offset}, {offset + nbytes}) exceeds the array's "
                                       f"{side.nbytes} bytes")
        return address_of(side) + offset
    if owner is None:
        raise InvalidArgumentError(f"{what} is a raw pointer with no owning device; pass a numpy array "
                                   f"for plain host memory")
    ptr = int(side) + offset
    if owner.find_allocation(ptr, nbytes) is None:
        raise InvalidArgumentError(f"{what} range {ptr:#x}+{nbytes} is not inside a live allocation of "
                                   f"device {owner.name!r}")
    return ptr


def _copy_performer(caller: Device, src: Device | None, dst: Device | None) -> Device:
    separate = [d for d in (src, dst) if d is not None and d.memory is MemoryKind.SEPARATE]
    if len({id(d) for d in separate}) > 1:
        raise NotSupportedError(f"copy between two separate-memory devices ({separate[0].name!r} -> "
                                f"{separate[1].name!r}); stage it through host memory")
    return separate[0] if separate else caller

"""The device lifecycle state machine (from the C Device API discussion).

::

    uninitialized --init--> initialized --open--> opened --activate--> active
          ^                      |   ^                 ^                  |
          +------destroy---------+   +------close------+<---deactivate----+

A transition is legal only from its source state.  A failed hook still moves
the device to the transition's target state in the framework's bookkeeping
but marks it *faulted*: from then on only the way down (Deactivate, Close,
Destroy) is open, so the application can always release the device.  Going
down never stops half-way: every step runs even after one failed, and the
errors are raised together afterwards (:mod:`tvmdevice.teardown`).
"""

from __future__ import annotations

import enum

__all__ = ["State", "Transition", "TRANSITIONS", "DOWNWARD"]


class State(str, enum.Enum):
    UNINITIALIZED = "uninitialized"
    INITIALIZED = "initialized"
    OPENED = "opened"
    ACTIVE = "active"


class Transition(str, enum.Enum):
    INIT = "init"
    DESTROY = "destroy"
    OPEN = "open"
    CLOSE = "close"
    ACTIVATE = "activate"
    DEACTIVATE = "deactivate"

    @property
    def hook_name(self) -> str:
        return f"tvmdevice_{self.value}"

    @property
    def c_suffix(self) -> str:
        return self.value.capitalize()


#: transition -> (source state, target state)
TRANSITIONS: dict[Transition, tuple[State, State]] = {
    Transition.INIT: (State.UNINITIALIZED, State.INITIALIZED),
    Transition.OPEN: (State.INITIALIZED, State.OPENED),
    Transition.ACTIVATE: (State.OPENED, State.ACTIVE),
    Transition.DEACTIVATE: (State.ACTIVE, State.OPENED),
    Transition.CLOSE: (State.OPENED, State.INITIALIZED),
    Transition.DESTROY: (State.INITIALIZED, State.UNINITIALIZED),
}

#: The transitions still allowed on a faulted device.
DOWNWARD = frozenset({Transition.DEACTIVATE, Transition.CLOSE, Transition.DESTROY})

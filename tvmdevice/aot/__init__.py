"""The AOT layer: import a model, place its operators, plan memory, run it.

``tvmdevice.compile(model, target=...)`` returns a :class:`CompiledModule`;
``module.executor()`` opens the devices and is the context in which
``run(inputs)`` executes the plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .compiler import CompiledModule, compile  # noqa: F401
    from .executor import Executor  # noqa: F401

__all__ = ["compile", "CompiledModule", "Executor", "default_target"]


def __getattr__(name: str) -> Any:
    if name in ("compile", "CompiledModule", "default_target"):
        from . import compiler

        return getattr(compiler, name)
    if name == "Executor":
        from .executor import Executor

        return Executor
    raise AttributeError(f"module 'tvmdevice.aot' has no attribute {name!r}")

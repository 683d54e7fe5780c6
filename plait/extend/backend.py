"""``plait.extend.backend``: the PJRT client plait runs on, as ``jax.extend.backend``.

plait has one backend, jaxlib's CPU client, created on first use."""

from typing import Any

from plait.lowering import runtime

__all__ = ["backends", "get_backend", "get_default_device"]


def get_backend(platform: Any = None) -> Any:
    """The PJRT client of ``platform`` (``None`` or ``'cpu'``): jaxlib's CPU client, whose
    ``platform`` is ``'cpu'``.

    Raises:
      RuntimeError: another platform: plait runs on the CPU only.
    """
    if platform not in (None, "cpu"):
        raise RuntimeError(f"get_backend: expected None or 'cpu', but got {platform!r}: plait "
                           "runs on the CPU only")
    return runtime.client()


def backends() -> dict[str, Any]:
    """Every backend by platform name: ``{'cpu': client}``."""
    return {"cpu": runtime.client()}


def get_default_device() -> Any:
    """The device computations run on when none is given (this process's first)."""
    return runtime.default_device()

"""``plait.extend.ifrt_programs``: jaxlib's IFRT program builders, as
``jax.extend.ifrt_programs`` serves them (runtimes with plugin programs use them; the
CPU runtime plait runs on has none)."""

from jaxlib._jax import ifrt_programs as ifrt_programs

__all__ = ["ifrt_programs"]

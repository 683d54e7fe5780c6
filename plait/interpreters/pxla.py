"""``plait.interpreters.pxla``: JAX's module of SPMD internals (``jax.interpreters.pxla``).
plait partitions programs by its own lowering (see ``docs/scaling.md``) and serves none of
pxla's names: the module exists for code that imports it and uses its names only on
runtimes plait does not run on (orbax's Pathways support)."""

__all__: list[str] = []

"""``plait.experimental.sparse``'s implementation: BCOO sparse arrays, as JAX 0.10.2's
``jax.experimental.sparse``.  The public facade is :mod:`plait.experimental.sparse`.

Bottom to top: :mod:`.layout` (the buffers and their checks), :mod:`.convert`
(dense to sparse and back, index bookkeeping), :mod:`.restructure` (transposes,
reductions, reshapes, layouts), :mod:`.products` (contractions and elementwise
products), :mod:`.sparsify` (the interpreter and its sparse rules), :mod:`.bcoo` (the
``BCOO`` class and ``sparsify``), :mod:`.operations` (the remaining public functions).
Every operation is a composition of ``plait.numpy``/``plait.lax`` functions, so the
transformations apply to it; only ``todense_p``, the marker ``sparse.todense`` leaves in
a traced function, is a primitive.
"""

"""``plait.experimental.sparse``'s implementation: sparse arrays (BCOO, BCSR, COO, CSR,
CSC), as JAX 0.10.2's ``jax.experimental.sparse``.  The public facade is
:mod:`plait.experimental.sparse`.

Bottom to top: :mod:`.base` (``JAXSparse``, the base class of every format),
:mod:`.layout` (the BCOO buffers and their checks), :mod:`.convert` (dense to sparse and
back, index bookkeeping), :mod:`.restructure` (transposes, reductions, reshapes,
layouts), :mod:`.products` (contractions and elementwise products), :mod:`.sparsify`
(the interpreter and its sparse rules), :mod:`.indexing`, :mod:`.convolution` and
:mod:`.control_flow` (more rules), :mod:`.bcoo` (the ``BCOO`` class and ``sparsify``),
:mod:`.bcsr_layout` and :mod:`.bcsr` (BCSR, on top of BCOO), :mod:`.coo` and :mod:`.csr`
(the unbatched matrix formats), :mod:`.operations` (the remaining public functions),
:mod:`.ad` (sparse-aware ``grad`` and Jacobians), :mod:`.linalg` (``lobpcg_standard``,
``spsolve``).  Every operation is a composition of ``plait.numpy``/``plait.lax``
functions, so the transformations apply to it; only ``todense_p``, the marker
``sparse.todense`` leaves in a traced function, is a primitive.
"""

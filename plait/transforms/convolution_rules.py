"""JVP, transpose and batching rules of ``conv_general_dilated``.

The convolution is bilinear.  Its transpose in the input is a convolution of the
cotangent with the spatially reversed kernel (strides becoming input dilation);
in the kernel, a convolution of the input with the cotangent; feature and batch
groups trade places between the two, as in JAX.  A batch dimension folds into the
batch or feature dimensions (or the groups) and unfolds from the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import shaped
from plait.ir.primitives.convolution import ConvDimensionNumbers, conv_output_shape
from plait.transforms.emit import Emitter
from plait.transforms.jvp import defjvp
from plait.transforms.transpose import Cotangent, UndefPrimal, check_linear_inputs
from plait.transforms.transpose_rules import deflinear_transpose
from plait.transforms.vmap import Dim, batching_rules

Result = tuple[Sequence[Atom], Sequence[Dim]]

defjvp(P.conv_general_dilated_p,
       lambda e, t, x, y, **params: e.bind1(P.conv_general_dilated_p, t, y, **params),
       lambda e, t, x, y, **params: e.bind1(P.conv_general_dilated_p, x, t, **params))


def _dilate(shape: Sequence[int], factors: Sequence[int]) -> list[int]:
    return [0 if s == 0 else (s - 1) * d + 1 for s, d in zip(shape, factors)]


def _spec_t(spec: Sequence[int]) -> tuple[int, ...]:
    # The spec with its first two entries swapped (input and output features).
    return (spec[1], spec[0], *spec[2:])


def _into(e: Emitter, src: int, dst: int, x: Atom) -> Atom:
    """Merge dimension ``src`` into ``dst`` (numbered after ``src`` is removed), ``src``
    as the major part."""
    shape = list(shaped(x.aval).shape)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    moved = e.transpose(x, perm)
    size = shape.pop(src)
    shape[dst] *= size
    return e.reshape(moved, shape)


def _out_of(e: Emitter, src: int, major: int, x: Atom) -> Atom:
    """Split dimension ``src`` into ``(major, rest)``."""
    shape = list(shaped(x.aval).shape)
    shape[src:src + 1] = [major, shape[src] // major]
    return e.reshape(x, shape)


def _conv(e: Emitter, x: Atom, y: Atom, **params: Any) -> Var:
    return e.bind1(P.conv_general_dilated_p, x, y, **params)


def _conv_t(e: Emitter, ct: Atom, x: Any, y: Any, *, window_strides: tuple[int, ...],
            padding: tuple[tuple[int, int], ...], lhs_dilation: tuple[int, ...],
            rhs_dilation: tuple[int, ...], dimension_numbers: ConvDimensionNumbers,
            feature_group_count: int, batch_group_count: int, precision: Any,
            preferred_element_type: Any, out_sharding: None) -> Sequence[Cotangent]:
    if type(x) is UndefPrimal and type(y) is UndefPrimal:
        check_linear_inputs("conv_general_dilated", [x, y], [0])
    dn = dimension_numbers
    xa, ya, ca = shaped(x.aval), shaped(y.aval), shaped(ct.aval)
    l_sp = [xa.shape[d] for d in dn.lhs_spec[2:]]
    r_sp = [ya.shape[d] for d in dn.rhs_spec[2:]]
    o_sp = [ca.shape[d] for d in dn.out_spec[2:]]
    common = dict(precision=precision, preferred_element_type=None, out_sharding=None)
    if type(x) is UndefPrimal:
        kernel: Atom = y
        groups = feature_group_count
        if feature_group_count > 1 or batch_group_count > 1:
            g = max(feature_group_count, batch_group_count)
            kernel = _into(e, dn.rhs_spec[0], dn.rhs_spec[1], _out_of(e, dn.rhs_spec[0], g, y))
            groups = g
        before = [w - lo - 1 for w, (lo, _) in zip(_dilate(r_sp, rhs_dilation), padding)]
        after = [lx + w - 1 - od - b for lx, w, od, b in zip(
            _dilate(l_sp, lhs_dilation), _dilate(r_sp, rhs_dilation),
            _dilate(o_sp, window_strides), before)]
        kernel = e.bind1(P.rev_p, kernel, dimensions=tuple(dn.rhs_spec[2:]))
        out = _conv(e, ct, e.to_dtype(kernel, ca.dtype), window_strides=lhs_dilation,
                    padding=tuple(zip(before, after)), lhs_dilation=window_strides,
                    rhs_dilation=rhs_dilation,
                    dimension_numbers=ConvDimensionNumbers(dn.out_spec, _spec_t(dn.rhs_spec),
                                                           dn.lhs_spec),
                    feature_group_count=groups, batch_group_count=1, **common)
        out_atom: Atom = e.to_dtype(out, xa.dtype)
        if batch_group_count > 1:
            out_atom = _into(e, dn.lhs_spec[1], dn.lhs_spec[0],
                             _out_of(e, dn.lhs_spec[1], batch_group_count, out_atom))
        return [out_atom, None]
    if ca.size == 0:
        return [None, e.zeros(ya)]
    fgc, bgc = feature_group_count, batch_group_count
    if bgc > 1:
        fgc, bgc = bgc, 1
    elif fgc > 1:
        fgc, bgc = 1, fgc
    lo = [p for p, _ in padding]
    hi = [od - lx + (w - p - 1) for od, lx, w, p in zip(
        _dilate(o_sp, window_strides), _dilate(l_sp, lhs_dilation),
        _dilate(r_sp, rhs_dilation), lo)]
    out = _conv(e, e.to_dtype(x, ca.dtype), ct, window_strides=rhs_dilation,
                padding=tuple(zip(lo, hi)), lhs_dilation=lhs_dilation,
                rhs_dilation=window_strides,
                dimension_numbers=ConvDimensionNumbers(_spec_t(dn.lhs_spec),
                                                       _spec_t(dn.out_spec),
                                                       _spec_t(dn.rhs_spec)),
                feature_group_count=fgc, batch_group_count=bgc, **common)
    return [None, e.to_dtype(out, ya.dtype)]


deflinear_transpose(P.conv_general_dilated_p, _conv_t)


def _conv_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], **params: Any) -> Result:
    x, y = vals
    dx, dy = dims
    dn: ConvDimensionNumbers = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    if size == 0:
        xs = list(shaped(x.aval).shape)
        ys = list(shaped(y.aval).shape)
        if dx is not None:
            xs.pop(dx)
        if dy is not None:
            ys.pop(dy)
        shape = conv_output_shape(tuple(xs), tuple(ys), dn, params["window_strides"],
                                  params["padding"], params["lhs_dilation"],
                                  params["rhs_dilation"], bgc)
        dtype = params["preferred_element_type"] or shaped(x.aval).dtype
        return [e.zeros(shaped(x.aval).update(shape=(0, *shape), dtype=dtype))], [0]
    if dx is not None and dy is not None:
        if bgc > 1:
            nx = _into(e, dx, dn.lhs_spec[0], x)
            params = {**params, "batch_group_count": bgc * size}
        else:
            nx = _into(e, dx, dn.lhs_spec[1], x)
            params = {**params, "feature_group_count": fgc * size}
        out = _conv(e, nx, _into(e, dy, dn.rhs_spec[0], y), **params)
        return [_out_of(e, dn.out_spec[1], size, out)], [dn.out_spec[1]]
    if dx is not None:
        if bgc == 1:
            out = _conv(e, _into(e, dx, dn.lhs_spec[0], x), y, **params)
            return [_out_of(e, dn.out_spec[0], size, out)], [dn.out_spec[0]]
        nx = _out_of(e, dn.lhs_spec[0] + int(dx <= dn.lhs_spec[0]), bgc, x)
        nx = _into(e, dx + int(dn.lhs_spec[0] < dx), dn.lhs_spec[0] + 1, nx)
        nx = _into(e, dn.lhs_spec[0], dn.lhs_spec[0], nx)
        out = _conv(e, nx, y, **params)
        return [_out_of(e, dn.out_spec[0], size, out)], [dn.out_spec[0]]
    assert dy is not None
    if fgc == 1 and bgc == 1:
        out = _conv(e, x, _into(e, dy, dn.rhs_spec[0], y), **params)
        return [_out_of(e, dn.out_spec[1], size, out)], [dn.out_spec[1]]
    # Groups stay outermost in the kernel's output features, and so in the result's.
    g = fgc if fgc > 1 else bgc
    ny = _out_of(e, dn.rhs_spec[0] + int(dy <= dn.rhs_spec[0]), g, y)
    ny = _into(e, dy + int(dn.rhs_spec[0] < dy), dn.rhs_spec[0] + 1, ny)
    ny = _into(e, dn.rhs_spec[0], dn.rhs_spec[0], ny)
    split = _out_of(e, dn.out_spec[1], g, _conv(e, x, ny, **params))
    split = _out_of(e, dn.out_spec[1] + 1, size, split)
    return [_into(e, dn.out_spec[1], dn.out_spec[1] + 1, split)], [dn.out_spec[1]]


batching_rules[P.conv_general_dilated_p] = _conv_batch


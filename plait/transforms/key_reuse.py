"""Key-reuse analysis: does a program use a PRNG key twice?

Drawing random bits from a key *consumes* it; drawing again from the same key gives
the same bits, which is almost never what a program means.  This module computes, for
a jaxpr, its *key-reuse signature*: which key inputs it consumes (:class:`Sink`),
which key outputs are fresh (:class:`Source`) and which outputs are its inputs passed
through (:class:`Forward`), raising :class:`~plait.ir.errors.KeyReuseError` where an
equation consumes a key that an earlier one already consumed.

It is an abstract interpretation over the equations, in the shape of every other
interpreter: an environment maps each key variable to its *consumed mask* (``True``,
``False``, or a boolean array over the elements of a key array: slicing a key array
consumes only the slice), and one rule per primitive (:data:`key_reuse_rules`) gives
the primitive's own signature.  A primitive without a rule consumes every key operand
and returns consumed keys (JAX's default); calls and control flow take the signature
of their bodies.  Only typed keys (``plait.random.key``) are tracked: raw ``uint32``
key data is re-wrapped by each random function, as in JAX.

The frontend runs the analysis at the end of every trace when the ``debug_key_reuse``
option is on, and tracks consumption of concrete key arrays between calls with the
same signatures (:mod:`plait.frontend.core.key_use`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, TypeAlias

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import AbstractValue, shaped
from plait.ir.caches import LRUCache
from plait.ir.errors import KeyReuseError
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr
from plait.ir.params import Params
from plait.ir.primitive import Primitive

__all__ = ["Mask", "Sink", "Source", "Forward", "KeyReuseSignature", "KeyReuseRule",
           "key_reuse_rules", "defforward", "jaxpr_signature", "primitive_signature",
           "check_key_reuse_jaxpr", "is_key_aval"]

Mask: TypeAlias = "bool | np.ndarray[Any, np.dtype[np.bool_]]"
"""Which elements of a key array: ``True`` (all), ``False`` (none), or a boolean array
of the key array's shape."""


def _normal(mask: Any) -> Mask:
    """``mask`` as ``True``/``False`` when uniform, else a read-only boolean array."""
    if isinstance(mask, bool | np.bool_):
        return bool(mask)
    arr = np.asarray(mask, dtype=bool)
    if arr.size == 0 or not arr.any():
        return False
    if arr.all():
        return True
    arr = arr.copy()
    arr.flags.writeable = False
    return arr


def _mask_key(mask: Mask) -> Any:
    return mask if isinstance(mask, bool) else (mask.shape, mask.tobytes())


class _Marked:
    """An operand or result position and a mask of its elements (immutable)."""

    __slots__ = ("idx", "mask")

    idx: int
    mask: Mask

    def __init__(self, idx: int, mask: Any = True) -> None:
        object.__setattr__(self, "idx", idx)
        object.__setattr__(self, "mask", _normal(mask))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, _Marked) and type(other) is type(self)
                and self.idx == other.idx and _mask_key(self.mask) == _mask_key(other.mask))

    def __hash__(self) -> int:
        return hash((type(self), self.idx, _mask_key(self.mask)))

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}({self.idx})" if self.mask is True else f"{name}({self.idx}, {self.mask})"


class Sink(_Marked):
    """Input ``idx`` is consumed (the elements ``mask`` selects)."""

    __slots__ = ()


class Source(_Marked):
    """Output ``idx`` is a fresh key (the elements ``mask`` selects; the others are
    consumed)."""

    __slots__ = ()


class Forward(NamedTuple):
    """Output ``out_idx`` is input ``in_idx`` passed through: the same key, consumed
    exactly when the input is."""

    in_idx: int
    """The position among the inputs."""
    out_idx: int
    """The position among the outputs."""

    def __repr__(self) -> str:
        return f"Forward({self.in_idx}, {self.out_idx})"


class KeyReuseSignature:
    """How a primitive or program treats the keys it takes and returns: a set of
    :class:`Sink`, :class:`Source` and :class:`Forward` (immutable, compared as sets)."""

    __slots__ = ("parts", "sinks", "sources", "forwards")

    parts: frozenset[Sink | Source | Forward]
    sinks: tuple[Sink, ...]
    """The consumed inputs, by position."""
    sources: tuple[Source, ...]
    """The fresh outputs, by position."""
    forwards: tuple[Forward, ...]
    """The outputs that are inputs passed through."""

    def __init__(self, *parts: Sink | Source | Forward) -> None:
        kept = frozenset(p for p in parts if isinstance(p, Forward) or p.mask is not False)
        # (sorted once: the analysis reads them for every equation)
        object.__setattr__(self, "parts", kept)
        object.__setattr__(self, "sinks", tuple(sorted(
            (p for p in kept if type(p) is Sink), key=lambda p: p.idx)))
        object.__setattr__(self, "sources", tuple(sorted(
            (p for p in kept if type(p) is Source), key=lambda p: p.idx)))
        object.__setattr__(self, "forwards", tuple(sorted(
            p for p in kept if type(p) is Forward)))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("KeyReuseSignature is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyReuseSignature) and self.parts == other.parts

    def __hash__(self) -> int:
        return hash(self.parts)

    def __repr__(self) -> str:
        # (printed as JAX prints its signatures: a tuple, sinks, sources, forwards)
        return f"KeyReuseSignature{(*self.sinks, *self.sources, *self.forwards)!r}"


EMPTY = KeyReuseSignature()

KeyReuseRule: TypeAlias = (
    "KeyReuseSignature | Callable[[Sequence[AbstractValue], Params], KeyReuseSignature]")
"""A primitive's signature, fixed or computed from its operand types and params."""

key_reuse_rules: dict[Primitive, KeyReuseRule] = {}
"""The key-reuse rule of each primitive; a primitive without one consumes its key
operands and returns consumed keys.  Register a rule for a primitive of your own that
passes keys through (:func:`defforward`) or makes fresh ones."""


def is_key_aval(aval: AbstractValue) -> bool:
    """Whether values of type ``aval`` are typed PRNG keys."""
    dtype = getattr(aval, "dtype", None)
    return dtype is not None and dt.is_key(dtype)


def defforward(*prims: Primitive) -> None:
    """Give each of ``prims`` the signature of an identity on keys: output ``i`` is
    input ``i`` passed through (the others need not be keys)."""
    for prim in prims:
        key_reuse_rules[prim] = _forward_each


def _forward_each(avals: Sequence[AbstractValue], params: Params) -> KeyReuseSignature:
    return KeyReuseSignature(*(Forward(i, i) for i in range(len(avals))))


def primitive_signature(prim: Primitive, avals: Sequence[AbstractValue],
                        params: Params) -> KeyReuseSignature:
    """The signature of ``prim[params]`` applied to operands of types ``avals``."""
    rule = key_reuse_rules.get(prim)
    if rule is None:
        return KeyReuseSignature(*(Sink(i) for i, a in enumerate(avals) if is_key_aval(a)))
    return rule if isinstance(rule, KeyReuseSignature) else rule(avals, params)


# -- the analysis ---------------------------------------------------------------------

_signatures: LRUCache[Any, KeyReuseSignature] = LRUCache("key-reuse signatures")


def jaxpr_signature(jaxpr: Jaxpr | ClosedJaxpr) -> KeyReuseSignature:
    """The signature of ``jaxpr``, over its inputs followed by its constvars.

    Raises:
      KeyReuseError: an equation consumes a key already consumed (the message prints
        both equations and their source lines).
    """
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    key = jaxpr.typed_key()
    sig = _signatures.get(key)
    if sig is None:  # (a failing analysis raises again on every request)
        sig = _signatures[key] = _Analysis(jaxpr).run()
    return sig


def check_key_reuse_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Raise :class:`~plait.ir.errors.KeyReuseError` if ``jaxpr`` consumes a key twice."""
    jaxpr_signature(jaxpr)


class _Analysis:
    """One walk over a jaxpr's equations, keeping each key variable's consumed mask."""

    def __init__(self, jaxpr: Jaxpr) -> None:
        self.jaxpr = jaxpr
        self.consumed: dict[Var, Mask] = {}
        self.forwards: dict[Var, Atom] = {}
        self.consumers: dict[Var, Eqn] = {}

    def root(self, a: Atom) -> Atom:
        while type(a) is Var and a in self.forwards:
            a = self.forwards[a]
        return a

    def run(self) -> KeyReuseSignature:
        for eqn in self.jaxpr.eqns:
            self.step(eqn)
        return self.signature()

    def step(self, eqn: Eqn) -> None:
        sig = primitive_signature(eqn.primitive, [a.aval for a in eqn.invars], eqn.params)
        for f in sig.forwards:
            self.forwards[eqn.outvars[f.out_idx]] = self.root(eqn.invars[f.in_idx])
        for s in sig.sinks:
            self.sink(eqn, s)
        for v in eqn.outvars:
            if v not in self.forwards and is_key_aval(v.aval):
                self.consumed[v] = True
        for src in sig.sources:
            self.consumed[eqn.outvars[src.idx]] = _normal(np.logical_not(src.mask))

    def sink(self, eqn: Eqn, s: Sink) -> None:
        a = self.root(eqn.invars[s.idx])
        if type(a) is not Var or not is_key_aval(a.aval):
            return
        before = self.consumed.get(a, False)
        if np.any(np.logical_and(before, s.mask)):
            raise KeyReuseError(_reuse_message(eqn, s.idx, self.consumers.get(a)))
        self.consumed[a] = _normal(np.logical_or(before, s.mask))
        self.consumers.setdefault(a, eqn)

    def signature(self) -> KeyReuseSignature:
        jaxpr = self.jaxpr
        inputs = [*jaxpr.invars, *jaxpr.constvars]
        position = {v: i for i, v in enumerate(inputs)}
        parts: list[Sink | Source | Forward] = [
            Sink(i, self.consumed[v]) for i, v in enumerate(inputs) if v in self.consumed]
        for o, out in enumerate(jaxpr.outvars):
            if not is_key_aval(out.aval):
                continue
            r = self.root(out)
            if type(r) is not Var:
                continue
            if r in position:
                parts.append(Forward(position[r], o))
            else:
                parts.append(Source(o, _normal(np.logical_not(self.consumed.get(r, False)))))
        return KeyReuseSignature(*parts)


def _reuse_message(eqn: Eqn, idx: int, first: Eqn | None) -> str:
    lines = [f"In {eqn.primitive.name}, argument {idx} is already consumed.",
             "expected a PRNG key that no earlier operation consumed, but got one consumed "
             "by", f"  {_describe(first)}", "and used again by", f"  {_describe(eqn)}",
             "Split the key (plait.random.split) for independent draws, or clone it "
             "(plait.random.clone) to reuse it on purpose."]
    return "\n".join(lines)


def _describe(eqn: Eqn | None) -> str:
    """The equation's primitive and short params, and its user source line."""
    if eqn is None:
        return "an earlier operation"
    shown = [f"{k}={v}" for k, v in eqn.params.items()
             if not isinstance(v, Jaxpr | ClosedJaxpr | tuple) or k == "shape"]
    text = eqn.primitive.name + (f"[{' '.join(shown)}]" if shown else "")
    return text + (f" at {eqn.source_info}" if eqn.source_info is not None else "")


# -- rules ------------------------------------------------------------------------------

def _sig(*parts: Sink | Source | Forward) -> KeyReuseSignature:
    return KeyReuseSignature(*parts)


key_reuse_rules.update({
    P.random_bits_p: _sig(Sink(0)),
    P.random_split_p: _sig(Sink(0), Source(0)),
    P.random_fold_in_p: _sig(Source(0)),  # (does not consume its key, as JAX's)
    P.random_seed_p: _sig(Source(0)),
    P.random_wrap_p: _sig(Source(0)),
    P.random_unwrap_p: EMPTY,
    P.random_clone_p: _sig(Source(0)),
    P.debug_callback_p: EMPTY,
    P.eq_p: EMPTY,  # (comparing keys does not consume them)
    P.ne_p: EMPTY,
    P.dynamic_slice_p: _sig(Forward(0, 0)),
    P.gather_p: _sig(Forward(0, 0)),
    P.dynamic_update_slice_p: _sig(Sink(1), Forward(0, 0)),
    P.scatter_p: _sig(Sink(2), Forward(0, 0)),
})
defforward(P.broadcast_in_dim_p, P.copy_p, P.convert_element_type_p, P.reshape_p,
           P.squeeze_p, P.sharding_constraint_p, P.reshard_p, P.pbroadcast_p, P.pvary_p, P.name_p,
           P.stop_gradient_p, P.optimization_barrier_p, P.tile_p)


def _slice(avals: Sequence[AbstractValue], params: Params) -> KeyReuseSignature:
    aval = avals[0]
    if not is_key_aval(aval):
        return _sig(Forward(0, 0))
    shape = shaped(aval).shape
    if not all(isinstance(d, int) for d in shape):
        return _sig(Forward(0, 0))  # (symbolic dimensions: the slice aliases the array)
    strides = params["strides"] or (1,) * len(shape)
    mask = np.zeros(shape, bool)
    mask[tuple(slice(*t) for t in zip(params["start_indices"], params["limit_indices"],
                                      strides))] = True
    return _sig(Sink(0, mask), Source(0))


def _gathered(avals: Sequence[AbstractValue], params: Params) -> KeyReuseSignature:
    """Several operands made into one new key array (``concatenate``, ``stack``)."""
    if len(avals) == 1:
        return _sig(Forward(0, 0))
    return _sig(*(Sink(i) for i in range(len(avals))), Source(0))


def _pieces(avals: Sequence[AbstractValue], params: Params) -> KeyReuseSignature:
    """One key array cut into pieces that cover it (``split``, ``unstack``)."""
    n = len(params["sizes"]) if "sizes" in params else shaped(avals[0]).shape[params["axis"]]
    return _sig(Sink(0), *(Source(i) for i in range(n)))


key_reuse_rules[P.slice_p] = _slice
key_reuse_rules[P.concatenate_p] = _gathered
key_reuse_rules[P.stack_p] = _gathered
key_reuse_rules[P.split_p] = _pieces
key_reuse_rules[P.unstack_p] = _pieces


def _inner(param: str) -> Callable[[Sequence[AbstractValue], Params], KeyReuseSignature]:
    """The rule of a call whose operands are its body's inputs: the body's signature
    (what it does to its own constants, concrete values, is not the operands' concern;
    a constant key it returns counts as consumed)."""
    def rule(avals: Sequence[AbstractValue], params: Params) -> KeyReuseSignature:
        body = params[param]
        sig = jaxpr_signature(body)
        n = len(avals)
        return KeyReuseSignature(*(p for p in sig.parts if not (
            (type(p) is Sink and p.idx >= n) or (type(p) is Forward and p.in_idx >= n))))
    return rule


def _remat(avals: Sequence[AbstractValue], params: Params) -> KeyReuseSignature:
    # The differentiated copy recomputes what the forward pass drew: it consumes nothing
    # new (JAX's reasoning too).
    return EMPTY if params["differentiated"] else _inner("jaxpr")(avals, params)


for _prim, _param in ((P.jit_p, "jaxpr"), (P.shard_map_p, "jaxpr"),
                      (P.custom_jvp_call_p, "call_jaxpr"), (P.custom_vjp_call_p, "call_jaxpr"),
                      (P.composite_p, "jaxpr")):
    key_reuse_rules[_prim] = _inner(_param)
key_reuse_rules[P.remat_p] = _remat


def _shifted(sig: KeyReuseSignature, by: int) -> list[Sink | Source | Forward]:
    """``sig``'s parts with input positions moved by ``by`` (a body's inputs inside its
    equation's operands)."""
    out: list[Sink | Source | Forward] = []
    for p in sig.parts:
        if type(p) is Sink:
            out.append(Sink(p.idx + by, p.mask))
        elif type(p) is Forward:
            out.append(Forward(p.in_idx + by, p.out_idx))
        else:
            out.append(p)
    return out


def _cond(avals: Sequence[AbstractValue], params: Params) -> KeyReuseSignature:
    """Any branch may run: an operand is consumed if some branch consumes it; an output
    is an operand passed through if every branch passes that operand, and fresh if in
    every branch it is fresh or an operand passed through that the cond then counts as
    consumed (else it is consumed)."""
    sigs = [jaxpr_signature(b) for b in params["branches"]]
    n_in = len(avals) - 1
    sinks: dict[int, Mask] = {}
    for sig in sigs:
        for s in sig.sinks:
            if s.idx < n_in:
                sinks[s.idx] = _normal(np.logical_or(sinks.get(s.idx, False), s.mask))
    parts: list[Sink | Source | Forward] = []
    n_out = len(params["branches"][0].jaxpr.outvars)
    for o in range(n_out):
        fwd = [next((f.in_idx for f in sig.forwards if f.out_idx == o), None) for sig in sigs]
        if fwd[0] is not None and all(f == fwd[0] for f in fwd):
            parts.append(Forward(fwd[0] + 1, o))
            continue
        fresh: Mask = True
        for sig, f in zip(sigs, fwd):
            src = next((s.mask for s in sig.sources if s.idx == o), False)
            if f is not None and f < n_in:  # an operand passed through: now used up
                sinks[f] = True
                src = True
            fresh = _normal(np.logical_and(fresh, src))
        parts.append(Source(o, fresh))
    parts.extend(Sink(i + 1, m) for i, m in sinks.items())
    return KeyReuseSignature(*parts)


def _consts_consumed(sig: KeyReuseSignature, nconsts: int) -> bool:
    return any(s.idx < nconsts for s in sig.sinks)


def _loop_error(what: str, why: str, sig: KeyReuseSignature) -> KeyReuseError:
    return KeyReuseError(
        f"{what} leads to key reuse when repeatedly executed, because {why}.\n"
        f"expected every key the body consumes to be a loop carry it replaces with a "
        f"fresh key, but got the body signature {sig}\n"
        "Split the key in the body and carry one half (k, sub = plait.random.split(k)), "
        "or fold the iteration number in (plait.random.fold_in(key, i)).")


def _carry_refreshed(sig: KeyReuseSignature, first: int, n_carry: int,
                     sourced: Iterable[int]) -> bool:
    fresh = set(sourced)
    return all(s.idx - first in fresh for s in sig.sinks if first <= s.idx < first + n_carry)


def _scan(avals: Sequence[AbstractValue], params: Params) -> KeyReuseSignature:
    body = params["jaxpr"]
    sig = jaxpr_signature(body)
    nc, ncarry = params["num_consts"], params["num_carry"]
    if _consts_consumed(sig, nc):
        raise _loop_error("scan body function", "key constants are repeatedly consumed", sig)
    if not _carry_refreshed(sig, nc, ncarry, (s.idx for s in sig.sources if s.idx < ncarry)):
        raise _loop_error("scan body function",
                          "consumed inputs don't match sourced outputs", sig)
    # A per-step output passing a constant key through is that key repeated: consumed.
    return KeyReuseSignature(*(p for p in sig.parts if type(p) is not Forward
                               or p.out_idx < ncarry or p.in_idx >= nc))


def _while(avals: Sequence[AbstractValue], params: Params) -> KeyReuseSignature:
    cnc, bnc = params["cond_nconsts"], params["body_nconsts"]
    cond_sig = jaxpr_signature(params["cond_jaxpr"])
    body_sig = jaxpr_signature(params["body_jaxpr"])
    if _consts_consumed(cond_sig, cnc):
        raise _loop_error("while_loop cond function", "key constants are repeatedly "
                          "consumed", cond_sig)
    if _consts_consumed(body_sig, bnc):
        raise _loop_error("while_loop body function", "key constants are repeatedly "
                          "consumed", body_sig)
    n_carry = len(avals) - cnc - bnc
    sourced = [s.idx for s in body_sig.sources]
    if not _carry_refreshed(cond_sig, cnc, n_carry, sourced):
        raise _loop_error("while_loop cond function", "it consumes a carry the body does "
                          "not replace", cond_sig)
    if not _carry_refreshed(body_sig, bnc, n_carry, sourced):
        raise _loop_error("while_loop body function", "consumed inputs don't match "
                          "sourced outputs", body_sig)
    both = ({s.idx - cnc for s in cond_sig.sinks} & {s.idx - bnc for s in body_sig.sinks})
    if both:
        raise _loop_error("while_loop cond and body functions", "both use the same key",
                          body_sig)
    return KeyReuseSignature(*_shifted(body_sig, cnc))


key_reuse_rules[P.cond_p] = _cond
key_reuse_rules[P.scan_p] = _scan
key_reuse_rules[P.while_p] = _while

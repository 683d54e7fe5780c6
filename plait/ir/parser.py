"""The parser: reads the printed jaxpr syntax back into IR.

``parse_jaxpr(str(j)) == j`` for every jaxpr plait produces, and
``str(parse_jaxpr(s)) == s`` for printed text (JAX's too, for the primitives
plait has).  Parameters left out of the text are restored from their
declarations (defaults, or values the binder types determine).  Errors name
the line and column.

Three spots of the syntax are ambiguous and resolved here:

* ``inf`` and ``nan`` are literals (``inf:f32[]``) but also variable names
  (in jaxprs of thousands of variables).  After an equation's last operand
  and a line break, ``nan:f32[] c:f32[] = ...`` may continue the operands or
  start the next equation's binders: the parser reads a literal unless only
  the other reading types the equation.
* ``_`` names unused results, and also the callee's result behind an unused
  call result: a reference to ``_`` means the latest ``_`` bound.
* A shared jaxpr (``let f = { ... } in``) is named after the ``name`` param of
  the call that uses it, so a word like ``f`` in params is tried as that
  jaxpr first and as a plain word when the param's decoder refuses a jaxpr.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any, Final, NoReturn

import attrs
import numpy as np

from plait.ir import dtypes
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import AbstractToken, ShapedArray, abstract_token
from plait.ir.dims import parse_dims
from plait.ir.errors import JaxprParseError, JaxprTypeError, ShardingTypeError
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr
from plait.ir.params import REQUIRED, Params, ParsedCall, decode_any
from plait.ir.primitive import PRIMITIVES, Primitive
from plait.ir.primitives.remat_policies import POLICY_CONSTRUCTORS
from plait.ir.sharding import NamedSharding, PartitionSpec, get_abstract_mesh

__all__ = ["parse_jaxpr"]

_SHARDING_PARAMS: Final = ("out_sharding", "sharding")

_TOKEN: Final = re.compile(r"""
    (?P<ws>\s+)
  | (?P<complex>(?:\([-+0-9.eEinfa]*j\)|-?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)j)(?![\w<>]))
  | (?P<num>-inf\b|-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?)(?![\w<>]))
  | (?P<word><[A-Za-z_][A-Za-z0-9_]*>|key<[A-Za-z0-9_]+>|<class\ '[A-Za-z_][\w.]*'>
      |[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z][A-Za-z0-9_]*)*)
  | (?P<str>'[^'\n]*')
  | (?P<punct>//|[{}()\[\],;:=.*+\-%^@])
""", re.VERBOSE)


@attrs.frozen
class _Tok:
    kind: str
    text: str
    line: int
    col: int


def _tokenize(src: str) -> list[_Tok]:
    toks = []
    pos, line, line_start = 0, 1, 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if m is None:
            raise JaxprParseError(f"unexpected character {src[pos]!r}", line, pos - line_start + 1)
        kind, text = m.lastgroup, m.group()
        assert kind is not None
        if kind != "ws":
            toks.append(_Tok(kind, text, line, pos - line_start + 1))
        elif "\n" in text:
            line += text.count("\n")
            line_start = pos + text.rindex("\n") + 1
        pos = m.end()
    toks.append(_Tok("eof", "", line, pos - line_start + 1))
    return toks


_LITERAL_WORDS: Final = frozenset({"True", "False", "inf", "nan"})
# Constructor calls printed with positional arguments, as ``repr`` writes these values.
_POSITIONAL_CALLS: Final = frozenset({"PyTreeDef", "HashableArray", "array", "dtype",
                                      *POLICY_CONSTRUCTORS})
_VAR_LIKE_LITERALS: Final = frozenset({"inf", "nan"})


@functools.cache
def _arity(rule: Callable[..., Any]) -> tuple[int, bool]:
    """How many operands a typing rule takes: (count, whether more are allowed)."""
    try:
        kinds = [p.kind for p in inspect.signature(rule).parameters.values()]
    except (TypeError, ValueError):
        return 0, True
    fixed = sum(k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                for k in kinds)
    return fixed, inspect.Parameter.VAR_POSITIONAL in kinds


def _resolve(value: Any, shared: dict[str, ClosedJaxpr]) -> Any:
    if isinstance(value, str):
        return shared.get(value, value)
    if isinstance(value, tuple | list):
        return type(value)(_resolve(v, shared) for v in value)
    return value


class _Parser:
    def __init__(self, src: str) -> None:
        self.toks = _tokenize(src)
        self.i = 0
        self.shared: dict[str, ClosedJaxpr] = {}
        self.numpy_scalars = False
        """Whether ``np.float32(1.5)`` is read as a NumPy scalar (else as its value)."""

    # -- token helpers ---------------------------------------------------
    def peek(self, k: int = 0) -> _Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> _Tok:
        t = self.peek()
        self.i += 1
        return t

    def error(self, msg: str, tok: _Tok | None = None) -> NoReturn:
        t = tok or self.peek()
        raise JaxprParseError(msg, t.line, t.col)

    def expect(self, text: str) -> _Tok:
        t = self.peek()
        if t.text != text or t.kind in ("num", "complex"):
            self.error(f"expected {text!r}, but got {t.text or 'end of input'!r}")
        return self.next()

    def is_punct(self, text: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t.kind == "punct" and t.text == text

    def at_in(self) -> bool:
        return self.peek().text == "in" and self.peek().kind == "word" and self.is_punct("(", 1)

    # -- grammar ---------------------------------------------------------
    def lets(self) -> None:
        """``let name = { ... } in`` definitions of shared jaxprs, into :attr:`shared`."""
        while self.peek().text == "let" and self.peek(1).kind == "word" and self.is_punct("=", 2):
            self.next()
            name = self.next().text
            self.expect("=")
            self.shared[name] = self.closed_jaxpr()
            self.expect("in")

    def toplevel(self) -> Jaxpr:
        self.lets()
        j = self.jaxpr()
        if self.peek().kind != "eof":
            self.error(f"expected end of input, but got {self.peek().text!r}")
        return j

    def closed_jaxpr(self) -> ClosedJaxpr:
        start = self.peek()
        j = self.jaxpr()
        if j.constvars:
            self.error("expected a nested jaxpr without constvars (their values are not "
                       "printed), but got constvars", start)
        return ClosedJaxpr(j)

    def jaxpr(self) -> Jaxpr:
        self.expect("{")
        self.expect("lambda")
        scope: dict[str, Var] = {}
        constvars = self.binders(scope, ";")
        self.expect(";")
        invars = self.binders(scope, ".")
        self.expect(".")
        self.expect("let")
        eqns: list[Eqn] = []
        while not self.at_in():
            if self.is_punct(";"):
                self.next()
                continue
            eqns.append(self.eqn(scope))
        self.next()
        self.expect("(")
        outs: list[Atom] = []
        while not self.is_punct(")"):
            a = self.atom(scope)
            if a is None:
                self.error("expected a variable or literal, but got "
                           f"{self.peek().text or 'end of input'!r}")
            outs.append(a[0])
            if self.is_punct(","):
                self.next()
            elif not self.is_punct(")"):
                self.error(f"expected ',' or ')', but got {self.peek().text or 'end of input'!r}")
        self.next()
        self.expect("}")
        effects = frozenset().union(*(e.effects for e in eqns))
        return Jaxpr(tuple(constvars), tuple(invars), tuple(eqns), tuple(outs), effects)

    def binders(self, scope: dict[str, Var], stop: str) -> list[Var]:
        out = []
        while not self.is_punct(stop):
            t = self.next()
            if t.kind != "word":
                self.error(f"expected a variable name or {stop!r}, but got "
                           f"{t.text or 'end of input'!r}", t)
            self.expect(":")
            v = Var(self.var_type())
            self.bind(scope, [t], [v])
            out.append(v)
        return out

    def bind(self, scope: dict[str, Var], names: list[_Tok], vs: list[Var]) -> None:
        # ``_`` may be bound many times; a reference means the latest one.
        seen = set(scope)
        for name in names:
            if name.text != "_" and name.text in seen:
                self.error(f"variable {name.text!r} is bound twice", name)
            seen.add(name.text)
        scope.update((name.text, v) for name, v in zip(names, vs))

    def var_type(self) -> ShapedArray | AbstractToken:
        """A variable's type: an array type or ``Tok`` (a token)."""
        t = self.peek()
        if t.kind == "word" and t.text == "Tok" and not self.is_punct("[", 1):
            self.next()
            return abstract_token
        return self.type()

    def type(self) -> ShapedArray:
        t = self.next()
        try:
            dtype = dtypes.from_name(t.text)
        except KeyError:
            self.error(f"expected a dtype such as f32, but got {t.text or 'end of input'!r}", t)
        self.expect("[")
        dims: list[Any] = []
        spec: list[Any] = []
        while not self.is_punct("]"):
            d = self.peek()
            if d.kind == "num" and d.text.isdigit() and (
                    self.is_punct(",", 1) or self.is_punct("]", 1) or self.is_punct("@", 1)):
                self.next()
                dims.append(int(d.text))
            else:  # a symbolic dimension: ``b``, ``2*b + 1``, ``floordiv(b, 2)``
                dims.append(self.dim_expr(d, (",", "]", "@")))
            spec.append(self.mesh_axes() if self.is_punct("@") else None)
            if self.is_punct(","):
                self.next()
        self.next()
        if any(p is not None for p in spec):
            return self.sharded(tuple(dims), dtype, spec, t)
        return ShapedArray(tuple(dims), dtype)

    def mesh_axes(self) -> Any:
        """``@X`` or ``@(X,Y)``: the mesh axes splitting a dimension."""
        self.expect("@")
        if not self.is_punct("("):
            return self.name()
        self.next()
        names = [self.name()]
        while self.is_punct(","):
            self.next()
            names.append(self.name())
        self.expect(")")
        return tuple(names)

    def name(self) -> str:
        t = self.next()
        if t.kind != "word":
            self.error(f"expected a mesh axis name, but got {t.text or 'end of input'!r}", t)
        return t.text

    def sharded(self, dims: tuple[Any, ...], dtype: Any, spec: list[Any],
                where: _Tok) -> ShapedArray:
        # The printed text names axes, not their mesh: it is the current abstract mesh.
        mesh = get_abstract_mesh()
        names = [n for p in spec if p is not None for n in ((p,) if isinstance(p, str) else p)]
        missing = [n for n in names if n not in mesh.explicit_axes]
        if missing:
            self.error(f"expected the mesh axes of a sharded type among the Explicit axes of "
                       f"the current mesh {mesh}, but got {', '.join(map(repr, missing))}: "
                       "parse it under `with plait.sharding.use_abstract_mesh(mesh):` or "
                       "`with plait.set_mesh(mesh):`", where)
        try:
            return ShapedArray(dims, dtype, False, NamedSharding(mesh, PartitionSpec(*spec)))
        except (JaxprTypeError, ValueError) as e:
            self.error(f"invalid sharded type: {e}", where)

    def dim_expr(self, first: _Tok, stops: tuple[str, ...]) -> Any:
        """A dimension expression, up to one of ``stops`` outside parentheses (or a
        parameter name ``k=``)."""
        parts: list[str] = []
        depth = 0
        while True:
            t = self.peek()
            if t.kind == "eof" or (depth == 0 and t.kind == "punct" and t.text in stops):
                break
            if depth == 0 and t.kind == "word" and parts and self.is_punct("=", 1):
                break
            if t.kind not in ("num", "word", "punct") or (
                    t.kind == "punct" and t.text not in "()+-*%^," and t.text != "//"):
                break
            depth += (t.text == "(") - (t.text == ")")
            if depth < 0:
                break
            parts.append(self.next().text)
        try:
            (d,) = parse_dims(" ".join(parts))
        except ValueError as e:
            self.error(f"expected a dimension, but got {' '.join(parts) or first.text!r}: {e}",
                       first)
        return d

    def starts_binders(self) -> bool:
        """Whether ``name:type name:type ... =`` follows."""
        k = 0
        while self.peek(k).kind == "word" and self.is_punct(":", k + 1):
            k += 2
            if self.peek(k).text == "Tok" and not self.is_punct("[", k + 1):
                k += 1  # a token's type has no brackets
                continue
            while not self.is_punct("]", k):
                if self.peek(k).kind == "eof":
                    return False
                k += 1
            k += 1
        return k > 0 and self.is_punct("=", k)

    def eqn(self, scope: dict[str, Var]) -> Eqn:
        binders: list[tuple[_Tok, ShapedArray | AbstractToken]] = []
        if self.starts_binders():
            while not self.is_punct("="):
                name = self.next()
                self.next()
                binders.append((name, self.var_type()))
            self.next()
        pt = self.next()
        prim = PRIMITIVES.get(pt.text) if pt.kind == "word" else None
        if prim is None:
            self.error(f"unknown primitive {pt.text!r}" if pt.kind == "word" else
                       f"expected a primitive name, but got {pt.text or 'end of input'!r}", pt)
        raw: dict[str, tuple[Any, _Tok]] = {}
        if self.is_punct("["):
            self.next()
            while not self.is_punct("]"):
                k = self.next()
                if k.kind != "word":
                    self.error(f"expected a parameter name, but got {k.text or 'end of input'!r}",
                               k)
                if k.text in raw:
                    self.error(f"{prim.name}: parameter {k.text!r} is given twice", k)
                self.expect("=")
                pdef = prim.params_by_name.get(k.text)
                self.numpy_scalars = pdef is not None and pdef.numpy_scalars
                raw[k.text] = (self.value(), k)
                self.numpy_scalars = False
            self.next()
        inputs: list[Atom] = []
        ambiguous = -1  # the token index of a last operand that may be a binder instead
        while (a := self.atom(scope)) is not None:
            inputs.append(a[0])
            ambiguous = a[1]
        try:
            return self.typed_eqn(prim, pt, raw, inputs, binders, scope)
        except JaxprParseError:
            if ambiguous < 0:
                raise
            self.i = ambiguous
            return self.typed_eqn(prim, pt, raw, inputs[:-1], binders, scope)

    def typed_eqn(self, prim: Primitive, pt: _Tok, raw: dict[str, tuple[Any, _Tok]],
                  inputs: list[Atom], binders: list[tuple[_Tok, ShapedArray | AbstractToken]],
                  scope: dict[str, Var]) -> Eqn:
        params = self.decode_params(prim, raw, inputs, [ty for _, ty in binders], pt)
        n, variadic = _arity(prim.typing_rule)
        if len(inputs) < n or (len(inputs) > n and not variadic):
            self.error(f"{prim.name}: expected {'at least ' if variadic else ''}{n} "
                       f"operand{'s' * (n != 1)}, but got {len(inputs)}", pt)
        params = self.requested_sharding(prim, raw, inputs, params, binders)
        try:
            out_avals = prim.abstract_eval([a.aval for a in inputs], params)
        except JaxprTypeError as e:
            self.error(str(e), pt)
        except (TypeError, ValueError) as e:  # a typing rule refusing odd params
            self.error(f"{prim.name}: {e}", pt)
        if len(out_avals) != len(binders):
            n = len(out_avals)
            self.error(f"{prim.name}: expected {n} binder{'s' * (n != 1)}, but got {len(binders)}",
                       pt)
        for (name, ty), aval in zip(binders, out_avals):
            if aval is not ty and (not isinstance(aval, ShapedArray)
                                   or aval.strip_weak_type() is not ty):
                self.error(f"{prim.name}: expected binder {name.text!r} of type "
                           f"{aval.str_short()}, but got {ty.str_short()}", name)
        outvars = [Var(aval) for aval in out_avals]
        self.bind(scope, [name for name, _ in binders], outvars)
        return Eqn(prim, tuple(inputs), params, tuple(outvars), prim.effects(params))

    def requested_sharding(self, prim: Primitive, raw: dict[str, tuple[Any, _Tok]],
                           inputs: list[Atom], params: Params,
                           binders: list[tuple[_Tok, ShapedArray | AbstractToken]]) -> Params:
        """``params`` with the unprinted result sharding an equation asked for (JAX prints
        it in the result's type only): the binder's, where the operands' shardings alone
        do not give it."""
        name = next((k for k in _SHARDING_PARAMS if k in prim.params_by_name), None)
        if name is None or name in raw or len(binders) != 1:
            return params
        want = binders[0][1]
        if type(want) is not ShapedArray or want.explicit_sharding is None:
            return params
        try:
            (out,) = prim.abstract_eval([a.aval for a in inputs], params)
            if out is want or (type(out) is ShapedArray and out.strip_weak_type() is want):
                return params
        except ShardingTypeError:
            pass
        except Exception:  # (the caller reports it)
            return params
        return Params({**params, name: want.explicit_sharding})

    def decode_params(self, prim: Primitive, raw: dict[str, tuple[Any, _Tok]],
                      inputs: list[Atom], out_types: list[ShapedArray | AbstractToken],
                      at: _Tok) -> Params:
        defs = prim.params_by_name
        params: dict[str, Any] = {}
        for name, (value, tok) in raw.items():
            d = defs.get(name)
            if d is None and prim.open_params:
                params[name] = decode_any(_resolve(value, self.shared))
                continue
            if d is None:
                self.error(f"{prim.name}: expected a parameter among ({', '.join(defs)}), "
                           f"but got {name!r}", tok)
            resolved = _resolve(value, self.shared)
            try:
                params[name] = d.decode(resolved)
            except ValueError as e:
                if resolved is value:
                    self.error(f"{prim.name}: parameter {name}: {e}", tok)
                try:
                    params[name] = d.decode(value)
                except ValueError as e2:
                    self.error(f"{prim.name}: parameter {name}: {e2}", tok)
        in_avals = [a.aval for a in inputs]
        for d in prim.param_defs:
            if d.name not in params:
                if d.default is REQUIRED:
                    self.error(f"{prim.name}: expected parameter {d.name!r}, but it is missing", at)
                params[d.name] = d.default_for(in_avals, out_types)
        if prim.open_params:
            return Params(params)
        return Params({d.name: params[d.name] for d in prim.param_defs})

    def value(self) -> Any:
        t = self.peek()
        if t.kind == "punct" and t.text == "{":
            if self.peek(1).kind == "str" or self.is_punct("}", 1):
                return self.dict_value()
            return self.closed_jaxpr()
        if t.kind == "punct" and t.text == "*":  # a leaf in a PyTreeDef
            self.next()
            return Ellipsis
        if t.kind == "punct" and t.text == "." and self.is_punct(".", 1) and self.is_punct(".", 2):
            for _ in range(3):  # ``...``: what a record's printed form leaves out
                self.next()
            return Ellipsis
        if t.text == "let" and t.kind == "word" and self.is_punct("=", 2):
            # A jaxpr printed on its own inside a record, with its own shared jaxprs.
            outer = dict(self.shared)
            self.lets()
            j = self.closed_jaxpr()
            self.shared = outer
            return j
        if t.kind == "punct" and t.text in "([":
            close = ")" if t.text == "(" else "]"
            self.next()
            items = []
            while not self.is_punct(close):  # jaxprs in a tuple are separated by spaces only
                if self.peek().kind == "eof":
                    self.error(f"expected {close!r}, but got end of input")
                items.append(self.value())
                if self.is_punct(","):
                    self.next()
            self.next()
            return tuple(items) if close == ")" else list(items)
        self.next()
        if t.kind in ("num", "word") and self.peek().kind == "punct" and \
                self.peek().text in ("+", "-", "*", "//", "%", "^") and not \
                (t.text == "PyTreeDef"):
            # A dimension expression such as ``2*b + 1`` (``dim_as_value``'s ``dim``).
            self.i -= 1
            return self.dim_expr(t, (",", ")", "]"))
        if t.kind == "num":
            return float(t.text) if any(c in t.text for c in ".eEn") else int(t.text)
        if t.kind == "complex":
            return complex(t.text)
        if t.kind == "str":
            return t.text[1:-1]
        if t.kind == "word":
            if self.is_punct("(") and self.peek(1).kind == "word" and self.is_punct("=", 2):
                return self.call(t.text)
            if self.is_punct("(") and t.text in _POSITIONAL_CALLS:
                return self.call(t.text)
            if self.is_punct(".") and self.peek(1).kind == "word":
                self.next()
                member = self.next().text
                if t.text == "np" and self.is_punct("("):  # a NumPy scalar: np.int64(4)
                    self.next()
                    inner = self.value()
                    self.expect(")")
                    scalar_type = getattr(np, member, None)
                    if self.numpy_scalars and isinstance(scalar_type, type) and issubclass(
                            scalar_type, np.generic):
                        return scalar_type(inner)
                    return inner
                return f"{t.text}.{member}"  # an enum member
            return {"None": None, "True": True, "False": False}.get(t.text, t.text)
        self.error(f"expected a parameter value, but got {t.text or 'end of input'!r}", t)

    def call(self, name: str) -> ParsedCall:
        """``Name(key=value, ...)``, after ``Name``: a record such as dimension numbers;
        positional arguments (``array([1, 2], dtype=int32)``) have the key ``""``."""
        self.expect("(")
        kwargs = []
        while not self.is_punct(")"):
            if not (self.peek().kind == "word" and self.is_punct("=", 1)):
                kwargs.append(("", self.value()))
                if not self.is_punct(")"):
                    self.expect(",")
                continue
            key = self.next()
            self.expect("=")
            kwargs.append((key.text, self.value()))
            if not self.is_punct(")"):
                self.expect(",")
        self.next()
        return ParsedCall(name, tuple(kwargs))

    def dict_value(self) -> dict[str, Any]:
        """``{'key': value, ...}`` (in a ``PyTreeDef``)."""
        self.expect("{")
        out: dict[str, Any] = {}
        while not self.is_punct("}"):
            key = self.next()
            if key.kind != "str":
                self.error(f"expected a quoted key, but got {key.text or 'end of input'!r}", key)
            self.expect(":")
            out[key.text[1:-1]] = self.value()
            if not self.is_punct("}"):
                self.expect(",")
        self.next()
        return out

    def atom(self, scope: dict[str, Var]) -> tuple[Atom, int] | None:
        """The next operand and, if it may be read as a binder instead, its token index."""
        t = self.peek()
        if t.kind in ("num", "complex") or (t.kind == "word" and t.text in _LITERAL_WORDS
                                           and self.is_punct(":", 1)):
            start = self.i
            ambiguous = t.text in _VAR_LIKE_LITERALS and self.starts_binders()
            self.next()
            self.next()
            ty = self.type()
            lit = self.literal(t, ty, quiet=ambiguous)
            if lit is None:
                self.i = start
                return None
            return lit, start if ambiguous else -1
        if t.kind != "word" or self.is_punct(":", 1) or self.at_in():
            return None
        if t.text not in scope:
            if t.text in PRIMITIVES:  # the next equation has no binders
                return None
            self.error(f"variable {t.text!r} is not defined")
        self.next()
        return scope[t.text], -1

    def literal(self, t: _Tok, ty: ShapedArray, quiet: bool = False) -> Literal | None:
        text = t.text
        value: Any
        try:
            if t.kind == "complex":
                value = complex(text)
            elif text in ("True", "False"):
                value = text == "True"
            elif dtypes.is_integer(ty.dtype):
                value = int(text)
            elif dtypes.is_complex(ty.dtype):
                value = complex(text)
            else:
                value = float(text)
            return Literal(value, ty)
        except (TypeError, ValueError) as e:
            if quiet:
                return None
            self.error(f"invalid literal {text}:{ty.str_short()}: {e}", t)


def parse_jaxpr(text: str) -> Jaxpr:
    """Read a jaxpr from its printed form.

    Raises:
      JaxprParseError: the text is not a well-formed, well-typed jaxpr; the
        message gives the line and column.
    """
    return _Parser(text).toplevel()

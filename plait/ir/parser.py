"""The parser: reads the printed jaxpr syntax back into IR.

``parse_jaxpr(str(j)) == j`` for every jaxpr plait produces, and
``str(parse_jaxpr(s)) == s`` for printed text (JAX's too, for the primitives
plait has).  Parameters left out of the text are restored from their
declarations (defaults, or values the binder types determine).  Errors name
the line and column.
"""

from __future__ import annotations

import re
from typing import Any, Final, NoReturn

import attrs

from plait.errors import JaxprParseError, JaxprTypeError
from plait.ir import dtypes
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import ShapedArray
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr
from plait.ir.params import REQUIRED, Params
from plait.ir.primitive import PRIMITIVES

__all__ = ["parse_jaxpr"]

_TOKEN: Final = re.compile(r"""
    (?P<ws>\s+)
  | (?P<complex>\([-+0-9.eEinfa]*j\)|-?[0-9.eE+]*[0-9.]j)
  | (?P<num>-inf\b|-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?))
  | (?P<word><[A-Za-z_][A-Za-z0-9_]*>|[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[{}()\[\],;:=.])
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
        kind = m.lastgroup
        assert kind is not None
        text = m.group()
        if kind != "ws":
            toks.append(_Tok(kind, text, line, pos - line_start + 1))
        else:
            nl = text.count("\n")
            if nl:
                line += nl
                line_start = pos + text.rindex("\n") + 1
        pos = m.end()
    toks.append(_Tok("eof", "", line, pos - line_start + 1))
    return toks


_LITERAL_WORDS: Final = frozenset({"True", "False", "inf", "nan"})


class _Parser:
    def __init__(self, src: str) -> None:
        self.toks = _tokenize(src)
        self.i = 0
        self.shared: dict[str, ClosedJaxpr] = {}

    # -- token helpers ---------------------------------------------------
    def peek(self, k: int = 0) -> _Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> _Tok:
        t = self.toks[self.i]
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

    # -- grammar ---------------------------------------------------------
    def toplevel(self) -> Jaxpr:
        while self.peek().text == "let" and self.peek(1).kind == "word" and self.is_punct("=", 2):
            self.next()
            name = self.next().text
            self.expect("=")
            self.shared[name] = ClosedJaxpr(self.jaxpr())
            self.expect("in")
        j = self.jaxpr()
        if self.peek().kind != "eof":
            self.error(f"expected end of input, but got {self.peek().text!r}")
        return j

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
        while not (self.peek().text == "in" and self.peek().kind == "word" and self.is_punct("(", 1)):
            if self.is_punct(";"):
                self.next()
                continue
            eqns.append(self.eqn(scope))
        self.next()
        self.expect("(")
        outs: list[Atom] = []
        while not self.is_punct(")"):
            outs.append(self.atom(scope, required=True))
            if self.is_punct(","):
                self.next()
            elif not self.is_punct(")"):
                self.error(f"expected ',' or ')', but got {self.peek().text!r}")
        self.next()
        self.expect("}")
        effects = frozenset().union(*(e.effects for e in eqns))
        return Jaxpr(tuple(constvars), tuple(invars), tuple(eqns), tuple(outs), effects)

    def binders(self, scope: dict[str, Var], stop: str) -> list[Var]:
        out = []
        while not self.is_punct(stop):
            out.append(self.binder(scope))
        return out

    def binder(self, scope: dict[str, Var], aval: Any = None) -> Var:
        t = self.next()
        if t.kind != "word":
            self.error(f"expected a variable name, but got {t.text or 'end of input'!r}", t)
        self.expect(":")
        ty = self.type()
        v = Var(aval if aval is not None else ty)
        if t.text != "_":
            if t.text in scope:
                self.error(f"variable {t.text!r} is bound twice", t)
            scope[t.text] = v
        return v

    def type(self) -> ShapedArray:
        t = self.next()
        try:
            dtype = dtypes.from_name(t.text)
        except KeyError:
            self.error(f"expected a dtype such as f32, but got {t.text!r}", t)
        self.expect("[")
        dims = []
        while not self.is_punct("]"):
            d = self.next()
            if d.kind != "num" or not d.text.isdigit():
                self.error(f"expected a dimension, but got {d.text!r}", d)
            dims.append(int(d.text))
            if self.is_punct(","):
                self.next()
        self.next()
        return ShapedArray(tuple(dims), dtype)

    def starts_binder(self, scope: dict[str, Var]) -> bool:
        t = self.peek()
        if t.kind != "word" or not self.is_punct(":", 1):
            return False
        if t.text not in _LITERAL_WORDS:
            return True
        # ``inf:f32[]`` is a literal unless a run of binders ends in ``=``.
        k = 0
        while self.peek(k).kind == "word" and self.is_punct(":", k + 1):
            k += 3
            while not self.is_punct("]", k):
                if self.peek(k).kind == "eof":
                    return False
                k += 1
            k += 1
        return self.is_punct("=", k)

    def eqn(self, scope: dict[str, Var]) -> Eqn:
        binder_toks: list[tuple[_Tok, ShapedArray, int]] = []
        while self.starts_binder(scope):
            start = self.i
            name = self.next()
            self.next()
            binder_toks.append((name, self.type(), start))
        if binder_toks:
            self.expect("=")
        pt = self.next()
        prim = PRIMITIVES.get(pt.text) if pt.kind == "word" else None
        if prim is None:
            self.error(f"expected a primitive name, but got {pt.text or 'end of input'!r}", pt)
        raw: dict[str, tuple[Any, _Tok]] = {}
        if self.is_punct("["):
            self.next()
            while not self.is_punct("]"):
                k = self.next()
                if k.kind != "word":
                    self.error(f"expected a parameter name, but got {k.text!r}", k)
                self.expect("=")
                raw[k.text] = (self.value(), k)
            self.next()
        inputs: list[Atom] = []
        while True:
            a = self.atom(scope, required=False)
            if a is None:
                break
            inputs.append(a)
        params = self.decode_params(prim, raw, inputs, [ty for _, ty, _ in binder_toks], pt)
        try:
            out_avals = prim.abstract_eval([a.aval for a in inputs], params)
        except JaxprTypeError as e:
            self.error(str(e), pt)
        if len(out_avals) != len(binder_toks):
            self.error(f"{prim.name}: expected {len(out_avals)} binders, but got {len(binder_toks)}", pt)
        outvars = []
        for (name, ty, _), aval in zip(binder_toks, out_avals):
            if not isinstance(aval, ShapedArray) or aval.strip_weak_type() is not ty:
                self.error(f"{prim.name}: expected binder {name.text!r} of type "
                           f"{aval.str_short()}, but got {ty.str_short()}", name)
            v = Var(aval)
            if name.text != "_":
                if name.text in scope:
                    self.error(f"variable {name.text!r} is bound twice", name)
                scope[name.text] = v
            outvars.append(v)
        return Eqn(prim, tuple(inputs), params, tuple(outvars), prim.effects(params))

    def decode_params(self, prim: Any, raw: dict[str, tuple[Any, _Tok]], inputs: list[Atom],
                      out_types: list[ShapedArray], at: _Tok) -> Params:
        defs = prim.params_by_name
        in_avals = [a.aval for a in inputs]
        params: dict[str, Any] = {}
        for name, (value, tok) in raw.items():
            d = defs.get(name)
            if d is None:
                self.error(f"{prim.name}: expected a parameter among ({', '.join(defs)}), "
                           f"but got {name!r}", tok)
            try:
                params[name] = d.decode(value)
            except ValueError as e:
                self.error(f"{prim.name}: parameter {name}: {e}", tok)
        for d in prim.param_defs:
            if d.name not in params:
                if d.default is REQUIRED:
                    self.error(f"{prim.name}: expected parameter {d.name!r}, but it is missing", at)
                params[d.name] = d.default_for(in_avals, out_types)
        return Params({d.name: params[d.name] for d in prim.param_defs})

    def value(self) -> Any:
        t = self.peek()
        if t.kind == "punct" and t.text == "{":
            return ClosedJaxpr(self.jaxpr())
        if t.kind == "punct" and t.text in "([":
            close = ")" if t.text == "(" else "]"
            self.next()
            items = []
            while not self.is_punct(close):
                items.append(self.value())
                if self.is_punct(","):
                    self.next()
            self.next()
            return tuple(items) if close == ")" else list(items)
        self.next()
        if t.kind == "num":
            return float(t.text) if any(c in t.text for c in ".eEn") else int(t.text)
        if t.kind == "word":
            if t.text in ("None", "True", "False"):
                return {"None": None, "True": True, "False": False}[t.text]
            return self.shared.get(t.text, t.text)
        self.error(f"expected a parameter value, but got {t.text or 'end of input'!r}", t)

    def atom(self, scope: dict[str, Var], required: bool) -> Atom | None:
        t = self.peek()
        if t.kind in ("num", "complex") or (t.kind == "word" and t.text in _LITERAL_WORDS
                                           and self.is_punct(":", 1)):
            if t.kind == "word" and not required and self.starts_binder(scope):
                return None
            self.next()
            self.expect(":")
            ty = self.type()
            return self.literal(t, ty)
        if t.kind == "word" and t.text in scope and not self.is_punct(":", 1):
            self.next()
            return scope[t.text]
        if required:
            self.error(f"expected a variable or literal, but got {t.text or 'end of input'!r}")
        return None

    def literal(self, t: _Tok, ty: ShapedArray) -> Literal:
        text = t.text
        try:
            value: Any
            if t.kind == "complex":
                value = complex(text)
            elif text in ("True", "False"):
                value = text == "True"
            elif dtypes.is_integer(ty.dtype):
                value = int(text)
            elif dtypes.is_complex(ty.dtype):
                value = complex(text)
            elif dtypes.is_float(ty.dtype):
                value = float(text)
            else:
                value = text
            return Literal(value, ty)
        except (TypeError, ValueError) as e:
            self.error(f"invalid literal {text}:{ty.str_short()}: {e}", t)


def parse_jaxpr(text: str) -> Jaxpr:
    """Read a jaxpr from its printed form.

    Raises:
      JaxprParseError: the text is not a well-formed, well-typed jaxpr; the
        message gives the line and column.
    """
    return _Parser(text).toplevel()

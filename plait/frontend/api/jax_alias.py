"""``import jax`` served by plait: an import hook, so that libraries written against
JAX's public API (optax, for one) run on plait without changing a line of theirs.

The hook answers ``jax`` with a module standing for :mod:`plait` (every attribute is
plait's, but ``__version__`` is the JAX version whose API plait follows, which is what
libraries compare), and ``jax.<name>`` with ``plait.<name>``.  ``jaxlib`` stays the real
one: plait runs on it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from plait.ir.errors import JaxAliasError
from plait.lowering import runtime

__all__ = ["JAX_API_VERSION", "alias_jax", "jax_alias_installed"]

JAX_API_VERSION: Final = "0.10.2"
"""The JAX release whose public API plait follows, and is tested against."""


def _facade() -> types.ModuleType:
    # The public package: imported already, as it is the parent of this module.  (Nothing
    # under plait/ imports the facade itself.)
    return sys.modules["plait"]


class _JaxModule(types.ModuleType):
    """``sys.modules['jax']`` under the alias: plait's attributes, JAX's version."""

    def __getattr__(self, name: str) -> Any:
        if name in ("version", "_src"):  # (JAX's modules, found before they are imported)
            return importlib.import_module(f"jax.{name}")
        try:
            return getattr(_facade(), name)
        except AttributeError:
            raise AttributeError(f"module 'jax' (plait, by plait.compat.alias_jax) has no "
                                 f"attribute {name!r}: plait has no counterpart of "
                                 f"jax.{name}") from None

    def __dir__(self) -> list[str]:
        return sorted(set(dir(_facade())) | set(self.__dict__))


_VERSION_INFO: Final = tuple(int(p) for p in JAX_API_VERSION.split("."))


def _version_module() -> types.ModuleType:
    m = types.ModuleType("jax.version", "JAX's version, as plait follows it.")
    m.__version__ = m._version = JAX_API_VERSION  # type: ignore[attr-defined]  # (module attributes)
    m.__version_info__ = _VERSION_INFO  # type: ignore[attr-defined]  # (module attribute)
    return m


def _plait_module(fullname: str) -> types.ModuleType | None:
    """The plait module ``jax.a.b`` stands for: ``plait.a.b`` imported, or an attribute of
    its parent that is a module (``plait.lax.linalg``); ``None`` if there is none."""
    target = "plait" + fullname[len("jax"):]
    try:
        if importlib.util.find_spec(target) is not None:
            return importlib.import_module(target)
    except ModuleNotFoundError:
        pass
    parent, _, name = target.rpartition(".")
    owner = sys.modules.get(parent)
    found = getattr(owner, name, None)
    return found if isinstance(found, types.ModuleType) else None


class _Loader(importlib.abc.Loader):
    """Hands over a module that exists already (plait's), keeping its own spec."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.own_spec = getattr(module, "__spec__", None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        # importlib has just stored the jax.* spec on the module; plait's modules keep
        # their own, so that their relative imports and pickling stay plait's.
        if self.own_spec is not None:
            module.__spec__ = self.own_spec


_INTERNAL_TWINS: Final = {
    "jax._src.api": "plait",
    "jax._src.checkify": "plait.experimental.checkify",
    "jax._src.compiler": "plait.lowering.compiler",
    "jax._src.flatten_util": "plait.flatten_util",
    "jax._src.lax.lax": "plait.lax",
    "jax._src.lib.mlir.dialects": "plait.extend.mlir.dialects",
    "jax._src.typing": "plait.typing",
}
"""The modules of JAX's internals that libraries import for names the public API has too
(blackjax's ``from jax._src.flatten_util import ravel_pytree``, flax's ``from jax._src
import checkify``), served by plait's public
module of those names, and ``jax._src.compiler``, whose ``backend_compile_and_load`` chex
wraps to restrict compilation (every compilation of plait calls plait's function of that
name); and ``jax._src.api``, ``jax._src.lax.lax`` and ``jax._src.lib.mlir.dialects``,
which JAX's tutorial on primitives imports.  The rest of ``jax._src`` is not served."""


class _StartedBackends(Mapping[str, Any]):
    """JAX's ``xla_bridge._backends`` (its clients by platform): empty until the runtime
    starts, then plait's one client.  chex reads it to tell whether setting the number
    of CPU devices still has an effect."""

    def _live(self) -> dict[str, Any]:
        return {runtime.client().platform: runtime.client()} if runtime.started() else {}

    def __getitem__(self, platform: str) -> Any:
        return self._live()[platform]

    def __iter__(self) -> Iterator[str]:
        return iter(self._live())

    def __len__(self) -> int:
        return len(self._live())


backends = _StartedBackends()


class TypedInt(int):
    """JAX's Python ``int`` carrying a dtype (``jax._src.literals``). plait's literals are
    plain Python scalars, so no value plait makes is one; the class is served for libraries
    that register conversions of it (quax)."""

    dtype: Any


class TypedFloat(float):
    """JAX's Python ``float`` carrying a dtype; as :class:`TypedInt`, plait makes none."""

    dtype: Any


class TypedComplex(complex):
    """JAX's Python ``complex`` carrying a dtype; as :class:`TypedInt`, plait makes none."""

    dtype: Any


_INTERNAL_PARTS: Final = {
    "jax._src.ad_util": {"stop_gradient_p": "plait.ir.primitives:stop_gradient_p"},
    "jax._src.api_util": {"*": "plait.api_util"},
    "jax._src.core": {
        **{name: f"plait.core:{name}"
           for name in ("AbstractValue", "ClosedJaxpr", "Jaxpr", "ShapedArray", "Trace",
                        "Tracer", "eval_jaxpr", "jaxpr_as_fun", "trace_state_clean")},
        **{name: f"plait.extend.core:{name}"
           for name in ("Primitive", "TraceTag", "set_current_trace", "take_current_trace")},
        "EvalTrace": "plait.frontend.api.user_traces:EvalTrace",
        "full_lower": "plait.frontend.api.user_traces:full_lower",
        "get_aval": "plait:typeof",
        "pytype_aval_mappings": "plait.frontend.core.array_likes:aval_mappings"},
    "jax._src.literals": {name: f"plait.frontend.api.jax_alias:{name}"
                          for name in ("TypedComplex", "TypedFloat", "TypedInt")},
    "jax._src.pjit": {"jit_p": "plait.ir.primitives:jit_p"},
    "jax._src.dtypes": {
        **{name: f"plait.dtypes:{name}"
           for name in ("TypePromotionError", "canonicalize_dtype", "extended", "finfo",
                        "float0", "iinfo", "issubdtype", "prng_key", "result_type")},
        "DType": "numpy:dtype",
        "ExtendedDType": "plait.frontend.core.dtype_queries:ExtendedDType",
        "supports_inf": "plait.frontend.core.dtype_queries:supports_inf"},
    "jax._src.distributed": {"global_state": "plait.frontend.api.devices:global_state"},
    "jax._src.dispatch": {
        "wait_for_tokens": "plait.frontend.api.environment:effects_barrier"},
    "jax._src.state.types": {"AbstractRef": "plait.frontend.core.refs:AbstractRef"},
    "jax._src.util": {"safe_map": "plait.api_util:safe_map"},  # (JAX's interpreter tutorial)
    # (flax's sharding guide asks whether the runtime has started.)
    "jax._src.xla_bridge": {"backends_are_initialized": "plait.lowering.runtime:started",
                            "_backends": "plait.frontend.api.jax_alias:backends"},
    "jax._src.tree_util": {
        "*": "plait.tree_util",
        "_registry": "plait.frontend.core.tree_util:node_types"},
    "jax._src.traceback_util": {
        "api_boundary": "plait.frontend.core.traceback_util:api_boundary",
        "include_frame": "plait.frontend.core.traceback_util:include_frame",
        "register_exclusion": "plait.frontend.core.traceback_util:register_exclusion",
        "_exclude_paths": "plait.frontend.core.traceback_util:excluded_paths"},
}
"""The modules of JAX's internals served in part, by JAX's name: where each name comes
from (``module:name``; ``"*"`` names a module all of whose public names are served).
numpyro calls ``jax._src.core.trace_state_clean`` to skip caching
while tracing; flax and equinox register their files with ``jax._src.traceback_util``
(so that they count as internal code: ``_exclude_paths`` is plait's list itself); chex
reads ``jax._src.xla_bridge._backends``; flax
subclasses ``jax._src.dtypes.ExtendedDType``; equinox waits for pending effects at exit
with ``jax._src.dispatch.wait_for_tokens`` (plait's ``effects_barrier``); flax nnx tests
``type in jax._src.tree_util._registry`` (the types plait's registry flattens as nodes)
and imports ``jax._src.state.types.AbstractRef``; e3nn-jax (jax-md's) imports
``jax._src.api_util.infer_argnums_and_argnames``; lineax gives
``jax._src.ad_util.stop_gradient_p`` a transpose rule; quax defines its trace with
``jax._src.core``'s ``Trace``, ``Tracer``, ``TraceTag``, ``take_current_trace``,
``set_current_trace`` and ``full_lower``, handles ``jax._src.pjit.jit_p`` and registers
conversions for ``jax._src.literals``' typed scalars; orbax asks
``jax._src.distributed.global_state.client`` whether the distributed runtime is up.  Any
other name
of theirs raises ``AttributeError``."""


class _InternalPart(types.ModuleType):
    """A module of :data:`_INTERNAL_PARTS`: the names it serves, and no others."""

    def __getattr__(self, name: str) -> Any:
        served = ", ".join(f"the public names of {source}" if name == "*" else name
                           for name, source in _INTERNAL_PARTS[self.__name__].items())
        raise AttributeError(f"module {self.__name__!r} (plait, by plait.compat.alias_jax) "
                             f"has no attribute {name!r}: of JAX's internals it serves "
                             f"only {served}")


def _internal_part(fullname: str) -> types.ModuleType:
    names = _INTERNAL_PARTS[fullname]
    module = _InternalPart(fullname, f"Part of JAX's {fullname}, served by plait.")
    for name, source in names.items():
        if name == "*":
            whole = importlib.import_module(source)
            for public in whole.__all__:
                setattr(module, public, getattr(whole, public))
            continue
        source_module, source_name = source.split(":")
        setattr(module, name, getattr(importlib.import_module(source_module), source_name))
    return module


class _JaxInternals(types.ModuleType):
    """``jax._src`` (or a package of it, as ``jax._src.state``) under the alias: a
    package holding only :data:`_INTERNAL_TWINS` and
    :data:`_INTERNAL_PARTS`."""

    def __getattr__(self, name: str) -> Any:
        # (A served module is an attribute before it is imported, as JAX's are: ``import
        # jax`` imports them all.)
        fullname = f"{self.__name__}.{name}"
        if fullname in _INTERNAL_PARTS or fullname in _INTERNAL_TWINS:
            return importlib.import_module(fullname)
        raise AttributeError(f"module {self.__name__!r} (plait, by plait.compat.alias_jax) "
                             f"has no attribute {name!r}: JAX's internals are not served")


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``jax`` and ``jax.*`` in plait, before any other finder can find JAX."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname == "jax":
            module: types.ModuleType = _JaxModule("jax", "JAX's API, served by plait.")
            module.__path__ = []
            module.__version__ = JAX_API_VERSION  # type: ignore[attr-defined]  # (module attribute)
            module.__version_info__ = _VERSION_INFO  # type: ignore[attr-defined]  # (module attribute)
        elif fullname == "jax.version":
            module = _version_module()
        elif fullname == "jax._src" or any(part.startswith(fullname + ".")
                                           for part in (*_INTERNAL_PARTS, *_INTERNAL_TWINS)):
            module = _JaxInternals(fullname, "JAX's internals: only the modules of "
                                   "_INTERNAL_TWINS (by their public twins) and "
                                   "_INTERNAL_PARTS are served.")
            module.__path__ = []
        elif fullname in _INTERNAL_TWINS:
            module = importlib.import_module(_INTERNAL_TWINS[fullname])
        elif fullname in _INTERNAL_PARTS:
            module = _internal_part(fullname)
        elif fullname.startswith("jax."):
            found = _plait_module(fullname)
            if found is None:
                raise ModuleNotFoundError(
                    f"No module named {fullname!r}: plait, serving 'jax' "
                    f"(plait.compat.alias_jax), has no plait{fullname[3:]}", name=fullname)
            module = found
        else:
            return None
        # Every jax.* module is a package to importlib, so that ``import jax.lax.linalg``
        # reaches this finder even where plait's counterpart is a module's attribute
        # (importlib then gives such a module an empty ``__path__``).
        return importlib.machinery.ModuleSpec(fullname, _Loader(module), is_package=True)


_FINDER: Final = _Finder()


def jax_alias_installed() -> bool:
    """Whether ``import jax`` gives plait in this process."""
    return _FINDER in sys.meta_path


def alias_jax() -> None:
    """Make ``import jax`` and ``import jax.<name>`` import plait and ``plait.<name>`` in
    this process, for libraries written against JAX's public API.  Call it before
    anything imports JAX; calling it again does nothing.

    A ``jax.<name>`` plait has no counterpart of raises ``ModuleNotFoundError`` naming
    it; JAX's internals (``jax._src``) are among those, but for the few modules that
    libraries import for public names (``jax._src.flatten_util``, ``jax._src.tree_util``,
    ``jax._src.typing``), which get plait's public modules of those names, and parts of
    ``jax._src.core``, ``jax._src.dtypes`` and ``jax._src.traceback_util`` (the names
    libraries use, from plait's modules).

    Raises:
      JaxAliasError: JAX itself is already imported in this process.
    """
    if jax_alias_installed():
        return
    real = sorted(n for n in sys.modules if n == "jax" or n.startswith("jax."))
    if real:
        raise JaxAliasError(f"alias_jax: expected JAX not to be imported yet, but got "
                            f"{', '.join(real[:3])}{', ...' if len(real) > 3 else ''} in "
                            "sys.modules: call plait.compat.alias_jax() first thing, or run "
                            "the program with python -m plait run")
    sys.meta_path.insert(0, _FINDER)

"""Test configuration: every jaxpr a transformation produces is type-checked."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator

import hypothesis
import pytest

import plait

plait.config.update("check_jaxprs", True)

hypothesis.settings.register_profile("default", deadline=None, max_examples=60)
hypothesis.settings.register_profile("slow", deadline=None, max_examples=600)
hypothesis.settings.load_profile(os.environ.get("PLAIT_HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True, scope="module")
def _release_executables() -> Iterator[None]:
    """Free each module's compiled programs when it ends.

    Every XLA:CPU executable holds a few dozen memory mappings; a full run keeps
    thousands alive in plait's and JAX's caches, passes Linux's
    ``vm.max_map_count`` (65530) and XLA's compiler dies with SIGSEGV when its
    next ``mmap`` fails.
    """
    yield
    plait.clear_caches()
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.clear_caches()
    gc.collect()

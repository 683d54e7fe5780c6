"""Test configuration: every jaxpr a transformation produces is type-checked."""

from __future__ import annotations

import os

import hypothesis

import plait

plait.config.update("check_jaxprs", True)

hypothesis.settings.register_profile("default", deadline=None, max_examples=60)
hypothesis.settings.register_profile("slow", deadline=None, max_examples=600)
hypothesis.settings.load_profile(os.environ.get("PLAIT_HYPOTHESIS_PROFILE", "default"))

"""Shared fixtures: variants loaded from the real YAML files."""

from __future__ import annotations

import pytest

from board_driver.config import load_variant


@pytest.fixture(scope="session")
def variant():
    """variant("tomorrow-1") -> the Variant from configs/variants/tomorrow-1.yaml."""
    cache = {}

    def get(name: str):
        if name not in cache:
            cache[name] = load_variant(name)
        return cache[name]

    return get

"""Shared fixtures: variants loaded from the real YAML files."""

from __future__ import annotations

import os

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


@pytest.fixture(scope="session", autouse=True)
def _a_data_folder_of_its_own(tmp_path_factory):
    """A command a test runs without naming its data folder writes to this session's (one per
    pytest-xdist worker), never to the user's games, and never holds a folder another worker
    uses (one play or serve at a time per folder)."""
    before = os.environ.get("FAIRYBOARD_DATA")
    os.environ["FAIRYBOARD_DATA"] = str(tmp_path_factory.mktemp("fairyboard-data"))
    yield
    if before is None:
        os.environ.pop("FAIRYBOARD_DATA", None)
    else:
        os.environ["FAIRYBOARD_DATA"] = before


def pytest_collection_modifyitems(config, items):
    """Files with slow tests run first (a file's tests keep their order). Most slow tests wait
    on something (a broker, a delayed link, a browser, a clock): started first, under
    scripts/test's ``--dist loadfile --no-loadscope-reorder`` they run beside the files that
    keep a core busy, not one by one at the end of the run. So do files with a test marked
    ``long`` (a quick-lane test that takes long on one core: the type checkers), so that the
    quick lane does not end on one busy worker."""
    slow = {item.path for item in items if item.get_closest_marker("slow") or item.get_closest_marker("long")}
    items.sort(key=lambda item: item.path not in slow)

"""The type checker passes over engine/, firmware_bridge/ and board_driver/: mypy, as configured
in pyproject.toml's [tool.mypy] (check_untyped_defs; stubs for yaml and serial)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_passes_over_the_three_packages():
    pytest.importorskip("mypy", reason="mypy is in the test extras: pip install -e '.[test]'")
    # no cache: nothing is written into the checkout, and a stale cache cannot hide an error
    run = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", "/dev/null"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"mypy found type errors:\n{run.stdout}{run.stderr}"
    assert "Success: no issues found" in run.stdout, run.stdout

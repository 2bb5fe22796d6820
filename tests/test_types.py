"""The type checkers pass: mypy over engine/, firmware_bridge/ and board_driver/, as configured
in pyproject.toml's [tool.mypy] (check_untyped_defs; stubs for yaml and serial), and pyright in
basic mode ([tool.pyright]) over the packages PYRIGHT_PACKAGES names."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYRIGHT = ROOT / "tests" / "pico_harness" / "node_modules" / ".bin" / "pyright"
# the packages pyright checks at 0 errors
PYRIGHT_PACKAGES = ("engine", "firmware_bridge", "board_driver")


@pytest.mark.long
def test_mypy_passes_over_the_three_packages():
    pytest.importorskip("mypy", reason="mypy is in the test extras: pip install -e '.[test]'")
    # the cache outside the checkout (nothing written into it); mypy's incremental mode checks
    # each module's hash, so a later run costs about 1 s instead of 6 in the quick lane
    cache = Path(tempfile.gettempdir()) / f"fairyboard-mypy-{hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]}"
    run = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache)], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"mypy found type errors:\n{run.stdout}{run.stderr}"
    assert "Success: no issues found" in run.stdout, run.stdout


@pytest.mark.slow     # 35-50 s of one core, a whole-program check each time: the whole suite runs it, the
def test_pyright_basic_finds_no_error():   # quick lane keeps mypy (incremental: about 1 s once its cache is warm)
    if shutil.which("node") is None:
        pytest.skip("node is not installed: pyright (installed by scripts/pico-deps) needs it")
    if not PYRIGHT.exists():
        pytest.skip(f"{PYRIGHT.relative_to(ROOT)} is missing: run bash scripts/pico-deps")
    run = subprocess.run([str(PYRIGHT), "--outputjson", "--pythonpath", sys.executable, *PYRIGHT_PACKAGES],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    report = json.loads(run.stdout)
    errors = [f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
              for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert not errors, f"pyright (basic) found {len(errors)} errors:\n" + "\n".join(errors)
    assert report["summary"]["filesAnalyzed"] > 0 and run.returncode == 0, run.stderr

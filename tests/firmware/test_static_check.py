"""A static check of the firmware against MicroPython's real API: pyright (npm, pinned in
tests/pico_harness, installed by scripts/pico-deps) with PyPI's micropython-rp2-rpi_pico-stubs and
micropython-stdlib-stubs (the test extras) as the only library -- no CPython standard library --
over hardware/firmware. fb_main builds the hardware with the real machine, neopixel and time, and
fb_core's classes name the types they are given (type comments), so the calls on them are
checked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

import pico_emu

FIRMWARE = pico_emu.FIRMWARE_DIR
PYRIGHT = pico_emu.HARNESS_DIR / "node_modules" / ".bin" / "pyright"
SITE = Path(sysconfig.get_paths()["purelib"])


def pyright(tmp_path: Path, firmware: Path = FIRMWARE) -> tuple[int, str]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the static check (pyright) runs on node")
    pico_emu.ensure_harness()
    for stub in (SITE / "machine.pyi", SITE / "neopixel.pyi", SITE / "stdlib" / "VERSIONS"):
        assert stub.exists(), f"{stub} missing: pip install -e '.[test]' (micropython-*-stubs)"
    config = {
        "include": [os.path.relpath(firmware, tmp_path)],
        "typeshedPath": str(SITE),        # MicroPython's standard library stubs (stdlib/)
        "extraPaths": [str(firmware), str(SITE)],    # fb_*, then machine, neopixel, rp2 ...
        "pythonVersion": "3.11",
        "typeCheckingMode": "basic",
        "reportMissingModuleSource": "none",
    }
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    r = subprocess.run([str(PYRIGHT), "-p", str(tmp_path / "pyrightconfig.json")], capture_output=True,
                       text=True, cwd=tmp_path, timeout=300)
    return r.returncode, r.stdout + r.stderr


def test_the_firmware_passes_the_static_check_against_micropythons_api(tmp_path):
    code, out = pyright(tmp_path)
    assert code == 0 and "0 errors" in out, out


@pytest.mark.slow
def test_the_static_check_catches_misuse_of_the_hardware_api(tmp_path):
    bad = tmp_path / "firmware"
    shutil.copytree(FIRMWARE, bad)
    main = (bad / "fb_main.py").read_text()
    main = main.replace("time.ticks_diff(time.ticks_cpu(), 0) & 0xFFFF", "time.ticks_cpu() & 0xFFFF")
    main = main.replace("Pin(n, Pin.IN, Pin.PULL_UP)", "Pin(n, Pin.INPUT, Pin.PULL_UP)")
    (bad / "fb_main.py").write_text(main)
    core = (bad / "fb_core.py").read_text().replace("        strip.write()\n", "        strip.show()\n")
    (bad / "fb_core.py").write_text(core)
    code, out = pyright(tmp_path, bad)
    assert code != 0, out
    assert 'Operator "&" not supported for types "_TicksCPU"' in out, out
    assert '"INPUT"' in out and '"show"' in out, out

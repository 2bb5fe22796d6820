"""What keeps the command line's start-up short: only the dispatched command's module is
imported, YAML goes through libyaml, move tables are compiled on first use, install-service
byte-compiles the package. (The times themselves are measured by tests/bench/bench_startup.py.)"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from pathlib import Path

import yaml

from board_driver import cli, config

ROOT = Path(__file__).resolve().parents[2]
FAIRYBOARD = str(Path(sys.executable).with_name("fairyboard"))


def registered() -> list[tuple[str, str, str]]:
    out = []
    for module in cli.COMMAND_MODULES:
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        importlib.import_module(f"board_driver.cli.{module}").register(sub)
        out += [(a.dest, module, a.help) for a in sub._choices_actions]
    return out


def test_the_command_table_is_what_the_modules_register():
    table = list(cli.COMMANDS)
    have = registered()
    missing = [c for c in have if c not in table]
    stale = [c for c in table if c not in have]
    assert not missing and not stale, (f"board_driver/cli/__init__.py COMMANDS lacks {missing} "
                                       f"and lists {stale} that no module registers")


def loaded_after(argv: list[str]) -> tuple[str, set[str]]:
    """Run the CLI's main in a fresh interpreter; (its output, the modules it imported)."""
    code = ("import io, contextlib, json, sys\n"
            "from board_driver.cli import main\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            "    try:\n"
            f"        main({argv!r})\n"
            "    except SystemExit:\n"
            "        pass\n"
            "tables = sys.modules.get('engine.tables')\n"
            "print(json.dumps([out.getvalue(), sorted(sys.modules), bool(tables and tables._CACHE)]))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    text, modules, compiled = json.loads(r.stdout)
    return text, set(modules), compiled


def test_help_lists_every_command_and_imports_none_of_their_modules():
    text, modules, _ = loaded_after(["--help"])
    for name, _, _ in cli.COMMANDS:
        assert f"    {name}" in text, name
    assert not [m for m in modules if m.startswith("board_driver.cli.")]
    assert not [m for m in modules if m.startswith(("engine", "yaml", "chess"))]


def test_variants_reads_the_configs_without_the_driver_the_games_or_the_move_tables():
    text, modules, compiled = loaded_after(["variants"])
    assert "orthodox" in text and "tomorrow-1" in text
    assert modules & {"board_driver.cli.engine_cmds", "board_driver.config"}
    heavy = {"board_driver.referee.session", "board_driver.sim.console", "engine.game", "engine.csipgs", "chess", "serial",
             "board_driver.cli.play_cmds", "board_driver.cli.hw_cmds", "importlib.resources"}
    assert not modules & heavy, modules & heavy
    assert not compiled, "listing the variants compiled move tables"


def test_yaml_goes_through_libyaml_when_pyyaml_has_it(tmp_path):
    if yaml.__with_libyaml__:
        assert config._SAFE_LOADER is yaml.CSafeLoader
    else:
        assert config._SAFE_LOADER is yaml.SafeLoader
    # a syntax error is still reported with its line, and unsafe tags are refused
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\n  pieces: [\n", encoding="utf-8")
    try:
        config.read_yaml(bad)
    except Exception as exc:
        assert "line 2" in str(exc) and "invalid YAML" in str(exc), exc
    else:
        raise AssertionError("bad YAML was read")
    unsafe = tmp_path / "unsafe.yaml"
    unsafe.write_text("x: !!python/object/apply:os.system ['true']\n", encoding="utf-8")
    try:
        config.read_yaml(unsafe)
    except Exception as exc:
        assert "invalid YAML" in str(exc), exc
    else:
        raise AssertionError("a python tag was read")


def test_a_dispatched_command_runs_and_a_typo_lists_every_command():
    r = subprocess.run([FAIRYBOARD, "perft", "2"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.split()[-1] == "400"
    r = subprocess.run([FAIRYBOARD, "perfect", "2"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "invalid choice: 'perfect'" in r.stderr and "'install-service'" in r.stderr


def test_install_service_byte_compiles_the_packages(tmp_path):
    r = subprocess.run([FAIRYBOARD, "install-service", "--root", str(tmp_path), "--board", "pico-serial",
                        "--bin", FAIRYBOARD, "--user", "pi"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "compileall" in x)
    for package in ("engine", "firmware_bridge", "board_driver"):
        folder = Path(importlib.import_module(package).__file__).parent
        assert str(folder) in line
    # ... and the command it prints does the job
    cmd = line.split("then run: ", 1)[1].split()
    target = tmp_path / "pkg"
    (target / "sub").mkdir(parents=True)
    (target / "sub" / "m.py").write_text("X = 1\n", encoding="utf-8")
    subprocess.run(cmd[:4] + [str(target)], check=True, timeout=120)
    assert list((target / "sub" / "__pycache__").glob("m.*.pyc"))

"""The matrix scanned a register at a time (GPSET0/GPCLR0/GPLEV0 through /dev/gpiomem on a Pi
1-4): the same closed switches as the pin-by-pin scan, in a quarter of the operations, and the
registers where the BCM2835 datasheet puts them."""

from __future__ import annotations

import struct

import pytest
from fake_gpio import PI_COLUMNS as COLUMNS
from fake_gpio import PI_ROWS as ROWS
from fake_gpio import FakeGPIO

from board_driver.hardware.gpio_matrix import GpioMatrix, MatrixConfig
from board_driver.hardware.gpio_registers import MappedRegisters, open_registers

CONFIG = MatrixConfig(ROWS, COLUMNS, settle_us=10, scan_ms=10)


def both(reed, clock, config=CONFIG, **fake):
    """A matrix scanning pin by pin and one scanning by registers, each on its own fake Pi."""
    pins, regs = FakeGPIO(reed, rows=ROWS, columns=COLUMNS, **fake), FakeGPIO(reed, rows=ROWS, columns=COLUMNS, **fake)
    by_pin = GpioMatrix(config, gpio=pins, clock=clock, sleep=clock.sleep, delay_us=pins.delay_us)
    by_reg = GpioMatrix(config, gpio=regs, clock=clock, sleep=clock.sleep, delay_us=regs.delay_us,
                        registers=regs.registers())
    return by_pin, by_reg, regs


def test_every_square_and_full_board_read_the_same_as_pin_by_pin(reed, clock):
    by_pin, by_reg, _ = both(reed, clock)
    for sq in range(96):
        reed.set_pieces([sq])
        assert by_reg.scan() == by_pin.scan() == {sq}, reed.geometry.name(sq)
    for pieces in (["a1", "b1", "a2"], set(range(96)) - {13}, range(96), ()):
        reed.set_pieces(pieces)
        assert by_reg.scan() == by_pin.scan() == set(reed.pieces)


def test_faults_read_the_same_as_pin_by_pin(reed, clock):
    reed.no_diode("c3")
    reed.stick("h5")
    reed.reach("k2", "k3")
    by_pin, by_reg, _ = both(reed, clock)
    for pieces in (["c3", "c6", "f3"], ["k2"], ["c3", "f6"]):
        reed.set_pieces(pieces)
        got = by_reg.scan()
        assert got == by_pin.scan()
        assert reed.sq("h5") in got
    reed.set_pieces(["c3", "c6", "f3"])
    assert reed.sq("f6") in by_reg.scan()         # the missing diode's ghost, as on the pins


def test_the_settle_is_kept_a_register_at_a_time(reed, clock):
    reed.set_pieces(["e4", "l8"])
    short = MatrixConfig(ROWS, COLUMNS, settle_us=10)
    _, by_reg, _ = both(reed, clock, short, fall_us=15)
    assert by_reg.scan() == {reed.sq("e4"), reed.sq("e5"), reed.sq("l8")}     # too short: a phantom on e5
    _, by_reg, _ = both(reed, clock, MatrixConfig(ROWS, COLUMNS, settle_us=20), fall_us=15)
    assert by_reg.scan() == {reed.sq("e4"), reed.sq("l8")}


def test_one_row_high_at_a_time_in_24_operations(reed, clock):
    _, by_reg, gpio = both(reed, clock)
    reed.set_pieces(range(96))
    highs = []
    regs = by_reg.registers
    assert regs is not None
    real = regs.levels

    def spy():
        highs.append(sum(1 for g in ROWS if gpio.pins[g].level))
        return real()
    regs.levels = spy             # type: ignore[method-assign]
    before = len(gpio.calls)
    assert len(by_reg.scan()) == 96
    calls = gpio.calls[before:]
    assert highs == [1] * 8
    assert not any(gpio.pins[g].level for g in ROWS)
    assert [c[0] for c in calls].count("levels") == 8
    assert len(calls) == 24 and not any(c[0] in ("input", "output") for c in calls)


def test_close_closes_the_registers_and_releases_the_pins(reed, clock):
    _, by_reg, gpio = both(reed, clock)
    by_reg.close()
    assert by_reg.registers is not None and by_reg.registers.closed    # type: ignore[attr-defined]
    assert not set(gpio.pins) & set(ROWS + COLUMNS)


def test_mapped_registers_are_at_the_datasheets_offsets(tmp_path):
    # BCM2835 ARM Peripherals, 6.1: GPSET0 at 0x7E20001C, GPCLR0 at 0x7E200028, GPLEV0 at
    # 0x7E200034; /dev/gpiomem maps the block from 0x7E200000
    mem = tmp_path / "gpiomem"
    mem.write_bytes(bytes(4096))
    with mem.open("r+b") as f:
        f.seek(0x34)
        f.write(struct.pack("<I", 0x0401_2008))
    regs = MappedRegisters(mem)
    regs.set(1 << 17)
    regs.clear(1 << 4 | 1 << 27)
    assert regs.levels() == 0x0401_2008
    regs.close()
    regs.close()
    data = mem.read_bytes()
    assert struct.unpack_from("<I", data, 0x1C)[0] == 1 << 17
    assert struct.unpack_from("<I", data, 0x28)[0] == 1 << 4 | 1 << 27
    assert data.count(0) == 4096 - 3 - 4      # nothing else written


def device_tree(tmp_path, *names: str):
    proc = tmp_path / "device-tree"
    proc.mkdir()
    (proc / "compatible").write_bytes(b"".join(n.encode() + b"\0" for n in names))
    return proc


@pytest.mark.parametrize("names, used", [
    (("raspberrypi,4-model-b", "brcm,bcm2711"), True),
    (("raspberrypi,model-zero-2-w", "brcm,bcm2837"), True),
    (("raspberrypi,model-b-plus", "brcm,bcm2835"), True),
    (("raspberrypi,5-model-b", "brcm,bcm2712"), False),        # RP1: other registers
    (("pine64,pine64", "allwinner,sun50i-a64"), False),
])
def test_registers_are_used_only_on_a_pi_1_to_4(tmp_path, names, used):
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "gpiomem").write_bytes(bytes(4096))
    regs = open_registers(ROWS + COLUMNS, dev=dev, proc=device_tree(tmp_path, *names))
    assert (regs is not None) == used
    if regs is not None:
        regs.close()


def test_no_registers_without_the_device_or_for_pins_past_31(tmp_path):
    proc = device_tree(tmp_path, "brcm,bcm2711")
    assert open_registers(ROWS + COLUMNS, dev=tmp_path, proc=proc) is None          # no gpiomem
    (tmp_path / "gpiomem").write_bytes(bytes(4096))
    assert open_registers((2, 3, 40), dev=tmp_path, proc=proc) is None
    assert open_registers(ROWS + COLUMNS, dev=tmp_path, proc=tmp_path / "none") is None


def test_access_is_validated():
    from board_driver.errors import ConfigError
    from board_driver.hardware._check import Section
    data = {"backend": "gpio", "rows": list(ROWS), "columns": list(COLUMNS)}
    assert MatrixConfig.from_section(Section(data, "b.yaml", "hardware.sensors"), 12, 8).access == "auto"
    data["access"] = "pins"
    assert MatrixConfig.from_section(Section(data, "b.yaml", "hardware.sensors"), 12, 8).access == "pins"
    data["access"] = "fast"
    with pytest.raises(ConfigError, match="access"):
        MatrixConfig.from_section(Section(data, "b.yaml", "hardware.sensors"), 12, 8)

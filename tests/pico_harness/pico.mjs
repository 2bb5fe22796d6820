// An emulated Raspberry Pi Pico for the firmware tests: rp2040js running the stock MicroPython
// image with the firmware on its littlefs filesystem, a 12x8 reed-switch matrix on the pins of
// fb_pins.py, the WS2812 data pin timed edge by edge, and the USB CDC port bridged to this
// process's stdin/stdout (a pty master, so that the project's host code opens the slave like
// the Pico's /dev/ttyACM port).
//
//   node pico.mjs --bootrom ROM --image BIN --fs LFS [--pty] [--control-fd 3]
//
// Control: JSON lines on a socket (fd 3), one answer line per command. All times are the
// chip's simulated nanoseconds since power-up (they run on across a reset). Commands:
//   {"cmd": "run", "until_ns": T}     run the chip until T, then answer {"now": ...}
//   {"cmd": "run", "for_ms": M}       the same, M simulated ms from now
//   {"cmd": "free"}                   run on and on (a host drives it over the pty)
//   {"cmd": "realtime"}               run on and on, the chip's time held to the wall clock's
//                                     (never ahead of it: idle waits take their real time, so
//                                     a host's delays in wall time are the chip's too; when
//                                     the emulator falls behind it runs flat out to catch up)
//   {"cmd": "pause"}                  stop running; answers {"now": ...}
//   {"cmd": "now"}                    answers {"now": ..., "lag_ns": ...}, running on as it was
//   {"cmd": "send", "hex": "..."}     bytes from the host, fed to the USB port from now on
//   {"cmd": "closed", "sensors": [..]} the reed switches closed now (sensor = row * 12 + col)
//   {"cmd": "pin", "gpio": N, "value": 0|1}  drive a spare input (safe mode: GP28)
//   {"cmd": "pads"}                   each GPIO's pad drive strength code (3: 12 mA)
//   {"cmd": "hang"}                   the CPU stops making progress (a firmware that hangs):
//                                     no more instructions run; the clock, timers and the
//                                     watchdog run on
//   {"cmd": "log", "clear": true}     everything recorded since the last clear
//   {"cmd": "quit"}
import fs from 'node:fs';
import net from 'node:net';
import { Simulator, USBCDC, ConsoleLogger, LogLevel } from 'rp2040js';

const COLUMNS = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];
const ROWS = [14, 15, 16, 17, 18, 19, 20, 21];
const LED_DATA = 22;
const FS_OFFSET = 0xa0000;
const WS2812_LATCH_NS = 50000;      // low this long ends a frame (WS2812 reset)
const IN_FIFO_LIMIT = 192;          // bytes of the host's waiting in the emulated host's FIFO

const args = process.argv.slice(2);
function opt(name, dflt) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
}
const bootrom = new Uint32Array(new Uint8Array(fs.readFileSync(opt('--bootrom'))).buffer);
const image = new Uint8Array(fs.readFileSync(opt('--image')));
const fsImage = opt('--fs') ? new Uint8Array(fs.readFileSync(opt('--fs'))) : null;
const bridgePty = args.includes('--pty');
const controlFd = Number(opt('--control-fd', '3'));

// --- the record -------------------------------------------------------------------------------
let log = freshLog();
function freshLog() {
  return {
    out: [],        // [ns, hex] one entry per USB packet the board sent
    in: [],         // [ns, n]   host bytes the board's USB took, per packet
    boots: [],      // [ns, why] USB configured after power-up / reset
    resets: [],     // [ns, why]
    scans: [],      // ns at which column 0 went low (a matrix scan starts)
    leds: [],       // WS2812 frames, decoded (see ledFrame)
    cpu: null,      // busy/idle nanoseconds since the last clear
  };
}

let base = 0;             // nanoseconds of the chips before the last reset
let chip = null;          // {sim, mcu, cdc}
let flash = null;         // flash contents carried over a reset
let closed = new Set();
const pinInputs = new Map([[28, 1]]);   // GP28 (safe mode) has its pull-up: high
let pendingIn = [];       // host bytes not yet in the emulated host's FIFO
let pendingRead = null;   // an OUT transfer the board armed while the host had nothing
let resetWhy = null;
let busyNs = 0, idleNs = 0;
let frozen = false;

function now() {
  return base + (chip ? chip.sim.clock.nanos : 0);
}

// --- the reed matrix: a closed switch pulls its row low while its column is driven low -------
function updateRows() {
  const { mcu } = chip;
  const low = new Array(ROWS.length).fill(false);
  for (let c = 0; c < COLUMNS.length; c++) {
    const col = mcu.gpio[COLUMNS[c]];
    if (col.outputEnable && !col.outputValue) {
      for (let r = 0; r < ROWS.length; r++) {
        if (closed.has(r * COLUMNS.length + c)) low[r] = true;
      }
    }
  }
  for (let r = 0; r < ROWS.length; r++) mcu.gpio[ROWS[r]].setInputValue(!low[r]);
}

// --- WS2812 data: every edge, cut into frames at the latch -----------------------------------
let edges = [];           // [ns, level] of the frame being sent
let latchTimer = null;
function ledEdge(level) {
  const t = now();
  edges.push([t, level]);
  if (!level) {
    if (latchTimer) latchTimer.cancel();
    latchTimer = chip.sim.clock.createAlarm(() => { latchTimer = null; ledFrame(); });
    latchTimer.schedule(WS2812_LATCH_NS);
  }
}
function ledFrame() {
  const e = edges;
  edges = [];
  const bits = [];
  const t0h = [], t1h = [], period = [];
  let maxLow = 0;
  for (let i = 0; i + 1 < e.length; i++) {
    if (e[i][1] && !e[i + 1][1]) {
      const high = e[i + 1][0] - e[i][0];
      const bit = high > 625 ? 1 : 0;
      bits.push(bit);
      (bit ? t1h : t0h).push(high);
      if (i + 2 < e.length) {
        period.push(e[i + 2][0] - e[i][0]);
        maxLow = Math.max(maxLow, e[i + 2][0] - e[i + 1][0]);
      }
    }
  }
  const bytes = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) {
    let b = 0;
    for (let k = 0; k < 8; k++) b = (b << 1) | bits[i + k];
    bytes.push(b);
  }
  const range = (xs) => (xs.length ? [Math.min(...xs), Math.max(...xs)] : null);
  log.leds.push({
    start: e.length ? e[0][0] : now(), end: e.length ? e[e.length - 1][0] : now(),
    bits: bits.length, hex: Buffer.from(bytes).toString('hex'),
    t0h: range(t0h), t1h: range(t1h), period: range(period), max_low: maxLow,
  });
}

// --- the chip ---------------------------------------------------------------------------------
function boot(why) {
  const sim = new Simulator();
  const mcu = sim.rp2040;
  mcu.logger = new ConsoleLogger(LogLevel.Error);
  mcu.loadBootrom(bootrom);
  if (flash) {
    mcu.flash.set(flash, 0);
  } else {
    mcu.flash.set(image, 0);
    if (fsImage) mcu.flash.set(fsImage, FS_OFFSET);
  }
  mcu.core.PC = 0x10000000;
  // the pads' reset value per the RP2040 datasheet (2.19.6.3): 4 mA drive, input on, pull-down,
  // Schmitt trigger (rp2040js starts them at 0x36, a 12 mA drive)
  for (const g of mcu.gpio) g.padValue = 0x56;
  const cdc = new USBCDC(mcu.usbCtrl);
  chip = { sim, mcu, cdc };
  pendingRead = null;
  cdc.onDeviceConnected = () => log.boots.push([now(), why]);
  cdc.onSerialData = (buf) => {
    log.out.push([now(), Buffer.from(buf).toString('hex')]);
    if (bridgePty) process.stdout.write(Buffer.from(buf));
  };
  const usb = mcu.usbCtrl;
  const takeRead = usb.onEndpointRead;
  usb.onEndpointRead = (ep, size) => {
    // A real host sends nothing on an OUT endpoint until it has data: keep the transfer
    // armed instead of answering with empty packets every 10 us (which would busy the CPU).
    if (ep === cdc.outEndpoint && cdc.txFIFO.itemCount === 0) {
      pendingRead = [ep, size];
      return;
    }
    const before = cdc.txFIFO.itemCount;
    takeRead(ep, size);
    if (ep === cdc.outEndpoint && before > cdc.txFIFO.itemCount) {
      log.in.push([now(), before - cdc.txFIFO.itemCount]);
    }
  };
  const watchdog = mcu.peripherals[0x40058];
  watchdog.onWatchdogTrigger = () => {
    // the chip resets (below, between two instructions); stop this watchdog's timer, whose
    // alarm would otherwise fire again and again at the same instant
    watchdog.alarm.enable = false;
    watchdog.timer.enable = false;
    if (!resetWhy) resetWhy = 'watchdog';
  };
  for (const c of COLUMNS) mcu.gpio[c].addListener(() => updateRows());
  mcu.gpio[COLUMNS[0]].addListener((state) => { if (state === 0) log.scans.push(now()); });
  mcu.gpio[LED_DATA].addListener((state, old) => {
    const level = state === 1;
    if ((old === 1) !== level) ledEdge(level);
  });
  for (const r of ROWS) mcu.gpio[r].setInputValue(true);
  for (const [g, v] of pinInputs) mcu.gpio[g].setInputValue(!!v);
  updateRows();
}

function reset() {
  const why = resetWhy;
  resetWhy = null;
  log.resets.push([now(), why]);
  flash = new Uint8Array(chip.mcu.flash);
  base = now();
  frozen = false;
  edges = [];
  latchTimer = null;
  boot(why);
}

function feedHost() {
  const { cdc } = chip;
  while (pendingIn.length && cdc.txFIFO.itemCount < IN_FIFO_LIMIT) cdc.txFIFO.push(pendingIn.shift());
  if (pendingRead && cdc.txFIFO.itemCount > 0 && cdc.outEndpoint >= 0) {
    const [ep, size] = pendingRead;
    pendingRead = null;
    chip.mcu.usbCtrl.onEndpointRead(ep, size);
  }
}

// Runs the chip up to `limit` (absolute ns) or for at most `budget` instructions.
function step(limit, budget) {
  for (let i = 0; i < budget; i++) {
    if (resetWhy) reset();
    const { sim, mcu } = chip;
    const clock = sim.clock;
    const t = base + clock.nanos;
    if (t >= limit) return true;
    if ((i & 255) === 0) feedHost();
    const core = mcu.core;
    if (core.waiting || frozen) {
      let d = clock.nanosToNextAlarm;
      if (!(d > 0)) d = 1000;
      d = Math.min(d, limit - t);
      idleNs += d;
      clock.tick(d);
      if (pendingIn.length || pendingRead) feedHost();
    } else {
      const cycles = core.executeInstruction();
      busyNs += cycles * 8;
      clock.tick(cycles * 8);
    }
  }
  return base + chip.sim.clock.nanos >= limit;
}

// --- the run loop and the control channel -----------------------------------------------------
let target = 0;           // run until this (Infinity: free running)
let waiter = null;        // the control command waiting for target
let running = false;
let pace = null;          // {wall, sim}: realtime, the chip's ns held to the wall clock's since then
let lagNs = 0;            // realtime: the most the chip's time fell behind the wall clock's
function loop() {
  running = false;
  if (now() >= target) return;
  let limit = target;
  if (pace) {
    const wall = pace.sim + (performance.now() - pace.wall) * 1e6;
    lagNs = Math.max(lagNs, wall - now());
    limit = Math.min(target, wall);
  }
  const done = step(limit, 200000);
  if (done && limit >= target) {
    if (waiter) {
      const w = waiter;
      waiter = null;
      w();
    }
    return;
  }
  running = true;
  if (done) setTimeout(loop, 1);      // ahead of the wall clock: wait for it
  else setImmediate(loop);
}
function runTo(t, then) {
  target = t;
  waiter = then;
  if (!running) loop();
}

const control = new net.Socket({ fd: controlFd, readable: true, writable: true });
function answer(obj) {
  control.write(JSON.stringify(obj) + '\n');
}
let lineBuf = '';
control.on('data', (d) => {
  lineBuf += d.toString();
  let k;
  while ((k = lineBuf.indexOf('\n')) >= 0) {
    const line = lineBuf.slice(0, k);
    lineBuf = lineBuf.slice(k + 1);
    if (line.trim()) command(JSON.parse(line));
  }
});
control.on('end', () => process.exit(0));

function command(c) {
  switch (c.cmd) {
    case 'run': {
      pace = null;
      const until = c.until_ns !== undefined ? c.until_ns : now() + c.for_ms * 1e6;
      runTo(until, () => answer({ now: now() }));
      return;
    }
    case 'free':
      pace = null;
      runTo(Infinity, null);
      answer({ now: now() });
      return;
    case 'realtime':
      pace = { wall: performance.now(), sim: now() };
      lagNs = 0;
      runTo(Infinity, null);
      answer({ now: now() });
      return;
    case 'pause':
      pace = null;
      target = now();
      answer({ now: now() });
      return;
    case 'now':
      // realtime: lag_ns is how far the chip's time is behind the wall clock's now
      answer({ now: now(), lag_ns: pace ? pace.sim + (performance.now() - pace.wall) * 1e6 - now() : 0 });
      return;
    case 'send':
      pendingIn.push(...Buffer.from(c.hex, 'hex'));
      feedHost();
      answer({ now: now() });
      return;
    case 'closed':
      closed = new Set(c.sensors);
      updateRows();
      answer({ now: now() });
      return;
    case 'pin':
      pinInputs.set(c.gpio, c.value);
      chip.mcu.gpio[c.gpio].setInputValue(!!c.value);
      answer({ now: now() });
      return;
    case 'pads':
      // each GPIO's pad drive strength code (0: 2 mA, 1: 4, 2: 8, 3: 12 mA)
      answer({ now: now(), drive: chip.mcu.gpio.map((g) => g.driveStrength) });
      return;
    case 'reset':
      resetWhy = 'reset';
      answer({ now: now() });
      return;
    case 'hang':
      frozen = true;                 // cleared by the next reset (a new chip)
      answer({ now: now() });
      return;
    case 'log': {
      if (edges.length && now() - edges[edges.length - 1][0] >= WS2812_LATCH_NS) ledFrame();
      log.cpu = { busy_ns: busyNs, idle_ns: idleNs, max_lag_ns: lagNs };
      answer({ now: now(), log });
      if (c.clear) {
        log = freshLog();
        busyNs = 0;
        idleNs = 0;
      }
      return;
    }
    case 'quit':
      answer({ now: now() });
      process.exit(0);
      return;
    default:
      answer({ error: 'unknown command ' + c.cmd });
  }
}

if (bridgePty) {
  process.stdin.on('data', (d) => {
    pendingIn.push(...d);
    if (chip) feedHost();
  });
}
boot('power-up');
answer({ ready: true, now: now() });

// Fairy-Stockfish's WebAssembly build as a UCI engine on stdin/stdout, for fairyboard.
//
//   node uci.mjs [--variants FILE] [--module DIR]
//
// The engine lives in an in-memory file system: a `setoption name VariantPath value PATH` line
// copies PATH from the host's file system into it (as /variants-N.ini, the line is rewritten to
// name that copy) before the engine reads it, and
// --variants FILE (or $FAIRYBOARD_VARIANTS) loads a variants.ini at start. The module is
// fairy-stockfish-nnue.wasm from --module DIR, $FAIRYBOARD_FSF_WASM_MODULE, or node_modules
// beside this file; its .wasm is read and handed in (wasmBinary), so node needs no flags.
// Lines go to the engine in order, each once the one before it has been handed over; `quit`
// (or the end of stdin) stops the engine and node.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
function arg(name) {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : undefined;
}
const moduleDir = arg("--module") || process.env.FAIRYBOARD_FSF_WASM_MODULE ||
  path.join(here, "node_modules", "fairy-stockfish-nnue.wasm");
const variants = arg("--variants") || process.env.FAIRYBOARD_VARIANTS;

function fail(msg) {
  process.stderr.write(`fsf-wasm: ${msg}\n`);
  process.exit(2);
}

const script = path.join(moduleDir, "stockfish.js");
if (!fs.existsSync(script)) {
  fail(`${script} is missing: run \`fairyboard install-engine --wasm\` (npm ci in ${here})`);
}
const require = createRequire(import.meta.url);
const Stockfish = require(script);
const engine = await Stockfish({
  wasmBinary: fs.readFileSync(path.join(moduleDir, "stockfish.wasm")),
  locateFile: (f) => path.join(moduleDir, f),
});

let copies = 0;
function copyIn(file) {
  // the host's file, copied into the engine's file system: its path there
  const text = fs.readFileSync(file);
  const inside = `/variants-${++copies}.ini`;
  engine.FS.writeFile(inside, text);
  return inside;
}

if (variants) {
  try {
    engine.postMessage(`setoption name VariantPath value ${copyIn(variants)}`);
  } catch (e) {
    fail(`cannot read ${variants}: ${e.message}`);
  }
}

const VARIANT_PATH = /^\s*setoption\s+name\s+VariantPath\s+value\s+(.+?)\s*$/i;
const input = readline.createInterface({ input: process.stdin });
let done = false;
let onReady = null;
engine.addMessageListener((line) => {
  if (onReady && line.trim() === "readyok") return onReady();   // the launcher's own isready
  process.stdout.write(line + "\n");
});
function quit() {
  // the lines before it are answered first (readyok comes after them), then the engine stops
  // (a search under way ends) and gets a moment to write its last lines
  if (done) return;
  done = true;
  const end = () => {
    engine.postMessage("quit");
    setTimeout(() => { engine.terminate(); process.exit(0); }, 50);
  };
  const timer = setTimeout(end, 10000);
  onReady = () => { clearTimeout(timer); onReady = null; end(); };
  engine.postMessage("isready");
}
input.on("line", (line) => {
  if (done) return;
  if (line.trim() === "quit") return quit();
  const m = VARIANT_PATH.exec(line);
  if (m) {
    try {
      line = `setoption name VariantPath value ${copyIn(m[1])}`;
    } catch (e) {
      process.stdout.write(`info string fsf-wasm: cannot read ${m[1]}: ${e.message}\n`);
      return;
    }
  }
  engine.postMessage(line);
});
input.on("close", quit);

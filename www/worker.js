// The app's loader thread: reads request logs and parses them off the page's main thread, so
// a file of a million requests never freezes the page. It runs the app's own wasm (the same file
// the page runs; nothing else is downloaded). src/loader.rs starts one worker per load, sends it
// {sources, options, spec}, and terminates it when the load is done or cancelled.
//
// The files' SHA-256 digests (their provenance) are computed by the browser's Web Crypto while
// the wasm parses, several times faster than in wasm; where Web Crypto is missing (a page served
// over plain http) or fails, the wasm computes them.
//
// Messages to the page:
//   {kind: "progress", phase: "Reading a.csv", fraction: 0.1}
//   {kind: "done", header: Uint8Array, columns: [Float64Array | Uint32Array, ...]}
//       the load taken apart (slo_core::transfer::Batch::into_parts): the header holds everything
//       small, each large column is its own typed array, in order. All of their buffers are
//       transferred, not copied: the page copies each column once, straight into its wasm memory.
//   {kind: "error", message: "..."}
import init, { worker_load } from "./slo-workbench.js";

const ready = init({ module_or_path: new URL("./slo-workbench_bg.wasm", import.meta.url) });

// Reading is quick next to parsing: it gets the first fifth of the bar.
const READ_SHARE = 0.2;
const CHUNK = 8 * 1024 * 1024;

const subtle = self.crypto && self.crypto.subtle;

/** The hex SHA-256 of `bytes` as a promise, or of null where Web Crypto cannot give it. */
function digest(bytes) {
  if (!subtle) return Promise.resolve(null);
  const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
  return subtle.digest("SHA-256", bytes).then(hex, () => null);
}

function progress(phase, fraction) {
  self.postMessage({ kind: "progress", phase, fraction });
}

/** A File read in chunks, saying how far along the whole load is. */
async function readFile(file, before, total) {
  const bytes = new Uint8Array(file.size);
  for (let at = 0; at < file.size; at += CHUNK) {
    const chunk = await file.slice(at, at + CHUNK).arrayBuffer();
    bytes.set(new Uint8Array(chunk), at);
    progress(`Reading ${file.name}`, (READ_SHARE * (before + at + chunk.byteLength)) / total);
  }
  return bytes;
}

// Set before the wasm is ready, so the first message is never missed.
self.onmessage = async (event) => {
  try {
    const { sources, options, spec } = event.data;
    const total = Math.max(1, sources.reduce((sum, s) => sum + (s.file ? s.file.size : s.bytes.length), 0));
    const names = [];
    const buffers = [];
    const digests = [];
    let before = 0;
    for (const source of sources) {
      names.push(source.name);
      const bytes = source.file ? await readFile(source.file, before, total) : source.bytes;
      buffers.push(bytes);
      digests.push(digest(bytes));
      before += source.file ? source.file.size : source.bytes.length;
    }
    await ready;
    const withDigests = JSON.stringify({ ...JSON.parse(options), sha256_elsewhere: Boolean(subtle) });
    const pending = worker_load(names, buffers, withDigests, spec, (phase, fraction) =>
      progress(phase, READ_SHARE + (1 - READ_SHARE) * fraction),
    );
    const [header, ...columns] = pending.finish(await Promise.all(digests));
    self.postMessage({ kind: "done", header, columns }, [header, ...columns].map((a) => a.buffer));
  } catch (error) {
    self.postMessage({ kind: "error", message: String(error) });
  }
};

// The app's loader thread: reads request logs and parses them off the page's main thread, so
// a file of a million requests never freezes the page. It runs the app's own wasm (the same file
// the page runs; nothing else is downloaded). src/loader.rs starts one worker per load, sends it
// {sources, options, spec}, and terminates it when the load is done or cancelled.
//
// The files' SHA-256 digests (their provenance) are computed by the browser's Web Crypto while
// the wasm parses, several times faster than in wasm; where Web Crypto is missing (a page served
// over plain http) or fails, the wasm computes them.
//
// One large file (PART_FROM bytes or more, chosen as a File) is read by two workers at once, in
// two slices (slo_core::ingest::Slices, `worker_slices`): each reads only its own bytes of the
// file. This one starts a second worker of its own (the same script) and sends it {slice: true,
// source, options}. The page may send {warm: true, spec} first, while the user is still choosing
// a file (src/loader.rs, `warm`): this worker then starts its second at once, so that both have
// their wasm instantiated by the time the file comes, and the second gets its slice the moment
// it does; meanwhile each runs its own part of a load once on a small made-up log
// (worker_warm_up, and {warmUp: true} to the second: worker_warm_up_part), so that the real
// load runs on code the engine has already compiled and optimised. The second reads the file's
// first bytes (for the header) and its second half, parses the rows there
// (worker_second_slice) and answers {header, columns} (or {header: null} when the file is not
// read in slices: not a CSV, quotes, not plain UTF-8), then closes. This worker reads the first
// half meanwhile and parses its rows (worker_load_first_slice), then joins the two
// (PendingLoad.join: exactly what one worker reading the whole file gives); the second is
// terminated as soon as its part has arrived, before the join. Where either declines, this
// worker reads the whole file and parses it alone. Terminating this worker terminates the
// second too.
//
// With `lateDigest: true` in the page's message, one large file read in halves leaves its
// SHA-256 empty ("done" then says `lateDigest: true`) for the page to ask a worker for once the
// load is done ({digestOf: file}).
//
// With `early: true` in the page's message (a load that becomes the app's data), the report is
// computed here as soon as the load is prepared (for the spec and `durationS`, the duration the
// user typed or null) and sent ahead of the batch, so that the page can show it while the
// columns are still on their way.
//
// Messages to the page:
//   {kind: "progress", phase: "Reading a.csv", fraction: 0.1}
//   {kind: "report", report: "{...}"}   the report as JSON (slo_core::transfer::report_to_json),
//       before "done"; absent when the page would show no report of this load
//   {kind: "done", header: Uint8Array, columns: [Float64Array | Uint32Array, ...]}
//       the load taken apart (slo_core::transfer::Batch::into_parts): the header holds everything
//       small, each large column is its own typed array, in order. All of their buffers are
//       transferred, not copied: the page copies each column once, straight into its wasm memory.
//   {kind: "error", message: "..."}
//   {kind: "digest", hex: "..."}    the answer to {digestOf: file} (a worker started for it)
// The "done" message (and the second worker's answer) also carries `timeline`: [event, ms] pairs,
// each the moment a step began or ended ("loader: first half parsed"), in ms since the epoch
// (performance.timeOrigin + now, so that both workers' clocks and the page's compare). The page
// ignores it; bench/browser_bench.mjs prints it.
import init, {
  FileBytes,
  FileDigest,
  worker_load,
  worker_load_first_slice,
  worker_second_slice,
  worker_sha256,
  worker_slices,
  worker_warm_up,
  worker_warm_up_part,
} from "./slo-workbench.js";

const ready = init({ module_or_path: new URL("./slo-workbench_bg.wasm", import.meta.url) });

// Reading is quick next to parsing: it gets the first fifth of the bar.
const READ_SHARE = 0.2;
// A file larger than this is read in chunks of this size, for the progress bar.
const CHUNK = 64 * 1024 * 1024;
// A file this large is read by two workers.
const PART_FROM = 4 * 1024 * 1024;

const subtle = self.crypto && self.crypto.subtle;

/** The hex SHA-256 of `bytes` as a promise, or of null where Web Crypto cannot give it. */
function digest(bytes) {
  if (!subtle) return Promise.resolve(null);
  const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
  return subtle.digest("SHA-256", bytes).then(hex, () => null);
}

/** Notes in `timeline` that `event` has just happened (see the message list above). */
function mark(timeline, event) {
  timeline.push([event, performance.timeOrigin + performance.now()]);
}

// The furthest fraction this worker's load has shown: the bar never goes back, not even when
// a file declined for slices is read again whole (one worker serves one load).
let shownSoFar = 0;

function progress(phase, fraction) {
  shownSoFar = Math.max(shownSoFar, fraction);
  self.postMessage({ kind: "progress", phase, fraction: shownSoFar });
}

/** A File read in chunks, saying how far along the whole load is. */
async function readFile(file, before, total) {
  // A file up to CHUNK is read in one go: each slice read costs a round trip, and copying the
  // chunks together a copy of the file (a 35 MB file read in 8 MB chunks took 230 ms, in one
  // go 105 ms).
  if (file.size <= CHUNK) {
    const bytes = new Uint8Array(await file.arrayBuffer());
    progress(`Reading ${file.name}`, (READ_SHARE * (before + file.size)) / total);
    return bytes;
  }
  const bytes = new Uint8Array(file.size);
  for (let at = 0; at < file.size; at += CHUNK) {
    const chunk = await file.slice(at, at + CHUNK).arrayBuffer();
    bytes.set(new Uint8Array(chunk), at);
    progress(`Reading ${file.name}`, (READ_SHARE * (before + at + chunk.byteLength)) / total);
  }
  return bytes;
}

// Slices read for the wasm, and files read again for their digest, pass through one buffer of
// this size, reused.
const STREAM_CHUNK = 1024 * 1024;

/**
 * Hands `blob`'s bytes to `take`, in order, a chunk at a time, through one buffer of
 * STREAM_CHUNK bytes that is reused (a byte stream read with a "BYOB" reader), so that no copy
 * of the blob is made in JavaScript: reading it whole, or in slices, leaves garbage as large as
 * the blob until the collector comes round, and that was a large share of a load's peak memory.
 * Where the browser has no such reader, the blob is read in slices of that size.
 */
async function streamTo(blob, take) {
  let reader = null;
  try {
    reader = blob.stream().getReader({ mode: "byob" });
  } catch {
    reader = null;
  }
  if (!reader) {
    for (let at = 0; at < blob.size; at += STREAM_CHUNK) {
      take(new Uint8Array(await blob.slice(at, at + STREAM_CHUNK).arrayBuffer()));
    }
    return;
  }
  let buffer = new ArrayBuffer(STREAM_CHUNK);
  for (;;) {
    const { value, done } = await reader.read(new Uint8Array(buffer));
    if (done) return;
    take(value);
    buffer = value.buffer;
  }
}

/** Bytes `from..to` of `file` in this worker's wasm memory (FileBytes), read by `streamTo`. */
async function wasmBytesOf(file, from, to) {
  const bytes = new FileBytes(to - from);
  await streamTo(file.slice(from, to), (chunk) => bytes.push(chunk));
  return bytes;
}

/**
 * Starts a second worker, which instantiates its wasm and waits for a part to read; its answer
 * (`{header, columns}`, or null for none) will be the promise `part`. Null where no worker can be
 * started here.
 */
function startSecond(warmUp = false) {
  let worker;
  try {
    worker = new Worker(new URL(import.meta.url), { type: "module" });
  } catch {
    return null;
  }
  if (warmUp) worker.postMessage({ warmUp: true });
  const part = new Promise((resolve) => {
    worker.onmessage = (event) => resolve(event.data.header ? event.data : null);
    worker.onerror = (event) => {
      event.preventDefault();
      resolve(null);
    };
  });
  return { worker, part };
}

// The second worker started by a {warm: true} message, waiting for its part; null once taken.
let spare = null;

/** The second worker's work: the rows of one file's second slice, sent back, then closing. */
async function readSlice({ source, options }) {
  let answer = { header: null };
  const timeline = [];
  mark(timeline, "second worker: started");
  try {
    const file = source.file;
    await ready;
    const [middle, , headEnd] = worker_slices(file.size);
    const headOf = async () => new Uint8Array(await file.slice(0, headEnd).arrayBuffer());
    const [head, tail] = await Promise.all([headOf(), wasmBytesOf(file, middle, file.size)]);
    mark(timeline, "second worker: file read");
    answer = worker_second_slice(source.name, head, tail, file.size, options) || answer;
    mark(timeline, "second worker: half parsed");
  } catch (error) {
    answer = { header: null, message: String(error) };
  }
  answer.timeline = timeline;
  const buffers = answer.header ? [answer.header, ...answer.columns].map((a) => a.buffer) : [];
  self.postMessage(answer, buffers);
  self.close();
}

/** The hex SHA-256 of a whole file, read again a chunk at a time (`streamTo`) and digested in
 * wasm (FileDigest), so that neither the file nor a copy of it is ever held whole (Web Crypto
 * would take it whole and copy it: 70 MB for a 35 MB log, once the renderer's peak); null where
 * the file cannot be read again. */
async function digestOfFile(file) {
  try {
    await ready;
    const digest = new FileDigest();
    await streamTo(file, (chunk) => digest.update(chunk));
    return digest.hex();
  } catch {
    return null;
  }
}

/**
 * Loads `sources` whole in this worker: reads every file, has Web Crypto digest each (unless
 * `late`) and parses them. Resolves to {pending, digests}: the PendingLoad and a promise per
 * source of its digest (null where Web Crypto gave none).
 */
async function loadWhole(sources, options, spec, report, late, timeline) {
  const total = Math.max(1, sources.reduce((sum, s) => sum + (s.file ? s.file.size : s.bytes.length), 0));
  const names = [];
  const buffers = [];
  const digests = [];
  let before = 0;
  for (const source of sources) {
    names.push(source.name);
    const bytes = source.file ? await readFile(source.file, before, total) : source.bytes;
    buffers.push(bytes);
    digests.push(late ? null : digest(bytes));
    before += source.file ? source.file.size : source.bytes.length;
  }
  mark(timeline, "loader: files read, digests started");
  await ready;
  const withDigests = JSON.stringify({ ...JSON.parse(options), sha256_elsewhere: Boolean(subtle) });
  const pending = worker_load(names, buffers, withDigests, spec, report);
  // The wasm has its own copy of the files, and the digests took theirs when they started:
  // the file buffers can go (35 MB for a million-row log).
  buffers.length = 0;
  mark(timeline, "loader: files parsed and prepared");
  return { pending, digests };
}

/**
 * Loads one large file in two slices, this worker reading the first and `second` the other
 * (see the top of this file). Resolves to the PendingLoad, joined and prepared, or null where
 * the file is not read in slices (this worker or the second declined).
 */
async function loadSliced(source, options, spec, report, second, timeline) {
  const file = source.file;
  await ready;
  const [, firstEnd] = worker_slices(file.size);
  progress(`Reading ${file.name}`, READ_SHARE);
  mark(timeline, "loader: reading its slice");
  const bytes = await wasmBytesOf(file, 0, firstEnd);
  mark(timeline, "loader: slice read");
  // The wasm takes the bytes (and frees them once the rows are read).
  const pending = worker_load_first_slice(source.name, bytes, file.size, options, spec, report);
  if (!pending) return null;
  mark(timeline, "loader: first half parsed");
  const part = await second.part;
  // The part's buffers were transferred here: the second worker can go before the join.
  second.worker.terminate();
  if (part) timeline.push(...part.timeline);
  mark(timeline, "loader: second half arrived");
  if (pending.join(part, report)) return pending;
  pending.free();
  return null;
}

/**
 * The digest of a file its load left out (see `late` below), computed once the load is done:
 * answers {kind: "digest", hex} (null when the file cannot be read again).
 */
async function digestLater(file) {
  self.postMessage({ kind: "digest", hex: await digestOfFile(file) });
}

// Set before the wasm is ready, so the first message is never missed.
self.onmessage = async (event) => {
  if (event.data.slice) return readSlice(event.data);
  if (event.data.warmUp) {
    await ready;
    return worker_warm_up_part();
  }
  if (event.data.warm) {
    spare = spare || startSecond(true);
    await ready;
    worker_warm_up(event.data.spec);
    return;
  }
  if (event.data.digestOf) return digestLater(event.data.digestOf);
  let second = null;
  const timeline = [];
  mark(timeline, "loader: started");
  try {
    const { sources, options, spec, early, durationS } = event.data;
    const [one] = sources;
    if (sources.length === 1 && one.file && one.file.size >= PART_FROM) {
      second = spare || startSecond();
      if (second) second.worker.postMessage({ slice: true, source: one, options });
    } else if (spare) {
      spare.worker.terminate();
    }
    spare = null;
    // One file read in slices leaves its digest to the page, which asks for it once the load is
    // done ({digestOf: file}, `digestLater`): no worker has every byte, and hashing the file
    // here would take a core from the two parsing workers (docs/performance.md, ninth round).
    const late = Boolean(event.data.lateDigest && second);
    // The bar never goes back (joining the second worker's part starts its count again).
    let shown = READ_SHARE;
    let last = null;
    const report = (phase, fraction) => {
      // A new phase of the wasm's: the one before it has ended ("Done" is not a phase).
      if (last !== null && phase !== last && last !== "Done") mark(timeline, `loader: ended: ${last}`);
      last = phase;
      shown = Math.max(shown, READ_SHARE + (1 - READ_SHARE) * fraction);
      progress(phase, shown);
    };
    let pending = second ? await loadSliced(one, options, spec, report, second, timeline) : null;
    const sliced = Boolean(pending);
    let digests;
    if (sliced) {
      // Read in slices: the file's digest comes from the whole file, read again once the load
      // is in (by the page's digest worker when `late`).
      digests = late ? [null] : [digestOfFile(one.file)];
    } else {
      if (second) second.worker.terminate();
      last = null;
      ({ pending, digests } = await loadWhole(sources, options, spec, report, late, timeline));
    }
    if (last !== null && last !== "Done") mark(timeline, `loader: ended: ${last}`);
    // The report first, so that the page shows it while this worker takes the batch apart and
    // the page copies the columns in (about 100 ms at a million requests).
    if (early) {
      const json = pending.report(durationS ?? undefined);
      if (json !== undefined) {
        mark(timeline, "loader: report computed");
        self.postMessage({ kind: "report", report: json });
      }
    }
    // Where Web Crypto failed on a file read whole, the wasm computes the digest from the file
    // read again (it freed its own copy before preparing); without Web Crypto the wasm
    // computed them all. A file that cannot be read again keeps no digest. (A file read in
    // slices was digested from the file read again already: `digestOfFile`.)
    const again = async (s) => {
      try {
        return worker_sha256(s.file ? new Uint8Array(await s.file.arrayBuffer()) : s.bytes);
      } catch {
        return null;
      }
    };
    const digested = late
      ? [null]
      : await Promise.all(digests.map(async (d, k) => (await d) ?? (subtle && !sliced ? again(sources[k]) : null)));
    mark(timeline, "loader: digests done");
    const { header, columns } = pending.finish(digested);
    mark(timeline, "loader: taken apart for the page");
    self.postMessage({ kind: "done", header, columns, timeline, lateDigest: late }, [header, ...columns].map((a) => a.buffer));
  } catch (error) {
    if (second) second.worker.terminate();
    self.postMessage({ kind: "error", message: String(error) });
  }
};

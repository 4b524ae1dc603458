// Writes the single-file edition: one HTML page with the stylesheet, plotly.js, the wasm-bindgen
// glue (`--target no-modules`) and the gzipped, base64-encoded wasm inline, so the page opens from
// disk (file://) with no other file and no network. Called by scripts/build-single.sh; see
// docs/single-file.md.
//
//   node scripts/inline.mjs --css F --plotly F --glue F --wasm F --out F
//
// The Content-Security-Policy lists the SHA-256 of each inline script and allows nothing else:
// no other origin, no connections, no eval (only 'wasm-unsafe-eval', to compile the embedded wasm).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";

function args(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith("--") || argv[i + 1] === undefined) {
      throw new Error(`usage: inline.mjs --css F --plotly F --glue F --wasm F --out F (at ${argv[i]})`);
    }
    out[argv[i].slice(2)] = argv[i + 1];
  }
  for (const key of ["css", "plotly", "glue", "wasm", "out"]) {
    if (!out[key]) throw new Error(`inline.mjs: --${key} is missing`);
  }
  return out;
}

/** The HTML parser turns CR and CRLF into LF before a CSP hash is taken: do it first. */
function normalizeNewlines(text) {
  return text.replace(/\r\n?/g, "\n");
}

/**
 * Makes JavaScript safe as the text of an inline <script>. The tokenizer ends a script at
 * `</script` (any case), and `<!--` followed later by `<script` changes how it looks for the end;
 * both are rewritten into escapes that mean the same characters in JS strings, templates and
 * regular expressions (including `u`-mode ones): `<\/script` and `\x3C!--`.
 */
export function escapeScript(code) {
  return normalizeNewlines(code)
    .replace(/<\/(script)/gi, "<\\/$1")
    .replace(/<!--/g, "\\x3C!--");
}

/** The same for CSS inside <style>: `\/` is a CSS escape of `/`. */
export function escapeStyle(css) {
  return normalizeNewlines(css).replace(/<\/(style)/gi, "<\\/$1");
}

function sha256(text) {
  return "'sha256-" + crypto.createHash("sha256").update(text, "utf8").digest("base64") + "'";
}

function build({ css, plotly, glue, wasm, out }) {
  const wasmBytes = fs.readFileSync(wasm);
  // gzip level 9; node writes mtime 0 in the header, so the output is reproducible.
  const wasmGz = zlib.gzipSync(wasmBytes, { level: 9 });
  const boot = `// Starts the app from the wasm embedded below: base64 -> gzip -> bytes -> wasm_bindgen.
(async () => {
  const text = document.getElementById("slo-wasm").textContent.replace(/\\s+/g, "");
  const packed = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"));
  const bytes = await new Response(stream).arrayBuffer();
  await wasm_bindgen({ module_or_path: bytes });
})().catch((error) => {
  document.body.textContent = "SLO Workbench could not start: " + error;
});
`;
  const scripts = [
    ["plotly.js (plotly.js-cartesian-dist-min)", escapeScript(fs.readFileSync(plotly, "utf8"))],
    ["wasm-bindgen glue (--target no-modules)", escapeScript(fs.readFileSync(glue, "utf8"))],
    ["boot", escapeScript(boot)],
  ];
  // The wasm sits in a non-executable data block (type application/octet-stream): no CSP hash,
  // never run; base64 has no '<', so it needs no escaping. Lines of 76 characters keep editors happy.
  const b64 = wasmGz.toString("base64").replace(/.{1,76}/g, "$&\n");
  const csp = [
    "default-src 'none'",
    `script-src ${scripts.map(([, code]) => sha256(code)).join(" ")} 'wasm-unsafe-eval'`,
    "style-src 'unsafe-inline'",
    "img-src data: blob:",
    "font-src 'none'",
    "connect-src 'none'",
    "worker-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-src 'none'",
  ].join("; ");
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <!-- SLO Workbench, single-file edition (scripts/build-single.sh, docs/single-file.md).
       Everything is inline; the policy allows exactly the inline scripts below (by SHA-256),
       compiling the embedded WebAssembly, and inline styles (for plotly's SVG). No other origin,
       no connections. -->
  <meta http-equiv="Content-Security-Policy" content="${csp}" />
  <title>SLO Workbench</title>
  <link rel="icon" href="data:," />
  <style>
${escapeStyle(fs.readFileSync(css, "utf8"))}</style>
</head>
<body>
  <noscript>SLO Workbench needs JavaScript and WebAssembly.</noscript>
<script type="application/octet-stream" id="slo-wasm">
${b64}</script>
${scripts.map(([name, code]) => `<!-- ${name} -->\n<script>${code}</script>`).join("\n")}
</body>
</html>
`;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, html);
  return { bytes: Buffer.byteLength(html), wasm: wasmBytes.length, wasmGz: wasmGz.length };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const opts = args(process.argv.slice(2));
  const { bytes, wasm, wasmGz } = build(opts);
  const mb = (n) => (n / 1e6).toFixed(2) + " MB";
  console.log(`${opts.out}: ${mb(bytes)} (wasm ${mb(wasm)}, gzipped ${mb(wasmGz)} before base64)`);
}

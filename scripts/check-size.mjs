// Checks built sizes against budgets.json: the app's wasm gzipped (plotly.js excluded).
import fs from "node:fs";
import zlib from "node:zlib";

const budgets = JSON.parse(fs.readFileSync("budgets.json", "utf8"));
let failed = false;
for (const [file, limit] of Object.entries(budgets.gzip_bytes)) {
  const size = zlib.gzipSync(fs.readFileSync(file), { level: 9 }).length;
  const ok = size <= limit;
  failed ||= !ok;
  console.log(`${ok ? "ok  " : "OVER"} ${file}: ${size} bytes gzipped (budget ${limit})`);
}
process.exit(failed ? 1 : 0);

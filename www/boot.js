// Starts the app. A file of its own (not an inline script) so the Content-Security-Policy can
// forbid inline scripts. Paths are relative: the app works from any sub-path.
import init from "./slo-workbench.js";

init({ module_or_path: new URL("./slo-workbench_bg.wasm", import.meta.url) }).catch((error) => {
  document.body.textContent = "SLO Workbench could not start: " + error;
});

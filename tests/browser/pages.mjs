// Page objects: one per view. Tests read the page through these, by data-testid.

/**
 * Scrolls chart `id` into view, as a reader would (a chart is drawn only once it is in view or
 * about to be: src/chart.rs), and waits until plotly has drawn it.
 */
export async function chartDrawn(page, id) {
  await page.getByTestId(id).scrollIntoViewIfNeeded();
  await page.locator(`#${id} svg.main-svg`).first().waitFor({ timeout: 10000 });
  return true;
}

export class DataPage {
  constructor(page) {
    this.page = page;
  }
  async open() {
    await this.page.getByTestId("tab-data").click();
    await this.page.getByTestId("paste").waitFor();
  }
  async paste(text) {
    await this.page.getByTestId("paste").fill(text);
    await this.page.getByTestId("analyze").click();
  }
  async upload(files) {
    await this.page.getByTestId("upload").setInputFiles(files);
  }
  notice() {
    return this.page.getByTestId("load-notice");
  }
}

export class ReportPage {
  constructor(page) {
    this.page = page;
  }
  async waitForReport() {
    await this.page.getByTestId("attainment").waitFor();
  }
  async text(id) {
    return (await this.page.getByTestId(id).innerText()).trim();
  }
  percentile(indicator, q, method) {
    return this.text(`pct-${indicator}-${q}-${method}`);
  }
  async setTarget(key, value) {
    await this.page.getByTestId(`target-${key}`).fill(String(value));
  }
  async setPercentiles(text) {
    await this.page.getByTestId("percentiles").fill(text);
  }
  failingRows() {
    return this.page.getByTestId("failing-row").allInnerTexts();
  }
  chartDrawn(id) {
    return chartDrawn(this.page, id);
  }
}

export class TargetsPage {
  constructor(page) {
    this.page = page;
  }
  async open() {
    await this.page.getByTestId("tab-targets").click();
    await this.page.getByTestId("spec-service").waitFor();
  }
  async setField(id, value) {
    const input = this.page.getByTestId(id);
    await input.fill(String(value));
    await input.press("Tab");
  }
  value(id) {
    return this.page.getByTestId(id).inputValue();
  }
  problems() {
    return this.page.getByTestId("spec-problems").innerText();
  }
}

export class DocumentPage {
  constructor(page) {
    this.page = page;
  }
  async open() {
    await this.page.getByTestId("tab-document").click();
    await this.page.getByTestId("document-preview").waitFor();
  }
  text() {
    return this.page.getByTestId("document").textContent();
  }
  preview() {
    return this.page.getByTestId("document-preview").innerText();
  }
}

export class SweepPage {
  constructor(page) {
    this.page = page;
  }
  async open() {
    await this.page.getByTestId("tab-sweep").click();
    await this.page.getByTestId("sweep-upload").waitFor({ state: "attached" });
  }
  async loadSample() {
    await this.page.getByTestId("sweep-sample").click();
    await this.page.getByTestId("sweep-capacity").waitFor();
  }
  async upload(files) {
    await this.page.getByTestId("sweep-upload").setInputFiles(files);
  }
  async text(id) {
    return (await this.page.getByTestId(id).innerText()).trim();
  }
  capacity() {
    return this.text("sweep-capacity");
  }
  sentence() {
    return this.text("sweep-sentence");
  }
  fileRows() {
    return this.page.locator('[data-testid="sweep-files"] tbody tr').allInnerTexts();
  }
  /** Types the offered rate of the k-th row of the files table and leaves the field. */
  async typeRate(k, rate) {
    const input = this.page.getByTestId("sweep-rate-input").nth(k);
    await input.fill(String(rate));
    await input.press("Tab");
  }
  async provision(peakRps, gpusPerReplica) {
    await this.page.getByTestId("sweep-peak").fill(String(peakRps));
    await this.page.getByTestId("sweep-gpus-per-replica").fill(String(gpusPerReplica));
  }
  chartDrawn(id) {
    return chartDrawn(this.page, id);
  }
}

export class ProductionPage {
  constructor(page) {
    this.page = page;
  }
  async open() {
    await this.page.getByTestId("tab-production").click();
    await this.page.getByTestId("prod-dump").first().waitFor();
  }
  /** Pastes `text` as replica k's /metrics dump (replica k must exist). */
  async paste(k, text) {
    await this.page.getByTestId("prod-dump").nth(k).fill(text);
  }
  /** Pastes `text` as replica k's earlier dump (opens its "Earlier dump" box first). */
  async pasteEarlier(k, text) {
    const box = this.page.getByTestId("prod-replica").nth(k);
    await box.locator("summary").click();
    await box.getByTestId("prod-dump-before").fill(text);
  }
  async addReplica() {
    const n = await this.page.getByTestId("prod-dump").count();
    await this.page.getByTestId("prod-add-replica").click();
    await this.page.getByTestId("prod-dump").nth(n).waitFor();
  }
  async text(id) {
    return (await this.page.getByTestId(id).first().innerText()).trim();
  }
  /** The fractions shown for an indicator ("ttft", "tpot" ...), one per group and target. */
  fractions(indicator) {
    return this.page.getByTestId(`prod-fraction-${indicator}`).allInnerTexts();
  }
  chartDrawn(id) {
    return chartDrawn(this.page, id);
  }
}

// Page objects: one per view. Tests read the page through these, by data-testid.

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
  async chartDrawn(id) {
    await this.page.locator(`#${id} svg.main-svg`).first().waitFor({ timeout: 10000 });
    return true;
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

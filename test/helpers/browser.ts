/**
 * A real headless browser for tests of web pages: Debian's Chromium (`apt-get install chromium`;
 * .ci/run installs it), driven by puppeteer-core. CHROMIUM_PATH names another executable.
 */
import { existsSync } from "node:fs";
import puppeteer, { type Browser } from "puppeteer-core";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

export function chromiumPath(): string {
  const found = [process.env.CHROMIUM_PATH, ...CANDIDATES].find((p): p is string => !!p && existsSync(p));
  if (!found) throw new Error("no Chromium: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH");
  return found;
}

export function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    // As root (CI containers) Chromium refuses to start sandboxed.
    args: [...(process.getuid?.() === 0 ? ["--no-sandbox"] : []), "--disable-gpu", "--disable-dev-shm-usage"],
  });
}

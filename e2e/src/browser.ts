import { chromium, type Browser } from "playwright-core";

/**
 * Debian's Chromium driven by playwright-core. The flags keep it off the (closed) network:
 * without them it floods the machine with refused background connections. playwright-core
 * gives every launch a fresh, empty profile directory.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

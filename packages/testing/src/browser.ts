// Test support: the real browser the UI tests drive, Debian's chromium through playwright-core
// (`@callgate/testing/browser`). Never `npx playwright install`: the binary is the system's.
import { type Browser, chromium } from 'playwright-core';

/** The chromium binary: `CHROMIUM_PATH`, or Debian's `/usr/bin/chromium`. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The flags every test browser runs with: headless, no sandbox, GPU or background traffic. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches headless chromium ({@link CHROMIUM} with {@link CHROMIUM_ARGS}); close it when done. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
}

// Takes the README's picture of the control UI: signs in to a running
// daemon (TOOLGATE_URL, TOOLGATE_OPERATOR_TOKEN) in Debian's Chromium and
// writes a PNG (argv[2]). Run by scripts/ui-screenshot, which starts the
// daemon and makes a few calls wait for approval first.
'use strict';

const { chromium } = require('playwright-core');

async function main() {
  const out = process.argv[2];
  const base = process.env.TOOLGATE_URL;
  const token = process.env.TOOLGATE_OPERATOR_TOKEN;
  if (!out || !base || !token) {
    throw new Error('usage: TOOLGATE_URL=… TOOLGATE_OPERATOR_TOKEN=… node screenshot.js OUT.png');
  }
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(base + '/');
    await page.getByLabel('Operator token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('conn').and(page.locator('[data-state="live"]')).waitFor();
    await page.locator('[data-testid^="approval-"]').first().waitFor();
    await page.waitForTimeout(500);
    await page.screenshot({ path: out });
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(`screenshot: ${e.message}`);
  process.exit(1);
});

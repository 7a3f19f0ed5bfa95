// Playwright configuration for the control UI test. run.sh starts the
// daemon and passes its address and tokens in the environment.
//
// The browser is the system Chromium (Debian's `chromium` package), never a
// downloaded one: the machines this runs on may be offline.
'use strict';

process.env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';

const { defineConfig } = require('@playwright/test');

module.exports = defineConfig({
  testDir: __dirname,
  testMatch: /.*\.spec\.js$/,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1, // both tests share one daemon and its approvals
  retries: 0,
  forbidOnly: true,
  reporter: [['list']],
  outputDir: process.env.PW_OUTPUT_DIR || `${__dirname}/test-results`,
  use: {
    baseURL: process.env.TOOLGATE_URL || 'http://127.0.0.1:7878',
    headless: true,
    viewport: { width: 1440, height: 900 },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    },
  },
  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }],
});

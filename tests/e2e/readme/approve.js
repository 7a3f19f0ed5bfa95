// The README test's person at the browser (run by run.sh): opens the control
// UI the way the README says, finds the call Claude is waiting on, and
// presses the README's button on it. Playwright as a library, in the system
// Chromium (never a downloaded browser).
//
// Environment (run.sh sets it):
//   PW_NODE_MODULES   a node_modules with `playwright` (tests/e2e/ui's)
//   CHROMIUM_PATH     the browser (default /usr/bin/chromium)
//   OPEN_URL          what the README says to open: the inbox, or a sign-in link
//   SIGNIN_TOKEN      the operator token to type into the sign-in form; empty
//                     when OPEN_URL is a sign-in link that signs in by itself
//   APPROVAL_ID       the id toolgate gave Claude for the held call
//   COMMAND           the held call's command, as the card must show it
//   BUTTON            the button the README says to press ("Approve")
//   SHOT              where to save a screenshot when something goes wrong
// Exits 0 once the card says the call is approved, 1 otherwise.
'use strict';

const path = require('node:path');

const { chromium } = require(path.join(process.env.PW_NODE_MODULES, 'playwright'));

const env = (name) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`approve.js: ${name} is not set`);
  return v;
};
const say = (msg) => console.log(`approve.js: ${msg}`);
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function main() {
  const openUrl = env('OPEN_URL');
  const token = env('SIGNIN_TOKEN');
  const id = env('APPROVAL_ID');
  const command = env('COMMAND');
  const button = env('BUTTON');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.setDefaultTimeout(30_000);
  try {
    say(`opening ${openUrl.replace(/#signin\/.*/, '#signin/…')}`);
    await page.goto(openUrl);
    if (token) {
      say('signing in with the operator token');
      await page.getByLabel('Operator token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    // Signed in: the inbox is shown and its live feed connected.
    await page.getByTestId('conn').and(page.locator('[data-state="live"]')).waitFor();
    const who = (await page.getByTestId('signed-in-as').textContent()).trim().replace(/\s+/g, ' ');
    say(`signed in (${who})`);

    const card = page.locator(`[data-approval-id="${id}"]`);
    await card.waitFor({ state: 'visible' });
    const shown = (await card.locator('pre.cmd').textContent()).trim();
    if (shown !== command) {
      throw new Error(`the card for ${id} shows ${JSON.stringify(shown)}, not ${JSON.stringify(command)}`);
    }
    say(`the held call is in the inbox: ${id.slice(0, 8)}… ${shown}`);

    await card.getByRole('button', { name: new RegExp(`^${escapeRe(button)}\\b`) }).click();
    say(`pressed ${button}`);
    // The card's message: "Approved. …" once the quorum is met; "Vote
    // recorded: 1 of 2 …" would mean one press is not enough.
    const msg = card.locator('.approval-msg');
    await msg.filter({ hasText: /\S/ }).waitFor({ state: 'visible' });
    await page.waitForFunction(
      (el) => el && el.textContent && !/…$/.test(el.textContent.trim()),
      await msg.elementHandle(),
    );
    const text = (await msg.textContent()).trim();
    say(`the card says: ${text}`);
    // (A card standing for several identical calls prefixes "N identical calls: ".)
    if (!/(^|: )Approved\b/.test(text)) throw new Error(`pressing ${button} did not approve the call: ${text}`);
    if (errors.length) throw new Error(`errors on the page: ${errors.join('; ')}`);
  } catch (e) {
    if (process.env.SHOT) {
      await page.screenshot({ path: process.env.SHOT, fullPage: true }).catch(() => {});
      say(`screenshot: ${process.env.SHOT}`);
    }
    throw e;
  } finally {
    await browser.close();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`approve.js: FAILED: ${e.message}`);
    process.exit(1);
  },
);

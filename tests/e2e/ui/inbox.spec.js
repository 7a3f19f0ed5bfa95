// The approval inbox: signing in by a one-time link (no token pasted),
// deep links that open signed in in a new tab, and the inbox itself.
'use strict';

const { test, expect } = require('@playwright/test');
const crypto = require('node:crypto');

const BASE = process.env.TOOLGATE_URL || 'http://127.0.0.1:7878';
const OPERATOR = process.env.TOOLGATE_OPERATOR_TOKEN;
const AGENT = process.env.TOOLGATE_AGENT_TOKEN;

test.beforeAll(() => {
  if (!OPERATOR || !AGENT) throw new Error('TOOLGATE_OPERATOR_TOKEN and TOOLGATE_AGENT_TOKEN must be set (run tests/e2e/ui/run.sh)');
});

/** What `toolgate ui` asks the daemon for: a one-time sign-in link. */
async function signInLink(token = OPERATOR) {
  const res = await fetch(`${BASE}/v1/session/links`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`minting a sign-in link: ${res.status} ${await res.text()}`);
  return `${BASE}${(await res.json()).path}`;
}

/** An agent's call; resolves to the Decision (no waiting). */
async function check(call) {
  const res = await fetch(`${BASE}/v1/check`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${AGENT}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(call),
  });
  return res.json();
}

test('a sign-in link signs the browser in, once, and deep links open signed in in a new tab', async ({ page, context }) => {
  const link = await signInLink();
  await page.goto(link);
  await expect(page.getByTestId('conn')).toHaveAttribute('data-state', 'live');
  await expect(page.getByTestId('signed-in-as')).toContainText('voting as operator');
  // The code leaves the address bar at once, and no token is kept in the page.
  expect(page.url()).not.toContain('signin');
  expect(await page.evaluate(() => Object.keys(sessionStorage).length)).toBe(0);
  expect(await page.evaluate(() => document.cookie)).toBe(''); // HttpOnly

  // An approval's deep link, opened in a new tab, shows that card.
  const session = `link-${crypto.randomBytes(4).toString('hex')}`;
  const d = await check({ tool: 'exec', params: { command: 'git push origin main' }, session });
  expect(d.decision).toBe('escalate');
  const tab = await context.newPage();
  await tab.goto(`${BASE}/#approval/${d.approval.id}`);
  const card = tab.getByTestId(`approval-${d.approval.id}`);
  await expect(card).toBeVisible();
  await expect(card).toHaveClass(/\blinked\b/); // brought into view and marked
  await card.getByRole('button', { name: 'Approve' }).click();
  await expect(card).toContainText(/approved/i);

  // The same link a second time signs nobody in.
  const other = await context.browser().newContext();
  const stranger = await other.newPage();
  await stranger.goto(link);
  await expect(stranger.locator('#login')).toBeVisible();
  await expect(stranger.locator('#login-error')).toContainText('used already or has expired');
  await other.close();

  // Signing out ends the session in every tab of this browser.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.locator('#login')).toBeVisible();
  await tab.reload();
  await expect(tab.locator('#login')).toBeVisible();
});

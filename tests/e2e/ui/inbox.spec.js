// The approval inbox: signing in by a one-time link (no token pasted),
// deep links that open signed in in a new tab, and the inbox itself.
'use strict';

const { test, expect } = require('@playwright/test');
const crypto = require('node:crypto');

const BASE = process.env.TOOLGATE_URL || 'http://127.0.0.1:7878';
const OPERATOR = process.env.TOOLGATE_OPERATOR_TOKEN;
const AGENT = process.env.TOOLGATE_AGENT_TOKEN;
// A named operator's own token: only named people count toward an R4 quorum.
const PERSON = process.env.TOOLGATE_PERSON_TOKEN;

test.beforeAll(() => {
  if (!OPERATOR || !AGENT || !PERSON) {
    throw new Error('TOOLGATE_OPERATOR_TOKEN, TOOLGATE_AGENT_TOKEN and TOOLGATE_PERSON_TOKEN must be set (run tests/e2e/ui/run.sh)');
  }
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
  const d = await check({ tool: 'exec', params: { command: `ssh ${session} systemctl restart web` }, session });
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

/** An agent's call that waits up to `wait` for a person; resolves to its Decision. */
function checkAndWait(call, wait = '60s') {
  return fetch(`${BASE}/v1/check?wait=${wait}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${AGENT}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(call),
  }).then((res) => res.json());
}

test('fifteen pending calls: the inbox leads, identical ones are one card, most urgent first, the keyboard approves', async ({ page }) => {
  const run = crypto.randomBytes(3).toString('hex');
  // Signed in as a named person: R4 votes count only from named people.
  await page.goto(await signInLink(PERSON));
  await expect(page.getByTestId('conn')).toHaveAttribute('data-state', 'live');

  // Six sessions force-push the same branch (R4), eight restart a service on
  // eight hosts (R3), and one more waits for an answer right now.
  const force = `git push --force origin main-${run}`;
  for (let i = 0; i < 6; i++) {
    const d = await check({ tool: 'exec', params: { command: force }, session: `${run}-force-${i}` });
    expect(d.decision).toBe('escalate');
  }
  for (let i = 0; i < 8; i++) {
    const d = await check({ tool: 'exec', params: { command: `ssh prod-${run}-${i} systemctl restart web` }, session: `${run}-push-${i}` });
    expect(d.decision).toBe('escalate');
  }
  const waited = `ssh waiting-${run} systemctl restart web`;
  const waiting = checkAndWait({ tool: 'exec', params: { command: waited }, session: `${run}-wait` });

  const cards = page.locator('[data-testid^="approval-"]').filter({ hasText: run });
  // 15 calls, 10 cards: the six identical ones are one.
  await expect(cards).toHaveCount(10);
  // The inbox is the main view while anything is pending.
  await expect(page.locator('.col-main > .approvals-card')).toBeVisible();

  // Most urgent first: the agent waiting now, then R4, then R3.
  const texts = await cards.locator('pre.cmd').allTextContents();
  expect(texts[0]).toBe(waited);
  await expect(cards.first()).toContainText('agent waiting');
  expect(texts[1]).toBe(force);
  expect(texts.slice(2).every((t) => t.startsWith(`ssh prod-${run}-`))).toBe(true);
  // Pinned by id: the order changes as cards are approved.
  const group = page.getByTestId(await cards.nth(1).getAttribute('data-testid'));
  await expect(group.locator('[data-testid^="count-"]')).toHaveText('× 6');
  await expect(group.getByRole('button', { name: /^Approve [0-9a-f]{32}$/ })).toHaveText('Approve 6');

  // The keyboard: j to the first card, a approves the agent that waits.
  await page.locator('body').click({ position: { x: 2, y: 2 } });
  const first = page.getByTestId(await cards.first().getAttribute('data-testid'));
  await page.keyboard.press('j');
  await expect(first).toHaveClass(/\bfocused\b/);
  await page.keyboard.press('a');
  // A key press asks first; Enter on the confirm button casts the vote.
  await expect(first.locator('.confirm')).toBeVisible();
  await page.keyboard.press('Enter');
  const answer = await waiting;
  expect(answer.decision).toBe('allow');

  // The keyboard moves on to the group; a votes on all six identical calls
  // (R4 needs two people under the default policy: each has one vote now).
  await expect(group).toHaveClass(/\bfocused\b/);
  await page.keyboard.press('a');
  await expect(group.locator('.confirm')).toContainText('6 identical calls');
  await page.keyboard.press('Enter');
  await expect(group.locator('.approval-msg')).toContainText('You approved');
  const votes = async () => {
    const open = await (await fetch(`${BASE}/v1/approvals`, { headers: { Authorization: `Bearer ${OPERATOR}` } })).json();
    return open.approvals.filter((a) => a.summary === force).map((a) => `${a.state} ${a.have}/${a.need}`);
  };
  await expect.poll(votes).toEqual(Array(6).fill('pending 1/2'));
});

test('the sub-commands that triggered the hold are marked and every finding is listed', async ({ page }) => {
  const run = crypto.randomBytes(3).toString('hex');
  await page.goto(await signInLink());
  const command = `echo ${run} && git push --force origin main; ssh prod-${run} systemctl restart web`;
  const d = await check({ tool: 'exec', params: { command }, session: `${run}-flag` });
  expect(d.decision).toBe('escalate');
  const card = page.getByTestId(`approval-${d.approval.id}`);
  await expect(card.locator('pre.cmd')).toHaveText(command); // the whole call, unchanged
  await expect(card.locator('pre.cmd mark.flagged')).toHaveText(['git push --force origin main', 'systemctl restart web']);
  const findings = card.getByTestId(`findings-${d.approval.id}`).locator('li');
  await expect(findings).toHaveCount(2);
  await expect(findings.nth(0)).toContainText('R4');
  await expect(findings.nth(0)).toContainText('force-pushes');
  await expect(findings.nth(1)).toContainText('R3');
  await expect(findings.nth(1)).toContainText('system service');
});

test('opt-in desktop notifications announce a new call waiting, and the feed names the agent', async ({ page }) => {
  // A stand-in for the browser's Notification that records what is shown.
  await page.addInitScript(() => {
    window.__notes = [];
    window.Notification = class {
      static permission = 'default';
      static async requestPermission() {
        window.Notification.permission = 'granted';
        return 'granted';
      }
      constructor(title, options) {
        window.__notes.push({ title, body: options && options.body, tag: options && options.tag });
      }
      close() {}
    };
    // As if the operator were in another window.
    Object.defineProperty(document, 'visibilityState', { get: () => 'hidden' });
  });
  const run = crypto.randomBytes(3).toString('hex');
  await page.goto(await signInLink());
  await expect(page.getByTestId('conn')).toHaveAttribute('data-state', 'live');
  const button = page.getByTestId('notify-btn');
  await expect(button).toHaveText('Notify me');

  // Off by default: nothing is shown.
  const quiet = await check({ tool: 'exec', params: { command: `ssh quiet-${run} systemctl restart web` }, session: `${run}-q`, agent: `agent-${run}` });
  await expect(page.getByTestId(`approval-${quiet.approval.id}`)).toBeVisible();
  expect(await page.evaluate(() => window.__notes.length)).toBe(0);

  await button.click();
  await expect(button).toHaveText('Notifications: on');
  const loud = await check({ tool: 'exec', params: { command: `ssh loud-${run} systemctl restart web` }, session: `${run}-l`, agent: `agent-${run}` });
  await expect.poll(() => page.evaluate(() => window.__notes)).toEqual([
    { title: 'toolgate: R3 call waits for approval', body: `ssh loud-${run} systemctl restart web`, tag: loud.approval.id },
  ]);

  // The feed's agent column.
  const row = page.getByTestId('feed').locator('tr.row').filter({ hasText: `loud-${run}` }).first();
  await expect(row.locator('td.agent')).toHaveText(`agent-${run}`);
});

test('a call sent without a working directory is shown as such', async ({ page }) => {
  const run = crypto.randomBytes(3).toString('hex');
  await page.goto(await signInLink());
  const d = await check({ tool: 'exec', params: { command: `ssh nocwd-${run} systemctl restart web` }, session: `${run}-nocwd` });
  const card = page.getByTestId(`approval-${d.approval.id}`);
  await expect(card.locator('.approval-meta')).toContainText('not sent by the agent (relative paths judged as unknown)');
});

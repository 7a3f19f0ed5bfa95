// The control UI against a real daemon (started by run.sh): an operator
// signs in, an agent's escalated call appears live in the pending panel,
// the operator approves it in the browser, and the agent's waiting
// `POST /v1/check?wait=30s` returns allow.
'use strict';

const { test, expect } = require('@playwright/test');
const crypto = require('node:crypto');

const BASE = process.env.TOOLGATE_URL || 'http://127.0.0.1:7878';
const OPERATOR = process.env.TOOLGATE_OPERATOR_TOKEN;
const AGENT = process.env.TOOLGATE_AGENT_TOKEN;
const PERSON = process.env.TOOLGATE_PERSON_TOKEN;

test.beforeAll(() => {
  if (!OPERATOR || !AGENT || !PERSON) {
    throw new Error('TOOLGATE_OPERATOR_TOKEN, TOOLGATE_AGENT_TOKEN and TOOLGATE_PERSON_TOKEN must be set (run tests/e2e/ui/run.sh)');
  }
});

/** Signs in through the form and waits for the live feed to connect. */
async function signIn(page, token) {
  await page.goto('/');
  await page.getByLabel('Operator token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Starts an agent's check that waits for approval; resolves to {status, body}. */
function checkAndWait(call, wait = '30s') {
  return fetch(`${BASE}/v1/check?wait=${wait}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${AGENT}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(call),
  }).then(async (res) => ({ status: res.status, body: await res.json() }));
}

test('an escalated call appears live and is approved from the browser', async ({ page }) => {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));

  await signIn(page, OPERATOR);
  await expect(page.getByTestId('conn')).toHaveAttribute('data-state', 'live');
  await expect(page.getByTestId('audit')).toContainText('Chain intact');
  await expect(page.getByTestId('signed-in-as')).toContainText('voting as operator');

  // A marker that a page reload would wipe: the approval must arrive live.
  await page.evaluate(() => {
    window.__noReload = true;
  });

  // `git push origin main` escalates (R3) under the default policy. A
  // session unique to this run keeps it apart from anything else.
  const session = `e2e-${crypto.randomBytes(4).toString('hex')}`;
  const command = 'git push origin main';
  const call = { tool: 'exec', params: { command }, session };
  const pending = checkAndWait(call);

  const card = page.locator('[data-testid^="approval-"]').filter({ hasText: session });
  await expect(card).toBeVisible();
  await expect(card.locator('pre.cmd')).toHaveText(command);
  await expect(card).toContainText('R3');
  await expect(card).toContainText(/expires in \d+:\d\d/);
  const id = await card.getAttribute('data-approval-id');
  expect(id).toBeTruthy();

  // The decision's approve_url (…/#approval/<id>) marks that card.
  await page.evaluate((hash) => {
    location.hash = hash;
  }, `#approval/${id}`);
  await expect(card).toHaveClass(/linked/);

  // The escalation is in the feed before anyone approves.
  const feed = page.getByTestId('feed');
  const rowsFor = (decision) => feed.locator(`tr.row[data-decision="${decision}"]`).filter({ hasText: command });
  await expect(rowsFor('escalate')).toHaveCount(1);
  await expect(rowsFor('allow')).toHaveCount(0);

  await page.getByRole('button', { name: `Approve ${id}` }).click();

  const answer = await pending;
  expect(answer.status).toBe(200);
  expect(answer.body.decision).toBe('allow');

  // The allow follows in the feed, newest first, and the approval leaves
  // the pending panel once the retry consumed it.
  await expect(rowsFor('allow')).toHaveCount(1);
  const seqs = await feed.locator('tr.row').filter({ hasText: command }).evaluateAll((rows) =>
    rows.map((r) => ({ seq: Number(r.dataset.seq), decision: r.dataset.decision })),
  );
  expect(seqs.map((r) => r.decision)).toEqual(['allow', 'escalate']);
  expect(seqs[0].seq).toBeGreaterThan(seqs[1].seq);
  await expect(card).toHaveCount(0);

  // Expanding a row shows the redacted call.
  await rowsFor('allow').click();
  await expect(feed.locator('tr.detail pre.json').first()).toContainText(session);

  expect(await page.evaluate(() => window.__noReload)).toBe(true);
  expect(errors).toEqual([]);
});

test("a person signs in with their own token and the vote is theirs, by the UI", async ({ page }) => {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await signIn(page, PERSON);
  await expect(page.getByTestId('conn')).toHaveAttribute('data-state', 'live');
  await expect(page.getByTestId('signed-in-as')).toContainText('voting as e2e-alice');

  const session = `e2e-${crypto.randomBytes(4).toString('hex')}`;
  const command = 'git push origin main';
  const pending = checkAndWait({ tool: 'exec', params: { command }, session });
  const card = page.locator('[data-testid^="approval-"]').filter({ hasText: session });
  await expect(card).toBeVisible();
  const id = await card.getAttribute('data-approval-id');
  await page.getByRole('button', { name: `Approve ${id}` }).click();
  const answer = await pending;
  expect(answer.body.decision).toBe('allow');

  const shown = await fetch(`${BASE}/v1/approvals/${id}`, {
    headers: { Authorization: `Bearer ${OPERATOR}` },
  }).then((r) => r.json());
  expect(shown.votes.map((v) => [v.identity, v.channel])).toEqual([['e2e-alice', 'ui']]);
  expect(errors).toEqual([]);
});

test('an emergency bypass shows as a banner until it is ended', async ({ page }) => {
  await signIn(page, OPERATOR);
  await expect(page.getByTestId('conn')).toHaveAttribute('data-state', 'live');
  const banner = page.getByTestId('bypass-banner');
  await expect(banner).toBeHidden();
  const started = await fetch(`${BASE}/v1/bypass`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${OPERATOR}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ layers: ['knowledge'], for: '5m', reason: 'e2e: the SOP server is down' }),
  }).then((r) => r.json());
  expect(started.bypass.id).toBeTruthy();
  await expect(banner).toBeVisible();
  await expect(banner).toContainText('knowledge lifted by operator');
  await expect(banner).toContainText('the SOP server is down');
  const ended = await fetch(`${BASE}/v1/bypass/${started.bypass.id}/end`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${OPERATOR}` },
  });
  expect(ended.status).toBe(200);
  await expect(banner).toBeHidden();
});

test('a wrong token is refused with a message on the sign-in screen', async ({ page }) => {
  await signIn(page, `wrong-${crypto.randomBytes(8).toString('hex')}`);
  const error = page.locator('#login-error');
  await expect(error).toBeVisible();
  await expect(error).toContainText('not accepted');
  await expect(page.locator('#app')).toBeHidden();
  expect(await page.evaluate(() => sessionStorage.getItem('toolgate.operatorToken'))).toBeNull();
});

test('the agent token cannot sign in', async ({ page }) => {
  await signIn(page, AGENT);
  await expect(page.locator('#login-error')).toContainText('not an operator token');
  await expect(page.locator('#app')).toBeHidden();
});

test('pending approvals are most urgent first and the keyboard approves', async ({ page }) => {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await signIn(page, OPERATOR);
  await expect(page.getByTestId('conn')).toHaveAttribute('data-state', 'live');

  // An R4 call first, then an R3 one: newest first would put the R3 card
  // on top; most urgent first keeps the R4 one there.
  const session = `e2e-${crypto.randomBytes(4).toString('hex')}`;
  const r3 = { tool: 'exec', params: { command: 'kubectl apply -f prod.yaml' }, session, cwd: '/srv' };
  const r4 = { tool: 'exec', params: { command: 'git push --force origin main' }, session, cwd: '/srv' };
  const waitR4 = checkAndWait(r4);
  const cards = page.locator('[data-testid^="approval-"]').filter({ hasText: session });
  await expect(cards).toHaveCount(1);
  const waitR3 = checkAndWait(r3);
  await expect(cards).toHaveCount(2);
  await expect(cards.first().locator('pre.cmd')).toHaveText('git push --force origin main');
  await expect(cards.nth(1).locator('pre.cmd')).toHaveText('kubectl apply -f prod.yaml');
  // Both agents are waiting on their calls (?wait), and the cards say so.
  const topId = await cards.first().getAttribute('data-approval-id');
  await expect(page.getByTestId(`waiting-${topId}`)).toBeVisible();
  await expect(page.getByTestId(`waiting-${topId}`)).toContainText(/agent waiting — \d+ s left/);
  // A command wraps between words, never inside one.
  await expect(cards.first().locator('pre.cmd')).toHaveCSS('word-break', 'normal');

  // j focuses the first card (ours, unless older ones are still pending:
  // move until ours is focused); d denies the R4 call (one denial is
  // enough; an approval of R4 needs two people).
  const firstId = await cards.first().getAttribute('data-approval-id');
  const ids = await page.locator('[data-testid^="approval-"]').evaluateAll((els) => els.map((e) => e.dataset.approvalId));
  for (let i = 0; i <= ids.indexOf(firstId); i++) await page.keyboard.press('j');
  await expect(page.locator(`[data-approval-id="${firstId}"]`)).toHaveClass(/focused/);
  await page.keyboard.press('d');
  // A key press asks first: Enter on the focused confirm button casts it.
  await expect(page.locator(`[data-approval-id="${firstId}"] .confirm`)).toBeVisible();
  await page.keyboard.press('Enter');
  const denied = await waitR4;
  expect(denied.body.decision).toBe('block');

  // a approves the R3 one, which one operator may.
  await expect(cards).toHaveCount(1);
  const secondId = await cards.first().getAttribute('data-approval-id');
  expect(secondId).not.toBe(firstId);
  const ids2 = await page.locator('[data-testid^="approval-"]').evaluateAll((els) => els.map((e) => e.dataset.approvalId));
  for (let i = 0; i <= ids2.length; i++) await page.keyboard.press('k');
  for (let i = 0; i < ids2.indexOf(secondId); i++) await page.keyboard.press('j');
  await expect(page.locator(`[data-approval-id="${secondId}"]`)).toHaveClass(/focused/);
  await page.keyboard.press('a');
  await page.keyboard.press('Enter');
  const answer = await waitR3;
  expect(answer.body.decision).toBe('allow');
  expect(errors).toEqual([]);
});

test('an agent cannot reorder or hide part of the command an operator approves', async ({ page }) => {
  await signIn(page, OPERATOR);
  await expect(page.getByTestId('conn')).toHaveAttribute('data-state', 'live');
  const session = `e2e-${crypto.randomBytes(4).toString('hex')}`;
  // U+202E reverses what follows on screen; ESC[2K and CR would erase it on a terminal.
  const command = 'git push --force origin main #\u202efr- mr\u001b[2K\rls';
  const res = await fetch(`${BASE}/v1/check`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${AGENT}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ tool: 'exec', params: { command }, session, cwd: '/srv' }),
  }).then((r) => r.json());
  expect(res.decision).toBe('escalate');
  const card = page.locator('[data-testid^="approval-"]').filter({ hasText: session });
  await expect(card.locator('pre.cmd')).toHaveText('git push --force origin main #\\u{202e}fr- mr\\u{1b}[2K\\u{d}ls');
});

// The page a team keeps open: numbers that agree with the audit log
// whoever decided (a hook deciding in its own process too) and survive a
// restart, the Resolved view, the inbox on a phone, votes that ask before
// they are cast, cards as tall as their content, and a banner for a policy
// the daemon rejected. Each test runs a daemon of its own (started here on
// a data directory of its own), so it can restart it and edit its policy.
'use strict';

const { test, expect } = require('@playwright/test');
const { spawn, execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const BIN = process.env.TOOLGATE_E2E_BIN;
const DEFAULT_POLICY = fs.readFileSync(path.join(__dirname, '../../../policies/default.toml'), 'utf8');
// Pending approvals expire in 4 s here, so one can be seen expiring.
const POLICY = DEFAULT_POLICY.replace(/^pending_ttl = .*$/m, 'pending_ttl = "4s"');

test.beforeAll(() => {
  if (!BIN) throw new Error('TOOLGATE_E2E_BIN must name the toolgate binary (run tests/e2e/ui/run.sh)');
  if (POLICY === DEFAULT_POLICY) throw new Error('the default policy no longer has a pending_ttl line to shorten');
});

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

/** A daemon of this test's own: its data dir, policy, tokens, and process. */
class Daemon {
  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-history-'));
    this.data = path.join(this.dir, 'data');
    this.home = path.join(this.dir, 'home');
    fs.mkdirSync(this.home);
    this.policy = path.join(this.dir, 'policy.toml');
    fs.writeFileSync(this.policy, POLICY);
    this.agent = `agent-${crypto.randomBytes(16).toString('hex')}`;
    this.operator = `operator-${crypto.randomBytes(16).toString('hex')}`;
    this.env = { ...process.env, HOME: this.home, TOOLGATE_AGENT_TOKEN: this.agent, TOOLGATE_OPERATOR_TOKEN: this.operator };
    delete this.env.TOOLGATE_POLICY;
    delete this.env.TOOLGATE_DATA_DIR;
    delete this.env.TOOLGATE_URL;
    this.proc = null;
  }

  /** The toolgate CLI on this daemon's data directory. */
  cli(args) {
    return execFileSync(BIN, args, { env: this.env, encoding: 'utf8' });
  }

  /** A named person's own token. */
  person(name) {
    return JSON.parse(this.cli(['--data-dir', this.data, 'operators', 'add', name, '--json'])).token;
  }

  async start() {
    if (!this.port) this.port = await freePort();
    this.url = `http://127.0.0.1:${this.port}`;
    this.log = fs.openSync(path.join(this.dir, 'serve.log'), 'a');
    this.proc = spawn(BIN, ['serve', '--listen', `127.0.0.1:${this.port}`, '--data-dir', this.data, '--policy', this.policy], {
      env: this.env,
      stdio: ['ignore', this.log, this.log],
    });
    for (let i = 0; i < 300; i++) {
      try {
        const res = await fetch(`${this.url}/v1/state`, { headers: { Authorization: `Bearer ${this.operator}` } });
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      if (this.proc.exitCode != null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`toolgate serve did not start:\n${fs.readFileSync(path.join(this.dir, 'serve.log'), 'utf8')}`);
  }

  async stop() {
    if (!this.proc || this.proc.exitCode != null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill('SIGTERM');
    await exited;
  }

  async remove() {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  async request(method, p, token, body) {
    const res = await fetch(`${this.url}${p}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  }

  /** An agent's call through the daemon. */
  check(command, session = 's') {
    return this.request('POST', '/v1/check', this.agent, { tool: 'exec', params: { command }, session, requester: { id: 'agent-e2e' } });
  }

  /** A sign-in link for `token` (the administrator's by default). */
  async signIn(page, token = this.operator) {
    const { path: p } = await this.request('POST', '/v1/session/links', token);
    await page.goto(`${this.url}${p}`);
    await expect(page.getByTestId('conn')).toHaveAttribute('data-state', 'live');
  }

  /** The store's own counts: every decision record, by outcome. */
  async storeCounts() {
    const counts = { allow: 0, hold: 0, escalate: 0, block: 0 };
    const page = await this.request('GET', '/v1/decisions?limit=500', this.operator);
    for (const r of page.decisions) counts[r.outcome] += 1;
    return counts;
  }
}

/** @type {Daemon} */
let d;
test.beforeEach(async () => {
  d = new Daemon();
  await d.start();
});
test.afterEach(async () => {
  await d.remove();
});

/** The four count tiles as numbers. */
async function tiles(page) {
  const n = async (id) => Number((await page.getByTestId(id).textContent()).replace(/[^0-9]/g, ''));
  return { allow: await n('t-allow'), hold: await n('t-hold'), escalate: await n('t-escalate'), block: await n('t-block') };
}

test('the tiles count what the store holds, from a hook deciding in its own process too, and after a restart', async ({ page }) => {
  await d.check('ls');
  await d.check('rm -rf /');
  await d.check('ssh web-1 systemctl restart web');
  // A hook deciding in its own process: it records in the store, the daemon never sees the call.
  d.cli(['check', '--data-dir', d.data, '--policy', d.policy, '--json', '--', 'ls', '-la']);
  d.cli(['check', '--data-dir', d.data, '--policy', d.policy, '--json', '--', 'git', 'push', '--force', 'origin', 'main']);
  const want = await d.storeCounts();
  expect(want.allow).toBe(2);
  expect(want.escalate).toBe(2);
  expect(want.block).toBe(1);

  await d.signIn(page);
  await expect.poll(() => tiles(page)).toEqual(want);

  await d.stop();
  await d.start();
  // Sign-in sessions live in the daemon's memory: the page says so, with the way back in.
  await expect(page.locator('#login-error')).toContainText('Your session ended', { timeout: 30_000 });
  await expect(page.locator('#login-error')).toContainText('toolgate ui');
  await page.goto('about:blank');
  await d.signIn(page);
  await expect.poll(() => tiles(page)).toEqual(want);
  await d.check('ls');
  await expect.poll(() => tiles(page)).toEqual({ ...want, allow: want.allow + 1 });
});

test('the Resolved view shows approved, denied, expired and bypassed calls with who and when', async ({ page }) => {
  const approved = await d.check('ssh approve-me systemctl restart web', 'a');
  const denied = await d.check('ssh deny-me systemctl restart web', 'b');
  const expired = await d.check('ssh expire-me systemctl restart web', 'c');
  const bypassed = await d.check('ssh bypass-me systemctl restart web', 'd');
  for (const x of [approved, denied, expired, bypassed]) expect(x.decision).toBe('escalate');
  const alice = d.person('alice-history');

  await d.signIn(page, alice);
  const card = (x) => page.getByTestId(`approval-${x.approval.id}`);
  await card(approved).getByRole('button', { name: 'Approve' }).click();
  await card(denied).getByRole('textbox').fill('not on a Friday');
  await card(denied).getByRole('button', { name: 'Deny' }).click();
  await d.request('POST', '/v1/bypass', d.operator, { approval: bypassed.approval.id, reason: 'hotfix for incident 42' });

  await page.getByTestId('tab-resolved').click();
  expect(page.url()).toContain('#resolved');
  const item = (x) => page.getByTestId(`resolved-${x.approval.id}`);
  await expect(item(approved)).toHaveAttribute('data-outcome', 'approved');
  await expect(item(approved)).toContainText('approved by alice-history');
  await expect(item(denied)).toHaveAttribute('data-outcome', 'denied');
  await expect(item(denied)).toContainText('denied by alice-history');
  await expect(item(denied)).toContainText('not on a Friday');
  await expect(item(bypassed)).toHaveAttribute('data-outcome', 'bypassed');
  await expect(item(bypassed)).toContainText('bypassed by operator');
  await expect(item(bypassed)).toContainText('hotfix for incident 42');
  // The expiry sweep runs each second; the list is read again on approval events.
  await expect(item(expired)).toHaveAttribute('data-outcome', 'expired', { timeout: 20_000 });
  await expect(item(expired)).toContainText('nobody voted before it expired');
  for (const x of [approved, denied, expired, bypassed]) {
    await expect(item(x)).toContainText(/\d{1,2}:\d{2}/); // when
    await expect(item(x)).toContainText('asked by agent-e2e');
  }

  // Filterable, and each approval has a link of its own that outlives the inbox.
  await page.locator('#r-outcome').selectOption('denied');
  await expect(page.locator('#resolved-list > li')).toHaveCount(1);
  await page.locator('#r-outcome').selectOption('');
  // The feed's escalation links to what became of it.
  await page.getByTestId(`feed-approval-${expired.approval.id}`).click();
  await expect(item(expired)).toHaveClass(/\blinked\b/);
  await page.goto(`${d.url}/#approval/${denied.approval.id}`);
  await expect(item(denied)).toHaveClass(/\blinked\b/);
});

test('on a 420 px phone the first pending card is on the first screen', async ({ page }) => {
  await page.setViewportSize({ width: 420, height: 860 });
  const x = await d.check('ssh phone-1 systemctl restart web');
  await d.signIn(page);
  const card = page.getByTestId(`approval-${x.approval.id}`);
  await expect(card).toBeVisible();
  const box = await card.boundingBox();
  expect(box.y).toBeLessThan(860 - 80); // its head and call are in view without scrolling
});

test('an R4 keyboard vote asks to confirm; after a vote the buttons say so', async ({ page }) => {
  const x = await d.check('git push --force origin main', 'r4');
  expect(x.risk).toBe('R4');
  const alice = d.person('alice-r4');
  await d.signIn(page, alice);
  const card = page.getByTestId(`approval-${x.approval.id}`);
  await expect(card).toBeVisible();
  await page.locator('body').click({ position: { x: 2, y: 2 } });
  await page.keyboard.press('j');
  await expect(card).toHaveClass(/\bfocused\b/);
  await page.keyboard.press('a');
  const bar = page.getByTestId(`confirm-bar-${x.approval.id}`);
  await expect(bar).toBeVisible();
  await expect(bar).toContainText('R4');
  // Escape: nothing was cast.
  await page.keyboard.press('Escape');
  await expect(bar).toBeHidden();
  const open = async () => (await d.request('GET', `/v1/approvals/${x.approval.id}`, d.operator)).have;
  expect(await open()).toBe(0);
  // A click on an R4 asks too; Enter on the confirm button casts it.
  await card.getByRole('button', { name: /^Approve [0-9a-f]{32}$/ }).click();
  await expect(bar).toBeVisible();
  await page.keyboard.press('Enter');
  await expect.poll(open).toBe(1);
  await expect(card.locator('.approval-msg')).toContainText('You approved');
  await expect(card.getByRole('button', { name: /^Approve [0-9a-f]{32}$/ })).toBeDisabled();
  await expect(card.getByRole('button', { name: /^Deny [0-9a-f]{32}$/ })).toBeDisabled();
});

test('cards are as tall as their own content, whatever their neighbours hold', async ({ page }) => {
  const long = Array.from({ length: 12 }, (_, i) => `ssh host-${i} systemctl restart web-${i}`).join(' && ');
  await d.check(long, 'long');
  await d.check('ssh short systemctl restart web', 'short');
  await d.signIn(page);
  await expect(page.locator('.approval')).toHaveCount(2);
  // The space under each card's last child, and the two heights.
  const measured = await page.locator('.approval').evaluateAll((cards) =>
    cards.map((c) => {
      const r = c.getBoundingClientRect();
      const kids = [...c.children].filter((k) => !k.hidden && k.getBoundingClientRect().height > 0);
      const bottom = Math.max(...kids.map((k) => k.getBoundingClientRect().bottom));
      return { height: r.height, slack: r.bottom - bottom };
    }),
  );
  for (const m of measured) expect(m.slack).toBeLessThan(24);
  const [a, b] = measured.map((m) => m.height).sort((x, y) => x - y);
  expect(a).toBeLessThan(b); // the short card did not stretch to the long one
});

test('a policy the daemon rejects on reload shows a banner until it is fixed', async ({ page }) => {
  await d.signIn(page);
  const banner = page.getByTestId('alert-banner');
  await expect(banner).toBeHidden();
  fs.writeFileSync(d.policy, `${POLICY}\n[approvals\nbroken = `);
  await expect(banner).toBeVisible({ timeout: 20_000 });
  await expect(banner).toContainText('rejected on reload');
  await expect(banner).toContainText('previous policy stays in force');
  fs.writeFileSync(d.policy, POLICY);
  await expect(banner).toBeHidden({ timeout: 20_000 });
});

test('on a wide screen the selected approval is shown in full beside the list, and every card keeps its buttons', async ({ page }) => {
  const first = await d.check('git push --force origin main', 'r4'); // R4: the most urgent
  const second = await d.check(`echo start && ssh db-1 systemctl restart postgres`, 'r3');
  await d.signIn(page);
  const detail = page.getByTestId('inbox-detail');
  await expect(detail).toBeVisible();
  await expect(detail).toHaveAttribute('data-shows', first.approval.id);
  await expect(detail.locator('pre.cmd')).toHaveText('git push --force origin main');
  await expect(detail.locator('pre.json')).toContainText('"session": "r4"');
  // Each card in the list keeps what a vote needs, its buttons visible.
  for (const x of [first, second]) {
    await expect(page.getByTestId(`approve-${x.approval.id}`)).toBeVisible();
    await expect(page.getByTestId(`deny-${x.approval.id}`)).toBeVisible();
  }
  // A click on the other card shows it in the pane.
  await page.getByTestId(`approval-${second.approval.id}`).locator('pre.cmd').click();
  await expect(detail).toHaveAttribute('data-shows', second.approval.id);
  await expect(detail.locator('pre.cmd mark.flagged')).toHaveText('systemctl restart postgres');
  await expect(page.getByTestId(`approval-${second.approval.id}`)).toHaveClass(/\bselected\b/);
  // Narrow: no pane, each card in full.
  await page.setViewportSize({ width: 900, height: 900 });
  await expect(detail).toBeHidden();
  await expect(page.getByTestId(`approval-${first.approval.id}`).locator('details.full-call')).toBeVisible();
});

// The control UI's side panels (ui/panels.js) against a real daemon (started
// by run.sh): the knowledge layer, the integrations and the sandbox posture,
// each driven through the daemon's own API and compared with GET /v1/state.
'use strict';

const { test, expect } = require('@playwright/test');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const BASE = process.env.TOOLGATE_URL || 'http://127.0.0.1:7878';
const OPERATOR = process.env.TOOLGATE_OPERATOR_TOKEN;
const AGENT = process.env.TOOLGATE_AGENT_TOKEN;
// The daemon's HOME (run.sh): its default SOP directory lies inside it.
const HOME = process.env.TOOLGATE_E2E_HOME;

test.beforeAll(() => {
  if (!OPERATOR || !AGENT || !HOME) {
    throw new Error('TOOLGATE_OPERATOR_TOKEN, TOOLGATE_AGENT_TOKEN and TOOLGATE_E2E_HOME must be set (run tests/e2e/ui/run.sh)');
  }
});

/**
 * Signs in with the operator token through the sign-in form and waits for
 * the live feed.
 * @param {import('@playwright/test').Page} page
 */
async function signIn(page) {
  await page.goto('/');
  await page.getByLabel('Operator token').fill(OPERATOR);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('conn')).toHaveAttribute('data-state', 'live');
}

/**
 * A daemon request; resolves to the parsed body, failing on any non-2xx.
 * @param {string} p
 * @param {{token?: string, body?: object}} [opts]
 */
async function api(p, { token = OPERATOR, body } = {}) {
  const res = await fetch(`${BASE}${p}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${p}: HTTP ${res.status}: ${text}`);
  return JSON.parse(text);
}

const state = () => api('/v1/state');
const check = (call) => api('/v1/check', { token: AGENT, body: call });
const canary = (report) => api('/v1/canary', { token: AGENT, body: report });
const rand = () => crypto.randomBytes(4).toString('hex');

/** The panel's lookup-time text for a mean in µs (below a second). */
function lookupText(us) {
  return us < 1000 ? `${Math.round(us)} µs mean` : `${(us / 1000).toFixed(us < 1e4 ? 2 : 1)} ms mean`;
}

/** The UI's one time format, computed in the page (by its format.js module). */
function shownTime(page, ts) {
  return page.evaluate(async (t) => (await import(new URL('format.js', location.href).href)).time(t), ts);
}

test('the knowledge panel shows the layer as the daemon reports it: holds, acknowledgements, lookup time and a failing source', async ({ page }) => {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));

  const before = await state();
  const k0 = before.knowledge;
  // run.sh gives the daemon a home of its own: the SOP directory is in it.
  expect(k0.sop_dirs.length).toBeGreaterThan(0);
  const sopDir = k0.sop_dirs[0];
  expect(path.resolve(sopDir).startsWith(path.resolve(HOME) + path.sep)).toBe(true);
  expect(k0.status).toBe('ok');
  expect(k0.stats.held).toBe(0);

  await signIn(page);
  const panel = page.getByTestId('panel-knowledge');
  await expect(panel.locator('h2')).toHaveText('Knowledge layer');
  await expect(panel.getByTestId('knowledge-status')).toHaveText(k0.status);
  await expect(panel.getByTestId('knowledge-status')).toHaveAttribute('data-tone', 'ok');
  await expect(panel.getByTestId('knowledge-enforcement')).toContainText(k0.enforcement);
  await expect(panel.getByTestId('knowledge-sop-dirs')).toHaveText(k0.sop_dirs.join(''));
  await expect(panel.getByTestId('knowledge-holds')).toHaveText(String(k0.stats.held));
  await expect(panel.getByTestId('knowledge-ack-rate')).toHaveText('–');
  await expect(panel.getByTestId('knowledge-last-error')).toHaveCount(0);
  await page.evaluate(() => {
    window.__noReload = true;
  });

  fs.mkdirSync(sopDir, { recursive: true });
  const sop = path.join(sopDir, 'docker.ai.sop');
  const broken = path.join(sopDir, 'postgres.ai.sop');
  try {
    // A docker SOP holds `docker ps` (strict) until the agent retries it.
    fs.writeFileSync(sop, '# Docker\n\n## Preflight\n- Check which context you are on.\n');
    const call = { tool: 'exec', params: { command: 'docker ps' }, session: `e2e-${rand()}`, cwd: '/srv' };
    const held = await check(call);
    expect(held.decision).toBe('block');
    expect(held.block_reason).toMatch(/^TOOLGATE_ACK\|/);

    let st = await state();
    expect(st.knowledge.stats.held).toBe(1);
    expect(st.knowledge.stats.ack_rate).toBe(0);
    await expect(panel.getByTestId('knowledge-holds')).toHaveText('1');
    // The feed shows it as a hold, not as a refusal.
    const heldRow = page.getByTestId('feed').locator('tr.row').filter({ hasText: 'docker ps' }).first();
    await expect(heldRow.locator('.badge')).toHaveText('hold');
    await expect(panel.getByTestId('knowledge-ack-rate')).toHaveText('0%');
    await expect(panel.getByTestId('knowledge-interceptions')).toHaveText(String(st.knowledge.stats.interceptions));

    // The retry acknowledges it: one hold, one acknowledgement.
    const retried = await check(call);
    expect(retried.decision).toBe('allow');
    st = await state();
    expect(st.knowledge.stats.acked_by_retry).toBe(1);
    expect(st.knowledge.stats.ack_rate).toBe(1);
    await expect(panel.getByTestId('knowledge-ack-rate')).toHaveText('100%');
    await expect(panel).toContainText('1 by retry, 0 by id, of 1 held');
    await expect(panel.getByTestId('knowledge-interceptions')).toHaveText(String(st.knowledge.stats.interceptions));
    expect(st.knowledge.stats.lookup_us_mean).toBeGreaterThan(0);
    await expect(panel.getByTestId('knowledge-lookup')).toHaveText(lookupText(st.knowledge.stats.lookup_us_mean));

    // A directory where the postgres SOP should be is a failing source:
    // the layer is degraded, and says what failed and when.
    fs.mkdirSync(broken);
    const pg = await check({ tool: 'exec', params: { command: "psql -h db1 -c 'select 1'" }, session: `e2e-${rand()}`, cwd: '/srv' });
    expect(pg.decision).toBe('allow'); // fails open
    st = await state();
    expect(st.knowledge.status).toBe('degraded');
    expect(st.knowledge.last_error.error).toContain('postgres.ai.sop');
    await expect(panel.getByTestId('knowledge-status')).toHaveText('degraded');
    await expect(panel.getByTestId('knowledge-status')).toHaveAttribute('data-tone', 'warn');
    await expect(panel.getByTestId('knowledge-degraded')).toContainText('calls go on without that knowledge');
    const lastError = panel.getByTestId('knowledge-last-error');
    await expect(lastError).toContainText(st.knowledge.last_error.error);
    // Another failed lookup can move the time on between two reads: the
    // panel must show the time of the error the daemon reports now.
    await expect
      .poll(async () => {
        const now = await state();
        const shown = await shownTime(page, now.knowledge.last_error.at);
        const text = await panel.getByTestId('knowledge-last-error-at').textContent();
        return new RegExp(`^\\d+s ago \\(${shown.replace(/[-:]/g, '\\$&')}\\)$`).test(text ?? '');
      }, { timeout: 15000 })
      .toBe(true);
    await expect
      .poll(async () => {
        const now = await state();
        const text = await panel.getByTestId('knowledge-source-errors').textContent();
        return text === String(now.knowledge.stats.source_errors);
      }, { timeout: 15000 })
      .toBe(true);
  } finally {
    fs.rmSync(sop, { force: true });
    fs.rmSync(broken, { recursive: true, force: true });
  }

  expect(await page.evaluate(() => window.__noReload)).toBe(true);
  expect(errors).toEqual([]);
});

test('integrations appear live, with their last hook, and a tamper warning is an alert without a reload', async ({ page }) => {
  test.setTimeout(120_000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));

  // No integration reports to run.sh's daemon but this test.
  expect((await state()).integrations).toEqual([]);
  await signIn(page);
  const panel = page.getByTestId('panel-integrations');
  await expect(panel.getByTestId('integrations-empty')).toContainText('No integration has reported yet');
  await expect(panel.getByTestId('integrations-count')).toHaveText('0');
  await page.evaluate(() => {
    window.__noReload = true;
  });

  // One instance whose agent acts but whose hook never fires: the daemon
  // warns 30 s later. Started first, checked last.
  const silent = `e2e-silent-${rand()}`;
  await canary({ runtime: 'openclaw', instance: silent, event: 'start' });
  await canary({ runtime: 'openclaw', instance: silent, event: 'activity' });

  // One that is loaded, active and hooked.
  const good = `e2e-${rand()}`;
  await canary({ runtime: 'openclaw', instance: good, event: 'start' });
  await canary({ runtime: 'openclaw', instance: good, event: 'activity' });
  await canary({ runtime: 'openclaw', instance: good, event: 'hook' });

  const row = panel.locator(`[data-testid="integration"][data-instance="${good}"]`);
  await expect(row).toBeVisible();
  await expect(row).toHaveAttribute('data-runtime', 'openclaw');
  await expect(row.getByTestId('integration-status')).toHaveText('hook fired');
  await expect(row.getByTestId('integration-status')).toHaveAttribute('data-tone', 'ok');
  await expect(row.locator('[role="alert"]')).toHaveCount(0);
  await expect(panel.getByTestId('integrations-empty')).toHaveCount(0);
  await expect(panel.getByTestId('integrations-count')).toHaveText('2');
  const seen = (await state()).integrations.find((i) => i.instance === good);
  expect(seen.first_hook_ms).toBeGreaterThan(0);
  const hookAt = await shownTime(page, seen.first_hook_ms);
  await expect(row.getByTestId('integration-hook')).toHaveText(new RegExp(`^\\d+s ago \\(${hookAt.replace(/[-:]/g, '\\$&')}\\)$`));
  await expect(row.getByTestId('integration-last-seen')).toContainText(await shownTime(page, seen.last_seen_ms));
  await expect(row.getByTestId('integration-last-hook')).toContainText(await shownTime(page, seen.last_hook_ms));

  // A hook that decides through this daemon (its agent names the runtime)
  // shows as that runtime's, with its last hook.
  const hooked = await fetch(`${BASE}/v1/check`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${AGENT}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ tool: 'Bash', params: { command: 'ls' }, agent: 'codex', session: `e2e-${rand()}` }),
  });
  expect(hooked.status).toBe(200);
  const viaDaemon = panel.locator('[data-testid="integration"][data-runtime="codex"]');
  await expect(viaDaemon).toHaveAttribute('data-instance', 'hooks via this daemon', { timeout: 20_000 });
  await expect(viaDaemon.getByTestId('integration-last-hook')).toContainText('ago');

  // The "ago" text counts on by itself, once a second: state polls are
  // 10 s apart, so they alone could change it at most once in 3.5 s.
  const agoTexts = new Set();
  for (let i = 0; i < 8; i++) {
    agoTexts.add(await row.getByTestId('integration-hook').textContent());
    await page.waitForTimeout(500);
  }
  expect(agoTexts.size).toBeGreaterThanOrEqual(3);

  // The row is re-rendered in place, never rebuilt: a marker on it survives.
  await row.evaluate((el) => {
    el.__kept = true;
  });

  // A tamper report: an alert on that row, live.
  const detail = `e2e ${rand()}: plugin x rewrites params after toolgate <img src=x onerror=alert(1)>`;
  await canary({ runtime: 'openclaw', instance: good, event: 'tamper', detail });
  const alert = row.locator('[role="alert"]');
  await expect(alert).toBeVisible();
  await expect(alert).toContainText(detail);
  await expect(alert.locator('img')).toHaveCount(0);
  await expect(row.getByTestId('integration-status')).toHaveText('1 warning');
  await expect(row.getByTestId('integration-status')).toHaveAttribute('data-tone', 'bad');
  expect(await row.evaluate((el) => el.__kept === true)).toBe(true);

  // The silent one is flagged once its 30 s are up.
  const silentRow = panel.locator(`[data-testid="integration"][data-instance="${silent}"]`);
  await expect(silentRow.getByTestId('integration-hook')).toHaveText('never');
  await expect(silentRow.locator('[role="alert"]')).toContainText('before_tool_call has not fired', { timeout: 50_000 });
  await expect(panel.getByTestId('integrations-warned')).toHaveText('2 with warnings');

  expect(await page.evaluate(() => window.__noReload)).toBe(true);
  expect(errors).toEqual([]);
});

test('the posture panel says what /v1/state says, in words', async ({ page }) => {
  const { posture } = await state();
  await signIn(page);
  const panel = page.getByTestId('panel-posture');
  await expect(panel.getByTestId('posture-in-container')).toHaveText(posture.in_container ? 'yes' : 'no');
  await expect(panel.getByTestId('posture-confidence')).toHaveText(posture.confidence);
  await expect(panel.getByTestId('posture-runtime')).toHaveText(posture.runtime || '–');
  await expect(panel.getByTestId('posture-signals')).toHaveText(posture.signals.length ? posture.signals.join('') : 'none');
  const sandboxed = posture.in_container && posture.confidence === 'strong';
  await expect(panel.getByTestId('posture-sandboxed')).toHaveText(sandboxed ? 'yes' : 'no (needs a strong signal)');
  const summary = panel.getByTestId('posture-summary');
  if (!posture.in_container) {
    await expect(summary).toHaveText('Not in a container: a blocked call is all that stands between the agent and this machine.');
    await expect(panel.getByTestId('posture-status')).toHaveAttribute('data-tone', 'bad');
  } else if (sandboxed) {
    await expect(summary).toHaveText(new RegExp(`^In a${posture.runtime ? ` ${posture.runtime}` : ''} container: `));
    await expect(panel.getByTestId('posture-status')).toHaveAttribute('data-tone', 'ok');
  } else {
    await expect(summary).toContainText('only the environment says so');
    await expect(panel.getByTestId('posture-status')).toHaveAttribute('data-tone', 'warn');
  }
});

test('each posture reads right, and nothing an agent sends becomes markup', async ({ page }) => {
  // The daemon's posture is whatever this machine is; the other cases are
  // rendered by the same code into a scratch container.
  await signIn(page);
  const out = await page.evaluate(async () => {
    // The page's own panels.js module (the same instance the page runs).
    const panels = await import(new URL('panels.js', location.href).href);
    const box = document.createElement('div');
    document.body.append(box);
    const render = (posture) => {
      panels.render({ posture, integrations: [], knowledge: { status: 'disabled', enforcement: 'disabled', stats: {} } }, box);
      return {
        summary: box.querySelector('[data-testid="posture-summary"]').textContent,
        tone: box.querySelector('[data-testid="posture-status"]').dataset.tone,
      };
    };
    const host = render({ in_container: false, confidence: 'none', runtime: null, signals: [] });
    const weak = render({ in_container: true, confidence: 'weak', runtime: 'lxc', signals: ['$container = "lxc"'] });
    const strong = render({ in_container: true, confidence: 'strong', runtime: 'podman', signals: ['/run/.containerenv exists'] });
    const disabledTone = box.querySelector('[data-testid="knowledge-status"]').dataset.tone;
    panels.render(
      {
        integrations: [{ runtime: '<b>x</b>', instance: '<img src=y onerror=alert(1)>', last_seen_ms: Date.now(), warnings: ['<script>alert(1)</script>'] }],
        knowledge: { status: 'degraded', fail_open: false, sop_dirs: ['<i>d</i>'], last_error: { at: new Date().toISOString(), error: '<img src=z>' }, stats: {} },
        posture: { in_container: false, confidence: 'none', signals: ['<img src=w>'] },
      },
      box,
    );
    const result = {
      host,
      weak,
      strong,
      disabledTone,
      degradedClosedTone: box.querySelector('[data-testid="knowledge-status"]').dataset.tone,
      // panels.js itself makes no img, script or i elements.
      markup: box.querySelectorAll('img, script, i').length,
      runtime: box.querySelector('.pn-int-runtime').textContent,
      alert: box.querySelector('[role="alert"]').textContent,
      styled: box.querySelectorAll('[style]').length,
    };
    box.remove();
    return result;
  });
  expect(out.host).toEqual({ summary: 'Not in a container: a blocked call is all that stands between the agent and this machine.', tone: 'bad' });
  expect(out.weak.tone).toBe('warn');
  expect(out.weak.summary).toContain('only the environment says so');
  expect(out.strong.tone).toBe('ok');
  expect(out.strong.summary).toMatch(/^In a podman container: /);
  expect(out.disabledTone).toBe('off');
  expect(out.degradedClosedTone).toBe('bad');
  expect(out.markup).toBe(0);
  expect(out.runtime).toBe('<b>x</b>');
  expect(out.alert).toContain('<script>alert(1)</script>');
  expect(out.styled).toBe(0);
});

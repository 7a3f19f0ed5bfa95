// toolgate control UI: the entry point (index.html's only script).
//
// Plain browser JavaScript as native ES modules: no build step, no bundler
// and no dependencies; the daemon embeds these files as they are
// (src/ui.rs). Everything the server sends is put into the page with
// textContent (through h() in dom.js), never innerHTML, because decision
// records carry text an agent controls (commands, paths, reasons). The
// contract this code follows is docs/http-api.md; the shapes of its JSON
// are the typedefs in api.js, checked with TypeScript (scripts/check-ui).
//
// This module wires the page's controls to the modules that own them, then
// signs in. Module scripts run once the document is parsed, like `defer`.

import { bindApprovals } from './approvals.js';
import { bindResolved } from './resolved.js';
import { verifyAudit } from './audit.js';
import { bindCharts } from './charts.js';
import { $ } from './dom.js';
import { bindFeed } from './feed.js';
import { renderNotifyButton, toggleNotify } from './notify.js';
import { begin, bindSession } from './session.js';
import { bindTheme } from './theme.js';

function init() {
  bindApprovals();
  bindResolved();
  bindTheme();
  bindSession();
  $('notify-btn').addEventListener('click', toggleNotify);
  renderNotifyButton();
  $('audit-btn').addEventListener('click', verifyAudit);
  bindFeed();
  bindCharts();
  begin();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
else init();

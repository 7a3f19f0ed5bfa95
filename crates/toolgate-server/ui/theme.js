// The colour theme: auto (the system's), light or dark, kept per browser in
// localStorage; the "Theme" button cycles through them.

import { queueDraw } from './charts.js';
import { $ } from './dom.js';

const THEME_KEY = 'toolgate.theme';
const THEMES = ['auto', 'light', 'dark'];

const darkQuery = matchMedia('(prefers-color-scheme: dark)');

/**
 * Sets data-theme (the only switch the CSS knows); auto follows the system.
 * @param {string} theme
 */
function applyTheme(theme) {
  const dark = theme === 'dark' || (theme !== 'light' && darkQuery.matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  $('theme-btn').textContent = `Theme: ${theme}`;
  queueDraw(); // chart colours come from CSS variables
}

function cycleTheme() {
  const cur = localStorage.getItem(THEME_KEY) || 'auto';
  const next = THEMES[(THEMES.indexOf(cur) + 1) % THEMES.length];
  localStorage.setItem(THEME_KEY, next);
  applyTheme(next);
}

/** The theme this browser chose, following the system's; once, at start. */
export function bindTheme() {
  applyTheme(localStorage.getItem(THEME_KEY) || 'auto');
  darkQuery.addEventListener('change', () => applyTheme(localStorage.getItem(THEME_KEY) || 'auto'));
  $('theme-btn').addEventListener('click', cycleTheme);
}

// Building the control UI's elements, and finding the page's own. Everything
// an agent sent is data, so text always goes in as text, never as markup:
// h() is the one way the UI makes elements, and it never sets innerHTML.

/** @typedef {Node | string | number | null | undefined | false} Child */
/**
 * Children may come in arrays, nested (h() flattens them at any depth;
 * the type spells out the three levels the UI uses).
 * @typedef {Child | Array<Child | Array<Child | Array<Child>>>} ChildList
 */

/**
 * Creates an element. Props: `class`, `text` (textContent), `key`
 * (data-key), `testid` (data-testid), `dataset` (an object of data-*),
 * `on<event>` functions (listeners); anything else is an attribute (`true`
 * for a bare one; null and false are left out). Children are nodes or
 * strings (always text), nested in arrays as convenient.
 * @param {string} tag
 * @param {Record<string, any> | null} [props]
 * @param {...ChildList} children
 * @returns {HTMLElement}
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = String(v);
    else if (k === 'key') el.dataset.key = String(v);
    else if (k === 'testid') el.dataset.testid = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of /** @type {Child[]} */ (children.flat(Infinity))) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/**
 * One of the page's own elements (index.html), by id; of the given class
 * when one is named. A missing or different element is a bug in the page,
 * so it throws rather than hand back null.
 * @template {HTMLElement} [T=HTMLElement]
 * @param {string} id
 * @param {{new (): T, prototype: T}} [type]
 * @returns {T}
 */
export function $(id, type) {
  const el = document.getElementById(id);
  if (!el || !(el instanceof (type || HTMLElement))) throw new Error(`control UI: no element #${id}${type ? ` (${type.name})` : ''}`);
  return /** @type {T} */ (el);
}

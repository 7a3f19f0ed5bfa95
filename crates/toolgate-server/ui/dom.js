// Building the control UI's elements. Everything an agent sent is data, so
// text always goes in as text, never as markup.
'use strict';

(function () {
  /**
   * Creates an element. Props: `class`, `text` (textContent), `key`
   * (data-key), `testid` (data-testid), `dataset` (an object of data-*),
   * `on<event>` functions (listeners); anything else is an attribute (`true`
   * for a bare one; null and false are left out). Children are nodes or
   * strings (always text), nested in arrays as convenient.
   * @param {string} tag
   * @param {Object<string, *>|null} [props]
   * @param {...(Node|string|null|false|Array<Node|string|null|false>)} children
   * @returns {HTMLElement}
   */
  function h(tag, props, ...children) {
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
    for (const c of children.flat(Infinity)) {
      if (c == null || c === false) continue;
      el.append(c instanceof Node ? c : String(c));
    }
    return el;
  }

  window.toolgateDom = { h };
})();

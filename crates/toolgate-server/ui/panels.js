// The side panels fed by GET /v1/state: the knowledge layer, the
// integrations, the sandbox posture. app.js calls
// window.toolgatePanels.render(state, container) after every state poll.
'use strict';

(function () {
  /**
   * Renders the panels for `state` (the body of GET /v1/state) into
   * `container`. Must tolerate any field being absent.
   * @param {object} state
   * @param {HTMLElement} container
   */
  function render(state, container) {
    void state;
    void container;
  }

  window.toolgatePanels = { render };
})();

/*
 * sna serve: the live web UI's router, loaded last by index.html (after highlight.js, format.js,
 * timeline.js, api.js, page.js, list.js and session.js). The server sends index.html for `/` (the
 * session list) and `/s/{id}` (one session); the page is chosen here from location.pathname.
 * Everything goes through the server's JSON routes (api.js); a 401 sends the browser to /login.
 */
(function () {
  'use strict';

  const { listPage, sessionPage } = window.SnaApp;
  const { pageError } = window.SnaPage;

  function route() {
    const root = /** @type {HTMLElement} */ (document.getElementById('app'));
    const m = /^\/s\/([^/]+)\/?$/.exec(location.pathname);
    const run = m ? sessionPage(root, decodeURIComponent(m[1])) : listPage(root);
    run.catch((e) => {
      if (e && e.status === 401) return;
      pageError(root, 'Something went wrong: ' + (e && e.message ? e.message : e));
    });
  }


  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', route);
  else route();
})();

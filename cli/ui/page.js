/*
 * sna serve UI: what both pages use — relative times, the document title, a page-wide error. A
 * classic script after timeline.js: it defines `window.SnaPage`.
 */
(function () {
  'use strict';

  const T = window.SnaTimeline;
  const el = T.el;

  /** @param {string | undefined} iso */
  function timeAgo(iso) {
    const t = new Date(iso || '').getTime();
    if (isNaN(t)) return '';
    const s = Math.max(0, (Date.now() - t) / 1000);
    if (s < 45) return 'just now';
    if (s < 3600) return Math.round(s / 60) + ' min ago';
    if (s < 86400) return Math.round(s / 3600) + ' h ago';
    if (s < 86400 * 2) return 'yesterday';
    if (s < 86400 * 14) return Math.round(s / 86400) + ' days ago';
    return T.formatTime(iso).slice(0, 10);
  }

  /** @param {string | undefined} iso */
  function fullDate(iso) {
    const d = new Date(iso || '');
    return isNaN(d.getTime()) ? '' : d.toLocaleString();
  }

  /** @param {string} text */
  function setTitle(text) {
    document.title = text ? text + ' · sna' : 'sna';
  }

  /** @param {HTMLElement} root @param {string} message */
  function pageError(root, message) {
    root.replaceChildren(el('p', { class: 'page-error', role: 'alert', text: message }));
  }

  window.SnaPage = { timeAgo, fullDate, setTitle, pageError };
})();

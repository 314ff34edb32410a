/*
 * sna serve UI: the client of the server's JSON routes. `SnaApi.api(method, path, body)` answers the
 * parsed JSON or throws an `SnaApi.ApiError` (message, status, code); a 401 sends the browser to
 * /login. `SnaApi.renderMarkdown(texts)` gives the server's HTML of each text (`POST /ui/markdown`)
 * and `SnaApi.addHtml(items, textOf)` sets it on items as `html`. A classic script: it defines
 * `window.SnaApi`.
 */
(function () {
  'use strict';

  class ApiError extends Error {
    /** @param {string} message @param {number} status @param {string} [code] */
    constructor(message, status, code) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  /**
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body] sent as JSON
   * @returns {Promise<any>} the answer's JSON
   */
  async function api(method, path, body) {
    /** @type {Record<string, string>} */
    const headers = { Accept: 'application/json' };
    /** @type {RequestInit} */
    const init = { method, credentials: 'same-origin', headers };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch (e) {
      throw new ApiError('cannot reach the server (' + e.message + ')', 0, 'NETWORK');
    }
    if (res.status === 401) {
      location.href = '/login';
      throw new ApiError('not logged in', 401, 'UNAUTHORIZED');
    }
    let data;
    try {
      data = await res.json();
    } catch {
      data = null; // not JSON
    }
    if (!res.ok) {
      const message = (data && data.message) || res.status + ' ' + res.statusText;
      throw new ApiError(message, res.status, data && data.code);
    }
    return data;
  }

  const enc = encodeURIComponent;

  // The most text sent in one request for Markdown (the server's body limit is far above).
  const RENDER_BATCH = 512 * 1024;

  /**
   * The HTML of each text, from the server, in their order; undefined where it failed.
   * @param {string[]} texts
   */
  async function renderMarkdown(texts) {
    /** @type {(string | undefined)[]} */
    const html = [];
    /** @type {string[]} */
    let batch = [];
    let size = 0;
    const flush = async () => {
      if (!batch.length) return;
      const sent = batch;
      batch = [];
      size = 0;
      try {
        const answer = await api('POST', '/ui/markdown', { texts: sent });
        html.push(...answer.html);
      } catch (e) {
        if (e.status === 401) throw e;
        console.warn('sna: rendering Markdown failed', e);
        html.push(...sent.map(() => undefined));
      }
    };
    for (const text of texts) {
      if (size && size + text.length > RENDER_BATCH) await flush();
      batch.push(text);
      size += text.length;
    }
    await flush();
    return html;
  }

  /**
   * Sets `html` on the items that lack it: the Markdown of `textOf(item)`.
   * @template {{html?: string}} T
   * @param {T[]} items
   * @param {(item: T) => string | undefined} textOf
   */
  async function addHtml(items, textOf) {
    const todo = items.filter((item) => item && typeof item.html !== 'string');
    if (!todo.length) return;
    const html = await renderMarkdown(todo.map((item) => String(textOf(item) || '')));
    todo.forEach((item, i) => {
      if (typeof html[i] === 'string') item.html = html[i];
    });
  }

  window.SnaApi = { ApiError, api, enc, renderMarkdown, addHtml };
})();

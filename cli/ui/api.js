/*
 * sna serve UI: the client of the server's JSON routes. `SnaApi.api(method, path, body)` answers the
 * parsed JSON or throws an `SnaApi.ApiError` (message, status, code); a 401 sends the browser to
 * /login. A classic script: it defines `window.SnaApi`.
 */
(function () {
  'use strict';

  class ApiError extends Error {
    constructor(message, status, code) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  async function api(method, path, body) {
    const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
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
    let data = null;
    try {
      data = await res.json();
    } catch (e) {
      data = null;
    }
    if (!res.ok) {
      const message = (data && data.message) || res.status + ' ' + res.statusText;
      throw new ApiError(message, res.status, data && data.code);
    }
    return data;
  }

  const enc = encodeURIComponent;

  window.SnaApi = { ApiError, api, enc };
})();

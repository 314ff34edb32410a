/*
 * sna serve UI: the session list (`/`): filter, open, create, rename and delete sessions. A classic
 * script after api.js and page.js: it defines `window.SnaApp.listPage(root)`.
 */
(function () {
  'use strict';

  const T = window.SnaTimeline;
  const el = T.el;
  const { api, enc } = window.SnaApi;
  const { timeAgo, fullDate, setTitle } = window.SnaPage;

  /** @param {HTMLElement} root */
  async function listPage(root) {
    setTitle('Sessions');
    const filter = el('input', { type: 'search', id: 'filter', placeholder: 'Filter sessions', title: 'Filter by title, id, runtime or model', autocomplete: 'off' });
    const count = el('span', { class: 'count', 'aria-live': 'polite' });
    const list = el('ul', { class: 'sessions', 'aria-label': 'Sessions' });
    const titleInput = el('input', { type: 'text', id: 'new-title', placeholder: 'title (optional)', 'aria-label': 'Title of the new session' });
    const newButton = el('button', { type: 'submit', class: 'primary', id: 'new-session', text: 'New session' });
    const version = el('span', { class: 'version' });
    const notice = el('p', { class: 'notice error', role: 'alert', hidden: true });
    const form = el('form', { class: 'new-session' }, [titleInput, newButton]);

    root.replaceChildren(
      el('header', { class: 'page-header' }, [
        el('div', { class: 'bar' }, [el('span', { class: 'brand', text: 'sna' }), version, el('span', { class: 'spacer' }), form]),
        el('div', { class: 'bar sub' }, [el('span', { text: 'Coding-agent sessions: open one to read it, or to talk to an agent in it.' })]),
      ]),
      el('main', { class: 'list-page' }, [
        notice,
        el('div', { class: 'list-tools' }, [el('label', { for: 'filter', class: 'visually-hidden', text: 'Filter sessions by title, id, runtime or model' }), filter, count]),
        list,
      ]),
    );

    /** @type {SnaSessionInfo[]} */
    let sessions = [];

    /** @param {SnaSessionInfo} s */
    function haystack(s) {
      return [s.title, s.id, s.cwd, ...(s.providers || []), ...(s.providers || []).map(T.runtimeName), ...(s.models || []), s.agent ? s.agent.provider : '', s.agent ? s.agent.model : '']
        .filter(Boolean).join('\n').toLowerCase();
    }

    function render() {
      const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      const shown = sessions.filter((s) => words.every((w) => haystack(s).includes(w)));
      count.textContent = shown.length === sessions.length ? sessions.length + ' sessions' : shown.length + ' of ' + sessions.length + ' sessions';
      const items = shown.map((s) => {
        const runtimes = (s.providers || []).map(T.runtimeName).join(', ');
        const live = s.agent && s.agent.alive
          ? el('span', { class: 'live' + (s.agent.busy ? ' busy' : ''), text: s.agent.busy ? '● busy' : '● live' })
          : null;
        return el('li', null, [
          el('a', { class: 'row', href: '/s/' + enc(s.id) }, [
            el('span', { class: 'title' }, [s.title || s.id, live, s.title ? el('span', { class: 'id', text: s.id }) : null]),
            el('span', { class: 'cell runtimes', text: runtimes || '—' }),
            el('span', { class: 'cell models', text: (s.models || []).join(', ') || '—' }),
            el('span', { class: 'cell num' }, [String(s.blockCount || 0), el('span', { class: 'unit', text: ' blocks' })]),
            el('span', { class: 'cell num', title: fullDate(s.updatedAt), text: timeAgo(s.updatedAt) }),
          ]),
        ]);
      });
      if (!shown.length) items.push(el('li', { class: 'none', text: sessions.length ? 'No session matches the filter.' : 'No sessions yet: start one with “New session”.' }));
      list.replaceChildren(
        el('li', { class: 'sessions-head', 'aria-hidden': 'true' }, [
          el('span', { text: 'Session' }), el('span', { text: 'Runtimes' }), el('span', { text: 'Models' }),
          el('span', { class: 'num', text: 'Blocks' }), el('span', { class: 'num', text: 'Updated' }),
        ]),
        ...items,
      );
    }

    async function load() {
      const data = await api('GET', '/agent/sessions');
      /** @param {SnaSessionInfo} s */
      const time = (s) => new Date(s.updatedAt || '').getTime();
      sessions = /** @type {SnaSessionInfo[]} */ (data.sessions || []).slice().sort((a, b) => time(b) - time(a));
      render();
    }

    filter.addEventListener('input', render);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      newButton.disabled = true;
      notice.hidden = true;
      try {
        const body = {};
        if (titleInput.value.trim()) body.label = titleInput.value.trim();
        const session = await api('POST', '/agent/sessions', body);
        location.href = '/s/' + enc(session.id);
      } catch (e) {
        notice.textContent = 'Could not create the session: ' + e.message;
        notice.hidden = false;
        newButton.disabled = false;
      }
    });

    api('GET', '/info').then((info) => { version.textContent = info && info.version ? 'v' + info.version : ''; }).catch(() => {});
    try {
      await load();
    } catch (e) {
      notice.textContent = 'Could not list the sessions: ' + e.message;
      notice.hidden = false;
    }
    filter.focus();
    // Keep the list fresh while it is on screen.
    setInterval(() => { if (!document.hidden) load().catch(() => {}); }, 15000);
  }

  window.SnaApp = /** @type {typeof SnaApp} */ (Object.assign(window.SnaApp || {}, { listPage }));
})();

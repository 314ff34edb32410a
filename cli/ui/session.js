/*
 * sna serve UI: one session (`/s/{id}`): its timeline, kept live from the server's event stream, and
 * the composer that talks to its agent (runtime and model, images, interrupt, compaction). A classic
 * script after api.js and page.js: it defines `window.SnaApp.sessionPage(root, id)`.
 *
 * The server renders the Markdown (`POST /ui/markdown`): blocks and compactions get their `html`
 * before the timeline draws them, so events are handled one after the other.
 */
(function () {
  'use strict';

  const T = window.SnaTimeline;
  const el = T.el;
  const { api, enc, renderMarkdown, addHtml } = window.SnaApi;
  const { setTitle } = window.SnaPage;

  /** Blocks with the HTML of the ones the timeline shows as Markdown. @param {SnaBlock[]} blocks */
  async function withHtml(blocks) {
    await addHtml(blocks.filter((b) => b && T.showsMarkdown(b)), (b) => b.content);
    return blocks;
  }

  /**
   * What the session page knows and is doing.
   * @typedef {object} PageState
   * @property {string} id
   * @property {SnaSessionInfo | null} session
   * @property {{id: string, name?: string, available?: boolean}[]} runtimes from /info
   * @property {boolean} alive
   * @property {boolean} busy
   * @property {number} turnsEnded how many turns the events said ended (complete, interrupted, exited, killed)
   * @property {boolean} compacting
   * @property {{provider: string, model: string} | null} agent the session's agent (alive or not), when the server has one
   * @property {{provider: string, model: string} | null} chosen picked in the composer
   * @property {boolean} connected
   * @property {number | null} cursor the last event cursor seen
   * @property {EventSource | null} es
   * @property {number} retry
   * @property {ReturnType<typeof setTimeout> | undefined} retryTimer
   * @property {string | null} attrKey provider/model_provider/model of the last attributed block
   * @property {boolean} follow
   * @property {boolean} sending
   * @property {{base64: string, mimeType: string, url: string, name: string}[]} images
   * @property {Promise<void> | null} catchingUp
   * @property {boolean} catchUpAgain
   * @property {number} stoppedAt when we last stopped or switched the agent (its exit is expected then)
   * @property {Promise<void> | null} applying the restart for a new runtime or model, while it runs
   * @property {SnaUsage} [usage]
   * @property {SnaSwitch[]} [switches]
   */

  /**
   * The body of /agent/start and /agent/restart.
   * @typedef {{provider: string, model?: string, cwd?: string, prompt?: string}} AgentBody
   */

  /** @param {HTMLElement} root @param {string} id */
  async function sessionPage(root, id) {
    setTitle(id);
    /** @type {PageState} */
    const st = {
      id,
      session: null,
      runtimes: [], // from /info
      alive: false,
      busy: false,
      turnsEnded: 0,
      compacting: false,
      agent: null, // {provider, model} of the session's agent (alive or not), when the server has one
      chosen: null, // {provider, model} picked in the composer
      connected: false,
      cursor: null, // the last event cursor seen
      es: null,
      retry: 1000,
      retryTimer: undefined,
      attrKey: null, // provider/model_provider/model of the last attributed block
      follow: true,
      sending: false,
      images: [], // {base64, mimeType, url, name}
      catchingUp: null,
      catchUpAgain: false,
      stoppedAt: 0, // when we last stopped or switched the agent (its exit is expected then)
      applying: null, // the restart for a new runtime or model, while it runs
    };

    // --- the page ---
    const statusLight = el('span', { id: 'status', class: 'status-light disconnected', role: 'status', 'aria-live': 'polite', title: 'agent status', text: 'disconnected' });
    const heading = el('h1', { id: 'title', text: id });
    const facts = el('span', { class: 'facts' });
    const bkToggle = el('input', { type: 'checkbox', id: 'toggle-bookkeeping' });
    const bkCount = el('span', { class: 'count', text: '0' });
    const main = el('main', { id: 'timeline', class: 'timeline', 'aria-label': 'Conversation' });
    const notice = el('div', { id: 'notice', class: 'notice', role: 'status', 'aria-live': 'polite', hidden: true });
    const attachments = el('div', { class: 'attachments', id: 'attachments' });
    const message = el('textarea', { id: 'message', rows: 1, placeholder: 'Message (Enter to send)', title: 'Enter sends, Shift+Enter starts a new line', autocomplete: 'off' });
    const fileInput = el('input', { type: 'file', accept: 'image/*', multiple: true, id: 'attach', class: 'visually-hidden' });
    const runtimeSel = el('select', { id: 'runtime' });
    const modelInput = el('input', { type: 'text', id: 'model', placeholder: 'default', autocomplete: 'off', spellcheck: 'false' });
    const interruptBtn = el('button', { type: 'button', id: 'interrupt', text: 'Interrupt', title: 'Stop the current turn' });
    const compactBtn = el('button', { type: 'button', id: 'compact', text: 'Compact', title: 'Ask the runtime to summarize the conversation so far (its own compaction)' });
    const stopBtn = el('button', { type: 'button', id: 'stop', class: 'danger', text: 'Stop', title: 'End the agent process' });
    const sendBtn = el('button', { type: 'submit', id: 'send', class: 'primary', text: 'Send' });
    const jump = el('button', { type: 'button', class: 'jump', hidden: true, text: '↓ Latest' });
    const form = el('form', { class: 'composer', id: 'composer', 'aria-label': 'Message the agent' }, [
      el('div', { class: 'inner' }, [
        notice,
        attachments,
        el('div', { class: 'entry' }, [el('label', { for: 'message', class: 'visually-hidden', text: 'Message' }), message, sendBtn]),
        el('div', { class: 'controls' }, [
          el('label', { class: 'button attach-button', for: 'attach' }, ['Attach image', fileInput]),
          el('label', { for: 'runtime' }, ['Runtime', runtimeSel]),
          el('label', { for: 'model' }, ['Model', modelInput]),
          el('span', { class: 'spacer' }),
          interruptBtn,
          compactBtn,
          stopBtn,
        ]),
      ]),
    ]);
    root.replaceChildren(
      el('div', { class: 'session-page' }, [
        el('header', { class: 'page-header' }, [
          el('div', { class: 'bar' }, [el('a', { class: 'back', href: '/', text: '← Sessions' }), heading, statusLight]),
          el('div', { class: 'bar sub' }, [
            facts,
            el('label', { class: 'toggle', for: 'toggle-bookkeeping' }, [bkToggle, el('span', null, ['show runtime bookkeeping (', bkCount, ')'])]),
          ]),
        ]),
        main,
        jump,
        form,
      ]),
    );

    const timeline = T.create(main, {
      live: true,
      showBookkeeping: false,
      embedUrl: (embedId) => '/sessions/' + enc(id) + '/embeds/' + enc(embedId),
      onChange: changed,
      renderMarkdown: (text) => renderMarkdown([text]).then((html) => html[0]),
    });
    main.addEventListener('click', T.zoomImage);

    // --- following the bottom ---
    let scrollQueued = false;
    function atBottom() {
      const doc = document.documentElement;
      return window.innerHeight + window.scrollY >= doc.scrollHeight - 80;
    }
    function toBottom() {
      window.scrollTo(0, document.documentElement.scrollHeight);
    }
    /** @param {SnaTimelineView} tl */
    function changed(tl) {
      bkCount.textContent = String(tl.bookkeepingCount);
      if (scrollQueued) return;
      scrollQueued = true;
      requestAnimationFrame(() => {
        scrollQueued = false;
        if (st.follow) toBottom();
        else jump.hidden = false;
      });
    }
    // A resize (a phone's keyboard, rotation) scrolls too: that is not the reader scrolling away.
    let resizedAt = 0;
    window.addEventListener('resize', () => {
      resizedAt = Date.now();
      if (st.follow) requestAnimationFrame(toBottom);
    });
    window.addEventListener('scroll', () => {
      if (Date.now() - resizedAt < 300) return;
      st.follow = atBottom();
      if (st.follow) jump.hidden = true;
    }, { passive: true });
    jump.addEventListener('click', () => {
      st.follow = true;
      jump.hidden = true;
      toBottom();
    });
    bkToggle.addEventListener('change', () => {
      timeline.setBookkeeping(bkToggle.checked);
      if (st.follow) toBottom();
    });

    // --- notices ---
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let noticeTimer;
    /** @param {string} text @param {string} [kind] @param {string} [detail] */
    function say(text, kind, detail) {
      clearTimeout(noticeTimer);
      notice.className = 'notice' + (kind === 'error' ? ' error' : '');
      const body = el('div', { class: 'text' }, [text]);
      if (detail) body.append(el('pre', { text: detail }));
      notice.replaceChildren(body, el('button', { type: 'button', class: 'link', text: 'Dismiss', onclick: () => { notice.hidden = true; } }));
      notice.hidden = false;
      if (kind !== 'error' && !detail) noticeTimer = setTimeout(() => { notice.hidden = true; }, 6000);
    }

    // --- the header ---
    /** @param {SnaSwitch[] | undefined} switches */
    function renderFacts(switches) {
      /** @type {Partial<SnaSessionInfo>} */
      const s = st.session || {};
      const providers = [...(s.providers || [])];
      const models = [...(s.models || [])];
      for (const sw of switches || []) {
        if (sw.to && sw.to.provider && !providers.includes(sw.to.provider)) providers.push(sw.to.provider);
        if (sw.to && sw.to.model && !models.includes(sw.to.model)) models.push(sw.to.model);
      }
      facts.replaceChildren(.../** @type {HTMLElement[]} */ ([
        el('span', null, ['session ', el('code', { text: id })]),
        s.cwd ? el('span', { class: 'cwd', title: 'working directory', text: s.cwd }) : null,
        providers.length ? el('span', { class: 'runtimes', text: providers.map(T.runtimeName).join(', ') }) : null,
        models.length ? el('span', { class: 'models', text: models.join(', ') }) : null,
        st.usage && st.usage.totals.responses
          ? el('span', { class: 'usage-total', title: T.usageDetail(st.usage.totals), text: T.usageSummary(st.usage.totals) })
          : null,
      ].filter(Boolean)));
    }

    // --- tokens and cost, per turn and for the session ---
    async function loadUsage() {
      try {
        st.usage = await api('GET', '/sessions/' + enc(id) + '/usage');
        timeline.setUsage(st.usage || null);
        renderFacts(st.switches);
      } catch (e) {
        if (e.status !== 404) say('Could not load the token usage: ' + e.message, 'error');
      }
    }

    // --- status ---
    function showStatus() {
      const state = !st.connected || !st.alive ? 'disconnected' : st.busy ? 'busy' : 'idle';
      if (statusLight.textContent !== state) {
        statusLight.textContent = state;
        statusLight.className = 'status-light ' + state;
      }
      interruptBtn.disabled = !(st.alive && st.busy);
      compactBtn.disabled = !st.alive || st.busy || st.compacting;
      stopBtn.disabled = !st.alive;
    }

    async function refreshStatus() {
      try {
        const s = await api('GET', '/agent/status?session=' + enc(id));
        st.alive = !!s.alive;
        st.busy = s.agentStatus === 'busy';
        if (s.provider) st.agent = { provider: s.provider, model: s.model || '' };
        if (s.alive) pickRuntime(s.provider, s.model);
        showStatus();
        return s;
      } catch (e) {
        if (e.status === 404) {
          st.alive = false;
          st.busy = false;
          showStatus();
        }
        return null;
      }
    }

    // --- blocks ---
    /** @param {SnaBlock} b */
    function attrKey(b) {
      if (!b.provider && !b.model_provider && !b.model) return null;
      return [b.provider || '', b.model_provider || '', b.model || ''].join('\u0000');
    }

    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let switchesTimer;
    function refetchSwitchesSoon() {
      clearTimeout(switchesTimer);
      switchesTimer = setTimeout(loadSwitches, 250);
    }

    async function loadSwitches() {
      try {
        const data = await api('GET', '/sessions/' + enc(id) + '/switches');
        st.switches = data.switches || [];
        timeline.setSwitches(st.switches || []);
        renderFacts(st.switches);
      } catch (e) {
        /* a session without blocks yet */
      }
      loadCompactions();
    }

    async function loadCompactions() {
      try {
        const data = await api('GET', '/sessions/' + enc(id) + '/compactions');
        /** @type {SnaCompaction[]} */
        const compactions = data.compactions || [];
        await addHtml(compactions, (c) => c.summary);
        timeline.setCompactions(compactions);
      } catch (e) {
        /* a session without blocks yet */
      }
    }

    /** @param {SnaBlock} block */
    function addBlock(block) {
      if (!block || typeof block.seq !== 'number') return;
      // A block from the past (say a replayed event) is only rendered again; attribution is
      // followed from the newest.
      const newest = block.seq >= timeline.lastSeq;
      timeline.addBlock(block);
      if (newest) {
        const key = attrKey(block);
        if (key && key !== st.attrKey) {
          st.attrKey = key;
          refetchSwitchesSoon();
        }
      }
    }

    /** Blocks stored since the last one we have (after a reconnect nothing is missed). */
    async function catchUp() {
      if (st.catchingUp) {
        st.catchUpAgain = true;
        return st.catchingUp;
      }
      st.catchingUp = (async () => {
        do {
          st.catchUpAgain = false;
          try {
            const since = timeline.lastSeq;
            const data = await api('GET', '/sessions/' + enc(id) + '/blocks' + (since >= 0 ? '?since_seq=' + since : ''));
            for (const b of await withHtml(data.blocks || [])) addBlock(b);
          } catch (e) {
            if (e.status !== 404) console.warn('sna: catching up failed', e);
          }
        } while (st.catchUpAgain);
      })();
      try {
        await st.catchingUp;
      } finally {
        st.catchingUp = null;
      }
    }

    // --- events ---
    // One at a time, in their order: a block's HTML is fetched before it is drawn.
    let events = Promise.resolve();
    /** @param {MessageEvent} raw */
    function queueEvent(raw) {
      events = events.then(() => onEvent(raw)).catch((e) => console.warn('sna: an event failed', e));
    }

    /** @param {MessageEvent} raw */
    async function onEvent(raw) {
      let ev;
      try {
        ev = JSON.parse(raw.data);
      } catch (e) {
        return;
      }
      if (typeof ev.cursor === 'number') {
        if (st.cursor !== null && ev.cursor <= st.cursor) return; // seen already
        st.cursor = ev.cursor;
      }
      const data = ev.data || {};
      if (data.block) await withHtml([data.block]);
      switch (ev.type) {
        case 'started':
        case 'resumed':
        case 'switched':
          st.alive = true;
          if (data.runtime) st.agent = { provider: data.runtime, model: data.model || '' };
          pickRuntime(data.runtime, data.model);
          if (ev.type === 'switched') say('Switched to ' + T.runtimeName(data.runtime) + (data.model ? ' · ' + data.model : '') + (data.via ? ' (' + data.via + ')' : '') + '.');
          break;
        case 'user_message':
          st.alive = true;
          st.busy = true;
          addBlock(data.block);
          break;
        case 'assistant':
        case 'thinking':
        case 'tool_use':
        case 'tool_result':
        case 'status':
          addBlock(data.block);
          break;
        case 'error':
          if (data.block) addBlock(data.block);
          else say(ev.message || data.message || 'the agent reported an error', 'error');
          break;
        case 'assistant_delta':
        case 'thinking_delta':
          st.busy = true;
          timeline.streamDelta(ev.type, ev.delta !== undefined ? ev.delta : data.text);
          break;
        case 'complete':
          st.busy = false;
          st.turnsEnded++;
          timeline.clearStreaming();
          catchUp();
          loadUsage();
          // A runtime may compact by itself during a turn (say when the model refused the request
          // as too long); no `compacted` event says so.
          loadCompactions();
          break;
        case 'interrupted':
          st.busy = false;
          st.turnsEnded++;
          timeline.clearStreaming();
          say('The turn was interrupted.');
          catchUp();
          break;
        case 'compacted':
          say('The conversation was compacted: ' + T.compactionLabel(data.compaction || {}) + '.');
          loadCompactions();
          break;
        case 'model_changed':
          if (data.model !== undefined && document.activeElement !== modelInput) modelInput.value = data.model || '';
          break;
        case 'exited':
          st.alive = false;
          st.busy = false;
          st.turnsEnded++;
          timeline.clearStreaming();
          // The end of a process we stopped (Stop, a switch) is not news.
          if (Date.now() - st.stoppedAt > 5000) {
            say('The agent exited' + (data.code !== undefined && data.code !== null ? ' (code ' + data.code + ')' : '') + '.', data.code ? 'error' : 'info', data.stderr || '');
          }
          catchUp();
          break;
        case 'killed':
          st.alive = false;
          st.busy = false;
          st.turnsEnded++;
          st.stoppedAt = Date.now();
          timeline.clearStreaming();
          catchUp();
          break;
        default:
          break;
      }
      showStatus();
    }

    function connect() {
      clearTimeout(st.retryTimer);
      if (st.es) st.es.close();
      const url = '/agent/events?session=' + enc(id) + (st.cursor !== null ? '&since=' + st.cursor : '');
      const es = new EventSource(url);
      st.es = es;
      es.onopen = () => {
        st.connected = true;
        st.retry = 1000;
        showStatus();
        catchUp();
        refreshStatus();
      };
      es.onmessage = queueEvent;
      es.onerror = () => {
        st.connected = false;
        showStatus();
        if (es.readyState === EventSource.CLOSED && st.es === es) {
          // The browser gave up (an error answer): try again later, and see whether we were
          // logged out.
          st.retryTimer = setTimeout(connect, st.retry);
          st.retry = Math.min(st.retry * 2, 30000);
          api('GET', '/info').catch(() => {});
        }
      };
    }

    function reconnectNow() {
      if (!st.es || st.es.readyState !== EventSource.OPEN) {
        st.retry = 1000;
        connect();
      }
    }

    // --- runtime and model ---
    /** @param {PageState['runtimes']} runtimes */
    function fillRuntimes(runtimes) {
      st.runtimes = runtimes;
      runtimeSel.replaceChildren(...runtimes.map((r) => el('option', { value: r.id, text: (r.name || T.runtimeName(r.id)) + (r.available ? '' : ' (not installed)') })));
      if (!runtimes.length) runtimeSel.append(el('option', { value: '', text: 'no runtime' }));
    }

    /** @param {string | undefined} provider @param {string | null} [model] */
    function pickRuntime(provider, model) {
      if (provider && [...runtimeSel.options].some((o) => o.value === provider)) runtimeSel.value = provider;
      if (model !== undefined && document.activeElement !== modelInput) modelInput.value = model || '';
      st.chosen = { provider: runtimeSel.value, model: modelInput.value.trim() };
    }

    /** Applies the runtime and model picked; a send waits for it (st.applying). */
    function applyChoice() {
      st.applying = applyChoiceNow().finally(() => { st.applying = null; });
      return st.applying;
    }

    async function applyChoiceNow() {
      const provider = runtimeSel.value;
      const model = modelInput.value.trim();
      /** @type {{provider?: string, model?: string}} */
      const before = st.chosen || {};
      if (before.provider === provider && (before.model || '') === model) return;
      st.chosen = { provider, model };
      const label = T.runtimeName(provider) + (model ? ' · ' + model : '');
      if (!st.alive) {
        say('The next message starts ' + label + '.');
        return;
      }
      try {
        /** @type {AgentBody} */
        const body = { provider };
        if (model) body.model = model;
        say('Switching to ' + label + '…');
        st.stoppedAt = Date.now();
        await api('POST', '/agent/restart?session=' + enc(id), body);
        st.agent = { provider, model };
        reconnectNow();
        refreshStatus();
      } catch (e) {
        say('Could not switch to ' + label + ': ' + e.message, 'error');
      }
    }

    runtimeSel.addEventListener('change', () => {
      // Another runtime's models are other names: start from its default.
      modelInput.value = '';
      applyChoice();
    });
    modelInput.addEventListener('change', applyChoice);
    modelInput.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        event.preventDefault();
        applyChoice();
      }
    });

    // --- attachments ---
    /** @param {File} file @returns {Promise<PageState['images'][number]>} */
    function readImage(file) {
      return new Promise((resolve, reject) => {
        const reader = new FileReader();
        reader.onload = () => {
          const url = String(reader.result);
          const comma = url.indexOf(',');
          resolve({ base64: url.slice(comma + 1), mimeType: file.type || 'image/png', url, name: file.name || 'image' });
        };
        reader.onerror = () => reject(reader.error);
        reader.readAsDataURL(file);
      });
    }

    /** @param {File[]} files */
    async function addImages(files) {
      for (const file of files) {
        if (!/^image\//.test(file.type)) {
          say(file.name + ' is not an image.', 'error');
          continue;
        }
        try {
          st.images.push(await readImage(file));
        } catch (e) {
          say('Could not read ' + file.name + ': ' + e.message, 'error');
        }
      }
      renderAttachments();
    }

    function renderAttachments() {
      attachments.replaceChildren(...st.images.map((img, i) => el('figure', null, [
        el('img', { src: img.url, alt: img.name }),
        el('button', { type: 'button', text: 'Remove', 'aria-label': 'Remove ' + img.name, onclick: () => { st.images.splice(i, 1); renderAttachments(); } }),
      ])));
      updateSend();
    }

    fileInput.addEventListener('change', () => {
      addImages([...(fileInput.files || [])]);
      fileInput.value = '';
    });
    message.addEventListener('paste', (event) => {
      const files = [...((event.clipboardData && event.clipboardData.files) || [])].filter((f) => /^image\//.test(f.type));
      if (files.length) {
        event.preventDefault();
        addImages(files);
      }
    });

    // --- sending ---
    function grow() {
      message.style.height = 'auto';
      message.style.height = Math.min(message.scrollHeight + 2, Math.round(window.innerHeight * 0.4)) + 'px';
    }
    function updateSend() {
      sendBtn.disabled = st.sending || (!message.value.trim() && !st.images.length);
    }
    message.addEventListener('input', () => { grow(); updateSend(); });
    message.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.altKey && !event.isComposing && event.keyCode !== 229) {
        event.preventDefault();
        send();
      }
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      send();
    });

    /** @param {string} text @param {PageState['images']} images */
    async function startAgent(text, images) {
      /** @type {AgentBody} */
      const body = { provider: runtimeSel.value };
      const model = modelInput.value.trim();
      if (model) body.model = model;
      if (st.session && st.session.cwd) body.cwd = st.session.cwd;
      if (text && !images.length) body.prompt = text;
      const r = await api('POST', '/agent/start?session=' + enc(id), body);
      st.alive = true;
      if (r && r.status === 'already_running' && r.provider) {
        // Started meanwhile (another page): the picker shows what runs.
        st.agent = { provider: r.provider, model: r.model || '' };
        pickRuntime(r.provider, r.model || '');
      } else {
        st.agent = { provider: body.provider, model };
        st.chosen = { provider: body.provider, model: model };
      }
      reconnectNow();
      // The prompt went with the start (to the agent started, or to the one found running); images
      // need a send.
      if ((images.length || !body.prompt) && (text || images.length)) {
        await api('POST', '/agent/send?session=' + enc(id), sendBody(text, images));
      }
    }

    /** @param {string} text @param {PageState['images']} images */
    function sendBody(text, images) {
      /** @type {{message: string, images?: {base64: string, mimeType: string}[]}} */
      const body = { message: text };
      if (images.length) body.images = images.map((i) => ({ base64: i.base64, mimeType: i.mimeType }));
      return body;
    }

    async function send() {
      const text = message.value.trim();
      const images = st.images.slice();
      if (st.sending || (!text && !images.length)) return;
      st.sending = true;
      updateSend();
      // The turn may end (its events arrive) before the requests below answer: then it is not busy.
      const ended = st.turnsEnded;
      try {
        if (st.applying) await st.applying;
        notice.hidden = true;
        const chosen = { provider: runtimeSel.value, model: modelInput.value.trim() };
        if (!st.alive && st.agent && (st.agent.provider !== chosen.provider || (chosen.model && chosen.model !== st.agent.model))) {
          // The agent is stopped and another runtime or model was picked: switch, then send.
          /** @type {AgentBody} */
          const body = { provider: chosen.provider };
          if (chosen.model) body.model = chosen.model;
          await api('POST', '/agent/restart?session=' + enc(id), body);
          st.agent = chosen;
          st.alive = true;
          reconnectNow();
        }
        if (!st.alive && !st.agent) {
          // The session never had an agent here: start the chosen runtime with the message.
          await startAgent(text, images);
        } else {
          try {
            await api('POST', '/agent/send?session=' + enc(id), sendBody(text, images));
          } catch (e) {
            if (e.status !== 404) throw e;
            // No agent runs in the session: start the chosen runtime with the message.
            await startAgent(text, images);
          }
        }
        message.value = '';
        st.images = [];
        renderAttachments();
        grow();
        if (st.turnsEnded === ended) st.busy = true;
        st.follow = true;
        showStatus();
        toBottom();
        if (!st.session) loadSession();
      } catch (e) {
        say('Not sent: ' + e.message, 'error');
      } finally {
        st.sending = false;
        updateSend();
      }
    }

    interruptBtn.addEventListener('click', async () => {
      try {
        const r = await api('POST', '/agent/interrupt?session=' + enc(id));
        if (r && r.status === 'no_session') say('No agent runs in this session.');
      } catch (e) {
        say('Could not interrupt: ' + e.message, 'error');
      }
    });
    compactBtn.addEventListener('click', async () => {
      st.compacting = true;
      showStatus();
      try {
        const r = await api('POST', '/agent/compact?session=' + enc(id), {});
        if (r && r.status === 'no_session') say('No agent runs in this session.');
      } catch (e) {
        say('Could not compact: ' + e.message, 'error');
      } finally {
        st.compacting = false;
        showStatus();
      }
    });
    stopBtn.addEventListener('click', async () => {
      try {
        st.stoppedAt = Date.now();
        const r = await api('POST', '/agent/kill?session=' + enc(id));
        st.alive = false;
        st.busy = false;
        timeline.clearStreaming();
        showStatus();
        say(r && r.status === 'no_session' ? 'No agent runs in this session.' : 'The agent was stopped; the next message starts it again.');
      } catch (e) {
        say('Could not stop the agent: ' + e.message, 'error');
      }
    });

    // --- loading ---
    async function loadSession() {
      try {
        const data = await api('GET', '/agent/sessions');
        st.session = (data.sessions || []).find((/** @type {SnaSessionInfo} */ s) => s.id === id) || null;
      } catch (e) {
        st.session = null;
      }
      const title = (st.session && st.session.title) || id;
      heading.textContent = title;
      setTitle(title);
      renderFacts(st.switches);
      return st.session;
    }

    showStatus();
    updateSend();
    const [info, , status] = await Promise.all([
      api('GET', '/info').catch(() => ({ runtimes: [] })),
      loadSession(),
      api('GET', '/agent/status?session=' + enc(id)).catch(() => null),
    ]);
    fillRuntimes((info && info.runtimes) || []);
    if (status && typeof status.cursor === 'number') st.cursor = status.cursor;
    try {
      const data = await api('GET', '/sessions/' + enc(id) + '/blocks');
      timeline.setBlocks(await withHtml(data.blocks || []));
      await loadUsage();
    } catch (e) {
      if (e.status !== 404) say('Could not load the conversation: ' + e.message, 'error');
    }
    // The runtime and model to start with: the agent's, else the session's last, else the first
    // runtime that is installed.
    let last = null;
    for (let seq = timeline.lastSeq; seq >= 0 && !last; seq--) {
      const b = timeline.block(seq);
      if (b && attrKey(b)) last = b;
    }
    if (last) st.attrKey = attrKey(last);
    if (status && status.provider) st.agent = { provider: status.provider, model: status.model || '' };
    if (status && status.alive) {
      st.alive = true;
      st.busy = status.agentStatus === 'busy';
      pickRuntime(status.provider, status.model);
    } else if (last && last.provider) {
      pickRuntime(last.provider, last.model || '');
    } else {
      const available = st.runtimes.find((r) => r.available);
      pickRuntime(available ? available.id : undefined, '');
    }
    await loadSwitches();
    toBottom();
    connect();
    showStatus();
    document.addEventListener('visibilitychange', () => {
      if (document.hidden) return;
      catchUp();
      refreshStatus();
      reconnectNow();
    });
    message.focus();
  }

  window.SnaApp = /** @type {typeof SnaApp} */ (Object.assign(window.SnaApp || {}, { sessionPage }));
})();

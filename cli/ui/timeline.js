/*
 * sna timeline: renders a session's canonical blocks into a container. Shared by the live UI of
 * `sna serve` (app.js) and the self-contained page of `sna view`. A classic script after
 * highlight.js and format.js: it defines `window.SnaTimeline`.
 *
 * Markdown is rendered by the server (cli/src/markdown.rs): a block the timeline shows as Markdown
 * (see showsMarkdown) carries it as `html`, and a compaction its summary's; their embed references
 * (<span class="embed-ref" data-embed="ID">alt</span>) become the embeds and their code blocks
 * are coloured here. Without `html` the text shows as it is.
 *
 * API
 *   const tl = SnaTimeline.create(container, options)
 *     container            the element the blocks go in (the pages use <main id="timeline">)
 *     options.embedUrl     (embedId, embed|undefined) => URL string or null: where an embed's bytes
 *                          are (a data: URL in the static view, /sessions/{id}/embeds/{id} live)
 *     options.showBookkeeping  false (default): blocks of actor "system", of kind "status", and
 *                          the user-side text a runtime writes itself (Claude Code's meta records,
 *                          Codex's environment context) are in the DOM (class "bookkeeping") but
 *                          hidden
 *     options.live         true in the live app: a call without a result says "running…" (the
 *                          static view says "no result")
 *     options.onChange     called (with tl) after every change of the rendered blocks
 *     options.renderMarkdown  (text) => Promise of its HTML: draws the streaming elements (without
 *                          it they show their text as it is)
 *   tl.setBlocks(blocks)   replaces everything (switch markers are kept)
 *   tl.addBlock(block)     inserts or replaces by seq; a tool_result goes into its call's item;
 *                          an assistant text/thinking block removes the matching streaming element
 *   tl.setSwitches(list)   the markers where runtime or model changed ({seq, from, to})
 *   tl.setBookkeeping(on)  shows or hides the bookkeeping rows
 *   tl.streamDelta(kind, text)  appends to a provisional assistant message ("text", "assistant",
 *                          "assistant_delta") or thinking ("thinking", "thinking_delta") at the end
 *                          of the timeline (class "streaming")
 *   tl.clearStreaming()    removes the provisional elements
 *   tl.bookkeepingCount    how many bookkeeping blocks there are
 *   tl.lastSeq             the highest seq rendered (-1 when none)
 *   tl.block(seq)          the block with that seq, if any
 *
 * Helpers: SnaTimeline.showsMarkdown(block) (whether its text is drawn from `html`),
 * SnaTimeline.runtimeName(id), SnaTimeline.switchLabel(switch), SnaTimeline.formatTime(iso),
 * SnaTimeline.isBookkeeping(block), SnaTimeline.mountView() (the static page: reads the JSON
 * script element #sna-data, builds the header and the timeline).
 *
 * `sna view` inlines this file in a script element: it must never contain the characters of an
 * HTML comment opener or of a script end tag (written here split, as '<' + '!--').
 *
 * Markup (what tests look for): every block element has data-seq, data-kind, data-actor, data-id.
 * A tool call is <div class="block tool …" data-kind="tool_use"> holding a <details>; its result is
 * the inner <div class="tool-result" data-kind="tool_result" data-seq="…"> (class "is-error" and a
 * badge "error" when the tool failed). Switch markers are <div class="switch" data-seq="…">.
 * Text from blocks never becomes markup: it is escaped here, or in the server's HTML, which holds
 * only the tags its renderer writes (and its sanitizer lets through).
 */
(function (root) {
  'use strict';

  const { esc, highlight } = root.SnaHighlight;
  const {
    el, runtimeName, formatTime, clip, plainWords, isBookkeeping, showsMarkdown, switchLabel, compactionLabel,
    prettyInput, toolSummary, count, dollars, usageSummary, usageDetail, addUsage,
  } = root.SnaFormat;

  const LONG_OUTPUT = 20000;

  // ---------------------------------------------------------------------------------------------
  // The timeline.

  /**
   * A provisional element of text streaming in.
   * @typedef {{kind: string, text: string, node: HTMLElement, body: HTMLElement, summary?: HTMLElement, pending: boolean}} Streaming
   */

  class Timeline {
    /** @param {HTMLElement} container @param {SnaTimelineOptions} [options] */
    constructor(container, options) {
      this.container = container;
      /** @type {Required<Pick<SnaTimelineOptions, 'embedUrl' | 'showBookkeeping' | 'live'>> & SnaTimelineOptions} */
      this.options = Object.assign({ embedUrl: () => null, showBookkeeping: false, live: false, onChange: null }, options || {});
      this.container.classList.add('timeline');
      /** @type {Map<number, SnaBlock>} seq → block */
      this.blocks = new Map();
      /** @type {Map<number, HTMLElement>} seq → element of a top-level block (tool items under the call's seq) */
      this.nodes = new Map();
      /** @type {Map<number, number>} tool_use seq → tool_result seq paired with it */
      this.resultOf = new Map();
      /** @type {Map<number, number>} tool_result seq → tool_use seq */
      this.hostOf = new Map();
      /** @type {Map<string, Set<number>>} call_id → the seqs of its tool_use and tool_result blocks */
      this.byCall = new Map();
      /** @type {HTMLElement[]} */
      this.switchNodes = [];
      /** @type {HTMLElement[]} */
      this.compactionNodes = [];
      /** @type {Set<number>} seqs of compaction summaries apart from their boundary (shown in the marker) */
      this.summaries = new Set();
      /** @type {SnaUsage | null} */
      this.usage = null;
      /** @type {HTMLElement[]} */
      this.usageNodes = [];
      /** @type {Streaming[]} */
      this.streaming = [];
      this._batch = false;
      this.showBookkeeping = false;
      this.bookkeepingCount = 0;
      this.lastSeq = -1;
      this.setBookkeeping(!!this.options.showBookkeeping);
    }

    /** @param {number} seq */
    block(seq) {
      return this.blocks.get(seq);
    }

    /** @param {boolean} on */
    setBookkeeping(on) {
      this.showBookkeeping = !!on;
      this.container.classList.toggle('hide-bookkeeping', !on);
    }

    /** @param {SnaBlock[]} blocks */
    setBlocks(blocks) {
      for (const node of this.nodes.values()) node.remove();
      this.blocks.clear();
      this.nodes.clear();
      this.resultOf.clear();
      this.hostOf.clear();
      this.byCall.clear();
      this.bookkeepingCount = 0;
      this.lastSeq = -1;
      this.clearStreaming(true);
      const sorted = [...blocks].sort((a, b) => a.seq - b.seq);
      this._batch = true;
      for (const b of sorted) this.addBlock(b);
      this._batch = false;
      if (this.usage) this.setUsage(this.usage);
      this._changed();
    }

    /**
     * Shows tokens and cost per turn (a person's message and what answered it), after the turn's
     * last block; `usage` is `Session.usage`: `{responses: [{seq, model, input, …, cost_usd}], totals}`.
     * @param {SnaUsage | null} usage
     */
    setUsage(usage) {
      for (const node of this.usageNodes) node.remove();
      this.usageNodes = [];
      this.usage = usage || null;
      const responses = (usage && usage.responses) || [];
      const prompts = [...this.blocks.values()]
        .filter((b) => b.actor === 'user' && b.kind === 'text' && !isBookkeeping(b) && !this.summaries.has(b.seq))
        .map((b) => b.seq)
        .sort((a, b) => a - b);
      const turns = new Map(); // index of the prompt a turn starts at (-1: before any) → sum
      for (const r of responses) {
        let i = -1;
        while (i + 1 < prompts.length && prompts[i + 1] <= r.seq) i++;
        turns.set(i, addUsage(turns.get(i) || {}, r));
      }
      const last = Math.max(this.lastSeq, ...responses.map((r) => r.seq));
      for (const [i, sum] of turns) {
        const next = prompts[i + 1];
        const cost = dollars(sum.cost_usd);
        const node = el('div', { class: 'turn-usage', title: usageDetail(sum) }, [
          el('span', { class: 'tokens', text: 'turn: ' + count(sum.total) + ' tokens' }),
          cost || (sum.unpriced_models || []).length ? el('span', { class: 'cost', text: (cost || 'no price') + (cost && (sum.unpriced_models || []).length ? ' + unpriced' : '') }) : null,
        ]);
        this._insert(node, next !== undefined ? next - 0.75 : last + 0.25);
        this.usageNodes.push(node);
      }
      this._changed();
    }

    /** @param {SnaBlock} block */
    addBlock(block) {
      if (!block || typeof block.seq !== 'number') return;
      if (this.blocks.has(block.seq)) this._remove(block.seq);
      this.blocks.set(block.seq, block);
      if (block.seq > this.lastSeq) this.lastSeq = block.seq;
      const callId = block.tool && block.tool.call_id;
      if (callId !== undefined && callId !== null) {
        let calls = this.byCall.get(callId);
        if (!calls) this.byCall.set(callId, (calls = new Set()));
        calls.add(block.seq);
      }
      if (isBookkeeping(block)) this.bookkeepingCount++;
      if (block.actor === 'assistant' && (block.kind === 'text' || block.kind === 'thinking')) this._dropStreaming(block.kind);
      if (block.kind === 'tool_use' && block.tool && !isBookkeeping(block)) {
        const node = this._renderTool(block);
        this._insert(node, block.seq);
        this.nodes.set(block.seq, node);
        // A result already here (blocks may come in any order) moves into the item.
        const result = this._findResult(/** @type {SnaToolBlock} */ (block));
        if (result) this._pair(block.seq, result.seq);
      } else if (block.kind === 'tool_result' && block.tool && !isBookkeeping(block)) {
        const host = this._findCall(/** @type {SnaToolBlock} */ (block));
        if (host !== null) this._pair(host, block.seq);
        else this._placeAlone(block);
      } else {
        const node = this._render(block);
        if (this.summaries.has(block.seq)) node.classList.add('compacted-summary');
        this._insert(node, block.seq);
        this.nodes.set(block.seq, node);
      }
      if (!this._batch) this._changed();
    }

    /** @param {SnaSwitch[]} switches */
    setSwitches(switches) {
      for (const node of this.switchNodes) node.remove();
      this.switchNodes = [];
      for (const sw of switches || []) {
        const node = el('div', { class: 'switch', 'data-seq': sw.seq, role: 'separator' }, [el('span', { text: switchLabel(sw) })]);
        this._insert(node, sw.seq - 0.5);
        this.switchNodes.push(node);
      }
      this._changed();
    }

    /** Marks each compaction before its boundary block, its summary collapsed under it.
     * @param {SnaCompaction[]} compactions */
    setCompactions(compactions) {
      for (const node of this.compactionNodes) node.remove();
      this.compactionNodes = [];
      for (const c of compactions || []) {
        const preserved = (c.preserved || []).length;
        const detail = 'the summary at seq ' + c.summary_seq + ' stands in for what came before' +
          (preserved ? '; ' + preserved + ' earlier block' + (preserved === 1 ? '' : 's') + ' kept' : '');
        const node = el('div', { class: 'compaction', 'data-boundary': c.boundary_seq, role: 'separator', 'aria-label': compactionLabel(c) }, [
          el('details', null, [
            el('summary', null, [el('span', { class: 'label', text: compactionLabel(c) }), ' ', el('span', { class: 'detail', text: detail })]),
            this._fillMarkdown(el('div', { class: 'md compaction-summary' }), c.html, c.summary || '', {}, null),
          ]),
        ]);
        this._insert(node, c.boundary_seq - 0.25);
        this.compactionNodes.push(node);
      }
      // A summary stored as a block of its own (Claude Code's, a user message) is drawn in its
      // marker only: it is no message of the person's, and no turn starts there.
      const summaries = new Set((compactions || []).filter((c) => c.summary_seq !== c.boundary_seq).map((c) => c.summary_seq));
      for (const seq of new Set([...this.summaries, ...summaries])) {
        const node = this.nodes.get(seq);
        if (node) node.classList.toggle('compacted-summary', summaries.has(seq));
      }
      this.summaries = summaries;
      if (this.usage) this.setUsage(this.usage);
      this._changed();
    }

    /** @param {string} kind @param {string} text */
    streamDelta(kind, text) {
      if (!text) return;
      const k = /think/.test(kind || '') ? 'thinking' : 'text';
      let s = this.streaming[this.streaming.length - 1];
      if (!s || s.kind !== k) {
        const body = el('div', { class: 'md' });
        if (k === 'thinking') {
          const summary = el('span', { class: 'summary-text', text: '…' });
          const node = el('div', { class: 'block thinking assistant streaming', 'data-kind': 'thinking', 'data-actor': 'assistant' }, [
            el('details', null, [el('summary', null, [el('span', { class: 'label', text: 'thinking' }), ' ', summary]), body]),
          ]);
          s = { kind: k, text: '', node, body, summary, pending: false };
        } else {
          const node = el('article', { class: 'block msg assistant text streaming', 'data-kind': 'text', 'data-actor': 'assistant' }, [
            el('div', { class: 'meta' }, [el('span', { class: 'who', text: 'assistant' }), el('span', { class: 'typing', text: 'writing…' })]),
            body,
          ]);
          s = { kind: k, text: '', node, body, pending: false };
        }
        this._insert(s.node, Infinity);
        this.streaming.push(s);
      }
      s.text += text;
      this._paintStreaming(s);
    }

    /**
     * Draws a streaming element's text (its Markdown from options.renderMarkdown, else the text as it
     * is): one paint at a time, each of the latest text; until the HTML comes, the last one stays.
     * @param {Streaming} s
     */
    _paintStreaming(s) {
      if (s.pending) return;
      s.pending = true;
      const paint = () => {
        const text = s.text;
        /** @param {string | undefined} html */
        const show = (html) => {
          s.pending = false;
          if (!s.node.isConnected) return;
          this._fillMarkdown(s.body, html, text, {}, null);
          if (s.summary) s.summary.textContent = clip(plainWords(text), 90) || '…';
          this._changed();
          if (s.text !== text) this._paintStreaming(s);
        };
        if (!s.node.isConnected) s.pending = false;
        else if (this.options.renderMarkdown) this.options.renderMarkdown(text).then(show, () => show(undefined));
        else show(undefined);
      };
      if (typeof requestAnimationFrame === 'function' && !document.hidden) requestAnimationFrame(paint);
      else setTimeout(paint, 50);
    }

    /** @param {boolean} [quiet] */
    clearStreaming(quiet) {
      for (const s of this.streaming) s.node.remove();
      this.streaming = [];
      if (!quiet) this._changed();
    }

    // --- internals ---

    _changed() {
      if (this._batch) return;
      if (typeof this.options.onChange === 'function') this.options.onChange(this);
    }

    /** @param {string} kind */
    _dropStreaming(kind) {
      const i = this.streaming.findIndex((s) => s.kind === kind);
      if (i >= 0) {
        this.streaming[i].node.remove();
        this.streaming.splice(i, 1);
      }
    }

    /** Inserts a top-level node ordered by key (seq; switch markers at seq - 0.5; streaming last).
     * @param {HTMLElement} node @param {number} key */
    _insert(node, key) {
      node._snaKey = key;
      let after = this.container.lastElementChild;
      while (after && (after._snaKey === undefined || after._snaKey > key)) after = after.previousElementSibling;
      if (after) after.after(node);
      else this.container.prepend(node);
      this._group(node);
      this._group(node.nextElementSibling);
    }

    /**
     * Class "cont" on a message that goes on from the one before it (same actor, same message
     * id, nothing but bookkeeping between): it is drawn without its own header.
     * @param {Element | null} node
     */
    _group(node) {
      if (!node || !node.classList.contains('msg') || node.classList.contains('streaming')) return;
      const block = this.blocks.get(/** @type {number} */ (node._snaKey));
      let prev = node.previousElementSibling;
      while (prev && prev.classList.contains('bookkeeping')) prev = prev.previousElementSibling;
      const before = prev && prev.classList.contains('msg') ? this.blocks.get(/** @type {number} */ (prev._snaKey)) : null;
      const same = !!(block && before && block.message_id && before.message_id === block.message_id && before.actor === block.actor && before.kind === block.kind);
      node.classList.toggle('cont', same);
    }

    /** @param {number} seq */
    _remove(seq) {
      const block = this.blocks.get(seq);
      if (!block) return;
      if (isBookkeeping(block)) this.bookkeepingCount--;
      this.blocks.delete(seq);
      const calls = block.tool && this.byCall.get(block.tool.call_id);
      if (calls) calls.delete(seq);
      const host = this.hostOf.get(seq);
      if (host !== undefined) {
        // A paired result: take it out of its call's item.
        this.hostOf.delete(seq);
        this.resultOf.delete(host);
        const item = this.nodes.get(host);
        if (item) this._fillResult(item, null);
        return;
      }
      const node = this.nodes.get(seq);
      if (node) {
        const next = node.nextElementSibling;
        node.remove();
        this._group(next);
      }
      this.nodes.delete(seq);
      const r = this.resultOf.get(seq);
      if (r !== undefined) {
        // A call with a result: the result stands alone until a call takes it again.
        this.resultOf.delete(seq);
        this.hostOf.delete(r);
        const result = this.blocks.get(r);
        if (result) this._placeAlone(result);
      }
    }

    /** @param {SnaToolBlock} block @returns {SnaBlock[]} */
    _sameCall(block) {
      const seqs = this.byCall.get(block.tool.call_id);
      return seqs ? [...seqs].map((seq) => this.blocks.get(seq)).filter((b) => b !== undefined) : [];
    }

    /** @param {SnaToolBlock} use */
    _findResult(use) {
      let best = null;
      for (const b of this._sameCall(use)) {
        if (b.kind === 'tool_result' && b.tool && b.tool.call_id === use.tool.call_id && b.seq > use.seq && !this.hostOf.has(b.seq)) {
          if (!best || b.seq < best.seq) best = b;
        }
      }
      return best;
    }

    /** @param {SnaToolBlock} result */
    _findCall(result) {
      let best = null;
      for (const b of this._sameCall(result)) {
        if (b.kind === 'tool_use' && b.tool && b.tool.call_id === result.tool.call_id && b.seq < result.seq && !this.resultOf.has(b.seq) && this.nodes.has(b.seq)) {
          if (best === null || b.seq > best) best = b.seq;
        }
      }
      return best;
    }

    /** @param {number} useSeq @param {number} resultSeq */
    _pair(useSeq, resultSeq) {
      const alone = this.nodes.get(resultSeq);
      if (alone) {
        alone.remove();
        this.nodes.delete(resultSeq);
      }
      this.resultOf.set(useSeq, resultSeq);
      this.hostOf.set(resultSeq, useSeq);
      this._fillResult(this.nodes.get(useSeq), this.blocks.get(resultSeq));
    }

    /** @param {SnaBlock} result */
    _placeAlone(result) {
      const node = this._renderLoneResult(result);
      this._insert(node, result.seq);
      this.nodes.set(result.seq, node);
    }

    /** @param {string} id @param {string} alt @param {SnaEmbed | undefined} embed */
    _embedHtml(id, alt, embed) {
      const url = this.options.embedUrl(id, embed);
      const name = (embed && embed.name) || alt || id;
      if (embed && embed.mime && !/^image\//.test(embed.mime)) {
        const label = '[attachment ' + name + ' (' + embed.mime + ', ' + embed.size + ' bytes)]';
        return url
          ? '<a class="attachment" data-embed="' + esc(id) + '" href="' + esc(url) + '" download="' + esc(name) + '">' + esc(label) + '</a>'
          : '<span class="attachment" data-embed="' + esc(id) + '">' + esc(label) + '</span>';
      }
      if (!url) return '<span class="attachment missing" data-embed="' + esc(id) + '">[image ' + esc(name) + ' not available]</span>';
      return '<img class="embed" data-embed="' + esc(id) + '" alt="' + esc(alt || name) + '" src="' + esc(url) + '">';
    }

    /**
     * Fills `body` with the server's HTML of `text` (its embed references made the embeds, each id
     * added to `used`; its code blocks coloured), or with the text as it is when there is no HTML.
     * @param {HTMLElement} body
     * @param {string | undefined} html
     * @param {string} text
     * @param {Record<string, SnaEmbed>} embeds
     * @param {Set<string> | null} used
     */
    _fillMarkdown(body, html, text, embeds, used) {
      if (typeof html !== 'string') {
        body.classList.add('plain');
        body.textContent = text;
        return body;
      }
      body.classList.remove('plain');
      body.innerHTML = html; // the server's sanitized HTML (cli/src/markdown.rs)
      for (const ref of /** @type {NodeListOf<HTMLElement>} */ (body.querySelectorAll('span.embed-ref[data-embed]'))) {
        const id = ref.dataset.embed || '';
        if (used) used.add(id);
        ref.insertAdjacentHTML('afterend', this._embedHtml(id, ref.textContent, embeds[id]));
        ref.remove();
      }
      for (const code of /** @type {NodeListOf<HTMLElement>} */ (body.querySelectorAll('pre.code[data-lang] > code'))) {
        code.innerHTML = highlight(code.textContent || '', /** @type {HTMLElement} */ (code.parentElement).dataset.lang);
      }
      return body;
    }

    /** The Markdown of a block's text with its embeds, and the embeds no text refers to after it.
     * @param {SnaBlock} block */
    _richBody(block) {
      const used = new Set();
      const embeds = block.embeds || {};
      const body = this._fillMarkdown(el('div', { class: 'md' }), block.html, String(block.content || ''), embeds, used);
      const rest = Object.keys(embeds).filter((id) => !used.has(id)).sort();
      if (!rest.length) return [body];
      return [body, el('div', { class: 'embeds', html: rest.map((id) => this._embedHtml(id, embeds[id].name || id, embeds[id])).join('') })];
    }

    /** Plain output (tool results, errors): preformatted text, images where referenced.
     * @param {SnaBlock} block */
    _plainBody(block) {
      const embeds = block.embeds || {};
      const used = new Set();
      /** @type {{text?: string, embed?: string, alt?: string}[]} */
      const parts = [];
      const text = String(block.content || '').replace(/\s+$/, '');
      const re = /!\[([^\]\n]*)\]\(\s*embed:\/\/([A-Za-z0-9._:-]+)\s*\)/g;
      let last = 0;
      let m;
      while ((m = re.exec(text)) !== null) {
        if (m.index > last) parts.push({ text: text.slice(last, m.index) });
        parts.push({ embed: m[2], alt: m[1] });
        used.add(m[2]);
        last = re.lastIndex;
      }
      if (last < text.length) parts.push({ text: text.slice(last) });
      const out = [];
      for (const p of parts) {
        if (p.embed) {
          out.push(el('div', { class: 'embeds', html: this._embedHtml(p.embed, p.alt || '', embeds[p.embed]) }));
          continue;
        }
        const t = (p.text || '').replace(/^\n+|\n+$/g, '');
        if (!t) continue;
        out.push(this._pre(t, ''));
      }
      const rest = Object.keys(embeds).filter((id) => !used.has(id)).sort();
      if (rest.length) out.push(el('div', { class: 'embeds', html: rest.map((id) => this._embedHtml(id, embeds[id].name || id, embeds[id])).join('') }));
      if (!out.length) out.push(el('div', { class: 'empty', text: '(empty)' }));
      return out;
    }

    /** A <pre> of text; a very long one shows its start and a button for the rest.
     * @param {string} text @param {string} lang */
    _pre(text, lang) {
      const code = el('code');
      const pre = el('pre', { class: 'output' }, [code]);
      if (text.length <= LONG_OUTPUT) {
        code.innerHTML = highlight(text, lang);
        return pre;
      }
      code.innerHTML = highlight(text.slice(0, LONG_OUTPUT), lang);
      const more = el('button', {
        type: 'button',
        class: 'more',
        text: 'show all (' + Math.round(text.length / 1024) + ' KB)',
        onclick: () => {
          code.innerHTML = highlight(text, lang);
          more.remove();
        },
      });
      return el('div', { class: 'long' }, [pre, more]);
    }

    /** @param {SnaBlock} block @param {string} [extraClass] */
    _attrs(block, extraClass) {
      return {
        class: ['block', block.actor, block.kind, extraClass, isBookkeeping(block) ? 'bookkeeping' : ''].filter(Boolean).join(' '),
        'data-seq': block.seq,
        'data-kind': block.kind,
        'data-actor': block.actor,
        'data-id': block.id,
      };
    }

    /** @param {SnaBlock} block */
    _meta(block) {
      const parts = [el('span', { class: 'who', text: block.actor })];
      if (block.actor === 'assistant') {
        const by = [runtimeName(block.provider), block.model].filter(Boolean).join(' · ');
        if (by) parts.push(el('span', { class: 'by', text: by }));
      }
      const time = formatTime(block.created_at);
      if (time) parts.push(el('time', { datetime: block.created_at, title: block.created_at + ' · #' + block.seq, text: time }));
      return el('div', { class: 'meta' }, parts);
    }

    /** @param {SnaBlock} block */
    _render(block) {
      if (isBookkeeping(block)) return this._renderBookkeeping(block);
      if (block.kind === 'thinking') {
        return el('div', this._attrs(block), [
          el('details', null, [
            el('summary', null, [el('span', { class: 'label', text: 'thinking' }), ' ', el('span', { class: 'summary-text', text: clip(plainWords(block.content), 90) || '(no readable text)' })]),
            ...this._richBody(block),
          ]),
        ]);
      }
      if (block.kind === 'error') {
        return el('div', this._attrs(block, 'msg'), [this._meta(block), ...this._plainBody(block)]);
      }
      return el('article', this._attrs(block, 'msg'), [this._meta(block), ...this._richBody(block)]);
    }

    /** @param {SnaBlock} block */
    _renderBookkeeping(block) {
      const body = el('div', { class: 'bk-body' });
      const details = el('details', null, [
        el('summary', null, [el('span', { class: 'label', text: block.kind === 'status' ? block.actor + ' · status' : block.actor + ' · ' + block.kind }), ' ', el('span', { class: 'summary-text', text: clip(block.content, 140) || '(empty)' })]),
        body,
      ]);
      // Filled when first opened: runtime records can be large.
      details.addEventListener('toggle', () => {
        if (!details.open || body.childElementCount) return;
        body.append(...this._plainBody(block));
        if (block.native !== undefined) {
          body.append(el('div', { class: 'label', text: 'native record (' + (block.native.runtime || '?') + ')' }), this._pre(JSON.stringify(block.native.data !== undefined ? block.native.data : block.native, null, 2), 'json'));
        }
      });
      return el('div', this._attrs(block), [details]);
    }

    /** @param {SnaBlock} block */
    _renderTool(block) {
      const name = (block.tool && block.tool.name) || 'tool';
      const input = prettyInput(block.content || '');
      const badge = el('span', { class: 'badge pending', text: this.options.live ? 'running…' : 'no result' });
      const summary = el('summary', null, [
        el('span', { class: 'tool-name', text: name }),
        el('span', { class: 'tool-summary', text: toolSummary(block.content || '') }),
        badge,
      ]);
      const inputBox = el('div', { class: 'tool-input' }, [el('div', { class: 'label', text: 'input' }), this._pre(input.text || '(none)', input.lang)]);
      const slot = el('div', { class: 'tool-slot' });
      const node = el('div', this._attrs(block, 'tool'), [el('details', null, [summary, inputBox, slot])]);
      node._snaBadge = badge;
      node._snaSlot = slot;
      return node;
    }

    /** @param {SnaBlock} result */
    _resultElement(result) {
      const failed = !!(result.tool && result.tool.is_error);
      const attrs = {
        class: 'tool-result' + (failed ? ' is-error' : ''),
        'data-seq': result.seq,
        'data-kind': result.kind,
        'data-actor': result.actor,
        'data-id': result.id,
      };
      const time = formatTime(result.created_at);
      return el('div', attrs, [
        el('div', { class: 'label' }, [failed ? 'error' : 'result', time ? el('time', { datetime: result.created_at, text: ' · ' + time }) : null]),
        ...this._plainBody(result),
      ]);
    }

    /** A tool item's result (none: the call waits). @param {HTMLElement | undefined} item @param {SnaBlock | null | undefined} result */
    _fillResult(item, result) {
      if (!item) return;
      const slot = /** @type {HTMLElement} */ (item._snaSlot);
      const badge = /** @type {HTMLElement} */ (item._snaBadge);
      slot.replaceChildren();
      item.classList.remove('is-error', 'has-result');
      if (!result) {
        badge.className = 'badge pending';
        badge.textContent = this.options.live ? 'running…' : 'no result';
        return;
      }
      const failed = !!(result.tool && result.tool.is_error);
      item.classList.add('has-result');
      if (failed) item.classList.add('is-error');
      badge.className = failed ? 'badge error' : 'badge ok';
      badge.textContent = failed ? 'error' : 'done';
      slot.append(this._resultElement(result));
    }

    /** @param {SnaBlock} result */
    _renderLoneResult(result) {
      const failed = !!(result.tool && result.tool.is_error);
      const attrs = this._attrs(result, 'tool lone' + (failed ? ' is-error' : ''));
      const preview = clip(result.content, 140) || '(empty)';
      const callId = (result.tool && result.tool.call_id) || '';
      return el('div', attrs, [
        el('details', null, [
          el('summary', null, [
            el('span', { class: 'tool-name', text: 'result' }),
            el('span', { class: 'tool-summary', text: preview }),
            el('span', { class: failed ? 'badge error' : 'badge ok', text: failed ? 'error' : 'result' }),
          ]),
          el('div', { class: 'label', text: 'output of call ' + callId }),
          ...this._plainBody(result),
        ]),
      ]);
    }
  }

  /** @param {HTMLElement} container @param {SnaTimelineOptions} [options] */
  function create(container, options) {
    return new Timeline(container, options);
  }

  // ---------------------------------------------------------------------------------------------
  // The static page of `sna view`.

  function mountView() {
    const data = JSON.parse(/** @type {HTMLElement} */ (document.getElementById('sna-data')).textContent || '{}');
    /** @type {SnaSessionInfo | {id?: undefined, title?: undefined, blockCount?: undefined, providers?: undefined, models?: undefined}} */
    const session = data.session || {};
    const header = /** @type {HTMLElement} */ (document.getElementById('page-header'));
    const main = /** @type {HTMLElement} */ (document.getElementById('timeline'));
    const title = session.title || session.id || 'session';
    const toggle = el('input', { type: 'checkbox', id: 'toggle-bookkeeping' });
    const bkCount = el('span', { class: 'count', text: '0' });
    const runtimes = (session.providers || []).map(runtimeName);
    const models = session.models || [];
    header.replaceChildren(
      el('div', { class: 'bar' }, [el('h1', { id: 'title', text: title })]),
      el('div', { class: 'bar sub' }, [
        el('span', { class: 'facts' }, [
          el('span', null, ['session ', el('code', { text: session.id || '' })]),
          el('span', { text: (session.blockCount !== undefined ? session.blockCount : (data.blocks || []).length) + ' blocks' }),
          runtimes.length ? el('span', { class: 'runtimes', text: runtimes.join(', ') }) : null,
          models.length ? el('span', { class: 'models', text: models.join(', ') }) : null,
          data.usage && data.usage.totals.responses
            ? el('span', { class: 'usage-total', title: usageDetail(data.usage.totals), text: usageSummary(data.usage.totals) })
            : null,
          data.redacted ? el('span', { class: 'redacted', text: 'secrets redacted' }) : null,
        ]),
        el('label', { class: 'toggle', for: 'toggle-bookkeeping' }, [toggle, el('span', null, ['show runtime bookkeeping (', bkCount, ')'])]),
      ]),
    );
    const embeds = data.embeds || {};
    const tl = create(main, {
      embedUrl: (/** @type {string} */ id) => embeds[id] || null,
      showBookkeeping: false,
      live: false,
      onChange: (t) => { bkCount.textContent = String(t.bookkeepingCount); },
    });
    toggle.addEventListener('change', () => tl.setBookkeeping(toggle.checked));
    tl.setBlocks(data.blocks || []);
    tl.setSwitches(data.switches || []);
    tl.setCompactions(data.compactions || []);
    if (data.usage) tl.setUsage(data.usage);
    main.addEventListener('click', zoomImage);
    return tl;
  }

  /** Clicking an image shows it at full size (and back). @param {Event} event */
  function zoomImage(event) {
    const img = /** @type {HTMLElement | null} */ (event.target);
    if (img && img.tagName === 'IMG' && img.classList.contains('embed')) img.classList.toggle('zoomed');
  }

  root.SnaTimeline = {
    create,
    showsMarkdown,
    highlight,
    runtimeName,
    switchLabel,
    compactionLabel,
    formatTime,
    isBookkeeping,
    toolSummary,
    usageSummary,
    usageDetail,
    mountView,
    zoomImage,
    el,
  };
})(typeof window !== 'undefined' ? window : globalThis);

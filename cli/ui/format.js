/*
 * sna UI: what the pages say about blocks and sessions, and the DOM helper they build with —
 * runtime names, times, one-line summaries, switch and compaction labels, tokens and cost. A
 * classic script after highlight.js: it defines `window.SnaFormat` (timeline.js hands the same on
 * as `SnaTimeline.…`).
 *
 * `sna view` inlines this file in a script element: it must never contain the characters of an
 * HTML comment opener or of a script end tag.
 */
(function (root) {
  'use strict';

  /** @type {Record<string, string>} */
  const RUNTIMES = { 'claude-code': 'Claude Code', codex: 'Codex', opencode: 'OpenCode' };

  /** @param {string | null | undefined} id */
  function runtimeName(id) {
    if (!id) return '';
    return RUNTIMES[id] || id;
  }

  // ---------------------------------------------------------------------------------------------
  // Small DOM helpers.

  /**
   * An element with attributes (see SnaAttrs in cli/ui-tools/ui.d.ts) and children.
   * @template {keyof HTMLElementTagNameMap} K
   * @param {K} tag
   * @param {SnaAttrs} [attrs]
   * @param {SnaChild | SnaChild[]} [children]
   * @returns {HTMLElementTagNameMap[K]}
   */
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'class') node.className = String(v);
        else if (k === 'text') node.textContent = String(v);
        else if (k === 'html') node.innerHTML = String(v); // only ever our own escaped HTML
        else if (k.startsWith('on')) node.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
        else node.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (const c of Array.isArray(children) ? children : [children]) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  /** @param {number} n */
  function pad2(n) {
    return String(n).padStart(2, '0');
  }

  /** "15:47" today, "2026-12-02 15:47" another day (local time). @param {string | undefined} iso */
  function formatTime(iso) {
    const d = new Date(iso || '');
    if (isNaN(d.getTime())) return '';
    const now = new Date();
    const hm = pad2(d.getHours()) + ':' + pad2(d.getMinutes());
    if (d.toDateString() === now.toDateString()) return hm;
    return d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate()) + ' ' + hm;
  }

  /** @param {string | undefined} text @param {number} max */
  function clip(text, max) {
    const line = String(text || '').trim().split('\n')[0];
    const more = line.length > max || String(text || '').trim().includes('\n');
    return (line.length > max ? line.slice(0, max).trimEnd() : line) + (more ? '…' : '');
  }

  /** Text without the commonest Markdown marks, for one-line summaries. @param {string} text */
  function plainWords(text) {
    return String(text || '').replace(/[*_`]+|^#+\s*/gm, '');
  }

  // Text a runtime puts in the conversation as the user's though the user never wrote it: Codex's
  // environment context and instruction files.
  const RUNTIME_CONTEXT = /^\s*(?:<(environment_context|user_instructions)>[\s\S]*<\/\1>\s*$|# AGENTS\.md instructions for )/;

  /** Runtime bookkeeping: system blocks, status blocks, and the user-side text a runtime writes
   * itself (Claude Code's meta records, Codex's environment context). @param {SnaBlock} block */
  function isBookkeeping(block) {
    if (block.actor === 'system' || block.kind === 'status') return true;
    if (block.actor !== 'user' || block.kind !== 'text') return false;
    const record = block.native && block.native.data && block.native.data.record;
    if (record && record.isMeta === true) return true;
    return RUNTIME_CONTEXT.test(String(block.content || ''));
  }

  /** Whether the timeline draws the block's text as Markdown (from its `html`): not for bookkeeping,
   * errors, and the tool calls and results that name their tool. @param {SnaBlock} block */
  function showsMarkdown(block) {
    if (isBookkeeping(block) || block.kind === 'error') return false;
    return !((block.kind === 'tool_use' || block.kind === 'tool_result') && block.tool);
  }

  /** @param {SnaSwitch} sw */
  function switchLabel(sw) {
    const to = sw.to || {};
    const runtime = runtimeName(to.provider) || to.model_provider || 'another runtime';
    const model = to.model || '';
    let label = sw.from ? 'switched to ' + runtime : runtime;
    if (model) label += ' · ' + model;
    if (sw.from) label += ' here';
    return label;
  }

  /** The marker text of a compaction: "compacted by Claude Code (manual, 15,321 tokens before)".
   * @param {SnaCompaction} c */
  function compactionLabel(c) {
    const how = [c.trigger];
    if (typeof c.tokens_before === 'number') how.push(c.tokens_before.toLocaleString('en-US') + ' tokens before');
    return 'compacted by ' + (runtimeName(c.runtime) || c.runtime) + ' (' + how.join(', ') + ')';
  }

  /**
   * A tool input to show: indented JSON, or the text (a patch coloured as a diff).
   * @param {string} content
   * @returns {{text: string, lang: string, value: any}}
   */
  function prettyInput(content) {
    try {
      const value = JSON.parse(content);
      if (value !== null && typeof value === 'object') return { text: JSON.stringify(value, null, 2), lang: 'json', value };
      return { text: typeof value === 'string' ? value : content, lang: '', value };
    } catch (e) {
      const patch = /^\*\*\* Begin Patch|^diff --git|^--- |\n@@ /.test(content);
      return { text: content, lang: patch ? 'diff' : '', value: undefined };
    }
  }

  const SUMMARY_KEYS = ['command', 'cmd', 'file_path', 'filePath', 'path', 'pattern', 'query', 'url', 'description', 'prompt', 'text', 'input', 'name'];

  /** One line about a tool call's input. @param {string} content */
  function toolSummary(content) {
    const { value } = prettyInput(content);
    if (value === undefined) return clip(content, 160);
    if (value === null || typeof value !== 'object') return clip(String(value), 160);
    /** @param {unknown} x */
    const show = (x) => {
      if (Array.isArray(x) && x.every((s) => typeof s === 'string')) {
        // ["bash", "-lc", "ls"] → "ls"
        if (x.length >= 3 && /sh$/.test(x[0]) && /^-\w*c$/.test(x[1])) return x.slice(2).join(' ');
        return x.join(' ');
      }
      return typeof x === 'string' ? x : null;
    };
    for (const key of SUMMARY_KEYS) {
      const s = show(value[key]);
      if (s && s.trim()) return clip(s, 160);
    }
    for (const x of Object.values(value)) {
      const s = show(x);
      if (s && s.trim()) return clip(s, 160);
    }
    return clip(JSON.stringify(value), 160);
  }


  // ---------------------------------------------------------------------------------------------
  // Tokens and cost (`Session.usage`: responses by block seq, totals).

  /** @param {number | undefined} n */
  function count(n) {
    return Number(n || 0).toLocaleString('en-US');
  }

  /** @param {number | null | undefined} usd */
  function dollars(usd) {
    if (usd === null || usd === undefined) return null;
    return '$' + (usd > 0 && usd < 0.01 ? usd.toFixed(4) : usd.toFixed(2));
  }

  /** "12,345 tokens · $0.12": a sum of responses; an unpriced part is said, never shown as $0.
   * @param {SnaUsageSum} sum */
  function usageSummary(sum) {
    if (!sum || !sum.responses) return '';
    const cost = dollars(sum.cost_usd);
    const unpriced = (sum.unpriced_models || []).length;
    let text = count(sum.total) + ' tokens';
    if (cost) text += ' · ' + cost + (unpriced ? ' + unpriced' : '');
    else if (unpriced) text += ' · no price';
    return text;
  }

  /** The tooltip of a sum: each kind of token. @param {SnaUsageSum} sum */
  function usageDetail(sum) {
    const parts = ['input ' + count(sum.input), 'output ' + count(sum.output)];
    if (sum.reasoning) parts.push('of which reasoning ' + count(sum.reasoning));
    if (sum.cache_read) parts.push('cache read ' + count(sum.cache_read));
    if (sum.cache_write) parts.push('cache write ' + count(sum.cache_write));
    parts.push(sum.responses + (sum.responses === 1 ? ' response' : ' responses'));
    const unpriced = sum.unpriced_models || [];
    if (unpriced.length) parts.push('no price for ' + unpriced.join(', '));
    return parts.join(' · ');
  }

  /** `sum` with the response `r` added. @param {SnaUsageSum} sum @param {SnaUsageSum} r */
  function addUsage(sum, r) {
    for (const k of /** @type {const} */ (['input', 'output', 'cache_read', 'cache_write', 'reasoning', 'total'])) sum[k] = (sum[k] || 0) + (r[k] || 0);
    sum.responses = (sum.responses || 0) + 1;
    if (r.cost_usd === null || r.cost_usd === undefined) {
      sum.unpriced_models = sum.unpriced_models || [];
      const name = r.model || 'unknown';
      if (!sum.unpriced_models.includes(name)) sum.unpriced_models.push(name);
    } else {
      sum.cost_usd = (sum.cost_usd || 0) + r.cost_usd;
    }
    return sum;
  }

  root.SnaFormat = {
    el,
    runtimeName,
    formatTime,
    clip,
    plainWords,
    isBookkeeping,
    showsMarkdown,
    switchLabel,
    compactionLabel,
    prettyInput,
    toolSummary,
    count,
    dollars,
    usageSummary,
    usageDetail,
    addUsage,
  };
})(typeof window !== 'undefined' ? window : globalThis);

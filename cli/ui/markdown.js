/*
 * sna UI: Markdown to safe HTML. Block structure first (fences, headings, quotes, lists, tables,
 * paragraphs), then inline spans. Everything taken from the text is escaped; only tags written here
 * are markup. A classic script after highlight.js: it defines `window.SnaMarkdown`.
 *
 *   SnaMarkdown.markdown(text, {embed})  safe HTML; embed(id, alt) gives the HTML of
 *                                        `![alt](embed://id)`
 *
 * `sna view` inlines this file in a script element: it must never contain the characters of an
 * HTML comment opener or of a script end tag.
 */
(function (root) {
  'use strict';

  const { esc, highlight } = root.SnaHighlight;

  const PH_OPEN = '\u0001';
  const PH_CLOSE = '\u0002';
  const INLINE = new RegExp([
    '(?<!`)(`+)(?!`)([\\s\\S]*?[^`])\\1(?!`)', // 1,2: code span
    '\\\\([\\\\`*_{}\\[\\]()#+\\-.!|~<>])', // 3: backslash escape
    '!\\[([^\\]\\n]*)\\]\\(\\s*embed:\\/\\/([A-Za-z0-9._:-]+)\\s*\\)', // 4,5: embed image
    '!\\[([^\\]\\n]*)\\]\\(([^)\\s]+)(?:\\s+"[^"\\n]*")?\\)', // 6,7: other image
    '\\[([^\\]\\n]+)\\]\\(([^)\\s]+)(?:\\s+"[^"\\n]*")?\\)', // 8,9: link
    '<((?:https?|HTTPS?):\\/\\/[^\\s<>]+)>', // 10: <autolink>
    '\\b((?:https?|HTTPS?):\\/\\/[^\\s<>"\'`\\u0001\\u0002]+)', // 11: bare URL
  ].join('|'), 'g');

  function safeUrl(url) {
    return /^https?:\/\//i.test(url) ? url : null;
  }

  function linkHtml(url, innerHtml) {
    return '<a href="' + esc(url) + '" rel="noopener noreferrer" target="_blank">' + innerHtml + '</a>';
  }

  function inline(text, ctx) {
    const held = [];
    const hold = (html) => PH_OPEN + (held.push(html) - 1) + PH_CLOSE;
    let out = '';
    let last = 0;
    let m;
    const re = new RegExp(INLINE.source, 'g');
    while ((m = re.exec(text)) !== null) {
      out += esc(text.slice(last, m.index));
      last = re.lastIndex;
      if (m[2] !== undefined) {
        let code = m[2];
        if (/^ .* $/.test(code) && code.trim()) code = code.slice(1, -1);
        out += hold('<code>' + esc(code) + '</code>');
      } else if (m[3] !== undefined) {
        out += hold(esc(m[3]));
      } else if (m[5] !== undefined) {
        out += hold(ctx.embed ? ctx.embed(m[5], m[4]) : esc(m[0]));
      } else if (m[7] !== undefined) {
        // Remote images are not loaded (no network resources): a link instead.
        const url = safeUrl(m[7]);
        out += url ? hold(linkHtml(url, esc(m[6] || url))) : esc(m[0]);
      } else if (m[9] !== undefined) {
        const url = safeUrl(m[9]);
        out += url ? hold(linkHtml(url, inline(m[8], ctx))) : hold(inline(m[8], ctx) + ' (' + esc(m[9]) + ')');
      } else if (m[10] !== undefined) {
        out += hold(linkHtml(m[10], esc(m[10])));
      } else if (m[11] !== undefined) {
        let url = m[11];
        const trail = /[.,;:!?)\]]+$/.exec(url);
        let rest = '';
        if (trail) {
          rest = trail[0];
          url = url.slice(0, -rest.length);
          // Keep a closing parenthesis the URL opened.
          while (rest.startsWith(')') && (url.split('(').length > url.split(')').length)) {
            url += ')';
            rest = rest.slice(1);
          }
        }
        out += hold(linkHtml(url, esc(url))) + esc(rest);
      }
    }
    out += esc(text.slice(last));
    out = out
      .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
      .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, '$1<strong>$2</strong>')
      .replace(/(^|[^*\w])\*(?=[^\s*])([^*]*?[^\s*])\*(?!\*)/g, '$1<em>$2</em>')
      .replace(/(^|[^\w])_(?=[^\s_])([^_\n]*?[^\s_])_(?!\w)/g, '$1<em>$2</em>')
      .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>')
      .replace(/\n/g, '<br>\n');
    const phRe = new RegExp(PH_OPEN + '(\\d+)' + PH_CLOSE, 'g');
    return out.replace(phRe, (_, i) => held[Number(i)]);
  }

  const RE_FENCE = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
  const RE_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
  const RE_HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
  const RE_QUOTE = /^ {0,3}> ?/;
  const RE_ITEM = /^( *)([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
  const RE_TABLE_SEP = /^ *\|? *:?-+:? *(\| *:?-+:? *)*\|? *$/;

  function indentOf(line) {
    return /^ */.exec(line)[0].length;
  }

  function startsBlock(line) {
    return RE_FENCE.test(line) || RE_HEADING.test(line) || RE_HR.test(line) || RE_QUOTE.test(line);
  }

  function splitRow(line) {
    let s = line.trim();
    if (s.startsWith('|')) s = s.slice(1);
    if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
    const cells = [];
    let cur = '';
    for (let i = 0; i < s.length; i++) {
      if (s[i] === '\\' && s[i + 1] === '|') { cur += '|'; i++; continue; }
      if (s[i] === '|') { cells.push(cur.trim()); cur = ''; continue; }
      cur += s[i];
    }
    cells.push(cur.trim());
    return cells;
  }

  function blocksHtml(lines, ctx, tight) {
    let out = '';
    let i = 0;
    const n = lines.length;
    while (i < n) {
      const line = lines[i];
      if (!line.trim()) { i++; continue; }
      let m;
      if ((m = RE_FENCE.exec(line))) {
        const indent = m[1].length;
        const fence = m[2];
        const lang = m[3] || '';
        const body = [];
        i++;
        while (i < n) {
          const l = lines[i];
          const close = new RegExp('^ {0,3}' + (fence[0] === '`' ? '`' : '~') + '{' + fence.length + ',}\\s*$');
          if (close.test(l)) { i++; break; }
          body.push(l.slice(Math.min(indent, indentOf(l))));
          i++;
        }
        const code = body.join('\n');
        out += '<pre class="code"' + (lang ? ' data-lang="' + esc(lang) + '"' : '') + '><code>' + highlight(code, lang) + '</code></pre>\n';
        continue;
      }
      if ((m = RE_HEADING.exec(line))) {
        const level = m[1].length;
        out += '<h' + level + '>' + inline(m[2] || '', ctx) + '</h' + level + '>\n';
        i++;
        continue;
      }
      if (RE_HR.test(line)) {
        out += '<hr>\n';
        i++;
        continue;
      }
      if (RE_QUOTE.test(line)) {
        const body = [];
        while (i < n && lines[i].trim() && (RE_QUOTE.test(lines[i]) || !startsBlock(lines[i]))) {
          body.push(lines[i].replace(RE_QUOTE, ''));
          i++;
        }
        out += '<blockquote>' + blocksHtml(body, ctx, false) + '</blockquote>\n';
        continue;
      }
      if ((m = RE_ITEM.exec(line)) && (m[4].trim() || lines[i + 1] === undefined || indentOf(lines[i + 1] || '') > m[1].length)) {
        const r = listHtml(lines, i, ctx);
        out += r.html;
        i = r.next;
        continue;
      }
      if (line.includes('|') && i + 1 < n && RE_TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes('-')) {
        const head = splitRow(line);
        const aligns = splitRow(lines[i + 1]).map((c) => (/^:-+:$/.test(c) ? 'center' : /-:$/.test(c) ? 'right' : /^:-/.test(c) ? 'left' : ''));
        i += 2;
        const rows = [];
        while (i < n && lines[i].trim() && lines[i].includes('|')) {
          rows.push(splitRow(lines[i]));
          i++;
        }
        const cell = (tag, text, k) => '<' + tag + (aligns[k] ? ' style="text-align:' + aligns[k] + '"' : '') + '>' + inline(text || '', ctx) + '</' + tag + '>';
        out += '<div class="table-wrap"><table><thead><tr>' + head.map((c, k) => cell('th', c, k)).join('') + '</tr></thead><tbody>' +
          rows.map((r) => '<tr>' + head.map((_, k) => cell('td', r[k], k)).join('') + '</tr>').join('') + '</tbody></table></div>\n';
        continue;
      }
      // Paragraph: until a blank line or the start of another block.
      const para = [];
      while (i < n && lines[i].trim()) {
        const l = lines[i];
        if (para.length && (startsBlock(l) || /^ {0,3}([-*+]|1[.)])[ \t]+\S/.test(l))) break;
        para.push(l.replace(/^ {1,3}(?=\S)/, ''));
        i++;
      }
      const html = inline(para.join('\n').replace(/[ \t]+$/, ''), ctx);
      out += tight ? html + '\n' : '<p>' + html + '</p>\n';
    }
    return out;
  }

  function listHtml(lines, start, ctx) {
    const first = RE_ITEM.exec(lines[start]);
    const indent = first[1].length;
    const ordered = /\d/.test(first[2]);
    const markerChar = ordered ? first[2].slice(-1) : first[2];
    const items = [];
    let loose = false;
    let i = start;
    const n = lines.length;
    // An item of this list: same indentation, same kind of marker.
    const sibling = (line) => {
      const m = RE_ITEM.exec(line);
      return m && m[1].length === indent && /\d/.test(m[2]) === ordered && (ordered ? m[2].slice(-1) : m[2]) === markerChar ? m : null;
    };
    while (i < n) {
      const m = sibling(lines[i]);
      if (!m) break;
      let pad = m[3].length;
      if (pad > 4 || !m[4]) pad = 1;
      const contentIndent = indent + m[2].length + pad;
      const body = [m[4]];
      i++;
      let sawBlank = false;
      while (i < n) {
        const l = lines[i];
        if (!l.trim()) {
          let j = i + 1;
          while (j < n && !lines[j].trim()) j++;
          if (j < n && indentOf(lines[j]) >= contentIndent) {
            for (let k = i; k < j; k++) body.push('');
            sawBlank = true;
            i = j;
            continue;
          }
          if (j < n && sibling(lines[j])) loose = true;
          break;
        }
        const ind = indentOf(l);
        if (ind >= contentIndent) { body.push(l.slice(contentIndent)); i++; continue; }
        if (ind > indent && RE_ITEM.test(l)) { body.push(l.slice(Math.min(ind, contentIndent))); i++; continue; }
        if (RE_ITEM.test(l) || startsBlock(l) || sawBlank) break;
        body.push(l.trim()); // a lazy continuation line
        i++;
      }
      if (sawBlank) loose = true;
      items.push({ body, num: ordered ? parseInt(m[2], 10) : null });
      // A blank line between items makes the list loose; skip it.
      if (i < n && !lines[i].trim()) {
        let j = i;
        while (j < n && !lines[j].trim()) j++;
        if (j < n && sibling(lines[j])) { loose = true; i = j; } else break;
      }
    }
    const tag = ordered ? 'ol' : 'ul';
    const startAttr = ordered && items[0].num !== 1 ? ' start="' + items[0].num + '"' : '';
    let html = '<' + tag + startAttr + '>';
    for (const item of items) {
      let body = item.body;
      let task = '';
      const t = /^\[([ xX])\][ \t]+/.exec(body[0]);
      if (t) {
        task = t[1] === ' ' ? '<span class="task" aria-label="to do">☐</span> ' : '<span class="task done" aria-label="done">☑</span> ';
        body = [body[0].slice(t[0].length)].concat(body.slice(1));
      }
      html += '<li>' + task + blocksHtml(body, ctx, !loose).trim() + '</li>';
    }
    html += '</' + tag + '>\n';
    return { html, next: i };
  }

  /** Safe HTML for Markdown text. ctx.embed(id, alt) gives the HTML of `![alt](embed://id)`. */
  function markdown(text, ctx) {
    ctx = ctx || {};
    const clean = String(text || '').replace(/\r\n?/g, '\n').replace(/[\u0000-\u0002]/g, '\ufffd');
    return blocksHtml(clean.split('\n'), ctx, false).trim();
  }

  root.SnaMarkdown = { markdown };
})(typeof window !== 'undefined' ? window : globalThis);

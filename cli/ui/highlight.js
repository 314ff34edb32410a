/*
 * sna UI: syntax colouring of code blocks and tool output — a small tokenizer, good enough to make
 * code easier to scan (not a parser). A classic script: it defines `window.SnaHighlight` and needs
 * nothing else.
 *
 *   SnaHighlight.esc(text)              text escaped for HTML
 *   SnaHighlight.highlight(code, lang)  safe HTML: everything escaped, only our <span class="tok-…">
 *   SnaHighlight.highlightDiff(code)    a unified diff, lines coloured by their first character
 *
 * `sna view` inlines this file in a script element: it must never contain the characters of an
 * HTML comment opener or of a script end tag (written here split, as '<' + '!--').
 */
(function (root) {
  'use strict';

  /** @type {Record<string, string>} */
  const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  /** @param {unknown} text */
  function esc(text) {
    return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
  }


  const KEYWORDS = new Set((
    'as async await break case catch class const continue def default defer del do elif else enum ' +
    'except export extends false final finally fn for from func function go if impl import in ' +
    'interface is lambda let loop match mod mut new nil none null package pass pub raise return ' +
    'self Self static struct super switch this throw trait true try type typeof use var void where ' +
    'while with yield None True False undefined then fi done esac local echo elif unsafe ref crate ' +
    'public private protected int bool string char float double long'
  ).split(' '));

  const HASH_COMMENTS = /^(py|python|python3|sh|bash|zsh|shell|console|fish|ruby|rb|yaml|yml|toml|perl|pl|r|dockerfile|makefile|make|conf|ini|cfg|nix|elixir|ex|exs|ps1|powershell|gitignore|env|dotenv)$/;
  const DASH_COMMENTS = /^(sql|lua|haskell|hs|elm|ada)$/;
  const SLASH_COMMENTS = /^(js|javascript|mjs|cjs|jsx|ts|typescript|tsx|rust|rs|go|golang|c|h|cpp|c\+\+|cc|hpp|cs|csharp|java|kotlin|kt|swift|scala|php|dart|css|scss|less|json5|jsonc|zig|proto|groovy|objc|m|glsl|hlsl|wgsl|sol|solidity|v|d)$/;

  /** @param {string} code @param {string} [lang] */
  function highlight(code, lang) {
    lang = (lang || '').toLowerCase();
    if (!lang) return esc(code);
    if (lang === 'diff' || lang === 'patch') return highlightDiff(code);
    const json = lang === 'json' || lang === 'jsonl' || lang === 'ndjson';
    let comment = null;
    if (HASH_COMMENTS.test(lang)) comment = '#[^\\n]*';
    else if (DASH_COMMENTS.test(lang)) comment = '--[^\\n]*';
    else if (SLASH_COMMENTS.test(lang)) comment = '\\/\\/[^\\n]*|\\/\\*[\\s\\S]*?\\*\\/';
    else if (/^(html|xml|svg|vue|svelte|md|markdown)$/.test(lang)) comment = '<' + '!--[\\s\\S]*?-->';
    const single = lang === 'rust' || lang === 'rs' ? "'(?:[^'\\\\\\n]|\\\\.)'" : "'(?:[^'\\\\\\n]|\\\\.)*'";
    const strings = json ? '"(?:[^"\\\\\\n]|\\\\.)*"' : '"(?:[^"\\\\\\n]|\\\\.)*"|' + single + '|`(?:[^`\\\\]|\\\\.)*`';
    const parts = [
      comment ? '(' + comment + ')' : '(\\u0000never)',
      '(' + strings + ')(\\s*:)?',
      '(\\b0x[0-9a-fA-F_]+\\b|\\b\\d[\\d_]*(?:\\.\\d+)?(?:[eE][+-]?\\d+)?\\b)',
      '([A-Za-z_$][\\w$]*)',
    ];
    const re = new RegExp(parts.join('|'), 'g');
    let out = '';
    let last = 0;
    let m;
    while ((m = re.exec(code)) !== null) {
      if (m[0] === '') { re.lastIndex++; continue; }
      out += esc(code.slice(last, m.index));
      last = re.lastIndex;
      if (m[1] !== undefined) out += '<span class="tok-c">' + esc(m[1]) + '</span>';
      else if (m[2] !== undefined) {
        const isKey = m[3] !== undefined && (json || /^(yaml|yml|js|javascript|ts|typescript|py|python)$/.test(lang));
        out += '<span class="' + (isKey ? 'tok-p' : 'tok-s') + '">' + esc(m[2]) + '</span>' + esc(m[3] || '');
      } else if (m[4] !== undefined) out += '<span class="tok-n">' + esc(m[4]) + '</span>';
      else if (m[5] !== undefined) {
        const word = m[5];
        const kw = json ? /^(true|false|null)$/.test(word) : KEYWORDS.has(word);
        out += kw ? '<span class="tok-k">' + esc(word) + '</span>' : esc(word);
      } else out += esc(m[0]);
    }
    return out + esc(code.slice(last));
  }

  /** @param {string} code */
  function highlightDiff(code) {
    return code.split('\n').map((line) => {
      let cls = '';
      if (/^(\+\+\+|---|\*\*\* )/.test(line)) cls = 'tok-k';
      else if (line.startsWith('+')) cls = 'tok-ins';
      else if (line.startsWith('-')) cls = 'tok-del';
      else if (line.startsWith('@@')) cls = 'tok-c';
      return cls ? '<span class="' + cls + '">' + esc(line) + '</span>' : esc(line);
    }).join('\n');
  }

  root.SnaHighlight = { esc, highlight, highlightDiff };
})(typeof window !== 'undefined' ? window : globalThis);

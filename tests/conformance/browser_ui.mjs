// The live web UI of `sna serve` in a real browser: headless Chromium driven with playwright-core
// through the whole scenario of a session, once per round (a window size), and a JSON report of
// what the page showed. Used by test_browser.py, which asserts on the report.
//
//   node browser_ui.mjs JOB        JOB: the job as JSON text, or the path of a file holding it
//
// The job:
//   url          the server, e.g. "http://127.0.0.1:4321"
//   chromium     the browser's executable (default /usr/bin/chromium)
//   screenshots  the directory the PNG files go in (made when missing)
//   timeoutMs    the longest any one wait may take (default 60000)
//   totalMs      the longest the whole run may take (default 600000)
//   rounds       [{name, width, height, mobile, session, claude, codex}], each:
//                  session  the id of a session (with a cwd) that no agent runs in yet
//                  claude   {model, message, expect: text the answer contains}
//                  codex    {message, expect}
//
// Each round: the session list (`/`) filtered down to the session, which is opened from it; Claude
// Code and its model picked in the composer and a message sent (the status light busy then idle,
// the answer streamed then rendered as Markdown, its tool call paired with the result and opened);
// the bookkeeping toggle on and off; Codex picked and a message sent (a switch marker, Codex's
// answer); layout checks (widths, controls inside the window and on top, nothing under the
// composer); full-page screenshots (ui-list-W.png, ui-W.png, and ui-W-open.png with the tool call
// open and the bookkeeping shown, W the round's width); a reload showing the same blocks.
//
// With `compaction` in the job ({session, width, height, expectMarkers}; `session` a session with
// at least one compaction whose agent runs idle): the compaction markers of its page (collapsed,
// their label and summary, where they sit against the boundary blocks), the first one opened and
// closed, the Compact button clicked (disabled while the compaction runs) until a marker more shows,
// a screenshot (ui-compaction-W.png, the new marker open), with `overflow` ({message, expect}) a
// message sent whose turn the runtime compacts by itself (its marker then shows with the turn), and
// a reload showing the same markers.
// `rounds` may then be empty.
//
// Prints {chromium, rounds: [...], compaction, screenshots: [paths]} on stdout and exits 0; on any failure
// prints "browser_ui: <round>: <step>: <what>" on stderr (with a screenshot `fail-<round>.png` when
// the page was open) and exits 1. Every wait has a timeout, and the browser is closed whatever
// happens.
import { mkdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { chromium } from 'playwright-core'

const ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

function readJob() {
  const arg = process.argv[2]
  if (!arg) throw new Error('usage: node browser_ui.mjs JOB (JSON text or a file of it)')
  const text = arg.trim().startsWith('{') ? arg : readFileSync(arg, 'utf8')
  const job = JSON.parse(text)
  if (!job.url || !Array.isArray(job.rounds) || !job.screenshots) throw new Error('the job needs url, screenshots and rounds')
  return {
    chromium: '/usr/bin/chromium',
    timeoutMs: 60000,
    totalMs: 600000,
    ...job,
    url: job.url.replace(/\/+$/, ''),
    screenshots: resolve(job.screenshots),
  }
}

class StepError extends Error {}

/** A message without the terminal colours Playwright puts in its call logs. */
function plain(text) {
  return String(text).replace(/\x1b\[[0-9;]*m/g, '')
}

// ---------------------------------------------------------------------------------------------
// What runs in the page.

/** Watches #status and #timeline, from now on: window.__probe. */
function installProbe() {
  const t0 = performance.now()
  const probe = { status: [], streaming: [], finals: [] }
  window.__probe = probe
  const status = document.getElementById('status')
  const timeline = document.getElementById('timeline')
  const now = () => Math.round(performance.now() - t0)
  const noteStatus = () => {
    const state = ['idle', 'busy', 'disconnected'].find((c) => status.classList.contains(c)) || status.className
    const last = probe.status[probe.status.length - 1]
    if (!last || last.state !== state) probe.status.push({ t: now(), state })
  }
  const noteTimeline = () => {
    for (const node of timeline.querySelectorAll('.streaming')) {
      const body = node.querySelector('.md')
      const text = body ? body.textContent : ''
      const last = probe.streaming[probe.streaming.length - 1]
      if (!last || last.text !== text) probe.streaming.push({ t: now(), kind: node.dataset.kind, text })
    }
    for (const node of timeline.querySelectorAll('article.block.assistant.text[data-seq]')) {
      if (!probe.finals.some((f) => f.seq === node.dataset.seq)) probe.finals.push({ t: now(), seq: node.dataset.seq, text: node.textContent })
    }
  }
  noteStatus()
  noteTimeline()
  new MutationObserver(noteStatus).observe(status, { attributes: true, attributeFilter: ['class'] })
  new MutationObserver(noteTimeline).observe(timeline, { childList: true, subtree: true, characterData: true })
}

/** Where the probe's lists are now (a turn looks at what came after). */
function probeMark() {
  const p = window.__probe
  return { status: p.status.length, streaming: p.streaming.length, finals: p.finals.length }
}

/** The probe's records since `mark`. */
function probeSince(mark) {
  const p = window.__probe
  return { status: p.status.slice(mark.status), streaming: p.streaming.slice(mark.streaming), finals: p.finals.slice(mark.finals) }
}

/** After `mark`: the light went busy and then idle, and an answer holding `expect` is rendered. */
function turnDone([mark, expect]) {
  const p = window.__probe
  const states = p.status.slice(mark.status).map((s) => s.state)
  const busy = states.indexOf('busy')
  const idle = busy >= 0 && states.indexOf('idle', busy) > busy
  const answered = [...document.querySelectorAll('#timeline article.block.assistant.text[data-seq]')].some((a) => a.textContent.includes(expect))
  return idle && answered && document.getElementById('status').classList.contains('idle')
}

/** The rendered answer holding `expect`: its Markdown's parts. */
function answerParts(expect) {
  const article = [...document.querySelectorAll('#timeline article.block.assistant.text[data-seq]')].find((a) => a.textContent.includes(expect))
  if (!article) return null
  const md = article.querySelector('.md')
  const texts = (sel) => [...md.querySelectorAll(sel)].map((e) => e.textContent)
  return {
    seq: Number(article.dataset.seq),
    classes: article.className,
    by: (article.querySelector('.meta .by') || {}).textContent || '',
    headings: [...md.querySelectorAll('h1, h2, h3, h4, h5, h6')].map((h) => ({ tag: h.tagName.toLowerCase(), text: h.textContent })),
    strong: texts('strong'),
    code: [...md.querySelectorAll('pre > code')].map((c) => ({ lang: c.parentElement.dataset.lang || '', text: c.textContent })),
    items: texts('li'),
    inlineCode: texts(':not(pre) > code'),
    text: md.textContent,
    markup: md.innerHTML.length,
  }
}

/** The tool calls in the timeline: each item and the result inside it. */
function toolItems() {
  return [...document.querySelectorAll('#timeline > .block.tool')].map((item) => {
    const result = item.querySelector('.tool-result')
    const details = item.querySelector(':scope > details')
    const visible = (e) => !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden'
    const inputPre = item.querySelector('.tool-input pre')
    const resultPre = result && result.querySelector('pre')
    return {
      seq: Number(item.dataset.seq),
      kind: item.dataset.kind,
      actor: item.dataset.actor,
      lone: item.classList.contains('lone'),
      open: !!(details && details.open),
      name: (item.querySelector('.tool-name') || {}).textContent || '',
      summary: (item.querySelector('.tool-summary') || {}).textContent || '',
      badge: (item.querySelector('.badge') || {}).textContent || '',
      input: inputPre ? inputPre.textContent : null,
      inputVisible: visible(inputPre),
      result: result ? { seq: Number(result.dataset.seq), kind: result.dataset.kind, actor: result.dataset.actor, error: result.classList.contains('is-error'), text: resultPre ? resultPre.textContent : result.textContent, visible: visible(resultPre) } : null,
    }
  })
}

/** The bookkeeping rows: how many there are and how many show. */
function bookkeeping() {
  const rows = [...document.querySelectorAll('#timeline > .bookkeeping')]
  const label = document.querySelector('label[for="toggle-bookkeeping"]')
  return {
    total: rows.length,
    visible: rows.filter((r) => r.getClientRects().length > 0).length,
    checked: document.getElementById('toggle-bookkeeping').checked,
    label: label ? label.textContent : '',
  }
}

/** What the layout is like now: widths, the controls (inside the window, on top, apart), the end
 * of the timeline against the composer. */
function layout() {
  const doc = document.documentElement
  window.scrollTo(0, doc.scrollHeight)
  const ids = ['status', 'toggle-bookkeeping', 'message', 'send', 'runtime', 'model', 'interrupt', 'compact', 'stop']
  const controls = {}
  for (const id of ids) {
    const e = document.getElementById(id)
    if (!e) {
      controls[id] = null
      continue
    }
    const r = e.getBoundingClientRect()
    const x = r.left + r.width / 2
    const y = r.top + r.height / 2
    const hit = document.elementFromPoint(x, y)
    // On top: the point hits the control, something inside it, or the label it sits in.
    const onTop = !!hit && (hit === e || e.contains(hit) || (hit.tagName === 'LABEL' && hit.contains(e)) || (hit.control === e))
    controls[id] = {
      left: Math.round(r.left), right: Math.round(r.right), top: Math.round(r.top), bottom: Math.round(r.bottom),
      width: Math.round(r.width), height: Math.round(r.height),
      inside: r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= window.innerWidth && r.top >= 0 && r.bottom <= window.innerHeight,
      onTop,
      hit: hit ? hit.tagName.toLowerCase() + (hit.id ? '#' + hit.id : '') : null,
      disabled: !!e.disabled,
    }
  }
  const overlaps = []
  const boxes = ['message', 'send', 'runtime', 'model', 'interrupt', 'compact', 'stop'].map((id) => [id, document.getElementById(id).getBoundingClientRect()])
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, ra] = boxes[i]
      const [b, rb] = boxes[j]
      const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left)
      const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top)
      if (w > 0.5 && h > 0.5) overlaps.push([a, b])
    }
  }
  const composer = document.getElementById('composer').getBoundingClientRect()
  const header = document.querySelector('.page-header').getBoundingClientRect()
  const blocks = [...document.querySelectorAll('#timeline > *')].filter((e) => e.getClientRects().length)
  const last = blocks.length ? blocks[blocks.length - 1].getBoundingClientRect() : null
  // Anything in the page wider than the window (what would make it scroll sideways).
  const wide = [...document.querySelectorAll('body *')]
    .filter((e) => e.getClientRects().length && e.getBoundingClientRect().right > window.innerWidth + 0.5)
    .filter((e) => !e.closest('pre, .table-wrap, .visually-hidden'))
    .slice(0, 5)
    .map((e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ').join('.') : ''))
  return {
    innerWidth: window.innerWidth,
    innerHeight: window.innerHeight,
    scrollWidth: doc.scrollWidth,
    controls,
    overlaps,
    composer: { top: Math.round(composer.top), bottom: Math.round(composer.bottom), height: Math.round(composer.height) },
    header: { top: Math.round(header.top), bottom: Math.round(header.bottom) },
    lastBlockBottom: last ? Math.round(last.bottom) : null,
    lastBlockClear: !last || last.bottom <= composer.top + 0.5,
    wide,
  }
}

// ---------------------------------------------------------------------------------------------
// The scenario.

async function runRound(browser, job, round) {
  const context = await browser.newContext({
    viewport: { width: round.width, height: round.height },
    isMobile: !!round.mobile,
    hasTouch: !!round.mobile,
    deviceScaleFactor: 1,
  })
  context.setDefaultTimeout(job.timeoutMs)
  context.setDefaultNavigationTimeout(job.timeoutMs)
  const page = await context.newPage()
  const out = { name: round.name, width: round.width, height: round.height, session: round.session, pageErrors: [], consoleErrors: [], errorAnswers: [], failedRequests: [], screenshots: [] }
  page.on('pageerror', (e) => out.pageErrors.push(String(e && e.message ? e.message : e)))
  page.on('console', (m) => { if (m.type() === 'error') out.consoleErrors.push(`${m.text()} (${m.location().url || '?'})`) })
  page.on('response', (r) => { if (r.status() >= 400) out.errorAnswers.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`) })
  page.on('requestfailed', (r) => {
    // An event stream given up when the page goes away is not a failure.
    const url = r.url()
    if (!url.includes('/agent/events')) out.failedRequests.push(url + ' ' + ((r.failure() || {}).errorText || ''))
  })
  let current = 'opening the page'
  const step = async (name, work) => {
    current = name
    try {
      return await work()
    } catch (e) {
      throw new StepError(`${round.name}: ${name}: ${e && e.message ? plain(e.message).split('\n').slice(0, 6).join('\n') : e}`)
    }
  }
  const wait = (fn, arg, what) => page.waitForFunction(fn, arg, { timeout: job.timeoutMs, polling: 100 }).catch(async (e) => {
    const seen = await page.evaluate(() => ({
      status: window.__probe ? window.__probe.status.map((s) => s.state).join(' → ') : document.getElementById('status') && document.getElementById('status').className,
      notice: (document.getElementById('notice') || {}).textContent || '',
      timeline: ((document.getElementById('timeline') || {}).innerText || '').slice(-1500),
    })).catch(() => ({}))
    throw new Error(`${what} (waited ${job.timeoutMs} ms): ${plain(e.message).split('\n')[0]}; the page shows ${JSON.stringify(seen)}`)
  })
  const shot = async (file) => {
    const path = join(job.screenshots, file)
    // The window as tall as the page for the picture: the sticky header and composer then sit at
    // its top and bottom, where a reader scrolling the page sees them (a full-page capture of the
    // window as it is would draw them mid-page).
    const height = await page.evaluate(() => document.documentElement.scrollHeight)
    await page.setViewportSize({ width: round.width, height: Math.max(round.height, height) })
    await page.evaluate(() => window.scrollTo(0, 0))
    await page.screenshot({ path, fullPage: true, timeout: job.timeoutMs })
    await page.setViewportSize({ width: round.width, height: round.height })
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight))
    out.screenshots.push(path)
    return path
  }

  try {
    // --- the session list ---
    out.list = await step('the session list', async () => {
      await page.goto(job.url + '/', { waitUntil: 'domcontentloaded' })
      await page.locator('#filter').waitFor({ state: 'visible' })
      const row = page.locator(`ul.sessions a.row[href="/s/${encodeURIComponent(round.session)}"]`)
      await row.waitFor({ state: 'visible' })
      const before = await page.locator('ul.sessions a.row').count()
      await page.locator('#filter').fill(round.session)
      await wait((n) => document.querySelectorAll('ul.sessions a.row').length === n, 1, 'the filter leaves one session')
      const shown = await page.locator('ul.sessions a.row').allInnerTexts()
      const widths = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))
      const screenshot = await shot(`ui-list-${round.width}.png`)
      await row.click()
      await page.waitForURL(`**/s/${encodeURIComponent(round.session)}`)
      return { before, shown, ...widths, screenshot }
    })

    // --- the session page, ready: the runtimes listed and the composer focused ---
    out.ready = await step('the session page', async () => {
      await page.locator('#runtime option[value="claude-code"]').waitFor({ state: 'attached' })
      await wait(() => document.activeElement && document.activeElement.id === 'message', null, 'the composer takes the focus')
      await page.evaluate(installProbe)
      return page.evaluate(() => ({
        title: document.getElementById('title').textContent,
        status: document.getElementById('status').textContent,
        runtimes: [...document.querySelectorAll('#runtime option')].map((o) => [o.value, o.textContent]),
        empty: document.querySelectorAll('#timeline > *').length === 0,
      }))
    })

    // --- Claude Code: a turn with a tool call and a Markdown answer ---
    out.claude = await step('the Claude Code turn', async () => {
      await page.locator('#runtime').selectOption('claude-code')
      await page.locator('#model').fill(round.claude.model)
      await page.locator('#message').fill(round.claude.message)
      const picked = await page.evaluate(() => ({ runtime: document.getElementById('runtime').value, model: document.getElementById('model').value, notice: document.getElementById('notice').textContent }))
      const mark = await page.evaluate(probeMark)
      await page.locator('#send').click()
      await wait(turnDone, [mark, round.claude.expect], 'Claude Code answers and the light goes busy then idle')
      const seen = await page.evaluate(probeSince, mark)
      return { picked, ...seen, answer: await page.evaluate(answerParts, round.claude.expect), user: await userTexts(page) }
    })

    // --- the tool call: one item with its result inside; opened ---
    out.tool = await step('the tool call', async () => {
      const closed = await page.evaluate(toolItems)
      const item = page.locator('#timeline > .block.tool[data-kind="tool_use"]').first()
      await item.locator(':scope > details > summary').click()
      await wait(() => {
        const d = document.querySelector('#timeline > .block.tool[data-kind="tool_use"] > details')
        const pre = d && d.querySelector('.tool-result pre')
        return d && d.open && pre && pre.getClientRects().length > 0
      }, null, 'the tool call opens and shows its result')
      await item.locator('.tool-result pre').first().scrollIntoViewIfNeeded()
      return { closed, open: await page.evaluate(toolItems), widths: await page.evaluate(() => document.documentElement.scrollWidth) }
    })

    // --- bookkeeping: hidden, shown, hidden again ---
    out.bookkeeping = await step('the bookkeeping toggle', async () => {
      const before = await page.evaluate(bookkeeping)
      await page.locator('#toggle-bookkeeping').click()
      await wait(() => document.querySelectorAll('#timeline > .bookkeeping').length > 0 && [...document.querySelectorAll('#timeline > .bookkeeping')].every((r) => r.getClientRects().length > 0), null, 'the bookkeeping rows show')
      const shown = await page.evaluate(bookkeeping)
      const widthShown = await page.evaluate(() => document.documentElement.scrollWidth)
      await page.locator('#toggle-bookkeeping').click()
      await wait(() => [...document.querySelectorAll('#timeline > .bookkeeping')].every((r) => r.getClientRects().length === 0), null, 'the bookkeeping rows hide again')
      const hidden = await page.evaluate(bookkeeping)
      return { before, shown, hidden, widthShown }
    })

    // --- Codex: picked in the composer, a message, the switch marker and the answer ---
    out.codex = await step('the switch to Codex', async () => {
      await page.locator('#runtime').selectOption('codex')
      const picked = await page.evaluate(() => ({ runtime: document.getElementById('runtime').value, model: document.getElementById('model').value }))
      await page.locator('#message').fill(round.codex.message)
      const mark = await page.evaluate(probeMark)
      await page.locator('#send').click()
      await wait(turnDone, [mark, round.codex.expect], 'Codex answers and the light goes busy then idle')
      await wait(() => [...document.querySelectorAll('#timeline .switch')].some((s) => s.textContent.includes('switched to Codex')), null, 'a switch marker for Codex')
      const seen = await page.evaluate(probeSince, mark)
      const switches = await page.evaluate(() => [...document.querySelectorAll('#timeline .switch')].map((s) => ({ seq: Number(s.dataset.seq), text: s.textContent, next: s.nextElementSibling ? Number(s.nextElementSibling.dataset.seq) : null })))
      const facts = await page.evaluate(() => document.querySelector('.page-header .facts').textContent)
      await wait(() => document.querySelectorAll('#timeline .turn-usage').length >= 2 && document.querySelector('.page-header .usage-total'), null, 'tokens under each turn and in the header')
      const usage = await page.evaluate(usageShown)
      return { picked, ...seen, switches, facts, usage, answer: await page.evaluate(answerParts, round.codex.expect), user: await userTexts(page) }
    })

    // --- the finished page: layout and screenshots ---
    out.layout = await step('the layout', async () => {
      // The notice of the switch fades by itself; wait so that the picture shows the page at rest.
      await wait(() => document.getElementById('notice').hidden, null, 'the notice goes away')
      const first = await page.evaluate(layout)
      await shot(`ui-${round.width}.png`)
      // The same with the tool call open and the bookkeeping shown: the widest content.
      await page.locator('#toggle-bookkeeping').click()
      const wide = await page.evaluate(layout)
      await shot(`ui-${round.width}-open.png`)
      await page.locator('#toggle-bookkeeping').click()
      return { rest: first, open: wide, status: await page.evaluate(() => document.getElementById('status').className) }
    })

    // --- a reload shows the same conversation from the history routes ---
    out.reload = await step('the reload', async () => {
      await page.reload({ waitUntil: 'domcontentloaded' })
      await wait(() => document.activeElement && document.activeElement.id === 'message', null, 'the page is ready again')
      await wait((n) => document.querySelectorAll('#timeline .switch').length >= n, out.codex.switches.length, 'the switch markers again')
      await wait(() => document.querySelectorAll('#timeline .turn-usage').length >= 2, null, 'the tokens of each turn again')
      // The light is "disconnected" until the page's event stream is open again (slower under load).
      await wait(() => !document.getElementById('status').classList.contains('disconnected'), null, 'the event stream again')
      const usage = await page.evaluate(usageShown)
      return page.evaluate((usage) => ({
        usage,
        status: document.getElementById('status').className,
        runtime: document.getElementById('runtime').value,
        blocks: [...document.querySelectorAll('#timeline [data-seq]:not(.switch)')].map((e) => Number(e.dataset.seq)).sort((a, b) => a - b),
        switches: [...document.querySelectorAll('#timeline .switch')].map((s) => s.textContent),
        scrollWidth: document.documentElement.scrollWidth,
      }), usage)
    })
  } catch (e) {
    if (!(e instanceof StepError)) e = new StepError(`${round.name}: ${current}: ${e && e.message ? e.message : e}`)
    try {
      await page.screenshot({ path: join(job.screenshots, `fail-${round.name}.png`), fullPage: true, timeout: 10000 })
      e.message += `\n(the page then: ${join(job.screenshots, `fail-${round.name}.png`)})`
    } catch (_) { /* the page is gone */ }
    e.partial = out
    throw e
  } finally {
    await context.close().catch(() => {})
  }
  return out
}

/** The compaction markers of the timeline: label, whether open, the summary and whether it shows,
 * and where each sits (the seqs of the blocks before and after it in the page, and whether every
 * block from its boundary on comes after it). */
function compactionMarkers() {
  const all = [...document.querySelectorAll('#timeline [data-seq]:not(.switch):not(.compaction)')]
  return [...document.querySelectorAll('#timeline > .compaction')].map((node) => {
    const boundary = Number(node.dataset.boundary)
    const details = node.querySelector(':scope > details')
    const summary = node.querySelector('.compaction-summary')
    const seqAround = (e, dir) => {
      while (e && (e.dataset.seq === undefined || e.classList.contains('compaction'))) e = e[dir]
      return e ? Number(e.dataset.seq) : null
    }
    const following = (e) => !!(node.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING)
    const r = node.getBoundingClientRect()
    return {
      boundary,
      role: node.getAttribute('role'),
      ariaLabel: node.getAttribute('aria-label'),
      label: (node.querySelector('summary .label') || {}).textContent || '',
      detail: (node.querySelector('summary .detail') || {}).textContent || '',
      open: !!(details && details.open),
      summary: summary ? summary.textContent : null,
      // (checkVisibility: the content of a closed <details> keeps its boxes but is not rendered.)
      summaryShown: !!summary && summary.checkVisibility() && summary.getBoundingClientRect().height > 0,
      visible: r.width > 0 && r.height > 0,
      right: Math.round(r.right),
      prev: seqAround(node.previousElementSibling, 'previousElementSibling'),
      next: seqAround(node.nextElementSibling, 'nextElementSibling'),
      boundaryAfter: all.filter((e) => Number(e.dataset.seq) === boundary).every(following) && all.some((e) => Number(e.dataset.seq) === boundary),
      orderRight: all.every((e) => (Number(e.dataset.seq) >= boundary) === following(e)),
    }
  })
}

/** The blocks drawn in a compaction marker only (a summary stored as a block of its own), and the
 * person's messages the page shows. */
function summaryBlocks() {
  const shown = (e) => e.getClientRects().length > 0
  return {
    hidden: [...document.querySelectorAll('#timeline > .compacted-summary')].map((e) => ({ seq: Number(e.dataset.seq), shown: shown(e) })),
    userShown: [...document.querySelectorAll('#timeline > article.block.user.text[data-seq]')].filter(shown).map((a) => (a.querySelector('.md') || a).textContent.slice(0, 80)),
  }
}

/** The session page of a session that has compactions: the markers, the Compact button. */
async function runCompaction(browser, job, spec) {
  const context = await browser.newContext({ viewport: { width: spec.width, height: spec.height }, deviceScaleFactor: 1 })
  context.setDefaultTimeout(job.timeoutMs)
  const page = await context.newPage()
  const out = { session: spec.session, width: spec.width, pageErrors: [], consoleErrors: [], errorAnswers: [], failedRequests: [], screenshots: [] }
  page.on('pageerror', (e) => out.pageErrors.push(String(e && e.message ? e.message : e)))
  page.on('console', (m) => { if (m.type() === 'error') out.consoleErrors.push(`${m.text()} (${m.location().url || '?'})`) })
  page.on('response', (r) => { if (r.status() >= 400) out.errorAnswers.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`) })
  page.on('requestfailed', (r) => { if (!r.url().includes('/agent/events')) out.failedRequests.push(r.url() + ' ' + ((r.failure() || {}).errorText || '')) })
  let current = 'opening the page'
  const step = async (name, work) => {
    current = name
    try {
      return await work()
    } catch (e) {
      throw new StepError(`compaction: ${name}: ${e && e.message ? plain(e.message).split('\n').slice(0, 6).join('\n') : e}`)
    }
  }
  const wait = (fn, arg, what) => page.waitForFunction(fn, arg, { timeout: job.timeoutMs, polling: 100 }).catch(async (e) => {
    const seen = await page.evaluate(() => ({
      status: (document.getElementById('status') || {}).className,
      notice: (document.getElementById('notice') || {}).textContent || '',
      markers: document.querySelectorAll('#timeline > .compaction').length,
    })).catch(() => ({}))
    throw new Error(`${what} (waited ${job.timeoutMs} ms): ${plain(e.message).split('\n')[0]}; the page shows ${JSON.stringify(seen)}`)
  })
  const buttonState = () => page.evaluate(() => ({ disabled: document.getElementById('compact').disabled, text: document.getElementById('compact').textContent, status: document.getElementById('status').className }))
  try {
    out.loaded = await step('the page with its markers', async () => {
      await page.goto(job.url + '/s/' + encodeURIComponent(spec.session), { waitUntil: 'domcontentloaded' })
      await wait((n) => document.querySelectorAll('#timeline > .compaction').length >= n, spec.expectMarkers, 'the compaction markers')
      await wait(() => document.getElementById('status').classList.contains('idle') && !document.getElementById('compact').disabled, null, 'the agent idle and Compact enabled')
      return { markers: await page.evaluate(compactionMarkers), summaries: await page.evaluate(summaryBlocks), button: await buttonState(), scrollWidth: await page.evaluate(() => document.documentElement.scrollWidth) }
    })
    out.opened = await step('a marker opened and closed', async () => {
      const summary = page.locator('#timeline > .compaction > details > summary').first()
      await summary.scrollIntoViewIfNeeded()
      await summary.click()
      await wait(() => document.querySelector('#timeline > .compaction > details').open, null, 'the marker opens')
      const open = (await page.evaluate(compactionMarkers))[0]
      await summary.click()
      await wait(() => !document.querySelector('#timeline > .compaction > details').open, null, 'the marker closes')
      return { open, closed: (await page.evaluate(compactionMarkers))[0] }
    })
    out.compacted = await step('the Compact button', async () => {
      const before = (await page.evaluate(compactionMarkers)).length
      await page.locator('#compact').click()
      const during = await buttonState()
      await wait((n) => document.querySelectorAll('#timeline > .compaction').length > n, before, 'a new compaction marker')
      await wait(() => !document.getElementById('compact').disabled && document.getElementById('status').classList.contains('idle'), null, 'Compact enabled again, the agent idle')
      const notice = await page.evaluate(() => (document.getElementById('notice') || {}).textContent || '')
      const markers = await page.evaluate(compactionMarkers)
      const summaries = await page.evaluate(summaryBlocks)
      // The picture: the new marker open, at the bottom of the conversation.
      const last = page.locator('#timeline > .compaction > details > summary').last()
      await last.click()
      await wait(() => [...document.querySelectorAll('#timeline > .compaction > details')].pop().open, null, 'the new marker opens')
      const height = await page.evaluate(() => document.documentElement.scrollHeight)
      const path = join(job.screenshots, `ui-compaction-${spec.width}.png`)
      await page.setViewportSize({ width: spec.width, height: Math.max(spec.height, height) })
      await page.evaluate(() => window.scrollTo(0, 0))
      await page.screenshot({ path, fullPage: true, timeout: job.timeoutMs })
      await page.setViewportSize({ width: spec.width, height: spec.height })
      out.screenshots.push(path)
      return { during, after: await buttonState(), notice, markers, summaries, scrollWidth: await page.evaluate(() => document.documentElement.scrollWidth) }
    })
    if (spec.overflow) {
      // A message whose turn the runtime compacts by itself (the model refused it as too long): the
      // marker comes with the turn, without a reload.
      out.overflow = await step('a turn the runtime compacts', async () => {
        const before = (await page.evaluate(compactionMarkers)).length
        await page.locator('#message').fill(spec.overflow.message)
        await page.locator('#send').click()
        await wait((expect) => [...document.querySelectorAll('#timeline article.block.assistant.text[data-seq]')].some((a) => a.textContent.includes(expect)) && document.getElementById('status').classList.contains('idle'), spec.overflow.expect, 'the answer after the compaction')
        await wait((n) => document.querySelectorAll('#timeline > .compaction').length > n, before, 'a marker for the compaction the runtime did by itself')
        return { markers: await page.evaluate(compactionMarkers), summaries: await page.evaluate(summaryBlocks) }
      })
    }
    out.reload = await step('the reload', async () => {
      await page.reload({ waitUntil: 'domcontentloaded' })
      await wait((n) => document.querySelectorAll('#timeline > .compaction').length >= n, (out.overflow || out.compacted).markers.length, 'the markers again')
      return { markers: await page.evaluate(compactionMarkers), summaries: await page.evaluate(summaryBlocks) }
    })
  } catch (e) {
    if (!(e instanceof StepError)) e = new StepError(`compaction: ${current}: ${e && e.message ? e.message : e}`)
    try {
      await page.screenshot({ path: join(job.screenshots, 'fail-compaction.png'), fullPage: true, timeout: 10000 })
      e.message += `\n(the page then: ${join(job.screenshots, 'fail-compaction.png')})`
    } catch (_) { /* the page is gone */ }
    e.partial = out
    throw e
  } finally {
    await context.close().catch(() => {})
  }
  return out
}

/** The tokens and cost the page shows: each turn's line (and what follows it), the session's. */
function usageShown() {
  return {
    turns: [...document.querySelectorAll('#timeline .turn-usage')].map((u) => ({
      text: u.textContent,
      title: u.title,
      next: u.nextElementSibling ? (u.nextElementSibling.dataset.seq !== undefined ? Number(u.nextElementSibling.dataset.seq) : null) : null,
      prev: u.previousElementSibling && u.previousElementSibling.dataset.seq !== undefined ? Number(u.previousElementSibling.dataset.seq) : null,
    })),
    total: (document.querySelector('.page-header .usage-total') || {}).textContent || '',
    totalTitle: (document.querySelector('.page-header .usage-total') || {}).title || '',
  }
}

function userTexts(page) {
  return page.evaluate(() => [...document.querySelectorAll('#timeline article.block.user.text[data-seq]')].map((a) => (a.querySelector('.md') || a).textContent))
}

/** The page of a session id the server does not hold: what it says, and where its link goes. */
async function runMissing(browser, job, id) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } })
  context.setDefaultTimeout(job.timeoutMs)
  context.setDefaultNavigationTimeout(job.timeoutMs)
  const page = await context.newPage()
  try {
    const answer = await page.goto(job.url + '/s/' + encodeURIComponent(id), { waitUntil: 'domcontentloaded' })
    const seen = await page.evaluate(() => ({
      title: document.title,
      heading: (document.querySelector('h1') || {}).textContent || '',
      text: document.body.innerText,
      statusLight: !!document.getElementById('status'),
    }))
    seen.status = answer.status()
    await page.locator('a[href="/"]').click()
    await page.waitForSelector('ul.sessions', { timeout: job.timeoutMs })
    seen.after = new URL(page.url()).pathname
    return seen
  } finally {
    await context.close()
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  let job
  try {
    job = readJob()
  } catch (e) {
    process.stderr.write(`browser_ui: ${e.message}\n`)
    return 1
  }
  mkdirSync(job.screenshots, { recursive: true })
  let browser = null
  let timer = null
  const report = { chromium: null, rounds: [], compaction: null, missing: null, screenshots: [] }
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the run took longer than ${job.totalMs} ms`)), job.totalMs)
  })
  try {
    const run = (async () => {
      browser = await chromium.launch({ executablePath: job.chromium, headless: true, args: ARGS, timeout: job.timeoutMs })
      report.chromium = browser.version()
      for (const round of job.rounds) {
        const seen = await runRound(browser, job, round)
        report.rounds.push(seen)
        report.screenshots.push(...seen.screenshots)
      }
      if (job.compaction) {
        report.compaction = await runCompaction(browser, job, job.compaction)
        report.screenshots.push(...report.compaction.screenshots)
      }
      if (job.missing) report.missing = await runMissing(browser, job, job.missing)
    })()
    await Promise.race([run, deadline])
    process.stdout.write(JSON.stringify(report) + '\n')
    return 0
  } catch (e) {
    process.stderr.write(`browser_ui: ${e && e.message ? e.message : e}\n`)
    if (e && e.partial) process.stderr.write(`browser_ui: seen so far: ${JSON.stringify(e.partial).slice(0, 4000)}\n`)
    return 1
  } finally {
    clearTimeout(timer)
    if (browser) {
      // Closing may not hang the run either: past 15 s the exit below kills the browser.
      await Promise.race([browser.close().catch(() => {}), new Promise((r) => setTimeout(r, 15000))])
    }
  }
}

// An explicit exit: Playwright's exit handler kills (by process group) any browser still there,
// say one whose launch outlived the deadline.
process.exit(await main())

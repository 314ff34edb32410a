// Types for `tsc --checkJs` over the web UI's scripts (cli/ui/*.js): what the server sends them, and
// the global each classic script defines (window.SnaHighlight, …), which the scripts after it use.
// The scripts are checked against these: an object a script puts in its global must fit the type
// here, and every use of it elsewhere too.

// ---------------------------------------------------------------------------------------------
// The server's data (GET /sessions/{id}/blocks, /switches, /compactions, /usage, /agent/sessions;
// `sna view` puts the same in the page).

interface SnaEmbed {
  mime: string;
  name?: string;
  size: number;
}

interface SnaToolRef {
  call_id: string;
  name?: string;
  is_error?: boolean;
}

/** A canonical block; `html` is its Markdown rendered by the server (cli/src/markdown.rs). */
interface SnaBlock {
  id: string;
  seq: number;
  actor: string;
  kind: string;
  content: string;
  tool?: SnaToolRef;
  embeds?: Record<string, SnaEmbed>;
  provider?: string;
  model_provider?: string;
  model?: string;
  message_id?: string;
  turn_id?: string;
  created_at: string;
  native?: { runtime?: string; data?: any };
  html?: string;
}

/** A tool_use or tool_result block that names its call. */
type SnaToolBlock = SnaBlock & { tool: SnaToolRef };

interface SnaAttribution {
  provider?: string;
  model_provider?: string;
  model?: string;
}

interface SnaSwitch {
  seq: number;
  from?: SnaAttribution | null;
  to?: SnaAttribution;
}

interface SnaCompaction {
  runtime: string;
  boundary_seq: number;
  summary_seq: number;
  summary: string;
  preserved?: number[];
  trigger: string;
  tokens_before?: number;
  created_at: string;
  html?: string;
}

/** Tokens of one response (by the seq of its block), or a sum of them. */
interface SnaUsageSum {
  seq?: number;
  model?: string;
  input?: number;
  output?: number;
  cache_read?: number;
  cache_write?: number;
  reasoning?: number;
  total?: number;
  responses?: number;
  cost_usd?: number | null;
  unpriced_models?: string[];
}

interface SnaUsage {
  responses: (SnaUsageSum & { seq: number })[];
  totals: SnaUsageSum;
}

interface SnaAgentState {
  alive: boolean;
  busy: boolean;
  provider: string;
  model?: string | null;
  pid?: number | null;
}

interface SnaSessionInfo {
  id: string;
  title?: string | null;
  label?: string | null;
  cwd?: string | null;
  createdAt?: string;
  updatedAt?: string;
  blockCount?: number;
  providers?: string[];
  modelProviders?: string[];
  models?: string[];
  origin?: string | null;
  agent?: SnaAgentState | null;
}

// What the timeline keeps on its elements: a top-level element's place in the order (a block's seq,
// a marker's place between two), and a tool item's badge and the slot its result goes in.
interface Element {
  _snaKey?: number;
  _snaBadge?: HTMLElement;
  _snaSlot?: HTMLElement;
}

// ---------------------------------------------------------------------------------------------
// The globals, in load order.

/** highlight.js */
declare var SnaHighlight: {
  esc(text: unknown): string;
  highlight(code: string, lang?: string): string;
  highlightDiff(code: string): string;
};

/** format.js (timeline.js hands most of it on as `SnaTimeline.…`) */
declare var SnaFormat: {
  el: typeof SnaTimeline.el;
  runtimeName(id: string | null | undefined): string;
  formatTime(iso: string | undefined): string;
  clip(text: string | undefined, max: number): string;
  plainWords(text: string): string;
  isBookkeeping(block: SnaBlock): boolean;
  showsMarkdown(block: SnaBlock): boolean;
  switchLabel(sw: SnaSwitch): string;
  compactionLabel(c: SnaCompaction): string;
  prettyInput(content: string): { text: string; lang: string; value: any };
  toolSummary(content: string): string;
  count(n: number | undefined): string;
  dollars(usd: number | null | undefined): string | null;
  usageSummary(sum: SnaUsageSum): string;
  usageDetail(sum: SnaUsageSum): string;
  addUsage(sum: SnaUsageSum, r: SnaUsageSum): SnaUsageSum;
};

/** The options of `SnaTimeline.create` (timeline.js says what each does). */
interface SnaTimelineOptions {
  embedUrl?: (embedId: string, embed?: SnaEmbed) => string | null;
  showBookkeeping?: boolean;
  live?: boolean;
  onChange?: ((timeline: SnaTimelineView) => void) | null;
  renderMarkdown?: (text: string) => Promise<string | undefined>;
}

/** What the pages call on a timeline. */
interface SnaTimelineView {
  readonly bookkeepingCount: number;
  readonly lastSeq: number;
  block(seq: number): SnaBlock | undefined;
  setBlocks(blocks: SnaBlock[]): void;
  addBlock(block: SnaBlock): void;
  setSwitches(switches: SnaSwitch[]): void;
  setCompactions(compactions: SnaCompaction[]): void;
  setUsage(usage: SnaUsage | null): void;
  setBookkeeping(on: boolean): void;
  streamDelta(kind: string, text: string): void;
  clearStreaming(quiet?: boolean): void;
}

/** The attributes of `SnaTimeline.el`: `class`, `text`, `html` (our own HTML only), `on…` listeners
 * and any other attribute; a null, undefined or false value is left out. */
type SnaAttrs = Record<string, unknown> | null | undefined;
type SnaChild = Node | string | number | null | undefined | false;

/** timeline.js */
declare var SnaTimeline: {
  create(container: HTMLElement, options?: SnaTimelineOptions): SnaTimelineView;
  showsMarkdown(block: SnaBlock): boolean;
  highlight(code: string, lang?: string): string;
  runtimeName(id: string | null | undefined): string;
  switchLabel(sw: SnaSwitch): string;
  compactionLabel(c: SnaCompaction): string;
  formatTime(iso: string | undefined): string;
  isBookkeeping(block: SnaBlock): boolean;
  toolSummary(content: string): string;
  usageSummary(sum: SnaUsageSum): string;
  usageDetail(sum: SnaUsageSum): string;
  mountView(): SnaTimelineView;
  zoomImage(event: Event): void;
  el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: SnaAttrs, children?: SnaChild | SnaChild[]): HTMLElementTagNameMap[K];
};

/** api.js */
declare var SnaApi: {
  ApiError: new (message: string, status: number, code?: string) => Error & { status: number; code?: string };
  api(method: string, path: string, body?: unknown): Promise<any>;
  enc(text: string): string;
  renderMarkdown(texts: string[]): Promise<(string | undefined)[]>;
  addHtml<T extends { html?: string }>(items: T[], textOf: (item: T) => string | undefined): Promise<void>;
};

/** page.js */
declare var SnaPage: {
  timeAgo(iso: string | undefined): string;
  fullDate(iso: string | undefined): string;
  setTitle(text: string): void;
  pageError(root: HTMLElement, message: string): void;
};

/** list.js and session.js */
declare var SnaApp: {
  listPage(root: HTMLElement): Promise<void>;
  sessionPage(root: HTMLElement, id: string): Promise<void>;
};

/**
 * The model's light Markdown as Telegram's HTML parse mode, built so Telegram can never answer "can't parse
 * entities": every character outside a tag is escaped (`&`, `<`, `>`; `"` in an `href` too), and a tag is written
 * only for markup whose both ends were found — so tags are balanced by construction, and unbalanced markup (`**` with
 * no partner, a lone backtick) stays as literal text. HTML rather than MarkdownV2: MarkdownV2 reserves 18 characters
 * that ordinary sentences are full of (`.`, `!`, `-`, `(`), so one missed escape fails the whole message; HTML
 * reserves three.
 *
 * Formatting only removes characters from what the user sees (the markers), never adds any: a piece of at most N
 * characters of Markdown shows at most N characters, so splitting the plain text first keeps every message within
 * Telegram's 4096 and no tag spans two messages.
 *
 * @module
 */

/**
 * `&`, `<` and `>` as Telegram's HTML wants them (the only three it requires; `"` too when `quotes`).
 *
 * @example
 * ```ts
 * escapeHtml("1 < 2 & 3 > 2"); // "1 &lt; 2 &amp; 3 &gt; 2"
 * ```
 */
export function escapeHtml(text: string, quotes = false): string {
  const escaped = text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
  return quotes ? escaped.replaceAll('"', "&quot;") : escaped;
}

/** One kind of inline markup: where it is, and how it becomes HTML (its inner text formatted again or not). */
interface Rule {
  pattern: RegExp;
  render(match: RegExpExecArray): string;
}

/** Inline rules, tried at each position; the earliest match wins, then the first rule listed. */
const INLINE: readonly Rule[] = [
  // Code first: nothing inside it is markup.
  { pattern: /`([^`\n]+)`/y, render: (m) => `<code>${escapeHtml(m[1]!)}</code>` },
  {
    // Only http(s) links: a `javascript:` or `tg:` target is left as the text it was.
    pattern: /\[([^[\]\n]*[^[\]\s][^[\]\n]*)\]\((https?:\/\/[^\s()<>]+)\)/y,
    render: (m) => `<a href="${escapeHtml(m[2]!, true)}">${inline(m[1]!)}</a>`,
  },
  { pattern: /\*\*(?=\S)([^\n]*?\S)\*\*/y, render: (m) => `<b>${inline(m[1]!)}</b>` },
  { pattern: /__(?=\S)([^\n]*?\S)__(?!\w)/y, render: (m) => `<b>${inline(m[1]!)}</b>` },
  { pattern: /\*(?=[^\s*])([^*\n]*?[^\s*])\*(?!\*)/y, render: (m) => `<i>${inline(m[1]!)}</i>` },
  // `_x_` only between non-word characters, so snake_case_names stay as they are.
  { pattern: /_(?=[^\s_])([^_\n]*?[^\s_])_(?!\w)/y, render: (m) => `<i>${inline(m[1]!)}</i>` },
  { pattern: /~~(?=\S)([^~\n]*?\S)~~/y, render: (m) => `<s>${inline(m[1]!)}</s>` },
];

/** Inline Markdown in `text` (no fenced blocks) as HTML. */
function inline(text: string): string {
  let out = "";
  let done = 0;
  for (let at = 0; at < text.length;) {
    const start = text.slice(at).search(/[`[*_~]/);
    if (start < 0) break;
    const position = at + start;
    // `_` inside a word (snake_case) never opens italics.
    const wordBefore = position > 0 && /\w/.test(text[position - 1]!);
    let rendered: { html: string; end: number } | undefined;
    for (const rule of INLINE) {
      if (wordBefore && rule.pattern.source.startsWith("_")) continue;
      rule.pattern.lastIndex = position;
      const match = rule.pattern.exec(text);
      if (match) {
        rendered = { html: rule.render(match), end: position + match[0].length };
        break;
      }
    }
    if (!rendered) {
      at = position + 1;
      continue;
    }
    out += escapeHtml(text.slice(done, position)) + rendered.html;
    done = at = rendered.end;
  }
  return out + escapeHtml(text.slice(done));
}

/** A fenced block: ```lang, a newline, the code, ```. */
const FENCE = /```([A-Za-z0-9_+-]*)[ \t]*\n?([\s\S]*?)\n?```/g;

/**
 * The model's light Markdown (`**bold**`, `*italic*`, `_italic_`, `` `code` ``, fenced blocks, `[text](https://…)`,
 * `~~struck~~`) as Telegram HTML; everything else escaped, unbalanced markup kept as text.
 *
 * @example
 * ```ts
 * toTelegramHtml("**Done**: 1 < 2 & `x`"); // "<b>Done</b>: 1 &lt; 2 &amp; <code>x</code>"
 * toTelegramHtml("a ** b"); // "a ** b"
 * ```
 */
export function toTelegramHtml(markdown: string): string {
  let out = "";
  let done = 0;
  for (const match of markdown.matchAll(FENCE)) {
    const code = match[2]!;
    // An empty block would be an empty entity: leave its backticks as text.
    if (code.trim() === "") continue;
    const language = match[1]!;
    const body = escapeHtml(code);
    out += inline(markdown.slice(done, match.index)) +
      (language ? `<pre><code class="language-${language}">${body}</code></pre>` : `<pre>${body}</pre>`);
    done = match.index + match[0].length;
  }
  return out + inline(markdown.slice(done));
}

/**
 * What the user sees of {@link toTelegramHtml}'s output: tags removed, the four entities decoded — for checks and
 * counting (Telegram counts what is seen).
 *
 * @example
 * ```ts
 * visibleText("<b>a</b> &amp; b"); // "a & b"
 * ```
 */
export function visibleText(html: string): string {
  return html.replace(/<[^>]*>/g, "").replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"')
    .replaceAll("&amp;", "&");
}

import assert from "node:assert/strict";
import { gunzipSync, gzipSync } from "node:zlib";
import { getLogger } from "@logtape/logtape";
import { HttpDevice } from "../http_device.ts";
import { createApi } from "../app.ts";
import { CONSOLE_CSP, consoleRoutes } from "./console_routes.ts";
import { CONSOLE_FILES } from "./console_assets.ts";
import { readSse } from "./assets/sse.js";

const ASSETS = new URL("./assets/", import.meta.url);

/** The daemon's app with the console mounted, and an owner token (the console's files need none). */
function app() {
  return createApi({
    device: new HttpDevice(),
    tokens: { ownerToken: "console-test-token-0123456789", people: {} },
    guard: { port: () => 80, publicHosts: [], allowedOrigins: [] },
    maxBodyBytes: 4096,
    logger: getLogger(["test"]),
    status: () => ({ ok: true }),
    channels: () => ({ channels: [] }),
    routes: [consoleRoutes()],
  });
}

/** Every asset file: its path under assets/ and its bytes. */
async function assetFiles(dir = ASSETS, prefix = ""): Promise<Array<{ name: string; bytes: Uint8Array }>> {
  const files: Array<{ name: string; bytes: Uint8Array }> = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory) files.push(...await assetFiles(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`));
    else files.push({ name: `${prefix}${entry.name}`, bytes: await Deno.readFile(new URL(entry.name, dir)) });
  }
  return files;
}

Deno.test("GET / is the console's page, with its Content-Security-Policy and no auth", async () => {
  const response = await app().request("/");
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(response.headers.get("content-security-policy"), CONSOLE_CSP);
  for (
    const part of [
      "default-src 'self'",
      "img-src 'self' blob: data:",
      "media-src 'self' blob:",
      "style-src 'self'",
      "script-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
    ]
  ) assert.ok(CONSOLE_CSP.includes(part), part);
  assert.equal(response.headers.get("cache-control"), "no-cache");
  assert.equal(response.headers.get("x-content-type-options"), "nosniff");
  assert.equal(response.headers.get("referrer-policy"), "no-referrer");
  const html = await response.text();
  assert.match(html, /<script type="module" src="\/console\/console\.js"><\/script>/);
  assert.equal(html, await Deno.readTextFile(new URL("index.html", ASSETS)));
});

Deno.test("/console/<file> serves the assets with their types; a folder's file too", async () => {
  const api = app();
  const js = await api.request("/console/console.js");
  assert.equal(js.status, 200);
  assert.equal(js.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.equal(js.headers.get("x-content-type-options"), "nosniff");
  assert.equal(js.headers.get("content-security-policy"), null);
  assert.equal(await js.text(), await Deno.readTextFile(new URL("console.js", ASSETS)));
  const css = await api.request("/console/console.css");
  assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
  await css.body?.cancel();
  const page = await api.request("/console/pages/chat.js");
  assert.equal(page.status, 200);
  assert.equal(page.headers.get("content-type"), "text/javascript; charset=utf-8");
  await page.body?.cancel();
});

Deno.test("the gzip variant decodes to the same bytes; without gzip in Accept-Encoding the plain one", async () => {
  const api = app();
  const plain = new Uint8Array(await (await api.request("/console/console.js")).arrayBuffer());
  const zipped = await api.request("/console/console.js", { headers: { "accept-encoding": "br, gzip;q=0.8" } });
  assert.equal(zipped.headers.get("content-encoding"), "gzip");
  assert.equal(zipped.headers.get("vary"), "Accept-Encoding");
  const body = new Uint8Array(await zipped.arrayBuffer());
  assert.ok(body.length < plain.length);
  assert.deepEqual(new Uint8Array(gunzipSync(body)), plain);
  const refused = await api.request("/console/console.js", { headers: { "accept-encoding": "gzip;q=0, br" } });
  assert.equal(refused.headers.get("content-encoding"), null);
  assert.deepEqual(new Uint8Array(await refused.arrayBuffer()), plain);
  const html = await api.request("/", { headers: { "accept-encoding": "gzip" } });
  assert.equal(html.headers.get("content-encoding"), "gzip");
  assert.equal(html.headers.get("content-security-policy"), CONSOLE_CSP);
  await html.body?.cancel();
});

Deno.test("an ETag answers 304 to If-None-Match, for either encoding", async () => {
  const api = app();
  const first = await api.request("/console/console.css");
  const etag = first.headers.get("etag");
  await first.body?.cancel();
  assert.match(etag ?? "", /^"[0-9a-f]{24}"$/);
  const again = await api.request("/console/console.css", { headers: { "if-none-match": etag! } });
  assert.equal(again.status, 304);
  assert.equal(again.headers.get("etag"), etag);
  assert.equal(await again.text(), "");
  const zipped = await api.request("/console/console.css", { headers: { "accept-encoding": "gzip" } });
  const zippedTag = zipped.headers.get("etag");
  await zipped.body?.cancel();
  assert.notEqual(zippedTag, etag);
  const weak = await api.request("/console/console.css", {
    headers: { "accept-encoding": "gzip", "if-none-match": `"other", W/${zippedTag}` },
  });
  assert.equal(weak.status, 304);
  const other = await api.request("/console/console.css", { headers: { "if-none-match": '"something-else"' } });
  assert.equal(other.status, 200);
  await other.body?.cancel();
});

Deno.test("no file outside the assets: traversal, backslashes and unknown names are 404s naming the file", async () => {
  const api = app();
  const cases: Array<[string, string]> = [
    ["/console/../deno.json", "deno.json"], // the URL resolves it to /deno.json: no endpoint
    ["/console/%2e%2e/x", '"/x"'],
    ["/console/..%2fdeno.json", '"../deno.json"'],
    ["/console/pages/..%2F..%2Fconsole_routes.ts", "console_routes.ts"],
    ["/console/%2Fetc%2Fpasswd", '"/etc/passwd"'],
    ["/console/a%5Cb.js", "a\\\\b.js"],
    ["/console/nope.js", '"nope.js"'],
    ["/console/console_routes.ts", '"console_routes.ts"'],
    ["/console/.hidden", '".hidden"'],
  ];
  for (const [path, named] of cases) {
    const response = await api.request(path);
    assert.equal(response.status, 404, path);
    const body = await response.json();
    assert.equal(body.error.code, "not_found", path);
    assert.ok(body.error.message.includes(named), `${path}: ${body.error.message}`);
  }
  const nope = await (await api.request("/console/nope.js")).json();
  assert.equal(nope.error.message, 'No console file "nope.js"');
});

Deno.test("every file in assets/ is embedded, byte for byte (a new file must be added to console_assets.ts)", async () => {
  const files = await assetFiles();
  assert.deepEqual(Object.keys(CONSOLE_FILES).sort(), files.map((file) => file.name).sort());
  for (const file of files) assert.equal(CONSOLE_FILES[file.name], new TextDecoder().decode(file.bytes), file.name);
});

Deno.test("all assets together are at most 150 KB gzipped", async () => {
  let raw = 0;
  let gzipped = 0;
  for (const file of await assetFiles()) {
    raw += file.bytes.length;
    gzipped += gzipSync(file.bytes, { level: 9 }).length;
  }
  console.log(`console assets: ${raw} bytes, ${gzipped} bytes gzipped`);
  assert.ok(gzipped <= 150 * 1024, `${gzipped} bytes gzipped`);
  assert.ok(raw > 0);
});

Deno.test("the assets hold every selector the browser tests use, and no HTML from strings, eval or inline code", async () => {
  const files = await assetFiles();
  const text = files.map((file) => new TextDecoder().decode(file.bytes)).join("\n");
  const names = [
    "login-form",
    "token",
    "login-error",
    "data-page",
    "lang-toggle",
    "logout",
    "chat-log",
    "msg",
    "data-role",
    "msg-channel",
    "chat-input",
    "chat-send",
    "memory-search",
    "entity",
    "data-name",
    "facts",
    "fact",
    "data-id",
    "fact-sources",
    "fact-correct",
    "fact-forget",
    "memory-graph",
    "document",
    "document-forget",
    "knowledge-search",
    "topic",
    "data-topic",
    "learned-badge",
    "knowledge-new",
    "knowledge-topic-name",
    "knowledge-editor",
    "knowledge-save",
    "knowledge-view",
    "schedule",
    "schedule-cancel",
    "plugins-reload",
    "plugins-result",
    "plugin",
    "plugin-part",
    "problems",
    "problem",
    "qq-connection",
    "qq-refused",
    "usage-chart",
    "schedule-timeline",
    "tl-day",
    "status-raw",
    "turns-table",
    "mcp-server",
    "device",
    "usage",
    "logs",
    "turn",
    "turn-detail",
    "system-section",
    "section-title",
    "section-tokens",
    "miss-reason",
    "data-ready",
  ];
  for (const name of names) assert.match(text, new RegExp(`["'\` .#]${name}["'\` ]`), name);
  assert.match(text, /id: `page-\$\{name\}`/, "#page-<name>");
  for (const page of ["chat", "memory", "knowledge", "schedules", "system", "plugins", "status", "turns"]) {
    assert.match(text, new RegExp(`"${page}"`), page);
    assert.match(text, new RegExp(`nav_${page}:`), `nav_${page}`);
  }
  for (const role of ["user", "assistant", "tool", "event"]) assert.match(text, new RegExp(`role: "${role}"`), role);
  for (const file of files) {
    const source = new TextDecoder().decode(file.bytes);
    // innerHTML/outerHTML only ever with a plain literal; no eval, Function, document.write or insertAdjacentHTML.
    for (const match of source.matchAll(/\.(?:inner|outer)HTML\s*=\s*([^;\n]*)/g)) {
      assert.match(match[1]!, /^(["'])[^"'`$]*\1\s*$/, `${file.name}: ${match[0]}`);
    }
    assert.doesNotMatch(source, /\beval\s*\(|new\s+Function\s*\(|document\.write|insertAdjacentHTML/, file.name);
    if (file.name.endsWith(".html")) {
      assert.doesNotMatch(source, /\son[a-z]+\s*=/i, `${file.name}: inline event handler`);
      assert.doesNotMatch(source, /\sstyle\s*=/i, `${file.name}: inline style`);
      assert.doesNotMatch(source, /<style/i, `${file.name}: inline style sheet`);
      for (const script of source.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
        assert.match(script[1]!, /\ssrc="\/console\/[\w./-]+"/, `${file.name}: script without src`);
        assert.equal(script[2]!.trim(), "", `${file.name}: inline script`);
      }
      assert.doesNotMatch(source, /https?:\/\//, `${file.name}: nothing from elsewhere`);
    }
    if (file.name.endsWith(".js")) {
      assert.doesNotMatch(source, /\bimport\s*\(?\s*["']https?:/, `${file.name}: imports from elsewhere`);
    }
  }
});

Deno.test("every file the page and the modules name is an asset; the first load's modules preloaded, pages loaded when opened", async () => {
  const files = await assetFiles();
  const names = new Set(files.map((file) => file.name));
  const html = await Deno.readTextFile(new URL("index.html", ASSETS));
  const linked = [...html.matchAll(/(?:src|href)="\/console\/([^"]+)"/g)].map((match) => match[1]!);
  for (const name of linked) assert.ok(names.has(name), `index.html names ${name}`);
  const modules = files.filter((file) => file.name.endsWith(".js")).map((file) => file.name);
  const lazy: string[] = [];
  const imports = new Map<string, string[]>();
  for (const file of files.filter((each) => each.name.endsWith(".js"))) {
    const source = new TextDecoder().decode(file.bytes);
    imports.set(file.name, []);
    for (const match of source.matchAll(/^import\s[^;]*?from\s+"([^"]+)"/gm)) {
      const target = new URL(match[1]!, `https://x/${file.name}`).pathname.slice(1);
      assert.ok(names.has(target), `${file.name} imports ${match[1]}`);
      imports.get(file.name)!.push(target);
    }
    for (const match of source.matchAll(/import\("([^"]+)"\)/g)) {
      const target = new URL(match[1]!, `https://x/${file.name}`).pathname.slice(1);
      assert.ok(names.has(target), `${file.name} loads ${match[1]}`);
      lazy.push(target);
    }
  }
  assert.deepEqual(lazy.sort(), modules.filter((name) => name.startsWith("pages/") && name !== "pages/chat.js").sort());
  // The first load: console.js and what it imports, and so on; a module only pages opened later import comes with them.
  const firstLoad = new Set<string>();
  const visit = (name: string) => {
    if (firstLoad.has(name)) return;
    firstLoad.add(name);
    for (const target of imports.get(name) ?? []) visit(target);
  };
  visit("console.js");
  assert.deepEqual(
    [...firstLoad].filter((name) => !linked.includes(name)),
    [],
    "modules of the first load that index.html does not preload",
  );
  assert.deepEqual(
    modules.filter((name) => !firstLoad.has(name) && !lazy.includes(name) && linked.includes(name)),
    [],
    "a module only later pages import is not preloaded",
  );
  assert.deepEqual(lazy.filter((name) => linked.includes(name)), [], "a page loaded when opened is not preloaded");
});

Deno.test("both languages have the same words", async () => {
  const { DICTIONARY } = await import("./assets/i18n.js");
  const words = DICTIONARY as Record<string, Record<string, string>>;
  assert.deepEqual(Object.keys(words.zh!).sort(), Object.keys(words.en!).sort());
});

Deno.test("the console's SSE reader: events split across chunks, CRLF/CR/LF, comments, multi-line data", async () => {
  const chunks = [
    ": comment\r\nevent: start\r",
    '\ndata: {"id":"1"}\r\n\r\nevent: delta\ndata: {"text":',
    '"Hel"}\n\nevent:delta\ndata:{"text":"lo"}\r\rdata: a\ndata: b\n\n',
    "event: done\ndata: {}\n\nevent: unfinished\ndata: x",
  ];
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });
  const events: Array<{ event: string; data: string }> = [];
  await readSse(new Response(stream), (event: { event: string; data: string }) => events.push(event));
  assert.deepEqual(events, [
    { event: "start", data: '{"id":"1"}' },
    { event: "delta", data: '{"text":"Hel"}' },
    { event: "delta", data: '{"text":"lo"}' },
    { event: "message", data: "a\nb" },
    { event: "done", data: "{}" },
  ]);
});

import assert from "node:assert/strict";
import { FakeClock } from "../../tests/support/fake_clock.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { systemClock } from "../clock.ts";
import { checkMediaUrl } from "./address_policy.ts";
import { type BoundedFetchOptions, fetchBounded, MediaFetchError } from "./bounded_fetch.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]);
const MiB = 1024 * 1024;

/** A local server for one test; `close` shuts it down (after releasing anything the test holds open). */
function serve(handler: (request: Request, base: string) => Response | Promise<Response>) {
  let base = "";
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => handler(request, base));
  base = `http://127.0.0.1:${server.addr.port}`;
  return { base, close: () => server.shutdown() };
}

/** An endless body of `chunkSize` chunks that counts what it enqueued and notes its cancellation. */
function endlessBody(chunkSize: number) {
  const seen = { enqueued: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(new Uint8Array(chunkSize).fill(0x61));
      seen.enqueued += chunkSize;
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

/** Options for a test: 1 MiB limit, a fake clock, a policy that lets 127.0.0.1 through (it sent the attachment). */
function optionsWith(overrides: Partial<BoundedFetchOptions> = {}): BoundedFetchOptions {
  return {
    maxBytes: MiB,
    limitName: "media.max_image_bytes",
    timeoutMs: 5_000,
    timeoutName: "media.fetch_timeout_ms",
    clock: new FakeClock(),
    check: (url) =>
      checkMediaUrl(url.href, {
        allowHosts: [],
        trustedHosts: ["127.0.0.1"],
        ownListen: { host: "127.0.0.1", port: 8123 },
        resolve: () => Promise.reject(new Error("no resolver in this test")),
      }),
    ...overrides,
  };
}

/** The MediaFetchError `work` rejects with, asserted to be one of `code`. */
async function failure(work: Promise<unknown>, code: MediaFetchError["code"]): Promise<MediaFetchError> {
  try {
    await work;
  } catch (error) {
    assert.ok(error instanceof MediaFetchError, `a MediaFetchError, got ${error}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail("the fetch succeeded");
}

Deno.test("bounded fetch: a normal image comes back whole, with its declared type and URL; the deadline is disarmed", async () => {
  const server = serve(() => new Response(PNG, { headers: { "content-type": "image/png" } }));
  try {
    const checked: string[] = [];
    const clock = new FakeClock();
    const options = optionsWith({ clock });
    const inner = options.check;
    const url = new URL(`${server.base}/image/abc.png`);
    const fetched = await fetchBounded(url, {
      ...options,
      check: (next) => (checked.push(next.href), inner(next)),
    });
    assert.deepEqual(fetched.bytes, PNG);
    assert.equal(fetched.contentType, "image/png");
    assert.equal(fetched.url.href, url.href);
    assert.deepEqual(checked, [url.href]);
    assert.equal(clock.pendingTimers, 0, "the deadline timer was cancelled");
  } finally {
    await server.close();
  }
});

Deno.test("bounded fetch: a declared 200 MB is refused before the body is read, and the body is cancelled", async () => {
  const body = endlessBody(64 * 1024);
  const server = serve(() => new Response(body.stream, { headers: { "content-length": String(200 * MiB) } }));
  try {
    const url = new URL(`${server.base}/big.png`);
    const error = await failure(fetchBounded(url, optionsWith()), "too_big");
    assert.equal(
      error.message,
      `The file at ${url.href} is larger than media.max_image_bytes (1048576 bytes): the server declared 209715200 bytes`,
    );
    await waitFor(() => body.seen.cancelled, "the server to see its body cancelled");
    assert.ok(body.seen.enqueued < 32 * MiB, `the server got rid of only ${body.seen.enqueued} bytes of 200 MB`);
  } finally {
    await server.close();
  }
});

Deno.test("bounded fetch: an endless body without content-length is cut just past the limit", async () => {
  const body = endlessBody(16 * 1024);
  const server = serve(() => new Response(body.stream, { headers: { "content-type": "image/png" } }));
  try {
    const url = new URL(`${server.base}/endless.png`);
    const error = await failure(fetchBounded(url, optionsWith()), "too_big");
    const match =
      /^The file at (\S+) sent more than media\.max_image_bytes \(1048576 bytes\); homed stopped reading at (\d+)$/
        .exec(error.message);
    assert.ok(match, error.message);
    assert.equal(match[1], url.href);
    const read = Number(match[2]);
    assert.ok(read > MiB && read <= MiB + 64 * 1024, `homed read ${read} bytes`);
    await waitFor(() => body.seen.cancelled, "the server to see its body cancelled");
    const enqueued = body.seen.enqueued;
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(body.seen.enqueued, enqueued, "nothing more was sent after the cancel");
    assert.ok(enqueued < 32 * MiB, `the server sent ${enqueued} bytes in all`);
  } finally {
    await server.close();
  }
});

Deno.test("bounded fetch: a body that keeps to its declared length but sends more is cut all the same", async () => {
  const options = optionsWith({ maxBytes: 100 });
  const fake: typeof fetch = () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(60));
        controller.enqueue(new Uint8Array(60));
        controller.close();
      },
    });
    return Promise.resolve(new Response(stream, { headers: { "content-length": "50" } }));
  };
  const error = await failure(fetchBounded(new URL("http://127.0.0.1:9/a"), { ...options, fetch: fake }), "too_big");
  assert.match(error.message, /sent more than media\.max_image_bytes \(100 bytes\); homed stopped reading at 120$/);
});

Deno.test("bounded fetch: a server that never sends its headers times out on the clock", async () => {
  let arrived = false;
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const server = serve(async () => {
    arrived = true;
    await held;
    return new Response("too late");
  });
  try {
    const clock = new FakeClock();
    const url = new URL(`${server.base}/hung.png`);
    const pending = fetchBounded(url, optionsWith({ clock }));
    await waitFor(() => arrived, "the request to reach the hung server");
    clock.advance(4_999);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(arrived && clock.pendingTimers, 1, "still waiting a millisecond before the deadline");
    clock.advance(1);
    const error = await failure(pending, "timeout");
    assert.equal(
      error.message,
      `The file at ${url.href} did not arrive within 5000 ms (media.fetch_timeout_ms); homed gave up`,
    );
  } finally {
    release();
    await server.close();
  }
});

Deno.test("bounded fetch: a real short deadline cuts a body that stalls half way", async () => {
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const server = serve(() => {
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        controller.enqueue(PNG);
        await held;
        controller.close();
      },
    });
    return new Response(stream);
  });
  try {
    const url = new URL(`${server.base}/stall.png`);
    const error = await failure(fetchBounded(url, optionsWith({ clock: systemClock, timeoutMs: 100 })), "timeout");
    assert.match(error.message, /did not arrive within 100 ms \(media\.fetch_timeout_ms\)/);
  } finally {
    release();
    await server.close();
  }
});

Deno.test("bounded fetch: redirects are followed and each is checked; one to a refused address is refused", async () => {
  const server = serve((request, base) => {
    const path = new URL(request.url).pathname;
    if (path === "/hop") return new Response(null, { status: 302, headers: { location: "/image.png" } });
    if (path === "/image.png") return new Response(PNG);
    if (path === "/metadata") {
      return new Response(null, { status: 307, headers: { location: "http://169.254.169.254/latest/meta-data/" } });
    }
    if (path === "/loop") return new Response(null, { status: 301, headers: { location: `${base}/loop` } });
    return new Response(null, { status: 302 });
  });
  try {
    const checked: string[] = [];
    const options = optionsWith();
    const inner = options.check;
    const counting = { ...options, check: (next: URL) => (checked.push(next.pathname), inner(next)) };
    const fetched = await fetchBounded(new URL(`${server.base}/hop`), counting);
    assert.equal(fetched.url.href, `${server.base}/image.png`);
    assert.deepEqual(fetched.bytes, PNG);
    assert.deepEqual(checked, ["/hop", "/image.png"]);

    const refused = await failure(fetchBounded(new URL(`${server.base}/metadata`), options), "refused");
    assert.equal(
      refused.message,
      "Homed will not fetch http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a link-local address; " +
        "list the host in media.allow_hosts to allow it",
    );

    const looping = await failure(fetchBounded(new URL(`${server.base}/loop`), options), "http");
    assert.equal(
      looping.message,
      `The file at ${server.base}/loop redirected more than 3 times; homed stopped following`,
    );
    const nowhere = await failure(fetchBounded(new URL(`${server.base}/nowhere`), options), "http");
    assert.equal(nowhere.message, `The file at ${server.base}/nowhere redirected (HTTP 302) nowhere`);
  } finally {
    await server.close();
  }
});

Deno.test("bounded fetch: a refused first URL is never fetched", async () => {
  let fetched = 0;
  const fake: typeof fetch = () => (fetched++, Promise.resolve(new Response(PNG)));
  const options = optionsWith({ fetch: fake });
  const error = await failure(fetchBounded(new URL("http://10.0.0.1/x.png"), options), "refused");
  assert.match(error.message, /^Homed will not fetch http:\/\/10\.0\.0\.1\/x\.png: 10\.0\.0\.1 is a private address/);
  assert.equal(fetched, 0);
});

Deno.test("bounded fetch: a 404 is an http error naming the status", async () => {
  const server = serve(() => new Response("no such file", { status: 404 }));
  try {
    const url = new URL(`${server.base}/gone.png`);
    const error = await failure(fetchBounded(url, optionsWith()), "http");
    assert.equal(error.message, `The file at ${url.href} could not be fetched: HTTP 404 Not Found`);
  } finally {
    await server.close();
  }
});

Deno.test("bounded fetch: a closed port is a network error naming the URL", async () => {
  const server = serve(() => new Response(PNG));
  const url = new URL(`${server.base}/a.png`);
  await server.close();
  const error = await failure(fetchBounded(url, optionsWith()), "network");
  assert.ok(error.message.startsWith(`The file at ${url.href} could not be fetched: `), error.message);
});

Deno.test("bounded fetch: the caller's signal stops it with the signal's reason", async () => {
  let arrived = false;
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const server = serve(async () => {
    arrived = true;
    await held;
    return new Response("too late");
  });
  try {
    const caller = new AbortController();
    const pending = fetchBounded(new URL(`${server.base}/a.png`), optionsWith({ signal: caller.signal }));
    await waitFor(() => arrived, "the request to reach the server");
    const reason = new Error("the turn was cancelled");
    caller.abort(reason);
    await assert.rejects(pending, (error: unknown) => error === reason);
    const already = AbortSignal.abort(new Error("before it started"));
    await assert.rejects(fetchBounded(new URL(`${server.base}/a.png`), optionsWith({ signal: already })), {
      message: "before it started",
    });
  } finally {
    release();
    await server.close();
  }
});

Deno.test("bounded fetch: a size limit that is no whole number of bytes is a RangeError naming the setting", async () => {
  await assert.rejects(fetchBounded(new URL("http://127.0.0.1:9/"), optionsWith({ maxBytes: -1 })), {
    name: "RangeError",
    message: "The size limit media.max_image_bytes must be a whole number of bytes; got -1",
  });
});

Deno.test("bounded fetch: a host homed has no net right for is refused, naming the host, the setting and the restart", async () => {
  const deniedFor = (host: string) => () =>
    Promise.reject(new Deno.errors.NotCapable(`Requires net access to "${host}", run again with the --allow-net flag`));
  const refused = async (url: string, host: string) =>
    (await failure(
      fetchBounded(new URL(url), optionsWith({ check: (next) => Promise.resolve(next), fetch: deniedFor(host) })),
      "refused",
    )).message;
  // A OneBot implementation on this machine serving its media (reverse WebSocket: its address is not in the flags).
  assert.equal(
    await refused("http://127.0.0.1:3000/image/abc.png", "127.0.0.1:3000"),
    "The file at http://127.0.0.1:3000/image/abc.png was not fetched: homed may not connect to 127.0.0.1:3000: add " +
      '"127.0.0.1:3000" to media.allow_hosts and restart homed with the flags `homed flags` prints (homed service ' +
      "install under systemd)",
  );
  assert.match(
    await refused("http://localhost:6099/a.png", "localhost:6099"),
    /add "localhost:6099" to media\.allow_hosts and/,
  );
  assert.match(
    await refused("http://192.168.1.5/a.png", "192.168.1.5:80"),
    /add "192\.168\.1\.5:80" to media\.allow_hosts and/,
  );
  // A public address is a media host of the internet; a name may be either.
  assert.match(
    await refused("http://93.184.215.14/a.png", "93.184.215.14:80"),
    /add "93\.184\.215\.14:80" to media\.fetch_hosts and/,
  );
  assert.match(
    await refused("https://napcat.lan:6099/a.png", "napcat.lan:6099"),
    /add "napcat\.lan:6099" to media\.allow_hosts \(this machine, the LAN\) or media\.fetch_hosts \(the internet\) and restart/,
  );
  for (const url of ["http://127.0.0.1:3000/image/abc.png", "https://napcat.lan:6099/a.png"]) {
    const message = await refused(url, new URL(url).host);
    assert.doesNotMatch(message, /--allow-net/, "never Deno's advice, which does not apply to homed");
    assert.ok(message.length <= 300, `fits the turn's note whole: ${message.length} characters`);
  }
});

Deno.test("bounded fetch under homed's real rights: Deno's refusal of 127.0.0.1:3000 becomes what to list and restart", async () => {
  // A process granted only another port, as the daemon is when a OneBot implementation connected to it (reverse
  // WebSocket) serves its media from this machine: its address is in no flags.
  const dir = await Deno.makeTempDir({ prefix: "homed-media-rights-" });
  try {
    const script = `${dir}/fetch.ts`;
    await Deno.writeTextFile(
      script,
      [
        `import { systemClock } from ${JSON.stringify(new URL("../clock.ts", import.meta.url).href)};`,
        `import { fetchBounded } from ${JSON.stringify(new URL("./bounded_fetch.ts", import.meta.url).href)};`,
        "await fetchBounded(new URL('http://127.0.0.1:3000/image/abc.png'), {",
        "  maxBytes: 1024, limitName: 'media.max_image_bytes', timeoutMs: 5000, clock: systemClock,",
        "  check: (url) => Promise.resolve(url),",
        "}).catch((error) => console.log(`${error.name} ${error.code}: ${error.message}`));",
      ].join("\n"),
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", `--allow-read=${dir},.`, "--allow-net=127.0.0.1:1", script],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const said = new TextDecoder().decode(output.stdout).trim();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    assert.equal(
      said,
      "MediaFetchError refused: The file at http://127.0.0.1:3000/image/abc.png was not fetched: homed may not " +
        'connect to 127.0.0.1:3000: add "127.0.0.1:3000" to media.allow_hosts and restart homed with the flags ' +
        "`homed flags` prints (homed service install under systemd)",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

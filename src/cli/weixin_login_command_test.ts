import assert from "node:assert/strict";
import { join } from "node:path";
import { parseConfig } from "../config/load.ts";
import { requiredPermissions, toFlags } from "../rights/permissions.ts";
import { FakeWeixin } from "../../tests/support/fake_weixin.ts";
import { childEnv, deno, freePort, REPO } from "../../tests/support/homed_process.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { EXIT_INTERRUPTED, runWeixinLogin } from "./weixin_login_command.ts";

const SCANNER = "wxid_owner@im.wechat";

/** A data dir and a config naming it, with `weixin:` as given (none: no section) and nothing at the listen address. */
async function place(
  weixin: Record<string, string> | undefined,
  daemon: { port?: number; apiToken?: string } = {},
) {
  const dir = await Deno.makeTempDir({ prefix: "homed-weixin-cli-" });
  const lines = ["daemon:", `  data_dir: ${dir}/data`, `  listen_addr: "127.0.0.1:${daemon.port ?? freePort()}"`];
  if (daemon.apiToken) lines.push(`  api_token: "${daemon.apiToken}"`);
  if (weixin) lines.push("weixin:", ...Object.entries(weixin).map(([key, value]) => `  ${key}: "${value}"`));
  const text = `${lines.join("\n")}\n`;
  await Deno.writeTextFile(join(dir, "homed.yaml"), text);
  const loaded = parseConfig({
    text,
    location: { path: join(dir, "homed.yaml"), origin: "--config" },
    readEnv: () => undefined,
    cwd: "/",
  });
  return {
    dir,
    loaded,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** Runs the login with its output collected. */
function login(loaded: Parameters<typeof runWeixinLogin>[0]["loaded"], signal?: AbortSignal) {
  const output = { out: "", err: "" };
  const done = runWeixinLogin({
    loaded,
    out: (text) => output.out += text,
    err: (text) => output.err += `${text}\n`,
    pollEveryMs: 50,
    ...(signal ? { signal } : {}),
  });
  return { output, done };
}

Deno.test("homed weixin login: QR code and link, wait → scanned → confirmed, the token kept 0600, the owner suggested", async () => {
  await using fake = FakeWeixin.start({ loggedIn: false, qrPollMs: 200 });
  await using at = await place({ base_url: fake.baseUrl });
  const { output, done } = login(at.loaded);
  await waitFor(() => output.out.includes("Waiting for the scan"), "the first status");
  fake.login.scan();
  await waitFor(() => output.out.includes("Scanned"), "scanned");
  const token = fake.login.confirm({ userId: SCANNER });
  assert.equal(await done, 0, output.err);
  const { out } = output;
  assert.match(out, /^Logging in to WeChat at http:\/\/127\.0\.0\.1:\d+\.\n/);
  assert.match(out, /Scan this QR code with WeChat/);
  assert.match(out, /\n█{10,}\n/, "the QR code, drawn in blocks");
  assert.match(out, /Or open this link in WeChat: https:\/\/\S+\n/);
  assert.match(
    out,
    /Waiting for the scan…\nScanned: confirm the login on the phone\.\nConfirmed: logged in as the WeChat bot /,
  );
  assert.match(out, new RegExp(`kept in ${at.dir}/data/weixin/account\\.json`));
  assert.match(out, /The person who scanned is wxid_owner@im\.wechat\. weixin\.owner is empty/);
  assert.ok(out.includes('\n  weixin:\n    owner: "wxid_owner@im.wechat"\n'), "the owner, as YAML to paste");
  assert.match(out, /homed is not running here: it uses the new token when it starts\.\n$/);
  assert.ok(!out.includes(token) && !output.err.includes(token), "the token is never printed");
  const stored = JSON.parse(await Deno.readTextFile(`${at.dir}/data/weixin/account.json`));
  assert.equal(stored.botToken, token);
  assert.equal(stored.userId, SCANNER);
  assert.equal(Deno.statSync(`${at.dir}/data/weixin/account.json`).mode! & 0o777, 0o600);
  assert.deepEqual(fake.violations, []);
});

Deno.test("homed weixin login: a code expiring a 4th time ends it with exit 1 and what to do; nothing is kept", async () => {
  await using fake = FakeWeixin.start({ loggedIn: false, qrPollMs: 200 });
  await using at = await place({ base_url: fake.baseUrl });
  const { output, done } = login(at.loaded);
  for (let code = 1; code <= 4; code++) {
    await waitFor(() => fake.login.codes.length === code && fake.login.status === "wait", `code ${code} polled`);
    fake.login.expire();
  }
  assert.equal(await done, 1);
  assert.match(output.out, /The QR code expired without a scan \(1 of 3 renewals\)/);
  assert.match(output.out, /A new QR code \(4 of 4\):/);
  assert.match(output.out, /The QR code expired again\.\n$/);
  assert.match(output.err, /^weixin login: the QR code expired 4 times without a scan: run `homed weixin login` again/);
  await assert.rejects(Deno.stat(`${at.dir}/data/weixin/account.json`), Deno.errors.NotFound);
});

Deno.test("homed weixin login without a weixin: section says to add one, naming the config, and asks nothing", async () => {
  await using at = await place(undefined);
  const { output, done } = login(at.loaded);
  assert.equal(await done, 2);
  assert.equal(output.out, "");
  assert.match(
    output.err,
    new RegExp(
      `^weixin login: the config ${at.dir}/homed\\.yaml has no weixin: section, so WeChat is off: add the ` +
        "line `weixin: \\{\\}`",
    ),
  );
});

Deno.test("homed weixin login tells a running homed to re-check, with daemon.api_token; the owner already set", async () => {
  await using fake = FakeWeixin.start({ loggedIn: false, qrPollMs: 200 });
  const asked: Array<string | null> = [];
  const homed = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/healthz") return Response.json({ ok: true });
    if (path === "/api/weixin/recheck" && request.method === "POST") {
      // As homed's request guard: an /api/* POST without a JSON body is refused 415.
      if (request.headers.get("content-type") !== "application/json") return new Response(null, { status: 415 });
      asked.push(request.headers.get("authorization"));
      return Response.json({ rechecking: true });
    }
    return Response.json({ error: { code: "not_found" } }, { status: 404 });
  });
  try {
    await using at = await place(
      { base_url: fake.baseUrl, owner: SCANNER },
      { port: homed.addr.port, apiToken: "the-api-token-0123456789" },
    );
    const { output, done } = login(at.loaded);
    await waitFor(() => output.out.includes("Waiting for the scan"), "the first status");
    fake.login.confirm({ userId: SCANNER });
    assert.equal(await done, 0, output.err);
    assert.match(output.out, /The person who scanned is wxid_owner@im\.wechat, the owner \(weixin\.owner\)\.\n/);
    assert.doesNotMatch(output.out, /weixin\.owner is empty/);
    assert.match(output.out, /The running homed \(http:\/\/127\.0\.0\.1:\d+\) picks up the new token now\.\n$/);
    assert.deepEqual(asked, ["Bearer the-api-token-0123456789"]);
  } finally {
    await homed.shutdown();
  }
});

Deno.test("homed weixin login stopped (Ctrl-C) ends at once, says nothing was kept, exit 130", async () => {
  await using fake = FakeWeixin.start({ loggedIn: false, qrPollMs: 200 });
  await using at = await place({ base_url: fake.baseUrl });
  const stop = new AbortController();
  const { output, done } = login(at.loaded, stop.signal);
  await waitFor(() => output.out.includes("Waiting for the scan"), "the first status");
  stop.abort(new Error("stopped"));
  assert.equal(await done, EXIT_INTERRUPTED);
  assert.match(output.err, /^weixin login: stopped; nothing was kept/);
  await assert.rejects(Deno.stat(`${at.dir}/data/weixin/account.json`), Deno.errors.NotFound);
});

Deno.test("homed weixin login as a process, with the flags of `deno task weixin`: logs in; without weixin: exit 2", async () => {
  await using fake = FakeWeixin.start({ loggedIn: false, qrPollMs: 200 });
  await using at = await place({ base_url: fake.baseUrl });
  const env = { HOMED_CONFIG: join(at.dir, "homed.yaml") };
  const flags = await deno(["run", "--no-prompt", "--allow-read", "--allow-env", "src/flags.ts", "weixin"], { env });
  assert.equal(flags.code, 0, flags.stderr);
  const args = flags.stdout.trim().split(/\s+/);
  assert.ok(
    args.includes(`--allow-net=${new URL(fake.baseUrl).host},127.0.0.1:${at.loaded.config.daemon.listen_addr.port}`),
    args.join(" "),
  );
  assert.ok(args.includes(`--allow-write=${at.dir}/data/weixin`), args.join(" "));
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...args, "src/main.ts", "weixin", "login"],
    cwd: REPO,
    env: childEnv(env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const reading = child.stdout.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (out += chunk) }),
  );
  const stderr = new Response(child.stderr).text();
  await waitFor(() => out.includes("Waiting for the scan"), "the child's first status", { limitMs: 30_000 });
  fake.login.scan();
  fake.login.confirm({ userId: SCANNER });
  const status = await child.status;
  await reading;
  assert.equal(status.code, 0, await stderr);
  assert.match(out, /Confirmed: logged in as the WeChat bot /);
  assert.match(out, /owner: "wxid_owner@im\.wechat"/);
  assert.equal(Deno.statSync(`${at.dir}/data/weixin/account.json`).mode! & 0o777, 0o600);

  await using bare = await place(undefined);
  const bareEnv = { HOMED_CONFIG: join(bare.dir, "homed.yaml") };
  const bareFlags = await deno(["run", "--no-prompt", "--allow-read", "--allow-env", "src/flags.ts", "weixin"], {
    env: bareEnv,
  });
  const refused = await deno(["run", ...bareFlags.stdout.trim().split(/\s+/), "src/main.ts", "weixin", "login"], {
    env: bareEnv,
  });
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /^homed: weixin login: the config .*homed\.yaml has no weixin: section/);
  const unknown = await deno(["run", ...args, "src/main.ts", "weixin", "logout"], { env });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /homed weixin takes one action, login \(got "logout"\)/);
});

Deno.test("homed weixin login's rights: the config, data/weixin, the iLink host (and its domain), the listen address", () => {
  const parse = (text: string) =>
    parseConfig({
      text,
      location: { path: "/etc/homed/homed.yaml", origin: "--config" },
      readEnv: () => undefined,
      cwd: "/",
    });
  const tencent = requiredPermissions(parse("daemon:\n  data_dir: /var/lib/homed\nweixin: {}\n"), "weixin");
  assert.deepEqual(tencent.read, ["/etc/homed/homed.yaml", "/var/lib/homed/weixin"]);
  assert.deepEqual(tencent.write, ["/var/lib/homed/weixin"]);
  assert.deepEqual(tencent.net, ["ilinkai.weixin.qq.com:443", "*.weixin.qq.com", "127.0.0.1:8080"]);
  assert.equal(tencent.run, undefined);
  const own = requiredPermissions(parse("weixin:\n  base_url: http://10.0.0.9:8088\n"), "weixin");
  assert.deepEqual(own.net, ["10.0.0.9:8088", "127.0.0.1:8080"], "no Tencent domain for another service");
  const off = requiredPermissions(parse("daemon:\n  data_dir: /var/lib/homed\n"), "weixin");
  assert.deepEqual([off.read, off.write, off.net], [["/etc/homed/homed.yaml"], [], []], "without weixin: the config");
  assert.ok(toFlags(tencent).every((flag) => !/^-A$|allow-all|allow-run|allow-ffi|allow-sys/.test(flag)));
});

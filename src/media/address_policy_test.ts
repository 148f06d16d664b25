import assert from "node:assert/strict";
import { type AddressPolicy, checkMediaUrl, MediaRefused } from "./address_policy.ts";
import { classifyAddress } from "../net/ip_address.ts";

/** A policy with a fixed resolver table; names it does not know fail to resolve, and every lookup is recorded. */
function policyWith(
  table: Record<string, string[]>,
  overrides: Partial<Omit<AddressPolicy, "resolve">> = {},
): AddressPolicy & { asked: string[] } {
  const asked: string[] = [];
  return {
    allowHosts: [],
    trustedHosts: [],
    ownListen: { host: "127.0.0.1", port: 8123 },
    ...overrides,
    asked,
    resolve(host) {
      asked.push(host);
      const answer = table[host];
      return answer ? Promise.resolve(answer) : Promise.reject(new Error(`no such host ${host}`));
    },
  };
}

/** The refusal `checkMediaUrl` gives, asserted to be one. */
async function refusal(raw: string, policy: AddressPolicy): Promise<MediaRefused> {
  try {
    await checkMediaUrl(raw, policy);
  } catch (error) {
    assert.ok(error instanceof MediaRefused, `a MediaRefused for ${raw}, got ${error}`);
    return error;
  }
  assert.fail(`${raw} was not refused`);
}

Deno.test("classify: IPv4 ranges, loopback to reserved", () => {
  const cases: Array<[string, string]> = [
    ["8.8.8.8", "public"],
    ["93.184.215.14", "public"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.1", "public"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["100.127.255.254", "private"],
    ["100.128.0.1", "public"],
    ["169.254.169.254", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "reserved"],
    ["224.0.0.251", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "reserved"],
    ["192.0.2.10", "reserved"],
    ["198.18.0.1", "reserved"],
  ];
  assert.deepEqual(cases.map(([ip]) => [ip, classifyAddress(ip)]), cases);
});

Deno.test("classify: IPv6 ranges and the forms that carry an IPv4 address take its class", () => {
  const cases: Array<[string, string]> = [
    ["2606:4700:4700::1111", "public"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["::", "unspecified"],
    ["fc00::1", "private"],
    ["fd12:3456::1", "private"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:8.8.8.8", "public"],
    ["::127.0.0.1", "loopback"],
    ["::ffff:0:10.0.0.1", "private"],
    ["64:ff9b::192.168.1.1", "private"],
    ["64:ff9b::c0a8:101", "private"],
    ["64:ff9b::8.8.8.8", "public"],
    ["2002:7f00:1::", "loopback"],
    ["2001:db8::1", "reserved"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"],
    ["100::1", "reserved"],
    ["4000::1", "reserved"],
  ];
  assert.deepEqual(cases.map(([ip]) => [ip, classifyAddress(ip)]), cases);
});

Deno.test("classify: a value that is no IP address is a TypeError naming it", () => {
  for (const bad of ["example.com", "1.2.3", "1.2.3.256", "01.2.3.4", "1:2:3", "1::2::3", "12345::", ""]) {
    assert.throws(() => classifyAddress(bad), (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, new RegExp(`"${bad.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}" is not an IPv4 or IPv6`));
      return true;
    });
  }
});

Deno.test("check: only http and https; the refusal names the scheme and the URL", async () => {
  const policy = policyWith({});
  for (
    const [raw, scheme] of [
      ["file:///etc/passwd", "file:"],
      ["data:image/png;base64,iVBORw0KGgo=", "data:"],
      ["ftp://files.example.com/a.png", "ftp:"],
      ["javascript:alert(1)", "javascript:"],
    ]
  ) {
    const error = await refusal(raw ?? "", policy);
    assert.match(error.message, new RegExp(`the scheme ${scheme} is not allowed \\(only http: and https:\\)`));
    assert.ok(error.message.includes(raw ?? ""), error.message);
  }
  const invalid = await refusal("not a url", policy);
  assert.equal(invalid.message, "Homed will not fetch not a url: it is not a valid absolute URL");
  assert.deepEqual(policy.asked, [], "nothing was resolved");
});

Deno.test("check: credentials in the URL are refused and left out of the message", async () => {
  const error = await refusal(
    "https://admin:hunter2@cdn.example.com/a.png",
    policyWith({ "cdn.example.com": ["8.8.8.8"] }),
  );
  assert.equal(
    error.message,
    "Homed will not fetch https://cdn.example.com/a.png: a user name or password in the URL is not allowed",
  );
  assert.ok(!error.message.includes("hunter2"));
});

Deno.test("check: IP literals are classified after URL parsing (decimal, hex, short and mapped forms)", async () => {
  const policy = policyWith({});
  const cases: Array<[string, RegExp]> = [
    ["http://127.0.0.1/a.png", /127\.0\.0\.1 is a loopback address/],
    ["http://2130706433/a.png", /127\.0\.0\.1 is a loopback address/],
    ["http://0x7f.1/a.png", /127\.0\.0\.1 is a loopback address/],
    ["http://017700000001/", /127\.0\.0\.1 is a loopback address/],
    ["http://[::ffff:127.0.0.1]/a.png", /::ffff:7f00:1 is a loopback address/],
    ["http://[::1]:8080/", /::1 is a loopback address/],
    ["http://169.254.169.254/latest/meta-data/", /169\.254\.169\.254 is a link-local address/],
    ["http://0.0.0.0:9000/", /0\.0\.0\.0 is an unspecified address/],
    ["http://10.0.0.8/", /10\.0\.0\.8 is a private address/],
    ["http://100.64.1.1/", /100\.64\.1\.1 is a private address/],
    ["http://[fd00::5]/", /fd00::5 is a private address/],
    ["http://[fe80::1]/", /fe80::1 is a link-local address/],
    ["http://224.0.0.1/", /224\.0\.0\.1 is a multicast address/],
    ["http://255.255.255.255/", /255\.255\.255\.255 is a reserved address/],
    ["http://[64:ff9b::10.0.0.1]/", /64:ff9b::a00:1 is a private address/],
  ];
  for (const [raw, reason] of cases) {
    const error = await refusal(raw, policy);
    assert.match(error.message, reason, raw);
    assert.match(error.message, /list the host in media\.allow_hosts to allow it$/);
  }
  assert.equal((await checkMediaUrl("http://8.8.8.8/a.png", policy)).href, "http://8.8.8.8/a.png");
  assert.equal((await checkMediaUrl("https://[2606:4700::1111]/a", policy)).hostname, "[2606:4700::1111]");
  assert.deepEqual(policy.asked, [], "a literal is never resolved");
});

Deno.test("check: localhost and *.localhost are loopback without asking the resolver", async () => {
  const policy = policyWith({ localhost: ["8.8.8.8"], "api.localhost": ["8.8.8.8"] });
  assert.match((await refusal("http://localhost:3000/x", policy)).message, /localhost is a loopback name/);
  assert.match((await refusal("http://api.localhost/x", policy)).message, /api\.localhost is a loopback name/);
  assert.match((await refusal("http://LOCALHOST./x", policy)).message, /localhost is a loopback name/);
  assert.deepEqual(policy.asked, []);
});

Deno.test("check: a name is resolved and every answer must be public (rebinding to 127.0.0.1, mixed answers)", async () => {
  const policy = policyWith({
    "cdn.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "rebind.example.net": ["127.0.0.1"],
    "mixed.example.org": ["93.184.215.14", "192.168.1.20"],
    "metadata.example.org": ["::ffff:169.254.169.254"],
    "empty.example.org": [],
    "odd.example.org": ["not-an-ip"],
  });
  const ok = await checkMediaUrl("https://cdn.example.com/img/a.png?x=1", policy);
  assert.equal(ok.href, "https://cdn.example.com/img/a.png?x=1");
  assert.equal(
    (await refusal("http://rebind.example.net/a.png", policy)).message,
    "Homed will not fetch http://rebind.example.net/a.png: rebind.example.net resolves to 127.0.0.1, a loopback " +
      "address; list the host in media.allow_hosts to allow it",
  );
  assert.match(
    (await refusal("http://mixed.example.org/a.png", policy)).message,
    /mixed\.example\.org resolves to 192\.168\.1\.20, a private address/,
  );
  assert.match(
    (await refusal("http://metadata.example.org/", policy)).message,
    /resolves to ::ffff:a9fe:a9fe, a link-local address/,
  );
  assert.match(
    (await refusal("http://empty.example.org/", policy)).message,
    /empty\.example\.org resolved to no address/,
  );
  assert.match((await refusal("http://odd.example.org/", policy)).message, /"not-an-ip", which is not an IP address/);
  assert.deepEqual(policy.asked.slice(0, 3), ["cdn.example.com", "rebind.example.net", "mixed.example.org"]);
});

Deno.test("check: a resolution failure is refused naming the host", async () => {
  const error = await refusal("http://nowhere.invalid/a.png", policyWith({}));
  assert.equal(
    error.message,
    "Homed will not fetch http://nowhere.invalid/a.png: the host name nowhere.invalid could not be resolved: " +
      "no such host nowhere.invalid",
  );
});

Deno.test("check: an allowed host may be private — on its port when the entry names one; *.x.y matches subdomains", async () => {
  const policy = policyWith({ "nas.lan": ["192.168.1.5"], "cam.home.arpa": ["10.0.0.7"] }, {
    allowHosts: ["nas.lan:5000", "*.home.arpa", "10.0.0.9", "[fd00::7]:8080"],
  });
  assert.equal((await checkMediaUrl("http://nas.lan:5000/photo.jpg", policy)).host, "nas.lan:5000");
  assert.match((await refusal("http://nas.lan:5001/photo.jpg", policy)).message, /nas\.lan resolves to 192\.168\.1\.5/);
  assert.equal((await checkMediaUrl("http://cam.home.arpa/snap.jpg", policy)).hostname, "cam.home.arpa");
  assert.equal((await checkMediaUrl("http://10.0.0.9:1234/a", policy)).hostname, "10.0.0.9", "no port: any port");
  assert.equal((await checkMediaUrl("http://[fd00::7]:8080/a", policy)).hostname, "[fd00::7]");
  assert.match((await refusal("http://[fd00::7]:8081/a", policy)).message, /fd00::7 is a private address/);
  assert.match(
    (await refusal("http://home.arpa/a", policy)).message,
    /home\.arpa could not be resolved/,
    "not the domain",
  );
  assert.deepEqual(policy.asked, ["nas.lan", "home.arpa"], "an allowed name off homed's port is not resolved");
});

Deno.test("check: an allow entry that is no host is a TypeError naming the setting and the entry", async () => {
  await assert.rejects(
    checkMediaUrl("http://8.8.8.8/", policyWith({}, { trustedHosts: ["nas.lan/files"] })),
    { name: "TypeError", message: 'The trusted host entry "nas.lan/files" is not a host, host:port or *.domain' },
  );
  await assert.rejects(
    checkMediaUrl("http://8.8.8.8/", policyWith({}, { allowHosts: ["http://nas.lan/"] })),
    (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.equal(error.message, 'The media.allow_hosts entry "http://nas.lan/" is not a host, host:port or *.domain');
      return true;
    },
  );
});

Deno.test("check: the trusted OneBot host may be private on any port", async () => {
  const policy = policyWith({ napcat: ["172.18.0.3"] }, { trustedHosts: ["127.0.0.1", "napcat:3001"] });
  assert.equal((await checkMediaUrl("http://127.0.0.1:3000/file/abc.amr", policy)).port, "3000");
  assert.equal(
    (await checkMediaUrl("http://127.1:6099/x", policy)).hostname,
    "127.0.0.1",
    "the same address spelled short",
  );
  assert.equal((await checkMediaUrl("http://napcat:6099/image.png", policy)).hostname, "napcat", "its port is ignored");
  assert.match((await refusal("http://127.0.0.2:3000/x", policy)).message, /127\.0\.0\.2 is a loopback address/);
});

Deno.test("check: homed's own port is refused on loopback, private and its own host, even when listed", async () => {
  const policy = policyWith({ "me.lan": ["192.168.1.2"], "cdn.example.com": ["93.184.215.14"] }, {
    allowHosts: ["127.0.0.1:8123", "me.lan", "localhost"],
    trustedHosts: ["127.0.0.1", "192.168.1.2"],
    ownListen: { host: "192.168.1.2", port: 8123 },
  });
  const expected = "port 8123 on 127.0.0.1 is homed's own listener (192.168.1.2:8123); homed never fetches from itself";
  assert.equal(
    (await refusal("http://127.0.0.1:8123/api/status", policy)).message,
    `Homed will not fetch http://127.0.0.1:8123/api/status: ${expected}`,
  );
  for (const raw of ["http://localhost:8123/", "http://[::1]:8123/", "http://0.0.0.0:8123/", "http://me.lan:8123/"]) {
    assert.match((await refusal(raw, policy)).message, /port 8123 on .* is homed's own listener/, raw);
  }
  assert.match((await refusal("http://192.168.1.2:8123/", policy)).message, /homed's own listener/);
  assert.equal((await checkMediaUrl("http://me.lan:8124/", policy)).port, "8124", "another port of the same host");
  assert.equal((await checkMediaUrl("http://cdn.example.com:8123/a", policy)).port, "8123", "a public host on it");
  assert.equal(
    (await refusal("https://93.184.215.14:8123/", policyWith({}, { ownListen: { host: "93.184.215.14", port: 8123 } })))
      .reason,
    "port 8123 on 93.184.215.14 is homed's own listener (93.184.215.14:8123); homed never fetches from itself",
  );
});

Deno.test("check: a refusal quotes at most about 120 characters of the URL", async () => {
  const raw = `http://127.0.0.1/${"a".repeat(500)}.png`;
  const error = await refusal(raw, policyWith({}));
  assert.equal(error.url.length, 120);
  assert.ok(error.url.endsWith("…"));
  assert.ok(error.message.length < 240, error.message);
  assert.match(error.message, /^Homed will not fetch http:\/\/127\.0\.0\.1\/a+…: 127\.0\.0\.1 is a loopback address/);
});

Deno.test("check: a name server homed has no right to ask is named, with what grants it (not Deno's advice)", async () => {
  const denied = new Deno.errors.NotCapable(
    'Requires net access to "10.0.0.1:53", run again with the --allow-net flag',
  );
  const error = await refusal("http://gchat.qpic.cn/a.png", {
    ...policyWith({}),
    resolve: () => Promise.reject(denied),
  });
  assert.equal(
    error.reason,
    'the host name gchat.qpic.cn could not be resolved: homed may not ask the name server (net access to "10.0.0.1:53"); ' +
      "the flags homed flags computes grant the name servers /etc/resolv.conf lists when QQ media come from host " +
      "names (media.fetch_hosts): restart homed with them if that file changed",
  );
});

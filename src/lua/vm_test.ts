import assert from "node:assert/strict";
import { rejection } from "../../tests/support/rejection.ts";
import { getLogger } from "@logtape/logtape";
import { LuaError } from "./lua_error.ts";
import { type LuaGrants, LuaVm } from "./vm.ts";

const logger = getLogger(["test", "lua"]);
const LIMITS = { timeMs: 300, memoryBytes: 4 * 1024 * 1024 };
const open = (source: string, grants: LuaGrants = {}, limits = LIMITS) =>
  LuaVm.open({ name: "probe.lua", source, limits, grants, logger });

Deno.test("escapes are refused, limits stop runaway scripts, and the VM runs a normal script after each", async () => {
  const vm = await open(`
    function probe(code) return assert(sandbox_run(code)) end
    function normal(n) local s = 0 for i = 1, n do s = s + i end return s end
  `.replace("sandbox_run", "(function(c) return c end)"));
  const cases: Array<[string, string, RegExp]> = [
    [
      "os.execute",
      "function attack() return os.execute('id') end",
      /probe\.lua:1: attempt to index a nil value \(global 'os'\)/,
    ],
    ["io.open", "function attack() return io.open('/etc/passwd') end", /attempt to index a nil value \(global 'io'\)/],
    ["require", "function attack() return require('os') end", /attempt to call a nil value \(global 'require'\)/],
    ["load", "function attack() return load('return 1')() end", /attempt to call a nil value \(global 'load'\)/],
    ["dofile", "function attack() return dofile('/etc/passwd') end", /attempt to call a nil value \(global 'dofile'\)/],
    ["debug.sethook", "function attack() debug.sethook() end", /attempt to index a nil value \(global 'debug'\)/],
    ["string.dump", "function attack() return string.dump(print) end", /attempt to call a nil value \(field 'dump'\)/],
    [
      "package",
      "function attack() return package.loadlib('x', 'y') end",
      /attempt to index a nil value \(global 'package'\)/,
    ],
  ];
  for (const [what, source, pattern] of cases) {
    const attacker = await open(source);
    const error = await rejection(attacker.call("attack"), LuaError);
    assert.equal(error.kind, "runtime", what);
    assert.match(error.message, pattern, what);
    attacker.close();
  }
  const runaway: Array<[string, string, LuaError["kind"], RegExp]> = [
    [
      "infinite loop",
      "function attack() while true do end end",
      "time_limit",
      /^probe\.lua: stopped after 300 ms \(lua\.time_limit\)$/,
    ],
    [
      "loop caught by pcall",
      "function attack() while true do pcall(function() while true do end end) end end",
      "time_limit",
      /stopped after 300 ms/,
    ],
    [
      "coroutine loop",
      "function attack() local co = coroutine.wrap(function() while true do coroutine.yield() end end) while true do co() end end",
      "time_limit",
      /stopped after 300 ms/,
    ],
    [
      "loop inside a coroutine",
      "function attack() coroutine.wrap(function() while true do end end)() end",
      "time_limit",
      /stopped/,
    ],
    [
      "string.rep bomb",
      "function attack() return #string.rep('x', 1 << 30) end",
      "memory_limit",
      /used more than 4194304 bytes \(lua\.memory_limit\)/,
    ],
    [
      "table growth",
      "function attack() local t = {} for i = 1, 1e8 do t[i] = i end end",
      "memory_limit",
      /lua\.memory_limit/,
    ],
    [
      "deep recursion",
      "function attack() local function f(n) return f(n + 1) + 1 end return f(1) end",
      "runtime",
      /stack overflow|lua\.memory_limit/,
    ],
  ];
  for (const [what, source, kind, pattern] of runaway) {
    const attacker = await open(`${source}\nfunction normal(n) local s = 0 for i = 1, n do s = s + i end return s end`);
    const started = performance.now();
    const error = await rejection(attacker.call("attack"), LuaError);
    assert.ok(
      error.kind === kind || (what === "deep recursion" && error.kind === "memory_limit"),
      `${what}: ${error.kind}`,
    );
    assert.match(error.message, pattern, what);
    assert.ok(performance.now() - started < 3_000, `${what} stopped in time`);
    assert.equal(await attacker.call("normal", 100), 5050, `${what}: the VM still runs a normal call`);
    attacker.close();
  }
  assert.equal(await vm.call("normal", 10), 55);
  vm.close();
});

Deno.test("errors name the script and line; a syntax error fails at open", async () => {
  const syntax = await rejection(open("function broken(\n  return 1\nend"), LuaError);
  assert.equal(syntax.kind, "syntax");
  assert.equal(syntax.line, 2);
  assert.match(syntax.message, /^probe\.lua:2: /);
  const vm = await open(
    "function f(t)\n  local x = nil\n  return x.field\nend\nfunction g() error('custom failure') end",
  );
  const runtime = await rejection(vm.call("f"), LuaError);
  assert.deepEqual([runtime.kind, runtime.line], ["runtime", 3]);
  assert.match(runtime.message, /^probe\.lua:3: attempt to index a nil value \(local 'x'\)$/);
  assert.equal((await rejection(vm.call("g"), LuaError)).message, "probe.lua:5: custom failure");
  assert.equal(
    (await rejection(vm.call("missing"), LuaError)).message,
    "probe.lua: the script defines no function missing()",
  );
  vm.close();
});

Deno.test("json: round trip with empty arrays and objects, unicode, numbers; errors name the character", async () => {
  const vm = await open(
    `function roundtrip(text) return json.encode(json.decode(text)) end
     function bad(text) return json.decode(text) end
     function utf() return #utf8.char(0x1F600) .. " " .. utf8.len("é😀") end
     function make() return json.encode({ list = json.array(), obj = {}, n = 3, f = 0.5, s = "a\\"b\\n\\u{1F600}", yes = true }) end`,
    { json: true },
  );
  assert.equal(await vm.call("utf"), "4 2", "utf8 is the real utf8 library");
  const sample = '{"a":[1,2.5,-3e2,null,{"b":[]}],"c":{},"d":"\\u00e9\\ud83d\\ude00","e":false}';
  assert.deepEqual(JSON.parse(String(await vm.call("roundtrip", sample))), JSON.parse(sample));
  assert.deepEqual(JSON.parse(String(await vm.call("make"))), {
    f: 0.5,
    list: [],
    n: 3,
    obj: {},
    s: 'a"b\n😀',
    yes: true,
  });
  for (
    const [text, pattern] of [
      ['{"a":', /unexpected end of text at character 6/],
      ["[1,]", /unexpected '\]' at character 4/],
      ["{} x", /trailing characters at character 4/],
      ['"\\q"', /bad escape at character 2/],
    ] as const
  ) {
    assert.match((await rejection(vm.call("bad", text), LuaError)).message, pattern);
  }
  vm.close();
});

Deno.test("http.request reaches only allowed hosts, asynchronously; kv persists in its file", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => Response.json({ method: request.method, body: await request.text() }),
  );
  const host = `127.0.0.1:${server.addr.port}`;
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-lua-" });
  const grants: LuaGrants = { http: { allowHosts: [host], timeoutMs: 2_000 }, kv: { path: `${dir}/probe.kv.json` } };
  const vm = await open(
    `function fetch_it(url)
       local response = http.request({ url = url, method = "POST", body = "ping" })
       return json.decode(response.body).body .. " " .. response.status
     end
     function remember(v) kv.set("last", v) return kv.get("last") end`,
    grants,
  );
  assert.equal(await vm.call("fetch_it", `http://${host}/echo`), "ping 200");
  const refused = await rejection(vm.call("fetch_it", "http://127.0.0.2:9/x"), LuaError);
  assert.match(refused.message, /http\.request: 127\.0\.0\.2:9 is not an allowed host \(allowed: 127\.0\.0\.1:\d+\)/);
  assert.equal(await vm.call("remember", "blue"), "blue");
  vm.close();
  const again = await open("function read() return kv.get('last') end", grants);
  assert.equal(await again.call("read"), "blue", "the store survives the VM");
  again.close();
  await server.shutdown();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a script spinning until its limit lets the event loop run meanwhile", async () => {
  const vm = await open("function spin() while true do end end", {}, { timeMs: 400, memoryBytes: 1 << 22 });
  let ticks = 0;
  const timer = setInterval(() => ticks++, 20);
  await rejection(vm.call("spin"), LuaError);
  clearInterval(timer);
  assert.ok(ticks >= 10, `the event loop ran ${ticks} timer ticks during 400 ms of Lua`);
  vm.close();
});

Deno.test("issue 18: one long pattern call stops at lua.time_limit with the limit's error", async () => {
  const vm = await open(`
    function hostile() return tostring(string.find(string.rep("a", 480), ".-.-.-b")) end
    function normal(n) local s = 0 for i = 1, n do s = s + i end return s end
  `);
  // The event loop waits for one C call until the call's deadline, not for the whole backtracking (seconds here).
  let late = false;
  const timer = setTimeout(() => late = true, 10 * LIMITS.timeMs);
  const error = await rejection(vm.call("hostile"), LuaError);
  assert.equal(late, false, "the call ended before a timer due at ten times its limit");
  clearTimeout(timer);
  assert.equal(error.kind, "time_limit");
  assert.equal(error.message, "probe.lua: stopped after 300 ms (lua.time_limit)");
  assert.equal(await vm.call("normal", 100), 5050, "the VM still runs a normal call");
  vm.close();
});

Deno.test("issue 18: every long C loop a script can start meets the time limit, and the VM is intact after it", async () => {
  const subject = 'local s = string.rep("a", 480)';
  const cases: Array<[string, string]> = [
    ["string.match", `${subject} return string.match(s, "(.-)(.-)(.-)b")`],
    ["string.gmatch", `${subject} for m in string.gmatch(s, ".-.-.-b") do end`],
    ["string.gsub", `${subject} return (string.gsub(s, ".-.-.-b", ""))`],
    ["a method call", `${subject} return s:find(".-.-.-b")`],
    ["a long character class", 'return string.find(string.rep("a", 1 << 15), "[" .. string.rep("b", 4096) .. "a]*c")'],
    ["%b", 'return string.find(string.rep("(", 1 << 16), "%b()")'],
    ["a back reference", 'return string.find(string.rep("a", 1 << 14), "(a*)%1%1b")'],
    ["a plain find", 'return string.find(string.rep("a", 1 << 20), string.rep("a", 1 << 16) .. "b", 1, true)'],
    [
      "a find without magic characters",
      'return string.find(string.rep("a", 1 << 20), string.rep("a", 1 << 16) .. "b")',
    ],
    ["string.rep of nothing", 'return #string.rep("", 1e12)'],
    ["string.rep of nothing with a separator", 'return #string.rep("", 1e12, "")'],
    ["table.move over nothing", "return table.move({}, 1, 1e12, 1, {})"],
    ["inside a coroutine", `${subject} return coroutine.wrap(function() return s:find(".-.-.-b") end)()`],
    [
      "a gmatch iterator made outside the coroutine that calls it",
      `${subject} local next_match = s:gmatch(".-.-.-b") return coroutine.wrap(function() return next_match() end)()`,
    ],
    [
      "a gmatch iterator made in a finished coroutine",
      `${subject} return coroutine.wrap(function() return s:gmatch(".-.-.-b") end)()()`,
    ],
    ["caught by pcall, again and again", `${subject} while true do pcall(string.find, s, ".-.-.-b") end`],
    [
      "caught inside a coroutine",
      `${subject} while true do pcall(coroutine.wrap(function() return s:find(".-.-.-b") end)) end`,
    ],
  ];
  for (const [what, body] of cases) {
    const vm = await open(`
      function attack() ${body} end
      function normal() return table.concat({ ("key_42"):match("^(%a+)_(%d+)$") }, " ") .. " " .. string.rep("ab", 3, ",")
        .. " " .. #table.move({ 1, 2, 3 }, 1, 3, 2) .. " " .. tostring(("x"):rep(40) == string.rep("x", 40)) end
    `);
    const error = await rejection(vm.call("attack"), LuaError);
    assert.equal(error.kind, "time_limit", what);
    assert.equal(error.message, "probe.lua: stopped after 300 ms (lua.time_limit)", what);
    assert.equal(await vm.call("normal"), "key 42 ab,ab,ab 4 true", `${what}: the VM still runs a normal call`);
    vm.close();
  }
  const chunk = await rejection(open('string.find(string.rep("a", 480), ".-.-.-b")'), LuaError);
  assert.equal(chunk.message, "probe.lua: stopped after 300 ms (lua.time_limit)", "in the chunk, at open");
});

Deno.test("issue 18: a script making many pattern calls lets the event loop run meanwhile", async () => {
  // Short subjects: each call is quick, so the instruction hook (which yields) comes round every few milliseconds even
  // on a slow machine; with 40 characters a slow run could reach the time limit before the first yield.
  const vm = await open(`function busy()
    local s = string.rep("a", 16)
    while true do string.find(s, ".-.-.-b") string.gsub(s, "a-a-b", "") end
  end`);
  const order: string[] = [];
  setTimeout(() => order.push("timer"), 0);
  await rejection(vm.call("busy"), LuaError);
  order.push("call returned");
  assert.deepEqual(order, ["timer", "call returned"]);
  vm.close();
});

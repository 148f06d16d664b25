import assert from "node:assert/strict";
import { addressBook, peopleProblems, withPeople } from "./people.ts";
import { configSchema } from "./schema.ts";

const TOKEN = "tg-0123456789abcdefghijklmnopqrstu";
const household = () =>
  configSchema.parse({
    daemon: { api_token: "owner-token-0123456789", api_tokens: { lin: { token: "lin-token-0123456789" } } },
    people: {
      wei: { trust: "owner", qq: "10001", weixin: "o9cq80wei@im.wechat", telegram: "777000" },
      lin: { qq: "10002", telegram: 777001 },
      guest_zhao: { trust: "guest", qq: "10009" },
    },
    weixin: {},
    telegram: { token: `123456789:${TOKEN}` },
  });

Deno.test("people: each chat admits the owner as its owner and members in allow_users; guests are not admitted", () => {
  const config = withPeople(household());
  assert.equal(config.onebot.owner, "10001");
  assert.deepEqual(config.onebot.allow_users, ["10002"]);
  assert.equal(config.weixin!.owner, "o9cq80wei@im.wechat");
  assert.deepEqual(config.weixin!.allow_users, []);
  assert.equal(config.telegram!.owner, "777000");
  assert.deepEqual(config.telegram!.allow_users, ["777001"], "a YAML number is read as the id it is");
  const off = withPeople(configSchema.parse({ people: { wei: { trust: "owner", telegram: "777000" } } }));
  assert.equal(off.telegram, null, "a chat that is off stays off");
});

Deno.test("people: one person wherever they write — by chat address and by API token name — and nobody else", () => {
  const book = addressBook(household());
  const wei = ["qq:private:10001", "weixin:private:o9cq80wei@im.wechat", "telegram:private:777000"];
  assert.deepEqual(book.personOf("weixin:private:o9cq80wei@im.wechat", "o9cq80wei@im.wechat"), {
    name: "wei",
    trust: "owner",
    channels: wei,
  });
  assert.equal(book.personOf("telegram:private:777000", "777000")?.name, "wei");
  assert.equal(book.personOf("qq:group:555", "10001")?.name, "wei", "in a group too");
  assert.equal(book.personOf("http", "owner")?.name, "wei", "the holder of daemon.api_token is the owner person");
  assert.equal(book.personOf("openai:lin", "lin")?.name, "lin", "a token's name is its person's own by default");
  assert.equal(book.personOf("qq:private:10003", "10003"), undefined, "unlisted: the chat's own name");
  assert.equal(book.personOf("telegram:private:10001", "10001"), undefined, "a QQ number is no Telegram address");
  assert.equal(book.personOf("serial:door", "10001"), undefined);
  assert.equal(book.named("lin")?.channels.join(), "qq:private:10002,telegram:private:777001");
  assert.equal(book.personAt("telegram:private:777001")?.name, "lin");
  assert.equal(book.personAt("qq:group:555"), undefined, "a group is nobody's own chat");
});

Deno.test("people: each broken rule names the key, the value and what is allowed", () => {
  const problems = (people: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    peopleProblems(configSchema.parse({ people, ...extra }));
  assert.deepEqual(problems({ wei: { trust: "owner", qq: "10001" }, lin: { qq: "10001" } }), [
    'people.lin.qq: got "10001", the address of people.wei too; allowed: an address of one person only',
  ]);
  assert.deepEqual(problems({ wei: { trust: "owner" }, lin: { trust: "owner" } }), [
    'people: got 2 owners (wei, lin); allowed: at most one person with trust: "owner"',
  ]);
  assert.deepEqual(problems({ lin: { http: "linn" } }), [
    'people.lin.http: got "linn"; allowed: a name in daemon.api_tokens (or "owner", the holder of daemon.api_token)',
  ]);
  assert.deepEqual(problems({ wei: { trust: "owner", qq: "10001" } }, { onebot: { owner: "10002" } }), [
    'onebot.owner: got "10002"; allowed: empty or "10001", the owner\'s qq address in people.wei.qq',
  ]);
  assert.deepEqual(problems({ wei: { trust: "owner", qq: "10001" } }, { onebot: { owner: "10001" } }), []);
});

Deno.test("people: a bad address names the person's key and the value", () => {
  const result = configSchema.safeParse({ people: { wei: { telegram: "@wei" } } });
  assert.equal(result.success, false);
  assert.deepEqual(result.error!.issues[0]!.path, ["people", "wei", "telegram"]);
  assert.match(result.error!.issues[0]!.message, /a Telegram id \(digits; a group's begins with -\)/);
});

Deno.test("people: a list of entries with a name is the same map; a repeated or missing name is an error naming it", () => {
  const listed = configSchema.parse({
    people: [{ name: "wei", trust: "owner", qq: "10001" }, { name: "lin", telegram: 777001 }],
  });
  assert.deepEqual(listed.people, {
    wei: { trust: "owner", qq: "10001" },
    lin: { trust: "household", telegram: "777001" },
  });
  const twice = configSchema.safeParse({ people: [{ name: "wei", qq: "10001" }, { name: "wei", qq: "10002" }] });
  assert.deepEqual(twice.error?.issues.map((issue) => issue.path.join(".")), ["people.wei#2"]);
  const nameless = configSchema.safeParse({ people: [{ trust: "owner", qq: "10001" }] });
  assert.deepEqual(nameless.error?.issues.map((issue) => issue.path.join(".")), ["people.#1 (no name)"]);
});

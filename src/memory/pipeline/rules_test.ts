import assert from "node:assert/strict";
import { ruleFacts } from "./rules.ts";

const said = (text: string, n = 1, role: "user" | "assistant" = "user") => ({
  eventId: `e${n}`,
  time: 0,
  role,
  source: "qq:private:20002000",
  sender: "20002000",
  text,
});

Deno.test("the fallback finds locations, names and likes, in English and Chinese, with provenance", () => {
  const facts = ruleFacts([
    said("The spare key is under the blue flowerpot. Thanks!", 1),
    said("客厅灯现在放在卧室", 2),
    said("My name is Lily", 3),
    said("我喜欢吃饺子", 4),
    said("The lamp is in the bedroom", 5, "assistant"),
    said("Can you check whether the oven is on?", 6),
  ]);
  assert.deepEqual(facts.map((f) => [f.subject.name, f.subject.type, f.predicate, f.object, f.single, f.provenance]), [
    ["spare key", "thing", "location", "under blue flowerpot", true, ["e1"]],
    ["客厅灯", "thing", "location", "卧室", true, ["e2"]],
    ["20002000", "person", "name", "Lily", true, ["e3"]],
    ["20002000", "person", "likes", "饺子", false, ["e4"]],
  ]);
});

import assert from "node:assert/strict";
import { byConversation, ITEM_CHARS, withWhatMatched } from "./what_matched.ts";
import { focused } from "./focused.ts";

const MIN = 60_000;
const item = (document: string, minute: number, text: string, source = "qq:group:1") => ({
  kind: "document" as const,
  text,
  score: 1,
  time: minute * MIN,
  provenance: [document],
  document,
  source,
});

Deno.test("a conversation's turns among the k best are one item, in rank order, each turn's event in the order shown", () => {
  const ranked = [
    item("e5", 5, "Anna: The key is under the blue pot."),
    item("p1", 6, "Leo: The key is mine.", "qq:private:2"),
    item("e2", 2, "Ben: Which key?"),
    item("e9", 300, "Anna: I lost the key again."),
  ];
  const items = byConversation(ranked, 4);
  assert.deepEqual(items.map((i) => i.provenance), [["e5", "e2"], ["p1"], ["e9"]]);
  assert.equal(items[0]!.text, "Anna: The key is under the blue pot.\nBen: Which key?");
  assert.deepEqual((items[0] as { documents?: string[] }).documents, ["e5", "e2"]);
  // Another chat (a private one) and the same chat five hours later stay items of their own.
  assert.equal(items[1]!.source, "qq:private:2");
});

Deno.test("only the k best are gathered: a weaker turn is never pulled up past better ones", () => {
  const ranked = [item("e1", 0, "Anna: key"), item("x1", 0, "Ben: key", "http"), item("e2", 1, "Ben: key?")];
  assert.deepEqual(byConversation(ranked, 2).map((i) => i.provenance), [["e1"], ["x1"]]);
  assert.deepEqual(byConversation(ranked, 3).map((i) => i.provenance), [["e1", "e2"], ["x1"]]);
});

Deno.test("an item stops gathering at ITEM_CHARS; a turn it shows already is not shown twice", () => {
  const long = "x".repeat(ITEM_CHARS - 10);
  const ranked = [item("e1", 0, `Anna: ${long}`), item("e2", 1, "Ben: a longer reply"), item("e3", 2, "Ben: ok")];
  const items = byConversation(ranked, 3);
  assert.deepEqual(items.map((i) => i.provenance), [["e1"], ["e2", "e3"]]);
  const chain = { ...item("e4", 0, "Anna: where?\nBen: here"), provenance: ["e3", "e4"] };
  assert.deepEqual(byConversation([chain, item("e3", 0, "Anna: where?")], 2).map((i) => i.provenance), [["e3", "e4"]]);
  // Facts and recent lines are never gathered.
  const fact = { ...item("f", 0, "key (thing) under: pot"), kind: "fact" as const };
  assert.equal(byConversation([item("e1", 0, "Anna: key"), fact], 2).length, 2);
});

Deno.test("a long sentence shows its words around the asked-about ones, not its beginning", () => {
  const line = "Jon: Yeah, so after all the planning and the painting of the walls, I am going to teach a special " +
    "routine at the grand opening tomorrow night.";
  const shown = focused(line, "What will Jon do at the grand opening?", 60);
  assert.ok(shown.length <= 60, shown);
  assert.match(shown, /grand opening/);
  assert.match(shown, /^Jon: … /);
});

Deno.test("a line shows the words asked about, not a greeting that names the person asked about", () => {
  const document = {
    id: "d1",
    text: "Mel: Thanks, Caroline! That sounds lovely. We painted a lake with the kids last weekend at the camp site.",
    summary: "",
    created: 0,
    lastAccessed: 0,
    hits: 0,
    provenance: ["e1"],
    sender: "Mel",
    trust: "household" as const,
    source: "qq:group:1",
  };
  const [item] = withWhatMatched([{ document, score: 1 }], "What did Caroline paint?", new Set(["caroline"]));
  assert.match(item!.text, /painted a lake/);
  assert.doesNotMatch(item!.text, /Thanks, Caroline/);
});

Deno.test("a turn before that the index says holds none of the query's words is not compared: the same items", () => {
  const hit = (id: string, text: string, context: string, contextMatched?: boolean) => ({
    document: {
      id,
      text,
      summary: text,
      created: 0,
      lastAccessed: 0,
      hits: 0,
      provenance: [id],
      sender: "",
      trust: "household" as const,
      source: "http",
      context: { text: context, eventId: `before-${id}` },
    },
    score: 1,
    ...(contextMatched === undefined ? {} : { contextMatched }),
  });
  const query = "where is the passport";
  const told = [hit("e1", "Ben: Top drawer.", "Anna: What's for dinner?", false)];
  const asked = [hit("e1", "Ben: Top drawer.", "Anna: What's for dinner?")];
  assert.deepEqual(withWhatMatched(told, query), withWhatMatched(asked, query));
  // A turn that does hold them is still compared and shown.
  const matching = withWhatMatched([hit("e2", "Ben: Top drawer.", "Anna: Where is the passport?", true)], query);
  assert.equal(matching[0]!.text, "(before: Anna: Where is the passport?)\nBen: Top drawer.");
});

// The strict rule of eval:memory-locomo (bench/memory/strict_credit.ts) on hand-made items: an item credits at most
// ⌈its length / 40⌉ of its turns, in the order it shows them, and recall@10 is read within k × 125 characters.
import assert from "node:assert/strict";
import { credited, score, withinBudget } from "../bench/memory/strict_credit.ts";

const item = (length: number, ...provenance: string[]) => ({ text: "x".repeat(length), provenance });

Deno.test("an item credits one turn per 40 characters it shows, the first ones it shows", () => {
  assert.deepEqual(credited(item(1, "a", "b")), ["a"]);
  assert.deepEqual(credited(item(40, "a", "b")), ["a"]);
  assert.deepEqual(credited(item(41, "a", "b")), ["a", "b"]);
  // Ten turns in the text of two: the first two are credited, in the order shown (not sorted).
  assert.deepEqual(credited(item(80, "j", "c", "a", "d", "e", "f", "g", "h", "i", "b")), ["j", "c"]);
  assert.deepEqual(credited(item(400, "a", "b")), ["a", "b"]);
  assert.deepEqual(credited(item(0, "a")), []);
});

Deno.test("the budget keeps items best first while they fit, the first always", () => {
  const long = item(2000, "a");
  assert.deepEqual(withinBudget([long, item(1, "b")], 1250), [long]);
  const [a, b, c] = [item(600, "a"), item(600, "b"), item(51, "c")];
  // c would fit after b, but the list stops at the first item that does not: items are read best first.
  assert.deepEqual(withinBudget([a, b, item(100, "d"), c], 1250), [a, b]);
  assert.deepEqual(withinBudget([a, b, c], 1250), [a, b]);
  assert.deepEqual(withinBudget([a, b, c], 1251), [a, b, c]);
});

Deno.test("a question is answered strictly only by a credited evidence turn within the budget", () => {
  const gold = new Set(["g"]);
  // The evidence is the third turn of a 60-character item: held, but not credited (⌈60 / 40⌉ = 2).
  const hidden = [item(60, "a", "b", "g")];
  assert.deepEqual(score(hidden, gold, 1250), {
    r1: true,
    r10: true,
    budget: true,
    strict_r1: false,
    strict_r1_short: false,
    strict_budget: false,
  });
  // The same turns shown in 81 characters: credited.
  assert.equal(score([item(81, "a", "b", "g")], gold, 1250).strict_r1, true);
  // A first item of 400 characters credits its tenth turn; read as one item of 125 characters, only its first four.
  const long = [item(400, "a", "b", "c", "d", "e", "f", "g")];
  assert.equal(score(long, gold, 1250, 125).strict_r1, true);
  assert.equal(score(long, gold, 1250, 125).strict_r1_short, false);
  assert.equal(score([item(400, "a", "b", "c", "g")], gold, 1250, 125).strict_r1_short, true);
  // Credited at rank 2 but past the budget: r@10 only.
  const late = [item(1200, "a"), item(100, "g")];
  assert.deepEqual(score(late, gold, 1250), {
    r1: false,
    r10: true,
    budget: false,
    strict_r1: false,
    strict_r1_short: false,
    strict_budget: false,
  });
  // Credited at rank 2 within the budget.
  assert.deepEqual(score([item(100, "a"), item(100, "b", "g")], gold, 1250), {
    r1: false,
    r10: true,
    budget: true,
    strict_r1: false,
    strict_r1_short: false,
    strict_budget: true,
  });
  assert.deepEqual(score([], gold, 1250), {
    r1: false,
    r10: false,
    budget: false,
    strict_r1: false,
    strict_r1_short: false,
    strict_budget: false,
  });
});

import assert from "node:assert/strict";
import { parseNumber, parsePercent } from "./numbers.ts";
import { tokenTexts } from "./tokens.ts";

/** The longest reading of the whole of `text`, or undefined. */
function whole(text: string, options = {}): number | undefined {
  const tokens = tokenTexts(text);
  return parseNumber(tokens, 0, options).find((parse) => parse.end === tokens.length)?.value;
}

Deno.test("parseNumber reads digits and decimals", () => {
  assert.equal(whole("50"), 50);
  assert.equal(whole("22.5"), 22.5);
  assert.equal(whole("007"), 7);
  assert.equal(whole("22.5", { integer: true }), undefined);
});

Deno.test("parseNumber reads Chinese numerals", () => {
  const table: [string, number][] = [
    ["零", 0],
    ["一", 1],
    ["两", 2],
    ["十", 10],
    ["十五", 15],
    ["二十", 20],
    ["二十五", 25],
    ["一百", 100],
    ["两百", 200],
    ["一百零五", 105],
    ["一百二", 120],
    ["一百二十五", 125],
    ["两千五", 2500],
    ["三千五百", 3500],
    ["一千零五十", 1050],
    ["一万", 10_000],
    ["三万五", 35_000],
    ["三十五点五", 35.5],
    ["二十六点零五", 26.05],
  ];
  for (const [text, value] of table) assert.equal(whole(text), value, text);
});

Deno.test("parseNumber refuses what is not a Chinese numeral", () => {
  for (const text of ["二五", "百", "千五", "一百零", "点五", "零五", "十百"]) {
    assert.equal(whole(text), undefined, text);
  }
  assert.equal(whole("三十五点五", { integer: true }), undefined);
});

Deno.test("parseNumber reads English number words, hyphenated or not", () => {
  const table: [string, number][] = [
    ["zero", 0],
    ["seven", 7],
    ["fifteen", 15],
    ["twenty", 20],
    ["fifty five", 55],
    ["fifty-five", 55],
    ["ninety-nine", 99],
    ["a hundred", 100],
    ["one hundred and twenty", 120],
    ["two hundred five", 205],
    ["two thousand seven hundred", 2700],
    ["a thousand", 1000],
    ["twenty two point five", 22.5],
  ];
  for (const [text, value] of table) assert.equal(whole(text), value, text);
  for (const text of ["a", "hundred", "fifty-dogs", "and"]) assert.equal(whole(text), undefined, text);
});

Deno.test("parseNumber gives every reading, longest first, so the matcher can backtrack", () => {
  assert.deepEqual(parseNumber(tokenTexts("二十五度"), 0), [
    { value: 25, end: 3 },
    { value: 20, end: 2 },
    { value: 2, end: 1 },
  ]);
  assert.deepEqual(parseNumber(tokenTexts("twenty five minutes"), 0), [{ value: 25, end: 2 }, { value: 20, end: 1 }]);
  assert.deepEqual(parseNumber(tokenTexts("调到 50"), 2), [{ value: 50, end: 3 }]);
  assert.deepEqual(parseNumber(["灯"], 0), []);
  assert.deepEqual(parseNumber([], 0), []);
});

Deno.test("parsePercent reads 50%, 50 and 百分之三十", () => {
  assert.deepEqual(parsePercent(tokenTexts("50%"), 0), [{ value: 50, end: 2 }, { value: 50, end: 1 }]);
  assert.deepEqual(parsePercent(tokenTexts("百分之三十"), 0)[0], { value: 30, end: 5 });
  assert.deepEqual(parsePercent(tokenTexts("百分之五十五"), 0)[0], { value: 55, end: 6 });
  assert.deepEqual(parsePercent(tokenTexts("300"), 0), [{ value: 300, end: 1 }]);
  assert.deepEqual(parsePercent(tokenTexts("百分"), 0), []);
});

Deno.test("parsePercent reads tenths: 三成 is 30, 七成半 75; 十二成 is no percentage", () => {
  assert.deepEqual(parsePercent(tokenTexts("三成"), 0)[0], { value: 30, end: 2 });
  assert.deepEqual(parsePercent(tokenTexts("七成半"), 0)[0], { value: 75, end: 3 });
  assert.ok(!parsePercent(tokenTexts("十二成"), 0).some((parse) => parse.end === 3), "12 tenths is not read as 120");
});

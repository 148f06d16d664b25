import assert from "node:assert/strict";
import { stem } from "./stem.ts";
import { compileLexicon, HOUSEHOLD, termFrequencies, tokenize } from "./tokenizer.ts";

Deno.test("Chinese runs become bigrams, split at particles, with unigrams for one-character runs", () => {
  assert.deepEqual(tokenize("把客厅的灯打开"), ["客厅", "灯打", "打开"]);
  assert.deepEqual(tokenize("客厅的灯"), ["客厅", "灯"]);
  assert.deepEqual(tokenize("战国无双"), ["战国", "国无", "无双"]);
  assert.deepEqual(tokenize("这是什么？"), [], "stop characters and stop bigrams only");
  assert.deepEqual(tokenize("猫"), ["猫"]);
});

Deno.test("Latin text becomes lower-case stemmed words without stopwords; digits stay", () => {
  assert.deepEqual(tokenize("Turn OFF the Lights, please!"), ["turn", "light"]);
  assert.deepEqual(tokenize("The heating was stopped at 21 degrees in 2026"), ["heat", "stop", "21", "degree", "2026"]);
  assert.deepEqual(tokenize("wifi6 router-2"), ["wifi6", "router", "2"]);
  for (
    const [word, stemmed] of [
      ["batteries", "battery"],
      ["watches", "watch"],
      ["living", "liv"],
      ["running", "run"],
      ["falling", "fall"],
      ["cooking", "cook"],
      ["glass", "glass"],
      ["status", "status"],
      ["stored", "stor"],
      ["opened", "open"],
    ]
  ) assert.equal(stem(word!), stemmed, word);
});

Deno.test("every form of a word meets its base form's stem; endings that are part of the word stay", () => {
  const families = [
    ["symbolize", "symbolizes", "symbolized", "symbolizing"],
    ["change", "changes", "changed", "changing"],
    ["combine", "combines", "combined", "combining"],
    ["go", "goes", "going", "went", "gone"],
    ["use", "uses", "used", "using"],
    ["stop", "stops", "stopped", "stopping"],
    ["study", "studies", "studied", "studying"],
    ["hundred", "hundreds"],
    ["have", "has", "had", "having"],
  ];
  for (const family of families) {
    assert.deepEqual(family.map(stem), family.map(() => stem(family[0]!)), family.join("/"));
  }
  for (const word of ["bread", "thing", "shed", "need", "glass", "bus", "the", "king"]) {
    assert.equal(stem(word), word, word);
  }
});

Deno.test("stopwords are judged on the written word, before stemming", () => {
  assert.deepEqual(tokenize("Does she have a dog? He has had one."), ["dog", "on"]);
  assert.ok(!tokenize("what does the doe eat").includes("do"), "does is a stopword, not the stem doe");
  assert.deepEqual(tokenize("the doe"), ["doe"]);
});

Deno.test("mixed text is one pass; full-width folds; Japanese and Korean are CJK", () => {
  assert.deepEqual(tokenize("把 living room 的灯打开"), ["liv", "room", "灯打", "打开"]);
  assert.deepEqual(tokenize("ＡＢＣ１２３"), ["abc123"]);
  assert.deepEqual(tokenize("WiFi密码abc12345"), ["wifi", "密码", "abc12345"]);
  assert.deepEqual(tokenize("東京タワー"), ["東京", "京タ", "タワ", "ワー"]);
  assert.deepEqual(tokenize("서울 날씨"), ["서울", "날씨"]);
});

Deno.test("emoji, punctuation and empty input give no terms", () => {
  assert.deepEqual(tokenize(""), []);
  assert.deepEqual(tokenize("😀🏠 ✨ —— !!! ？？"), []);
  assert.deepEqual(tokenize("灯😀灯"), ["灯", "灯"]);
});

Deno.test("the lexicon adds concept tokens in both languages, phrases included", () => {
  const zh = tokenize("把客厅的灯打开", { lexicon: HOUSEHOLD });
  const en = tokenize("switch on the lamp in the living room", { lexicon: HOUSEHOLD });
  for (const concept of ["~living_room", "~light", "~turn_on"]) {
    assert.ok(zh.includes(concept), `${concept} in ${zh}`);
    assert.ok(en.includes(concept), `${concept} in ${en}`);
  }
  assert.ok(!tokenize("living. Room", { lexicon: HOUSEHOLD }).includes("~living_room"), "phrases stop at a full stop");
  const custom = compileLexicon({ heat: "暖气|Heaters" });
  assert.deepEqual(tokenize("heater 暖气", { lexicon: custom }), ["~heat", "heater", "~heat", "暖气"]);
});

Deno.test("term frequencies count repeats; a 1 MB input is handled", () => {
  assert.deepEqual([...termFrequencies("lamp lamps 灯 灯")], [["lamp", 2], ["灯", 2]]);
  const big = "客厅的灯 living room lamp 21度 😀 ".repeat(30_000);
  assert.ok(new TextEncoder().encode(big).length >= 1_000_000);
  const counts = termFrequencies(big, { lexicon: HOUSEHOLD });
  assert.equal(counts.get("客厅"), 30_000);
  assert.equal(counts.get("~light"), 60_000);
  assert.equal(counts.get("21"), 30_000);
});

Deno.test("idioms name no concept; husband and wife are different people in both languages", () => {
  const concepts = (text: string) => tokenize(text, { lexicon: HOUSEHOLD }).filter((term) => term.startsWith("~"));
  assert.deepEqual(concepts("In light of the news, we stayed home"), []);
  assert.deepEqual(concepts("It will play a part in the decision"), []);
  assert.ok(concepts("turn on the light").includes("~light"), "outside an idiom the word still names its concept");
  assert.ok(concepts("the light of the kitchen").includes("~light"));
  assert.deepEqual(concepts("my husband"), ["~husband"]);
  assert.deepEqual(concepts("我老公"), ["~husband"], "老公 meets husband");
  assert.deepEqual(concepts("my wife"), ["~wife"]);
  assert.deepEqual(concepts("my partner"), ["~spouse"]);
});

Deno.test("Chinese day words relative to their saying are dropped whole, and name no concept", () => {
  // 今天 in June and 今天 in August are different days: no term, and no half-bigrams (奶前, 天买) around them.
  assert.deepEqual(tokenize("前天奶奶买了什么"), ["奶奶", "奶买", "买"]);
  assert.deepEqual(tokenize("大前天爷爷去了哪里"), ["爷爷", "爷去", "去"]);
  assert.deepEqual(tokenize("考试改到下周五了"), ["考试", "试改", "改到"]);
  assert.deepEqual(tokenize("上个月20号"), ["20号", "20"]);
  assert.ok(!tokenize("上周一小雨去了哪里", { lexicon: HOUSEHOLD }).includes("~weekday"), "上周一 is a date");
  assert.ok(tokenize("钢琴课每周四下午", { lexicon: HOUSEHOLD }).includes("~weekday"), "每周四 is a weekday");
  assert.ok(tokenize("每周四").includes("周四"), "a recurring weekday stays a term");
});

Deno.test("one-character verbs stand alone too: their bigrams cross into the next word", () => {
  const question = new Set(tokenize("妈妈去了哪里"));
  const turn = tokenize("我今天去老年大学了");
  assert.ok(turn.some((term) => question.has(term)), `${turn} shares nothing with ${[...question]}`);
  assert.ok(tokenize("今天在菜市场买了电池").includes("买"));
});

Deno.test("奶奶 is not milk and 外面 not noodles; 遇见 meets 碰到", () => {
  const concepts = (text: string) => tokenize(text, { lexicon: HOUSEHOLD }).filter((term) => term.startsWith("~"));
  assert.deepEqual(concepts("奶奶"), ["~grandmother"]);
  assert.deepEqual(concepts("在外面吃的"), []);
  assert.ok(concepts("喝牛奶").includes("~milk"));
  assert.deepEqual(concepts("昨天遇见了谁"), concepts("碰到老同学"));
});

import assert from "node:assert/strict";
import { hasTimeWords, isWhenQuestion } from "./time_words.ts";

Deno.test("when-questions are told apart from other questions, in English and Chinese", () => {
  for (
    const query of [
      "When is Leo's dentist appointment?",
      "what time does the gala start",
      "客厅灯几点关？",
      "快递什么时候到",
    ]
  ) {
    assert.equal(isWhenQuestion(query), true, query);
  }
  for (
    const query of ["Where is the passport?", "Who has our ladder?", "客厅灯在哪", "What did we decide about the car?"]
  ) {
    assert.equal(isWhenQuestion(query), false, query);
  }
});

Deno.test("time words: clock times, weekdays, months, relative days; not bare numbers or codes", () => {
  for (const text of ["on Thursday 12 March at 9:30", "at 7pm", "tomorrow morning", "周五下午三点", "5月3号", "明天"]) {
    assert.equal(hasTimeWords(text), true, text);
  }
  for (const text of ["Top drawer of the hall desk.", "4471. Don't write it on the fridge", "room 12", "客厅的灯"]) {
    assert.equal(hasTimeWords(text), false, text);
  }
});

Deno.test("Chinese time words of the household: 大前天, 上周三, 下个月初, 月底; when-questions 啥时候, 哪个月", () => {
  for (const text of ["大前天", "前天下午", "上周三", "下个月初去社区办", "物业费月底之前要交", "下个月中旬", "年底"]) {
    assert.equal(hasTimeWords(text), true, text);
  }
  for (const text of ["医保卡的材料准备好了吗？", "月亮", "个人"]) assert.equal(hasTimeWords(text), false, text);
  for (const query of ["家长会啥时候开？", "哪个月去的", "奶奶的生日是几月几号？", "钢琴课礼拜几上"]) {
    assert.equal(isWhenQuestion(query), true, query);
  }
});

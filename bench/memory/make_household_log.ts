/**
 * Generates the 60-day bilingual household log (`household_log.json`) for `deno task bench:memory`: a family — Wei
 * (the owner), Lin, their son Tom and 奶奶 (grandma, who writes Chinese) — talking to the butler every day in two or
 * three sessions, mostly routine (lights, weather, meals, errands, in English and Chinese), with facts worth keeping
 * said once in passing: where things are kept, appointments, preferences and allergies, settings, contacts, plans.
 * Some facts change later ("the router password is now …"); their question's gold is the latest statement only. The
 * questions are asked at the end, in the language the fact was said in, worded differently from it.
 *
 * Same shape as the English conversation set (`bench/retrieval/conversation_set.ts`), so the replay reads both.
 * Seeded: the same run writes the same file; the committed JSON is the frozen log.
 *
 * Its speakers, rooms, routine phrases and planted facts are exported for `bench/memory/scale.ts` (a year of a
 * household); importing the module generates nothing on disk.
 *
 * Run: deno run --allow-write=bench/memory bench/memory/make_household_log.ts
 */

import type { ConversationQuestion, ConversationSet, ConversationTurn } from "../retrieval/conversation_set.ts";
import { seededRandom } from "../support/seeded_random.ts";

const { next: random, pick, int } = seededRandom(20261130);
const START = Date.UTC(2026, 8, 1); // 2026-09-01, 00:00 UTC
const DAYS = 60;
export const EN = ["Wei", "Lin", "Tom"];
export const ZH = ["奶奶", "Lin"];

export const ROOMS = ["living room", "kitchen", "bedroom", "study", "bathroom", "hall"];
export const ROOMS_ZH = ["客厅", "厨房", "卧室", "书房", "卫生间", "走廊"];
export const FILLER_EN = [
  () => `Good morning! Can you turn on the ${pick(ROOMS)} light?`,
  () => `Turn off the ${pick(ROOMS)} lamp please, we're heading out.`,
  () => `What's the weather like today? Should I take an umbrella?`,
  () => `Set the heating to ${int(19, 23)} degrees.`,
  () => `I'm back home. Anything I should know?`,
  () => `Can you play some music in the ${pick(ROOMS)}?`,
  () => `We're having ${pick(["pasta", "curry", "dumplings", "fish", "soup", "pizza"])} for dinner tonight.`,
  () => `Remind me to call the office when I'm done with lunch.`,
  () => `Is the washing machine finished yet?`,
  () => `Tom, homework first, then games.`,
  () => `The ${pick(["milk", "bread", "eggs", "coffee", "rice"])} is running low, add it to the shopping list.`,
  () => `How long until the oven is preheated?`,
  () => `Thanks, that's all for now.`,
  () => `Open the ${pick(ROOMS)} curtains.`,
  () => `Did anyone feed the cat this morning?`,
  () => `I'll be late tonight, start dinner without me.`,
];
export const FILLER_ZH = [
  () => `把${pick(ROOMS_ZH)}的灯打开。`,
  () => `今天天气怎么样？要不要带伞？`,
  () => `空调调到${int(24, 28)}度。`,
  () => `晚上吃${pick(["饺子", "面条", "米饭和鱼", "火锅", "包子"])}。`,
  () => `${pick(ROOMS_ZH)}的窗帘拉上吧。`,
  () => `我出去买菜了，一会儿回来。`,
  () => `电视声音小一点。`,
  () => `洗衣机洗好了没有？`,
  () => `明天早上叫我起床，七点。`,
  () => `好的，谢谢。`,
];

/** A fact to plant: what is said, and how it is asked for later. An `update` says it again, changed, later on. */
export interface Plant {
  speaker: string;
  said: string;
  question: string;
  category: ConversationQuestion["category"];
  update?: { said: string };
}

export const PLANTS: Plant[] = [
  {
    speaker: "Wei",
    said: "The spare house key is under the blue flowerpot by the back door.",
    question: "Where do we keep the spare house key?",
    category: "plain",
    update: { said: "I moved the spare house key, it's now in the garage drawer with the fuses." },
  },
  {
    speaker: "Lin",
    said: "Tom's piano lesson is every Wednesday at 5 pm with Mrs Zhou.",
    question: "When is Tom's piano lesson?",
    category: "time",
  },
  {
    speaker: "Wei",
    said: "The wifi router password is sunflower42, write it down somewhere.",
    question: "What is the wifi router password?",
    category: "plain",
    update: { said: "I changed the router password to maple77 after the update." },
  },
  {
    speaker: "Lin",
    said: "The plumber is Mr Chen, his number is 138 0013 4567.",
    question: "What's the plumber's phone number?",
    category: "person",
  },
  {
    speaker: "Tom",
    said: "My school trip to the science museum is on October 14th.",
    question: "When is Tom's school trip to the museum?",
    category: "time",
  },
  {
    speaker: "Wei",
    said: "The car insurance renewal is due on November 3rd, the broker is Ping An.",
    question: "When does the car insurance need renewing?",
    category: "time",
  },
  {
    speaker: "Lin",
    said: "I'm allergic to shellfish, so no shrimp in anything for me please.",
    question: "Which food is Lin allergic to?",
    category: "person",
  },
  {
    speaker: "Wei",
    said: "The passports are in the fireproof box on the top shelf of the study wardrobe.",
    question: "Where are the passports kept?",
    category: "plain",
  },
  {
    speaker: "Tom",
    said: "My best friend Leo's birthday party is on Saturday the 20th at the bowling alley.",
    question: "When is Leo's birthday party?",
    category: "time",
  },
  {
    speaker: "Lin",
    said: "The cat's vet is Dr Park at Greenway clinic, the annual vaccination is in late October.",
    question: "Who is the cat's vet?",
    category: "person",
  },
  {
    speaker: "Wei",
    said: "Bins: general waste goes out on Tuesday night, recycling on Friday night.",
    question: "Which night does the recycling go out?",
    category: "time",
    update: { said: "The council changed the schedule, recycling now goes out on Thursday night." },
  },
  {
    speaker: "Lin",
    said: "The thermostat schedule should be 21 degrees from 6 to 8 am and 22 in the evening.",
    question: "What temperature should the thermostat be in the morning?",
    category: "plain",
  },
  {
    speaker: "Wei",
    said: "My dentist appointment got moved to the 9th at 10:30.",
    question: "When is Wei's dentist appointment?",
    category: "time",
  },
  {
    speaker: "Tom",
    said: "I lent my blue bike helmet to Sam from next door.",
    question: "Who has Tom's bike helmet?",
    category: "person",
  },
  {
    speaker: "Lin",
    said: "The water meter reading on the first of the month was 4512.",
    question: "What was the water meter reading?",
    category: "plain",
  },
  {
    speaker: "Wei",
    said: "We're flying to Hangzhou on October 1st and back on the 7th, flight MU5402.",
    question: "What's our flight number to Hangzhou?",
    category: "plain",
  },
  {
    speaker: "Lin",
    said: "The babysitter Anna can only come on Mondays and Thursdays now.",
    question: "Which days can the babysitter come?",
    category: "person",
  },
  {
    speaker: "Tom",
    said: "My swimming goggles are in the red sports bag in the hall cupboard.",
    question: "Where are Tom's swimming goggles?",
    category: "plain",
  },
  {
    speaker: "Wei",
    said: "The electricity bill is paid by direct debit on the 15th from the savings account.",
    question: "When is the electricity bill paid?",
    category: "time",
  },
  {
    speaker: "Lin",
    said: "Tom's teacher is Ms Garcia, parents' evening is on the 22nd at 6 pm.",
    question: "Who is Tom's teacher?",
    category: "person",
  },
  {
    speaker: "Wei",
    said: "The washing machine warranty runs until March 2028, the receipt is in the kitchen drawer.",
    question: "Until when is the washing machine under warranty?",
    category: "time",
  },
  {
    speaker: "Tom",
    said: "I want a telescope for my birthday, the small white one from the science shop.",
    question: "What does Tom want for his birthday?",
    category: "plain",
  },
  {
    speaker: "Lin",
    said: "The gate code for the parking garage is 2580, then press the hash key.",
    question: "What's the code for the parking garage gate?",
    category: "plain",
    update: { said: "The management sent a new parking gate code: 7391, hash at the end as before." },
  },
  {
    speaker: "Wei",
    said: "My mother prefers green tea without sugar, and she sleeps in the study when she visits.",
    question: "How does Wei's mother take her tea?",
    category: "person",
  },
  {
    speaker: "奶奶",
    said: "我的降压药放在卧室床头柜第二个抽屉里。",
    question: "奶奶的降压药放在哪里？",
    category: "plain",
  },
  {
    speaker: "奶奶",
    said: "我对花生过敏，做菜的时候千万别放花生。",
    question: "奶奶对什么过敏？",
    category: "person",
  },
  {
    speaker: "奶奶",
    said: "社区医院的王医生每周四上午给我量血压。",
    question: "哪位医生给奶奶量血压？",
    category: "person",
    update: { said: "以后改成社区医院的李医生了，还是每周四上午量血压。" },
  },
  {
    speaker: "Lin",
    said: "物业费每季度交一次，下次是十月十号之前。",
    question: "物业费下次什么时候交？",
    category: "time",
  },
  {
    speaker: "奶奶",
    said: "我的老花镜放在客厅茶几下面的小篮子里。",
    question: "奶奶的老花镜放在哪？",
    category: "plain",
  },
  {
    speaker: "Lin",
    said: "燃气公司的维修电话是 96777，有事直接打这个。",
    question: "燃气维修电话是多少？",
    category: "plain",
  },
  {
    speaker: "奶奶",
    said: "重阳节那天我要跟老姐妹们去西湖边喝茶。",
    question: "重阳节奶奶要去哪里？",
    category: "time",
  },
  {
    speaker: "Lin",
    said: "家里的医保卡和户口本都放在书房保险柜里，密码是孩子的生日。",
    question: "户口本放在哪里？",
    category: "plain",
  },
  {
    speaker: "奶奶",
    said: "阳台上的那盆兰花一个星期只浇一次水，不能多浇。",
    question: "兰花多久浇一次水？",
    category: "plain",
  },
  {
    speaker: "Lin",
    said: "Tom 的英语补习班在周六下午三点，在少年宫二楼。",
    question: "Tom 的英语补习班在什么时候？",
    category: "time",
    update: { said: "英语补习班改到周日上午十点了，地点不变。" },
  },
  {
    speaker: "奶奶",
    said: "楼下张阿姨借了我们家的电饭煲，说下周还。",
    question: "谁借了我们家的电饭煲？",
    category: "person",
  },
  {
    speaker: "Lin",
    said: "宽带是电信的，账号是 hz20881234，到期日是明年一月。",
    question: "宽带账号是多少？",
    category: "plain",
  },
  {
    speaker: "奶奶",
    said: "我每天晚上九点要吃一片钙片，记得提醒我。",
    question: "奶奶每天几点吃钙片？",
    category: "time",
  },
  {
    speaker: "Lin",
    said: "冰箱冷冻室最下层是给猫准备的鱼，不要拿来做菜。",
    question: "冷冻室最下层的鱼是给谁的？",
    category: "plain",
  },
];

const turns: Array<ConversationTurn & { day: number }> = [];
const questions: ConversationQuestion[] = [];
// Facts are said on days 1–50, their updates at least ten days later.
const sayOn = PLANTS.map(() => int(0, 49));
const updateOn = PLANTS.map((plant, i) => plant.update ? int(sayOn[i]! + 10, DAYS - 2) : -1);
const goldOf = new Map<number, string>();

const sessions: ConversationSet["sessions"] = [];
for (let day = 0; day < DAYS; day++) {
  const sessionCount = int(2, 3);
  for (let s = 0; s < sessionCount; s++) {
    const hour = [7, 12, 19][s]! + int(0, 1);
    let time = START + day * 86_400_000 + hour * 3_600_000 + int(0, 40) * 60_000;
    const id = `h${String(day + 1).padStart(2, "0")}-${s + 1}`;
    const sessionTurns: ConversationTurn[] = [];
    const say = (speaker: string, text: string) => {
      const turn = { id: `${id}-${sessionTurns.length + 1}`, speaker, text, time: new Date(time).toISOString() };
      sessionTurns.push(turn);
      turns.push({ ...turn, day });
      time += int(1, 6) * 60_000;
      return turn.id;
    };
    const fillers = int(4, 8);
    // Today's facts are said in the first session, together, after a random number of routine turns.
    const plantsToday = s === 0 ? PLANTS.map((_, i) => i).filter((i) => sayOn[i] === day || updateOn[i] === day) : [];
    const after = int(0, fillers - 1);
    for (let f = 0; f < fillers; f++) {
      const zh = random() < 0.35;
      say(zh ? pick(ZH) : pick(EN), zh ? pick(FILLER_ZH)() : pick(FILLER_EN)());
      if (f !== after) continue;
      for (const i of plantsToday) {
        const plant = PLANTS[i]!;
        goldOf.set(i, say(plant.speaker, updateOn[i] === day ? plant.update!.said : plant.said));
      }
    }
    sessions.push({ id, time: sessionTurns[0]!.time, turns: sessionTurns });
  }
}
PLANTS.forEach((plant, i) => {
  questions.push({
    id: `hq${i + 1}`,
    text: plant.question,
    gold: [goldOf.get(i)!],
    category: plant.category,
    split: i % 2 === 0 ? "tune" : "test",
  });
});

const set: ConversationSet = {
  summary: {
    days: DAYS,
    sessions: sessions.length,
    turns: turns.length,
    questions: questions.length,
    updated_facts: PLANTS.filter((plant) => plant.update).length,
    chinese_questions: questions.filter((question) => /\p{Script=Han}/u.test(question.text)).length,
  },
  speakers: [...new Set([...EN, ...ZH])],
  sessions,
  questions,
};
// Imported (bench/memory/scale.ts takes its speakers and phrase banks), it writes nothing.
if (import.meta.main) {
  await Deno.writeTextFile(new URL("./household_log.json", import.meta.url), JSON.stringify(set, null, 1) + "\n");
  console.log(set.summary);
}

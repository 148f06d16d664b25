/**
 * Generates the English multi-session conversation set (`conversation_set.json`): one household — Anna and Ben, their
 * children Mia (14) and Leo (9), Grandpa Joe — talking over 60 days in 40 sessions, and questions whose gold is the
 * turn that holds the answer. Seeded, so the output is reproducible; the committed JSON is the frozen set, written
 * before any conversation-aware recall existed.
 *
 * Categories (what each one asks of recall):
 * - `reply`: the answer is the reply to a question ("Has anyone seen the passport?" → "Top drawer of the hall desk."),
 *   so the gold turn shares few words with the query; its neighbour has them.
 * - `person`: several people said the same kind of thing; the query names whose it wants.
 * - `time`: when-questions, answered by a turn that carries the date or time.
 * - `plain`: the gold turn shares the query's key words.
 * Every question has a `split`: `tune` (parameters may be fitted on it) or `test` (report on it only), alternating.
 * Fillers reuse the set's nouns (a key found on the drive, the dentist's receptionist calling) so that words alone do
 * not point at the gold.
 *
 * Run: deno run --allow-write=bench/retrieval bench/retrieval/make_conversation_set.ts
 */

import { seededRandom } from "../support/seeded_random.ts";
import type { ConversationCategory, ConversationQuestion, ConversationTurn } from "./conversation_set.ts";

type Category = ConversationCategory;
type Turn = ConversationTurn;
type Question = ConversationQuestion;
/** A thread: turns (speaker, text) and questions pointing at turns by their index in the thread. */
interface Thread {
  turns: Array<[string, string]>;
  questions: Array<{ text: string; gold: number[]; category: Category }>;
}

const { next: random, pick, int } = seededRandom(20261201);
const shuffle = <T>(items: readonly T[]): T[] => {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
};

const capitalize = (text = "") => text.charAt(0).toUpperCase() + text.slice(1);

const ADULTS = ["Anna", "Ben"];
const CHILDREN = ["Mia", "Leo"];
const PEOPLE = [...ADULTS, ...CHILDREN, "Grandpa Joe"];
const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTHS = ["March", "April", "May"];
const clock = () => `${int(7, 19)}:${pick(["00", "15", "30", "45"])}`;
const other = (speaker: string, pool = PEOPLE) => pick(pool.filter((p) => p !== speaker));

// Each pool entry is used once, so every question has one answer.
const OBJECTS = shuffle([
  ["passport", "for the renewal form"],
  ["spare car key", "because Ben took the other one"],
  ["dishwasher warranty", "since it is leaking again"],
  ["tax folder", "for the accountant"],
  ["swimming goggles", "for Leo's lesson"],
  ["graphing calculator", "for Mia's maths test"],
  ["big torch", "because the garage bulb blew"],
  ["vaccination card for Biscuit", "for the kennel"],
  ["bike pump", "for Leo's flat tyre"],
  ["wedding album", "to show Grandpa's friend"],
]);
const PLACES = shuffle([
  "Top drawer of the hall desk, under the envelopes.",
  "In the blue box under the stairs, next to the Christmas lights.",
  "Glovebox of the car, I saw it there on Sunday.",
  "On the shelf above the washing machine.",
  "Grandpa's toolbox in the garage, the red one.",
  "Behind the cookbooks in the kitchen cupboard.",
  "In the suitcase on top of the wardrobe.",
  "Mia's desk, second drawer, she borrowed it.",
  "The basket by the front door, with the dog leads.",
  "Filing cabinet in the study, folder marked H.",
]);
const APPOINTMENTS = shuffle([
  "dentist appointment",
  "eye test",
  "piano exam",
  "football trial",
  "parent-teacher meeting",
  "haircut",
  "flu jab",
  "orthodontist check",
]);
const GIFTS = shuffle([
  "a pair of roller skates",
  "a telescope",
  "concert tickets for Taylor Swift",
  "a Lego Titanic",
  "an electric scooter",
  "a sketchbook and proper pencils",
  "a fish tank",
  "a trampoline",
]);
const DECISIONS = shuffle([
  ["the summer holiday", "two weeks in Cornwall in August, in the cottage near St Ives"],
  ["the kitchen", "we repaint it sage green and keep the old cupboards"],
  ["pocket money", "five pounds a week for Leo and ten for Mia, paid on Saturdays"],
  ["the car", "we keep the Skoda for another year and get the brakes done"],
  ["screen time", "no phones at the table and none after nine on school nights"],
  ["the garden", "the vegetable patch goes by the fence where it gets the sun"],
  ["Christmas", "this year everyone comes to us and Grandpa does the turkey"],
]);
const EVENTS = shuffle([
  ["the school concert", "Mia plays the flute"],
  ["Leo's swimming gala", "he swims the relay"],
  ["the village fete", "Anna runs the cake stall"],
  ["Grandpa's bowls final", "his club against Millbrook"],
  ["the charity fun run", "Ben does the 10k"],
  ["the school play", "Leo is a shepherd"],
]);
const ALLERGIES = shuffle([
  ["Leo", "penicillin", "after the rash in February"],
  ["Mia", "kiwi fruit", "at the clinic last week"],
  ["Grandpa Joe", "shellfish", "years ago in Spain"],
  ["Biscuit", "chicken, so only the salmon food", "at the vet"],
]);
const RECOMMENDATIONS = shuffle([
  ["plumber", "Dave Morris on Mill Lane", "he fixed the Hendersons' boiler in an hour"],
  ["piano teacher", "Mrs Okafor near the library", "she is patient with beginners"],
  ["Thai restaurant", "Baan Suan on the high street", "the green curry is the best in town"],
  ["bike shop", "Spokes on Station Road", "they service children's bikes while you wait"],
  ["babysitter", "Chloe from number 12", "she is doing first aid at college"],
  ["garage for the MOT", "Hartley Motors by the roundabout", "they never invent extra work"],
]);
const BILLS = shuffle([
  ["electricity bill", "142 pounds"],
  ["broadband", "38 pounds"],
  ["council tax", "176 pounds"],
  ["water bill", "47 pounds"],
  ["phone contract for Mia", "18 pounds"],
]);
const JOBS = shuffle([
  ["a ship's electrician", "Liverpool docks", 11],
  ["a bus driver", "Manchester", 23],
  ["a baker's apprentice", "Leeds", 4],
  ["a lighthouse keeper's assistant", "Anglesey", 2],
]);
const LENT = shuffle([
  ["hedge trimmer", "Mrs Patel from number 7", "next weekend"],
  ["camping stove", "Tom from the running club", "after his trip"],
  ["ladder", "the Hendersons next door", "on Friday"],
  ["pressure washer", "Uncle Rob", "when he visits at Easter"],
  ["big cool box", "Mia's friend Zara", "on Monday at school"],
]);
const CODES = shuffle([
  ["garage door keypad", "4471"],
  ["bike lock", "9032"],
  ["Wi-Fi in the garden room", "sunflower88"],
  ["alarm", "2580"],
  ["safe in the wardrobe", "6614"],
]);
const ACTIVITIES = shuffle([
  ["Mia", "orchestra practice"],
  ["Leo", "judo"],
  ["Grandpa Joe", "physiotherapy"],
  ["Anna", "choir"],
  ["Leo", "swimming lessons"],
  ["Ben", "five-a-side football"],
]);

const THREADS: Array<() => Thread | undefined> = [
  () => {
    const item = OBJECTS.pop(), place = PLACES.pop();
    if (!item || !place) return undefined;
    const asker = pick(PEOPLE);
    return {
      turns: [[asker, `Has anyone seen the ${item[0]}? I need it ${item[1]}.`], [other(asker), place], [
        asker,
        "Found it, thanks.",
      ]],
      questions: [{ text: `Where is the ${item[0]} kept?`, gold: [1], category: "reply" }],
    };
  },
  () => {
    const what = APPOINTMENTS.pop();
    if (!what) return undefined;
    const who = pick(PEOPLE), day = pick(WEEKDAYS), date = `${int(2, 28)} ${pick(MONTHS)}`, time = clock();
    const speaker = pick(ADULTS);
    return {
      turns: [
        [speaker, `${who === speaker ? "My" : `${who}'s`} ${what} is on ${day} ${date} at ${time}.`],
        [other(speaker), pick(["OK, I'll put it on the calendar.", "Fine, I can drive.", "Noted."])],
      ],
      questions: [{ text: `When is ${who}'s ${what}?`, gold: [0], category: "time" }],
    };
  },
  () => {
    const first = GIFTS.pop(), second = GIFTS.pop();
    if (!first || !second) return undefined;
    const [a, b] = shuffle(CHILDREN) as [string, string];
    return {
      turns: [
        [pick(ADULTS), "Birthdays are coming up, any ideas what you'd like?"],
        [a, `I'd really love ${first}.`],
        [b, `I want ${second}!`],
      ],
      questions: [
        { text: `What does ${a} want for the birthday?`, gold: [1], category: "person" },
        { text: `What present would ${b} like?`, gold: [2], category: "person" },
      ],
    };
  },
  () => {
    const decision = DECISIONS.pop();
    if (!decision) return undefined;
    const speaker = pick(ADULTS);
    return {
      turns: [
        [speaker, `We need to settle ${decision[0]} tonight.`],
        [other(speaker), `So we're agreed: ${decision[1]}.`],
      ],
      // The topic is named in the turn before the decision: a reply question, not a plain one.
      questions: [{ text: `What did we decide about ${decision[0]}?`, gold: [1], category: "reply" }],
    };
  },
  () => {
    const event = EVENTS.pop();
    if (!event) return undefined;
    const asker = pick(PEOPLE), hour = int(10, 19), day = pick(WEEKDAYS);
    const time = `${hour}:${pick(["00", "30"])}`, leave = `${hour - 1}:${pick(["00", "15", "30"])}`;
    return {
      turns: [
        [asker, `What time does ${event[0]} start on ${day}? ${capitalize(event[1])}.`],
        [other(asker, ADULTS), `${time}, but we should leave by ${leave} because of the parking.`],
      ],
      questions: [{ text: `When does ${event[0]} begin?`, gold: [1], category: "reply" }],
    };
  },
  () => {
    const allergy = ALLERGIES.pop();
    if (!allergy) return undefined;
    return {
      turns: [
        [pick(ADULTS), `Just so everyone knows, ${allergy[0]} is allergic to ${allergy[1]}; confirmed ${allergy[2]}.`],
        [pick(PEOPLE), "Good to know, I'll tell Grandma's cook."],
      ],
      questions: [{ text: `What is ${allergy[0]} allergic to?`, gold: [0], category: "plain" }],
    };
  },
  () => {
    const rec = RECOMMENDATIONS.pop();
    if (!rec) return undefined;
    const asker = pick(ADULTS);
    return {
      turns: [[asker, `Can anyone recommend a good ${rec[0]}?`], [other(asker), `Try ${rec[1]}; ${rec[2]}.`]],
      questions: [{ text: `Which ${rec[0]} was recommended to us?`, gold: [1], category: "reply" }],
    };
  },
  () => {
    const bill = BILLS.pop();
    if (!bill) return undefined;
    return {
      turns: [[pick(ADULTS), `The ${bill[0]} went up to ${bill[1]} a month from ${pick(MONTHS)}.`], [
        pick(ADULTS),
        "Ouch. We should shop around.",
      ]],
      questions: [{ text: `How much is the ${bill[0]} now?`, gold: [0], category: "plain" }],
    };
  },
  () => {
    const job = JOBS.pop();
    if (!job) return undefined;
    const child = pick(CHILDREN);
    return {
      turns: [[child, "Grandpa, what did you do before you retired?"], [
        "Grandpa Joe",
        `I worked as ${job[0]} in ${job[1]} for ${job[2]} years, and loved most of it.`,
      ]],
      questions: [{ text: "What was Grandpa Joe's job when he was young?", gold: [1], category: "person" }],
    };
  },
  () => {
    const lent = LENT.pop();
    if (!lent) return undefined;
    const asker = pick(ADULTS);
    return {
      turns: [[asker, `Who borrowed the ${lent[0]}? It's not in the shed.`], [
        other(asker),
        `${capitalize(lent[1])} took it; they'll bring it back ${lent[2]}.`,
      ]],
      questions: [{ text: `Who has our ${lent[0]}?`, gold: [1], category: "reply" }],
    };
  },
  () => {
    const code = CODES.pop();
    if (!code) return undefined;
    const asker = pick(PEOPLE);
    return {
      turns: [[asker, `What's the code for the ${code[0]} again?`], [
        other(asker, ADULTS),
        `${code[1]}. Don't write it on the fridge this time.`,
      ]],
      questions: [{ text: `What is the ${code[0]} code?`, gold: [1], category: "reply" }],
    };
  },
  () => {
    const activity = ACTIVITIES.pop();
    if (!activity) return undefined;
    const day = pick(WEEKDAYS), time = clock(), month = pick(MONTHS);
    return {
      turns: [[
        pick(ADULTS),
        `From ${month} on, ${activity[0]} has ${activity[1]} every ${day} at ${time}.`,
      ], [pick(PEOPLE), "That clashes with nothing, I think."]],
      questions: [{ text: `When does ${activity[0]} have ${activity[1]}?`, gold: [0], category: "time" }],
    };
  },
];

const FILLERS = [
  "Can someone take the bins out? It's recycling this week.",
  "Dinner's ready in ten minutes.",
  "Did anyone watch the match last night?",
  "Biscuit needs a walk before it gets dark.",
  "I'm off to bed, night all.",
  "The Wi-Fi is slow again upstairs.",
  "Who left the lights on in the kitchen?",
  "It's raining again, take an umbrella.",
  "We're out of milk and bread.",
  "Leo, homework first, then the tablet.",
  "Mia's friends are coming over on Saturday afternoon.",
  "Remember to call the bank about the new card.",
  "The dentist's receptionist called, nothing urgent, they'll ring back.",
  "I found a key on the drive, no idea whose it is.",
  "The garage smells of paint, open the door for a bit.",
  "Grandpa, your glasses are on the piano.",
  "Has the parcel from the bike shop arrived?",
  "Can we have pasta tonight?",
  "I've put the washing on, someone hang it out later.",
  "The school sent another letter about the trip.",
  "Biscuit chewed the remote again.",
  "Who finished the biscuits? The dog's biscuits, I mean.",
  "Traffic on the ring road was awful this morning.",
  "I booked the car in for its service, I think on Thursday.",
  "Mia, turn the music down please.",
  "The heating came on at five this morning for no reason.",
  "Leo lost another water bottle at school.",
  "Let's do a big shop on Sunday.",
  "Grandpa fell asleep in the garden chair again.",
  "The neighbours' cat is in our shed.",
  "I'll be late tonight, there's a meeting at work.",
  "Did you pay the window cleaner?",
  "There's a concert in the park in summer, we should go.",
  "The fridge is making that noise again.",
  "My phone's on two percent, where's a charger?",
];

const START = Date.UTC(2026, 2, 2, 8); // Monday 2 March 2026
const turns: Turn[] = [];
const questions: Question[] = [];
const sessions: Array<{ id: string; time: string; turns: Turn[] }> = [];
const queue = shuffle(THREADS.flatMap((make) => Array.from({ length: 10 }, () => make)));
for (let s = 1; s <= 40; s++) {
  const day = Math.floor(((s - 1) * 60) / 40) + int(0, 1);
  let minute = START + day * 86_400_000 + int(0, 11) * 3_600_000;
  const session = { id: `s${String(s).padStart(2, "0")}`, time: new Date(minute).toISOString(), turns: [] as Turn[] };
  const threads: Thread[] = [];
  while (threads.length < 3 && queue.length) {
    const thread = queue.pop()!();
    if (thread) threads.push(thread);
  }
  const blocks: Array<Thread | string> = shuffle([
    ...threads,
    ...Array.from({ length: int(3, 6) }, () => pick(FILLERS)),
  ]);
  for (const block of blocks) {
    const lines: Array<[string, string]> = typeof block === "string" ? [[pick(PEOPLE), block]] : block.turns;
    const ids: string[] = [];
    for (const [speaker, text] of lines) {
      minute += int(1, 4) * 60_000;
      const turn = {
        id: `${session.id}-t${String(session.turns.length + 1).padStart(2, "0")}`,
        speaker,
        text,
        time: new Date(minute).toISOString(),
      };
      session.turns.push(turn);
      turns.push(turn);
      ids.push(turn.id);
    }
    if (typeof block !== "string") {
      for (const question of block.questions) {
        questions.push({
          id: `q${String(questions.length + 1).padStart(3, "0")}`,
          text: question.text,
          gold: question.gold.map((i) => ids[i]!),
          category: question.category,
          split: questions.length % 2 ? "test" : "tune",
        });
      }
    }
  }
  sessions.push(session);
}

const counts = Object.fromEntries(
  (["reply", "person", "time", "plain"] as const).map((c) => [c, questions.filter((q) => q.category === c).length]),
);
const summary = { sessions: sessions.length, turns: turns.length, questions: questions.length, ...counts };
await Deno.writeTextFile(
  new URL("./conversation_set.json", import.meta.url),
  `${JSON.stringify({ summary, speakers: PEOPLE, sessions, questions }, null, 1)}\n`,
);
console.log(summary);

/**
 * Generates the bilingual home-assistant retrieval set (`home_set.json`): household notes in Chinese and English
 * and queries with their gold notes, in five categories. Seeded, so the output is reproducible; the committed JSON
 * is the frozen set (see README.md for the freezing commit). Its alias words are its own lists, written without
 * looking at the engine's lexicon: some are in it, many are not.
 *
 * Run: deno run --allow-write=bench/retrieval bench/retrieval/make_home_set.ts
 */

import { seededRandom } from "../support/seeded_random.ts";

interface Note {
  id: string;
  text: string;
  /** ISO date the note was written; later notes supersede earlier ones on the same fact. */
  time: string;
}
type Category = "plain" | "alias" | "cross_language" | "near_duplicate" | "superseded";
interface Query {
  id: string;
  text: string;
  gold: string[];
  category: Category;
}

const { next: random, pick, int } = seededRandom(20261130);
const date = (year = int(2023, 2026)) =>
  `${year}-${String(int(1, 12)).padStart(2, "0")}-${String(int(1, 28)).padStart(2, "0")}`;

// [zh, en, zh aliases, en aliases]
const ROOMS: Array<[string, string, string[], string[]]> = [
  ["客厅", "living room", ["起居室", "客堂", "会客厅"], ["lounge", "sitting room", "front room"]],
  ["主卧", "master bedroom", ["主人房", "大卧室"], ["main bedroom", "primary bedroom"]],
  ["次卧", "second bedroom", ["小卧室", "副卧"], ["spare bedroom", "guest bedroom"]],
  ["儿童房", "kids' room", ["孩子房间", "小孩屋"], ["nursery", "children's room"]],
  ["书房", "study", ["工作间", "办公室"], ["home office", "den"]],
  ["厨房", "kitchen", ["灶间", "灶房"], ["galley", "cookhouse"]],
  ["餐厅", "dining room", ["饭厅", "用餐区"], ["eating area", "dinette"]],
  ["卫生间", "bathroom", ["浴室", "洗手间", "厕所"], ["restroom", "washroom", "loo"]],
  ["阳台", "balcony", ["露台", "晒台"], ["terrace", "veranda"]],
  ["车库", "garage", ["停车间", "车棚"], ["carport", "car shed"]],
  ["玄关", "entryway", ["门厅", "入户处"], ["foyer", "vestibule"]],
  ["洗衣房", "laundry room", ["洗衣间", "洗涤间"], ["utility room", "wash room"]],
];
const DEVICES: Array<[string, string, string[], string[], string]> = [
  ["灯", "light", ["照明", "灯具", "光源"], ["lamp", "lighting", "luminaire"], "灯泡"],
  ["空调", "air conditioner", ["冷气", "冷暖机"], ["AC unit", "aircon", "cooling unit"], "滤网"],
  ["暖气片", "radiator", ["散热器", "取暖片"], ["heater", "heating panel"], "排气阀"],
  ["窗帘", "curtains", ["帘子", "遮光帘"], ["blinds", "drapes"], "电机"],
  ["电视", "TV", ["电视机", "荧屏"], ["television", "telly"], "遥控器电池"],
  ["音箱", "speaker", ["音响", "扬声器"], ["sound system", "soundbar"], "电池"],
  ["加湿器", "humidifier", ["增湿机", "喷雾机"], ["mist maker", "vaporizer"], "滤芯"],
  ["空气净化器", "air purifier", ["净化机", "滤霾机"], ["air cleaner", "air filter unit"], "滤芯"],
  ["风扇", "fan", ["电扇", "吊扇"], ["ceiling fan", "cooling fan"], "扇叶"],
  ["摄像头", "camera", ["监控", "监视器"], ["CCTV", "webcam"], "存储卡"],
  ["烟雾报警器", "smoke alarm", ["烟感", "火警探测器"], ["smoke detector", "fire alarm"], "电池"],
  ["智能插座", "smart plug", ["插头", "排插"], ["outlet", "socket"], "保险丝"],
  ["扫地机器人", "robot vacuum", ["扫地机", "吸尘机器人"], ["Roomba", "robovac"], "边刷"],
  ["除湿机", "dehumidifier", ["抽湿机", "干燥机"], ["moisture remover", "damp remover"], "水箱"],
  ["温控器", "thermostat", ["恒温器", "温度控制器"], ["temperature controller", "climate dial"], "电池"],
  ["门锁", "door lock", ["智能锁", "门禁"], ["smart lock", "deadbolt"], "电池"],
  ["热水器", "water heater", ["锅炉", "烧水器"], ["boiler", "geyser"], "镁棒"],
  ["冰箱", "fridge", ["冰柜", "冷藏柜"], ["refrigerator", "icebox"], "除味剂"],
  ["洗衣机", "washing machine", ["洗衣器", "滚筒机"], ["washer", "laundry machine"], "过滤网"],
  ["路由器", "router", ["光猫", "网关"], ["modem", "gateway"], "天线"],
];
const PART_EN: Record<string, string> = {
  灯泡: "bulb",
  滤网: "filter",
  排气阀: "bleed valve",
  电机: "motor",
  遥控器电池: "remote batteries",
  电池: "battery",
  滤芯: "filter cartridge",
  扇叶: "blades",
  存储卡: "memory card",
  保险丝: "fuse",
  边刷: "side brush",
  水箱: "water tank",
  镁棒: "anode rod",
  除味剂: "deodoriser",
  过滤网: "lint filter",
  天线: "antenna",
};
const BRANDS = [
  "Philips",
  "Xiaomi",
  "Midea",
  "Gree",
  "Haier",
  "Bosch",
  "Dyson",
  "Sony",
  "Panasonic",
  "Aqara",
  "TP-Link",
  "Ecovacs",
];
const BUTTONS = [["电源", "power"], ["复位", "reset"], ["模式", "mode"], ["配对", "pairing"]];

// A second sentence of everyday context, as real notes have; it adds shared words across notes, which is realistic noise.
const EXTRA_ZH = [
  "这是去年装修时一起装好的，安装师傅留了名片在抽屉里。",
  "如果还有问题，先看说明书，再打售后电话咨询。",
  "这件事已经告诉了家里其他人，大家都知道。",
  "上次出问题是在搬家那段时间，后来一直正常。",
  "每次处理完都在这里补一条记录，方便以后查。",
  "家里老人不太会用手机操作，需要时帮他们一下。",
];
const EXTRA_EN = [
  "It was installed during last year's renovation; the installer's card is in the drawer.",
  "If anything else goes wrong, check the manual first, then call the service line.",
  "Everyone at home has been told about this already.",
  "The last problem was around the time we moved in; it has been fine since.",
  "We add a line here every time something is done, so it is easy to look up later.",
  "The grandparents are not used to the phone app, so help them when needed.",
];
const isZh = (text: string) => /\p{sc=Han}/u.test(text.slice(0, 12));

const notes: Note[] = [];
const queries: Query[] = [];
let noteNo = 0;
const addNote = (text: string, time: string) => {
  const id = `n${String(++noteNo).padStart(4, "0")}`;
  const full = `${text}${isZh(text) ? "" : " "}${pick(isZh(text) ? EXTRA_ZH : EXTRA_EN)}`;
  notes.push({ id, text: full, time });
  return { id, text: full };
};
const addQuery = (text: string, gold: string, category: Category) =>
  queries.push({ id: `q${String(queries.length + 1).padStart(3, "0")}`, text, gold: [gold], category });

/** Letter bigrams of a text (CJK characters and Latin letters), for the "shares no content bigram" rule. */
function letterBigrams(text: string): Set<string> {
  const out = new Set<string>();
  for (const run of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
    const chars = [...run];
    for (let i = 0; i + 1 < chars.length; i++) out.add(chars[i]! + chars[i + 1]!);
  }
  return out;
}
const sharesBigram = (a: string, b: string) => {
  const x = letterBigrams(a);
  for (const bigram of letterBigrams(b)) if (x.has(bigram)) return true;
  return false;
};

// 1. Device facts: model, schedule, maintenance, reset — for every room and device; each in zh or en.
type Fact = { id: string; zh: boolean; room: number; device: number; kind: string; text: string };
const facts: Fact[] = [];
for (let r = 0; r < ROOMS.length; r++) {
  for (let d = 0; d < DEVICES.length; d++) {
    const [rz, re] = ROOMS[r]!;
    const [dz, de, , , part] = DEVICES[d]!;
    const kinds = {
      model: () => {
        const brand = pick(BRANDS),
          model = `${String.fromCharCode(65 + int(0, 25))}${int(100, 999)}`,
          when = date(),
          years = int(1, 5);
        return [
          `${rz}的${dz}是 ${brand} ${model}，${when} 购买，保修 ${years} 年，发票在文件柜里。`,
          `The ${de} in the ${re} is a ${brand} ${model}, bought on ${when} with a ${years}-year warranty; the receipt is in the filing cabinet.`,
        ];
      },
      schedule: () => {
        const on = random() < 0.5, time = `${int(5, 23)}:${pick(["00", "15", "30", "45"])}`;
        return [
          `${rz}的${dz}每天 ${time} 自动${on ? "开启" : "关闭"}，周末也一样，不需要手动操作。`,
          `The ${re} ${de} switches ${
            on ? "on" : "off"
          } automatically at ${time} every day, weekends included, no manual step needed.`,
        ];
      },
      maintenance: () => {
        const months = int(1, 12), when = date(2026);
        return [
          `${rz}${dz}的${part}每 ${months} 个月更换一次，上次更换在 ${when}，备件放在储物间。`,
          `The ${
            PART_EN[part]
          } of the ${re} ${de} is replaced every ${months} months; last replaced on ${when}, spares are in the store room.`,
        ];
      },
      reset: () => {
        const [bz, be] = pick(BUTTONS), seconds = int(3, 15);
        return [
          `${rz}的${dz}如果没有反应，长按机身上的${bz}键 ${seconds} 秒即可重置，再重新配网。`,
          `If the ${re} ${de} stops responding, hold the ${be} button on the unit for ${seconds} seconds to reset it, then pair it again.`,
        ];
      },
    };
    for (const [kind, make] of Object.entries(kinds)) {
      const zh = random() < 0.55;
      const [z, e] = make();
      const note = addNote(zh ? z! : e!, date());
      facts.push({ id: note.id, zh, room: r, device: d, kind, text: note.text });
    }
  }
}

// 2. Household log entries: dated events that mention rooms and devices (realistic distractors).
const EVENTS = [
  ["发出异响，已请师傅上门检查", "made a strange noise; a technician came to check it"],
  ["漏水了，地板已擦干，等售后回电", "leaked water; the floor was dried and we are waiting for the service call"],
  ["突然断电，重启后恢复正常", "lost power suddenly and worked again after a restart"],
  ["被孩子调乱了设置，已恢复默认", "had its settings changed by the kids and was reset to defaults"],
  ["固件自动升级到新版本", "updated its firmware automatically"],
  ["表面清洁了一遍，用的是中性清洁剂", "was wiped clean with a mild detergent"],
];
for (let i = 0; i < 950; i++) {
  const [rz, re] = pick(ROOMS);
  const [dz, de] = pick(DEVICES);
  const [ez, ee] = pick(EVENTS);
  const when = date();
  addNote(random() < 0.55 ? `${when} 记录：${rz}的${dz}${ez}。` : `Log ${when}: the ${de} in the ${re} ${ee}.`, when);
}

// 3. People, items, contacts, recipes, chores.
const PEOPLE: Array<[string, string]> = [
  ["妈妈", "Mom"],
  ["爸爸", "Dad"],
  ["奶奶", "Grandma"],
  ["爷爷", "Grandpa"],
  ["小明", "Xiaoming"],
  ["小红", "Xiaohong"],
  ["保姆刘阿姨", "Auntie Liu the nanny"],
  ["舅舅", "Uncle Wei"],
];
const FOODS: Array<[string, string]> = [
  ["花生", "peanuts"],
  ["虾", "shrimp"],
  ["牛奶", "milk"],
  ["芒果", "mango"],
  ["鸡蛋", "eggs"],
  ["海鲜", "seafood"],
  ["小麦", "wheat"],
  ["猫毛", "cat hair"],
];
const personFacts: Array<{ id: string; zh: boolean; p: number; kind: string }> = [];
PEOPLE.forEach(([pz, pe], p) => {
  const [fz, fe] = FOODS[p]!;
  const month = int(1, 12), day = int(1, 28), temp = int(20, 26), wake = `${int(5, 8)}:${pick(["00", "30"])}`;
  const items: Array<[string, string, string]> = [
    [
      "allergy",
      `${pz}对${fz}过敏，做饭和点外卖时都要避开，家里常备抗过敏药。`,
      `${pe} is allergic to ${fe}; avoid it when cooking or ordering food, antihistamines are in the medicine box.`,
    ],
    [
      "birthday",
      `${pz}的生日是 ${month} 月 ${day} 日，每年提前一周提醒准备礼物。`,
      `${pe}'s birthday is on ${month}/${day}; remind us a week ahead every year to get a present.`,
    ],
    [
      "temperature",
      `${pz}睡觉时喜欢室温 ${temp} 度，太冷会咳嗽。`,
      `${pe} likes the room at ${temp} degrees when sleeping; colder makes them cough.`,
    ],
    [
      "wake",
      `${pz}工作日 ${wake} 起床，需要提前十分钟打开卧室窗帘。`,
      `${pe} gets up at ${wake} on weekdays; open the bedroom curtains ten minutes before.`,
    ],
  ];
  for (const [kind, z, e] of items) {
    const zh = random() < 0.5;
    personFacts.push({ id: addNote(zh ? z : e, date()).id, zh, p, kind });
  }
});
const ITEMS: Array<[string, string]> = [
  ["备用钥匙", "spare key"],
  ["护照", "passports"],
  ["户口本", "household register"],
  ["医药箱", "first-aid kit"],
  ["工具箱", "toolbox"],
  ["5号电池", "AA batteries"],
  ["备用灯泡", "spare bulbs"],
  ["螺丝刀", "screwdriver"],
  ["雨伞", "umbrellas"],
  ["手电筒", "flashlight"],
  ["保修卡", "warranty cards"],
  ["猫粮", "cat food"],
  ["垃圾袋", "bin bags"],
  ["蜡烛", "candles"],
  ["胶带", "tape"],
  ["剪刀", "scissors"],
  ["针线盒", "sewing kit"],
  ["充电宝", "power bank"],
  ["体温计", "thermometer"],
  ["口罩", "face masks"],
];
const FURNITURE: Array<[string, string]> = [
  ["电视柜", "TV cabinet"],
  ["鞋柜", "shoe cabinet"],
  ["书桌", "desk"],
  ["床头柜", "bedside table"],
  ["储物架", "storage shelf"],
  ["衣柜", "wardrobe"],
];
const itemFacts: Array<{ id: string; zh: boolean; i: number }> = [];
ITEMS.forEach(([iz, ie], i) => {
  const [rz, re] = pick(ROOMS);
  const [fz, fe] = pick(FURNITURE);
  const layer = int(1, 3);
  const zh = random() < 0.5;
  itemFacts.push({
    id: addNote(
      zh
        ? `${iz}放在${rz}${fz}的第 ${layer} 层抽屉里，用完请放回原处。`
        : `The ${ie} are kept in drawer ${layer} of the ${fe} in the ${re}; please put them back after use.`,
      date(),
    ).id,
    zh,
    i,
  });
});
const CONTACTS: Array<[string, string]> = [
  ["物业", "building management"],
  ["水电工王师傅", "Mr. Wang the electrician"],
  ["开锁师傅", "the locksmith"],
  ["宠物医院", "the vet clinic"],
  ["快递驿站", "the parcel station"],
  ["家政公司", "the cleaning company"],
  ["燃气公司", "the gas company"],
  ["宽带客服", "broadband support"],
  ["小区保安", "estate security"],
  ["社区医院", "the community clinic"],
];
CONTACTS.forEach(([cz, ce]) => {
  const phone = `1${int(30, 89)}${int(1000, 9999)}${int(1000, 9999)}`;
  addNote(
    random() < 0.5
      ? `${cz}的电话是 ${phone}，工作时间早九点到晚六点。`
      : `Phone number of ${ce}: ${phone}, reachable 9am to 6pm.`,
    date(),
  );
});
const DISHES: Array<[string, string, string, string]> = [
  [
    "番茄炒蛋",
    "tomato scrambled eggs",
    "先炒蛋盛出，再炒番茄出汁后回锅，加少许糖提鲜。",
    "scramble the eggs first, fry the tomatoes until juicy, combine and add a pinch of sugar.",
  ],
  [
    "红烧肉",
    "braised pork belly",
    "五花肉焯水后炒糖色，加酱油和八角小火炖一个半小时。",
    "blanch the pork belly, caramelise sugar, add soy sauce and star anise, simmer 90 minutes.",
  ],
  [
    "可乐鸡翅",
    "cola chicken wings",
    "鸡翅两面煎黄，倒入一罐可乐和生抽，收汁即可。",
    "brown the wings on both sides, add a can of cola and light soy sauce, reduce the sauce.",
  ],
  [
    "清蒸鱼",
    "steamed fish",
    "鱼身划刀放姜片，水开后蒸八分钟，淋热油和蒸鱼豉油。",
    "score the fish, add ginger, steam eight minutes after boiling, finish with hot oil and soy.",
  ],
  [
    "蛋炒饭",
    "egg fried rice",
    "用隔夜米饭，大火快炒，先下蛋液再下饭，最后撒葱花。",
    "use day-old rice over high heat, egg first then rice, scallions at the end.",
  ],
  [
    "酸辣土豆丝",
    "hot and sour potato strips",
    "土豆丝泡水去淀粉，干辣椒爆香后大火翻炒，出锅前淋醋。",
    "soak the potato strips, fry dried chilli, stir-fry on high heat, add vinegar at the end.",
  ],
  [
    "皮蛋瘦肉粥",
    "century egg and pork congee",
    "大米提前泡一小时，煮开后转小火，加皮蛋和肉末再煮二十分钟。",
    "soak rice for an hour, simmer, add century egg and minced pork for twenty more minutes.",
  ],
  [
    "宫保鸡丁",
    "kung pao chicken",
    "鸡丁用淀粉腌制，花椒干辣椒爆香，最后加花生米。",
    "marinate chicken cubes with starch, fry Sichuan pepper and chilli, add peanuts last.",
  ],
];
const dishFacts: Array<{ id: string; zh: boolean; d: number }> = [];
DISHES.forEach(([dz, de, sz, se], d) => {
  const zh = random() < 0.5;
  dishFacts.push({
    id: addNote(zh ? `${dz}的做法（家里常做的版本）：${sz}` : `How we make ${de} at home: ${se}`, date()).id,
    zh,
    d,
  });
});

// 4. Superseded facts: an old value and a newer one; the current value is the gold.
const CHANGING: Array<[string, string, () => string, string, string]> = [
  [
    "家里 WiFi 密码",
    "home WiFi password",
    () => `Home${int(1000, 9999)}!`,
    "WiFi 密码是多少？",
    "What is the WiFi password?",
  ],
  [
    "访客 WiFi 密码",
    "guest WiFi password",
    () => `guest${int(100, 999)}`,
    "访客网络密码是什么？",
    "What's the guest network password?",
  ],
  [
    "大门密码",
    "front door code",
    () => `${int(100000, 999999)}`,
    "大门密码是多少？",
    "What is the code for the front door?",
  ],
  ["车库门密码", "garage door code", () => `${int(1000, 9999)}`, "车库门密码是多少？", "What's the garage door code?"],
  [
    "保姆刘阿姨的手机号",
    "phone number of Auntie Liu",
    () => `13${int(100000000, 999999999)}`,
    "刘阿姨电话多少？",
    "What is Auntie Liu's phone number?",
  ],
  [
    "倒垃圾的日子",
    "trash collection day",
    () => pick(["周一和周四", "周二和周五", "周三和周六"]),
    "哪天倒垃圾？",
    "Which day is trash collection?",
  ],
  [
    "客厅空调默认温度",
    "default living room AC temperature",
    () => `${int(22, 27)} 度`,
    "客厅空调默认设多少度？",
    "What temperature is the living room AC set to by default?",
  ],
  ["送奶时间", "milk delivery time", () => `早上 ${int(5, 7)} 点`, "送奶几点来？", "When does the milk delivery come?"],
  [
    "钟点工来的时间",
    "cleaner's visiting day",
    () => pick(["每周二下午", "每周四上午", "每周六上午"]),
    "钟点工什么时候来？",
    "When does the cleaner come?",
  ],
  [
    "安防系统撤防码",
    "alarm disarm code",
    () => `${int(1000, 9999)}`,
    "安防撤防码是多少？",
    "What is the alarm disarm code?",
  ],
  [
    "小明的辅导班时间",
    "Xiaoming's tutoring time",
    () => pick(["周三晚上七点", "周五晚上六点", "周日上午十点"]),
    "小明辅导班什么时候上？",
    "When is Xiaoming's tutoring class?",
  ],
  [
    "宽带账号密码",
    "broadband account password",
    () => `bb${int(10000, 99999)}`,
    "宽带密码是什么？",
    "What's the broadband password?",
  ],
  [
    "猫粮品牌",
    "cat food brand",
    () => pick(["皇家", "渴望", "冠能", "爱肯拿"]),
    "猫现在吃哪个牌子的粮？",
    "Which cat food brand do we buy now?",
  ],
  [
    "奶奶的降压药剂量",
    "Grandma's blood pressure pill dose",
    () => `每天 ${int(1, 2)} 片`,
    "奶奶降压药每天吃几片？",
    "How many blood pressure pills does Grandma take a day?",
  ],
  [
    "电费缴费日",
    "electricity bill due date",
    () => `每月 ${int(1, 28)} 号`,
    "电费每月几号交？",
    "When is the electricity bill due each month?",
  ],
  [
    "小区门禁卡密码",
    "estate gate card PIN",
    () => `${int(1000, 9999)}`,
    "门禁卡密码多少？",
    "What's the PIN for the estate gate card?",
  ],
  [
    "热水器预约时间",
    "water heater timer",
    () => `晚上 ${int(18, 22)} 点`,
    "热水器预约几点加热？",
    "When does the water heater timer start heating?",
  ],
  [
    "扫地机器人清扫时间",
    "robot vacuum cleaning time",
    () => `每天上午 ${int(9, 11)} 点`,
    "扫地机器人几点开始扫地？",
    "What time does the robot vacuum start cleaning?",
  ],
  [
    "冰箱冷藏温度",
    "fridge temperature",
    () => `${int(2, 6)} 度`,
    "冰箱冷藏设的几度？",
    "What temperature is the fridge set to?",
  ],
  [
    "停车位号码",
    "parking space number",
    () => `B${int(1, 3)}-${int(100, 399)}`,
    "我们的车位号是多少？",
    "What is our parking space number?",
  ],
  [
    "物业费标准",
    "management fee rate",
    () => `每平米 ${int(2, 5)} 元`,
    "物业费多少钱一平？",
    "How much is the management fee per square metre?",
  ],
  [
    "孩子的校车时间",
    "school bus pickup time",
    () => `早上 7:${pick(["05", "15", "25"])}`,
    "校车几点到？",
    "What time does the school bus come?",
  ],
];
CHANGING.forEach(([fz, fe, value, qz, qe], index) => {
  const zh = random() < 0.5;
  const oldWhen = date(2024), newWhen = date(2026);
  const v1 = value(), v2 = value();
  addNote(zh ? `${oldWhen} 记下：${fz}是 ${v1}。` : `${oldWhen} note: the ${fe} is ${v1}.`, oldWhen);
  const current = addNote(
    zh
      ? `${newWhen} 更新：${fz}已改为 ${v2}，之前的作废。`
      : `${newWhen} update: the ${fe} has changed to ${v2}; the old one no longer works.`,
    newWhen,
  );
  addQuery(index % 2 ? qe : qz, current.id, "superseded");
});

// 5. Queries over device facts.
const KIND_ZH: Record<string, (r: string, d: string, part: string) => string> = {
  model: (r, d) => `${r}${d}是什么牌子和型号？`,
  schedule: (r, d) => `${r}${d}每天几点自动开关？`,
  maintenance: (r, d, part) => `${r}${d}的${part}多久换一次？`,
  reset: (r, d) => `${r}${d}没反应了怎么重置？`,
};
const KIND_EN: Record<string, (r: string, d: string, part: string) => string> = {
  model: (r, d) => `What brand and model is the ${d} in the ${r}?`,
  schedule: (r, d) => `At what time does the ${r} ${d} switch on or off each day?`,
  maintenance: (r, d, part) => `How often do we replace the ${part} of the ${r} ${d}?`,
  reset: (r, d) => `The ${r} ${d} is unresponsive, how do I reset it?`,
};
// Alias forms avoid every word of the note: other names for the room and device, other words for the question.
const KIND_ZH_ALIAS: Record<string, (r: string, d: string) => string> = {
  model: (r, d) => `${r}那台${d}出自谁家厂商？`,
  schedule: (r, d) => `${r}${d}定在几时亮起或熄灭？`,
  maintenance: (r, d) => `${r}${d}耗材隔多长时间要换新？`,
  reset: (r, d) => `${r}${d}卡死失灵该如何恢复出厂？`,
};
const KIND_EN_ALIAS: Record<string, (r: string, d: string) => string> = {
  model: (r, d) => `Who manufactured our ${r} ${d}?`,
  schedule: (r, d) => `When does our ${r} ${d} come alive or go dark?`,
  maintenance: (r, d) => `How frequently must consumables for our ${r} ${d} get swapped?`,
  reset: (r, d) => `Our ${r} ${d} froze completely; what restores factory state?`,
};

const shuffled = [...facts].sort(() => random() - 0.5);
let cursor = 0;
const nextFact = (accept: (fact: Fact) => boolean) => {
  for (let tries = 0; tries < shuffled.length; tries++) {
    const fact = shuffled[cursor++ % shuffled.length]!;
    if (accept(fact)) return fact;
  }
  throw new Error("no fact fits");
};
const used = new Set<string>();

// Alias / paraphrase: same language, no shared letter bigram with the gold note.
let aliases = 0;
for (let attempts = 0; aliases < 60 && attempts < 5000; attempts++) {
  const fact = nextFact((f) => !used.has(f.id));
  const [, , rza, rea] = ROOMS[fact.room]!;
  const [, , dza, dea] = DEVICES[fact.device]!;
  const text = fact.zh
    ? KIND_ZH_ALIAS[fact.kind]!(pick(rza), pick(dza))
    : KIND_EN_ALIAS[fact.kind]!(pick(rea), pick(dea));
  if (sharesBigram(text, fact.text)) continue;
  used.add(fact.id);
  addQuery(text, fact.id, "alias");
  aliases++;
}
// Cross-language: the query in the other language.
for (let i = 0; i < 60; i++) {
  const fact = nextFact((f) => !used.has(f.id));
  used.add(fact.id);
  const [rz, re] = ROOMS[fact.room]!;
  const [dz, de, , , part] = DEVICES[fact.device]!;
  addQuery(
    fact.zh ? KIND_EN[fact.kind]!(re, de, PART_EN[part]!) : KIND_ZH[fact.kind]!(rz, dz, part),
    fact.id,
    "cross_language",
  );
}
// Near duplicates: same device and kind in several rooms; the query names one room, in the note's language.
for (let i = 0; i < 60; i++) {
  const fact = nextFact((f) =>
    !used.has(f.id) && (f.device === 0 || f.device === 1 || f.device === 3 || f.device === 4)
  );
  used.add(fact.id);
  const [rz, re] = ROOMS[fact.room]!;
  const [dz, de, , , part] = DEVICES[fact.device]!;
  addQuery(
    fact.zh ? KIND_ZH[fact.kind]!(rz, dz, part) : KIND_EN[fact.kind]!(re, de, PART_EN[part]!),
    fact.id,
    "near_duplicate",
  );
}
// Plain: people, items, dishes, and some device facts, in the note's language or the other.
const PERSON_Q: Record<string, [(p: string, f: string) => string, (p: string, f: string) => string]> = {
  allergy: [(p) => `${p}对什么过敏？`, (p) => `What is ${p} allergic to?`],
  birthday: [(p) => `${p}生日是哪天？`, (p) => `When is ${p}'s birthday?`],
  temperature: [(p) => `${p}睡觉喜欢多少度？`, (p) => `What room temperature does ${p} like for sleeping?`],
  wake: [(p) => `${p}几点起床？`, (p) => `What time does ${p} get up on weekdays?`],
};
for (const fact of personFacts.filter((_, i) => i % 2 === 0)) {
  const [pz, pe] = PEOPLE[fact.p]!;
  const [zhQ, enQ] = PERSON_Q[fact.kind]!;
  addQuery(fact.zh ? zhQ(pz, "") : enQ(pe, ""), fact.id, "plain");
}
for (const fact of itemFacts) {
  const [iz, ie] = ITEMS[fact.i]!;
  addQuery(fact.zh ? `${iz}放在哪里？` : `Where are the ${ie} kept?`, fact.id, "plain");
}
for (const fact of dishFacts) {
  const [dz, de] = DISHES[fact.d]!;
  addQuery(fact.zh ? `${dz}怎么做？` : `How do we cook ${de}?`, fact.id, "plain");
}

const lengths = notes.map((n) => [...n.text].length).sort((a, b) => a - b);
const counts = Object.fromEntries(
  ["plain", "alias", "cross_language", "near_duplicate", "superseded"].map((c) => [
    c,
    queries.filter((q) => q.category === c).length,
  ]),
);
const summary = {
  notes: notes.length,
  median_chars: lengths[Math.floor(lengths.length / 2)],
  queries: queries.length,
  ...counts,
};
await Deno.writeTextFile(
  new URL("./home_set.json", import.meta.url),
  `${JSON.stringify({ summary, notes, queries })}\n`,
);
console.log(summary);

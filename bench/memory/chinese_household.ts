/**
 * The material of the Chinese conversation-memory set (`make_chinese_set.ts`): the two households, the words that
 * fill their routine, and what is planted in it — facts, plans with time words, relations that take two turns,
 * contradictions. Written as ordinary family talk before any recall rule was fitted to it.
 *
 * @module
 */

import type { SeededRandom } from "../support/seeded_random.ts";

/** A household's cast: who is who, and the words that fill its slots. */
export interface Cast {
  name: string;
  split: "tune" | "test";
  seed: number;
  /** Display names: [grandfather, grandmother, father, mother, older child, younger child]. */
  members: [string, string, string, string, string, string];
  /** How the family refers to each (used inside sentences). */
  refer: [string, string, string, string, string, string];
  olderSchool: string;
  youngerSchool: string;
  classmates: string[];
  relatives: string[];
}

export const CASTS: Cast[] = [
  {
    name: "王家",
    split: "tune",
    seed: 20261204,
    members: ["爷爷", "奶奶", "爸爸", "妈妈", "小雨", "小乐"],
    refer: ["爷爷", "奶奶", "爸爸", "妈妈", "小雨", "小乐"],
    olderSchool: "初二",
    youngerSchool: "一年级",
    classmates: ["张浩", "李思琪", "赵子轩", "陈可欣", "刘一鸣", "孙悦"],
    relatives: ["大姑", "二叔", "表哥", "小姨", "舅舅"],
  },
  {
    name: "林家",
    split: "test",
    seed: 20261205,
    members: ["外公", "外婆", "林峰", "周敏", "一帆", "朵朵"],
    refer: ["外公", "外婆", "林峰", "周敏", "一帆", "朵朵"],
    olderSchool: "高一",
    youngerSchool: "幼儿园大班",
    classmates: ["吴昊然", "郑雨桐", "黄俊杰", "何佳怡", "马天宇", "罗欣妍"],
    relatives: ["姨妈", "大舅", "表姐", "姑姑", "堂哥"],
  },
];

const PLACES = [
  "菜市场",
  "超市",
  "医院",
  "银行",
  "公园",
  "药店",
  "邮局",
  "图书馆",
  "老年大学",
  "社区医院",
  "商场",
  "菜鸟驿站",
];
const BOUGHT = [
  "排骨",
  "西瓜",
  "鸡蛋",
  "酸奶",
  "拖鞋",
  "雨伞",
  "电池",
  "洗衣液",
  "大米",
  "苹果",
  "牙膏",
  "毛巾",
  "茶叶",
  "虾",
];
const FOODS = ["饺子", "牛肉面", "麻辣烫", "盖浇饭", "馄饨", "煎饼", "炒河粉", "凉皮", "包子", "米线"];
const ACQUAINTANCES = [
  "楼下王阿姨",
  "以前的同事老李",
  "小区门口的保安",
  "隔壁的刘叔叔",
  "老同学张老师",
  "社区的李主任",
];
const ROOMS = ["客厅", "厨房", "卧室", "书房", "卫生间", "阳台"];
const DISHES = ["红烧肉", "西红柿炒鸡蛋", "清蒸鱼", "糖醋排骨", "土豆丝", "可乐鸡翅", "酸菜鱼", "宫保鸡丁"];

/**
 * The routine of a household: what fills the sessions between planted facts.
 *
 * @example
 * ```ts
 * import { seededRandom } from "../support/seeded_random.ts";
 *
 * fillers(CASTS[0]!, seededRandom(1))[0]!(2); // "把客厅的灯关一下。" (a room drawn from the seed)
 * ```
 */
export function fillers(cast: Cast, random: SeededRandom): Array<(speaker: number) => string> {
  const { pick, int } = random;
  const [gf, gm, , , older, younger] = cast.refer;
  return [
    () => `把${pick(ROOMS)}的灯关一下。`,
    () => `今天好热，空调开到${int(24, 27)}度吧。`,
    () => `晚上吃${pick(DISHES)}怎么样？`,
    () => "收到",
    () => "好的",
    () => "哈哈哈哈",
    () => "[图片]",
    () => `${older}作业写完了吗？别老玩手机。`,
    () => `${younger}今天在学校乖不乖？`,
    () => `明天${pick(["下雨", "降温", "有雷阵雨", "三十五度"])}，出门注意。`,
    () => `${gf}记得吃药啊。`,
    () => `${gm}腿还疼吗？`,
    () => `谁把${pick(ROOMS)}的窗户开着了？`,
    () => `快递到了，在${pick(["门口", "菜鸟驿站", "快递柜"])}。`,
    () => `我${pick(["快到家了", "加班，晚点回", "在路上", "下班了"])}。`,
    () => `洗衣机里的衣服谁晾一下。`,
    () => `${pick(BOUGHT)}没有了，记一下明天买。`,
    () => `周末要不要去${pick(["公园", "爬山", "看电影", "吃火锅", "外婆家"])}？`,
    () => `${younger}${pick(["又把玩具扔了一地", "今天自己穿的衣服", "吵着要吃冰淇淋", "睡着了"])}。`,
    () => `${older}快考试了，这几天早点睡。`,
    () => `这个季节花粉多，容易过敏，大家注意点。`,
    () => `下个月谁过生日来着？`,
    () => `药箱里的${pick(["创可贴", "体温计", "感冒药"])}快用完了。`,
    () => `电费这个月${int(180, 420)}块，有点多。`,
    () => `${pick(["扫地机", "热水器", "路由器", "电饭煲"])}好像有点问题，回头看看。`,
    () => `今天${pick(["小区停水", "电梯维修", "楼下在装修", "物业来检查燃气"])}，知道一下。`,
    () => `谁看到我的${pick(["眼镜", "钥匙", "充电器", "老花镜", "耳机"])}了？`,
    () => `在${pick(["书房", "沙发上", "鞋柜上", "餐桌上"])}。`,
    () => `${pick(["早", "早上好", "晚安", "辛苦了"])}！`,
    () => `这周的菜我来买，大家想吃什么说一声。`,
  ];
}

/**
 * Reports of a day ("我今天去超市了"): said on many days, so a question naming the day needs the date.
 *
 * @example
 * ```ts
 * import { seededRandom } from "../support/seeded_random.ts";
 *
 * dayReport(seededRandom(1)).ask("奶奶", "前天"); // e.g. "前天奶奶去了哪里？"
 * ```
 */
export function dayReport(random: SeededRandom): { text: string; ask: (who: string, day: string) => string } {
  const { pick, int } = random;
  switch (int(0, 3)) {
    case 0: {
      const place = pick(PLACES);
      return {
        text: `我今天去${place}了，${pick(["人挺多的", "排了半天队", "顺便走了走", "还好不远"])}。`,
        ask: (who, day) => random.pick([`${day}${who}去了哪里？`, `${who}${day}去哪儿了？`]),
      };
    }
    case 1:
      return {
        text: `今天在${pick(["超市", "菜市场", "网上", "楼下小店"])}买了${pick(BOUGHT)}，${int(8, 90)}块。`,
        ask: (who, day) => random.pick([`${day}${who}买了什么？`, `${who}${day}买的是什么东西？`]),
      };
    case 2:
      return {
        text: `中午在外面吃的${pick(FOODS)}，${pick(["还不错", "有点咸", "太辣了", "挺实惠"])}。`,
        ask: (who, day) => random.pick([`${who}${day}中午吃的什么？`, `${day}中午${who}在外面吃了啥？`]),
      };
    default:
      return {
        text: `今天碰到${pick(ACQUAINTANCES)}了，聊了好一会儿。`,
        ask: (who, day) => random.pick([`${day}${who}碰到谁了？`, `${who}${day}遇见了谁？`]),
      };
  }
}

/** A plan with its time word, and what a correction moves it to. */
export interface Plan {
  /** Short name the family uses for it. */
  name: string;
  /** The whole plan, with `{t}` for its time. */
  said: string;
  /** Mentions without a time: distractors. */
  chatter: string[];
  ask: string[];
}

/**
 * See the module doc.
 *
 * @example
 * ```ts
 * import { seededRandom } from "../support/seeded_random.ts";
 *
 * plans(CASTS[0]!)[2]!.said; // "小雨的家长会定在{t}"
 * ```
 */
export function plans(cast: Cast): Plan[] {
  const [gf, gm, dad, mum, older, younger] = cast.refer;
  return [
    {
      name: "医保卡",
      said: `${gf}的医保卡{t}去社区办`,
      chatter: ["医保卡的材料准备好了吗？"],
      ask: [`${gf}的医保卡什么时候办？`],
    },
    { name: "物业费", said: "物业费{t}之前要交", chatter: ["物业费是不是又涨了？"], ask: ["物业费什么时候交？"] },
    { name: "家长会", said: `${older}的家长会定在{t}`, chatter: ["家长会谁去开？"], ask: [`${older}的家长会是哪天？`] },
    { name: "疫苗", said: `${younger}{t}去打疫苗`, chatter: ["打疫苗要带接种本。"], ask: [`${younger}哪天打疫苗？`] },
    { name: "年检", said: "车子年检约在{t}", chatter: ["年检要带行驶证。"], ask: ["车子年检约的什么时候？"] },
    { name: "复查", said: `${gf}的心脏复查在{t}`, chatter: [`${gf}复查要空腹吗？`], ask: [`${gf}什么时候去复查？`] },
    { name: "看牙", said: `${gm}{t}去看牙`, chatter: [`${gm}的牙还疼不疼？`], ask: [`${gm}看牙约在哪天？`] },
    { name: "出差", said: `${dad}{t}去上海出差`, chatter: ["出差的行李箱在阁楼。"], ask: [`${dad}哪天去上海出差？`] },
    {
      name: "体检",
      said: `${mum}单位的体检安排在{t}`,
      chatter: ["体检前一天别吃太油。"],
      ask: [`${mum}单位体检是什么时候？`],
    },
    {
      name: "燃气表",
      said: "燃气公司{t}来换燃气表",
      chatter: ["燃气表换了以后要重新开户吗？"],
      ask: ["燃气公司什么时候来换表？"],
    },
    {
      name: "游泳课",
      said: `${younger}的游泳课{t}开始`,
      chatter: ["游泳帽买了没有？"],
      ask: [`${younger}的游泳课哪天开始？`],
    },
    {
      name: "期末考试",
      said: `${older}的期末考试{t}`,
      chatter: ["期末考试复习得怎么样了？"],
      ask: [`${older}期末考试在哪天？`],
    },
    { name: "爬山", said: "全家{t}去爬香山", chatter: ["爬山要穿运动鞋。"], ask: ["全家什么时候去爬香山？"] },
    {
      name: "修热水器",
      said: "修热水器的师傅{t}上门",
      chatter: ["热水器又不出热水了。"],
      ask: ["修热水器的师傅哪天来？"],
    },
  ];
}

/** Time words a plan is given, relative to the day it is said. */
export const PLAN_TIMES = [
  "下个月初",
  "月底",
  "下周三",
  "下周五上午",
  "大后天",
  "这周六上午",
  "下个月中旬",
  "下周一下午",
  "后天上午十点",
  "下个月五号",
  "周日下午",
  "下礼拜二",
];

/** A fact said once, and how it is asked. `update`: said again, changed, later (the newer is the evidence). */
export interface Fact {
  speaker: number;
  said: string;
  ask: string[];
  update?: { speaker: number; said: string; ask: string[] };
}

/**
 * See the module doc.
 *
 * @example
 * ```ts
 * import { seededRandom } from "../support/seeded_random.ts";
 *
 * facts(CASTS[0]!, seededRandom(1))[0]!.said; // "小乐对花生过敏，买零食一定看配料表。"
 * ```
 */
export function facts(cast: Cast, random: SeededRandom): Fact[] {
  const { pick, int } = random;
  const [gf, gm, dad, , older, younger] = cast.refer;
  const month = () => int(1, 12);
  return [
    { speaker: 3, said: `${younger}对花生过敏，买零食一定看配料表。`, ask: [`${younger}对什么过敏？`] },
    { speaker: 2, said: `${gf}对青霉素过敏，看病记得跟医生说。`, ask: [`${gf}对哪种药过敏？`] },
    { speaker: 4, said: `我对芒果过敏，一吃嘴就肿。`, ask: [`${older}吃什么会过敏？`] },
    { speaker: 1, said: `我海鲜过敏，虾蟹都不能吃。`, ask: [`${gm}是不是有什么过敏的？`] },
    {
      speaker: 0,
      said: "医生给我开的降压药是氨氯地平，每天早上一片。",
      ask: [`${gf}吃的降压药叫什么？`],
      update: {
        speaker: 3,
        said: `医生说${gf}的降压药换成缬沙坦了，还是早上吃。`,
        ask: [`${gf}现在吃的是什么降压药？`],
      },
    },
    { speaker: 1, said: "我的二甲双胍一天两次，饭后吃。", ask: [`${gm}的二甲双胍一天吃几次？`] },
    { speaker: 3, said: `${younger}咳嗽的话吃半包小儿止咳颗粒，别多给。`, ask: [`${younger}咳嗽吃多少止咳颗粒？`] },
    {
      speaker: 2,
      said: `${gm}生日是${month()}月${int(1, 28)}号，今年想给她办一桌。`,
      ask: [`${gm}的生日是几月几号？`],
    },
    { speaker: 3, said: `${dad}的生日是${month()}月${int(1, 28)}号，别又忘了。`, ask: [`${dad}生日是哪天？`] },
    {
      speaker: 4,
      said: `我最好的朋友${cast.classmates[5]}生日是${month()}月${int(1, 28)}号。`,
      ask: [`${cast.classmates[5]}的生日是哪天？`],
    },
    { speaker: 4, said: `我最喜欢吃${pick(DISHES)}，${gm}做的最好吃。`, ask: [`${older}最爱吃什么菜？`] },
    { speaker: 0, said: "我不吃香菜，做菜别放。", ask: [`${gf}有什么不吃的？`] },
    { speaker: 2, said: "我喝咖啡不加糖，加点牛奶就行。", ask: [`${dad}的咖啡要加糖吗？`] },
    { speaker: 5, said: "我喜欢恐龙，最喜欢霸王龙！", ask: [`${younger}喜欢什么动物？`] },
    {
      speaker: 2,
      said: "家里无线网密码是 wang8866，客人来了告诉他们。",
      ask: ["家里wifi密码是多少？"],
      update: { speaker: 2, said: "路由器换了，无线网密码改成 sunshine2026 了。", ask: ["现在的无线网密码是什么？"] },
    },
    {
      speaker: 1,
      said: "备用钥匙我放在鞋柜最上面一层了。",
      ask: ["备用钥匙放在哪里？"],
      update: { speaker: 3, said: "备用钥匙我挪到书房抽屉里了，鞋柜那里不安全。", ask: ["备用钥匙现在在哪？"] },
    },
    {
      speaker: 3,
      said: `${older}的班主任是${pick(["刘", "杨", "周", "吴"])}老师，电话在我这。`,
      ask: [`${older}的班主任姓什么？`],
    },
    { speaker: 2, said: `车牌号是京A${int(10000, 99999)}，停车场登记要用。`, ask: ["我们家的车牌号是多少？"] },
    { speaker: 3, said: `物业的电话是 ${int(6000, 6999)}${int(1000, 9999)}，有事打这个。`, ask: ["物业电话是多少？"] },
    {
      speaker: 3,
      said: `${younger}的钢琴课每周四下午四点。`,
      ask: [`${younger}钢琴课是星期几？`],
      update: {
        speaker: 2,
        said: `钢琴老师说以后${younger}的钢琴课改到周六上午了。`,
        ask: [`${younger}的钢琴课现在是周几？`],
      },
    },
    { speaker: 0, said: `我的老花镜度数是二百五十度，再配就按这个。`, ask: [`${gf}老花镜多少度？`] },
    {
      speaker: 1,
      said: `${cast.relatives[0]}家的孩子今年考上大学了，在武汉。`,
      ask: [`${cast.relatives[0]}家孩子在哪上大学？`],
    },
  ];
}

/**
 * Two turns that answer together: a relation, then a fact about the one it names.
 *
 * @example
 * ```ts
 * import { seededRandom } from "../support/seeded_random.ts";
 *
 * chains(CASTS[0]!, seededRandom(1))[0]![2]; // "小乐同桌的生日是哪天？"
 * ```
 */
export function chains(cast: Cast, random: SeededRandom): Array<[Fact, Fact, string]> {
  const { pick, int } = random;
  const [gf, gm, , , older, younger] = cast.refer;
  const [a, b, c, d] = cast.classmates;
  return [
    [
      { speaker: 5, said: `我的同桌叫${a}，他会画画。`, ask: [] },
      { speaker: 3, said: `${a}的生日是${int(6, 12)}月${int(1, 28)}号，他妈妈说要请同学去玩。`, ask: [] },
      `${younger}同桌的生日是哪天？`,
    ],
    [
      { speaker: 4, said: `我们班的数学课代表是${b}，成绩特别好。`, ask: [] },
      { speaker: 4, said: `${b}家住在${pick(["阳光小区", "翠湖花园", "东方家园"])}，离我们不远。`, ask: [] },
      `${older}班上的数学课代表家住哪里？`,
    ],
    [
      { speaker: 0, said: `给我看病的主治医生是${pick(["孙", "钱", "郑"])}大夫，人很耐心。`, ask: [] },
      { speaker: 3, said: `那位大夫每周${pick(["二", "三", "四"])}上午坐诊，挂号要提前。`, ask: [] },
      `${gf}的主治医生哪天坐诊？`,
    ],
    [
      { speaker: 2, said: `我的同事${c}上个月借走了我们家的电钻。`, ask: [] },
      { speaker: 2, said: `${c}说电钻${pick(["下周", "月底", "过两天"])}还，他家在装修。`, ask: [] },
      `借电钻的那个同事什么时候还？`,
    ],
    [
      { speaker: 1, said: `我的老姐妹${cast.relatives[3]}搬到${pick(["杭州", "苏州", "南京"])}去了。`, ask: [] },
      { speaker: 1, said: `${cast.relatives[3]}的电话换了，新号码是 139${int(10000000, 99999999)}。`, ask: [] },
      `${gm}那个搬走的老姐妹新电话是多少？`,
    ],
    [
      { speaker: 4, said: `我报了${pick(["编程", "羽毛球", "书法"])}兴趣班，老师是${d}的妈妈。`, ask: [] },
      { speaker: 4, said: `${d}的妈妈说兴趣班每周${pick(["三", "五"])}放学后上。`, ask: [] },
      `${older}的兴趣班每周哪天上？`,
    ],
    [
      { speaker: 2, said: `我们公司的年会在${pick(["国贸", "望京", "亦庄"])}的酒店办。`, ask: [] },
      { speaker: 2, said: "年会可以带家属，孩子也能去。", ask: [] },
      "公司年会在哪办，能带孩子吗？",
    ],
    [
      { speaker: 3, said: `${gf}的心脏支架是${int(2015, 2022)}年装的。`, ask: [] },
      { speaker: 0, said: "装了支架以后每年都要做一次心脏彩超。", ask: [] },
      `${gf}的支架哪年装的，多久查一次彩超？`,
    ],
  ];
}

/**
 * Two members say opposite things; neither takes it back.
 *
 * @example
 * ```ts
 * import { seededRandom } from "../support/seeded_random.ts";
 *
 * contradictions(CASTS[0]!)[1]![2]; // "燃气费交了吗？"
 * ```
 */
export function contradictions(cast: Cast): Array<[Fact, Fact, string]> {
  const [gf, gm, , , older, younger] = cast.refer;
  return [
    [
      { speaker: 1, said: `${younger}的疫苗上个月已经打过了。`, ask: [] },
      { speaker: 3, said: `${younger}的疫苗还没打，接种本上没盖章。`, ask: [] },
      `${younger}的疫苗打了没有？`,
    ],
    [
      { speaker: 0, said: "燃气费我前几天交过了。", ask: [] },
      { speaker: 2, said: "燃气费还欠着呢，app上显示没交。", ask: [] },
      "燃气费交了吗？",
    ],
    [
      { speaker: 4, said: "暑假作业老师说开学第一天交。", ask: [] },
      { speaker: 3, said: `群里老师说${older}的暑假作业开学前三天就要交。`, ask: [] },
      `${older}的暑假作业哪天交？`,
    ],
    [
      { speaker: 2, said: `${gm}的血压上次量是一百四。`, ask: [] },
      { speaker: 1, said: "我上次量血压明明是一百二十多，不高。", ask: [] },
      `${gm}上次量的血压是多少？`,
    ],
    [
      { speaker: 3, said: `${gf}的降糖药吃完了，得去开。`, ask: [] },
      { speaker: 0, said: "我的降糖药还有半盒，不着急开。", ask: [] },
      `${gf}的降糖药还有没有？`,
    ],
  ];
}

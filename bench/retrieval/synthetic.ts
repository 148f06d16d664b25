/**
 * Synthetic household notes for the speed benchmark: zh/en mixed, median over 60 characters, seeded.
 *
 * @module
 */

const ROOMS = [
  ["客厅", "living room"],
  ["主卧", "master bedroom"],
  ["次卧", "second bedroom"],
  ["儿童房", "kids' room"],
  ["书房", "study"],
  ["厨房", "kitchen"],
  ["餐厅", "dining room"],
  ["卫生间", "bathroom"],
  ["阳台", "balcony"],
  ["车库", "garage"],
  ["玄关", "entryway"],
  ["洗衣房", "laundry room"],
];
const DEVICES = [
  ["灯", "light"],
  ["空调", "air conditioner"],
  ["暖气片", "radiator"],
  ["窗帘", "curtains"],
  ["电视", "TV"],
  ["音箱", "speaker"],
  ["加湿器", "humidifier"],
  ["空气净化器", "air purifier"],
  ["风扇", "fan"],
  ["摄像头", "camera"],
  ["烟雾报警器", "smoke alarm"],
  ["智能插座", "smart plug"],
  ["扫地机器人", "robot vacuum"],
  ["除湿机", "dehumidifier"],
  ["温控器", "thermostat"],
  ["门锁", "door lock"],
  ["热水器", "water heater"],
  ["冰箱", "fridge"],
  ["洗衣机", "washing machine"],
  ["路由器", "router"],
];
const EVENTS = [
  ["发出异响，已请师傅上门检查", "made a strange noise; a technician came to check it"],
  ["漏水了，地板已擦干，等售后回电", "leaked water; the floor was dried and we are waiting for the service call"],
  ["突然断电，重启后恢复正常", "lost power suddenly and worked again after a restart"],
  ["被孩子调乱了设置，已恢复默认", "had its settings changed by the kids and was reset to defaults"],
  ["固件自动升级到新版本", "updated its firmware automatically"],
  ["每天定时开关，周末也一样", "switches on and off on a timer every day, weekends included"],
  ["滤网该换了，备件在储物间", "needs a new filter; spares are in the store room"],
];
const EXTRA = [[
  "这件事已经告诉了家里其他人，大家都知道怎么处理。",
  "Everyone at home has been told and knows what to do.",
], [
  "如果还有问题，先看说明书，再打售后电话。",
  "If anything else goes wrong, check the manual first, then call the service line.",
], [
  "上次出问题是在搬家那段时间，后来一直正常。",
  "The last problem was around the time we moved in; it has been fine since.",
], [
  "家里老人不太会用手机操作，需要时帮一下。",
  "The grandparents are not used to the phone app, so help them when needed.",
]];

/**
 * `count` notes, deterministic for a given seed.
 *
 * @example
 * ```ts
 * const docs = syntheticNotes(10_000, 7);
 * ```
 */
export function syntheticNotes(count: number, seed = 7): Array<{ id: string; text: string; time: number }> {
  let state = seed;
  const random = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const notes = [];
  for (let i = 0; i < count; i++) {
    const zh = random() < 0.55;
    const lang = zh ? 0 : 1;
    const [room, device, event, extra] = [
      pick(ROOMS)[lang],
      pick(DEVICES)[lang],
      pick(EVENTS)[lang],
      pick(EXTRA)[lang],
    ];
    const day = `${2023 + Math.floor(random() * 4)}-${1 + Math.floor(random() * 12)}-${1 + Math.floor(random() * 28)}`;
    const code = Math.floor(random() * 100_000);
    const text = zh
      ? `${day} 记录 ${code}：${room}的${device}${event}。${extra}`
      : `Log ${day} #${code}: the ${device} in the ${room} ${event}. ${extra}`;
    notes.push({ id: `s${i}`, text, time: Date.parse(day) || 0 });
  }
  return notes;
}

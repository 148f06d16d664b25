/**
 * A bilingual (zh/en) lexicon of household concepts: each line is one concept and the words that name it. The
 * tokenizer adds a concept token (`~light`) wherever one of its words appears, in documents and queries alike,
 * so "客厅的灯" and "living room lamp" meet, and so do "照明" and "灯".
 *
 * Written as general household vocabulary before the retrieval eval set existed (see bench/retrieval/README.md);
 * it is not derived from the eval queries. Single Chinese characters are listed only where they are rarely part of
 * unrelated words.
 *
 * @module
 */

/** concept → words (Chinese words, English words or phrases, lower case). */
export const HOUSEHOLD_LEXICON: Readonly<Record<string, string>> = {
  // Rooms and places
  living_room: "客厅|起居室|大厅|living room|lounge|sitting room|family room",
  bedroom: "卧室|睡房|主卧|次卧|bedroom|master bedroom",
  kitchen: "厨房|灶间|kitchen",
  bathroom: "卫生间|浴室|洗手间|厕所|盥洗室|bathroom|toilet|restroom|washroom|loo",
  study: "书房|工作间|study|home office|office",
  balcony: "阳台|露台|balcony|terrace",
  garage: "车库|停车位|garage|car park|parking spot",
  hallway: "走廊|过道|玄关|门厅|hallway|corridor|entrance|entryway|hall",
  dining_room: "餐厅|饭厅|dining room",
  kids_room: "儿童房|孩子房间|nursery|kids room|children's room",
  garden: "花园|院子|庭院|后院|garden|yard|backyard",
  basement: "地下室|储藏室|basement|cellar|storage room",
  attic: "阁楼|attic|loft",
  laundry_room: "洗衣房|laundry room|utility room",
  // Devices
  light: "灯|灯光|照明|吊灯|台灯|落地灯|灯泡|light|lamp|lighting|bulb|ceiling light|chandelier",
  air_conditioner: "空调|冷气|air conditioner|air conditioning|aircon|ac|a/c",
  heating: "暖气|供暖|地暖|取暖器|暖风|heating|heater|radiator|underfloor heating",
  thermostat: "温控器|恒温器|thermostat",
  fridge: "冰箱|冰柜|冷藏|fridge|refrigerator|freezer",
  washing_machine: "洗衣机|washing machine|washer",
  dryer: "烘干机|干衣机|dryer|tumble dryer",
  dishwasher: "洗碗机|dishwasher",
  tv: "电视|电视机|tv|television|telly",
  router: "路由器|光猫|router|modem",
  wifi: "无线网|无线网络|wifi|wi-fi|wireless|wlan",
  password: "密码|口令|password|passcode|passphrase|pin",
  door_lock: "门锁|智能锁|指纹锁|lock|door lock|smart lock|deadbolt",
  camera: "摄像头|监控|监控器|camera|cctv|webcam|security camera",
  robot_vacuum: "扫地机器人|扫地机|吸尘器|robot vacuum|vacuum|roomba|hoover",
  curtain: "窗帘|百叶窗|卷帘|curtain|blind|blinds|drape",
  water_heater: "热水器|锅炉|water heater|boiler|geyser",
  socket: "插座|插头|排插|socket|outlet|plug|power strip",
  speaker: "音箱|音响|喇叭|speaker|smart speaker|soundbar",
  microwave: "微波炉|microwave",
  oven: "烤箱|oven",
  rice_cooker: "电饭煲|电饭锅|rice cooker",
  kettle: "水壶|热水壶|电水壶|kettle",
  humidifier: "加湿器|humidifier",
  dehumidifier: "除湿机|抽湿机|dehumidifier",
  air_purifier: "净化器|空气净化器|air purifier|purifier",
  fan: "风扇|电扇|吊扇|fan|ceiling fan",
  doorbell: "门铃|可视门铃|doorbell",
  smoke_alarm: "烟雾报警器|烟感|烟雾探测器|smoke alarm|smoke detector|fire alarm",
  sensor: "传感器|感应器|探测器|sensor|detector",
  printer: "打印机|printer",
  computer: "电脑|笔记本|台式机|computer|laptop|pc|desktop",
  phone: "手机|电话|phone|mobile|cellphone|smartphone",
  battery: "电池|电量|battery|batteries",
  charger: "充电器|充电桩|charger|charging station",
  car: "汽车|车子|轿车|car|vehicle",
  bike: "自行车|单车|电动车|bike|bicycle|e-bike|scooter",
  window: "窗户|窗子|window",
  door: "房门|大门|前门|后门|门口|door|front door|back door|gate",
  stove: "燃气灶|煤气灶|灶台|电磁炉|stove|cooktop|hob|gas stove",
  gas: "燃气|煤气|天然气|gas|natural gas",
  water: "自来水|水管|水龙头|water|tap|faucet|pipe",
  electricity: "电费|用电|电表|电闸|electricity|power|electric bill|breaker|fuse box",
  // Actions and states
  turn_on: "打开|开启|开灯|启动|turn on|switch on|power on|start",
  turn_off: "关闭|关掉|关上|关灯|熄灭|turn off|switch off|power off|shut off|shut down",
  increase: "调高|升高|加大|调大|increase|raise|turn up",
  decrease: "调低|降低|减小|调小|decrease|lower|turn down|reduce",
  schedule: "定时|计划|日程|安排|schedule|timer|scheduled|routine",
  reminder: "提醒|备忘|reminder|remind|memo",
  repair: "维修|修理|报修|坏了|故障|repair|fix|broken|fault",
  clean: "打扫|清洁|清洗|保洁|clean|cleaning|wash",
  replace: "更换|替换|换掉|replace|replacement|swap",
  buy: "购买|买|采购|buy|purchase|order",
  // Quantities and time
  temperature: "温度|气温|室温|度数|temperature|degrees|degree|celsius",
  humidity: "湿度|humidity",
  morning: "早上|早晨|上午|清晨|morning|am",
  evening: "晚上|傍晚|夜里|夜间|晚间|evening|night|tonight",
  noon: "中午|午饭时间|noon|midday|lunchtime",
  weekend: "周末|星期六|星期天|周六|周日|weekend|saturday|sunday",
  weekday: "工作日|周一|周二|周三|周四|周五|weekday|monday|tuesday|wednesday|thursday|friday",
  birthday: "生日|birthday",
  holiday: "假期|节日|放假|holiday|vacation",
  // People and pets
  mother: "妈妈|母亲|老妈|mom|mum|mother",
  father: "爸爸|父亲|老爸|dad|father",
  grandmother: "奶奶|外婆|姥姥|grandma|grandmother|granny",
  grandfather: "爷爷|外公|姥爷|grandpa|grandfather",
  child: "孩子|小孩|儿子|女儿|宝宝|child|kid|kids|son|daughter|baby",
  // Wife and husband are two people, not one concept (as mother and father): "what did my husband say" must not
  // prefer what the wife said. Neutral words name neither.
  wife: "老婆|妻子|太太|wife",
  husband: "老公|丈夫|husband",
  spouse: "爱人|伴侣|spouse|partner",
  guest: "客人|访客|朋友来|guest|visitor",
  // Chinese only: "like" and "love" are also the commonest English fillers ("like, the one we had").
  like: "喜欢|喜爱|最爱|爱吃|爱喝|爱玩|偏爱",
  // Chinese only: the English verbs are also nouns and names ("meet" of a sports meet, "Met").
  meet: "碰到|遇到|遇见|碰见|见到|见面|撞见",
  neighbor: "邻居|neighbor|neighbour",
  cat: "猫|猫咪|小猫|cat|kitten",
  dog: "狗|小狗|狗狗|dog|puppy",
  // Household matters
  medicine: "药|药品|吃药|服药|medicine|medication|pill|pills|tablet",
  doctor: "医生|医院|看病|doctor|hospital|clinic",
  trash: "垃圾|垃圾桶|倒垃圾|trash|garbage|rubbish|bin|waste",
  recycling: "回收|可回收|recycling|recycle",
  package: "快递|包裹|package|parcel|delivery",
  bill: "账单|缴费|付款|bill|payment|invoice",
  rent: "房租|租金|rent",
  key: "钥匙|备用钥匙|key|spare key",
  plant: "植物|花草|盆栽|浇花|plant|plants|flowers|water the plants",
  groceries: "食材|菜|买菜|杂货|groceries|grocery|food shopping",
  recipe: "菜谱|食谱|做法|recipe|cooking method",
  breakfast: "早餐|早饭|breakfast",
  lunch: "午餐|午饭|lunch",
  dinner: "晚餐|晚饭|dinner|supper",
  // Not 奶 alone: it fires inside 奶奶 (grandmother).
  milk: "牛奶|奶粉|鲜奶|酸奶|milk",
  egg: "鸡蛋|蛋|egg|eggs",
  rice: "米饭|大米|rice",
  // Not 面 alone: it fires inside 外面, 见面, 面包.
  noodles: "面条|拉面|挂面|汤面|牛肉面|noodles|pasta",
  tea: "茶|茶叶|tea",
  coffee: "咖啡|coffee",
  allergy: "过敏|allergy|allergic",
  school: "学校|上学|放学|school",
  work: "上班|下班|工作|work|office hours",
  sleep: "睡觉|入睡|午睡|就寝|sleep|bedtime|nap",
  wake_up: "起床|醒来|叫醒|wake up|wake|alarm clock",
  music: "音乐|歌|播放|music|song|play",
  weather: "天气|下雨|晴天|weather|rain|sunny|forecast",
  security: "安防|布防|撤防|报警|security|alarm|arm|disarm",
  energy: "节能|耗电|能耗|energy|power usage|consumption",
  noise: "噪音|吵|noise|noisy|loud",
};

/**
 * English idioms inside which the lexicon names no concept: open-domain chat uses these words without meaning the
 * household thing ("in light of" is not about lamps, "play a part" not about music).
 */
export const HOUSEHOLD_IDIOMS: readonly string[] = [
  "in light of",
  "light of day",
  "make light of",
  "shed light on",
  "throw light on",
  "bring to light",
  "come to light",
  "play a part",
  "play a role",
  "work out",
  "an arm and a leg",
  "key point",
];

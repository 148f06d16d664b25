import assert from "node:assert/strict";
import { EMBEDDED_INTENT_FILES } from "./embedded_intents.ts";
import { IntentDataError, type IntentName, type IntentSlots, type Vocabulary } from "./intent.ts";
import { IntentMatcher } from "./matcher.ts";

const MATCHER = IntentMatcher.compile(EMBEDDED_INTENT_FILES);

const VOCABULARY: Vocabulary = {
  version: "test-1",
  names: [
    "客厅灯",
    "卧室灯",
    "台灯",
    "前门",
    "车库门",
    "空调",
    "卧室空调",
    "窗帘",
    "Kitchen light",
    "Living room lamp",
    "Front door",
    "Garage door",
    "Bedroom fan",
    "Thermostat",
  ],
  places: [
    "客厅",
    "卧室",
    "书房",
    "厨房",
    "一楼",
    "二楼",
    "Kitchen",
    "Living room",
    "Bedroom",
    "Downstairs",
    "Upstairs",
  ],
};

/** Sentence, the intent of the best match, its exact slots. */
const POSITIVE: [string, IntentName, IntentSlots][] = [
  ["打开客厅的灯", "HassTurnOn", { "place": "客厅", "domain": "light" }],
  ["把卧室空调关了", "HassTurnOff", { "name": "卧室空调" }],
  ["关掉所有的灯", "HassTurnOff", { "all": true, "domain": "light" }],
  ["turn off all the lights downstairs", "HassTurnOff", { "all": true, "domain": "light", "place": "Downstairs" }],
  ["switch on the kitchen light", "HassTurnOn", { "name": "Kitchen light" }],
  ["lights off in the bedroom", "HassTurnOff", { "domain": "light", "place": "Bedroom" }],
  ["打开车库门", "HassTurnOn", { "name": "车库门" }],
  ["close the garage", "HassClose", { "name": "Garage door" }],
  ["拉上窗帘", "HassClose", { "name": "窗帘" }],
  ["把窗帘打开", "HassTurnOn", { "name": "窗帘" }],
  ["锁上前门", "HassLock", { "name": "前门" }],
  ["lock the front door", "HassLock", { "name": "Front door" }],
  ["unlock the front door", "HassUnlock", { "name": "Front door" }],
  ["把客厅灯调到50%", "HassLightSet", { "name": "客厅灯", "percent": 50 }],
  ["客厅灯亮度调到百分之三十", "HassLightSet", { "name": "客厅灯", "percent": 30 }],
  ["dim the kitchen light to 20 percent", "HassLightSet", { "name": "Kitchen light", "percent": 20 }],
  ["set the bedroom lights to 80%", "HassLightSet", { "place": "Bedroom", "domain": "light", "percent": 80 }],
  ["把灯调成暖光", "HassLightSet", { "domain": "light", "kelvin": 2700 }],
  ["set the living room light to 3000 kelvin", "HassLightSet", {
    "place": "Living room",
    "domain": "light",
    "kelvin": 3000,
  }],
  ["把窗帘开到一半", "HassSetPosition", { "percent": 50, "name": "窗帘" }],
  ["set the blinds to 30%", "HassSetPosition", { "domain": "cover", "percent": 30 }],
  ["把空调调到二十六度", "HassClimateSetTemperature", { "name": "空调", "temperature": 26 }],
  ["set the bedroom thermostat to 22", "HassClimateSetTemperature", {
    "place": "Bedroom",
    "name": "Thermostat",
    "temperature": 22,
  }],
  ["空调温度设为24度", "HassClimateSetTemperature", { "name": "空调", "temperature": 24 }],
  ["客厅现在多少度", "HassGetState", { "quantity": "temperature", "place": "客厅" }],
  ["卧室湿度多少", "HassGetState", { "place": "卧室", "quantity": "humidity" }],
  ["is the front door locked?", "HassGetState", { "name": "Front door", "state": "locked" }],
  ["客厅的灯开着吗", "HassGetState", { "place": "客厅", "domain": "light", "state": "on" }],
  ["what's the temperature in the living room", "HassGetState", { "quantity": "temperature", "place": "Living room" }],
  ["is the garage open", "HassGetState", { "name": "Garage door", "state": "open" }],
  ["提醒我二十分钟后关火", "HomedReminderCreate", { "when": { "kind": "in", "ms": 1200000 }, "message": "关火" }],
  ["二十分钟后提醒我关火", "HomedReminderCreate", { "when": { "kind": "in", "ms": 1200000 }, "message": "关火" }],
  ["remind me at 7 pm to call mum", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 19, "minute": 0, "day": "next" },
    "message": "call mum",
  }],
  ["remind me to call mum at 7 pm", "HomedReminderCreate", {
    "message": "call mum",
    "when": { "kind": "at", "hour": 19, "minute": 0, "day": "next" },
  }],
  ["每个工作日早上七点叫我", "HomedReminderCreate", {
    "message": "起床",
    "when": { "kind": "every", "hour": 7, "minute": 0, "days": "weekdays" },
  }],
  ["我有哪些提醒", "HomedReminderList", {}],
  ["list my reminders", "HomedReminderList", {}],
  ["what reminders do I have", "HomedReminderList", {}],
  ["取消提醒 s-1a2b3c4d", "HomedReminderCancel", { "id": "s-1a2b3c4d" }],
  ["cancel reminder s-1a2b3c4d", "HomedReminderCancel", { "id": "s-1a2b3c4d" }],
  ["取消关火的提醒", "HomedReminderCancel", { "message": "关火" }],
  ["cancel the reminder to call mum", "HomedReminderCancel", { "message": "call mum" }],
  ["现在几点", "HassGetCurrentTime", {}],
  ["几点了", "HassGetCurrentTime", {}],
  ["what time is it", "HassGetCurrentTime", {}],
  ["你现在能做什么", "HomedWhatCanYouDo", {}],
  ["what can you do right now", "HomedWhatCanYouDo", {}],
  ["你会什么", "HomedWhatCanYouDo", {}],
  ["请帮我把客厅灯打开吧", "HassTurnOn", { "name": "客厅灯" }],
  ["帮我打开一下卧室的灯", "HassTurnOn", { "place": "卧室", "domain": "light" }],
  ["开灯", "HassTurnOn", { "domain": "light" }],
  ["关灯", "HassTurnOff", { "domain": "light" }],
  ["客厅开灯", "HassTurnOn", { "place": "客厅", "domain": "light" }],
  ["把灯全关了", "HassTurnOff", { "all": true, "domain": "light" }],
  ["把所有的灯都关掉", "HassTurnOff", { "all": true, "domain": "light" }],
  ["关闭书房的风扇", "HassTurnOff", { "place": "书房", "domain": "fan" }],
  ["打开一楼所有的灯", "HassTurnOn", { "all": true, "place": "一楼", "domain": "light" }],
  ["关掉二楼的空调", "HassTurnOff", { "place": "二楼", "name": "空调" }],
  ["切换一下台灯", "HassToggle", { "name": "台灯" }],
  ["打开车库", "HassTurnOn", { "name": "车库门" }],
  ["拉开客厅的窗帘", "HassOpen", { "place": "客厅", "domain": "cover" }],
  ["把窗帘拉上", "HassClose", { "name": "窗帘" }],
  ["锁门", "HassLock", { "domain": "lock" }],
  ["把前门锁上", "HassLock", { "name": "前门" }],
  ["给前门解锁", "HassUnlock", { "name": "前门" }],
  ["把客厅灯亮度调到最亮", "HassLightSet", { "percent": 100, "name": "客厅灯" }],
  ["把台灯调暗到20%", "HassLightSet", { "name": "台灯", "percent": 20 }],
  ["把卧室灯调成冷光", "HassLightSet", { "name": "卧室灯", "kelvin": 6500 }],
  ["把客厅灯色温调到4000k", "HassLightSet", { "name": "客厅灯", "kelvin": 4000 }],
  ["把窗帘打开一半", "HassSetPosition", { "percent": 50, "name": "窗帘" }],
  ["把窗帘开到百分之三十", "HassSetPosition", { "name": "窗帘", "percent": 30 }],
  ["空调26度", "HassClimateSetTemperature", { "name": "空调", "temperature": 26 }],
  ["卧室空调调到25度", "HassClimateSetTemperature", { "name": "卧室空调", "temperature": 25 }],
  ["把温度调到二十四度", "HassClimateSetTemperature", { "domain": "climate", "temperature": 24 }],
  ["把卧室温度调到22度", "HassClimateSetTemperature", { "domain": "climate", "place": "卧室", "temperature": 22 }],
  ["空调调到二十五点五度", "HassClimateSetTemperature", { "name": "空调", "temperature": 25.5 }],
  ["客厅温度是多少", "HassGetState", { "quantity": "temperature", "place": "客厅" }],
  ["现在室内温度多少", "HassGetState", { "quantity": "temperature" }],
  ["空调的温度是多少", "HassGetState", { "name": "空调", "quantity": "temperature" }],
  ["前门锁了吗", "HassGetState", { "name": "前门", "state": "locked" }],
  ["前门锁好了没有", "HassGetState", { "name": "前门", "state": "locked" }],
  ["客厅的灯关了没有", "HassGetState", { "state": "off", "place": "客厅", "domain": "light" }],
  ["台灯开着吗", "HassGetState", { "name": "台灯", "state": "on" }],
  ["前门是什么状态", "HassGetState", { "name": "前门" }],
  ["明天早上八点提醒我开会", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 8, "minute": 0, "day": { "relative": 1 } },
    "message": "开会",
  }],
  ["提醒我明天早上八点开会", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 8, "minute": 0, "day": { "relative": 1 } },
    "message": "开会",
  }],
  ["今晚七点半提醒我看球赛", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 19, "minute": 30, "day": { "relative": 0 } },
    "message": "看球赛",
  }],
  ["下午3点15提醒我接孩子", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 15, "minute": 15, "day": "next" },
    "message": "接孩子",
  }],
  ["半小时后提醒我喝水", "HomedReminderCreate", { "when": { "kind": "in", "ms": 1800000 }, "message": "喝水" }],
  ["一个半小时后提醒我关烤箱", "HomedReminderCreate", { "when": { "kind": "in", "ms": 5400000 }, "message": "关烤箱" }],
  ["每天早上七点提醒我吃药", "HomedReminderCreate", {
    "when": { "kind": "every", "hour": 7, "minute": 0, "days": "daily" },
    "message": "吃药",
  }],
  ["每周一三五早上8点提醒我去健身", "HomedReminderCreate", {
    "when": { "kind": "every", "hour": 8, "minute": 0, "days": [1, 3, 5] },
    "message": "去健身",
  }],
  ["周五下午两点提醒我交报告", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 14, "minute": 0, "day": { "weekday": 5 } },
    "message": "交报告",
  }],
  ["12月25日上午十点提醒我买礼物", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 10, "minute": 0, "day": { "month": 12, "date": 25 } },
    "message": "买礼物",
  }],
  ["明天早上七点叫我起床", "HomedReminderCreate", {
    "message": "起床",
    "when": { "kind": "at", "hour": 7, "minute": 0, "day": { "relative": 1 } },
  }],
  ["设一个明天早上七点的闹钟", "HomedReminderCreate", {
    "message": "闹钟",
    "when": { "kind": "at", "hour": 7, "minute": 0, "day": { "relative": 1 } },
  }],
  ["看看我的提醒", "HomedReminderList", {}],
  ["我的提醒有哪些", "HomedReminderList", {}],
  ["删除提醒S-1A2B3C4D", "HomedReminderCancel", { "id": "s-1a2b3c4d" }],
  ["把关火的提醒取消", "HomedReminderCancel", { "message": "关火" }],
  ["不用提醒我关火了", "HomedReminderCancel", { "message": "关火" }],
  ["取消所有提醒", "HomedReminderCancel", { "all": true }],
  ["现在是什么时间", "HassGetCurrentTime", {}],
  ["你能干什么", "HomedWhatCanYouDo", {}],
  ["你有什么功能", "HomedWhatCanYouDo", {}],
  ["打开Kitchen light", "HassTurnOn", { "name": "Kitchen light" }],
  ["please turn on the kitchen light", "HassTurnOn", { "name": "Kitchen light" }],
  ["can you turn off the living room lamp please", "HassTurnOff", { "name": "Living room lamp" }],
  ["turn the lights off", "HassTurnOff", { "domain": "light" }],
  ["turn the lights on in the kitchen", "HassTurnOn", { "domain": "light", "place": "Kitchen" }],
  ["switch off the bedroom fan", "HassTurnOff", { "name": "Bedroom fan" }],
  ["kitchen light on", "HassTurnOn", { "name": "Kitchen light" }],
  ["turn off everything downstairs", "HassTurnOff", { "all": true, "place": "Downstairs" }],
  ["turn on all of the lights upstairs", "HassTurnOn", { "all": true, "domain": "light", "place": "Upstairs" }],
  ["toggle the living room lamp", "HassToggle", { "name": "Living room lamp" }],
  ["open the garage door", "HassOpen", { "name": "Garage door" }],
  ["close the blinds in the living room", "HassClose", { "domain": "cover", "place": "Living room" }],
  ["open the blinds halfway", "HassSetPosition", { "percent": 50, "domain": "cover" }],
  ["lower the blinds", "HassClose", { "domain": "cover" }],
  ["lock all the doors", "HassLock", { "all": true, "domain": "lock" }],
  ["set the kitchen light brightness to 50%", "HassLightSet", { "name": "Kitchen light", "percent": 50 }],
  ["set brightness of the kitchen light to fifty five percent", "HassLightSet", {
    "name": "Kitchen light",
    "percent": 55,
  }],
  ["set the kitchen light to warm white", "HassLightSet", { "name": "Kitchen light", "kelvin": 3000 }],
  ["set the kitchen light to full brightness", "HassLightSet", { "percent": 100, "name": "Kitchen light" }],
  ["set the thermostat to 21 degrees", "HassClimateSetTemperature", { "name": "Thermostat", "temperature": 21 }],
  ["set the thermostat to 21", "HassClimateSetTemperature", { "name": "Thermostat", "temperature": 21 }],
  ["set the temperature to 22.5", "HassClimateSetTemperature", { "domain": "climate", "temperature": 22.5 }],
  ["make it 20 degrees in the bedroom", "HassClimateSetTemperature", {
    "domain": "climate",
    "temperature": 20,
    "place": "Bedroom",
  }],
  ["what is the humidity in the bedroom", "HassGetState", { "quantity": "humidity", "place": "Bedroom" }],
  ["how warm is it in the kitchen", "HassGetState", { "quantity": "temperature", "place": "Kitchen" }],
  ["what's the temperature", "HassGetState", { "quantity": "temperature" }],
  ["is the kitchen light on", "HassGetState", { "name": "Kitchen light", "state": "on" }],
  ["are the lights on in the kitchen", "HassGetState", { "domain": "light", "state": "on", "place": "Kitchen" }],
  ["is the front door unlocked", "HassGetState", { "name": "Front door", "state": "unlocked" }],
  ["what's the status of the garage door", "HassGetState", { "name": "Garage door" }],
  ["remind me in 20 minutes to take the cake out", "HomedReminderCreate", {
    "when": { "kind": "in", "ms": 1200000 },
    "message": "take the cake out",
  }],
  ["remind me to take the pills tomorrow at 8 am", "HomedReminderCreate", {
    "message": "take the pills",
    "when": { "kind": "at", "hour": 8, "minute": 0, "day": { "relative": 1 } },
  }],
  ["in half an hour remind me to check the oven", "HomedReminderCreate", {
    "when": { "kind": "in", "ms": 1800000 },
    "message": "check the oven",
  }],
  ["remind me every weekday at 7 am to take out the trash", "HomedReminderCreate", {
    "when": { "kind": "every", "hour": 7, "minute": 0, "days": "weekdays" },
    "message": "take out the trash",
  }],
  ["set a reminder for 7 pm to call mum", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 19, "minute": 0, "day": "next" },
    "message": "call mum",
  }],
  ["wake me up tomorrow at 6:30", "HomedReminderCreate", {
    "message": "wake up",
    "when": { "kind": "at", "hour": 6, "minute": 30, "day": { "relative": 1 } },
  }],
  ["set an alarm for 7 am", "HomedReminderCreate", {
    "message": "alarm",
    "when": { "kind": "at", "hour": 7, "minute": 0, "day": "next" },
  }],
  ["remind me on friday at 2 pm to submit the report", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 14, "minute": 0, "day": { "weekday": 5 } },
    "message": "submit the report",
  }],
  ["remind me at noon to eat lunch", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 12, "minute": 0, "day": "next" },
    "message": "eat lunch",
  }],
  ["show me my reminders", "HomedReminderList", {}],
  ["do I have any reminders", "HomedReminderList", {}],
  ["cancel all my reminders", "HomedReminderCancel", { "all": true }],
  ["don't remind me to call mum", "HomedReminderCancel", { "message": "call mum" }],
  ["what's the time", "HassGetCurrentTime", {}],
  ["tell me the time", "HassGetCurrentTime", {}],
  ["what can you help me with", "HomedWhatCanYouDo", {}],
  ["help", "HomedWhatCanYouDo", {}],
  ["unlock the garage door", "HassUnlock", { "name": "Garage door" }],
  ["Turn ON the Kitchen Light!!", "HassTurnOn", { "name": "Kitchen light" }],
  ["把书房的灯打开", "HassTurnOn", { "place": "书房", "domain": "light" }],
  ["卧室的空调开着吗", "HassGetState", { "place": "卧室", "name": "空调", "state": "on" }],
  ["二楼的窗帘拉上", "HassClose", { "place": "二楼", "domain": "cover" }],
  ["把一楼所有的窗帘都拉开", "HassOpen", { "all": true, "place": "一楼", "domain": "cover" }],
  ["客厅有多热", "HassGetState", { "quantity": "temperature", "place": "客厅" }],
  ["set the upstairs lights to 40 percent", "HassLightSet", { "place": "Upstairs", "domain": "light", "percent": 40 }],
  ["turn on the heater in the bedroom", "HassTurnOn", { "domain": "climate", "place": "Bedroom" }],
  ["turn off the tv", "HassTurnOff", { "domain": "media_player" }],
  ["打开电视", "HassTurnOn", { "domain": "media_player" }],
  ["关掉卧室的风扇", "HassTurnOff", { "place": "卧室", "domain": "fan" }],
  ["把客厅的灯打开", "HassTurnOn", { "place": "客厅", "domain": "light" }],
  ["客厅的灯打开", "HassTurnOn", { "place": "客厅", "domain": "light" }],
  ["帮我开一下客厅灯", "HassTurnOn", { "name": "客厅灯" }],
  ["请打开卧室空调", "HassTurnOn", { "name": "卧室空调" }],
  ["麻烦把书房的灯关一下", "HassTurnOff", { "place": "书房", "domain": "light" }],
  ["把空调关掉吧", "HassTurnOff", { "name": "空调" }],
  ["关一下台灯", "HassTurnOff", { "name": "台灯" }],
  ["熄灯", "HassTurnOff", { "domain": "light" }],
  ["把灯都打开", "HassTurnOn", { "all": true, "domain": "light" }],
  ["全部关掉", "HassTurnOff", { "all": true }],
  ["关掉所有灯", "HassTurnOff", { "all": true, "domain": "light" }],
  ["把家里的灯全部关掉", "HassTurnOff", { "all": true, "domain": "light" }],
  ["关掉厨房所有的灯", "HassTurnOff", { "all": true, "place": "厨房", "domain": "light" }],
  ["打开卧室的窗帘", "HassTurnOn", { "place": "卧室", "name": "窗帘" }],
  ["关上卧室的窗帘", "HassTurnOff", { "place": "卧室", "name": "窗帘" }],
  ["窗帘拉开", "HassOpen", { "name": "窗帘" }],
  ["打开客厅窗帘", "HassTurnOn", { "place": "客厅", "name": "窗帘" }],
  ["拉开窗帘", "HassOpen", { "name": "窗帘" }],
  ["放下百叶窗", "HassClose", { "domain": "cover" }],
  ["把车库门关上", "HassTurnOff", { "name": "车库门" }],
  ["关闭车库门", "HassTurnOff", { "name": "车库门" }],
  ["前门锁上", "HassLock", { "name": "前门" }],
  ["锁一下前门", "HassLock", { "name": "前门" }],
  ["把门锁上", "HassLock", { "domain": "lock" }],
  ["打开前门的锁", "HassUnlock", { "name": "前门" }],
  ["客厅灯调到30", "HassLightSet", { "name": "客厅灯", "percent": 30 }],
  ["台灯亮度50%", "HassLightSet", { "name": "台灯", "percent": 50 }],
  ["把台灯亮度设为百分之二十", "HassLightSet", { "name": "台灯", "percent": 20 }],
  ["客厅灯调成暖白光", "HassLightSet", { "name": "客厅灯", "kelvin": 3000 }],
  ["台灯换成暖光", "HassLightSet", { "name": "台灯", "kelvin": 2700 }],
  ["把窗帘开到30%", "HassSetPosition", { "name": "窗帘", "percent": 30 }],
  ["窗帘拉到一半", "HassSetPosition", { "percent": 50, "name": "窗帘" }],
  ["空调设置为26度", "HassClimateSetTemperature", { "name": "空调", "temperature": 26 }],
  ["空调开到26度", "HassClimateSetTemperature", { "name": "空调", "temperature": 26 }],
  ["卧室空调温度调到26", "HassClimateSetTemperature", { "name": "卧室空调", "temperature": 26 }],
  ["把卧室的空调调到24度", "HassClimateSetTemperature", { "place": "卧室", "name": "空调", "temperature": 24 }],
  ["温度调到25度", "HassClimateSetTemperature", { "domain": "climate", "temperature": 25 }],
  ["卧室多少度", "HassGetState", { "quantity": "temperature", "place": "卧室" }],
  ["客厅温度多少", "HassGetState", { "quantity": "temperature", "place": "客厅" }],
  ["现在家里多少度", "HassGetState", { "quantity": "temperature" }],
  ["卧室现在湿度是多少", "HassGetState", { "place": "卧室", "quantity": "humidity" }],
  ["书房的温度怎么样", "HassGetState", { "quantity": "temperature", "place": "书房" }],
  ["厨房热不热", "HassGetState", { "quantity": "temperature", "place": "厨房" }],
  ["前门锁好了吗", "HassGetState", { "name": "前门", "state": "locked" }],
  ["车库门开着吗", "HassGetState", { "name": "车库门", "state": "on" }],
  ["客厅灯是不是开着", "HassGetState", { "state": "on", "name": "客厅灯" }],
  ["空调开着没有", "HassGetState", { "name": "空调", "state": "on" }],
  ["卧室的灯有没有关", "HassGetState", { "state": "off", "place": "卧室", "domain": "light" }],
  ["前门有没有锁", "HassGetState", { "state": "locked", "name": "前门" }],
  ["五分钟后提醒我关火", "HomedReminderCreate", { "when": { "kind": "in", "ms": 300000 }, "message": "关火" }],
  ["过半小时提醒我关火", "HomedReminderCreate", { "when": { "kind": "in", "ms": 1800000 }, "message": "关火" }],
  ["10分钟后提醒我出门", "HomedReminderCreate", { "when": { "kind": "in", "ms": 600000 }, "message": "出门" }],
  ["明天下午三点提醒我去接孩子", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 15, "minute": 0, "day": { "relative": 1 } },
    "message": "去接孩子",
  }],
  ["提醒我晚上九点吃药", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 21, "minute": 0, "day": "next" },
    "message": "吃药",
  }],
  ["每天晚上十点提醒我睡觉", "HomedReminderCreate", {
    "when": { "kind": "every", "hour": 22, "minute": 0, "days": "daily" },
    "message": "睡觉",
  }],
  ["周一早上九点提醒我开会", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 9, "minute": 0, "day": { "weekday": 1 } },
    "message": "开会",
  }],
  ["明早七点叫我", "HomedReminderCreate", {
    "message": "起床",
    "when": { "kind": "at", "hour": 7, "minute": 0, "day": { "relative": 1 } },
  }],
  ["提醒我每天早上八点吃药", "HomedReminderCreate", {
    "when": { "kind": "every", "hour": 8, "minute": 0, "days": "daily" },
    "message": "吃药",
  }],
  ["我设了哪些提醒", "HomedReminderList", {}],
  ["有什么提醒", "HomedReminderList", {}],
  ["查看提醒", "HomedReminderList", {}],
  ["列出所有提醒", "HomedReminderList", {}],
  ["删除关火的提醒", "HomedReminderCancel", { "message": "关火" }],
  ["取消明天开会的提醒", "HomedReminderCancel", { "message": "明天开会" }],
  ["取消提醒s-1a2b3c4d", "HomedReminderCancel", { "id": "s-1a2b3c4d" }],
  ["现在几点钟", "HassGetCurrentTime", {}],
  ["几点啦", "HassGetCurrentTime", {}],
  ["现在什么时间", "HassGetCurrentTime", {}],
  ["你能做些什么", "HomedWhatCanYouDo", {}],
  ["你可以帮我做什么", "HomedWhatCanYouDo", {}],
  ["你都能干啥", "HomedWhatCanYouDo", {}],
  ["熄灯", "HassTurnOff", { "domain": "light" }],
  ["全部关掉", "HassTurnOff", { "all": true }],
  ["把家里的灯全部关掉", "HassTurnOff", { "all": true, "domain": "light" }],
  ["台灯换成暖光", "HassLightSet", { "name": "台灯", "kelvin": 2700 }],
  ["turn on the lights", "HassTurnOn", { "domain": "light" }],
  ["turn on the living room lights", "HassTurnOn", { "place": "Living room", "domain": "light" }],
  ["switch the kitchen light off", "HassTurnOff", { "name": "Kitchen light" }],
  ["could you please switch off the bedroom fan for me", "HassTurnOff", { "name": "Bedroom fan" }],
  ["lights on", "HassTurnOn", { "domain": "light" }],
  ["turn off the lights in the living room please", "HassTurnOff", { "domain": "light", "place": "Living room" }],
  ["power off the tv", "HassTurnOff", { "domain": "media_player" }],
  ["shut off the heater", "HassTurnOff", { "domain": "climate" }],
  ["turn the heat on", "HassTurnOn", { "domain": "climate" }],
  ["start the fan in the bedroom", "HassTurnOn", { "domain": "fan", "place": "Bedroom" }],
  ["turn everything off", "HassTurnOff", { "all": true }],
  ["kill the lights", "HassTurnOff", { "domain": "light" }],
  ["turn off all lights", "HassTurnOff", { "all": true, "domain": "light" }],
  ["switch off every light upstairs", "HassTurnOff", { "all": true, "domain": "light", "place": "Upstairs" }],
  ["open the curtains", "HassOpen", { "domain": "cover" }],
  ["open the living room curtains", "HassOpen", { "place": "Living room", "domain": "cover" }],
  ["close the shades in the bedroom", "HassClose", { "domain": "cover", "place": "Bedroom" }],
  ["raise the blinds", "HassOpen", { "domain": "cover" }],
  ["pull up the blinds in the kitchen", "HassOpen", { "domain": "cover", "place": "Kitchen" }],
  ["roll down the shutters", "HassClose", { "domain": "cover" }],
  ["close all the blinds", "HassClose", { "all": true, "domain": "cover" }],
  ["lock the doors", "HassLock", { "domain": "lock" }],
  ["lock up", "HassLock", { "all": true, "domain": "lock" }],
  ["unlock the garage door please", "HassUnlock", { "name": "Garage door" }],
  ["secure the front door", "HassLock", { "name": "Front door" }],
  ["set the living room lamp to 30%", "HassLightSet", { "name": "Living room lamp", "percent": 30 }],
  ["set the kitchen light brightness to 75 percent", "HassLightSet", { "name": "Kitchen light", "percent": 75 }],
  ["brighten the kitchen light to 100%", "HassLightSet", { "name": "Kitchen light", "percent": 100 }],
  ["dim the lights to 10%", "HassLightSet", { "domain": "light", "percent": 10 }],
  ["turn the kitchen light to 40%", "HassLightSet", { "name": "Kitchen light", "percent": 40 }],
  ["set the lights to warm white", "HassLightSet", { "domain": "light", "kelvin": 3000 }],
  ["make the living room lamp cool white", "HassLightSet", { "name": "Living room lamp", "kelvin": 6500 }],
  ["change the kitchen light to daylight", "HassLightSet", { "name": "Kitchen light", "kelvin": 6500 }],
  ["set the kitchen light color temperature to 4000k", "HassLightSet", { "name": "Kitchen light", "kelvin": 4000 }],
  ["set the blinds to 50 percent", "HassSetPosition", { "domain": "cover", "percent": 50 }],
  ["open the blinds to 30%", "HassSetPosition", { "domain": "cover", "percent": 30 }],
  ["close the living room blinds halfway", "HassSetPosition", {
    "percent": 50,
    "place": "Living room",
    "domain": "cover",
  }],
  ["set the thermostat to 72", "HassClimateSetTemperature", { "name": "Thermostat", "temperature": 72 }],
  ["set the temperature to 21 degrees", "HassClimateSetTemperature", { "domain": "climate", "temperature": 21 }],
  ["set the living room temperature to 23 degrees", "HassClimateSetTemperature", {
    "domain": "climate",
    "place": "Living room",
    "temperature": 23,
  }],
  ["turn the heat up to 22", "HassClimateSetTemperature", { "domain": "climate", "temperature": 22 }],
  ["set the ac to 24 degrees", "HassClimateSetTemperature", { "domain": "climate", "temperature": 24 }],
  ["set the bedroom ac to 25", "HassClimateSetTemperature", {
    "place": "Bedroom",
    "domain": "climate",
    "temperature": 25,
  }],
  ["what's the humidity in the kitchen", "HassGetState", { "quantity": "humidity", "place": "Kitchen" }],
  ["what is the temperature in the bedroom right now", "HassGetState", {
    "quantity": "temperature",
    "place": "Bedroom",
  }],
  ["how hot is it in the living room", "HassGetState", { "quantity": "temperature", "place": "Living room" }],
  ["how humid is it in the bedroom", "HassGetState", { "quantity": "humidity", "place": "Bedroom" }],
  ["what's the living room temperature", "HassGetState", { "place": "Living room", "quantity": "temperature" }],
  ["what's the thermostat temperature", "HassGetState", { "name": "Thermostat", "quantity": "temperature" }],
  ["is the bedroom fan on", "HassGetState", { "name": "Bedroom fan", "state": "on" }],
  ["is the front door locked", "HassGetState", { "name": "Front door", "state": "locked" }],
  ["are the kitchen lights on", "HassGetState", { "place": "Kitchen", "domain": "light", "state": "on" }],
  ["is the garage door closed", "HassGetState", { "name": "Garage door", "state": "closed" }],
  ["is the living room lamp off", "HassGetState", { "name": "Living room lamp", "state": "off" }],
  ["did I leave the kitchen light on", "HassGetState", { "name": "Kitchen light", "state": "on" }],
  ["remind me to take out the trash in an hour", "HomedReminderCreate", {
    "message": "take out the trash",
    "when": { "kind": "in", "ms": 3600000 },
  }],
  ["remind me in an hour to take out the trash", "HomedReminderCreate", {
    "when": { "kind": "in", "ms": 3600000 },
    "message": "take out the trash",
  }],
  ["remind me tomorrow at 9 to call the dentist", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 9, "minute": 0, "day": { "relative": 1 } },
    "message": "call the dentist",
  }],
  ["remind me at 6:30 pm to start dinner", "HomedReminderCreate", {
    "when": { "kind": "at", "hour": 18, "minute": 30, "day": "next" },
    "message": "start dinner",
  }],
  ["remind me every day at 8 am to take my vitamins", "HomedReminderCreate", {
    "when": { "kind": "every", "hour": 8, "minute": 0, "days": "daily" },
    "message": "take my vitamins",
  }],
  ["remind me on weekdays at 7 to wake up the kids", "HomedReminderCreate", {
    "when": { "kind": "every", "hour": 7, "minute": 0, "days": "weekdays" },
    "message": "wake up the kids",
  }],
  ["remind me about the meeting at 3 pm", "HomedReminderCreate", {
    "message": "the meeting",
    "when": { "kind": "at", "hour": 15, "minute": 0, "day": "next" },
  }],
  ["set a reminder to water the plants tomorrow morning at 8", "HomedReminderCreate", {
    "message": "water the plants",
    "when": { "kind": "at", "hour": 8, "minute": 0, "day": { "relative": 1 } },
  }],
  ["wake me up at 6 am", "HomedReminderCreate", {
    "message": "wake up",
    "when": { "kind": "at", "hour": 6, "minute": 0, "day": "next" },
  }],
  ["wake me at 7 tomorrow", "HomedReminderCreate", {
    "message": "wake up",
    "when": { "kind": "at", "hour": 7, "minute": 0, "day": { "relative": 1 } },
  }],
  ["set an alarm for 6:45 am", "HomedReminderCreate", {
    "message": "alarm",
    "when": { "kind": "at", "hour": 6, "minute": 45, "day": "next" },
  }],
  ["list all my reminders", "HomedReminderList", {}],
  ["what reminders are set", "HomedReminderList", {}],
  ["show my alarms", "HomedReminderList", {}],
  ["cancel reminder S-0A1B2C3D", "HomedReminderCancel", { "id": "s-0a1b2c3d" }],
  ["delete the reminder about the meeting", "HomedReminderCancel", { "message": "the meeting" }],
  ["remove the reminder to water the plants", "HomedReminderCancel", { "message": "water the plants" }],
  ["cancel my alarms", "HomedReminderCancel", { "all": true }],
  ["what time is it right now", "HassGetCurrentTime", {}],
  ["can you tell me the time", "HassGetCurrentTime", {}],
  ["do you know what time it is", "HassGetCurrentTime", {}],
  ["what can you do", "HomedWhatCanYouDo", {}],
  ["what are you able to do", "HomedWhatCanYouDo", {}],
  ["what do you do", "HomedWhatCanYouDo", {}],
];

/** Ordinary chatter, statements and incomplete commands: no template covers them, so no match. */
const NEGATIVE: string[] = [
  "打开天窗说亮话",
  "今天天气怎么样",
  "提醒",
  "我把灯关了",
  "灯坏了",
  "客厅很热",
  "明天会下雨吗",
  "提醒一下",
  "打开",
  "开个玩笑",
  "我想开空调",
  "提醒我关火",
  "记得明天提醒我交电费",
  "取消提醒",
  "你好",
  "讲个笑话",
  "打开桑拿房",
  "把客厅灯调到",
  "空调多少钱",
  "灯光很美",
  "关于灯的问题",
  "二十分钟后",
  "明天早上八点",
  "客厅",
  "台灯",
  "灯关了",
  "tell me a joke",
  "I turned off the light yesterday",
  "what do you think about lights",
  "turn on",
  "turn it off",
  "the kitchen light is broken",
  "how are you",
  "remind me",
  "remind me later",
  "set a timer",
  "I need help with my homework",
  "open the pod bay doors",
  "who turned on the light",
  "I like the kitchen light",
  "the lights are too bright",
  "set the lights",
  "turn on the sauna",
  "lights",
  "what is love",
  "cancel",
  "turn off the light at 7 pm",
  "remind me to call mum at 25 pm",
  "in 20 minutes",
];

Deno.test(`match: ${POSITIVE.length} household commands give the exact intent and slots`, () => {
  const failures: string[] = [];
  for (const [text, intent, slots] of POSITIVE) {
    const best = MATCHER.match(text, VOCABULARY)[0];
    try {
      assert.ok(best, "no match");
      assert.equal(best.intent, intent);
      assert.deepEqual(best.slots, slots);
      assert.equal(best.unknown, undefined);
    } catch (error) {
      failures.push(
        `${text}: ${error instanceof Error ? error.message.split("\n")[0] : error} ${JSON.stringify(best)}`,
      );
    }
  }
  assert.deepEqual(failures, []);
  const languages = new Set(POSITIVE.map(([text]) => MATCHER.match(text, VOCABULARY)[0]!.language));
  assert.deepEqual([...languages].sort(), ["en", "zh"]);
});

Deno.test(`match: ${NEGATIVE.length} sentences no template covers give []`, () => {
  const matched = NEGATIVE.filter((text) => MATCHER.match(text, VOCABULARY).length > 0);
  assert.deepEqual(matched, []);
});

Deno.test("match: every intent has templates in both languages", () => {
  assert.deepEqual(MATCHER.counts.languages, ["en", "zh"]);
  assert.equal(MATCHER.counts.intents, 16);
  assert.ok(MATCHER.counts.perLanguage.zh! > 100 && MATCHER.counts.perLanguage.en! > 100);
  assert.equal(MATCHER.counts.templates, MATCHER.counts.perLanguage.zh! + MATCHER.counts.perLanguage.en!);
});

Deno.test("match: the template field names the file and the line of the template", () => {
  const best = MATCHER.match("每个工作日早上七点叫我", VOCABULARY)[0]!;
  const [file, line] = best.template.split(":");
  assert.equal(file, "zh.yaml");
  const text = EMBEDDED_INTENT_FILES.find((f) => f.name === "zh.yaml")!.text;
  assert.match(text.split("\n")[Number(line) - 1]!, /\{when\}\(叫我\|叫醒我/);
});

Deno.test("match: results are deduplicated and best first; free text takes as little as it can", () => {
  const matches = MATCHER.match("remind me to call mum tomorrow at 7 pm", VOCABULARY);
  assert.deepEqual(matches[0]!.slots, {
    message: "call mum",
    when: { kind: "at", hour: 19, minute: 0, day: { relative: 1 } },
  });
  assert.ok(matches.some((match) => match.slots.message === "call mum tomorrow"));
  const keys = matches.map((match) => JSON.stringify([match.intent, match.slots]));
  assert.equal(new Set(keys).size, keys.length);
  // 客厅灯 is a name and also 客厅 + 灯: the name comes first, the place and kind after.
  assert.deepEqual(MATCHER.match("打开客厅灯", VOCABULARY).map((match) => match.slots), [
    { name: "客厅灯" },
    { place: "客厅", domain: "light" },
  ]);
});

Deno.test("match: when only the device kind tells intents apart, the kind a name tells comes first", () => {
  const thermostat = MATCHER.match("set the thermostat to 22", VOCABULARY).map((match) => match.intent);
  assert.equal(thermostat[0], "HassClimateSetTemperature");
  assert.ok(thermostat.includes("HassLightSet"));
  assert.equal(MATCHER.match("把客厅灯调到50", VOCABULARY)[0]!.intent, "HassLightSet");
  assert.equal(MATCHER.match("把窗帘调到50%", VOCABULARY)[0]!.intent, "HassSetPosition");
});

Deno.test("match: the message keeps the person's own casing and characters", () => {
  const best = MATCHER.match("Remind me in 5 minutes to call Mum & Dad!", VOCABULARY)[0]!;
  assert.equal(best.slots.message, "call Mum & Dad");
  assert.equal(MATCHER.match("提醒我二十分钟后，关火。", VOCABULARY)[0]!.slots.message, "关火");
});

Deno.test("match: a name that ends with a name_suffix word also answers to the rest, when unambiguous", () => {
  assert.deepEqual(MATCHER.match("close the garage", VOCABULARY)[0]!.slots, { name: "Garage door" });
  assert.deepEqual(MATCHER.match("打开车库", VOCABULARY)[0]!.slots, { name: "车库门" });
  // 台 is one character: too little to stand for 台灯. Kitchen is a place, so it never means "Kitchen light".
  assert.deepEqual(MATCHER.match("打开台", VOCABULARY), []);
  assert.ok(MATCHER.match("turn on the kitchen", VOCABULARY).every((match) => match.slots.name === undefined));
  const two: Vocabulary = { version: "two", names: ["Garage door", "Garage light"], places: [] };
  assert.deepEqual(MATCHER.match("close the garage", two), []);
});

Deno.test("match: names come from the vocabulary of each call, cached per version", () => {
  const first: Vocabulary = { version: 7, names: ["Sauna"], places: [] };
  assert.deepEqual(MATCHER.match("turn on the sauna", first)[0]!.slots, { name: "Sauna" });
  const renamed: Vocabulary = { version: 8, names: ["Steam room"], places: [] };
  assert.deepEqual(MATCHER.match("turn on the sauna", renamed), []);
  assert.deepEqual(MATCHER.match("turn on the steam room", renamed)[0]!.slots, { name: "Steam room" });
  // The same version is the same vocabulary: its index is reused, not rebuilt.
  assert.deepEqual(MATCHER.match("turn on the sauna", { version: 7, names: [], places: [] })[0]!.slots, {
    name: "Sauna",
  });
});

Deno.test("match never throws, whatever the text", () => {
  for (
    const text of ["", "   ", "💡💡", "%%%", "(打开|", "{name}", "<turn_on>", "a".repeat(10_000), "开".repeat(500)]
  ) {
    assert.deepEqual(MATCHER.match(text, VOCABULARY), [], text.slice(0, 20));
  }
  const long = "remind me to " + "call mum and ".repeat(40) + "at 7 pm";
  assert.equal(MATCHER.match(long, VOCABULARY)[0]?.intent, "HomedReminderCreate");
});

Deno.test("matchOpen: an unknown device or place name is taken as said and reported", () => {
  assert.deepEqual(MATCHER.match("turn on the sauna", VOCABULARY), []);
  assert.deepEqual(MATCHER.matchOpen("turn on the sauna", VOCABULARY)[0], {
    intent: "HassTurnOn",
    language: "en",
    slots: { name: "sauna" },
    template: MATCHER.matchOpen("turn on the sauna", VOCABULARY)[0]!.template,
    unknown: ["name"],
    unknownText: { name: "sauna" },
  });
  const place = MATCHER.matchOpen("打开桑拿房的灯", VOCABULARY)[0]!;
  assert.equal(place.intent, "HassTurnOn");
  assert.deepEqual(place.slots, { place: "桑拿房", domain: "light" });
  assert.deepEqual(place.unknown, ["place"]);
  assert.deepEqual(place.unknownText, { place: "桑拿房" });
  const both = MATCHER.matchOpen("turn off the sauna light in the attic", VOCABULARY)[0]!;
  assert.deepEqual(both.slots, { name: "sauna light", place: "attic" });
  assert.deepEqual(both.unknown, ["name", "place"]);
  assert.deepEqual(both.unknownText, { name: "sauna light", place: "attic" });
});

Deno.test("matchOpen: known names still match as known, and chatter still gives []", () => {
  const known = MATCHER.matchOpen("turn on the kitchen light", VOCABULARY)[0]!;
  assert.deepEqual(known.slots, { name: "Kitchen light" });
  assert.equal(known.unknown, undefined);
  // Fewer unknown words first: "hallway" as an unknown place and "light" as the kind, before "hallway light" as a name.
  const open = MATCHER.matchOpen("set the hallway light to 30%", VOCABULARY);
  assert.deepEqual(open[0]!.slots, { place: "hallway", domain: "light", percent: 30 });
  assert.deepEqual(open[0]!.unknownText, { place: "hallway" });
  assert.ok(open.some((match) => match.slots.name === "hallway light"));
  for (
    const text of [
      "今天天气怎么样",
      "tell me a joke",
      "提醒",
      "what do you think about lights",
      "I turned off the light",
    ]
  ) {
    assert.deepEqual(MATCHER.matchOpen(text, VOCABULARY), [], text);
  }
  // Open text is at most 8 tokens per slot.
  const long = MATCHER.matchOpen("lock the " + "very ".repeat(12) + "big gate", VOCABULARY);
  assert.ok(long.length > 0);
  for (const match of long) {
    for (const text of Object.values(match.unknownText ?? {})) assert.ok(text.split(" ").length <= 8, text);
  }
});

Deno.test("compile: a user file adds templates, list values and rule alternatives to the shipped ones", () => {
  const mine = [
    "language: zh",
    "rules:",
    '  turn_on: "(弄亮|整开)"',
    "lists:",
    "  domain:",
    "    蚊香: switch",
    "  kelvin_word:",
    "    暖光: 2200",
    "intents:",
    "  HassTurnOn:",
    '    - "芝麻开门"',
    "  HomedReminderCreate:",
    '    - sentence: "{when}喊我吃饭"',
    "      slots: { message: 吃饭 }",
  ].join("\n");
  const matcher = IntentMatcher.compile([...EMBEDDED_INTENT_FILES, { name: "mine.yaml", text: mine }]);
  assert.equal(matcher.counts.templates, MATCHER.counts.templates + 2);
  assert.deepEqual(matcher.match("整开客厅灯", VOCABULARY)[0]!.slots, { name: "客厅灯" });
  assert.deepEqual(matcher.match("打开客厅灯", VOCABULARY)[0]!.slots, { name: "客厅灯" });
  assert.deepEqual(matcher.match("打开卧室的蚊香", VOCABULARY)[0]!.slots, { place: "卧室", domain: "switch" });
  assert.equal(matcher.match("把台灯调成暖光", VOCABULARY)[0]!.slots.kelvin, 2200);
  const sesame = matcher.match("芝麻开门", VOCABULARY)[0]!;
  assert.equal(sesame.template, "mine.yaml:11");
  assert.deepEqual(matcher.match("中午十二点喊我吃饭", VOCABULARY)[0]!.slots, {
    message: "吃饭",
    when: { kind: "at", hour: 12, minute: 0, day: "next" },
  });
});

/** Asserts that compiling `text` as "mine.yaml" fails at `line`, mentioning each of `mentions`. */
function assertCompileFails(text: string, line: number, mentions: string[]) {
  assert.throws(() => IntentMatcher.compile([{ name: "mine.yaml", text }]), (error: unknown) => {
    assert.ok(error instanceof IntentDataError, String(error));
    assert.equal(error.file, "mine.yaml");
    assert.equal(error.line, line, error.message);
    assert.ok(error.message.startsWith(`mine.yaml:${line}: `), error.message);
    for (const text of mentions) assert.ok(error.message.includes(text), `${error.message} should mention ${text}`);
    return true;
  });
}

Deno.test("compile reports an unknown rule, listing the known ones", () => {
  assertCompileFails(
    'language: en\nrules:\n  on: "(turn|switch) on"\nintents:\n  HassTurnOn:\n    - "<onn> {name}"\n',
    6,
    [
      "unknown rule <onn>",
      "known rules: <on>",
    ],
  );
  assertCompileFails('language: en\nrules:\n  on: "<of> on"\n', 3, ["unknown rule <of>"]);
});

Deno.test("compile reports an unknown slot, listing built-in slots and the language's lists", () => {
  assertCompileFails(
    'language: en\nlists:\n  colour: { red: red }\nintents:\n  HassLightSet:\n    - "make {name} {color}"\n',
    6,
    ["unknown slot {color}", "{name}", "{when}", "lists of en: {colour}"],
  );
  assertCompileFails('language: en\nintents:\n  HassTurnOn:\n    - "turn on {name:place}"\n', 4, [
    '{name} takes no ":place"',
  ]);
});

Deno.test("compile reports a list used for a slot it cannot fill", () => {
  assertCompileFails(
    'language: en\nlists:\n  kelvin_word: { warm: 2700 }\nintents:\n  HassLightSet:\n    - "make {name} {kelvin_word}"\n',
    6,
    ['{kelvin_word} fills no slot "kelvin_word"', "{kelvin_word:KEY}", "kelvin"],
  );
  assertCompileFails(
    'language: en\nlists:\n  shade: { warm: hot }\nintents:\n  HassLightSet:\n    - "make {name} {shade:kelvin}"\n',
    6,
    ['fills "kelvin", which takes a number', '"warm" to "hot"', "mine.yaml:3"],
  );
});

Deno.test("compile reports a rule cycle with the chain of rules", () => {
  assertCompileFails('language: zh\nrules:\n  a: "x <b>"\n  b: "[<a>]"\nintents:\n  HassTurnOn:\n    - "<a>"\n', 3, [
    "rule cycle <a> → <b> → <a>",
  ]);
});

Deno.test("compile reports template syntax, list and file errors with the file and line", () => {
  assertCompileFails('language: zh\nintents:\n  HassTurnOn:\n    - "打开(客厅"\n', 4, ['unclosed "("', "打开(客厅"]);
  assertCompileFails('language: zh\nintents:\n  HassTurnOn:\n    - "(打开||开)灯"\n', 4, ["empty alternative"]);
  assertCompileFails('language: zh\nrules:\n  on: "(打开|开"\n', 3, ['unclosed "("']);
  assertCompileFails('language: zh\nlists:\n  domain:\n    灯: light\n    "！": light\n', 5, ['"！"', "no words"]);
  assertCompileFails("language: zh\nintents:\n  HassTurnOnn: []\n", 3, ['unknown intent "HassTurnOnn"', "HassTurnOn"]);
  assertCompileFails("language: zh\nlists:\n  domain:\n    灯: [light]\n", 4, ["list domain", "string or a number"]);
  assertCompileFails("language: zh\nintents: [\n", 3, ["YAML syntax"]);
});

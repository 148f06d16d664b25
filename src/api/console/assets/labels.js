// Words for what homed reports in English: its own devices' and shipped plugins' descriptions, the plugin loader's
// reasons and the states of services and connections, in the page's language. Anything else (a plugin's own
// description, an API's message) is shown as it was written.
import { badge } from "./dom.js";
import { lang, t } from "./i18n.js";

/** Device descriptions by type (or by name where one type has two devices), in Chinese; English is homed's own. */
const DEVICES_ZH = {
  http: "HTTP 接口（POST /api/chat、/api/chat/stream）以及基于它的客户端，例如 homed chat",
  openai: "OpenAI 兼容入口（POST /v1/chat/completions）：使用 OpenAI 接口的应用和集成",
  timer: "提醒与日程：在设定的时间唤醒管家（自身不输出）",
  onebot: "通过 OneBot V11 连接 QQ：qq:private:<QQ 号> 是私聊，qq:group:<群号> 是群聊；收发文字、图片、语音和文件",
  speaker: "扬声器：把回复在房间里说出来（文字经语音合成，或直接播放音频）",
  camera: "摄像头：camera_snapshot 拍一张照片并说出画面内容",
  microphone: "麦克风：房间里的说话声转成文字，作为来自 mic 的消息（自身不输出，回复用语音说出）",
  gpio: "devices.gpio 中命名的 GPIO 线：输入的电平变化作为事件，输出用 gpio_set 控制",
  serial: "串口：按行收发",
  mqtt: "MQTT 代理：订阅的主题作为事件，可用 mqtt_publish 发布",
  home_assistant: "Home Assistant：实体的状态，以及可调用的服务",
  telegram:
    "Telegram 机器人：telegram:private:<聊天 id> 是私聊，telegram:group:<聊天 id> 是群聊；收发文字、图片、语音和文件",
  weixin:
    "个人微信（iLink 机器人接口）：weixin:private:<用户 id>，只有私聊；收发文字、图片和文件。对方发消息后的一段时间内管家才能给他写",
};

/** The descriptions of the plugins shipped in plugins/, in Chinese (by plugin name). */
const PLUGINS_ZH = {
  qq:
    "通过 OneBot V11 实现（NapCat、Lagrange.OneBot、go-cqhttp、LLOneBot）在 QQ 上与家人交流——与主人和列出的成员私聊，以及在列出的群里被点名时回答。",
};

/** A device's description in the page's language: homed's own devices translated, a plugin's as written. */
export function deviceDescription(device) {
  const original = device?.description ?? "";
  if (lang !== "zh") return original;
  if (device.type === "plugin") return PLUGINS_ZH[String(device.name ?? "").replace(/^plugin-/, "")] ?? original;
  return DEVICES_ZH[device.name === "openai" ? "openai" : device.type] ?? original;
}

/** A plugin's description in the page's language (the shipped ones translated, others as their authors wrote). */
export function pluginDescription(plugin) {
  const original = plugin?.description ?? "";
  return lang === "zh" && original ? PLUGINS_ZH[plugin.name] ?? original : original;
}

/** The plugin loader's reasons (`plugin/inspection.ts`, `plugin/gating.ts`) in the page's language. */
const REASONS = [
  [/^no requirements$/, () => t("reasonNone")],
  [/^no OpenClaw metadata: no gates$/, () => t("reasonNoGates")],
  [/^always: true$/, () => t("reasonAlways")],
  [/^disabled by (plugins\.entries\.\S+)$/, (m) => t("reasonDisabled", { key: m[1] })],
  [/^os: needs (.+), this is (\S+)$/, (m) => t("reasonOs", { needs: m[1], os: m[2] })],
  [/^its device comes from the (\S+) factory$/, (m) => t("reasonNative", { factory: m[1] })],
  [/^its (\S+) device is already on in homed's config$/, (m) => t("reasonNativeServed", { factory: m[1] })],
  [/^its skill\.json cannot be used$/, () => t("reasonManifestBroken")],
  [/^(\d+) tools from (Lua|no script)$/, (m) => t(m[2] === "Lua" ? "reasonLuaTools" : "reasonNoScript", { n: m[1] })],
  [/^requires\.bins: (\S+) at (.+)$/, (m) => t("reasonBinFound", { bin: m[1], at: m[2] })],
  [/^requires\.bins: (\S+) is not on PATH$/, (m) => t("reasonBinMissing", { bin: m[1] })],
  [/^requires\.env: (\S+) is set$/, (m) => t("reasonEnvSet", { name: m[1] })],
  [/^requires\.env: (\S+) is not set/, (m) => t("reasonEnvMissing", { name: m[1] })],
  [/^requires\.config: (\S+) is on$/, (m) => t("reasonConfigOn", { key: m[1] })],
  [/^requires\.config: (\S+) is not on/, (m) => t("reasonConfigOff", { key: m[1] })],
];

/** A reason of the plugin loader, translated when it is one the console knows. */
export function pluginReason(reason) {
  const text = typeof reason === "string" ? reason : JSON.stringify(reason);
  for (const [pattern, word] of REASONS) {
    const match = pattern.exec(text);
    if (match) return word(match);
  }
  return text;
}

const GOOD = /^(running|connected|open|ready|up|loaded|active|ok)$/i;
const PENDING = /^(connecting|opening|loading|reconnecting|waiting|starting|idle|stopping)$/i;

/** How a state reads: "ok", "warn" (on its way, or waiting) or "error". */
export function stateKind(state) {
  const text = String(state ?? "");
  if (GOOD.test(text)) return "ok";
  if (PENDING.test(text)) return "warn";
  return "error";
}

/** A state as a badge, in the page's language when the console knows the word. */
export function stateBadge(state) {
  const key = `state_${String(state ?? "unknown").toLowerCase()}`;
  const word = t(key);
  return badge(word === key ? String(state ?? "?") : word, stateKind(state));
}

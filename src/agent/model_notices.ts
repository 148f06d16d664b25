/**
 * The owner hears of the model once when it is lost, once when it is back and once when the spending cap is
 * reached, once of each damaged file homed set aside at start, and once a day while the data dir's disk is nearly
 * full (issue 38) — on their own channel, in the persona's language — and the log has every provider's change and
 * every file set aside. Nothing here waits: a notice that cannot be sent is logged and dropped (the console's banner
 * and `/api/status` say the same).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { DamagedFiles, SetAsideFile } from "../fs/set_aside.ts";
import { type DegradedStore, faultAdvice, type StoreHealth } from "../fs/store_health.ts";
import { formatBytes } from "../fs/free_space.ts";
import type { DiskWatch, LowDisk } from "../service/disk_watch.ts";
import type { ChainEvent, LlmAvailability } from "../provider/provider_chain.ts";
import { languagesOf, type ReplyLanguage } from "../intents/replies.ts";

/** Options of {@link tellOwnerOfModel}. */
export interface ModelNoticeOptions {
  llm: Pick<LlmAvailability, "onChange">;
  /** Sends a text to a channel (the IO manager's send). */
  send: (channel: string, text: string) => Promise<void>;
  /** The owner's own channel (`qq:private:<onebot.owner>`), or undefined when there is none: then only the log. */
  ownerChannel: string | undefined;
  /** The persona's text: notices are in its language (both languages for a bilingual persona). */
  persona: () => string;
  logger: Logger;
}

/**
 * Subscribes to the chain's changes; returns the unsubscribe.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import type { LlmAvailability } from "../provider/provider_chain.ts";
 *
 * declare const llm: LlmAvailability;
 * const stop = tellOwnerOfModel({
 *   llm,
 *   send: async (channel, text) => console.log(channel, text),
 *   ownerChannel: "qq:private:10001",
 *   persona: () => "You are Alfred.",
 *   logger: getLogger(["homed"]),
 * });
 * stop();
 * ```
 */
export function tellOwnerOfModel(options: ModelNoticeOptions): () => void {
  return options.llm.onChange((event) => {
    logEvent(options.logger, event);
    tellOwner(options, event.type, noticeText(event, languagesOf(options.persona())));
  });
}

/** The one way a notice reaches the owner: their channel, or nowhere (the log and the status say it). */
function tellOwner(options: Omit<ModelNoticeOptions, "llm">, what: string, text: string | undefined): void {
  if (!text || !options.ownerChannel) return;
  options.send(options.ownerChannel, text).catch((error) =>
    options.logger.warning("Could not tell the owner that {what}: {error}", { what, error })
  );
}

/** Options of {@link tellOwnerOfSetAside}: those of {@link tellOwnerOfModel}, with the damaged files for the chain. */
export interface SetAsideNoticeOptions extends Omit<ModelNoticeOptions, "llm"> {
  damaged: Pick<DamagedFiles, "subscribe">;
}

/**
 * Logs each damaged file set aside (those set aside before this was called too) and tells the owner of it once, with
 * what to do; returns the unsubscribe.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import { DamagedFiles } from "../fs/set_aside.ts";
 *
 * const stop = tellOwnerOfSetAside({
 *   damaged: new DamagedFiles(),
 *   send: async (channel, text) => console.log(channel, text),
 *   ownerChannel: "qq:private:10001",
 *   persona: () => "You are Alfred.",
 *   logger: getLogger(["homed"]),
 * });
 * stop();
 * ```
 */
export function tellOwnerOfSetAside(options: SetAsideNoticeOptions): () => void {
  return options.damaged.subscribe((entry) => {
    options.logger.error(
      "{file} was damaged ({why}); set it aside as {moved_to} and started with {kept}. To go back to the last " +
        "automatic backup: stop homed, then run `homed restore --latest`",
      { ...entry },
    );
    tellOwner(options, `${entry.file} was set aside`, setAsideText(entry, languagesOf(options.persona())));
  });
}

/**
 * What the owner is told of a damaged file set aside, in `languages`.
 *
 * @example
 * ```ts
 * setAsideText({
 *   file: "/var/lib/homed/schedules.db",
 *   moved_to: "/var/lib/homed/schedules.db.damaged-2026-12-04T02:00:00.000Z",
 *   why: "database disk image is malformed",
 *   kept: "a new, empty database",
 *   kept_zh: "一个新的空数据库",
 *   at: "2026-12-04T02:00:00.000Z",
 * }, ["en"]);
 * // "homed found /var/lib/homed/schedules.db damaged (database disk image is malformed) and set it aside as …"
 * ```
 */
export function setAsideText(entry: SetAsideFile, languages: readonly Language[]): string {
  return languages.map((language) =>
    language === "zh"
      ? `homed 启动时发现 ${entry.file} 已损坏（${entry.why}），已把它移到 ${entry.moved_to}，现在用的是：${entry.kept_zh}。` +
        "要回到最近一次自动备份：先停止 homed，再运行 `homed restore --latest`。"
      : `homed found ${entry.file} damaged (${entry.why}) and set it aside as ${entry.moved_to}; it started with ` +
        `${entry.kept}. To go back to the last automatic backup, stop homed and run \`homed restore --latest\`.`
  ).join("\n");
}

/** Options of {@link tellOwnerOfStorageFault}: those of {@link tellOwnerOfModel}, with the stores' health. */
export interface StorageFaultNoticeOptions extends Omit<ModelNoticeOptions, "llm"> {
  health: Pick<StoreHealth, "subscribe">;
}

/**
 * Tells the owner once per episode that homed cannot write to its disk (issue 38.2: full, read-only, failing): when
 * the first store turns degraded; the log also hears when every store writes again. Returns the unsubscribe.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import { StoreHealth } from "../fs/store_health.ts";
 *
 * const stop = tellOwnerOfStorageFault({
 *   health: new StoreHealth(),
 *   send: async (channel, text) => console.log(channel, text),
 *   ownerChannel: "qq:private:10001",
 *   persona: () => "You are Alfred.",
 *   logger: getLogger(["homed"]),
 * });
 * stop();
 * ```
 */
export function tellOwnerOfStorageFault(options: StorageFaultNoticeOptions): () => void {
  return options.health.subscribe((event) => {
    if (event.type === "recovered") {
      options.logger.info("Every store writes again (the last: {last})", { last: event.last });
      return;
    }
    const { store } = event;
    options.logger.error("{store} cannot write {path}: {error} — {advice}", {
      ...store,
      advice: faultAdvice(store.kind),
    });
    tellOwner(options, `${store.store} cannot write`, storageFaultText(store, languagesOf(options.persona())));
  });
}

/**
 * What the owner is told when homed cannot write to its disk, in `languages`.
 *
 * @example
 * ```ts
 * storageFaultText({
 *   store: "memory journal",
 *   path: "/var/lib/homed/memory/candidates.jsonl",
 *   kind: "disk_full",
 *   error: "No space left on device (os error 28)",
 *   since: "2026-12-04T02:00:00.000Z",
 * }, ["en"]);
 * // "homed cannot write to its disk: the disk is full … (memory journal, /var/lib/homed/memory/candidates.jsonl: …)"
 * ```
 */
export function storageFaultText(store: DegradedStore, languages: readonly Language[]): string {
  const zhWhat =
    { disk_full: "磁盘满了", read_only: "磁盘变成只读了", io_error: "磁盘写入出错（I/O 错误）" }[store.kind];
  return languages.map((language) =>
    language === "zh"
      ? `homed 写不进它的磁盘：${zhWhat}（${store.store}，${store.path}：${store.error}）。我照常回答，但现在说的话记不下来；` +
        "磁盘能写以后会自动恢复，不用重启。请腾出空间或检查磁盘。"
      : `homed cannot write to its disk: ${faultAdvice(store.kind)} (${store.store}, ${store.path}: ${store.error}). ` +
        "It still answers, but what is said now is not remembered; writing resumes by itself once the disk writes " +
        "again, without a restart."
  ).join("\n");
}

/** Options of {@link tellOwnerOfLowDisk}: those of {@link tellOwnerOfModel}, with the disk watch for the chain. */
export interface LowDiskNoticeOptions extends Omit<ModelNoticeOptions, "llm"> {
  disk: Pick<DiskWatch, "onLow">;
}

/**
 * Tells the owner when the data dir's disk is nearly full — when it turns low, then at most once a day while it stays
 * low ({@link DiskWatch} decides when); returns the unsubscribe.
 *
 * @example
 * ```ts
 * import { getLogger } from "@logtape/logtape";
 * import { systemClock } from "../clock.ts";
 * import { DiskWatch } from "../service/disk_watch.ts";
 *
 * const disk = new DiskWatch({ dir: "/var/lib/homed", lowBelow: 500 * 1024 ** 2, clock: systemClock, logger: getLogger(["homed"]) });
 * const stop = tellOwnerOfLowDisk({
 *   disk,
 *   send: async (channel, text) => console.log(channel, text),
 *   ownerChannel: "qq:private:10001",
 *   persona: () => "You are Alfred.",
 *   logger: getLogger(["homed"]),
 * });
 * stop();
 * ```
 */
export function tellOwnerOfLowDisk(options: LowDiskNoticeOptions): () => void {
  return options.disk.onLow((low) =>
    tellOwner(options, `the disk of ${low.dir} is nearly full`, lowDiskText(low, languagesOf(options.persona())))
  );
}

/**
 * What the owner is told of a nearly full disk, in `languages`.
 *
 * @example
 * ```ts
 * lowDiskText({ dir: "/var/lib/homed", free_bytes: 200 * 1024 ** 2, total_bytes: 32 * 1024 ** 3, low_below: 500 * 1024 ** 2 }, ["en"]);
 * // "The disk homed keeps its data on (/var/lib/homed) is nearly full: 200 MB free of 32 GB. …"
 * ```
 */
export function lowDiskText(low: LowDisk, languages: readonly Language[]): string {
  const free = formatBytes(low.free_bytes);
  const total = formatBytes(low.total_bytes);
  const below = formatBytes(low.low_below);
  return languages.map((language) =>
    language === "zh"
      ? `homed 存数据的磁盘（${low.dir}）快满了：只剩 ${free}，共 ${total}（低于 ${below} 就提醒）。` +
        "磁盘满了以后 homed 记不下新的东西：请删掉不用的文件，或把备份（backup.dir）移到另一块磁盘。这条提醒每天最多一次。"
      : `The disk homed keeps its data on (${low.dir}) is nearly full: ${free} free of ${total} (the warning is ` +
        `below ${below}). Once it is full homed cannot save anything new: delete files you do not need, or move the ` +
        "backups (backup.dir) to another disk. You hear this at most once a day."
  ).join("\n");
}

function logEvent(logger: Logger, event: ChainEvent): void {
  switch (event.type) {
    case "lost":
      return logger.error("No model is answering: homed answers what it can locally until one is back");
    case "back":
      return logger.info("A model answers again: {provider}", { provider: event.provider });
    case "provider_down":
      return logger.warning("{provider} is down: {error}", { provider: event.provider, error: event.error });
    case "provider_up":
      return logger.info("{provider} answers again", { provider: event.provider });
    case "budget_reached":
      return logger.warning("{provider} reached its {period} budget ({spent} of {limit} {currency})", {
        ...event,
      });
  }
}

type Language = ReplyLanguage;

/**
 * What the owner is told of `event` in `languages`, or undefined for changes only the log hears of.
 *
 * @example
 * ```ts
 * noticeText({ type: "back", provider: "deepseek-v4-flash@api.deepseek.com" }, ["en"]);
 * // "The language model answers again (deepseek-v4-flash@api.deepseek.com)."
 * ```
 */
export function noticeText(event: ChainEvent, languages: readonly Language[]): string | undefined {
  const lines = languages.map((language) => {
    const zh = language === "zh";
    switch (event.type) {
      case "lost":
        return zh
          ? "语言模型现在都连不上了。家里的设备开关、状态查询、提醒和报时照常在本地处理；其他问题要等模型恢复。"
          : "No language model is answering now. Switching devices, reading states, reminders and the time still " +
            "work locally; everything else waits until a model is back.";
      case "back":
        return zh ? `语言模型恢复了（${event.provider}）。` : `The language model answers again (${event.provider}).`;
      case "budget_reached": {
        const figure = event.currency === "tokens"
          ? `${event.spent} / ${event.limit} tokens`
          : `${event.spent.toFixed(2)} / ${event.limit.toFixed(2)} ${event.currency}`;
        const period = zh ? (event.period === "daily" ? "今天" : "本月") : event.period;
        return zh
          ? `${period}的模型预算已用完（${figure}），在下个周期之前不再调用 ${event.provider}，改用备用模型和本地处理。`
          : `The ${period} model budget is used up (${figure}): ${event.provider} is not called again until the ` +
            "period turns; fallbacks and local commands answer meanwhile.";
      }
      default:
        return undefined;
    }
  }).filter((line): line is string => line !== undefined);
  return lines.length ? lines.join("\n") : undefined;
}

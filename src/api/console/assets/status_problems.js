// What needs attention in /api/status, worst first, as the status page lists it at its top (a model down or over its
// budget, a device or QQ connection down or refused, a failed service, a job failing or past its deadline, a timer
// the watchdog woke, memory that could not open, the disk nearly full, a file set aside, a failed backup), and the
// words the dashboard's cards share with that list.
import { fmtCost, fmtDuration, fmtNum, fmtTime } from "./dom.js";
import { lang, t } from "./i18n.js";
import { stateKind } from "./labels.js";

/** Bytes as people read them, 1024-based like `homed doctor` and the owner's notice ("3.4 MB", "120 GB"). */
export function fmtBytes(bytes) {
  if (typeof bytes !== "number" || !Number.isFinite(bytes)) return "—";
  const units = ["B", "KB", "MB", "GB", "TB", "PB"];
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${fmtNum(value, unit === 0 || value >= 10 ? 0 : 1)} ${units[unit]}`;
}

/** What homed started with instead of a damaged file, in the console's language when the store said it in both. */
export const keptText = (entry) => (lang === "zh" && entry.kept_zh ? entry.kept_zh : entry.kept);

export const BUDGET_KINDS = ["daily", "monthly", "daily_tokens", "monthly_tokens"];

export const budgetAmount = (value, currency) =>
  currency === "tokens" ? t("tokensN", { n: fmtNum(value) }) : fmtCost(value, currency);

/** The ways a QQ connection can be refused, as the device counts them (`devices/qq/refusals.ts`). */
const refusalWord = (reason) => {
  const key = `refusal_${reason}`;
  const word = t(key);
  return word === key ? reason : word;
};

/** One refusal count as "wrong token ×3 (last 10:02 from 127.0.0.1)". */
export function refusalLine(reason, count, last) {
  return t("refusalLine", {
    reason: refusalWord(reason),
    n: fmtNum(count),
    time: last ? fmtTime(last.at, true) : "—",
    from: last?.from ?? "?",
  });
}

/**
 * What needs attention in `/api/status` (and `/api/usage`), worst first: [{ level: "error" | "warn", text }].
 */
export function problemsOf(body, usage) {
  const found = [];
  const add = (level, text) => found.push({ level, text });
  const llm = body.llm ?? {};
  for (const provider of llm.providers ?? []) {
    const primary = provider.role === "primary";
    if (provider.state === "over_budget") {
      add("error", t("problemOverBudget", { name: provider.name }));
    } else if (provider.state !== "up") {
      add(
        primary ? "error" : "warn",
        t("problemModelDown", {
          name: provider.name,
          since: fmtTime(provider.since),
          why: provider.last_error ?? t("modelDown"),
        }),
      );
    }
  }
  const budget = llm.budget ?? usage?.budget ?? null;
  for (const kind of BUDGET_KINDS) {
    const line = budget?.[kind];
    if (!line || !(line.limit > 0)) continue;
    const values = {
      kind: t(`budget_${kind}`),
      spent: budgetAmount(line.spent, line.currency),
      limit: budgetAmount(line.limit, line.currency),
    };
    if (line.left <= 0) add("error", t("problemBudgetReached", values));
    else if (line.spent / line.limit >= 0.8) add("warn", t("problemBudgetNear", values));
  }
  for (const [name, service] of Object.entries(body.services ?? {})) {
    if (service.state === "failed") add("error", t("problemServiceFailed", { name }));
    else if (service.state !== "running") add("warn", t("problemServiceState", { name, state: service.state }));
    if (service.status_error) add("warn", t("problemServiceStatus", { name, why: service.status_error }));
    for (const [job, state] of Object.entries(service.jobs ?? {})) {
      if (state?.overdue) add("warn", t("problemJobOverdue", { job, deadline: fmtDuration(state.deadline_ms) }));
      if (state?.consecutive_failures > 0) {
        add(
          "warn",
          t("problemJobFailing", { job, n: fmtNum(state.consecutive_failures), why: state.last_error ?? "" }),
        );
      }
    }
  }
  // The timer's watchdog found a wake-up lost (and woke it): reminders may have come late; the log says when.
  if (body.schedules?.stalls > 0) {
    add(
      "warn",
      t("problemTimerStalled", { n: fmtNum(body.schedules.stalls), last: fmtTime(body.schedules.last_wake) }),
    );
  }
  const memory = body.services?.memory;
  if (memory?.stores === "failed") add("error", t("problemMemoryFailed", { why: memory.error ?? "" }));
  for (const [name, device] of Object.entries(body.services?.io?.devices ?? {})) {
    if (typeof device?.state === "string" && stateKind(device.state) !== "ok") {
      add(
        stateKind(device.state),
        t("problemDeviceState", {
          name,
          state: device.state,
          why: device.last_error ? `: ${device.last_error}` : "",
        }),
      );
    }
    for (const [port, state] of Object.entries(device?.ports ?? {})) {
      if (state?.state !== "open") {
        add(
          "warn",
          t("problemPortState", { name: `${name} ${port}`, state: state?.state ?? "?", why: state?.last_error ?? "" }),
        );
      }
    }
    if (device?.type === "onebot") {
      const bots = device.bots ?? [];
      if (bots.length === 0) add("warn", t("problemQqNone"));
      for (const bot of bots) {
        for (const connection of bot.connections ?? []) {
          if (connection.qq_online === false) add("warn", t("problemQqOffline", { self: bot.self_id }));
        }
      }
      const refused = device.refused;
      if (refused?.total > 0) {
        const last = new Map((refused.last ?? []).map((view) => [view.reason, view]));
        const lines = Object.entries(refused.by_reason ?? {}).map(([reason, count]) =>
          refusalLine(reason, count, last.get(reason))
        );
        add(
          bots.length ? "warn" : "error",
          t("problemQqRefused", { n: fmtNum(refused.total), what: lines.join("; ") }),
        );
      }
      if (device.queued_replies > 0) add("warn", t("problemQqQueued", { n: fmtNum(device.queued_replies) }));
    }
  }
  const storage = body.storage ?? {};
  if (storage.low) {
    add(
      "error",
      t("problemDiskLow", {
        free: fmtBytes(storage.free_bytes),
        total: fmtBytes(storage.total_bytes),
        below: fmtBytes(storage.low_below),
      }),
    );
  }
  for (const entry of storage.set_aside ?? []) {
    add("warn", t("problemSetAside", { file: entry.file, why: entry.why, kept: keptText(entry) }));
  }
  if (body.backups?.last_error) add("warn", t("problemBackupFailed", { why: body.backups.last_error }));
  const forward = body.services?.["onebot-forward"];
  if (forward && forward.connected === false) add("warn", t("problemForward", { url: forward.url ?? "" }));
  for (const [name, server] of Object.entries(body.services?.mcp?.servers ?? {})) {
    if (stateKind(server.state) !== "ok") {
      add(
        "warn",
        t("problemMcp", { name, state: server.state, why: server.last_error ? `: ${server.last_error}` : "" }),
      );
    }
  }
  return found.sort((a, b) => (a.level === b.level ? 0 : a.level === "error" ? -1 : 1));
}

// Status as a dashboard read at a glance: what needs attention first (a model down or over its budget, a device or
// QQ connection down or refused, a failed service or job, memory that could not open), then the model and today's
// cost against the budget, channels and devices, memory, the next reminders, homed itself; the usage of the last 30
// days as a chart; the owner's log; and the whole of /api/status one click away.
import { api } from "../api.js";
import { badge, fill, fmtCost, fmtDuration, fmtNum, fmtTime, h, load, pretty, statusLine, table } from "../dom.js";
import { t } from "../i18n.js";
import { deviceDescription, stateBadge, stateKind } from "../labels.js";
import { homedToday, soonTime, usageChart, usageLegend } from "../pictures.js";
import { BUDGET_KINDS, budgetAmount, fmtBytes, keptText, problemsOf, refusalLine } from "../status_problems.js";
import { chatStateLine, weixinView } from "../weixin_login.js";

const share = (value) => {
  if (typeof value !== "number" || !Number.isFinite(value)) return "—";
  return `${fmtNum(value <= 1 ? value * 100 : value, 1)} %`;
};

const fact = (label, value, cls) => [h("dt", {}, label), h("dd", cls ? { class: cls } : {}, value ?? "—")];

const card = (id, title, ...children) => h("section", { id, class: "dash-card card" }, h("h3", {}, title), ...children);

/** The model card: each provider's state, today's requests, tokens and cost, the budget's lines as meters. */
function modelCard(body, usage) {
  const llm = body.llm ?? {};
  const currency = usage?.currency ?? undefined;
  const todayKey = homedToday(usage?.days);
  const today = (usage?.days ?? []).find((day) => day.day === todayKey) ?? (usage?.days ?? [])[0];
  const isToday = today?.day === todayKey;
  const budget = llm.budget ?? usage?.budget ?? null;
  const lines = BUDGET_KINDS.filter((kind) => budget?.[kind]?.limit > 0);
  return card(
    "dash-model",
    t("model"),
    h(
      "ul",
      { class: "providers" },
      (llm.providers ?? []).map((provider) =>
        h(
          "li",
          { class: "provider", "data-state": provider.state },
          stateBadge(provider.state),
          " ",
          h("strong", {}, provider.model ?? provider.name),
          " ",
          h("span", { class: "muted" }, t(provider.role === "primary" ? "primary" : "fallback")),
          h(
            "span",
            { class: "meta block-line" },
            t("sinceTime", { time: fmtTime(provider.since) }),
            provider.state !== "up" && provider.last_error ? ` · ${provider.last_error}` : "",
            provider.next_probe ? ` · ${t("nextProbe", { time: fmtTime(provider.next_probe) })}` : "",
          ),
        )
      ),
    ),
    h(
      "dl",
      { class: "kv" },
      fact(
        t(isToday ? "today" : "lastDay"),
        today
          ? t("todayFigures", {
            requests: fmtNum(today.requests),
            tokens: fmtNum((today.prompt_tokens ?? 0) + (today.completion_tokens ?? 0)),
          })
          : t("noUsage"),
      ),
      fact(t("cost"), today && currency ? fmtCost(today.cost, currency) : t("noPricesShort")),
    ),
    lines.length
      ? h(
        "div",
        { class: "budgets" },
        lines.map((kind) => {
          const line = budget[kind];
          const ratio = Math.min(1, line.spent / line.limit);
          return h(
            "div",
            { class: `budget${line.left <= 0 ? " reached" : ratio >= 0.8 ? " near" : ""}`, "data-kind": kind },
            h(
              "label",
              {},
              h("span", {}, t(`budget_${kind}`)),
              " ",
              h(
                "span",
                { class: "muted" },
                `${budgetAmount(line.spent, line.currency)} / ${budgetAmount(line.limit, line.currency)}`,
              ),
              h("meter", { min: 0, max: 1, low: 0.6, high: 0.8, optimum: 0, value: ratio }),
            ),
          );
        }),
      )
      : h("p", { class: "meta" }, t("noBudget")),
  );
}

/** A QQ device: each connection (account, role, since when, last event), what ended lately, the refusals. */
function qqView(device) {
  const bots = device.bots ?? [];
  const refused = device.refused ?? { total: 0, by_reason: {}, last: [] };
  const last = new Map((refused.last ?? []).map((view) => [view.reason, view]));
  return [
    bots.length
      ? h(
        "ul",
        { class: "qq-connections" },
        bots.flatMap((bot) =>
          (bot.connections ?? []).map((connection) =>
            h(
              "li",
              { class: "qq-connection", "data-self-id": bot.self_id, "data-role": connection.role },
              badge(
                connection.open === false ? t("state_closed") : t("state_connected"),
                connection.open === false ? "error" : "ok",
              ),
              " ",
              h("strong", {}, `QQ ${bot.self_id}`),
              bot.nickname ? ` (${bot.nickname})` : "",
              " · ",
              t(`role_${connection.role}`),
              connection.qq_online === false ? [" ", badge(t("qqOffline"), "warn")] : null,
              h(
                "span",
                { class: "meta block-line" },
                t("qqConnectionMeta", {
                  since: fmtTime(connection.connected_at),
                  event: connection.last_event_at ? fmtTime(connection.last_event_at, true) : t("noneYet"),
                  beat: connection.last_heartbeat_at ? fmtTime(connection.last_heartbeat_at, true) : t("noneYet"),
                }),
                bot.address ? ` · ${t("fromAddress", { address: bot.address })}` : "",
                bot.app ? ` · ${bot.app}` : "",
              ),
            )
          )
        ),
      )
      : h("p", { class: "qq-none status error" }, t("qqNoConnection")),
    refused.total > 0
      ? h(
        "ul",
        { class: "qq-refused" },
        Object.entries(refused.by_reason ?? {}).map(([reason, count]) =>
          h(
            "li",
            { "data-reason": reason },
            badge(t("refused"), "warn"),
            " ",
            refusalLine(reason, count, last.get(reason)),
            last.get(reason)?.path
              ? h(
                "span",
                { class: "meta block-line" },
                h("code", {}, last.get(reason).path),
                " ",
                last.get(reason).message,
              )
              : null,
          )
        ),
      )
      : null,
    (device.ended ?? []).length
      ? h(
        "details",
        { class: "qq-ended" },
        h("summary", {}, t("qqEnded", { n: device.ended.length })),
        h(
          "ul",
          {},
          device.ended.map((ended) =>
            h(
              "li",
              {},
              t("qqEndedLine", {
                self: ended.self_id,
                role: t(`role_${ended.role}`),
                from: fmtTime(ended.connected_at, true),
                to: fmtTime(ended.closed_at, true),
              }),
            )
          ),
        ),
      )
      : null,
  ];
}

/** One device's state in a line or two; `viewer` is who looks (the owner may log WeChat in) and the page's refresh. */
function deviceState(name, device, viewer) {
  if (device.type === "onebot") return qqView(device);
  if (device.type === "weixin") return weixinView(device, viewer);
  if (device.type === "telegram") return [chatStateLine(device)];
  const parts = [];
  if (typeof device.state === "string") {
    parts.push(
      h(
        "p",
        {},
        stateBadge(device.state),
        device.connected_at ? ` ${t("sinceTime", { time: fmtTime(device.connected_at) })}` : "",
        device.last_error && stateKind(device.state) !== "ok"
          ? h("span", { class: "meta block-line" }, device.last_error)
          : null,
        device.next_retry_at
          ? h("span", { class: "meta block-line" }, t("nextRetry", { time: fmtTime(device.next_retry_at) }))
          : null,
      ),
    );
  }
  for (const [port, state] of Object.entries(device.ports ?? {})) {
    parts.push(h("p", {}, stateBadge(state.state), ` ${port} `, h("code", {}, state.path ?? "")));
  }
  if (name === "http" && typeof device.event_clients === "number") {
    parts.push(h("p", { class: "meta" }, t("eventClients", { n: fmtNum(device.event_clients) })));
  }
  if (device.type === "timer") {
    parts.push(h("p", { class: "meta" }, t("activeSchedules", { n: fmtNum(device.active ?? 0) })));
  }
  const queued = device.outbox?.queued ?? 0;
  if (queued > 0) parts.push(h("p", { class: "meta" }, t("waitingToSend", { n: fmtNum(queued) })));
  return parts;
}

/** The channels and devices card; plugin devices are counted, their page has them. */
function devicesCard(body, viewer) {
  const states = body.services?.io?.devices ?? {};
  const listed = body.devices ?? [];
  const own = listed.filter((device) => device.type !== "plugin");
  const plugins = listed.length - own.length;
  return card(
    "dash-devices",
    t("devices"),
    h(
      "ul",
      { class: "dash-devices" },
      own.map((device) =>
        h(
          "li",
          { class: "dash-device", "data-name": device.name },
          h(
            "p",
            { class: "device-head" },
            h("strong", {}, device.name),
            " ",
            h("span", { class: "muted" }, deviceDescription(device)),
          ),
          deviceState(device.name, states[device.name] ?? {}, viewer),
        )
      ),
    ),
    plugins > 0 ? h("p", { class: "meta" }, h("a", { href: "#plugins" }, t("pluginDevices", { n: plugins }))) : null,
  );
}

function memoryCard(body) {
  const memory = body.services?.memory ?? {};
  const distill = memory.jobs?.["memory.distill"];
  return card(
    "dash-memory",
    t("memoryLabel"),
    h("p", {}, t("memoryStores"), " ", stateBadge(memory.stores)),
    memory.error ? h("p", { class: "status error" }, memory.error) : null,
    h(
      "dl",
      { class: "kv" },
      fact(
        t("memorySize"),
        t("memorySizeValue", {
          entities: fmtNum(memory.entities),
          facts: fmtNum(memory.facts),
          documents: fmtNum(memory.documents),
        }),
      ),
      fact(
        t("memoryJournal"),
        t("memoryJournalValue", {
          candidates: fmtNum(memory.candidates),
          distilled: fmtNum(memory.distilled),
        }),
      ),
      fact(
        t("lastDistill"),
        distill?.last_run_at
          ? [fmtTime(distill.last_run_at), distill.last_error ? [" ", badge(t("failed"), "error")] : null]
          : t("notYet"),
      ),
      fact(t("nextDistill"), fmtTime(distill?.next_run_at)),
      fact(
        t("conversationContext"),
        t("contextValue", {
          entries: fmtNum(body.memory?.context_entries),
          size: fmtNum(body.memory?.context_size),
        }),
      ),
    ),
  );
}

function schedulesCard(schedules) {
  const upcoming = [...(schedules ?? [])].filter((item) => item.next_run)
    .sort((a, b) => Date.parse(a.next_run) - Date.parse(b.next_run)).slice(0, 4);
  return card(
    "dash-schedules",
    t("nextReminders"),
    upcoming.length
      ? h(
        "ul",
        { class: "dash-schedules" },
        upcoming.map((item) =>
          h(
            "li",
            { "data-id": item.id },
            h("time", {}, soonTime(item.next_run, item.timezone)),
            " ",
            h("span", {}, item.text ?? ""),
            item.cron ? [" ", h("span", { class: "badge", title: item.cron }, "↻")] : null,
          )
        ),
      )
      : h("p", { class: "muted" }, t("noSchedules")),
    h("p", { class: "meta" }, h("a", { href: "#schedules" }, t("allSchedules"))),
  );
}

/**
 * The backups and storage card: the last automatic backup (time, size, verified), the next, how many are kept and
 * where, the last error; the data dir's free space as a meter; the damaged files homed set aside at start.
 */
function storageCard(body) {
  const backups = body.backups ?? {};
  const storage = body.storage ?? {};
  const last = backups.last;
  const setAside = storage.set_aside ?? [];
  const known = typeof storage.free_bytes === "number" && storage.total_bytes > 0;
  return card(
    "dash-storage",
    t("storageCard"),
    h(
      "dl",
      { class: "kv" },
      fact(
        t("lastBackup"),
        last
          ? [
            h(
              "span",
              { class: "backup-last" },
              t("lastBackupValue", { time: fmtTime(last.at), size: fmtBytes(last.bytes) }),
            ),
            " ",
            badge(t(last.verified ? "verified" : "notVerified"), last.verified ? "ok" : "warn"),
          ]
          : t("noneYet"),
      ),
      fact(t("nextBackup"), backups.schedule === "" ? t("backupsOff") : fmtTime(backups.next_at), "backup-next"),
      fact(
        t("backupsKept"),
        t("backupsKeptValue", { n: fmtNum(backups.kept ?? 0), dir: backups.dir ?? "" }),
        "backup-kept",
      ),
      backups.last_error ? fact(t("backupError"), backups.last_error, "backup-error status error") : null,
      fact(
        t("freeSpace"),
        known
          ? [
            h(
              "span",
              { class: "disk-free" },
              t("freeSpaceValue", { free: fmtBytes(storage.free_bytes), total: fmtBytes(storage.total_bytes) }),
            ),
            storage.low ? [" ", badge(t("diskLow"), "error")] : null,
            " ",
            h("meter", {
              min: 0,
              max: 1,
              low: 0.8,
              high: 0.95,
              optimum: 0,
              value: 1 - storage.free_bytes / storage.total_bytes,
            }),
          ]
          : h("span", { class: "disk-free", title: storage.free_space_unknown ?? "" }, t("freeSpaceUnknown")),
      ),
    ),
    setAside.length
      ? h(
        "details",
        { class: "set-aside", open: true },
        h("summary", {}, t("setAsideTitle", { n: setAside.length })),
        h(
          "ul",
          {},
          setAside.map((entry) =>
            h(
              "li",
              { class: "set-aside-file", "data-file": entry.file },
              h("code", {}, entry.file),
              h(
                "span",
                { class: "meta block-line" },
                t("setAsideLine", {
                  why: entry.why,
                  moved: entry.moved_to,
                  time: fmtTime(entry.at),
                  kept: keptText(entry),
                }),
              ),
            )
          ),
        ),
        h("p", { class: "meta" }, t("restoreHint")),
      )
      : h("p", { class: "meta set-aside-none" }, t("setAsideNone")),
  );
}

function homedCard(body) {
  const agent = body.agent ?? {};
  return card(
    "dash-homed",
    "homed",
    h(
      "dl",
      { class: "kv" },
      fact(t("version"), body.version),
      fact(t("uptime"), `${fmtDuration(body.uptime_ms)} (${t("sinceTime", { time: fmtTime(body.started_at) })})`),
      fact(t("turnsLabel"), t("turnsValue", { turns: fmtNum(agent.turns), failed: fmtNum(agent.failed_turns) })),
      fact(t("toolsCount"), fmtNum(body.tools)),
      fact(
        t("knowledgeLabel"),
        t("knowledgeValue", { topics: fmtNum(body.knowledge?.topics), sections: fmtNum(body.knowledge?.sections) }),
      ),
      fact(t("config"), h("code", {}, body.config ?? "")),
    ),
    h(
      "ul",
      { class: "services-line" },
      Object.entries(body.services ?? {}).map(([name, service]) =>
        h("li", { class: "service", "data-name": name }, stateBadge(service.state), " ", name)
      ),
    ),
  );
}

/** The usage section: the chart, the totals, the days as a table behind a click, prices and media calls. */
function usageView(usage) {
  const currency = usage.currency ?? undefined;
  const days = usage.days ?? [];
  const sum = (key) => days.reduce((total, day) => total + (day[key] ?? 0), 0);
  const cost = currency ? fmtCost(days.reduce((total, day) => total + (day.cost ?? 0), 0), currency) : null;
  const rows = table(
    [
      [t("day"), (day) => day.day],
      [t("requests"), (day) => fmtNum(day.requests)],
      [t("tokensIn"), (day) => fmtNum(day.prompt_tokens)],
      [t("tokensOut"), (day) => fmtNum(day.completion_tokens)],
      [t("cacheHitShare"), (day) => share(day.cache_hit_share)],
      [t("cost"), (day) => fmtCost(day.cost, currency)],
    ],
    days,
    () => ({ class: "usage-day" }),
    "usage",
  );
  return [
    h(
      "p",
      { class: "usage-total" },
      t("usageTotals", {
        requests: fmtNum(sum("requests")),
        tokens: fmtNum(sum("prompt_tokens") + sum("completion_tokens")),
      }),
      cost ? ` · ${t("cost")} ${cost}` : "",
    ),
    h("div", { class: "chart-box" }, usageChart(days, { currency })),
    usageLegend(),
    h(
      "details",
      { class: "usage-days" },
      h("summary", {}, t("usageByDay")),
      rows,
      days.length ? null : h("p", { class: "muted" }, t("noUsage")),
    ),
    h(
      "p",
      { class: "meta" },
      usage.prices
        ? t("prices", {
          input: usage.prices.input,
          hit: usage.prices.input_cache_hit,
          output: usage.prices.output,
          currency: currency ?? "",
        })
        : t("noPrices"),
    ),
    h(
      "p",
      { class: "meta" },
      t("visionSpeech", {
        vision: fmtNum(usage.vision?.calls ?? 0),
        visionErrors: fmtNum(usage.vision?.failures ?? 0),
        stt: fmtNum(usage.speech?.stt?.calls ?? 0),
        tts: fmtNum(usage.speech?.tts?.calls ?? 0),
        speechErrors: fmtNum((usage.speech?.stt?.failures ?? 0) + (usage.speech?.tts?.failures ?? 0)),
      }),
    ),
  ];
}

/** The status page. */
export default function status(root, ctx) {
  const owner = ctx.who.trust === "owner";
  const line = statusLine();
  const asOf = h("span", { class: "muted as-of" });
  const problems = h("section", { id: "problems", class: "problems", "aria-live": "polite" });
  const grid = h("div", { class: "dash-grid" });
  const usage = h("div", { class: "usage" });
  const raw = h("pre", { class: "raw-json" });
  const rawBox = h("details", { id: "status-raw", class: "raw" }, h("summary", {}, t("rawStatus")), raw);

  const refresh = () =>
    load(root, line, async () => {
      const [body, usageBody, schedules] = await Promise.all([
        api.get("/api/status"),
        api.get("/api/usage").catch((error) => ({ error })),
        api.get("/api/schedules").catch(() => ({ schedules: [] })),
      ]);
      const found = problemsOf(body, usageBody.error ? null : usageBody);
      fill(
        problems,
        found.length
          ? [
            h("h3", {}, t("needsAttention", { n: found.length })),
            h(
              "ul",
              { class: "problem-list" },
              found.map((problem) =>
                h("li", { class: `problem ${problem.level}`, "data-level": problem.level }, problem.text)
              ),
            ),
          ]
          : h("p", { class: "all-well" }, t("allWell")),
      );
      problems.classList.toggle("has-problems", found.length > 0);
      fill(
        grid,
        modelCard(body, usageBody.error ? null : usageBody),
        devicesCard(body, { owner, onLoggedIn: () => refresh(), login: body.services?.weixin_login?.login }),
        memoryCard(body),
        schedulesCard(schedules.schedules),
        storageCard(body),
        homedCard(body),
      );
      fill(usage, usageBody.error ? h("p", { class: "status error" }, usageBody.error.message) : usageView(usageBody));
      raw.textContent = pretty(body);
      asOf.textContent = t("asOf", { time: fmtTime(Date.now(), true) });
    });

  root.append(
    h(
      "div",
      { class: "page-head" },
      h("h2", {}, t("nav_status")),
      asOf,
      h("button", { type: "button", id: "status-refresh", class: "secondary", onclick: refresh }, t("refresh")),
    ),
    line,
    problems,
    grid,
    h("section", { id: "dash-usage", class: "block" }, h("h3", {}, t("usage")), usage),
  );

  if (owner) {
    const logStatus = statusLine();
    const logs = h("ol", { id: "logs", class: "logs" });
    const reloadLogs = () =>
      load(root, logStatus, async () => {
        const body = await api.get("/api/logs?n=200");
        const lines = body.lines ?? [];
        fill(
          logs,
          ...lines.map((entry) =>
            h(
              "li",
              { class: `log-line level-${String(entry.level ?? "info").toLowerCase()}` },
              h("time", {}, fmtTime(entry.time, true)),
              " ",
              h("span", { class: "log-level" }, entry.level ?? ""),
              " ",
              h(
                "span",
                { class: "log-category" },
                Array.isArray(entry.category) ? entry.category.join("·") : entry.category ?? "",
              ),
              " ",
              h("span", { class: "log-message" }, entry.message ?? ""),
            )
          ),
        );
        if (lines.length === 0) logs.append(h("li", { class: "muted" }, t("noLogs")));
      });
    root.append(
      h(
        "details",
        { id: "logs-box", class: "block" },
        h("summary", {}, t("logs")),
        h("button", { type: "button", class: "secondary", onclick: reloadLogs }, t("refresh")),
        logStatus,
        logs,
      ),
    );
    reloadLogs();
  }
  root.append(rawBox);
  refresh();
}

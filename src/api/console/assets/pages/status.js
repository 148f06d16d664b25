// Status: version, uptime, services, devices; usage and cost per day; the owner's log.
import { api } from "../api.js";
import { fill, fmtCost, fmtDuration, fmtNum, fmtTime, h, kv, load, section, statusLine, table } from "../dom.js";
import { t } from "../i18n.js";

const share = (value) => {
  if (typeof value !== "number" || !Number.isFinite(value)) return "—";
  return `${fmtNum(value <= 1 ? value * 100 : value, 1)} %`;
};

/** The status page. */
export default function status(root, ctx) {
  const summaryStatus = statusLine();
  const usageStatus = statusLine();
  const summary = h("div", {});
  const services = h("div", { id: "services", class: "grid" });
  const devices = h("ul", { class: "list" });
  const usage = h("div", { class: "usage" });
  root.append(
    h("h2", {}, t("nav_status")),
    summaryStatus,
    section(t("overview"), summary),
    section(t("services"), services),
    section(t("devices"), devices),
    section(t("usage"), usageStatus, usage),
  );

  load(root, summaryStatus, async () => {
    const body = await api.get("/api/status");
    fill(
      summary,
      kv({
        [t("version")]: body.version,
        [t("uptime")]: fmtDuration(body.uptime_ms),
        [t("startedAt")]: fmtTime(body.started_at),
        [t("config")]: body.config,
        [t("model")]: body.llm?.model,
        [t("apiKey")]: body.llm ? (body.llm.api_key_set ? t("yes") : t("no")) : undefined,
        [t("toolsCount")]: body.tools,
        [t("usageSinceStart")]: body.llm?.usage,
        [t("agent")]: body.agent,
        [t("memoryLabel")]: body.memory,
        [t("knowledgeLabel")]: body.knowledge,
        [t("nav_schedules")]: body.schedules,
      }),
    );
    const entries = Object.entries(body.services ?? {});
    fill(
      services,
      ...entries.map(([name, state]) =>
        h("div", { class: "service card", "data-name": name }, h("h4", {}, name), kv(state))
      ),
    );
    if (entries.length === 0) services.append(h("p", { class: "muted" }, t("none")));
    const list = body.devices ?? [];
    fill(
      devices,
      ...list.map((device) =>
        h(
          "li",
          { class: "device card", "data-name": device.name },
          h("strong", {}, device.name),
          ` · ${device.type ?? ""}`,
          device.description ? h("p", { class: "meta" }, device.description) : null,
        )
      ),
    );
    if (list.length === 0) devices.append(h("li", { class: "muted" }, t("noDevices")));
  });

  load(root, usageStatus, async () => {
    const body = await api.get("/api/usage");
    const currency = body.currency;
    const days = table(
      [
        [t("day"), (day) => day.day],
        [t("requests"), (day) => fmtNum(day.requests)],
        [t("tokensIn"), (day) => fmtNum(day.prompt_tokens)],
        [t("tokensOut"), (day) => fmtNum(day.completion_tokens)],
        [t("cacheHitShare"), (day) => share(day.cache_hit_share)],
        [t("cost"), (day) => fmtCost(day.cost, currency)],
      ],
      body.days ?? [],
      () => ({ class: "usage-day" }),
      "usage",
    );
    fill(
      usage,
      days,
      (body.days ?? []).length === 0 ? h("p", { class: "muted" }, t("noUsage")) : null,
      h(
        "p",
        { class: "meta" },
        body.prices
          ? t("prices", {
            input: body.prices.input,
            hit: body.prices.input_cache_hit,
            output: body.prices.output,
            currency: currency ?? "",
          })
          : t("noPrices"),
      ),
      h(
        "p",
        { class: "meta" },
        t("visionSpeech", {
          vision: fmtNum(body.vision?.calls ?? 0),
          visionErrors: fmtNum(body.vision?.errors ?? 0),
          stt: fmtNum(body.speech?.stt_calls ?? 0),
          tts: fmtNum(body.speech?.tts_calls ?? 0),
          speechErrors: fmtNum(body.speech?.errors ?? 0),
        }),
      ),
    );
  });

  if (ctx.who.trust === "owner") {
    const logStatus = statusLine();
    const logs = h("ol", { id: "logs", class: "logs" });
    const reloadLogs = () =>
      load(root, logStatus, async () => {
        const body = await api.get("/api/logs?n=200");
        const lines = body.lines ?? [];
        fill(
          logs,
          ...lines.map((line) =>
            h(
              "li",
              { class: `log-line level-${String(line.level ?? "info").toLowerCase()}` },
              h("time", {}, fmtTime(line.time, true)),
              " ",
              h("span", { class: "log-level" }, line.level ?? ""),
              " ",
              h(
                "span",
                { class: "log-category" },
                Array.isArray(line.category) ? line.category.join("·") : line.category ?? "",
              ),
              " ",
              h("span", { class: "log-message" }, line.message ?? ""),
            )
          ),
        );
        if (lines.length === 0) logs.append(h("li", { class: "muted" }, t("noLogs")));
      });
    root.append(
      section(
        t("logs"),
        h("button", { type: "button", class: "secondary", onclick: reloadLogs }, t("refresh")),
        logStatus,
        logs,
      ),
    );
    reloadLogs();
  }
}

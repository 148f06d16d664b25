// Turn inspector (owner): the last turns, and per request what the prompt held, what it cost, why the cache missed.
import { api, seg } from "../api.js";
import {
  badge,
  clip,
  fill,
  fmtCost,
  fmtDuration,
  fmtNum,
  fmtTime,
  h,
  kv,
  load,
  pretty,
  section,
  statusLine,
  table,
} from "../dom.js";
import { t } from "../i18n.js";

const tokens = (turn) =>
  `${fmtNum(turn.prompt_tokens)} / ${fmtNum(turn.completion_tokens)}` +
  (turn.cache_hit_tokens ? ` (${t("cacheHit")} ${fmtNum(turn.cache_hit_tokens)})` : "");

function sectionsTable(rows, rowClass) {
  const list = rows ?? [];
  const total = list.reduce((sum, row) => sum + (typeof row.tokens === "number" ? row.tokens : 0), 0);
  return h(
    "table",
    { class: "sections" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("section")), h("th", { scope: "col" }, t("tokens")))),
    h(
      "tbody",
      {},
      list.map((row) =>
        h(
          "tr",
          { class: rowClass },
          h("td", { class: "section-title" }, row.title ?? ""),
          h("td", { class: "section-tokens" }, fmtNum(row.tokens)),
        )
      ),
      list.length === 0 ? h("tr", {}, h("td", { class: "muted" }, t("none")), h("td", {})) : null,
    ),
    h("tfoot", {}, h("tr", {}, h("th", { scope: "row" }, t("total")), h("td", {}, fmtNum(total)))),
  );
}

const content = (
  value,
) => (typeof value === "string" ? value : value === null || value === undefined ? "" : pretty(value));

function requestView(request) {
  const cache = request.cache ?? {};
  const reason = cache.miss_reason;
  return h(
    "section",
    { class: "round card", "data-round": request.round },
    h("h4", {}, t("round", { n: request.round ?? "?" })),
    h(
      "p",
      { class: "meta" },
      t("roundMeta", {
        latency: fmtDuration(request.latency_ms),
        hit: fmtNum(cache.hit_tokens),
        miss: fmtNum(cache.miss_tokens),
      }),
    ),
    reason ? h("p", { class: "miss-reason" }, h("strong", {}, t("missReason")), " ", content(reason)) : null,
    request.lowest_trust_seen
      ? h("p", { class: "meta lowest-trust" }, t("lowestTrustSeen", { trust: request.lowest_trust_seen }))
      : null,
    h("h5", {}, t("systemSections")),
    sectionsTable(request.system_sections, "system-section"),
    h("h5", {}, t("referenceSections")),
    sectionsTable(request.reference_sections, "reference-section"),
    h(
      "p",
      { class: "meta" },
      t("historySize", { messages: fmtNum(request.history?.messages), tokens: fmtNum(request.history?.tokens) }),
    ),
    h("h5", {}, t("messages", { n: (request.messages ?? []).length })),
    h(
      "div",
      { class: "messages" },
      (request.messages ?? []).map((message) =>
        h(
          "details",
          { class: `turn-message role-${message.role}` },
          h(
            "summary",
            {},
            badge(message.role ?? "?"),
            " ",
            t("tokensN", { n: fmtNum(message.tokens) }),
            " ",
            h("span", { class: "muted" }, clip(content(message.content), 80)),
          ),
          h("pre", {}, content(message.content)),
          message.tool_calls?.length ? h("pre", { class: "tool-calls" }, pretty(message.tool_calls)) : null,
        )
      ),
    ),
    h("h5", {}, t("toolsOffered")),
    h(
      "p",
      { class: "chips" },
      (request.tools ?? []).map((name) =>
        h("span", { class: "chip" }, typeof name === "string" ? name : name?.name ?? "")
      ),
    ),
    h("h5", {}, t("response")),
    h("pre", {}, content(request.response?.content) || "—"),
    request.response?.tool_calls?.length
      ? h("pre", { class: "tool-calls" }, pretty(request.response.tool_calls))
      : null,
    h("div", {}, kv({ finish_reason: request.response?.finish_reason, usage: request.response?.usage })),
  );
}

/** The turns page. */
export default function turns(root) {
  const status = statusLine();
  const detailStatus = statusLine();
  const list = h("div", { class: "turns" });
  const detail = h("div", { id: "turn-detail" }, h("p", { class: "muted" }, t("pickTurn")));
  // Turns carry a cost, not its currency: that is the usage's.
  const currency = api.get("/api/usage").then((body) => body.currency, () => undefined);

  const open = (id) =>
    load(root, detailStatus, async () => {
      for (const row of list.querySelectorAll(".turn")) {
        row.classList.toggle("selected", row.getAttribute("data-id") === id);
      }
      const [turn, unit] = await Promise.all([api.get(`/api/turns/${seg(id)}`), currency]);
      fill(
        detail,
        h("h3", {}, `${fmtTime(turn.time, true)} · ${turn.source ?? ""} · ${turn.sender ?? ""}`),
        h("p", { class: "turn-text" }, turn.text ?? ""),
        h(
          "p",
          { class: "meta" },
          t("turnMeta", {
            rounds: fmtNum(turn.rounds),
            latency: fmtDuration(turn.latency_ms),
            tokens: tokens(turn),
            cost: fmtCost(turn.cost, unit),
          }),
        ),
        turn.error ? h("p", { class: "status error" }, content(turn.error.message ?? turn.error)) : null,
        turn.local_intent ? h("p", { class: "status" }, t("localIntent", { name: turn.local_intent })) : null,
        (turn.requests ?? []).map(requestView),
      );
      detail.scrollIntoView?.({ block: "start", behavior: "smooth" });
    });

  root.append(h("h2", {}, t("nav_turns")), status, list, section(t("turnDetail"), detailStatus, detail));
  load(root, status, async () => {
    const [body, unit] = await Promise.all([api.get("/api/turns"), currency]);
    const rows = body.turns ?? [];
    const view = table(
      [
        [t("time"), (turn) => fmtTime(turn.time, true), "turn-time"],
        [t("source"), (turn) => `${turn.source ?? ""} · ${turn.sender ?? ""}`, "turn-source"],
        [t("text"), (turn) => [
          clip(turn.text, 120),
          turn.error ? [" ", badge(t("failed"), "warn")] : null,
          turn.local_intent ? [" ", badge(t("local"), "ok")] : null,
        ], "turn-text-cell"],
        [t("rounds"), (turn) => fmtNum(turn.rounds), "num"],
        [t("latency"), (turn) => fmtDuration(turn.latency_ms), "num"],
        [t("tokensInOut"), tokens, "num"],
        [t("cost"), (turn) => fmtCost(turn.cost, unit), "num"],
      ],
      rows,
      (turn) => ({
        class: "turn",
        "data-id": turn.id,
        tabindex: 0,
        onclick: () => open(turn.id),
        onkeydown: (event) => event.key === "Enter" && open(turn.id),
      }),
      "turns-table",
    );
    fill(list, rows.length ? view : h("p", { class: "muted" }, t("noTurns")));
  });
}

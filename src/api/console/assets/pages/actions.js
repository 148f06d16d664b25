// Actions: the policy gate's audit (GET /api/actions), newest first — every act, speak and sensitive call and every
// call not simply allowed: when, which tool, who asked on which channel, the turn's lowest trust, the decision and its
// rule, the result; a held call with how the owner decided it (GET /api/smart_home/actions' confirmations).
import { api } from "../api.js";
import { badge, clip, fill, fmtTime, h, load, statusLine, table } from "../dom.js";
import { t } from "../i18n.js";

/** Each held call's outcome: the owner's decision on the same turn and summary, each outcome used once. */
function joinOutcomes(actions, outcomes) {
  const unused = [...outcomes].reverse(); // oldest first, as the calls were held
  const found = new Map();
  for (const action of [...actions].reverse()) {
    if (action.decision !== "confirm") continue;
    const at = unused.findIndex((o) => o.asked?.eventId === action.turn && o.summary === action.summary);
    if (at >= 0) found.set(action, unused.splice(at, 1)[0]);
  }
  return found;
}

function outcomeText(outcome) {
  if (outcome.outcome === "expired") return t("outcome_expired");
  return t(`outcome_${outcome.outcome}`, { where: outcome.decidedOn ?? "?" });
}

/** The actions page. */
export default function actions(root, ctx) {
  const status = statusLine();
  const list = h("div", { class: "actions" });

  const reload = () =>
    load(root, status, async () => {
      const [body, audit] = await Promise.all([
        api.get("/api/actions"),
        ctx.who.trust === "guest" ? {} : api.get("/api/smart_home/actions").catch(() => ({})),
      ]);
      const rows = body.actions ?? [];
      const outcomes = joinOutcomes(rows, audit.confirmations ?? []);
      const view = table(
        [
          [t("time"), (row) => fmtTime(row.at, true)],
          [t("tool"), (row) => [h("code", {}, row.tool), " ", badge(row.effect ?? "")]],
          [t("askedBy"), (row) => `${row.sender} · ${row.source}`],
          [
            t("trustTaint"),
            (row) =>
              row.taint && row.taint !== row.trust
                ? [t(`trust_${row.trust}`), " · ", badge(t("taintedBy", { trust: t(`trust_${row.taint}`) }), "warn")]
                : t(`trust_${row.trust}`),
          ],
          [
            t("decision"),
            (row) => [
              badge(t(`decision_${row.decision}`), row.decision === "allow" ? "ok" : "warn"),
              " ",
              h("span", { class: "muted action-rule" }, row.rule),
            ],
          ],
          [
            t("result"),
            (row) => {
              const outcome = outcomes.get(row);
              return [
                outcome
                  ? [
                    badge(outcomeText(outcome), outcome.outcome === "confirmed" ? "ok" : "warn"),
                    outcome.result ? [" ", clip(outcome.result, 200)] : null,
                    h("br", {}),
                  ]
                  : null,
                // A decided held call: what the model was told then is only a footnote to the owner's decision.
                h("span", { class: row.ok && !outcome ? "" : "muted" }, clip(row.result, outcome ? 80 : 200)),
              ];
            },
          ],
        ],
        rows,
        (row) => ({ class: "action", "data-turn": row.turn }),
        "actions-table",
      );
      fill(list, rows.length ? view : h("p", { class: "muted" }, t("noActions")));
    });

  // A decision on a card above (the owner's) changes what is listed here.
  const decided = () => root.isConnected ? reload() : removeEventListener("homed:decided", decided);
  addEventListener("homed:decided", decided);

  root.append(
    h("h2", {}, t("nav_actions")),
    h("p", { class: "muted" }, t(ctx.who.trust === "owner" ? "actionsHintOwner" : "actionsHintOwn")),
    h("div", { class: "row" }, h("button", { type: "button", class: "secondary", onclick: reload }, t("refresh"))),
    status,
    list,
  );
  reload();
}

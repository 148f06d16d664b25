// People: a page per member of the household — what the butler holds about them, by kind (health, dates,
// preferences, relations, other), each fact with where it came from and what superseded it. The owner sees everyone
// and may correct or forget a fact (the memory endpoints); a member sees only their own page.
import { api, seg } from "../api.js";
import { badge, clip, fill, fmtNum, fmtTime, h, load, section, statusLine } from "../dom.js";
import { t } from "../i18n.js";
import { factButtons } from "../fact_actions.js";

const KINDS = ["health", "dates", "preferences", "relations", "other"];

/** Where a fact came from: each message, when and who said it, and what they said. */
function sourcesOf(fact) {
  const sources = Array.isArray(fact.sources) ? fact.sources : [];
  if (sources.length === 0) {
    const tags = (fact.provenance ?? []).join(", ");
    return tags ? h("p", { class: "muted" }, tags) : null;
  }
  return h(
    "details",
    { class: "fact-sources" },
    h("summary", {}, t("profileSources", { count: fmtNum(sources.length) })),
    h(
      "ul",
      { class: "sources" },
      sources.map((source) =>
        h(
          "li",
          {},
          h(
            "span",
            { class: "source-meta" },
            source.time
              ? `${fmtTime(source.time)} · ${source.sender ?? "?"} · ${source.source ?? "?"}`
              : source.event_id,
            source.trust ? ` (${t(`trust_${source.trust}`)})` : "",
          ),
          source.text ? h("q", { class: "source-text" }, clip(source.text, 300)) : null,
        )
      ),
    ),
  );
}

/** The line a superseded fact shows: when, and by what (a newer statement or a correction). */
function supersededLine(fact) {
  const by = fact.superseded_by ?? {};
  if (by.object === undefined) return t("profileSupersededUnseen", { time: fmtTime(by.at ?? fact.valid_to) });
  const who = by.corrected_by
    ? t("profileCorrectedBy", { name: by.corrected_by })
    : by.said_by
    ? t("profileSaidBy", { name: by.said_by })
    : "";
  return t("profileSuperseded", { time: fmtTime(by.at ?? fact.valid_to), object: by.object, who });
}

/** The people page. */
export default function people(root, ctx) {
  const owner = ctx.who.trust === "owner";
  const status = statusLine();
  const list = h("ul", { class: "chips people-list" });
  const detail = h("div", { class: "profile" });
  let selected = null;

  const loadPeople = () =>
    load(root, status, async () => {
      const body = await api.get("/api/people");
      const members = body.people ?? [];
      fill(
        list,
        ...members.map((person) =>
          h(
            "li",
            {},
            h(
              "button",
              {
                type: "button",
                // The one shown is the filled button; the others are outlined.
                class: `person${person.id === selected ? " selected" : " secondary"}`,
                "data-id": person.id,
                onclick: () => select(person.id),
              },
              `${person.id} · ${fmtNum(person.facts)}`,
            ),
          )
        ),
      );
      if (members.length === 0) list.append(h("li", { class: "muted" }, t("profileNobody")));
      // A member has one page, their own: shown at once; the owner first sees the first member memory knows about.
      const own = members.find((person) => person.id === ctx.who.name);
      const first = (owner ? members.find((person) => person.facts > 0) : own) ?? own ?? members[0];
      if (!selected && first) select(first.id);
    });

  function factCard(fact, factStatus, person) {
    const actions = owner && fact.holds
      ? factButtons(root, fact, factStatus, `${fact.predicate} ${fact.object}`, reload)
      : null;
    return h(
      "article",
      { class: `card fact${fact.holds ? "" : " closed"}`, "data-id": fact.id },
      h(
        "p",
        { class: "fact-line" },
        // A relation someone else's fact tells ("bob" "brother of" them) names whose fact it is.
        fact.subject && fact.subject !== person ? h("strong", { class: "subject" }, `${fact.subject} `) : null,
        h("span", { class: "predicate" }, fact.predicate),
        " ",
        h("strong", { class: "object" }, fact.object),
        " ",
        fact.holds ? null : badge(t("profileSupersededBadge"), "closed"),
        fact.trust === "guest" ? badge(t("profileGuestSaid"), "warn") : null,
      ),
      h(
        "p",
        { class: "meta" },
        t("profileSince", { time: fmtTime(fact.valid_from) }),
        fact.said_by ? ` · ${t("profileSaidBy", { name: fact.said_by })}` : "",
      ),
      fact.holds ? null : h("p", { class: "meta superseded" }, supersededLine(fact)),
      sourcesOf(fact),
      actions,
    );
  }

  async function loadProfile(id) {
    const profile = await api.get(`/api/people/${seg(id)}/profile`);
    const factStatus = statusLine();
    const blocks = KINDS.filter((kind) => (profile.kinds?.[kind] ?? []).length > 0).map((kind) =>
      h(
        "div",
        { class: `profile-kind kind-${kind}`, "data-kind": kind },
        section(
          t(`profileKind_${kind}`),
          ...profile.kinds[kind].map((fact) => factCard(fact, factStatus, profile.person)),
        ),
      )
    );
    fill(
      detail,
      h("h3", {}, profile.person ?? id),
      h("p", { class: "muted" }, t("profileHolding", { count: fmtNum(profile.holding ?? 0) })),
      factStatus,
      ...(blocks.length ? blocks : [h("p", { class: "muted" }, t("profileEmpty"))]),
    );
  }

  function select(id) {
    selected = id;
    for (const item of list.querySelectorAll(".person")) {
      const chosen = item.getAttribute("data-id") === id;
      item.classList.toggle("selected", chosen);
      item.classList.toggle("secondary", !chosen);
    }
    load(root, status, () => loadProfile(id));
  }

  const reload = () => Promise.all([loadProfile(selected), loadPeople()]);

  root.append(h("h2", {}, t("nav_people")), h("p", { class: "muted" }, t("profileHint")), status, list, detail);
  loadPeople();
}

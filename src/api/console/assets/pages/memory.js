// Memory: entities, an entity's facts with their sources, its neighbourhood as a graph, and stored documents.
import { api, query, seg } from "../api.js";
import { badge, clip, fill, fmtDuration, fmtNum, fmtTime, h, load, section, show, statusLine, table } from "../dom.js";
import { t } from "../i18n.js";
import { factButtons } from "../fact_actions.js";

const MAX_NEIGHBOURS = 16;

/** The SVG of an entity and its neighbours: the centre in the middle, the others on a circle; edges named. */
function graphView(data, pick) {
  const center = typeof data.center === "string" ? data.center : data.center?.name ?? "";
  const others = (data.nodes ?? []).filter((node) => node.name !== center).slice(0, MAX_NEIGHBOURS);
  const width = 360;
  const height = others.length ? 280 : 110; // alone, the centre needs no room for a circle around it
  const cx = width / 2;
  const cy = others.length ? height / 2 : 40;
  const radius = 105;
  const at = new Map([[center, [cx, cy]]]);
  others.forEach((node, index) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * index) / Math.max(others.length, 1);
    at.set(node.name, [cx + radius * Math.cos(angle), cy + radius * Math.sin(angle)]);
  });
  const svg = h("svg:svg", {
    id: "memory-graph",
    class: "graph",
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": t("graphOf", { name: center }),
  });
  const pairs = new Map();
  for (const edge of data.edges ?? []) {
    const from = at.get(edge.from);
    const to = at.get(edge.to);
    if (!from || !to || edge.from === edge.to) continue;
    const key = [edge.from, edge.to].sort().join("\u0000");
    const nth = pairs.get(key) ?? 0;
    pairs.set(key, nth + 1);
    const closed = edge.holds === false ? " closed" : "";
    const [near, far] = edge.to === center ? [to, from] : [from, to];
    svg.append(
      h("svg:line", { class: `edge${closed}`, x1: from[0], y1: from[1], x2: to[0], y2: to[1] }),
      h(
        "svg:text",
        // Nearer the neighbour than the centre, where the labels of a star would pile up.
        {
          class: `edge-label${closed}`,
          x: near[0] + (far[0] - near[0]) * 0.6,
          y: near[1] + (far[1] - near[1]) * 0.6 - 3 + nth * 11,
        },
        h("svg:title", {}, `${edge.from} ${edge.predicate} ${edge.to}`),
        clip(edge.predicate, 18),
      ),
    );
  }
  const nodeOf = (name, info, isCenter) => {
    const [x, y] = at.get(name);
    const props = isCenter ? { class: "node center" } : {
      class: "node",
      tabindex: 0,
      role: "button",
      "data-name": name,
      onclick: () => pick(name),
      onkeydown: (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          pick(name);
        }
      },
    };
    return h(
      "svg:g",
      props,
      h("svg:title", {}, `${name}${info?.type ? ` (${info.type})` : ""}${info?.mentions ? ` · ${info.mentions}` : ""}`),
      h("svg:circle", { cx: x, cy: y, r: isCenter ? 24 : 16 }),
      h("svg:text", { x, y: y + (isCenter ? 38 : 29), class: "node-label" }, clip(name, 16)),
    );
  };
  for (const node of others) svg.append(nodeOf(node.name, node, false));
  svg.append(nodeOf(center, (data.nodes ?? []).find((node) => node.name === center), true));
  if (others.length === 0) {
    svg.append(h("svg:text", { x: cx, y: height - 12, class: "edge-label" }, t("noConnections")));
  }
  return svg;
}

function sourcesOf(fact) {
  const sources = Array.isArray(fact.sources) ? fact.sources : [];
  if (sources.length === 0) {
    return h("span", { class: "muted" }, (fact.provenance ?? []).join(", ") || "—");
  }
  return h(
    "ul",
    { class: "sources" },
    sources.map((source) =>
      h(
        "li",
        {},
        h(
          "span",
          { class: "source-meta" },
          `${fmtTime(source.time)} · ${source.sender ?? "?"} · ${source.source ?? "?"}`,
          source.trust ? ` (${source.trust})` : "",
        ),
        source.text ? h("q", { class: "source-text" }, clip(source.text, 400)) : null,
      )
    ),
  );
}

/** The memory page. */
export default function memory(root, ctx) {
  const owner = ctx.who.trust === "owner";
  const status = statusLine();
  const search = h("input", {
    id: "memory-search",
    type: "search",
    placeholder: t("searchMemory"),
    "aria-label": t("search"),
  });
  const entities = h("ul", { class: "list entities" });
  const detail = h("div", { class: "entity-detail" });
  const documents = h("div", { class: "documents" });
  const docStatus = statusLine();
  let selected = null;

  const loadEntities = () =>
    load(root, status, async () => {
      const body = await api.get(query("/api/memory/entities", { q: search.value.trim(), k: 30 }));
      const list = body.entities ?? [];
      fill(
        entities,
        ...list.map((entity) =>
          h(
            "li",
            {
              class: `entity${entity.name === selected ? " selected" : ""}`,
              "data-name": entity.name,
              tabindex: 0,
              role: "button",
              onclick: () => select(entity.name),
              onkeydown: (event) => event.key === "Enter" && select(entity.name),
            },
            h("span", { class: "entity-name" }, entity.name),
            entity.type ? badge(entity.type) : null,
            h(
              "span",
              { class: "muted" },
              t("mentionsFacts", { mentions: fmtNum(entity.mentions), facts: fmtNum(entity.facts) }),
            ),
          )
        ),
      );
      if (list.length === 0) entities.append(h("li", { class: "muted" }, t("nothingFound")));
    });

  const loadDocuments = () => {
    // Stored conversations are found by a search (the API wants a query for them, unlike entities).
    const q = search.value.trim();
    if (!q) {
      show(docStatus, "");
      return fill(documents, h("p", { class: "muted" }, t("searchForDocuments")));
    }
    return load(root, docStatus, async () => {
      const body = await api.get(query("/api/memory/documents", { q, k: 20 }));
      const list = body.documents ?? [];
      fill(documents, ...list.map(documentItem));
      if (list.length === 0) documents.append(h("p", { class: "muted" }, t("nothingFound")));
    });
  };

  function documentItem(doc) {
    const forget = owner
      ? h("button", {
        type: "button",
        class: "document-forget danger",
        onclick: () => {
          if (!globalThis.confirm(t("forgetConversationConfirm", { summary: clip(doc.summary || doc.text, 80) }))) {
            return;
          }
          load(root, docStatus, async () => {
            const body = await api.del(`/api/memory/documents/${seg(doc.id)}`);
            show(docStatus, t("forgotten", { what: JSON.stringify(body?.forgotten ?? {}) }), "ok");
            await Promise.all([loadDocuments(), loadEntities(), selected ? loadEntity(selected) : null]);
          });
        },
      }, t("forgetConversation"))
      : null;
    return h(
      "article",
      { class: "document card", "data-id": doc.id },
      h("p", { class: "document-summary" }, doc.summary || clip(doc.text, 200)),
      h(
        "p",
        { class: "meta" },
        t("documentMeta", {
          created: fmtTime(doc.created),
          accessed: fmtTime(doc.last_accessed),
          hits: fmtNum(doc.hits),
          coldness: fmtNum(doc.coldness, 2),
        }),
        doc.sender ? ` · ${doc.sender}${doc.trust ? ` (${doc.trust})` : ""}` : "",
        typeof doc.score === "number" ? ` · ${t("score")} ${fmtNum(doc.score, 3)}` : "",
      ),
      doc.text ? h("details", {}, h("summary", {}, t("fullText")), h("pre", { class: "wrap" }, doc.text)) : null,
      forget,
    );
  }

  async function loadEntity(name) {
    const [graph, neighbours] = await Promise.all([
      api.get(query("/api/memory/graph", { q: name })),
      api.get(query("/api/memory/neighbors", { q: name })).catch((error) => ({ error })),
    ]);
    const facts = graph.facts ?? [];
    const factStatus = statusLine();
    const actions = (fact) =>
      owner
        ? factButtons(root, fact, factStatus, `${fact.subject ?? ""} ${fact.predicate} ${fact.object}`, reload)
        : null;
    const columns = [
      [t("predicate"), (fact) => fact.predicate],
      [t("object"), (fact) => fact.object],
      [t("holds"), (fact) => (fact.holds === false ? badge(t("closed"), "closed") : badge(t("holdsNow"), "ok"))],
      [t("validFrom"), (fact) => fmtTime(fact.valid_from)],
      [t("validTo"), (fact) => fmtTime(fact.valid_to)],
      [t("sources"), sourcesOf, "fact-sources"],
    ];
    if (owner) columns.push([t("actions"), actions, "fact-actions"]);
    const factsTable = table(
      columns,
      facts,
      (fact) => ({ class: `fact${fact.holds === false ? " closed" : ""}`, "data-id": fact.id }),
      "facts",
    );
    fill(
      detail,
      h("h3", {}, graph.entity?.name ?? graph.entity ?? name),
      factStatus,
      neighbours.error
        ? h("p", { class: "status error" }, neighbours.error.message)
        : h("div", { class: "graph-box" }, graphView(neighbours, select)),
      facts.length ? factsTable : h("p", { class: "muted" }, t("noFacts")),
    );
  }

  function select(name) {
    selected = name;
    for (const item of entities.querySelectorAll(".entity")) {
      item.classList.toggle("selected", item.getAttribute("data-name") === name);
    }
    load(root, status, () => loadEntity(name));
  }

  const reload = () => Promise.all([loadEntity(selected), loadEntities()]);

  let timer;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      loadEntities();
      loadDocuments();
    }, 300);
  });
  const form = h(
    "form",
    {
      class: "search",
      onsubmit: (event) => {
        event.preventDefault();
        clearTimeout(timer);
        loadEntities();
        loadDocuments();
      },
    },
    search,
    h("button", { type: "submit" }, t("search")),
  );

  // The owner runs the memory job now (after a long conversation, or to see a correction's effect at once).
  const jobStatus = statusLine();
  const runJob = owner
    ? h("button", {
      type: "button",
      id: "memory-run-job",
      onclick: async (event) => {
        const button = event.currentTarget;
        button.disabled = true;
        const done = await load(root, jobStatus, async () => {
          const body = await api.post("/api/memory/job");
          const failed = body.done && body.job?.last_error;
          if (failed) show(jobStatus, t("memoryJobFailed", { why: body.job.last_error }), "error");
          else if (body.done) {
            show(jobStatus, t("memoryJobDone", { duration: fmtDuration(body.job?.last_duration_ms) }), "ok");
          } else show(jobStatus, t("memoryJobRunning"));
          return body.done;
        });
        button.disabled = false;
        if (done === true) reload();
      },
    }, t("memoryRunJob"))
    : null;

  root.append(
    h("h2", {}, t("nav_memory")),
    form,
    ...(runJob ? [h("p", { class: "memory-job" }, runJob, " ", jobStatus)] : []),
    status,
    h("div", { class: "split" }, section(t("entities"), entities), h("div", { class: "detail" }, detail)),
    section(t("documents"), docStatus, documents),
  );
  loadEntities();
  loadDocuments();
}

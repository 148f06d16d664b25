// Knowledge: topics (the butler's own marked), search, a topic's Markdown, and the owner's editor.
import { api, query, seg } from "../api.js";
import { badge, fill, fmtNum, fmtTime, h, load, section, show, statusLine } from "../dom.js";
import { t } from "../i18n.js";

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*|__[^_]+__)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]+\]\([^)\s]+\))/;

/** Inline Markdown (code, bold, emphasis, links) as nodes; links only to http(s). */
function inline(text) {
  const out = [];
  let rest = text;
  for (let match = INLINE.exec(rest); match; match = INLINE.exec(rest)) {
    if (match.index > 0) out.push(rest.slice(0, match.index));
    const [all, code, strong, em, link] = match;
    if (code) out.push(h("code", {}, code.slice(1, -1)));
    else if (strong) out.push(h("strong", {}, inline(strong.slice(2, -2))));
    else if (em) out.push(h("em", {}, inline(em.slice(1, -1))));
    else if (link) {
      const [, label, href] = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(link);
      out.push(
        /^https?:\/\//i.test(href)
          ? h("a", { href, target: "_blank", rel: "noopener noreferrer" }, inline(label))
          : h("span", {}, label),
      );
    }
    rest = rest.slice(match.index + all.length);
  }
  if (rest) out.push(rest);
  return out;
}

/**
 * A safe, minimal Markdown: headings, paragraphs, lists, block quotes, rules, fenced code. Sections whose heading is
 * in `learned` are marked (the butler wrote them).
 */
export function markdown(text, learned = new Set()) {
  const out = h("div", { class: "markdown" });
  const lines = String(text ?? "").replace(/\r\n?/g, "\n").split("\n");
  let inLearned = false;
  const add = (el) => {
    if (inLearned) el.classList.add("learned-section");
    out.append(el);
  };
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      const code = [];
      for (i += 1; i < lines.length && !lines[i].trim().startsWith(fence[1]); i += 1) code.push(lines[i]);
      i += 1;
      add(h("pre", {}, h("code", {}, code.join("\n"))));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      inLearned = learned.has(heading[2]);
      const level = Math.min(heading[1].length + 2, 6); // the page's own headings come first
      add(h(`h${level}`, {}, inline(heading[2]), inLearned ? badge(t("learned"), "learned-badge") : null));
      i += 1;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      add(h("hr", {}));
      i += 1;
      continue;
    }
    const item = /^\s*([-*+]|\d+[.)])\s+/;
    if (item.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = h(ordered ? "ol" : "ul", {});
      for (; i < lines.length && item.test(lines[i]); i += 1) {
        list.append(h("li", {}, inline(lines[i].replace(item, ""))));
      }
      add(list);
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quote = [];
      for (; i < lines.length && /^\s*>/.test(lines[i]); i += 1) quote.push(lines[i].replace(/^\s*>\s?/, ""));
      add(h("blockquote", {}, inline(quote.join(" "))));
      continue;
    }
    if (line.trim() === "") {
      i += 1;
      continue;
    }
    const para = [];
    for (
      ;
      i < lines.length && lines[i].trim() !== "" && !/^(#{1,6}\s|\s*(```|~~~|>)|\s*([-*+]|\d+[.)])\s)/.test(lines[i]);
      i += 1
    ) {
      para.push(lines[i].trim());
    }
    add(h("p", {}, inline(para.join(" "))));
  }
  return out;
}

/** The knowledge page. */
export default function knowledge(root, ctx) {
  const owner = ctx.who.trust === "owner";
  const status = statusLine();
  const search = h("input", {
    id: "knowledge-search",
    type: "search",
    placeholder: t("searchKnowledge"),
    "aria-label": t("search"),
  });
  const hits = h("ul", { class: "list hits", hidden: true });
  const topics = h("ul", { class: "list topics" });
  const view = h("div", { id: "knowledge-view", class: "knowledge-view" }, h("p", { class: "muted" }, t("pickTopic")));
  const viewStatus = statusLine();
  const editStatus = statusLine();
  const name = h("input", {
    id: "knowledge-topic-name",
    type: "text",
    placeholder: t("topicName"),
    "aria-label": t("topicName"),
  });
  const editor = h("textarea", {
    id: "knowledge-editor",
    rows: 14,
    "aria-label": t("markdown"),
    placeholder: t("markdown"),
  });
  let current = null;

  const loadTopics = () =>
    load(root, status, async () => {
      const body = await api.get("/api/knowledge");
      const list = body.topics ?? [];
      fill(
        topics,
        ...list.map((topic) =>
          h(
            "li",
            {
              class: `topic${topic.topic === current ? " selected" : ""}`,
              "data-topic": topic.topic,
              tabindex: 0,
              role: "button",
              onclick: () => open(topic.topic),
              onkeydown: (event) => event.key === "Enter" && open(topic.topic),
            },
            h("span", { class: "topic-name" }, topic.topic),
            topic.learned ? badge(t("learnedByButler"), "learned-badge") : null,
            h(
              "span",
              { class: "muted" },
              t("topicMeta", {
                sections: fmtNum(topic.sections),
                bytes: fmtNum(topic.bytes),
                updated: fmtTime(topic.updated),
              }),
            ),
          )
        ),
      );
      if (list.length === 0) topics.append(h("li", { class: "muted" }, t("noTopics")));
    });

  const open = (topic) =>
    load(root, viewStatus, async () => {
      const body = await api.get(`/api/knowledge/topics/${seg(topic)}`);
      current = body.topic ?? topic;
      for (const item of topics.querySelectorAll(".topic")) {
        item.classList.toggle("selected", item.getAttribute("data-topic") === current);
      }
      const learned = new Set((body.sections ?? []).filter((s) => s.learned).map((s) => s.heading));
      fill(
        view,
        h("h3", {}, current),
        h("p", { class: "muted" }, t("updatedAt", { time: fmtTime(body.updated) })),
        markdown(body.markdown, learned),
      );
      if (owner) {
        name.value = current;
        editor.value = body.markdown ?? "";
        show(editStatus, "");
      }
    });

  const runSearch = () => {
    const q = search.value.trim();
    if (!q) {
      hits.hidden = true;
      fill(hits);
      return;
    }
    load(root, status, async () => {
      const body = await api.get(query("/api/knowledge/search", { q, k: 10 }));
      const list = body.hits ?? [];
      hits.hidden = false;
      fill(
        hits,
        ...list.map((hit) =>
          h(
            "li",
            { class: "hit", "data-topic": hit.topic, tabindex: 0, role: "button", onclick: () => open(hit.topic) },
            h("strong", {}, hit.topic),
            hit.heading ? ` › ${hit.heading}` : "",
            hit.snippet ? h("p", { class: "snippet" }, hit.snippet) : null,
          )
        ),
      );
      if (list.length === 0) hits.append(h("li", { class: "muted" }, t("nothingFound")));
    });
  };
  let timer;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(runSearch, 300);
  });

  root.append(
    h("h2", {}, t("nav_knowledge")),
    h(
      "form",
      {
        class: "search",
        onsubmit: (event) => {
          event.preventDefault();
          clearTimeout(timer);
          runSearch();
        },
      },
      search,
      h("button", { type: "submit" }, t("search")),
    ),
    status,
    hits,
    h("div", { class: "split" }, section(t("topics"), topics), h("div", { class: "detail" }, viewStatus, view)),
  );

  if (owner) {
    const save = () => {
      const topic = name.value.trim();
      if (!topic) {
        show(editStatus, t("topicNameNeeded"), "error");
        name.focus();
        return;
      }
      load(root, editStatus, async () => {
        const body = await api.put(`/api/knowledge/topics/${seg(topic)}`, { markdown: editor.value });
        current = topic;
        await Promise.all([loadTopics(), open(topic)]);
        show(
          editStatus,
          t(body?.created ? "topicCreated" : "topicSaved", { topic, sections: fmtNum(body?.sections) }),
          "ok",
        );
      });
    };
    root.append(
      section(
        t("editTopic"),
        h(
          "div",
          { class: "row" },
          h("button", {
            type: "button",
            id: "knowledge-new",
            class: "secondary",
            onclick: () => {
              current = null;
              name.value = "";
              editor.value = "";
              show(editStatus, "");
              name.focus();
            },
          }, t("newTopic")),
        ),
        h("label", { class: "field" }, t("topicName"), name),
        h("label", { class: "field" }, t("markdown"), editor),
        h("div", { class: "row" }, h("button", { type: "button", id: "knowledge-save", onclick: save }, t("save"))),
        editStatus,
      ),
    );
  }
  loadTopics();
}

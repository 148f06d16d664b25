// Knowledge: topics (the butler's own marked), search, a topic's Markdown, and the owner's editor.
import { api, query, seg } from "../api.js";
import { badge, fill, fmtNum, fmtTime, h, load, section, show, statusLine } from "../dom.js";
import { t } from "../i18n.js";
import { markdown } from "../markdown.js";

/** A snippet without HTML comments (the `learned by homed` markers), a cut one at its end included. */
const withoutComments = (text) => String(text).replace(/<!--[\s\S]*?(-->|$)/g, "").trim();

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
        markdown(body.markdown, { learned }),
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
            hit.snippet ? h("p", { class: "snippet" }, withoutComments(hit.snippet)) : null,
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

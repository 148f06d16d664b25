// Plugins: one card per plugin, its parts labelled — the skill (SKILL.md: instructions for the butler) and the
// skill.json plugin (native: a device built into homed; or Lua tools) — each usable or not and why, its tools and
// errors; what the last scan found wrong; the owner's reload.
import { api } from "../api.js";
import { badge, fill, h, kv, load, statusLine } from "../dom.js";
import { t } from "../i18n.js";
import { pluginDescription, pluginReason } from "../labels.js";

const names = (tools) => (tools ?? []).map((tool) => (typeof tool === "string" ? tool : tool.full_name ?? tool.name));

/** What a part of a plugin is, in words: the skill, a native plugin, a Lua plugin, or a skill.json that failed. */
function kindOf(part) {
  if (part.kind === "skill") return t("pluginKindSkill");
  if (part.kind === "native") return t("pluginKindNative");
  return part.eligible ? t("pluginKindManifest") : t("pluginKindManifestBroken");
}

function partView(part) {
  const errors = Array.isArray(part.errors) ? part.errors : part.error ? [part.error] : [];
  const tools = names(part.tools);
  return h(
    "li",
    { class: `plugin-part kind-${part.kind ?? "manifest"}`, "data-kind": part.kind ?? "manifest" },
    h(
      "p",
      { class: "plugin-part-head" },
      h("span", { class: "plugin-kind" }, kindOf(part)),
      " ",
      badge(part.eligible ? t("eligible") : t("notEligible"), part.eligible ? "ok" : "warn"),
      part.version ? [" ", h("span", { class: "muted" }, `v${part.version}`)] : null,
    ),
    (part.reasons ?? []).length
      ? h("ul", { class: "reasons" }, part.reasons.map((reason) => h("li", {}, pluginReason(reason))))
      : null,
    tools.length ? h("p", { class: "meta" }, t("tools"), ": ", tools.join(", ")) : null,
    part.commands?.length ? h("p", { class: "meta" }, t("commands"), ": ", part.commands.join(", ")) : null,
    errors.length
      ? h(
        "ul",
        { class: "plugin-errors status error" },
        errors.map((error) => h("li", {}, typeof error === "string" ? error : JSON.stringify(error))),
      )
      : null,
    part.path ? h("p", { class: "meta plugin-path" }, h("code", {}, part.path)) : null,
  );
}

/** The plugins of `/api/plugins` by name, skills first (the order the API lists them in). */
function byName(list) {
  const plugins = new Map();
  for (const part of list) {
    const name = String(part.name ?? "");
    if (!plugins.has(name)) plugins.set(name, []);
    plugins.get(name).push(part);
  }
  return plugins;
}

/** The plugins page. */
export default function plugins(root, ctx) {
  const owner = ctx.who.trust === "owner";
  const status = statusLine();
  const list = h("ul", { id: "plugins", class: "list plugins" });
  const problems = h("div", { id: "plugin-problems" });
  const result = h("div", { id: "plugins-result", class: "result" });

  const reload = () =>
    load(root, status, async () => {
      const body = await api.get("/api/plugins");
      const all = byName(body.plugins ?? []);
      fill(
        list,
        ...[...all].map(([name, parts]) => {
          const description = pluginDescription(parts.find((part) => part.description) ?? {});
          const usable = parts.some((part) => part.eligible);
          return h(
            "li",
            { class: "plugin card", "data-name": name },
            h(
              "h3",
              { class: "plugin-name" },
              h("span", {}, name),
              " ",
              badge(usable ? t("eligible") : t("notEligible"), usable ? "ok" : "warn"),
            ),
            description ? h("p", { class: "plugin-description" }, description) : null,
            h("ul", { class: "plugin-parts" }, parts.map(partView)),
          );
        }),
      );
      if (all.size === 0) list.append(h("li", { class: "muted" }, t("noPlugins")));
      const found = body.problems ?? [];
      fill(
        problems,
        found.length
          ? h(
            "section",
            { class: "card problems-list" },
            h("h3", {}, t("pluginProblems")),
            h("ul", {}, found.map((problem) => h("li", {}, String(problem)))),
          )
          : null,
      );
    });

  const reloadButton = owner
    ? h("button", {
      type: "button",
      id: "plugins-reload",
      onclick: () =>
        load(root, status, async () => {
          fill(result);
          try {
            const body = await api.post("/api/plugins/reload");
            const count = Array.isArray(body?.plugins) ? t("reloadedCount", { n: body.plugins.length }) : t("reloaded");
            fill(
              result,
              h("p", { class: "status ok" }, count),
              h("details", {}, h("summary", {}, t("details")), kv(body)),
            );
          } catch (error) {
            fill(result, h("p", { class: "status error" }, error.message));
          }
          await reload();
        }),
    }, t("reloadPlugins"))
    : null;

  root.append(
    h("h2", {}, t("nav_plugins")),
    h("p", { class: "muted" }, t("pluginsHint")),
    reloadButton ? h("div", { class: "row" }, reloadButton) : null,
    result,
    status,
    problems,
    list,
  );
  reload();
}

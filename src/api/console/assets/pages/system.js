// System: plugins, MCP servers, devices and channels.
import { api, seg } from "../api.js";
import { badge, fill, fmtNum, h, kv, load, section, show, statusLine } from "../dom.js";
import { t } from "../i18n.js";

const names = (tools) => (tools ?? []).map((tool) => (typeof tool === "string" ? tool : tool.full_name ?? tool.name));
const stateBadge = (state) =>
  badge(state ?? "?", /^(running|loaded|ready|ok|connected|active)$/i.test(state ?? "") ? "ok" : "warn");

/** The system page. */
export default function system(root, ctx) {
  const owner = ctx.who.trust === "owner";
  const pluginStatus = statusLine();
  const mcpStatus = statusLine();
  const deviceStatus = statusLine();
  const plugins = h("ul", { class: "list" });
  const servers = h("ul", { class: "list" });
  const devices = h("ul", { class: "list" });
  const result = h("div", { id: "plugins-result", class: "result" });

  const loadPlugins = () =>
    load(root, pluginStatus, async () => {
      const body = await api.get("/api/plugins");
      const list = body.plugins ?? [];
      fill(
        plugins,
        ...list.map((plugin) =>
          h(
            "li",
            { class: "plugin card", "data-name": plugin.name },
            h(
              "p",
              {},
              h("strong", {}, plugin.name),
              " ",
              stateBadge(plugin.state),
              " ",
              badge(plugin.eligible ? t("eligible") : t("notEligible"), plugin.eligible ? "ok" : "warn"),
            ),
            plugin.reasons?.length
              ? h(
                "ul",
                { class: "reasons" },
                plugin.reasons.map((reason) =>
                  h("li", {}, typeof reason === "string" ? reason : JSON.stringify(reason))
                ),
              )
              : null,
            h("p", { class: "meta" }, t("tools"), ": ", names(plugin.tools).join(", ") || t("none")),
            plugin.error
              ? h(
                "p",
                { class: "status error" },
                typeof plugin.error === "string" ? plugin.error : JSON.stringify(plugin.error),
              )
              : null,
          )
        ),
      );
      if (list.length === 0) plugins.append(h("li", { class: "muted" }, t("noPlugins")));
      const problems = body.problems ?? [];
      if (problems.length) {
        plugins.append(h("li", { class: "card problems" }, h("strong", {}, t("problems")), kv(problems)));
      }
    });

  const loadServers = () =>
    load(root, mcpStatus, async () => {
      const body = await api.get("/api/mcp");
      const list = body.servers ?? [];
      fill(
        servers,
        ...list.map((server) => {
          const line = statusLine();
          return h(
            "li",
            { class: "mcp-server card", "data-name": server.name },
            h(
              "p",
              {},
              h("strong", {}, server.name),
              " ",
              stateBadge(server.state),
              " ",
              badge(server.transport ?? "?"),
            ),
            h("p", { class: "meta" }, t("tools"), ": ", names(server.tools).join(", ") || t("none")),
            h("p", { class: "meta" }, t("restarts", { n: fmtNum(server.restarts ?? 0) })),
            server.error ? h("p", { class: "status error" }, String(server.error)) : null,
            owner
              ? h("button", {
                type: "button",
                class: "mcp-restart secondary",
                onclick: () =>
                  load(root, line, async () => {
                    await api.post(`/api/mcp/${seg(server.name)}/restart`);
                    await loadServers();
                    show(mcpStatus, t("restarted", { name: server.name }), "ok");
                  }),
              }, t("restart"))
              : null,
            line,
          );
        }),
      );
      if (list.length === 0) servers.append(h("li", { class: "muted" }, t("noServers")));
    });

  const loadDevices = () =>
    load(root, deviceStatus, async () => {
      const [channels, status] = await Promise.all([api.get("/api/channels"), api.get("/api/status")]);
      const byName = new Map();
      for (const device of [...(channels.channels ?? []), ...(status.devices ?? [])]) {
        if (device?.name && !byName.has(device.name)) byName.set(device.name, device);
      }
      const services = status.services ?? {};
      fill(
        devices,
        ...[...byName.values()].map((device) =>
          h(
            "li",
            { class: "device card", "data-name": device.name },
            h("p", {}, h("strong", {}, device.name), device.type ? [" ", badge(device.type)] : null),
            device.description ? h("p", {}, device.description) : null,
            device.capabilities?.length
              ? h("p", { class: "meta" }, t("capabilities"), ": ", device.capabilities.join(", "))
              : null,
            services[device.name]
              ? h("details", {}, h("summary", {}, t("serviceStatus")), kv(services[device.name]))
              : null,
          )
        ),
      );
      if (byName.size === 0) devices.append(h("li", { class: "muted" }, t("noDevices")));
      if (channels.routes) {
        devices.append(
          h("li", { class: "card" }, h("details", {}, h("summary", {}, t("routes")), kv(channels.routes))),
        );
      }
    });

  const reload = owner
    ? h("button", {
      type: "button",
      id: "plugins-reload",
      onclick: () =>
        load(root, pluginStatus, async () => {
          fill(result);
          try {
            const body = await api.post("/api/plugins/reload");
            const count = Array.isArray(body?.plugins) ? t("reloadedCount", { n: body.plugins.length }) : t("reloaded");
            fill(result, h("p", { class: "status ok" }, count), kv(body));
          } catch (error) {
            fill(result, h("p", { class: "status error" }, error.message));
          }
          await loadPlugins();
        }),
    }, t("reloadPlugins"))
    : null;

  root.append(
    h("h2", {}, t("nav_system")),
    section(t("plugins"), reload, result, pluginStatus, plugins),
    section(t("mcpServers"), mcpStatus, servers),
    section(t("devices"), deviceStatus, devices),
  );
  loadPlugins();
  loadServers();
  loadDevices();
}

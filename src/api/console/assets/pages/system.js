// System: MCP servers, devices and channels (plugins have a page of their own).
import { api, seg } from "../api.js";
import { badge, fill, fmtNum, h, kv, load, section, show, statusLine } from "../dom.js";
import { t } from "../i18n.js";
import { deviceDescription, stateBadge } from "../labels.js";

const names = (tools) => (tools ?? []).map((tool) => (typeof tool === "string" ? tool : tool.full_name ?? tool.name));

/** The system page. */
export default function system(root, ctx) {
  const owner = ctx.who.trust === "owner";
  const mcpStatus = statusLine();
  const deviceStatus = statusLine();
  const servers = h("ul", { class: "list" });
  const devices = h("ul", { class: "list" });

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
            server.error || server.last_error
              ? h("p", { class: "status error" }, String(server.error ?? server.last_error))
              : null,
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
      const states = status.services?.io?.devices ?? {};
      fill(
        devices,
        ...[...byName.values()].map((device) => {
          const description = deviceDescription(device);
          return h(
            "li",
            { class: "device card", "data-name": device.name },
            h("p", {}, h("strong", {}, device.name), device.type ? [" ", badge(device.type)] : null),
            description
              ? h("p", {
                class: "device-description",
                title: description === device.description ? null : device.description,
              }, description)
              : null,
            device.capabilities?.length
              ? h("p", { class: "meta" }, t("capabilities"), ": ", device.capabilities.join(", "))
              : null,
            states[device.name]
              ? h("details", {}, h("summary", {}, t("serviceStatus")), kv(states[device.name]))
              : null,
          );
        }),
      );
      if (byName.size === 0) devices.append(h("li", { class: "muted" }, t("noDevices")));
      if (channels.routes?.length) {
        devices.append(
          h("li", { class: "card" }, h("details", {}, h("summary", {}, t("routes")), kv(channels.routes))),
        );
      }
    });

  root.append(
    h("h2", {}, t("nav_system")),
    h("p", { class: "muted" }, t("systemHint"), " ", h("a", { href: "#plugins" }, t("nav_plugins"))),
    section(t("mcpServers"), mcpStatus, servers),
    section(t("devices"), deviceStatus, devices),
  );
  loadServers();
  loadDevices();
}

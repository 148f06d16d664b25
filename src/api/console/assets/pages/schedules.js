// Schedules: the week ahead as a timeline, then every schedule grouped by the day of its next run, each cancellable by
// its creator or the owner.
import { api, seg } from "../api.js";
import { badge, fill, fmtNum, fmtTime, h, load, section, show, statusLine } from "../dom.js";
import { locale, t } from "../i18n.js";
import { weekTimeline } from "../pictures.js";

/** The day a schedule runs next, as [sort key, header]. */
function dayOf(schedule) {
  const local = /^(\d{4})-(\d{2})-(\d{2})/.exec(schedule.next_run_local ?? "");
  const date = local
    ? new Date(Number(local[1]), Number(local[2]) - 1, Number(local[3]))
    : schedule.next_run
    ? new Date(schedule.next_run)
    : null;
  if (!date || Number.isNaN(date.getTime())) return ["~", t("noNextRun")];
  const key = `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, "0")}-${
    String(date.getDate()).padStart(2, "0")
  }`;
  const header = date.toLocaleDateString(locale(), { weekday: "long", year: "numeric", month: "long", day: "numeric" });
  return [key, header];
}

/** The schedules page. */
export default function schedules(root, ctx) {
  const status = statusLine();
  const list = h("div", { class: "calendar" });
  const week = h("div", { class: "week" });
  /** Picking a reminder on the timeline shows it in the list below. */
  const reveal = (schedule) => {
    const item = list.querySelector(`.schedule[data-id="${CSS.escape(String(schedule.id))}"]`);
    if (!item) return;
    item.scrollIntoView({ block: "center", behavior: "smooth" });
    item.classList.add("flash");
    setTimeout(() => item.classList.remove("flash"), 1500);
  };

  const reload = () =>
    load(root, status, async () => {
      const body = await api.get("/api/schedules");
      const all = [...(body.schedules ?? [])].sort((a, b) =>
        String(a.next_run ?? "\uffff").localeCompare(String(b.next_run ?? "\uffff"))
      );
      fill(week, weekTimeline(all, { open: reveal }));
      const days = new Map();
      for (const schedule of all) {
        const [key, header] = dayOf(schedule);
        if (!days.has(key)) days.set(key, { header, items: [] });
        days.get(key).items.push(schedule);
      }
      fill(
        list,
        ...[...days.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, day]) =>
          h(
            "section",
            { class: "day", "data-day": key },
            h("h3", { class: "day-header" }, day.header),
            h("ul", { class: "list" }, day.items.map(item)),
          )
        ),
      );
      if (all.length === 0) list.append(h("p", { class: "muted" }, t("noSchedules")));
    });

  function item(schedule) {
    const mayCancel = ctx.who.trust === "owner" || schedule.creator === ctx.who.name;
    return h(
      "li",
      { class: "schedule card", "data-id": schedule.id },
      h("p", { class: "schedule-text" }, schedule.text ?? ""),
      h(
        "p",
        { class: "meta" },
        h("strong", {}, schedule.next_run_local ?? fmtTime(schedule.next_run)),
        schedule.cron ? [" · ", badge(t("repeats")), " ", h("code", {}, schedule.cron)] : [" · ", badge(t("once"))],
        schedule.timezone ? ` · ${schedule.timezone}` : "",
      ),
      h(
        "p",
        { class: "meta" },
        t("scheduleMeta", {
          creator: schedule.creator ?? "?",
          channel: schedule.channel ?? "?",
          created: fmtTime(schedule.created),
          runs: fmtNum(schedule.runs ?? 0),
        }),
      ),
      mayCancel
        ? h("button", {
          type: "button",
          class: "schedule-cancel danger",
          onclick: () => {
            if (!globalThis.confirm(t("cancelScheduleConfirm", { text: schedule.text ?? schedule.id }))) return;
            load(root, status, async () => {
              await api.del(`/api/schedules/${seg(schedule.id)}`);
              await reload();
              show(status, t("cancelled"), "ok");
            });
          },
        }, t("cancel"))
        : null,
    );
  }

  root.append(
    h("h2", {}, t("nav_schedules")),
    status,
    section(t("weekAhead"), week),
    section(t("allSchedulesTitle"), list),
  );
  reload();
}

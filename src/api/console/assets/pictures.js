// Pictures made of SVG nodes (built with createElementNS, never from markup): the LLM usage of the last days as bars,
// and the next week's reminders on a timeline. Lengths are percentages of the box, so a picture fits a phone and a
// desktop alike and its text keeps its size.
import { fmtCost, fmtNum, fmtTime, h } from "./dom.js";
import { locale, t } from "./i18n.js";

/** A local date as YYYY-MM-DD. */
export const dayKey = (date) =>
  `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, "0")}-${String(date.getDate()).padStart(2, "0")}`;

/**
 * homed's today, as the usage ledger counts days (in homed's timezone, which may be ahead of the browser's): the
 * browser's date, or the newest day of `days` when that is later.
 */
export function homedToday(days, now = new Date()) {
  const mine = dayKey(now);
  const newest = (days ?? []).reduce((latest, day) => (String(day.day) > latest ? String(day.day) : latest), "");
  return newest > mine ? newest : mine;
}

/** A YYYY-MM-DD key as a local Date (midnight). */
const dateOf = (key) => {
  const [year, month, day] = key.split("-").map(Number);
  return new Date(year, month - 1, day);
};

const compact = (value) =>
  typeof value === "number" && Number.isFinite(value)
    ? value.toLocaleString(locale(), { notation: "compact", maximumFractionDigits: 1 })
    : "—";

/** A round number at or above `value` (1, 2 or 5 times a power of ten). */
function ceilNice(value) {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

const pct = (value) => `${Math.round(value * 1000) / 1000}%`;

/**
 * The usage of the last `count` days (from `/api/usage`'s `days`, any order, gaps filled with nothing) as stacked bars:
 * cached input, other input and output tokens per day; each bar's title gives the day's figures and cost.
 */
export function usageChart(days, { count = 30, currency, now = new Date() } = {}) {
  const byDay = new Map((days ?? []).map((day) => [day.day, day]));
  const today = dateOf(homedToday(days, now));
  const series = [];
  for (let back = count - 1; back >= 0; back--) {
    const date = new Date(today.getFullYear(), today.getMonth(), today.getDate() - back);
    const key = dayKey(date);
    series.push({ key, date, day: byDay.get(key) });
  }
  const total = (day) => (day?.prompt_tokens ?? 0) + (day?.completion_tokens ?? 0);
  const top = ceilNice(Math.max(...series.map((item) => total(item.day))));
  const height = 170;
  const plot = { top: 14, bottom: 146 }; // y of the top grid line and of the base line
  const y = (tokens) => plot.bottom - (tokens / top) * (plot.bottom - plot.top);
  const slot = 100 / count;
  const svg = h("svg:svg", {
    id: "usage-chart",
    class: "chart",
    width: "100%",
    height,
    role: "img",
    "aria-label": t("usageChartLabel", { days: count }),
  });
  const any = series.some((item) => total(item.day) > 0);
  if (!any) {
    svg.append(
      h(
        "svg:text",
        { class: "axis", x: "50%", y: (plot.top + plot.bottom) / 2, "text-anchor": "middle" },
        t("noUsage"),
      ),
    );
  }
  for (const fraction of any ? [0.5, 1] : []) {
    svg.append(
      h("svg:line", { class: "grid", x1: "0", x2: "100%", y1: y(top * fraction), y2: y(top * fraction) }),
      h(
        "svg:text",
        { class: "axis", x: "2", y: y(top * fraction) - 3 },
        t("tokensShort", { n: compact(top * fraction) }),
      ),
    );
  }
  svg.append(h("svg:line", { class: "base", x1: "0", x2: "100%", y1: plot.bottom, y2: plot.bottom }));
  series.forEach(({ key, date, day }, index) => {
    const x = pct(index * slot + slot * 0.12);
    const width = pct(slot * 0.76);
    const group = h("svg:g", { class: "bar", "data-day": key });
    const hit = day?.cache_hit_tokens ?? 0;
    const input = day?.prompt_tokens ?? 0;
    const output = day?.completion_tokens ?? 0;
    let base = plot.bottom;
    for (
      const [cls, tokens] of [["bar-hit", Math.min(hit, input)], ["bar-in", input - Math.min(hit, input)], [
        "bar-out",
        output,
      ]]
    ) {
      if (tokens <= 0) continue;
      const barHeight = Math.max(1, (tokens / top) * (plot.bottom - plot.top));
      base -= barHeight;
      group.append(h("svg:rect", { class: cls, x, width, y: base, height: barHeight }));
    }
    // An empty day still answers a hover: an invisible full-height target.
    group.append(
      h("svg:rect", {
        class: "bar-target",
        x: pct(index * slot),
        width: pct(slot),
        y: plot.top,
        height: plot.bottom - plot.top,
      }),
    );
    group.prepend(
      h(
        "svg:title",
        {},
        day
          ? t("usageBarTitle", {
            day: date.toLocaleDateString(locale(), { month: "short", day: "numeric", weekday: "short" }),
            requests: fmtNum(day.requests),
            input: fmtNum(input),
            hit: fmtNum(hit),
            output: fmtNum(output),
            cost: fmtCost(day.cost, currency),
          })
          : `${date.toLocaleDateString(locale(), { month: "short", day: "numeric" })}: ${t("noUsageThatDay")}`,
      ),
    );
    svg.append(group);
    // The first day, today, and every seventh day back from today (not one crowding the first).
    const labelled = index === 0 || index === count - 1 || ((count - 1 - index) % 7 === 0 && index >= 3);
    if (labelled) {
      svg.append(
        h(
          "svg:text",
          {
            class: "axis",
            x: index === 0 ? "0" : index === count - 1 ? "100%" : pct(index * slot + slot / 2),
            y: height - 6,
            "text-anchor": index === 0 ? "start" : index === count - 1 ? "end" : "middle",
          },
          index === count - 1 ? t("today") : date.toLocaleDateString(locale(), { month: "numeric", day: "numeric" }),
        ),
      );
    }
  });
  return svg;
}

/** The chart's legend. */
export function usageLegend() {
  return h(
    "p",
    { class: "legend" },
    [["bar-hit", t("legendCached")], ["bar-in", t("legendInput")], ["bar-out", t("legendOutput")]].map(([cls, text]) =>
      h("span", { class: "legend-item" }, h("span", { class: `swatch ${cls}` }), text)
    ),
  );
}

const DAY_MS = 86_400_000;

/**
 * A clock face in `timeZone` (the household's, `daemon.timezone`, as the schedules carry it; the browser's when
 * undefined): an epoch's day as YYYY-MM-DD and minute of that day, and a day key's neighbours.
 */
export function zonedClock(timeZone) {
  let format;
  try {
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
  } catch {
    format = new Intl.DateTimeFormat("en-CA", {
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
  }
  const zone = format.resolvedOptions().timeZone;
  return {
    timeZone: zone,
    /** The day and minute of `ms` there. */
    at(ms) {
      const parts = Object.fromEntries(format.formatToParts(ms).map((part) => [part.type, part.value]));
      return {
        key: `${parts.year}-${parts.month}-${parts.day}`,
        minutes: Number(parts.hour) * 60 + Number(parts.minute),
      };
    },
    /** The day `days` after `key`. */
    plus(key, days) {
      const [year, month, day] = key.split("-").map(Number);
      return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
    },
    /** A day key in words ("Sat", "12/6"), as the page's language writes it. */
    label(key, options) {
      const [year, month, day] = key.split("-").map(Number);
      return new Date(Date.UTC(year, month - 1, day, 12)).toLocaleDateString(locale(), { ...options, timeZone: "UTC" });
    },
    /** The time of `ms` there ("07:30"). */
    time(ms) {
      return new Date(ms).toLocaleTimeString(locale(), { hour: "2-digit", minute: "2-digit", timeZone: zone });
    },
  };
}

/**
 * When a schedule runs between `from` and `until` (epoch ms): its next run, and for a cron that runs every day or on
 * set weekdays (minute and hour fixed) the same time on each matching day after it (in the schedule's own zone, as
 * `next_run_local` gives its weekday).
 */
export function occurrences(schedule, from, until) {
  const first = schedule.next_run ? Date.parse(schedule.next_run) : NaN;
  if (!Number.isFinite(first) || first >= until) return [];
  const times = [first];
  const fields = String(schedule.cron ?? "").trim().split(/\s+/);
  if (
    fields.length === 5 && /^\d+$/.test(fields[0]) && /^\d+$/.test(fields[1]) && fields[2] === "*" && fields[3] === "*"
  ) {
    const weekdays = expandWeekdays(fields[4]);
    const localDay = /^(\d{4})-(\d{2})-(\d{2})/.exec(schedule.next_run_local ?? "");
    const startDow = localDay
      ? new Date(Date.UTC(Number(localDay[1]), Number(localDay[2]) - 1, Number(localDay[3]))).getUTCDay()
      : new Date(first).getDay();
    for (let k = 1; first + k * DAY_MS < until; k++) {
      if (weekdays.has((startDow + k) % 7)) times.push(first + k * DAY_MS);
    }
  }
  return times.filter((time) => time >= from && time < until);
}

/** The weekdays (0 = Sunday) of a cron's day-of-week field: "*", lists, ranges, steps, 7 as Sunday. */
function expandWeekdays(field) {
  const days = new Set();
  for (const part of field.split(",")) {
    const [range, step] = part.split("/");
    const every = Number(step ?? 1) || 1;
    const [low, high] = range === "*" ? [0, 6] : range.split("-").map(Number);
    const end = high ?? low;
    if (!Number.isInteger(low) || !Number.isInteger(end)) return new Set([0, 1, 2, 3, 4, 5, 6]);
    for (let day = low; day <= end; day += every) days.add(day % 7);
  }
  return days;
}

/**
 * The week ahead as one row per day — in the household's time, the zone the schedules carry, so it agrees with their
 * list — each with a 24-hour line holding a dot per reminder and the reminders in order with their time; `open`
 * is called with a schedule picked.
 */
export function weekTimeline(schedules, { now = new Date(), open } = {}) {
  const clock = zonedClock((schedules ?? []).find((schedule) => schedule.timezone)?.timezone);
  const today = clock.at(now.getTime()).key;
  const days = [];
  for (let d = 0; d < 7; d++) days.push({ key: clock.plus(today, d), items: [] });
  // A day and a bit more than a week of epoch ms covers the seven days in any zone; each run is placed by its day.
  const until = now.getTime() + 8 * DAY_MS;
  for (const schedule of schedules ?? []) {
    for (const time of occurrences(schedule, now.getTime(), until)) {
      days.find((day) => day.key === clock.at(time).key)?.items.push({ time, schedule });
    }
  }
  const nowMinutes = clock.at(now.getTime()).minutes;
  return h(
    "ol",
    { id: "schedule-timeline", class: "timeline", "data-timezone": clock.timeZone },
    days.map(({ key, items }, index) => {
      items.sort((a, b) => a.time - b.time);
      const label = index === 0 ? t("today") : index === 1 ? t("tomorrow") : clock.label(key, { weekday: "short" });
      const track = h("svg:svg", { class: "tl-track", width: "100%", height: 22, "aria-hidden": "true" });
      track.append(h("svg:line", { class: "tl-line", x1: "0", x2: "100%", y1: 11, y2: 11 }));
      for (const hour of [6, 12, 18]) {
        const x = pct((hour / 24) * 100);
        track.append(h("svg:line", { class: "tl-tick", x1: x, x2: x, y1: 6, y2: 16 }));
      }
      if (index === 0) {
        const x = pct((nowMinutes / 1440) * 100);
        track.append(h("svg:line", { class: "tl-now", x1: x, x2: x, y1: 2, y2: 20 }));
      }
      for (const { time, schedule } of items) {
        const x = pct((clock.at(time).minutes / 1440) * 100);
        track.append(
          h(
            "svg:circle",
            { class: `tl-dot${schedule.cron ? " repeats" : ""}`, cx: x, cy: 11, r: 5 },
            h("svg:title", {}, schedule.text ?? ""),
          ),
        );
      }
      return h(
        "li",
        { class: `tl-day${index === 0 ? " today" : ""}`, "data-day": key },
        h(
          "div",
          { class: "tl-label" },
          h("strong", {}, label),
          " ",
          h("span", { class: "muted" }, clock.label(key, { month: "numeric", day: "numeric" })),
        ),
        track,
        items.length
          ? h(
            "ul",
            { class: "tl-items" },
            items.map(({ time, schedule }) =>
              h(
                "li",
                {
                  class: "tl-item",
                  "data-id": schedule.id,
                  ...(open ? { tabindex: 0, role: "button", onclick: () => open(schedule) } : {}),
                },
                h("time", {}, clock.time(time)),
                " ",
                h("span", { class: "tl-text" }, schedule.text ?? ""),
                schedule.cron ? [" ", h("span", { class: "badge", title: schedule.cron }, "↻")] : null,
              )
            ),
          )
          : h("p", { class: "tl-empty muted" }, t("nothingThatDay")),
      );
    }),
  );
}

/**
 * A short time for a list, in `timeZone` (the schedule's; the browser's when undefined): "Tue 08:00" within the week
 * ahead, the full date beyond.
 */
export function soonTime(iso, timeZone, now = new Date()) {
  const time = Date.parse(iso);
  if (!Number.isFinite(time)) return "—";
  const clock = zonedClock(timeZone);
  if (time - now.getTime() < 6 * DAY_MS && time >= now.getTime() - DAY_MS) {
    const key = clock.at(time).key;
    const day = key === clock.at(now.getTime()).key ? t("today") : clock.label(key, { weekday: "short" });
    return `${day} ${clock.time(time)}`;
  }
  return fmtTime(iso);
}

/**
 * How a service call reads to a person: the owner's question before a sensitive call ("Unlock lock.front_door
 * (lock.unlock)"), and the service data with its secrets (an alarm code, a password) masked — for that question, the
 * audit list and the logs alike, so a code the model passes is never shown back.
 *
 * @module
 */

/** Keys of service data that are secrets (an alarm code): masked in the audit list, the summary and logs. */
const SECRET_KEY = /code|pin|password|passcode|secret|token/i;

/** How a service reads in the owner's question. */
const VERBS: Record<string, string> = {
  unlock: "Unlock",
  lock: "Lock",
  open: "Open",
  open_cover: "Open",
  close_cover: "Close",
  stop_cover: "Stop",
  set_cover_position: "Move",
  toggle: "Toggle",
  turn_on: "Turn on",
  turn_off: "Turn off",
  alarm_disarm: "Disarm",
  alarm_arm_away: "Arm (away)",
  alarm_arm_home: "Arm (home)",
  alarm_arm_night: "Arm (night)",
  alarm_arm_vacation: "Arm (vacation)",
  alarm_arm_custom_bypass: "Arm (custom bypass)",
  alarm_trigger: "Trigger",
};

/**
 * The owner's question for a service call: a verb, the entity, and the service.
 *
 * @example
 * ```ts
 * actionSummary("lock", "unlock", "lock.front_door", {}); // "Unlock lock.front_door (lock.unlock)"
 * actionSummary("alarm_control_panel", "alarm_disarm", "alarm_control_panel.home", { code: "1234" });
 * // 'Disarm alarm_control_panel.home (alarm_control_panel.alarm_disarm) with {"code":"***"}'
 * ```
 */
export function actionSummary(
  domain: string,
  service: string,
  entityId: string,
  data: Record<string, unknown>,
): string {
  const verb = VERBS[service] ?? `${service.charAt(0).toUpperCase()}${service.slice(1).replaceAll("_", " ")}`;
  const masked = maskData(data);
  const extra = Object.keys(masked).length ? ` with ${JSON.stringify(masked)}` : "";
  return `${verb} ${entityId} (${domain}.${service})${extra}`;
}

/**
 * Service data with the values of secret keys (`code`, `pin`, `password`…) replaced by `***`.
 *
 * @example
 * ```ts
 * maskData({ code: "1234", mode: "away" }); // { code: "***", mode: "away" }
 * ```
 */
export function maskData(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key, SECRET_KEY.test(key) ? "***" : value]));
}

/**
 * The `ha_call_service` tool: one Home Assistant service on one entity, checked first against what HA reports (the
 * entity exists and is in that domain, the domain has that service, `data` names no other target) and limited to
 * `smart_home.home_assistant.domains`. A service on a `confirm` domain or entity is declared `sensitive`: the tool
 * registry's gate holds it for the owner's yes before it reaches here. Every call that reaches here — refused,
 * confirmed, done or failed — goes in the audit list with the turn and who asked.
 *
 * The same check runs twice: in `describeCall`, so a call that would be refused is never put to the owner, and again
 * when it runs, since the owner may answer minutes later and HA may have changed meanwhile.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { DeviceTool } from "../../io/device.ts";
import type { ToolContext } from "../../tools/tool.ts";
import type { AskingTurn, AuditEntry, HaAudit } from "./ha_audit.ts";
import type { HaCache } from "./ha_cache.ts";
import type { HaConnection } from "./ha_connection.ts";
import type { HaRules } from "./ha_settings.ts";
import { domainOf } from "./ha_state.ts";
import { attributesText, shownValue } from "./ha_state_text.ts";
import { actionSummary } from "./ha_summary.ts";

/** Deadline of `call_service` (HA answers once the service has run). */
const CALL_TIMEOUT_MS = 15_000;
/** Longest `data` taken, as JSON. */
const MAX_DATA_CHARS = 4_096;
/** Keys of service data that are targets: a target goes in `entity_id`, where it is checked. */
const TARGET_KEYS = ["entity_id", "device_id", "area_id", "floor_id", "label_id"];

/** What `ha_call_service` reads and writes. */
export interface CallToolDeps {
  cache: HaCache;
  connection: HaConnection;
  rules: HaRules;
  audit: HaAudit;
  logger: Logger;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The `ha_call_service` tool of a device, reading and writing `deps`. */
export function callTool(deps: CallToolDeps): DeviceTool {
  const { rules } = deps;
  return {
    name: "ha_call_service",
    allow: "household",
    description: `Call a Home Assistant service on one entity, e.g. {"domain":"light","service":"turn_on",` +
      `"entity_id":"light.kitchen","data":{"brightness_pct":40}}. Allowed domains: ${rules.domainList()}. ` +
      "Find entity ids with ha_states first. A service that needs the owner's yes is not run at once: the owner " +
      "is asked, and it runs only when they agree.",
    parameters: {
      type: "object",
      properties: {
        domain: { type: "string", pattern: "^[a-z0-9_]+$", maxLength: 64, description: "The service's domain" },
        service: { type: "string", pattern: "^[a-z0-9_]+$", maxLength: 64, description: "e.g. turn_on" },
        entity_id: { type: "string", maxLength: 255, description: "The entity, e.g. light.kitchen" },
        data: { type: "object", description: 'Service data, e.g. {"brightness_pct": 40}' },
      },
      required: ["domain", "service", "entity_id"],
      additionalProperties: false,
    },
    timeoutMs: CALL_TIMEOUT_MS + 5_000,
    // The registry's gate holds a sensitive call for the owner: `confirm` domains and entities.
    effect: (args) => rules.sensitive(String(args.domain), String(args.entity_id)) ? "sensitive" : "act",
    describeCall: (args) => {
      const refusal = check(deps, String(args.domain), String(args.service), String(args.entity_id), args.data ?? {});
      if (refusal) throw new Error(refusal);
      return actionSummary(
        String(args.domain),
        String(args.service),
        String(args.entity_id),
        isRecord(args.data) ? args.data : {},
      );
    },
    execute: (args, context) => call(deps, args, context),
  };
}

async function call(deps: CallToolDeps, args: Record<string, unknown>, context: ToolContext): Promise<string> {
  const { audit } = deps;
  const domain = String(args.domain);
  const service = String(args.service);
  const entityId = String(args.entity_id);
  const data = args.data === undefined ? {} : args.data;
  const turn: AskingTurn = {
    eventId: context.eventId,
    source: context.source,
    sender: context.sender,
    trust: context.trust,
  };
  const entry = audit.record(turn, domain, service, entityId, isRecord(data) ? data : {});
  const refusal = check(deps, domain, service, entityId, data);
  if (refusal) {
    audit.step(entry, "refused", refusal);
    throw new Error(refusal);
  }
  const serviceData = data as Record<string, unknown>;
  // A sensitive call reaches here only on the owner's yes: the registry's gate held it until then.
  if (deps.rules.sensitive(domain, entityId)) {
    entry.confirm = true;
    audit.step(entry, "confirmed", "the owner said yes");
  }
  return await execute(deps, entry, domain, service, entityId, serviceData);
}

/** Why the call may not go to HA, or undefined when it may. */
function check(
  deps: CallToolDeps,
  domain: string,
  service: string,
  entityId: string,
  data: unknown,
): string | undefined {
  const { cache, connection, rules } = deps;
  if (!rules.allowedDomains.has(domain)) {
    return `Domain ${JSON.stringify(domain)} is not in smart_home.home_assistant.domains (${rules.domainList()}); ` +
      "homed does not call its services";
  }
  if (connection.state !== "connected") {
    return `Home Assistant is not connected${rules.whyNot(connection.lastError)}; nothing was done`;
  }
  const state = cache.states.get(entityId);
  if (!state) {
    const same = [...cache.states.keys()].filter((id) => domainOf(id) === domain && !cache.entry(id)?.hidden)
      .sort();
    const hint = same.length
      ? `; ${domain} entities: ${same.slice(0, 20).join(", ")}${same.length > 20 ? ", …" : ""}`
      : "";
    return `Home Assistant has no entity ${JSON.stringify(entityId)}${hint}`;
  }
  if (domainOf(entityId) !== domain) {
    return `${entityId} is not a ${domain} entity; call a ${domainOf(entityId)} service on it`;
  }
  const services = cache.services.get(domain);
  if (!services?.has(service)) {
    const known = [...(services ?? [])].sort().join(", ") || "none";
    return `Home Assistant has no service ${domain}.${service}; ${domain} services: ${known}`;
  }
  if (!isRecord(data)) return `data must be an object of service fields, got ${JSON.stringify(data)}`;
  const target = TARGET_KEYS.find((key) => key in data);
  if (target) {
    return `data may not hold ${target}: the one entity the call is for goes in entity_id, where it is checked`;
  }
  const size = JSON.stringify(data).length;
  if (size > MAX_DATA_CHARS) return `data is ${size} characters of JSON; at most ${MAX_DATA_CHARS}`;
  return undefined;
}

/** Calls the service and says what HA answered and the entity's state after. */
async function execute(
  deps: CallToolDeps,
  entry: AuditEntry,
  domain: string,
  service: string,
  entityId: string,
  data: Record<string, unknown>,
): Promise<string> {
  const { audit, cache, logger } = deps;
  try {
    await deps.connection.command("call_service", {
      domain,
      service,
      target: { entity_id: entityId },
      ...(Object.keys(data).length ? { service_data: data } : {}),
    }, { timeoutMs: CALL_TIMEOUT_MS });
  } catch (error) {
    const message = `${domain}.${service} on ${entityId} failed: ${(error as Error).message}`;
    audit.step(entry, "failed", message);
    logger.warning("Home Assistant action {id} ({sender}): {message}", {
      id: entry.id,
      sender: entry.sender,
      message,
    });
    throw new Error(message);
  }
  const state = cache.states.get(entityId);
  const now = state ? `; ${entityId} is now ${shownValue(state.state)}${attributesText(entityId, state)}` : "";
  const text = `Home Assistant ran ${domain}.${service} on ${entityId}${now}`;
  audit.step(entry, "done", text);
  logger.info("Home Assistant action {id} ({sender}, turn {turn}): {text}", {
    id: entry.id,
    sender: entry.sender,
    turn: entry.turn,
    text,
  });
  return text;
}

/**
 * The memory endpoints of `docs/CONSOLE_API.md` ("Memory"). Reading — `GET /api/memory/entities`, `graph`,
 * `neighbors`, `documents` — needs trust `household` or `owner` (memory holds what the household said; a guest gets
 * 403). Changing — correcting a fact, forgetting a fact, a document or messages — needs trust `owner`. Inspecting is
 * not counted as an access (it keeps no document warm).
 *
 * @module
 */

import type { Context, Hono } from "hono";
import { type Clock, deadline, systemClock } from "../clock.ts";
import type { Identity } from "../identity/identity.ts";
import type { Viewer } from "../identity/visibility.ts";
import { FactConflict, type ForgetCounts, type MemoryService } from "../memory/memory_service.ts";
import type { Job } from "../service/job.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { intParam, searchParams } from "./search_params.ts";
import { requireTrust } from "./require_trust.ts";

type ApiContext = Context<{ Variables: ApiVariables }>;

/** How long `POST /api/memory/job` waits for the run before it answers 202 (the run goes on). */
const JOB_WAIT_MS = 30_000;

/** What the memory routes need besides memory. */
export interface MemoryRoutesOptions {
  /** The memory job (`memory.distill`), once the services are scheduled: `POST /api/memory/job` runs it now. */
  job?: () => Job | undefined;
  /** The clock its wait is measured on (default: the system's). */
  clock?: Clock;
}

/**
 * Refuses a caller below trust `household`, naming the trust needed and the caller's; returns them as a reader: what
 * the pages show follows `visibleTo` (a household member sees their own, shared chats' and the household's).
 */
function requireHousehold(c: ApiContext): Viewer {
  const identity = c.get("identity");
  requireHouseholdIdentity(identity);
  return viewerOf(identity);
}

/**
 * An API caller as a reader of what was said (`identity/visibility.ts`): their token's name and trust.
 *
 * @example
 * ```ts
 * viewerOf({ name: "alice", trust: "household" }); // { sender: "alice", trust: "household" }
 * ```
 */
export function viewerOf(identity: Identity): Viewer {
  return { sender: identity.name, trust: identity.trust };
}

/**
 * The memory's rule for any door to it (the API, MCP): trust `household` or `owner`; a guest gets 403 naming both.
 *
 * @example
 * ```ts
 * requireHouseholdIdentity({ name: "alice", trust: "household" }); // passes
 * ```
 */
export function requireHouseholdIdentity(identity: Identity): void {
  requireTrust(identity, "household", "Inspecting memory");
}

/**
 * The rule for changing memory (correcting, forgetting): trust `owner`; anyone else gets 403 naming the trust needed
 * and theirs.
 *
 * @example
 * ```ts
 * requireOwnerIdentity({ name: "owner", trust: "owner" }); // passes
 * requireOwnerIdentity({ name: "alice", trust: "household" }); // throws ApiError 403
 * ```
 */
export function requireOwnerIdentity(identity: Identity): void {
  requireTrust(identity, "owner", "Changing memory");
}

/** Query parameters, like {@link searchParams} but `q` may be empty and `k` defaults to 20 (1 to 100). */
function listParams(c: ApiContext): { query: string; k: number } {
  const query = c.req.query("q") ?? "";
  if (query.length > 500) {
    throw new ApiError(400, "bad_request", `Query parameter "q" has ${query.length} characters; allowed: at most 500`);
  }
  const k = intParam(c, "k", { min: 1, max: 100, fallback: 20 });
  return { query: query.trim(), k };
}

/** A value for an error message: JSON, a long one cut. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}... (${text.length} characters)` : text;
}

/** The request body as a JSON object with only the `allowed` keys; 400 naming what is wrong. */
async function readObject(c: ApiContext, allowed: readonly string[]): Promise<Record<string, unknown>> {
  const raw = await c.req.text();
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new ApiError(400, "bad_request", `The body is not JSON: ${shown(raw)}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError(
      400,
      "bad_request",
      `The body must be a JSON object with ${fields(allowed)}, got ${shown(body)}`,
    );
  }
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      throw new ApiError(400, "bad_request", `Unknown field ${JSON.stringify(key)}; allowed: ${fields(allowed)}`);
    }
  }
  return body as Record<string, unknown>;
}

function fields(names: readonly string[]): string {
  return names.map((name) => JSON.stringify(name)).join(", ");
}

/** A string field of `min` to `max` characters; 400 naming the field and the bad value. */
function stringField(value: unknown, field: string, min: number, max: number): string {
  if (value === undefined) throw new ApiError(400, "bad_request", `Field "${field}" is missing`);
  if (typeof value !== "string") {
    throw new ApiError(400, "bad_request", `Field "${field}" must be a string, got ${shown(value)}`);
  }
  if (value.trim().length < min) {
    throw new ApiError(
      400,
      "bad_request",
      `Field "${field}" is empty (${shown(value)}); it needs ${min} to ${max} characters`,
    );
  }
  if (value.length > max) {
    throw new ApiError(
      400,
      "bad_request",
      `Field "${field}" has ${value.length} characters (${shown(value)}); allowed: at most ${max}`,
    );
  }
  return value;
}

/** The fact id of the path; 400 when it is not a positive whole number. */
function factId(c: ApiContext): number {
  const raw = c.req.param("id") ?? "";
  const id = Number(raw);
  if (!/^\d{1,15}$/.test(raw) || id < 1) {
    throw new ApiError(400, "bad_request", `A fact id is a positive whole number, got ${shown(raw)}`);
  }
  return id;
}

function noFact(id: number): ApiError {
  return new ApiError(404, "not_found", `No fact with id ${id} in memory`);
}

/** What a forget removed, as the API names the layers. */
function forgotten(counts: ForgetCounts): { context: number; journal: number; documents: number; facts: number } {
  return { context: counts.context, journal: counts.candidates, documents: counts.documents, facts: counts.facts };
}

/** Event ids a forget takes at most per request. */
const FORGET_MAX = 500;

/**
 * Mounts the memory endpoints (behind the API's auth): reading for household members and the owner, changing for
 * the owner only.
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 * import type { MemoryService } from "../memory/memory_service.ts";
 *
 * declare const options: ApiOptions;
 * declare const memory: MemoryService;
 * const app = createApi({ ...options, routes: [memoryRoutes(memory)] });
 * ```
 */
export function memoryRoutes(
  memory: MemoryService,
  options: MemoryRoutesOptions = {},
): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.post("/api/memory/job", async (c) => {
      requireOwnerIdentity(c.get("identity"));
      const job = options.job?.();
      if (!job) {
        throw new ApiError(503, "unavailable", "The memory job is not scheduled yet (homed is starting); try again");
      }
      const run = job.runOnce();
      // A long backlog (a model call per batch) may take minutes: answer when it is done or after a while, whichever
      // is first; the run goes on and its end shows in /api/status.
      const limit = deadline(options.clock ?? systemClock, JOB_WAIT_MS);
      const done = !(await limit.race(run).finally(() => limit.cancel())).late;
      return c.json({ done, job: job.status() }, done ? 200 : 202);
    });
    app.get("/api/memory/export", async (c) => {
      requireOwnerIdentity(c.get("identity"));
      const entity = c.req.query("entity");
      if (entity !== undefined && (entity.trim() === "" || entity.length > 200)) {
        throw new ApiError(
          400,
          "bad_request",
          `Query parameter "entity" must be 1 to 200 characters, got ${JSON.stringify(entity.slice(0, 80))}`,
        );
      }
      const exported = await memory.export(entity);
      if (entity !== undefined && exported.entities.length === 0) {
        throw new ApiError(404, "not_found", `No entity ${JSON.stringify(entity.slice(0, 80))} in memory`);
      }
      const day = exported.exported_at.slice(0, 10);
      const name = entity === undefined ? "all" : entity.replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 40);
      c.header("Content-Disposition", `attachment; filename="homed-memory-${name}-${day}.json"`);
      return c.json(exported);
    });
    app.get("/api/memory/entities", async (c) => {
      const viewer = requireHousehold(c);
      const { query, k } = listParams(c);
      return c.json({ query, entities: await memory.inspectEntities(query, k, viewer) });
    });
    app.get("/api/memory/documents", async (c) => {
      const viewer = requireHousehold(c);
      const { query, k } = searchParams(c);
      return c.json({ query, documents: await memory.inspectDocuments(query, k, viewer) });
    });
    app.get("/api/memory/graph", async (c) => {
      const viewer = requireHousehold(c);
      const { query } = searchParams(c);
      return c.json({ entity: query, facts: await memory.inspectGraph(query, viewer) });
    });
    app.get("/api/memory/neighbors", async (c) => {
      const viewer = requireHousehold(c);
      const { query } = searchParams(c);
      return c.json(await memory.inspectNeighbors(query, viewer));
    });
    app.post("/api/memory/facts/:id/correct", async (c) => {
      requireOwnerIdentity(c.get("identity"));
      const id = factId(c);
      const object = stringField((await readObject(c, ["object"])).object, "object", 1, 500);
      try {
        const corrected = await memory.correctFact(id, object, c.get("identity").name);
        if (!corrected) throw noFact(id);
        return c.json(corrected);
      } catch (error) {
        if (error instanceof FactConflict) throw new ApiError(409, "conflict", error.message);
        // Empty once normalised (NFKC, whitespace): the graph's own check.
        if (error instanceof RangeError) {
          throw new ApiError(
            400,
            "bad_request",
            `Field "object" is not a usable value (${shown(object)}): ${error.message}`,
          );
        }
        throw error;
      }
    });
    app.delete("/api/memory/facts/:id", async (c) => {
      requireOwnerIdentity(c.get("identity"));
      const id = factId(c);
      if (!await memory.forgetFact(id)) throw noFact(id);
      return c.json({ forgotten: { facts: 1 } });
    });
    app.delete("/api/memory/entities/:name", async (c) => {
      requireOwnerIdentity(c.get("identity"));
      const name = c.req.param("name");
      const facts = await memory.forgetEntity(name);
      if (facts === undefined) throw new ApiError(404, "not_found", `No entity ${shown(name)} in memory`);
      return c.json({ forgotten: { facts } });
    });
    app.delete("/api/memory/documents/:id", async (c) => {
      requireOwnerIdentity(c.get("identity"));
      const id = c.req.param("id");
      const counts = await memory.forgetDocument(id);
      if (!counts) throw new ApiError(404, "not_found", `No document ${shown(id)} in memory`);
      return c.json({ forgotten: forgotten(counts) });
    });
    app.post("/api/memory/forget", async (c) => {
      requireOwnerIdentity(c.get("identity"));
      const ids = (await readObject(c, ["event_ids"])).event_ids;
      if (ids === undefined) throw new ApiError(400, "bad_request", 'Field "event_ids" is missing');
      if (!Array.isArray(ids) || ids.length < 1 || ids.length > FORGET_MAX) {
        throw new ApiError(
          400,
          "bad_request",
          `Field "event_ids" must be a list of 1 to ${FORGET_MAX} event ids, got ${
            Array.isArray(ids) ? `a list of ${ids.length}` : shown(ids)
          }`,
        );
      }
      const eventIds = ids.map((value, i) => stringField(value, `event_ids[${i}]`, 1, 100));
      return c.json({ forgotten: forgotten(await memory.forget(eventIds)) });
    });
  };
}

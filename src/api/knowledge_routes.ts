/**
 * `GET /api/knowledge` (the topics, each saying whether the butler `learned` some of it itself) and
 * `GET /api/knowledge/search?q=`; `GET /api/knowledge/topics/<topic>` (household and owner: the file, its sections
 * and which were learned) and `PUT /api/knowledge/topics/<topic>` `{"markdown"}` (the owner: the file replaced whole,
 * searchable at once).
 *
 * @module
 */

import type { Hono } from "hono";
import type { KnowledgeBase } from "../knowledge/knowledge_base.ts";
import { topicProblem } from "../knowledge/topic_name.ts";
import { LinkError } from "../fs/contained.ts";
import { ApiError } from "./api_error.ts";
import type { ApiVariables } from "./auth.ts";
import { requireTrust } from "./require_trust.ts";
import { searchParams } from "./search_params.ts";

/** A caller's value in a message: JSON, at most `max` characters of it. */
function shown(value: unknown, max = 60): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The topic of the path, checked with the knowledge base's own rules; a bad one is a 400 naming it. */
function topicOf(raw: string): string {
  const problem = topicProblem(raw);
  if (problem) throw new ApiError(400, "bad_request", problem);
  return raw;
}

/** The body of a PUT: `{"markdown": "…"}`, a non-empty text within the base's limit per topic. */
async function markdownOf(request: Request, maxBytes: number): Promise<string> {
  let body: unknown;
  try {
    body = JSON.parse(await request.text());
  } catch (error) {
    throw new ApiError(400, "bad_json", `The body is not valid JSON: ${(error as Error).message}`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new ApiError(400, "bad_request", `The body must be a JSON object, got ${shown(body)}`);
  }
  const { markdown, ...rest } = body as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) {
    throw new ApiError(400, "bad_request", `Unknown field ${shown(extra)}; allowed fields: markdown`);
  }
  if (markdown === undefined) throw new ApiError(400, "bad_request", 'Field "markdown" is missing');
  if (typeof markdown !== "string" || markdown.trim() === "") {
    throw new ApiError(400, "bad_request", `Field "markdown" must be a non-empty string, got ${shown(markdown)}`);
  }
  const bytes = new TextEncoder().encode(markdown).length;
  if (bytes > maxBytes) {
    throw new ApiError(
      400,
      "bad_request",
      `Field "markdown" has ${bytes} bytes, starting ${shown(markdown, 40)}; allowed: at most ${maxBytes} per topic`,
    );
  }
  return markdown;
}

/** The base's refusals as API errors: a link in the folder is a conflict, a rule broken a bad request. */
function apiErrorOf(error: unknown): unknown {
  if (error instanceof LinkError) return new ApiError(409, "conflict", error.message);
  if (error instanceof RangeError) return new ApiError(400, "bad_request", error.message);
  return error;
}

/**
 * Mounts the knowledge endpoints (behind the API's auth).
 *
 * @example
 * ```ts
 * import { type ApiOptions, createApi } from "./app.ts";
 * import type { KnowledgeBase } from "../knowledge/knowledge_base.ts";
 *
 * declare const options: ApiOptions;
 * declare const knowledge: KnowledgeBase;
 * const app = createApi({ ...options, routes: [knowledgeRoutes(knowledge)] });
 * ```
 */
export function knowledgeRoutes(knowledge: KnowledgeBase): (app: Hono<{ Variables: ApiVariables }>) => void {
  return (app) => {
    app.get("/api/knowledge", (c) => c.json({ ...knowledge.counts(), topics: knowledge.list() }));
    app.get("/api/knowledge/search", (c) => {
      const { query, k } = searchParams(c);
      return c.json({ query, hits: knowledge.search(query, k) });
    });
    app.get("/api/knowledge/topics/:topic", async (c) => {
      requireTrust(c.get("identity"), "household", "Reading a knowledge topic");
      const topic = topicOf(c.req.param("topic"));
      const document = await knowledge.read(topic).catch((error) => {
        throw apiErrorOf(error);
      });
      if (!document) throw new ApiError(404, "not_found", `No knowledge topic ${JSON.stringify(topic)}`);
      return c.json(document);
    });
    app.put("/api/knowledge/topics/:topic", async (c) => {
      requireTrust(c.get("identity"), "owner", "Editing knowledge");
      const topic = topicOf(c.req.param("topic"));
      const markdown = await markdownOf(c.req.raw, knowledge.maxFileBytes);
      const written = await knowledge.write(topic, markdown).catch((error) => {
        throw apiErrorOf(error);
      });
      return c.json(written);
    });
  };
}

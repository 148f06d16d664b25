/**
 * OneBot V11 frames as homed reads and writes them on a WebSocket: an event the implementation pushes (`post_type`), the
 * response to one of homed's actions (`echo` with `status`/`retcode`), and homed's action requests. A frame is read
 * once here ({@link readFrame}); what is neither is dropped with the reason.
 *
 * @module
 */

/** An event frame: `post_type` says which kind (`message`, `notice`, `request`, `meta_event`, …). */
export interface OneBotEvent {
  post_type: string;
  [field: string]: unknown;
}

/** The answer to an action: `status` (`ok`, `async`, `failed`) and/or `retcode`, the `echo` homed sent, `data`. */
export interface ActionResponse {
  echo: unknown;
  status?: unknown;
  retcode?: unknown;
  data?: unknown;
  /** Implementations put the reason of a failure in one of these. */
  wording?: unknown;
  message?: unknown;
  msg?: unknown;
}

/** An action homed asks for. */
export interface ActionRequest {
  action: string;
  params: Record<string, unknown>;
  echo: string;
}

/** What a text frame was. */
export type Frame =
  | { kind: "event"; event: OneBotEvent }
  | { kind: "response"; response: ActionResponse }
  | { kind: "dropped"; why: string };

/**
 * Reads a text frame.
 *
 * @example
 * ```ts
 * readFrame('{"post_type":"meta_event","meta_event_type":"heartbeat","interval":5000}').kind; // "event"
 * readFrame('{"status":"ok","retcode":0,"data":null,"echo":"7"}').kind; // "response"
 * readFrame("{not json"); // { kind: "dropped", why: "a frame that is not JSON: {not json" }
 * ```
 */
export function readFrame(text: string): Frame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "dropped", why: `a frame that is not JSON: ${text.slice(0, 80)}` };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return { kind: "dropped", why: "a frame that is not an object" };
  }
  const record = value as Record<string, unknown>;
  if (typeof record.post_type === "string") return { kind: "event", event: record as OneBotEvent };
  if ("echo" in record && ("status" in record || "retcode" in record)) {
    return { kind: "response", response: record as unknown as ActionResponse };
  }
  return { kind: "dropped", why: `a frame that is neither an event nor a response: ${text.slice(0, 80)}` };
}

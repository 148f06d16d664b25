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

/** A `message` event, read: the fields homed uses, as strings. */
export interface MessageEvent {
  kind: "private" | "group";
  /** The sender's QQ number; "" when the event names none. */
  userId: string;
  /** For a group message, its group number. */
  groupId: string | undefined;
  /** The message as sent: a CQ string or a segment array (`segments.ts` reads it). */
  message: unknown;
  messageId: string | undefined;
  /** The name the sender shows (group card, else nickname): a display name, never an identity. */
  displayName: string | undefined;
}

/**
 * Reads a `message` event; a string says why it cannot be one (a type other than private or group, a group message
 * without its group).
 *
 * @example
 * ```ts
 * readMessageEvent({ post_type: "message", message_type: "private", user_id: 10001, message: "hi", message_id: -7 });
 * // { kind: "private", userId: "10001", groupId: undefined, message: "hi", messageId: "-7", displayName: undefined }
 * readMessageEvent({ post_type: "message", message_type: "guild" }); // 'a message of type "guild"'
 * ```
 */
export function readMessageEvent(event: OneBotEvent): MessageEvent | string {
  const kind = event.message_type;
  if (kind !== "private" && kind !== "group") return `a message of type ${JSON.stringify(kind)}`;
  const groupId = event.group_id === undefined || event.group_id === null ? undefined : String(event.group_id);
  if (kind === "group" && groupId === undefined) return "a group message without group_id";
  const sender = (event.sender ?? {}) as Record<string, unknown>;
  const displayName = [sender.card, sender.nickname].find((name): name is string =>
    typeof name === "string" && name !== ""
  );
  return {
    kind,
    userId: event.user_id === undefined || event.user_id === null ? "" : String(event.user_id),
    groupId,
    message: event.message,
    messageId: event.message_id === undefined || event.message_id === null ? undefined : String(event.message_id),
    displayName,
  };
}

/**
 * The payload of a `message` input, typed. Devices build it (a plugin's Lua too), so it is read once here, field by
 * field, and a field of the wrong type counts as absent — nothing downstream looks into `payload` by hand.
 *
 * @module
 */

/** An image, voice, video or file that came with a message (the agent shows the model its kind and URL). */
export interface MessageAttachment {
  kind: string;
  url: string;
  name?: string;
}

/** What a `message` input carries. */
export interface MessagePayload {
  /** The words; "" when there are none (the turn then refuses it as `bad_input`). */
  text: string;
  /** The device shows the reply as it is produced (`/api/chat/stream`). */
  stream: boolean;
  /** A name the sender gave themself (shown as such, never taken as their identity). */
  display?: string;
  attachments: MessageAttachment[];
}

/**
 * Reads a message payload; fields of the wrong type are left out, attachments without a string kind and URL dropped.
 *
 * @example
 * ```ts
 * readMessage({ text: "hi", stream: true, attachments: [{ kind: "image", url: "https://x/1.png" }, 7] });
 * // { text: "hi", stream: true, attachments: [{ kind: "image", url: "https://x/1.png" }] }
 * readMessage({ text: 42 }); // { text: "", stream: false, attachments: [] }
 * ```
 */
export function readMessage(payload: Readonly<Record<string, unknown>>): MessagePayload {
  const attachments: MessageAttachment[] = [];
  for (const item of Array.isArray(payload.attachments) ? payload.attachments : []) {
    const { kind, url, name } = (item ?? {}) as Record<string, unknown>;
    if (typeof kind !== "string" || typeof url !== "string") continue;
    attachments.push(typeof name === "string" ? { kind, url, name } : { kind, url });
  }
  return {
    text: typeof payload.text === "string" ? payload.text : "",
    stream: payload.stream === true,
    ...(typeof payload.display === "string" ? { display: payload.display } : {}),
    attachments,
  };
}

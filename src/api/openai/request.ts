/**
 * A chat completions request to the door, read and checked: which way it goes — a turn of the butler (model `homed`,
 * or any other name) or a stateless model call (model `homed-utility`, or a client's background task, whose prompt
 * begins with `### Task:`) — and what it asks of the answer. Every refusal is a 400 in OpenAI's shape naming the field
 * and its value; nothing the client sent is silently dropped but the sampling settings (`temperature`, `max_tokens`
 * …: homed's own `llm.*` apply) and, on a turn, the client's history and system prompt (the butler has its own).
 *
 * @module
 */

import type { ChatMessage, ResponseFormat, ToolCall } from "../../provider/provider.ts";
import type { ToolSpec } from "../../tools/tool.ts";
import { MAX_TEXT_CHARS } from "../chat_body.ts";
import { ApiError } from "../api_error.ts";
import { invalidField, shown } from "./errors.ts";
import { type ImagePart, readImagePart } from "./images.ts";

/** The butler: a turn of the one conversation. */
export const BUTLER_MODEL = "homed";
/** The stateless model: the request's own messages to the configured model, nothing of the household's. */
export const UTILITY_MODEL = "homed-utility";

/** What every answer needs to know of its request. */
interface Common {
  /** The model id the answer names: `homed` or `homed-utility`. */
  model: typeof BUTLER_MODEL | typeof UTILITY_MODEL;
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk with `usage` and no choices. */
  includeUsage: boolean;
  responseFormat?: ResponseFormat;
}

/** A turn of the butler: the last user message's words and images. */
export interface TurnRequest extends Common {
  kind: "turn";
  text: string;
  images: ImagePart[];
}

/** A stateless call: the client's messages and tools as the model gets them. */
export interface StatelessRequest extends Common {
  kind: "stateless";
  /** Why: the model asked for, or a task prompt sent to `homed`. */
  why: "model" | "task";
  messages: ChatMessage[];
  tools: ToolSpec[];
}

/** A checked request. */
export type DoorRequest = TurnRequest | StatelessRequest;

/** The prompt of a client's background task (Open WebUI's titles, tags, follow-ups …) begins so. */
const TASK_PREFIX = "### Task:";
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const SCHEMA_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const ROLES = ["system", "developer", "user", "assistant", "tool"];

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Reads a chat completions body; throws an `OpenAiError` (400, naming the field) or an {@link ApiError} (413 for a
 * message over {@link MAX_TEXT_CHARS}).
 *
 * @example
 * ```ts
 * readDoorRequest({ model: "homed", messages: [{ role: "system", content: "x" }, { role: "user", content: "hi" }] });
 * // { kind: "turn", model: "homed", text: "hi", images: [], stream: false, includeUsage: false }
 * readDoorRequest({ model: "homed", messages: [{ role: "user", content: "### Task:\nGenerate a concise title…" }] });
 * // { kind: "stateless", why: "task", model: "homed", messages: [{ role: "user", … }], tools: [], … }
 * ```
 */
export function readDoorRequest(body: unknown): DoorRequest {
  if (!isRecord(body)) {
    throw invalidField("messages", `The body must be a JSON object with messages, got ${shown(body)}`, "bad_request");
  }
  const asked = body.model;
  if (asked !== undefined && typeof asked !== "string") {
    throw invalidField("model", `Field "model" must be a model id such as "homed", got ${shown(asked)}`);
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalidField("messages", 'Field "messages" must be a non-empty list', "bad_request");
  }
  messages.forEach((message, index) => {
    const role = isRecord(message) ? message.role : undefined;
    if (typeof role !== "string" || !ROLES.includes(role)) {
      throw invalidField(
        `messages[${index}].role`,
        `Field "messages[${index}].role" is ${shown(role)}; allowed: ${ROLES.join(", ")}` +
          (role === "function" ? ' (the legacy "function" role: send tool results with role "tool")' : ""),
      );
    }
  });
  const common = readCommon(body);
  if (body.functions !== undefined || body.function_call !== undefined) {
    const field = body.functions !== undefined ? "functions" : "function_call";
    throw invalidField(
      field,
      `Field "${field}" (OpenAI's legacy function calling) is not taken; send "tools" to model "${UTILITY_MODEL}"`,
      "unsupported_parameter",
    );
  }
  const utility = asked === UTILITY_MODEL;
  if (utility || isTask(messages as Json[])) {
    return {
      kind: "stateless",
      why: utility ? "model" : "task",
      ...common,
      model: utility ? UTILITY_MODEL : BUTLER_MODEL,
      messages: (messages as Json[]).map(readMessage),
      tools: readTools(body),
    };
  }
  refuseTools(body);
  return { kind: "turn", ...common, model: BUTLER_MODEL, ...readLastUser(messages as Json[]) };
}

/** stream, stream_options, n and response_format, the same on both ways. */
function readCommon(body: Json): Omit<Common, "model"> {
  const { stream, stream_options: options, n } = body;
  if (stream !== undefined && stream !== null && typeof stream !== "boolean") {
    throw invalidField("stream", `Field "stream" must be true or false, got ${shown(stream)}`);
  }
  let includeUsage = false;
  if (options !== undefined && options !== null) {
    if (stream !== true) {
      throw invalidField("stream_options", 'Field "stream_options" is only allowed with "stream": true');
    }
    if (!isRecord(options)) {
      throw invalidField("stream_options", `Field "stream_options" must be an object, got ${shown(options)}`);
    }
    const include = options.include_usage;
    if (include !== undefined && include !== null && typeof include !== "boolean") {
      throw invalidField(
        "stream_options.include_usage",
        `Field "stream_options.include_usage" must be true or false, got ${shown(include)}`,
      );
    }
    includeUsage = include === true;
  }
  if (n !== undefined && n !== null && n !== 1) {
    throw invalidField(
      "n",
      `Field "n" is ${shown(n)}: homed gives one answer per request (n: 1); send the request again for another`,
      "unsupported_parameter",
    );
  }
  const responseFormat = readResponseFormat(body.response_format);
  return { stream: stream === true, includeUsage, ...(responseFormat ? { responseFormat } : {}) };
}

/** `response_format`: none (absent, null or `text`), `json_object`, or `json_schema` with a name and an object schema. */
export function readResponseFormat(value: unknown): ResponseFormat | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    throw invalidField("response_format", `Field "response_format" must be an object, got ${shown(value)}`);
  }
  if (value.type === "text") return undefined;
  if (value.type === "json_object") return { type: "json_object" };
  if (value.type !== "json_schema") {
    throw invalidField(
      "response_format.type",
      `Field "response_format.type" is ${shown(value.type)}; allowed: text, json_object, json_schema`,
    );
  }
  const spec = value.json_schema;
  if (!isRecord(spec)) {
    throw invalidField(
      "response_format.json_schema",
      `Field "response_format.json_schema" must be an object with "name" and "schema", got ${shown(spec)}`,
    );
  }
  const { name, schema, strict, description } = spec;
  if (typeof name !== "string" || !SCHEMA_NAME.test(name)) {
    throw invalidField(
      "response_format.json_schema.name",
      `Field "response_format.json_schema.name" must be 1 to 64 letters, digits, _ or -, got ${shown(name)}`,
    );
  }
  if (schema !== undefined && !isRecord(schema)) {
    throw invalidField(
      "response_format.json_schema.schema",
      `Field "response_format.json_schema.schema" must be a JSON Schema object, got ${shown(schema)}`,
    );
  }
  if (strict !== undefined && strict !== null && typeof strict !== "boolean") {
    throw invalidField(
      "response_format.json_schema.strict",
      `Field "response_format.json_schema.strict" must be true or false, got ${shown(strict)}`,
    );
  }
  if (description !== undefined && typeof description !== "string") {
    throw invalidField(
      "response_format.json_schema.description",
      `Field "response_format.json_schema.description" must be text, got ${shown(description)}`,
    );
  }
  return {
    type: "json_schema",
    json_schema: {
      name,
      ...(description === undefined ? {} : { description }),
      ...(schema === undefined ? {} : { schema }),
      ...(typeof strict === "boolean" ? { strict } : {}),
    },
  };
}

/** A background task of the client: its last user message, or a system message, begins with `### Task:`. */
function isTask(messages: readonly Json[]): boolean {
  const lastUser = messages.findLast((message) => message.role === "user");
  const starts = (message: Json | undefined) => textOf(message?.content)?.trimStart().startsWith(TASK_PREFIX) === true;
  return starts(lastUser) || messages.some((message) => message.role === "system" && starts(message));
}

/** A message's text: a string, or its text parts joined; undefined for anything else. */
function textOf(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  return content.filter((part) => isRecord(part) && part.type === "text" && typeof part.text === "string")
    .map((part) => part.text as string).join("\n");
}

/** On a turn: the client's tools are refused (homed runs its own), never dropped. */
function refuseTools(body: Json): void {
  const { tools, tool_choice: choice } = body;
  const what = `homed runs its own tools (the house's devices, memory, knowledge, reminders) and does not take ` +
    `a client's; send the request without "tools" to talk to the butler, or to model "${UTILITY_MODEL}", which ` +
    `passes tools to the model and returns its tool_calls to you`;
  if (tools !== undefined && tools !== null && !(Array.isArray(tools) && tools.length === 0)) {
    throw invalidField(
      "tools",
      `Field "tools" is not supported by model "${BUTLER_MODEL}": ${what}`,
      "unsupported_parameter",
    );
  }
  if (choice !== undefined && choice !== null && choice !== "none" && choice !== "auto") {
    throw invalidField(
      "tool_choice",
      `Field "tool_choice" is ${shown(choice)}, which model "${BUTLER_MODEL}" cannot honour: ${what}`,
      "unsupported_parameter",
    );
  }
}

/** On a turn: the last user message's words and images; a tool round trip after it is refused. */
function readLastUser(messages: readonly Json[]): { text: string; images: ImagePart[] } {
  const at = messages.findLastIndex((message) => message.role === "user");
  if (at === -1) throw invalidField("messages", 'Field "messages" has no message with role "user"', "bad_request");
  for (let index = at + 1; index < messages.length; index++) {
    const message = messages[index]!;
    const calls = message.role === "assistant" && Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
    if (message.role === "tool" || calls) {
      throw invalidField(
        `messages[${index}]`,
        `Field "messages[${index}]" is ${message.role === "tool" ? "a tool result" : "an assistant's tool_calls"}: ` +
          `model "${BUTLER_MODEL}" never asks a client to run tools and takes no tool results (it would answer the ` +
          `last user message again); send tool round trips to model "${UTILITY_MODEL}"`,
        "unsupported_parameter",
      );
    }
  }
  const content = messages[at]!.content;
  const field = `messages[${at}].content`;
  const texts: string[] = [];
  const images: ImagePart[] = [];
  if (typeof content === "string") {
    texts.push(content);
  } else if (Array.isArray(content)) {
    content.forEach((part, index) => {
      const where = `${field}[${index}]`;
      if (isRecord(part) && part.type === "text" && typeof part.text === "string") texts.push(part.text);
      else if (isRecord(part) && part.type === "image_url") images.push(readImagePart(part, where, images.length));
      else {
        throw invalidField(
          where,
          `Field "${where}" is a part of type ${shown(isRecord(part) ? part.type : part)}; model "${BUTLER_MODEL}" ` +
            "takes text and image_url parts",
        );
      }
    });
  } else {
    throw invalidField(field, `Field "${field}" must be text or a list of parts, got ${shown(content)}`);
  }
  const text = texts.join("\n");
  if (text.trim() === "" && images.length === 0) {
    throw invalidField(field, "The last user message needs text content (a string, or text parts)", "bad_request");
  }
  if (text.length > MAX_TEXT_CHARS) {
    throw new ApiError(
      413,
      "too_large",
      `The last user message has ${text.length} characters; allowed: at most ${MAX_TEXT_CHARS}`,
    );
  }
  return { text: text.trim() === "" ? "(sent an image)" : text, images };
}

/** One message of a stateless call, as the chat wire takes it (`developer` is a system message). */
function readMessage(message: Json, index: number): ChatMessage {
  const field = `messages[${index}]`;
  const role = message.role as string;
  const content = message.content;
  if (role === "assistant") {
    const calls = readToolCalls(message.tool_calls, `${field}.tool_calls`);
    const text = content === null || content === undefined ? null : statelessText(content, `${field}.content`);
    if (text === null && !calls.length) {
      throw invalidField(
        `${field}.content`,
        `Field "${field}.content" is missing (an assistant message without tool_calls needs text)`,
      );
    }
    return { role: "assistant", content: text, ...(calls.length ? { tool_calls: calls } : {}) };
  }
  const text = statelessText(content, `${field}.content`);
  if (role === "tool") {
    const id = message.tool_call_id;
    if (typeof id !== "string" || id === "") {
      throw invalidField(
        `${field}.tool_call_id`,
        `Field "${field}.tool_call_id" must be the id of the call it answers, got ${shown(id)}`,
      );
    }
    return { role: "tool", tool_call_id: id, content: text };
  }
  return role === "user" ? { role: "user", content: text } : { role: "system", content: text };
}

/** A stateless message's text: a string or text parts (`homed-utility` takes no images or audio). */
function statelessText(content: unknown, field: string): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) {
    throw invalidField(field, `Field "${field}" must be text or a list of text parts, got ${shown(content)}`);
  }
  content.forEach((part, index) => {
    if (!isRecord(part) || part.type !== "text" || typeof part.text !== "string") {
      throw invalidField(
        `${field}[${index}]`,
        `Field "${field}[${index}]" is a part of type ${shown(isRecord(part) ? part.type : part)}; a stateless call ` +
          `(model "${UTILITY_MODEL}" or a "### Task:" prompt) takes text parts only — send images to model "${BUTLER_MODEL}"`,
      );
    }
  });
  return textOf(content)!;
}

function readToolCalls(value: unknown, field: string): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidField(field, `Field "${field}" must be a list, got ${shown(value)}`);
  return value.map((call, index) => {
    const where = `${field}[${index}]`;
    const fn = isRecord(call) ? call.function : undefined;
    if (
      !isRecord(call) || typeof call.id !== "string" || (call.type !== undefined && call.type !== "function") ||
      !isRecord(fn) || typeof fn.name !== "string" || typeof fn.arguments !== "string"
    ) {
      throw invalidField(
        where,
        `Field "${where}" must be {"id", "type": "function", "function": {"name", "arguments"}}, got ${shown(call)}`,
      );
    }
    return { id: call.id, type: "function", function: { name: fn.name, arguments: fn.arguments } };
  });
}

/** A stateless call's tools (functions only), and `tool_choice`: `auto` (the default), or `none` (no tools sent). */
function readTools(body: Json): ToolSpec[] {
  const { tools, tool_choice: choice } = body;
  if (choice !== undefined && choice !== null && choice !== "auto" && choice !== "none") {
    throw invalidField(
      "tool_choice",
      `Field "tool_choice" is ${shown(choice)}; homed passes "auto" (the default) and "none" (no tools sent) on`,
      "unsupported_parameter",
    );
  }
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw invalidField("tools", `Field "tools" must be a list, got ${shown(tools)}`);
  const specs = tools.map((tool, index): ToolSpec => {
    const field = `tools[${index}]`;
    const fn = isRecord(tool) ? tool.function : undefined;
    if (!isRecord(tool) || tool.type !== "function" || !isRecord(fn)) {
      throw invalidField(field, `Field "${field}" must be {"type": "function", "function": {…}}, got ${shown(tool)}`);
    }
    const { name, description, parameters } = fn;
    if (typeof name !== "string" || !TOOL_NAME.test(name)) {
      throw invalidField(
        `${field}.function.name`,
        `Field "${field}.function.name" must be 1 to 64 letters, digits, _ or -, got ${shown(name)}`,
      );
    }
    if (description !== undefined && typeof description !== "string") {
      throw invalidField(
        `${field}.function.description`,
        `Field "${field}.function.description" must be text, got ${shown(description)}`,
      );
    }
    if (parameters !== undefined && !isRecord(parameters)) {
      throw invalidField(
        `${field}.function.parameters`,
        `Field "${field}.function.parameters" must be a JSON Schema object, got ${shown(parameters)}`,
      );
    }
    return { name, description: description ?? "", parameters: parameters ?? { type: "object", properties: {} } };
  });
  return choice === "none" ? [] : specs;
}

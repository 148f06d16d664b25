// The API client: the token (localStorage only), JSON requests, errors as the API words them, media as blob URLs.
import { t } from "./i18n.js";

const TOKEN_KEY = "homed.token";

/** The stored token, or null when nobody is logged in. */
export const getToken = () => localStorage.getItem(TOKEN_KEY);
export const setToken = (token) => localStorage.setItem(TOKEN_KEY, token);
export const clearToken = () => localStorage.removeItem(TOKEN_KEY);

/** An error answer: its HTTP status, the API's code and message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

let unauthorized = () => {};
/** What to do on a 401 (back to the login page). */
export const onUnauthorized = (handler) => {
  unauthorized = handler;
};

/**
 * A request to the API: `body` is sent as JSON; resolves to the parsed JSON (or the Response with `raw`). Options:
 * `method`, `body`, `signal`, `raw`, `token` (instead of the stored one), `quiet` (a 401 does not log out).
 */
export async function request(path, options = {}) {
  const { method = "GET", body, signal, raw = false, quiet = false } = options;
  const token = options.token ?? getToken();
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  // The API takes only JSON bodies on anything but GET (its guard against cross-site form posts).
  if (method !== "GET") headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      signal,
      cache: "no-store",
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (error) {
    if (error?.name === "AbortError") throw error;
    throw new ApiError(0, "network", t("networkError", { message: error?.message ?? String(error) }));
  }
  if (!response.ok) {
    const error = await errorOf(response);
    if (response.status === 401 && !quiet) unauthorized(error);
    throw error;
  }
  if (raw) return response;
  if (response.status === 204) return null;
  return await response.json();
}

async function errorOf(response) {
  let code = `http_${response.status}`;
  // Not an answer of homed's API (a proxy's page, say): the console words it; the API's own messages stay as sent.
  let message = t("httpError", { status: response.status, text: response.statusText || "" }).trim();
  try {
    const body = await response.json();
    if (body?.error?.message) {
      code = String(body.error.code ?? code);
      message = String(body.error.message);
    }
  } catch { /* not JSON: the status line is the message */ }
  return new ApiError(response.status, code, message);
}

/** Shorthands: get, post, put, del. */
export const api = {
  get: (path, options) => request(path, options),
  post: (path, body = {}, options) => request(path, { ...options, method: "POST", body }),
  put: (path, body, options) => request(path, { ...options, method: "PUT", body }),
  del: (path, options) => request(path, { ...options, method: "DELETE" }),
};

/** A path with a query: `query("/api/x", { q: "a b", k: 5 })` → "/api/x?q=a+b&k=5" (empty values left out). */
export function query(path, params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/** A path segment, escaped. */
export const seg = (value) => encodeURIComponent(String(value));

const media = new Map();

/** A blob URL for a cached image or voice note (`GET /api/media/<id>` with the token), fetched once. */
export function mediaUrl(id) {
  let url = media.get(id);
  if (!url) {
    url = request(`/api/media/${seg(id)}`, { raw: true }).then(async (response) =>
      URL.createObjectURL(await response.blob())
    );
    url.catch(() => media.delete(id));
    media.set(id, url);
  }
  return url;
}

/** Lets go of every media blob (at logout). */
export function forgetMedia() {
  for (const url of media.values()) url.then((href) => URL.revokeObjectURL(href), () => {});
  media.clear();
}

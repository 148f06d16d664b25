// The banner above every page while the house runs without its model: which providers are down or over budget, and
// that local commands still work. Kept live by asking GET /api/status every so often while the page is visible.
import { api } from "./api.js";
import { $, h, pollWhileVisible } from "./dom.js";
import { t } from "./i18n.js";

/** How often the providers' state is asked for. */
const POLL_MS = 15_000;

let polling = null;
/** The last `llm` of /api/status, to show again in another language. */
let lastLlm = null;

/** The banner's text for `llm` of /api/status, or "" when the primary answers. */
export function bannerText(llm) {
  const providers = llm?.providers ?? [];
  const primary = providers.find((provider) => provider.role === "primary");
  if (!primary || primary.state === "up") return "";
  const up = providers.filter((provider) => provider.state === "up");
  const why = (provider) =>
    provider.state === "over_budget" ? t("modelOverBudget") : (provider.last_error ?? t("modelDown"));
  if (up.length) return t("modelOnFallback", { primary: primary.name, why: why(primary), fallback: up[0].name });
  return t("modelNone", { reasons: providers.map((provider) => `${provider.name}: ${why(provider)}`).join("; ") });
}

/** Shows what `lastLlm` says (the language may have changed since). */
export function renderModelBanner() {
  const banner = $("#model-banner");
  if (!banner || !polling) return;
  const text = bannerText(lastLlm);
  banner.replaceChildren(text ? h("p", {}, text) : "");
  banner.hidden = text === "";
  banner.classList.toggle("severe", !(lastLlm?.providers ?? []).some((provider) => provider.state === "up"));
}

async function refresh() {
  try {
    lastLlm = (await api.get("/api/status")).llm;
  } catch {
    // The next round tries again; a 401 logs out (api.js).
    return;
  }
  renderModelBanner();
}

/** Starts the banner for a signed-in household member or owner (a guest sees no status). */
export function startModelBanner(who) {
  stopModelBanner();
  if (!who || who.trust === "guest") return;
  polling = pollWhileVisible(refresh, POLL_MS);
}

export function stopModelBanner() {
  if (!polling) return;
  polling();
  polling = null;
  lastLlm = null;
  const banner = $("#model-banner");
  if (banner) banner.hidden = true;
}

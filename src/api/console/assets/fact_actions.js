// Correcting and forgetting a memory fact, as the Memory and People pages both offer them (owner only): ask, send,
// then `reload` what the page shows.
import { api, seg } from "./api.js";
import { h, load } from "./dom.js";
import { t } from "./i18n.js";

/** Asks for the fact's new value and corrects it; nothing is sent when the answer is empty or the same. */
function correctFact(root, fact, factStatus, reload) {
  const value = globalThis.prompt(t("correctPrompt", { predicate: fact.predicate, object: fact.object }), fact.object);
  if (value === null || value.trim() === "" || value === fact.object) return;
  load(root, factStatus, async () => {
    await api.post(`/api/memory/facts/${seg(fact.id)}/correct`, { object: value.trim() });
    await reload();
  });
}

/** Asks to confirm, naming the fact as `label`, and forgets it. */
function forgetFact(root, fact, factStatus, label, reload) {
  if (!globalThis.confirm(t("forgetFactConfirm", { fact: label }))) return;
  load(root, factStatus, async () => {
    await api.del(`/api/memory/facts/${seg(fact.id)}`);
    await reload();
  });
}

/** The owner's two buttons on a fact: correct it, or forget it (confirmed, naming it as `label`). */
export function factButtons(root, fact, factStatus, label, reload) {
  return h(
    "div",
    { class: "row" },
    h("button", {
      type: "button",
      class: "fact-correct secondary",
      onclick: () => correctFact(root, fact, factStatus, reload),
    }, t("correct")),
    h("button", {
      type: "button",
      class: "fact-forget danger",
      onclick: () => forgetFact(root, fact, factStatus, label, reload),
    }, t("forget")),
  );
}

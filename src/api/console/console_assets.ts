/**
 * The web console's files, embedded: imported as text, they travel inside the compiled binary and the bundle, and
 * homed needs no right to read its own source folder. A new file in `assets/` is added here too (a test checks).
 *
 * @module
 */

import apiJs from "./assets/api.js" with { type: "text" };
import consoleCss from "./assets/console.css" with { type: "text" };
import confirmationsJs from "./assets/confirmations.js" with { type: "text" };
import consoleJs from "./assets/console.js" with { type: "text" };
import domJs from "./assets/dom.js" with { type: "text" };
import factActionsJs from "./assets/fact_actions.js" with { type: "text" };
import i18nJs from "./assets/i18n.js" with { type: "text" };
import indexHtml from "./assets/index.html" with { type: "text" };
import labelsJs from "./assets/labels.js" with { type: "text" };
import markdownJs from "./assets/markdown.js" with { type: "text" };
import modelBannerJs from "./assets/model_banner.js" with { type: "text" };
import pagesActionsJs from "./assets/pages/actions.js" with { type: "text" };
import pagesChatJs from "./assets/pages/chat.js" with { type: "text" };
import pagesKnowledgeJs from "./assets/pages/knowledge.js" with { type: "text" };
import pagesMemoryJs from "./assets/pages/memory.js" with { type: "text" };
import pagesPeopleJs from "./assets/pages/people.js" with { type: "text" };
import pagesPluginsJs from "./assets/pages/plugins.js" with { type: "text" };
import pagesSchedulesJs from "./assets/pages/schedules.js" with { type: "text" };
import pagesStatusJs from "./assets/pages/status.js" with { type: "text" };
import pagesSystemJs from "./assets/pages/system.js" with { type: "text" };
import pagesTurnsJs from "./assets/pages/turns.js" with { type: "text" };
import picturesJs from "./assets/pictures.js" with { type: "text" };
import sseJs from "./assets/sse.js" with { type: "text" };
import statusProblemsJs from "./assets/status_problems.js" with { type: "text" };
import weixinLoginJs from "./assets/weixin_login.js" with { type: "text" };

/** Each file by its path under `assets/`. */
export const CONSOLE_FILES: Readonly<Record<string, string>> = {
  "api.js": apiJs,
  "console.css": consoleCss,
  "confirmations.js": confirmationsJs,
  "console.js": consoleJs,
  "dom.js": domJs,
  "fact_actions.js": factActionsJs,
  "i18n.js": i18nJs,
  "index.html": indexHtml,
  "labels.js": labelsJs,
  "markdown.js": markdownJs,
  "model_banner.js": modelBannerJs,
  "pages/actions.js": pagesActionsJs,
  "pages/chat.js": pagesChatJs,
  "pages/knowledge.js": pagesKnowledgeJs,
  "pages/memory.js": pagesMemoryJs,
  "pages/people.js": pagesPeopleJs,
  "pages/plugins.js": pagesPluginsJs,
  "pages/schedules.js": pagesSchedulesJs,
  "pages/status.js": pagesStatusJs,
  "pages/system.js": pagesSystemJs,
  "pages/turns.js": pagesTurnsJs,
  "pictures.js": picturesJs,
  "sse.js": sseJs,
  "status_problems.js": statusProblemsJs,
  "weixin_login.js": weixinLoginJs,
};

/**
 * Who someone is to homed: a name and a trust level. The API's token check gives one per request; chat channels give
 * one per sender (allow lists → trust).
 *
 * @module
 */

import type { Trust } from "./trust.ts";

/** An authenticated caller. */
export interface Identity {
  name: string;
  trust: Trust;
}

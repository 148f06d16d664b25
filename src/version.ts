/** homed's version, shown by `homed --version` and `/api/status`. */
export const VERSION = "0.1.0";

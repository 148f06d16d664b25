/**
 * The two ways a talk with Home Assistant fails: a command HA answered with an error or never answered
 * ({@link HaCommandError}, carrying HA's own code so a caller can tell a missing service from a dropped socket), and a
 * token HA refused ({@link HaAuthError}, which the reconnect loop waits out far longer than any other failure). Apart
 * from the connection so the socket's session and the device's cache name them without importing the connection.
 *
 * @module
 */

/** A command HA answered with an error, or one that got no answer; `code` is HA's (`not_found`…) or homed's own. */
export class HaCommandError extends Error {
  /**
   * HA's error code (`not_found`, `invalid_format`, `unknown_command`, `home_assistant_error`, `unauthorized`…), or
   * homed's own: `timeout`, `not_connected`, `connection_lost`.
   */
  readonly code: string;
  /** HA's own message (or homed's, for the local codes). */
  readonly haMessage: string;
  /** The command's type. */
  readonly command: string;

  /**
   * @example
   * ```ts
   * const error = new HaCommandError("call_service", "not_found", "Service light.dance not found.");
   * error.message; // "Home Assistant answered call_service with not_found: Service light.dance not found."
   * ```
   */
  constructor(command: string, code: string, haMessage: string) {
    const local = code === "timeout" || code === "not_connected" || code === "connection_lost";
    super(local ? haMessage : `Home Assistant answered ${command} with ${code}: ${haMessage}`);
    this.name = "HaCommandError";
    this.code = code;
    this.haMessage = haMessage;
    this.command = command;
  }
}

/** HA refused the token (`auth_invalid`). */
export class HaAuthError extends Error {
  /**
   * @example
   * ```ts
   * throw new HaAuthError("Home Assistant refused smart_home.home_assistant.token: Invalid access token or password");
   * ```
   */
  constructor(message: string) {
    super(message);
    this.name = "HaAuthError";
  }
}

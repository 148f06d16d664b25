/**
 * Splitting a long reply for a chat app that limits a message's length (QQ: `onebot.split_at`): at paragraph, then
 * line, then sentence breaks (Chinese and Latin), and only as a last resort in the middle of a run. Shared by chat
 * channels.
 *
 * @module
 */

/**
 * Splits text into pieces of at most `size` characters, preferring paragraph, then line, then sentence breaks.
 *
 * @example
 * ```ts
 * splitText("a\n\nb", 2); // ["a", "b"]
 * ```
 */
export function splitText(text: string, size: number): string[] {
  const pieces: string[] = [];
  let rest = text.trim();
  while (rest.length > size) {
    const window = rest.slice(0, size);
    let cut = Math.max(window.lastIndexOf("\n\n"), window.lastIndexOf("\n"));
    if (cut < size / 2) {
      cut = Math.max(
        cut,
        ...["。", "！", "？", ". ", "! ", "? "].map((m) => window.lastIndexOf(m) + m.length),
      );
    }
    if (cut < size / 2) cut = size;
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

/**
 * A QR code of a short text (a login link) as a terminal can show it and as an SVG picture: the code's modules come
 * from `npm:uqr` (no dependencies); the drawing is ours — two rows of modules per terminal line in half blocks, and
 * the SVG as one path of runs, so a code of a 100-character link is a few KB.
 *
 * @module
 */

import { encode } from "uqr";

/** Modules of light margin around the code (the standard asks for 4; 2 reads well on a screen). */
const QUIET = 2;

/** The code's modules, `true` dark, with the quiet margin around them. */
function modules(text: string): boolean[][] {
  // Error correction M: a phone reads a code off a screen with glare or a crease of the terminal font.
  const { data } = encode(text, { ecc: "M", border: 0 });
  const size = data.length + 2 * QUIET;
  return Array.from({ length: size }, (_, y) =>
    Array.from({ length: size }, (_, x) => {
      const row = data[y - QUIET];
      return row !== undefined && row[x - QUIET] === true;
    }));
}

/**
 * The code as lines of half blocks, two module rows per line: light modules are drawn, so it reads on a dark
 * terminal; with `colors` each line also sets white on black itself (ANSI), so it reads on a light one too.
 *
 * @example
 * ```ts
 * const lines = qrTerminal("https://liteapp.weixin.qq.com/q/abc", { colors: Deno.stdout.isTerminal() });
 * console.log(lines.join("\n"));
 * ```
 */
export function qrTerminal(text: string, options: { colors?: boolean } = {}): string[] {
  const grid = modules(text);
  const lines: string[] = [];
  for (let y = 0; y < grid.length; y += 2) {
    let line = "";
    for (let x = 0; x < grid.length; x++) {
      const top = !grid[y]![x];
      const bottom = !(grid[y + 1]?.[x] ?? false);
      line += top && bottom ? "█" : top ? "▀" : bottom ? "▄" : " ";
    }
    lines.push(options.colors ? `\x1b[97;40m${line}\x1b[0m` : line);
  }
  return lines;
}

/**
 * The code as an SVG document (black on white, one path), sized by its `viewBox` in modules: show it in an `<img>`.
 *
 * @example
 * ```ts
 * const svg = qrSvg("https://liteapp.weixin.qq.com/q/abc");
 * svg.startsWith("<svg"); // true
 * ```
 */
export function qrSvg(text: string): string {
  const grid = modules(text);
  const size = grid.length;
  let path = "";
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      if (!grid[y]![x]) continue;
      let run = 1;
      while (x + run < size && grid[y]![x + run]) run++;
      path += `M${x} ${y}h${run}v1h-${run}z`;
      x += run - 1;
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" shape-rendering="crispEdges">` +
    `<rect width="${size}" height="${size}" fill="#fff"/><path d="${path}" fill="#000"/></svg>`;
}

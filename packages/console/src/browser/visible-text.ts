/**
 * Names as lists show them. A name may hold bidirectional formatting characters (the right-to-left
 * override U+202E and its kin), which reorder the text around them on screen: `report<U+202E>gpj.exe`
 * displays as `reportexe.jpg`. Lists show each such character as its `\u202E` escape instead, so
 * what is seen is what is there; the name itself (stored, inserted, run) never changes. Pure.
 */

/** LRM, RLM, ALM, the embeddings and overrides (U+202A–U+202E) and the isolates (U+2066–U+2069). */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** `name` with each bidirectional formatting character written as its `\uXXXX` escape. */
export function visibleName(name: string): string {
  return name.replace(
    BIDI_CONTROLS,
    (character) => `\\u${character.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
  );
}

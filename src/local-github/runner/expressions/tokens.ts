// The tokens of an expression: string and number literals, identifiers, punctuation.
import { ExpressionError } from "./values.js";

export type Token =
  | { kind: "string"; value: string }
  | { kind: "number"; value: number }
  | { kind: "ident"; value: string }
  | { kind: "punct"; value: string }
  | { kind: "end" };

const PUNCT = ["==", "!=", "&&", "||", "<=", ">=", "!", "(", ")", "[", "]", ".", ",", "<", ">", "*"];

export function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "'") {
      let value = "";
      i++;
      for (;;) {
        if (i >= src.length) throw new ExpressionError(src, "unterminated string literal");
        if (src[i] === "'") {
          if (src[i + 1] === "'") {
            value += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += src[i];
        i++;
      }
      tokens.push({ kind: "string", value });
      continue;
    }
    const num = /^(?:0x[0-9a-fA-F]+|-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/.exec(src.slice(i));
    if (num && (c !== "-" || /\d|\./.test(src[i + 1] ?? ""))) {
      tokens.push({ kind: "number", value: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(src.slice(i));
    if (ident) {
      tokens.push({ kind: "ident", value: ident[0] });
      i += ident[0].length;
      continue;
    }
    const p = PUNCT.find((op) => src.startsWith(op, i));
    if (p) {
      tokens.push({ kind: "punct", value: p });
      i += p.length;
      continue;
    }
    throw new ExpressionError(src, `unexpected character '${c}'`);
  }
  tokens.push({ kind: "end" });
  return tokens;
}

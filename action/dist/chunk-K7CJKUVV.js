import { createRequire as __forgeCreateRequire } from 'node:module';
const require = __forgeCreateRequire(import.meta.url);
import {
  ADAPTERS,
  AGENT_KINDS,
  ALL_EXIT_CODES,
  ID_PATTERN,
  MODEL_ID,
  MODEL_ROLES,
  RESUME_CLASSES,
  TIER_NAMES,
  agentRuleOf,
  agentTypeSchema,
  dispatchAgentSchema,
  external_exports,
  kindAgentSchema,
  modelSpecSchema,
  problem,
  require_dist,
  retryPolicySchema,
  taskBudgetSchema,
  taskRetryPolicySchema,
  taskStatusSchema,
  zodProblems
} from "./chunk-SL7VK6UQ.js";
import {
  __commonJS,
  __toESM
} from "./chunk-54WUDIML.js";

// node_modules/picomatch/lib/constants.js
var require_constants = __commonJS({
  "node_modules/picomatch/lib/constants.js"(exports, module) {
    "use strict";
    var WIN_SLASH = "\\\\/";
    var WIN_NO_SLASH = `[^${WIN_SLASH}]`;
    var DEFAULT_MAX_EXTGLOB_RECURSION = 0;
    var DOT_LITERAL = "\\.";
    var PLUS_LITERAL = "\\+";
    var QMARK_LITERAL = "\\?";
    var SLASH_LITERAL = "\\/";
    var ONE_CHAR = "(?=.)";
    var QMARK = "[^/]";
    var END_ANCHOR = `(?:${SLASH_LITERAL}|$)`;
    var START_ANCHOR = `(?:^|${SLASH_LITERAL})`;
    var DOTS_SLASH = `${DOT_LITERAL}{1,2}${END_ANCHOR}`;
    var NO_DOT = `(?!${DOT_LITERAL})`;
    var NO_DOTS = `(?!${START_ANCHOR}${DOTS_SLASH})`;
    var NO_DOT_SLASH = `(?!${DOT_LITERAL}{0,1}${END_ANCHOR})`;
    var NO_DOTS_SLASH = `(?!${DOTS_SLASH})`;
    var QMARK_NO_DOT = `[^.${SLASH_LITERAL}]`;
    var STAR = `${QMARK}*?`;
    var SEP = "/";
    var POSIX_CHARS = {
      DOT_LITERAL,
      PLUS_LITERAL,
      QMARK_LITERAL,
      SLASH_LITERAL,
      ONE_CHAR,
      QMARK,
      END_ANCHOR,
      DOTS_SLASH,
      NO_DOT,
      NO_DOTS,
      NO_DOT_SLASH,
      NO_DOTS_SLASH,
      QMARK_NO_DOT,
      STAR,
      START_ANCHOR,
      SEP
    };
    var WINDOWS_CHARS = {
      ...POSIX_CHARS,
      SLASH_LITERAL: `[${WIN_SLASH}]`,
      QMARK: WIN_NO_SLASH,
      STAR: `${WIN_NO_SLASH}*?`,
      DOTS_SLASH: `${DOT_LITERAL}{1,2}(?:[${WIN_SLASH}]|$)`,
      NO_DOT: `(?!${DOT_LITERAL})`,
      NO_DOTS: `(?!(?:^|[${WIN_SLASH}])${DOT_LITERAL}{1,2}(?:[${WIN_SLASH}]|$))`,
      NO_DOT_SLASH: `(?!${DOT_LITERAL}{0,1}(?:[${WIN_SLASH}]|$))`,
      NO_DOTS_SLASH: `(?!${DOT_LITERAL}{1,2}(?:[${WIN_SLASH}]|$))`,
      QMARK_NO_DOT: `[^.${WIN_SLASH}]`,
      START_ANCHOR: `(?:^|[${WIN_SLASH}])`,
      END_ANCHOR: `(?:[${WIN_SLASH}]|$)`,
      SEP: "\\"
    };
    var POSIX_REGEX_SOURCE = {
      __proto__: null,
      alnum: "a-zA-Z0-9",
      alpha: "a-zA-Z",
      ascii: "\\x00-\\x7F",
      blank: " \\t",
      cntrl: "\\x00-\\x1F\\x7F",
      digit: "0-9",
      graph: "\\x21-\\x7E",
      lower: "a-z",
      print: "\\x20-\\x7E ",
      punct: "\\-!\"#$%&'()\\*+,./:;<=>?@[\\]^_`{|}~",
      space: " \\t\\r\\n\\v\\f",
      upper: "A-Z",
      word: "A-Za-z0-9_",
      xdigit: "A-Fa-f0-9"
    };
    module.exports = {
      DEFAULT_MAX_EXTGLOB_RECURSION,
      MAX_LENGTH: 1024 * 64,
      POSIX_REGEX_SOURCE,
      // regular expressions
      REGEX_BACKSLASH: /\\(?![*+?^${}(|)[\]])/g,
      REGEX_NON_SPECIAL_CHARS: /^[^@![\].,$*+?^{}()|\\/]+/,
      REGEX_SPECIAL_CHARS: /[-*+?.^${}(|)[\]]/,
      REGEX_SPECIAL_CHARS_BACKREF: /(\\?)((\W)(\3*))/g,
      REGEX_SPECIAL_CHARS_GLOBAL: /([-*+?.^${}(|)[\]])/g,
      REGEX_REMOVE_BACKSLASH: /(?:\[.*?[^\\]\]|\\(?=.))/g,
      // Replace globs with equivalent patterns to reduce parsing time.
      REPLACEMENTS: {
        __proto__: null,
        "***": "*",
        "**/**": "**",
        "**/**/**": "**"
      },
      // Digits
      CHAR_0: 48,
      /* 0 */
      CHAR_9: 57,
      /* 9 */
      // Alphabet chars.
      CHAR_UPPERCASE_A: 65,
      /* A */
      CHAR_LOWERCASE_A: 97,
      /* a */
      CHAR_UPPERCASE_Z: 90,
      /* Z */
      CHAR_LOWERCASE_Z: 122,
      /* z */
      CHAR_LEFT_PARENTHESES: 40,
      /* ( */
      CHAR_RIGHT_PARENTHESES: 41,
      /* ) */
      CHAR_ASTERISK: 42,
      /* * */
      // Non-alphabetic chars.
      CHAR_AMPERSAND: 38,
      /* & */
      CHAR_AT: 64,
      /* @ */
      CHAR_BACKWARD_SLASH: 92,
      /* \ */
      CHAR_CARRIAGE_RETURN: 13,
      /* \r */
      CHAR_CIRCUMFLEX_ACCENT: 94,
      /* ^ */
      CHAR_COLON: 58,
      /* : */
      CHAR_COMMA: 44,
      /* , */
      CHAR_DOT: 46,
      /* . */
      CHAR_DOUBLE_QUOTE: 34,
      /* " */
      CHAR_EQUAL: 61,
      /* = */
      CHAR_EXCLAMATION_MARK: 33,
      /* ! */
      CHAR_FORM_FEED: 12,
      /* \f */
      CHAR_FORWARD_SLASH: 47,
      /* / */
      CHAR_GRAVE_ACCENT: 96,
      /* ` */
      CHAR_HASH: 35,
      /* # */
      CHAR_HYPHEN_MINUS: 45,
      /* - */
      CHAR_LEFT_ANGLE_BRACKET: 60,
      /* < */
      CHAR_LEFT_CURLY_BRACE: 123,
      /* { */
      CHAR_LEFT_SQUARE_BRACKET: 91,
      /* [ */
      CHAR_LINE_FEED: 10,
      /* \n */
      CHAR_NO_BREAK_SPACE: 160,
      /* \u00A0 */
      CHAR_PERCENT: 37,
      /* % */
      CHAR_PLUS: 43,
      /* + */
      CHAR_QUESTION_MARK: 63,
      /* ? */
      CHAR_RIGHT_ANGLE_BRACKET: 62,
      /* > */
      CHAR_RIGHT_CURLY_BRACE: 125,
      /* } */
      CHAR_RIGHT_SQUARE_BRACKET: 93,
      /* ] */
      CHAR_SEMICOLON: 59,
      /* ; */
      CHAR_SINGLE_QUOTE: 39,
      /* ' */
      CHAR_SPACE: 32,
      /*   */
      CHAR_TAB: 9,
      /* \t */
      CHAR_UNDERSCORE: 95,
      /* _ */
      CHAR_VERTICAL_LINE: 124,
      /* | */
      CHAR_ZERO_WIDTH_NOBREAK_SPACE: 65279,
      /* \uFEFF */
      /**
       * Create EXTGLOB_CHARS
       */
      extglobChars(chars) {
        return {
          "!": { type: "negate", open: "(?:(?!(?:", close: `))${chars.STAR})` },
          "?": { type: "qmark", open: "(?:", close: ")?" },
          "+": { type: "plus", open: "(?:", close: ")+" },
          "*": { type: "star", open: "(?:", close: ")*" },
          "@": { type: "at", open: "(?:", close: ")" }
        };
      },
      /**
       * Create GLOB_CHARS
       */
      globChars(win32) {
        return win32 === true ? WINDOWS_CHARS : POSIX_CHARS;
      }
    };
  }
});

// node_modules/picomatch/lib/utils.js
var require_utils = __commonJS({
  "node_modules/picomatch/lib/utils.js"(exports) {
    "use strict";
    var {
      REGEX_BACKSLASH,
      REGEX_REMOVE_BACKSLASH,
      REGEX_SPECIAL_CHARS,
      REGEX_SPECIAL_CHARS_GLOBAL
    } = require_constants();
    exports.isObject = (val) => val !== null && typeof val === "object" && !Array.isArray(val);
    exports.hasRegexChars = (str) => REGEX_SPECIAL_CHARS.test(str);
    exports.isRegexChar = (str) => str.length === 1 && exports.hasRegexChars(str);
    exports.escapeRegex = (str) => str.replace(REGEX_SPECIAL_CHARS_GLOBAL, "\\$1");
    exports.toPosixSlashes = (str) => str.replace(REGEX_BACKSLASH, "/");
    exports.isWindows = () => {
      if (typeof navigator !== "undefined" && navigator.platform) {
        const platform = navigator.platform.toLowerCase();
        return platform === "win32" || platform === "windows";
      }
      if (typeof process !== "undefined" && process.platform) {
        return process.platform === "win32";
      }
      return false;
    };
    exports.removeBackslashes = (str) => {
      return str.replace(REGEX_REMOVE_BACKSLASH, (match) => {
        return match === "\\" ? "" : match;
      });
    };
    exports.escapeLast = (input, char, lastIdx) => {
      const idx = input.lastIndexOf(char, lastIdx);
      if (idx === -1) return input;
      if (input[idx - 1] === "\\") return exports.escapeLast(input, char, idx - 1);
      return `${input.slice(0, idx)}\\${input.slice(idx)}`;
    };
    exports.removePrefix = (input, state = {}) => {
      let output = input;
      if (output.startsWith("./")) {
        output = output.slice(2);
        state.prefix = "./";
      }
      return output;
    };
    exports.wrapOutput = (input, state = {}, options = {}) => {
      const prepend = options.contains ? "" : "^";
      const append = options.contains ? "" : "$";
      let output = `${prepend}(?:${input})${append}`;
      if (state.negated === true) {
        output = `(?:^(?!${output}).*$)`;
      }
      return output;
    };
    exports.basename = (path, { windows } = {}) => {
      const segs = path.split(windows ? /[\\/]/ : "/");
      const last = segs[segs.length - 1];
      if (last === "") {
        return segs[segs.length - 2];
      }
      return last;
    };
  }
});

// node_modules/picomatch/lib/scan.js
var require_scan = __commonJS({
  "node_modules/picomatch/lib/scan.js"(exports, module) {
    "use strict";
    var utils = require_utils();
    var {
      CHAR_ASTERISK,
      /* * */
      CHAR_AT,
      /* @ */
      CHAR_BACKWARD_SLASH,
      /* \ */
      CHAR_COMMA,
      /* , */
      CHAR_DOT,
      /* . */
      CHAR_EXCLAMATION_MARK,
      /* ! */
      CHAR_FORWARD_SLASH,
      /* / */
      CHAR_LEFT_CURLY_BRACE,
      /* { */
      CHAR_LEFT_PARENTHESES,
      /* ( */
      CHAR_LEFT_SQUARE_BRACKET,
      /* [ */
      CHAR_PLUS,
      /* + */
      CHAR_QUESTION_MARK,
      /* ? */
      CHAR_RIGHT_CURLY_BRACE,
      /* } */
      CHAR_RIGHT_PARENTHESES,
      /* ) */
      CHAR_RIGHT_SQUARE_BRACKET
      /* ] */
    } = require_constants();
    var isPathSeparator = (code) => {
      return code === CHAR_FORWARD_SLASH || code === CHAR_BACKWARD_SLASH;
    };
    var depth = (token) => {
      if (token.isPrefix !== true) {
        token.depth = token.isGlobstar ? Infinity : 1;
      }
    };
    var scan = (input, options) => {
      const opts = options || {};
      const length = input.length - 1;
      const scanToEnd = opts.parts === true || opts.tokens === true || opts.scanToEnd === true;
      const slashes = [];
      const tokens = [];
      const parts = [];
      let str = input;
      let index = -1;
      let start = 0;
      let lastIndex = 0;
      let isBrace = false;
      let isBracket = false;
      let isGlob = false;
      let isExtglob = false;
      let isGlobstar = false;
      let braceEscaped = false;
      let backslashes = false;
      let negated = false;
      let negatedExtglob = false;
      let finished = false;
      let braces = 0;
      let prev;
      let code;
      let token = { value: "", depth: 0, isGlob: false };
      const eos = () => index >= length;
      const peek = () => str.charCodeAt(index + 1);
      const advance = () => {
        prev = code;
        return str.charCodeAt(++index);
      };
      while (index < length) {
        code = advance();
        let next;
        if (code === CHAR_BACKWARD_SLASH) {
          backslashes = token.backslashes = true;
          code = advance();
          if (code === CHAR_LEFT_CURLY_BRACE) {
            braceEscaped = true;
          }
          continue;
        }
        if (braceEscaped === true || code === CHAR_LEFT_CURLY_BRACE) {
          braces++;
          while (eos() !== true && (code = advance())) {
            if (code === CHAR_BACKWARD_SLASH) {
              backslashes = token.backslashes = true;
              advance();
              continue;
            }
            if (code === CHAR_LEFT_CURLY_BRACE) {
              braces++;
              continue;
            }
            if (braceEscaped !== true && code === CHAR_DOT && (code = advance()) === CHAR_DOT) {
              isBrace = token.isBrace = true;
              isGlob = token.isGlob = true;
              finished = true;
              if (scanToEnd === true) {
                continue;
              }
              break;
            }
            if (braceEscaped !== true && code === CHAR_COMMA) {
              isBrace = token.isBrace = true;
              isGlob = token.isGlob = true;
              finished = true;
              if (scanToEnd === true) {
                continue;
              }
              break;
            }
            if (code === CHAR_RIGHT_CURLY_BRACE) {
              braces--;
              if (braces === 0) {
                braceEscaped = false;
                isBrace = token.isBrace = true;
                finished = true;
                break;
              }
            }
          }
          if (scanToEnd === true) {
            continue;
          }
          break;
        }
        if (code === CHAR_FORWARD_SLASH) {
          slashes.push(index);
          tokens.push(token);
          token = { value: "", depth: 0, isGlob: false };
          if (finished === true) continue;
          if (prev === CHAR_DOT && index === start + 1) {
            start += 2;
            continue;
          }
          lastIndex = index + 1;
          continue;
        }
        if (opts.noext !== true) {
          const isExtglobChar = code === CHAR_PLUS || code === CHAR_AT || code === CHAR_ASTERISK || code === CHAR_QUESTION_MARK || code === CHAR_EXCLAMATION_MARK;
          if (isExtglobChar === true && peek() === CHAR_LEFT_PARENTHESES) {
            isGlob = token.isGlob = true;
            isExtglob = token.isExtglob = true;
            finished = true;
            if (code === CHAR_EXCLAMATION_MARK && index === start) {
              negatedExtglob = true;
            }
            if (scanToEnd === true) {
              let parens = 0;
              while (eos() !== true && (code = advance())) {
                if (code === CHAR_BACKWARD_SLASH) {
                  backslashes = token.backslashes = true;
                  advance();
                  continue;
                }
                if (code === CHAR_LEFT_PARENTHESES) {
                  parens++;
                  continue;
                }
                if (code === CHAR_RIGHT_PARENTHESES && --parens === 0) {
                  finished = true;
                  break;
                }
              }
              continue;
            }
            break;
          }
        }
        if (code === CHAR_ASTERISK) {
          if (prev === CHAR_ASTERISK) isGlobstar = token.isGlobstar = true;
          isGlob = token.isGlob = true;
          finished = true;
          if (scanToEnd === true) {
            continue;
          }
          break;
        }
        if (code === CHAR_QUESTION_MARK) {
          isGlob = token.isGlob = true;
          finished = true;
          if (scanToEnd === true) {
            continue;
          }
          break;
        }
        if (code === CHAR_LEFT_SQUARE_BRACKET) {
          while (eos() !== true && (next = advance())) {
            if (next === CHAR_BACKWARD_SLASH) {
              backslashes = token.backslashes = true;
              advance();
              continue;
            }
            if (next === CHAR_RIGHT_SQUARE_BRACKET) {
              isBracket = token.isBracket = true;
              isGlob = token.isGlob = true;
              finished = true;
              break;
            }
          }
          if (scanToEnd === true) {
            continue;
          }
          break;
        }
        if (opts.nonegate !== true && code === CHAR_EXCLAMATION_MARK && index === start) {
          negated = token.negated = true;
          start++;
          continue;
        }
        if (opts.noparen !== true && code === CHAR_LEFT_PARENTHESES) {
          isGlob = token.isGlob = true;
          if (scanToEnd === true) {
            let parens = 1;
            while (eos() !== true && (code = advance())) {
              if (code === CHAR_BACKWARD_SLASH) {
                backslashes = token.backslashes = true;
                advance();
                continue;
              }
              if (code === CHAR_LEFT_PARENTHESES) {
                parens++;
                continue;
              }
              if (code === CHAR_RIGHT_PARENTHESES && --parens === 0) {
                finished = true;
                break;
              }
            }
            continue;
          }
          break;
        }
        if (isGlob === true) {
          finished = true;
          if (scanToEnd === true) {
            continue;
          }
          break;
        }
      }
      if (opts.noext === true) {
        isExtglob = false;
        isGlob = false;
      }
      let base2 = str;
      let prefix = "";
      let glob = "";
      if (start > 0) {
        prefix = str.slice(0, start);
        str = str.slice(start);
        lastIndex -= start;
      }
      if (base2 && isGlob === true && lastIndex > 0) {
        base2 = str.slice(0, lastIndex);
        glob = str.slice(lastIndex);
      } else if (isGlob === true) {
        base2 = "";
        glob = str;
      } else {
        base2 = str;
      }
      if (base2 && base2 !== "" && base2 !== "/" && base2 !== str) {
        if (isPathSeparator(base2.charCodeAt(base2.length - 1))) {
          base2 = base2.slice(0, -1);
        }
      }
      if (opts.unescape === true) {
        if (glob) glob = utils.removeBackslashes(glob);
        if (base2 && backslashes === true) {
          base2 = utils.removeBackslashes(base2);
        }
      }
      const state = {
        prefix,
        input,
        start,
        base: base2,
        glob,
        isBrace,
        isBracket,
        isGlob,
        isExtglob,
        isGlobstar,
        negated,
        negatedExtglob
      };
      if (opts.tokens === true) {
        state.maxDepth = 0;
        if (!isPathSeparator(code)) {
          tokens.push(token);
        }
        state.tokens = tokens;
      }
      if (opts.parts === true || opts.tokens === true) {
        let prevIndex;
        for (let idx = 0; idx < slashes.length; idx++) {
          const n2 = prevIndex !== void 0 ? prevIndex + 1 : start;
          const i = slashes[idx];
          const value2 = input.slice(n2, i);
          if (opts.tokens) {
            if (idx === 0 && start !== 0) {
              tokens[idx].isPrefix = true;
              tokens[idx].value = prefix;
            } else {
              tokens[idx].value = value2;
            }
            depth(tokens[idx]);
            state.maxDepth += tokens[idx].depth;
          }
          if (i >= start) {
            parts.push(value2);
            prevIndex = i;
          }
        }
        const n = prevIndex !== void 0 ? prevIndex + 1 : start;
        const value = input.slice(n);
        parts.push(value);
        if (opts.tokens && prevIndex && prevIndex + 1 < input.length) {
          tokens[tokens.length - 1].value = value;
          depth(tokens[tokens.length - 1]);
          state.maxDepth += tokens[tokens.length - 1].depth;
        }
        state.slashes = slashes;
        state.parts = parts;
      }
      return state;
    };
    module.exports = scan;
  }
});

// node_modules/picomatch/lib/parse.js
var require_parse = __commonJS({
  "node_modules/picomatch/lib/parse.js"(exports, module) {
    "use strict";
    var constants = require_constants();
    var utils = require_utils();
    var {
      MAX_LENGTH,
      POSIX_REGEX_SOURCE,
      REGEX_NON_SPECIAL_CHARS,
      REGEX_SPECIAL_CHARS_BACKREF,
      REPLACEMENTS
    } = constants;
    var expandRange = (args, options) => {
      if (typeof options.expandRange === "function") {
        return options.expandRange(...args, options);
      }
      args.sort();
      const value = `[${args.join("-")}]`;
      try {
        new RegExp(value);
      } catch (ex) {
        return args.map((v) => utils.escapeRegex(v)).join("..");
      }
      return value;
    };
    var syntaxError = (type, char) => {
      return `Missing ${type}: "${char}" - use "\\\\${char}" to match literal characters`;
    };
    var splitTopLevel = (input) => {
      const parts = [];
      let bracket = 0;
      let paren = 0;
      let quote = 0;
      let value = "";
      let escaped = false;
      for (const ch of input) {
        if (escaped === true) {
          value += ch;
          escaped = false;
          continue;
        }
        if (ch === "\\") {
          value += ch;
          escaped = true;
          continue;
        }
        if (ch === '"') {
          quote = quote === 1 ? 0 : 1;
          value += ch;
          continue;
        }
        if (quote === 0) {
          if (ch === "[") {
            bracket++;
          } else if (ch === "]" && bracket > 0) {
            bracket--;
          } else if (bracket === 0) {
            if (ch === "(") {
              paren++;
            } else if (ch === ")" && paren > 0) {
              paren--;
            } else if (ch === "|" && paren === 0) {
              parts.push(value);
              value = "";
              continue;
            }
          }
        }
        value += ch;
      }
      parts.push(value);
      return parts;
    };
    var isPlainBranch = (branch) => {
      let escaped = false;
      for (const ch of branch) {
        if (escaped === true) {
          escaped = false;
          continue;
        }
        if (ch === "\\") {
          escaped = true;
          continue;
        }
        if (/[?*+@!()[\]{}]/.test(ch)) {
          return false;
        }
      }
      return true;
    };
    var normalizeSimpleBranch = (branch) => {
      let value = branch.trim();
      let changed = true;
      while (changed === true) {
        changed = false;
        if (/^@\([^\\()[\]{}|]+\)$/.test(value)) {
          value = value.slice(2, -1);
          changed = true;
        }
      }
      if (!isPlainBranch(value)) {
        return;
      }
      return value.replace(/\\(.)/g, "$1");
    };
    var hasRepeatedCharPrefixOverlap = (branches) => {
      const values = branches.map(normalizeSimpleBranch).filter(Boolean);
      for (let i = 0; i < values.length; i++) {
        for (let j = i + 1; j < values.length; j++) {
          const a = values[i];
          const b = values[j];
          const char = a[0];
          if (!char || a !== char.repeat(a.length) || b !== char.repeat(b.length)) {
            continue;
          }
          if (a === b || a.startsWith(b) || b.startsWith(a)) {
            return true;
          }
        }
      }
      return false;
    };
    var parseRepeatedExtglob = (pattern, requireEnd = true) => {
      if (pattern[0] !== "+" && pattern[0] !== "*" || pattern[1] !== "(") {
        return;
      }
      let bracket = 0;
      let paren = 0;
      let quote = 0;
      let escaped = false;
      for (let i = 1; i < pattern.length; i++) {
        const ch = pattern[i];
        if (escaped === true) {
          escaped = false;
          continue;
        }
        if (ch === "\\") {
          escaped = true;
          continue;
        }
        if (ch === '"') {
          quote = quote === 1 ? 0 : 1;
          continue;
        }
        if (quote === 1) {
          continue;
        }
        if (ch === "[") {
          bracket++;
          continue;
        }
        if (ch === "]" && bracket > 0) {
          bracket--;
          continue;
        }
        if (bracket > 0) {
          continue;
        }
        if (ch === "(") {
          paren++;
          continue;
        }
        if (ch === ")") {
          paren--;
          if (paren === 0) {
            if (requireEnd === true && i !== pattern.length - 1) {
              return;
            }
            return {
              type: pattern[0],
              body: pattern.slice(2, i),
              end: i
            };
          }
        }
      }
    };
    var buildCharClassStar = (chars) => {
      const source = chars.length === 1 ? utils.escapeRegex(chars[0]) : `[${chars.map((ch) => utils.escapeRegex(ch)).join("")}]`;
      return `${source}*`;
    };
    var getStarExtglobSequenceChars = (pattern) => {
      let index = 0;
      const chars = [];
      while (index < pattern.length) {
        const match = parseRepeatedExtglob(pattern.slice(index), false);
        if (!match || match.type !== "*") {
          return;
        }
        const branches = splitTopLevel(match.body).map((branch2) => branch2.trim());
        if (branches.length !== 1) {
          return;
        }
        const branch = normalizeSimpleBranch(branches[0]);
        if (!branch || branch.length !== 1) {
          return;
        }
        chars.push(branch);
        index += match.end + 1;
      }
      if (chars.length < 1) {
        return;
      }
      return chars;
    };
    var repeatedExtglobRecursion = (pattern) => {
      let depth = 0;
      let value = pattern.trim();
      let match = parseRepeatedExtglob(value);
      while (match) {
        depth++;
        value = match.body.trim();
        match = parseRepeatedExtglob(value);
      }
      return depth;
    };
    var analyzeRepeatedExtglob = (body, options) => {
      if (options.maxExtglobRecursion === false) {
        return { risky: false };
      }
      const max = typeof options.maxExtglobRecursion === "number" ? options.maxExtglobRecursion : constants.DEFAULT_MAX_EXTGLOB_RECURSION;
      const branches = splitTopLevel(body).map((branch) => branch.trim());
      if (branches.length > 1) {
        if (branches.some((branch) => branch === "") || branches.some((branch) => /^[*?]+$/.test(branch)) || hasRepeatedCharPrefixOverlap(branches)) {
          return { risky: true };
        }
      }
      const safeChars = [];
      let sawStarSequence = false;
      let combinable = true;
      for (const branch of branches) {
        const chars = getStarExtglobSequenceChars(branch);
        if (chars) {
          sawStarSequence = true;
          safeChars.push(...chars);
          continue;
        }
        const literal = normalizeSimpleBranch(branch);
        if (literal && literal.length === 1) {
          safeChars.push(literal);
          continue;
        }
        combinable = false;
        if (repeatedExtglobRecursion(branch) > max) {
          return { risky: true };
        }
      }
      if (sawStarSequence) {
        return combinable ? { risky: true, safeOutput: buildCharClassStar([...new Set(safeChars)]) } : { risky: true };
      }
      return { risky: false };
    };
    var parse = (input, options) => {
      if (typeof input !== "string") {
        throw new TypeError("Expected a string");
      }
      input = REPLACEMENTS[input] || input;
      const opts = { ...options };
      const max = typeof opts.maxLength === "number" ? Math.min(MAX_LENGTH, opts.maxLength) : MAX_LENGTH;
      let len = input.length;
      if (len > max) {
        throw new SyntaxError(`Input length: ${len}, exceeds maximum allowed length: ${max}`);
      }
      const bos = { type: "bos", value: "", output: opts.prepend || "" };
      const tokens = [bos];
      const capture = opts.capture ? "" : "?:";
      const PLATFORM_CHARS = constants.globChars(opts.windows);
      const EXTGLOB_CHARS = constants.extglobChars(PLATFORM_CHARS);
      const {
        DOT_LITERAL,
        PLUS_LITERAL,
        SLASH_LITERAL,
        ONE_CHAR,
        DOTS_SLASH,
        NO_DOT,
        NO_DOT_SLASH,
        NO_DOTS_SLASH,
        QMARK,
        QMARK_NO_DOT,
        STAR,
        START_ANCHOR
      } = PLATFORM_CHARS;
      const globstar = (opts2) => {
        return `(${capture}(?:(?!${START_ANCHOR}${opts2.dot ? DOTS_SLASH : DOT_LITERAL}).)*?)`;
      };
      const nodot = opts.dot ? "" : NO_DOT;
      const qmarkNoDot = opts.dot ? QMARK : QMARK_NO_DOT;
      let star = opts.bash === true ? globstar(opts) : STAR;
      if (opts.capture) {
        star = `(${star})`;
      }
      if (typeof opts.noext === "boolean") {
        opts.noextglob = opts.noext;
      }
      const state = {
        input,
        index: -1,
        start: 0,
        dot: opts.dot === true,
        consumed: "",
        output: "",
        prefix: "",
        backtrack: false,
        negated: false,
        brackets: 0,
        braces: 0,
        parens: 0,
        quotes: 0,
        globstar: false,
        tokens
      };
      input = utils.removePrefix(input, state);
      len = input.length;
      const extglobs = [];
      const braces = [];
      const stack = [];
      let prev = bos;
      let value;
      const eos = () => state.index === len - 1;
      const peek = state.peek = (n = 1) => input[state.index + n];
      const advance = state.advance = () => input[++state.index] || "";
      const remaining = () => input.slice(state.index + 1);
      const consume = (value2 = "", num = 0) => {
        state.consumed += value2;
        state.index += num;
      };
      const append = (token) => {
        state.output += token.output != null ? token.output : token.value;
        consume(token.value);
      };
      const negate = () => {
        let count = 1;
        while (peek() === "!" && (peek(2) !== "(" || peek(3) === "?")) {
          advance();
          state.start++;
          count++;
        }
        if (count % 2 === 0) {
          return false;
        }
        state.negated = true;
        state.start++;
        return true;
      };
      const increment = (type) => {
        state[type]++;
        stack.push(type);
      };
      const decrement = (type) => {
        state[type]--;
        stack.pop();
      };
      const push = (tok) => {
        if (prev.type === "globstar") {
          const isBrace = state.braces > 0 && (tok.type === "comma" || tok.type === "brace");
          const isExtglob = tok.extglob === true || extglobs.length && (tok.type === "pipe" || tok.type === "paren");
          if (tok.type !== "slash" && tok.type !== "paren" && !isBrace && !isExtglob) {
            state.output = state.output.slice(0, -prev.output.length);
            prev.type = "star";
            prev.value = "*";
            prev.output = star;
            state.output += prev.output;
          }
        }
        if (extglobs.length && tok.type !== "paren") {
          extglobs[extglobs.length - 1].inner += tok.value;
        }
        if (tok.value || tok.output) append(tok);
        if (prev && prev.type === "text" && tok.type === "text") {
          prev.output = (prev.output || prev.value) + tok.value;
          prev.value += tok.value;
          return;
        }
        tok.prev = prev;
        tokens.push(tok);
        prev = tok;
      };
      const extglobOpen = (type, value2) => {
        const token = { ...EXTGLOB_CHARS[value2], conditions: 1, inner: "" };
        token.prev = prev;
        token.parens = state.parens;
        token.output = state.output;
        token.startIndex = state.index;
        token.tokensIndex = tokens.length;
        const output = (opts.capture ? "(" : "") + token.open;
        increment("parens");
        push({ type, value: value2, output: state.output ? "" : ONE_CHAR });
        push({ type: "paren", extglob: true, value: advance(), output });
        extglobs.push(token);
      };
      const extglobClose = (token) => {
        const literal = input.slice(token.startIndex, state.index + 1);
        const body = input.slice(token.startIndex + 2, state.index);
        const analysis = analyzeRepeatedExtglob(body, opts);
        if ((token.type === "plus" || token.type === "star") && analysis.risky) {
          const safeOutput = analysis.safeOutput ? (token.output ? "" : ONE_CHAR) + (opts.capture ? `(${analysis.safeOutput})` : analysis.safeOutput) : void 0;
          const open = tokens[token.tokensIndex];
          open.type = "text";
          open.value = literal;
          open.output = safeOutput || utils.escapeRegex(literal);
          for (let i = token.tokensIndex + 1; i < tokens.length; i++) {
            tokens[i].value = "";
            tokens[i].output = "";
            delete tokens[i].suffix;
          }
          state.output = token.output + open.output;
          state.backtrack = true;
          push({ type: "paren", extglob: true, value, output: "" });
          decrement("parens");
          return;
        }
        let output = token.close + (opts.capture ? ")" : "");
        let rest;
        if (token.type === "negate") {
          let extglobStar = star;
          if (token.inner && token.inner.length > 1 && token.inner.includes("/")) {
            extglobStar = globstar(opts);
          }
          if (extglobStar !== star || eos() || /^\)+$/.test(remaining())) {
            output = token.close = `)$))${extglobStar}`;
          }
          if (token.inner.includes("*") && (rest = remaining()) && /^\.[^\\/.]+$/.test(rest)) {
            const expression = parse(rest, { ...options, fastpaths: false }).output;
            output = token.close = `)${expression})${extglobStar})`;
          }
          if (token.prev.type === "bos") {
            state.negatedExtglob = true;
          }
        }
        push({ type: "paren", extglob: true, value, output });
        decrement("parens");
      };
      if (opts.fastpaths !== false && !/(^[*!]|[/()[\]{}"])/.test(input)) {
        let backslashes = false;
        let output = input.replace(REGEX_SPECIAL_CHARS_BACKREF, (m, esc, chars, first, rest, index) => {
          if (first === "\\") {
            backslashes = true;
            return m;
          }
          if (first === "?") {
            if (esc) {
              return esc + first + (rest ? QMARK.repeat(rest.length) : "");
            }
            if (index === 0) {
              return qmarkNoDot + (rest ? QMARK.repeat(rest.length) : "");
            }
            return QMARK.repeat(chars.length);
          }
          if (first === ".") {
            return DOT_LITERAL.repeat(chars.length);
          }
          if (first === "*") {
            if (esc) {
              return esc + first + (rest ? star : "");
            }
            return star;
          }
          return esc ? m : `\\${m}`;
        });
        if (backslashes === true) {
          if (opts.unescape === true) {
            output = output.replace(/\\/g, "");
          } else {
            output = output.replace(/\\+/g, (m) => {
              return m.length % 2 === 0 ? "\\\\" : m ? "\\" : "";
            });
          }
        }
        if (output === input && opts.contains === true) {
          state.output = input;
          return state;
        }
        state.output = utils.wrapOutput(output, state, options);
        return state;
      }
      while (!eos()) {
        value = advance();
        if (value === "\0") {
          continue;
        }
        if (value === "\\") {
          const next = peek();
          if (next === "/" && opts.bash !== true) {
            continue;
          }
          if (next === "." || next === ";") {
            continue;
          }
          if (!next) {
            value += "\\";
            push({ type: "text", value });
            continue;
          }
          const match = /^\\+/.exec(remaining());
          let slashes = 0;
          if (match && match[0].length > 2) {
            slashes = match[0].length;
            state.index += slashes;
            if (slashes % 2 !== 0) {
              value += "\\";
            }
          }
          if (opts.unescape === true) {
            value = advance();
          } else {
            value += advance();
          }
          if (state.brackets === 0) {
            push({ type: "text", value });
            continue;
          }
        }
        if (state.brackets > 0 && (value !== "]" || prev.value === "[" || prev.value === "[^")) {
          if (opts.posix !== false && value === ":") {
            const inner = prev.value.slice(1);
            if (inner.includes("[")) {
              prev.posix = true;
              if (inner.includes(":")) {
                const idx = prev.value.lastIndexOf("[");
                const pre = prev.value.slice(0, idx);
                const rest2 = prev.value.slice(idx + 2);
                const posix = POSIX_REGEX_SOURCE[rest2];
                if (posix) {
                  prev.value = pre + posix;
                  state.backtrack = true;
                  advance();
                  if (!bos.output && tokens.indexOf(prev) === 1) {
                    bos.output = ONE_CHAR;
                  }
                  continue;
                }
              }
            }
          }
          if (value === "[" && peek() !== ":" || value === "-" && peek() === "]") {
            value = `\\${value}`;
          }
          if (value === "]" && (prev.value === "[" || prev.value === "[^")) {
            value = `\\${value}`;
          }
          if (opts.posix === true && value === "!" && prev.value === "[") {
            value = "^";
          }
          prev.value += value;
          append({ value });
          continue;
        }
        if (state.quotes === 1 && value !== '"') {
          value = utils.escapeRegex(value);
          prev.value += value;
          append({ value });
          continue;
        }
        if (value === '"') {
          state.quotes = state.quotes === 1 ? 0 : 1;
          if (opts.keepQuotes === true) {
            push({ type: "text", value });
          }
          continue;
        }
        if (value === "(") {
          increment("parens");
          push({ type: "paren", value });
          continue;
        }
        if (value === ")") {
          if (state.parens === 0 && opts.strictBrackets === true) {
            throw new SyntaxError(syntaxError("opening", "("));
          }
          const extglob = extglobs[extglobs.length - 1];
          if (extglob && state.parens === extglob.parens + 1) {
            extglobClose(extglobs.pop());
            continue;
          }
          push({ type: "paren", value, output: state.parens ? ")" : "\\)" });
          decrement("parens");
          continue;
        }
        if (value === "[") {
          if (opts.nobracket === true || !remaining().includes("]")) {
            if (opts.nobracket !== true && opts.strictBrackets === true) {
              throw new SyntaxError(syntaxError("closing", "]"));
            }
            value = `\\${value}`;
          } else {
            increment("brackets");
          }
          push({ type: "bracket", value });
          continue;
        }
        if (value === "]") {
          if (opts.nobracket === true || prev && prev.type === "bracket" && prev.value.length === 1) {
            push({ type: "text", value, output: `\\${value}` });
            continue;
          }
          if (state.brackets === 0) {
            if (opts.strictBrackets === true) {
              throw new SyntaxError(syntaxError("opening", "["));
            }
            push({ type: "text", value, output: `\\${value}` });
            continue;
          }
          decrement("brackets");
          const prevValue = prev.value.slice(1);
          if (prev.posix !== true && prevValue[0] === "^" && !prevValue.includes("/")) {
            value = `/${value}`;
          }
          prev.value += value;
          append({ value });
          if (opts.literalBrackets === false || utils.hasRegexChars(prevValue)) {
            continue;
          }
          const escaped = utils.escapeRegex(prev.value);
          state.output = state.output.slice(0, -prev.value.length);
          if (opts.literalBrackets === true) {
            state.output += escaped;
            prev.value = escaped;
            continue;
          }
          prev.value = `(${capture}${escaped}|${prev.value})`;
          state.output += prev.value;
          continue;
        }
        if (value === "{" && opts.nobrace !== true) {
          increment("braces");
          const open = {
            type: "brace",
            value,
            output: "(",
            outputIndex: state.output.length,
            tokensIndex: state.tokens.length
          };
          braces.push(open);
          push(open);
          continue;
        }
        if (value === "}") {
          const brace = braces[braces.length - 1];
          if (opts.nobrace === true || !brace) {
            push({ type: "text", value, output: value });
            continue;
          }
          let output = ")";
          if (brace.dots === true) {
            const arr = tokens.slice();
            const range = [];
            for (let i = arr.length - 1; i >= 0; i--) {
              tokens.pop();
              if (arr[i].type === "brace") {
                break;
              }
              if (arr[i].type !== "dots") {
                range.unshift(arr[i].value);
              }
            }
            output = expandRange(range, opts);
            state.backtrack = true;
          }
          if (brace.comma !== true && brace.dots !== true) {
            const out = state.output.slice(0, brace.outputIndex);
            const toks = state.tokens.slice(brace.tokensIndex);
            brace.value = brace.output = "\\{";
            value = output = "\\}";
            state.output = out;
            for (const t of toks) {
              state.output += t.output || t.value;
            }
          }
          push({ type: "brace", value, output });
          decrement("braces");
          braces.pop();
          continue;
        }
        if (value === "|") {
          if (extglobs.length > 0) {
            extglobs[extglobs.length - 1].conditions++;
          }
          push({ type: "text", value });
          continue;
        }
        if (value === ",") {
          let output = value;
          const brace = braces[braces.length - 1];
          if (brace && stack[stack.length - 1] === "braces") {
            brace.comma = true;
            output = "|";
          }
          push({ type: "comma", value, output });
          continue;
        }
        if (value === "/") {
          if (prev.type === "dot" && state.index === state.start + 1) {
            state.start = state.index + 1;
            state.consumed = "";
            state.output = "";
            tokens.pop();
            prev = bos;
            continue;
          }
          push({ type: "slash", value, output: SLASH_LITERAL });
          continue;
        }
        if (value === ".") {
          if (state.braces > 0 && prev.type === "dot") {
            if (prev.value === ".") prev.output = DOT_LITERAL;
            const brace = braces[braces.length - 1];
            prev.type = "dots";
            prev.output += value;
            prev.value += value;
            brace.dots = true;
            continue;
          }
          if (state.braces + state.parens === 0 && prev.type !== "bos" && prev.type !== "slash") {
            push({ type: "text", value, output: DOT_LITERAL });
            continue;
          }
          push({ type: "dot", value, output: DOT_LITERAL });
          continue;
        }
        if (value === "?") {
          const isGroup = prev && prev.value === "(";
          if (!isGroup && opts.noextglob !== true && peek() === "(" && peek(2) !== "?") {
            extglobOpen("qmark", value);
            continue;
          }
          if (prev && prev.type === "paren") {
            const next = peek();
            let output = value;
            if (prev.value === "(" && !/[!=<:]/.test(next) || next === "<" && !/<([!=]|\w+>)/.test(remaining())) {
              output = `\\${value}`;
            }
            push({ type: "text", value, output });
            continue;
          }
          if (opts.dot !== true && (prev.type === "slash" || prev.type === "bos")) {
            push({ type: "qmark", value, output: QMARK_NO_DOT });
            continue;
          }
          push({ type: "qmark", value, output: QMARK });
          continue;
        }
        if (value === "!") {
          if (opts.noextglob !== true && peek() === "(") {
            if (peek(2) !== "?" || !/[!=<:]/.test(peek(3))) {
              extglobOpen("negate", value);
              continue;
            }
          }
          if (opts.nonegate !== true && state.index === 0) {
            negate();
            continue;
          }
        }
        if (value === "+") {
          if (opts.noextglob !== true && peek() === "(" && peek(2) !== "?") {
            extglobOpen("plus", value);
            continue;
          }
          if (prev && prev.value === "(" || opts.regex === false) {
            push({ type: "plus", value, output: PLUS_LITERAL });
            continue;
          }
          if (prev && (prev.type === "bracket" || prev.type === "paren" || prev.type === "brace") || state.parens > 0) {
            push({ type: "plus", value });
            continue;
          }
          push({ type: "plus", value: PLUS_LITERAL });
          continue;
        }
        if (value === "@") {
          if (opts.noextglob !== true && peek() === "(" && peek(2) !== "?") {
            push({ type: "at", extglob: true, value, output: "" });
            continue;
          }
          push({ type: "text", value });
          continue;
        }
        if (value !== "*") {
          if (value === "$" || value === "^") {
            value = `\\${value}`;
          }
          const match = REGEX_NON_SPECIAL_CHARS.exec(remaining());
          if (match) {
            value += match[0];
            state.index += match[0].length;
          }
          push({ type: "text", value });
          continue;
        }
        if (prev && (prev.type === "globstar" || prev.star === true)) {
          prev.type = "star";
          prev.star = true;
          prev.value += value;
          prev.output = star;
          state.backtrack = true;
          state.globstar = true;
          consume(value);
          continue;
        }
        let rest = remaining();
        if (opts.noextglob !== true && /^\([^?]/.test(rest)) {
          extglobOpen("star", value);
          continue;
        }
        if (prev.type === "star") {
          if (opts.noglobstar === true) {
            consume(value);
            continue;
          }
          const prior = prev.prev;
          const before = prior.prev;
          const isStart = prior.type === "slash" || prior.type === "bos";
          const afterStar = before && (before.type === "star" || before.type === "globstar");
          if (opts.bash === true && (!isStart || rest[0] && rest[0] !== "/")) {
            push({ type: "star", value, output: "" });
            continue;
          }
          const isBrace = state.braces > 0 && (prior.type === "comma" || prior.type === "brace");
          const isExtglob = extglobs.length && (prior.type === "pipe" || prior.type === "paren");
          if (!isStart && prior.type !== "paren" && !isBrace && !isExtglob) {
            push({ type: "star", value, output: "" });
            continue;
          }
          while (rest.slice(0, 3) === "/**") {
            const after = input[state.index + 4];
            if (after && after !== "/") {
              break;
            }
            rest = rest.slice(3);
            consume("/**", 3);
          }
          const isEnd = eos() || state.parens > 0 && rest === ")".repeat(state.parens) && !extglobs.some((extglob) => extglob.type === "negate");
          if (prior.type === "bos" && eos()) {
            prev.type = "globstar";
            prev.value += value;
            prev.output = globstar(opts);
            state.output = prev.output;
            state.globstar = true;
            consume(value);
            continue;
          }
          if (prior.type === "slash" && prior.prev.type !== "bos" && !afterStar && isEnd) {
            state.output = state.output.slice(0, -(prior.output + prev.output).length);
            prior.output = `(?:${prior.output}`;
            prev.type = "globstar";
            prev.output = globstar(opts) + (opts.strictSlashes ? ")" : "|$)");
            prev.value += value;
            state.globstar = true;
            state.output += prior.output + prev.output;
            consume(value);
            continue;
          }
          if (prior.type === "slash" && prior.prev.type !== "bos" && rest[0] === "/") {
            const end = rest[1] !== void 0 ? "|$" : "";
            state.output = state.output.slice(0, -(prior.output + prev.output).length);
            prior.output = `(?:${prior.output}`;
            prev.type = "globstar";
            prev.output = `${globstar(opts)}${SLASH_LITERAL}|${SLASH_LITERAL}${end})`;
            prev.value += value;
            state.output += prior.output + prev.output;
            state.globstar = true;
            consume(value + advance());
            push({ type: "slash", value: "/", output: "" });
            continue;
          }
          if (prior.type === "bos" && rest[0] === "/") {
            prev.type = "globstar";
            prev.value += value;
            prev.output = `(?:^|${SLASH_LITERAL}|${globstar(opts)}${SLASH_LITERAL})`;
            state.output = prev.output;
            state.globstar = true;
            consume(value + advance());
            push({ type: "slash", value: "/", output: "" });
            continue;
          }
          state.output = state.output.slice(0, -prev.output.length);
          prev.type = "globstar";
          prev.output = globstar(opts);
          prev.value += value;
          state.output += prev.output;
          state.globstar = true;
          consume(value);
          continue;
        }
        const token = { type: "star", value, output: star };
        if (opts.bash === true) {
          token.output = ".*?";
          if (prev.type === "bos" || prev.type === "slash") {
            token.output = nodot + token.output;
          }
          push(token);
          continue;
        }
        if (prev && (prev.type === "bracket" || prev.type === "paren") && opts.regex === true) {
          token.output = value;
          push(token);
          continue;
        }
        if (state.index === state.start || prev.type === "slash" || prev.type === "dot") {
          if (prev.type === "dot") {
            state.output += NO_DOT_SLASH;
            prev.output += NO_DOT_SLASH;
          } else if (opts.dot === true) {
            state.output += NO_DOTS_SLASH;
            prev.output += NO_DOTS_SLASH;
          } else {
            state.output += nodot;
            prev.output += nodot;
          }
          if (peek() !== "*") {
            state.output += ONE_CHAR;
            prev.output += ONE_CHAR;
          }
        }
        push(token);
      }
      while (state.brackets > 0) {
        if (opts.strictBrackets === true) throw new SyntaxError(syntaxError("closing", "]"));
        state.output = utils.escapeLast(state.output, "[");
        decrement("brackets");
      }
      while (state.parens > 0) {
        if (opts.strictBrackets === true) throw new SyntaxError(syntaxError("closing", ")"));
        state.output = utils.escapeLast(state.output, "(");
        decrement("parens");
      }
      while (state.braces > 0) {
        if (opts.strictBrackets === true) throw new SyntaxError(syntaxError("closing", "}"));
        state.output = utils.escapeLast(state.output, "{");
        decrement("braces");
      }
      if (opts.strictSlashes !== true && (prev.type === "star" || prev.type === "bracket")) {
        push({ type: "maybe_slash", value: "", output: `${SLASH_LITERAL}?` });
      }
      if (state.backtrack === true) {
        state.output = "";
        for (const token of state.tokens) {
          state.output += token.output != null ? token.output : token.value;
          if (token.suffix) {
            state.output += token.suffix;
          }
        }
      }
      return state;
    };
    parse.fastpaths = (input, options) => {
      const opts = { ...options };
      const max = typeof opts.maxLength === "number" ? Math.min(MAX_LENGTH, opts.maxLength) : MAX_LENGTH;
      const len = input.length;
      if (len > max) {
        throw new SyntaxError(`Input length: ${len}, exceeds maximum allowed length: ${max}`);
      }
      input = REPLACEMENTS[input] || input;
      const {
        DOT_LITERAL,
        SLASH_LITERAL,
        ONE_CHAR,
        DOTS_SLASH,
        NO_DOT,
        NO_DOTS,
        NO_DOTS_SLASH,
        STAR,
        START_ANCHOR
      } = constants.globChars(opts.windows);
      const nodot = opts.dot ? NO_DOTS : NO_DOT;
      const slashDot = opts.dot ? NO_DOTS_SLASH : NO_DOT;
      const capture = opts.capture ? "" : "?:";
      const state = { negated: false, prefix: "" };
      let star = opts.bash === true ? ".*?" : STAR;
      if (opts.capture) {
        star = `(${star})`;
      }
      const globstar = (opts2) => {
        if (opts2.noglobstar === true) return star;
        return `(${capture}(?:(?!${START_ANCHOR}${opts2.dot ? DOTS_SLASH : DOT_LITERAL}).)*?)`;
      };
      const create = (str) => {
        switch (str) {
          case "*":
            return `${nodot}${ONE_CHAR}${star}`;
          case ".*":
            return `${DOT_LITERAL}${ONE_CHAR}${star}`;
          case "*.*":
            return `${nodot}${star}${DOT_LITERAL}${ONE_CHAR}${star}`;
          case "*/*":
            return `${nodot}${star}${SLASH_LITERAL}${ONE_CHAR}${slashDot}${star}`;
          case "**":
            return nodot + globstar(opts);
          case "**/*":
            return `(?:${nodot}${globstar(opts)}${SLASH_LITERAL})?${slashDot}${ONE_CHAR}${star}`;
          case "**/*.*":
            return `(?:${nodot}${globstar(opts)}${SLASH_LITERAL})?${slashDot}${star}${DOT_LITERAL}${ONE_CHAR}${star}`;
          case "**/.*":
            return `(?:${nodot}${globstar(opts)}${SLASH_LITERAL})?${DOT_LITERAL}${ONE_CHAR}${star}`;
          default: {
            const match = /^(.*?)\.(\w+)$/.exec(str);
            if (!match) return;
            const source2 = create(match[1]);
            if (!source2) return;
            return source2 + DOT_LITERAL + match[2];
          }
        }
      };
      const output = utils.removePrefix(input, state);
      let source = create(output);
      if (source && opts.strictSlashes !== true) {
        source += `${SLASH_LITERAL}?`;
      }
      return source;
    };
    module.exports = parse;
  }
});

// node_modules/picomatch/lib/picomatch.js
var require_picomatch = __commonJS({
  "node_modules/picomatch/lib/picomatch.js"(exports, module) {
    "use strict";
    var scan = require_scan();
    var parse = require_parse();
    var utils = require_utils();
    var constants = require_constants();
    var isObject2 = (val) => val && typeof val === "object" && !Array.isArray(val);
    var picomatch = (glob, options, returnState = false) => {
      if (Array.isArray(glob)) {
        const fns = glob.map((input) => picomatch(input, options, returnState));
        const arrayMatcher = (str) => {
          for (const isMatch of fns) {
            const state2 = isMatch(str);
            if (state2) return state2;
          }
          return false;
        };
        return arrayMatcher;
      }
      const isState = isObject2(glob) && glob.tokens && glob.input;
      if (glob === "" || typeof glob !== "string" && !isState) {
        throw new TypeError("Expected pattern to be a non-empty string");
      }
      const opts = options || {};
      const posix = opts.windows;
      const regex = isState ? picomatch.compileRe(glob, options) : picomatch.makeRe(glob, options, false, true);
      const state = regex.state;
      delete regex.state;
      let isIgnored = () => false;
      if (opts.ignore) {
        const ignoreOpts = { ...options, ignore: null, onMatch: null, onResult: null };
        isIgnored = picomatch(opts.ignore, ignoreOpts, returnState);
      }
      const matcher = (input, returnObject = false) => {
        const { isMatch, match, output } = picomatch.test(input, regex, options, { glob, posix });
        const result = { glob, state, regex, posix, input, output, match, isMatch };
        if (typeof opts.onResult === "function") {
          opts.onResult(result);
        }
        if (isMatch === false) {
          result.isMatch = false;
          return returnObject ? result : false;
        }
        if (isIgnored(input)) {
          if (typeof opts.onIgnore === "function") {
            opts.onIgnore(result);
          }
          result.isMatch = false;
          return returnObject ? result : false;
        }
        if (typeof opts.onMatch === "function") {
          opts.onMatch(result);
        }
        return returnObject ? result : true;
      };
      if (returnState) {
        matcher.state = state;
      }
      return matcher;
    };
    picomatch.test = (input, regex, options, { glob, posix } = {}) => {
      if (typeof input !== "string") {
        throw new TypeError("Expected input to be a string");
      }
      if (input === "") {
        return { isMatch: false, output: "" };
      }
      const opts = options || {};
      const format = opts.format || (posix ? utils.toPosixSlashes : null);
      let match = input === glob;
      let output = match && format ? format(input) : input;
      if (match === false) {
        output = format ? format(input) : input;
        match = output === glob;
      }
      if (match === false || opts.capture === true) {
        if (opts.matchBase === true || opts.basename === true) {
          match = picomatch.matchBase(input, regex, options, posix);
        } else {
          match = regex.exec(output);
        }
      }
      return { isMatch: Boolean(match), match, output };
    };
    picomatch.matchBase = (input, glob, options, posix = options && options.windows) => {
      const regex = glob instanceof RegExp ? glob : picomatch.makeRe(glob, options);
      return regex.test(utils.basename(input, { windows: posix }));
    };
    picomatch.isMatch = (str, patterns, options) => picomatch(patterns, options)(str);
    picomatch.parse = (pattern, options) => {
      if (Array.isArray(pattern)) return pattern.map((p) => picomatch.parse(p, options));
      return parse(pattern, { ...options, fastpaths: false });
    };
    picomatch.scan = (input, options) => scan(input, options);
    picomatch.compileRe = (state, options, returnOutput = false, returnState = false) => {
      if (returnOutput === true) {
        return state.output;
      }
      const opts = options || {};
      const prepend = opts.contains ? "" : "^";
      const append = opts.contains ? "" : "$";
      let source = `${prepend}(?:${state.output})${append}`;
      if (state && state.negated === true) {
        source = `^(?!${source}).*$`;
      }
      const regex = picomatch.toRegex(source, options);
      if (returnState === true) {
        regex.state = state;
      }
      return regex;
    };
    picomatch.makeRe = (input, options = {}, returnOutput = false, returnState = false) => {
      if (!input || typeof input !== "string") {
        throw new TypeError("Expected a non-empty string");
      }
      let parsed = { negated: false, fastpaths: true };
      if (options.fastpaths !== false && (input[0] === "." || input[0] === "*")) {
        parsed.output = parse.fastpaths(input, options);
      }
      if (!parsed.output) {
        parsed = parse(input, options);
      }
      return picomatch.compileRe(parsed, options, returnOutput, returnState);
    };
    picomatch.toRegex = (source, options) => {
      try {
        const opts = options || {};
        return new RegExp(source, opts.flags || (opts.nocase ? "i" : ""));
      } catch (err) {
        if (options && options.debug === true) throw err;
        return /$^/;
      }
    };
    picomatch.constants = constants;
    module.exports = picomatch;
  }
});

// node_modules/picomatch/index.js
var require_picomatch2 = __commonJS({
  "node_modules/picomatch/index.js"(exports, module) {
    "use strict";
    var pico = require_picomatch();
    var utils = require_utils();
    function picomatch(glob, options, returnState = false) {
      if (options && (options.windows === null || options.windows === void 0)) {
        options = { ...options, windows: utils.isWindows() };
      }
      return pico(glob, options, returnState);
    }
    Object.assign(picomatch, pico);
    module.exports = picomatch;
  }
});

// src/core/layout.ts
var RESERVED_PREFIX = "_";
var RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
var runIdFor = (planId, planCommit) => `${planId}-${planCommit.slice(0, 7)}`;
var BRANCH_PREFIX = "forge/";
var runBranchPrefix = (runId) => `${BRANCH_PREFIX}${runId}/`;
var stateBranch = (runId) => `${runBranchPrefix(runId)}_state`;
function parseStateBranch(name) {
  const runId = /^forge\/([^/]+)\/_state$/.exec(name)?.[1];
  return runId !== void 0 && RUN_ID_PATTERN.test(runId) ? runId : void 0;
}
var DEFAULT_INTEGRATION_BRANCH_TEMPLATE = "forge/{runId}/_integration";
function integrationBranch(config, runId) {
  return config.integration_branch_template.replaceAll("{runId}", runId);
}
function parseIntegrationBranch(name) {
  const runId = /^forge\/([^/]+)\/_integration$/.exec(name)?.[1];
  return runId !== void 0 && RUN_ID_PATTERN.test(runId) ? runId : void 0;
}
var isReservedBranch = (name) => parseStateBranch(name) !== void 0 || parseIntegrationBranch(name) !== void 0;
var DEFAULT_BRANCH_TEMPLATE = "forge/{runId}/{taskId}/{attempt}";
function branchName(config, runId, taskId, attempt) {
  return config.branch_template.replaceAll("{runId}", runId).replaceAll("{taskId}", taskId).replaceAll("{attempt}", String(attempt));
}
var escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
function branchParser(config) {
  const pattern = escape(config.branch_template).replace(escape("{runId}"), "(?<runId>[^/]+)").replace(escape("{taskId}"), "(?<taskId>[^/]+)").replace(escape("{attempt}"), "(?<attempt>\\d+)");
  const re = new RegExp(`^${pattern}$`);
  return (branch) => {
    const m = re.exec(branch);
    if (!m?.groups) return void 0;
    const { runId, taskId } = m.groups;
    if (!RUN_ID_PATTERN.test(runId) || !(ID_PATTERN.test(taskId) || FOLLOWUP_ID.test(taskId))) return void 0;
    return { runId, taskId, attempt: Number(m.groups.attempt) };
  };
}
var followupId = (n) => `${RESERVED_PREFIX}followup-${n}`;
var FOLLOWUP_ID = /^_followup-[1-9][0-9]*$/;
var isFollowupId = (id) => FOLLOWUP_ID.test(id);
var parseDefaultBranch = branchParser({ branch_template: DEFAULT_BRANCH_TEMPLATE });
function parseFollowupBranch(name) {
  const ref = parseDefaultBranch(name);
  return ref && isFollowupId(ref.taskId) ? ref : void 0;
}
var captainId = (crId) => `${RESERVED_PREFIX}captain-${crId}`;
var CAPTAIN_ID = /^_captain-([A-Za-z0-9][A-Za-z0-9._-]*)$/;
var parseCaptainId = (taskId) => CAPTAIN_ID.exec(taskId)?.[1];
var captainBranch = (runId, crId) => `${runBranchPrefix(runId)}${captainId(crId)}`;
var planRunId = (issue) => `${RESERVED_PREFIX}plan-${issue}`;
var PLAN_RUN_ID = /^_plan-([1-9][0-9]*)$/;
var planCaptainId = (issue) => captainId(`plan-${issue}`);
var CAPTAIN_PLAN_ID = /^_captain-plan-([1-9][0-9]*)$/;
function parsePlanCaptainId(taskId) {
  const issue = CAPTAIN_PLAN_ID.exec(taskId)?.[1];
  return issue === void 0 ? void 0 : Number(issue);
}
var planCaptainBranch = (issue) => `${BRANCH_PREFIX}${planRunId(issue)}`;
var JOURNAL_FILE = "journal.json";
var eventSegmentFile = (segment) => `events/${String(segment).padStart(6, "0")}.ndjson`;
var taskRecordsDir = (runId, taskId) => `.forge/runs/${runId}/${taskId}`;
var attemptDir = (runId, taskId, attempt) => `${taskRecordsDir(runId, taskId)}/${attempt}`;
var walkthroughPath = (runId, taskId, attempt) => `${attemptDir(runId, taskId, attempt)}/walkthrough.md`;
var resultPath = (runId, taskId, attempt) => `${attemptDir(runId, taskId, attempt)}/result.json`;
var checkpointPath = (runId, taskId, attempt) => `${attemptDir(runId, taskId, attempt)}/checkpoint.json`;
var executionReportPath = (runId, taskId, attempt) => `${attemptDir(runId, taskId, attempt)}/execution-report.md`;
var planDir = (planId) => `.forge/plans/${planId}`;
function parsePlanPath(path) {
  const m = /^\.forge\/plans\/([^/]+)\/(.+)$/.exec(path);
  return m ? { planId: m[1], file: m[2] } : void 0;
}
var INSTRUCTION_PATHS = [
  "**/AGENTS.md",
  // Codex reads it instead of AGENTS.md, in every folder (its `project_doc_fallback_filenames` are
  // none by default; a repository sets them only in `.codex/`, protected below).
  "**/AGENTS.override.md",
  "**/CLAUDE.md",
  "**/CLAUDE.local.md",
  "**/GEMINI.md",
  ".claude/**",
  ".codex/**",
  ".agents/**",
  ".gemini/**",
  ".cursor/**",
  ".cursorrules",
  ".mcp.json",
  ".forge/prompts/**",
  ".forge/stages.yml",
  ".gitmodules",
  "**/.gitattributes"
];
var PROTECTED_PATHS = [".forge/plans/**", ".github/**", "**/.env*", ...INSTRUCTION_PATHS];
var TRAILERS = {
  run: "Forge-Run",
  task: "Forge-Task",
  attempt: "Forge-Attempt",
  agent: "Forge-Agent",
  exit: "Forge-Exit",
  /** A revision of the attempt on its PR (docs/executor.md#iterations); absent on the attempt's first run. */
  iteration: "Forge-Iteration",
  /** The runner's checkpoint commit after a stage (the stage's name): it adds only the attempt's checkpoint and its agent's conversation. */
  checkpoint: "Forge-Checkpoint"
};
var DISPATCH_INPUTS = {
  runId: "run_id",
  taskId: "task_id",
  attempt: "attempt",
  /** JSON `{ refinement?, answer? }` for the attempt: the previous attempt's refinement document or a person's answer. */
  context: "context"
};
var checkRunName = (taskId) => `forge \xB7 ${taskId}`;
var LABELS = { tracker: "forge:run", changeRequest: "forge:change-request", task: "forge:task" };

// src/core/schemas/config.ts
var forgeConfigSchema = external_exports.object({
  version: external_exports.literal(1).default(1).describe("Config format version. Only 1 exists."),
  autostart: external_exports.boolean().default(true).describe("Start a run when a plan is merged to the default branch. When false, runs start only with `/forge run <planId>`."),
  issue_sync: external_exports.enum(["tree", "linked", "off"]).default("tree").describe(
    "Which runs show on their tasks' issues (a comment kept up to date on each, the run's summary on the plan's issue, the issues closed when the final PR merges): `tree`, runs of plans built from an issue tree by `/forge plan`; `linked`, also any plan whose tasks name an `issue:`; `off`, none (see docs/formats.md#plans-from-an-issue-tree)."
  ),
  max_parallel_agents: external_exports.number().int().min(1).max(256).default(5).describe("Maximum number of agents running at once in one run (see docs/executor.md#scheduling)."),
  heartbeat_interval_seconds: external_exports.number().positive().default(30).describe("How often the runner checks the agent's progress (its output stream), in seconds (see docs/runner.md#heartbeats)."),
  stale_threshold_seconds: external_exports.number().positive().default(60).describe("Seconds without agent progress after which the runner declares the agent stalled: 2 missed heartbeats (see docs/runner.md#heartbeats)."),
  max_retries: external_exports.number().int().min(0).max(20).default(3).describe("Automatic retries per task after its first attempt; past this the task is exhausted (see docs/executor.md#retries)."),
  retry_policy: retryPolicySchema,
  low_confidence_threshold: external_exports.number().min(0).max(1).default(0.6).describe("A walkthrough whose confidence is below this raises a review.low_confidence event (see docs/executor.md#review)."),
  merge_policy: external_exports.enum(["auto", "manual", "review"]).default("auto").describe(
    "auto: the App merges a task PR once its required checks pass. manual: a person merges it. review: the App merges it once its required checks pass and a person with write access has approved its current head in a review."
  ),
  review: external_exports.object({
    max_iterations: external_exports.number().int().min(0).max(20).default(3).describe(
      "Revisions of one task PR that reviews asking for changes (or `/forge fix`) may start; past this the task waits for a person and the tracker says why."
    )
  }).prefault({}).describe("The PR feedback loop: a review asking for changes starts a revision on the same PR (see docs/executor.md#iterations)."),
  required_checks: external_exports.array(external_exports.string().min(1)).default([]).describe(
    "Names of check runs and commit-status contexts (the repository's own CI) a task PR's head must pass before Forge merges it, besides what branch protection requires; their failure starts a fix revision (ci_fix), their output given to the agent as CI output. Only these count: any token that may post a status or a check run can name it anything. Empty: Forge merges when GitHub allows and starts no CI fix."
  ),
  ci_fix: external_exports.object({
    max_attempts: external_exports.number().int().min(0).max(10).default(2).describe("Fix revisions started when the repository's own required checks fail on a task PR; past this the task waits for a person.")
  }).prefault({}).describe("Red CI on a task PR starts a fix revision with the failing checks as context (see docs/executor.md#iterations)."),
  cr_mode: external_exports.enum(["replan", "review"]).default("replan").describe("replan: a Change Request dispatches a Captain agent that writes an overlay PR. review: the CR waits for `/forge approve` or `/forge reject`."),
  refinery_approval: external_exports.boolean().default(false).describe("When true, a refinery's PR is merged only after a person comments `/forge approve` on it."),
  protected_paths: external_exports.array(external_exports.string().min(1)).default([]).describe("Globs of paths, besides .forge/plans/**, .github/**, .env* and the files agents read as instructions (AGENTS.md, CLAUDE.md, .claude/, \u2026), that a task's or refinery's PR may change only with a person's approval: Forge holds its merge until someone with write access comments `/forge approve` on it."),
  branch_template: external_exports.string().regex(/\{runId\}/, "must contain {runId}").regex(/\{taskId\}/, "must contain {taskId}").regex(/\{attempt\}/, "must contain {attempt}").default(DEFAULT_BRANCH_TEMPLATE).describe("Task branch name. Placeholders: {runId}, {taskId}, {attempt}. Run-scoped so two runs never share a branch (see docs/formats.md#branches)."),
  integration_branch_template: external_exports.string().regex(/\{runId\}/, "must contain {runId}").default(DEFAULT_INTEGRATION_BRANCH_TEMPLATE).describe("The run's integration branch, which task PRs target. Placeholder: {runId}. Forge's own names start with '_', which no task id can, so they never collide with task branches."),
  base_branch: external_exports.string().optional().describe("Branch the integration branch is cut from and the final PR targets. Default: the repository's default branch."),
  final_pr: external_exports.object({
    auto_merge: external_exports.boolean().default(false).describe(
      `Once a person with write access approves the run's final PR, Forge sets it to merge automatically (GitHub's auto-merge, by the method the base's rules allow; through the base's merge queue where it has one). Needs "Allow auto-merge" in the repository's settings. Off: a person merges it.`
    )
  }).prefault({}).describe("The run's final PR (integration branch \u2192 base) (see docs/executor.md#merge-queue-and-auto-merge)."),
  followups: external_exports.object({
    keywords: external_exports.array(external_exports.string().min(1)).default(["bug", "fix", "broken", "regression"]).describe("A follow-up containing one of these words (case-insensitive, whole word) spawns a Type 1 agent outside the DAG."),
    spawn_open_ended: external_exports.boolean().default(false).describe("Also spawn agents for follow-ups without a keyword (refactor, investigate, \u2026). Otherwise they are only logged."),
    max_per_run: external_exports.number().int().min(0).default(10).describe("Upper bound on follow-up agents spawned in one run.")
  }).prefault({}).describe("Follow-up agents spawned from walkthrough review (see docs/executor.md#follow-ups)."),
  retry_backoff: external_exports.object({
    base_seconds: external_exports.number().min(0).default(2).describe("Base delay of the exponential backoff before a retry."),
    max_seconds: external_exports.number().min(0).default(60).describe("Upper bound on the backoff delay.")
  }).prefault({}).describe("delay = min(base \xB7 2^retry + jitter(0, base), max). Jitter is derived from the task and attempt, so decisions are reproducible (see docs/executor.md#retries)."),
  timeouts: external_exports.object({
    agent_minutes: external_exports.number().positive().default(60).describe("Wall-clock limit of one agent attempt inside its job; partial work is kept."),
    idle_minutes: external_exports.number().positive().default(10).describe("The runner stops an agent that produced no output for this long; partial work is kept."),
    stage_minutes: external_exports.number().positive().default(30).describe(
      "Wall-clock limit of one stage's agent session: one that reaches it is stopped and the stage tried once more from the work it left; a second time the attempt ends timed out (exit 21). The attempt's own limit, agent_minutes, still bounds every stage."
    ),
    job_minutes: external_exports.number().positive().default(90).describe("timeout-minutes of the agent workflow job."),
    dispatch_start_minutes: external_exports.number().positive().default(15).describe("A dispatched attempt whose job has not started after this long is STALE (a lost dispatch)."),
    liveness_minutes: external_exports.number().positive().default(10).describe("A started attempt with no sign of life (job events, reconciler sweeps) for this long is STALE.")
  }).prefault({}).describe("Time limits. The runner enforces the agent ones; the App enforces dispatch and liveness."),
  agent: external_exports.object({
    adapter: external_exports.enum(ADAPTERS).default("claude").describe("Which agent CLI runs tasks (a kind's `kinds` entry or a task's `agent` may choose another)."),
    kinds: external_exports.partialRecord(external_exports.enum(AGENT_KINDS), kindAgentSchema).optional().describe(
      "Per agent kind (`1`, `2`, `3`, `refinery`): `{ agent, model }` \u2014 its agent (an adapter name, or an ordered fallback list) and the model of its implementer sessions, over `adapter` and `models.implementer`; a task's own `agent` and `model` win (see docs/runner.md#agents-per-task)."
    ),
    model: modelSpecSchema.optional().describe("A tier (low, medium, high) or a model id for every agent session without a model of its own (see docs/runner.md#model-tiers)."),
    models: external_exports.object(Object.fromEntries(MODEL_ROLES.map((r) => [r, modelSpecSchema.optional()]))).strict().optional().describe(
      "A tier or a model id per role: implementer (implement, work, fix, merge stages; default high), analyst (plan, walkthrough; medium), verifier (verify; low), sentinel (every sentinel role; low), captain (high). A role without one takes `model`, else its default tier."
    ),
    tiers: external_exports.partialRecord(
      external_exports.enum(ADAPTERS),
      external_exports.object(Object.fromEntries(
        TIER_NAMES.map((t) => [t, external_exports.string().regex(MODEL_ID, "not a model id").optional().describe(`The model of the ${t} tier.`)])
      )).strict()
    ).optional().describe("The model of each tier, per adapter, over Forge's defaults (claude: haiku, sonnet, opus; codex: gpt-5.5 at low, medium and high reasoning effort; gemini: gemini-2.5-flash, gemini-2.5-pro, gemini-2.5-pro; opencode: gpt-5.5; qwen: qwen3-coder-flash, qwen3-coder-plus, qwen3-coder-plus; copilot: claude-haiku-4-5, claude-sonnet-4-5, claude-opus-4-5)."),
    long_context: external_exports.boolean().default(false).describe(
      "Claude Code on Anthropic's API: run its models in their 1M-token context variant (the `context-1m` beta; Haiku has none). Off for other providers (another ANTHROPIC_BASE_URL, Vertex, Bedrock) and other adapters."
    ),
    command: external_exports.string().optional().describe("For adapter `command`: the executable to run (environment in, exit code and files out)."),
    max_turns: external_exports.number().int().positive().default(100).describe("Turn limit passed to the agent CLI."),
    max_depth: external_exports.number().int().min(1).max(10).default(3).describe("Spawn depth budget: how deep agent sessions may nest, the task agent's own session counting as 1, so 3 leaves two levels of sub-agents (see docs/runner.md#depth-budget)."),
    max_sub_agents: external_exports.number().int().min(0).max(100).default(10).describe(
      "Sub-agents one job may start in all, every depth counted (`forge spawn`, type 3's subtasks, the refinery's helpers); past it a spawn is refused with exit 2 and recorded in result.json's `sub_agents` (see docs/runner.md#sub-agent-cap)."
    ),
    isolation: external_exports.enum(["auto", "user", "none"]).default("auto").describe(
      "Run agents and the test command as an OS user of their own (one per job, removed with its processes at the end), so they cannot read the job's token from the runner's processes (needs root or passwordless sudo, as GitHub's hosted runners have): `auto` when possible (else a warning), `user` always (else the job fails), `none` never (see docs/runner.md#isolation)."
    )
  }).prefault({}).describe("How the runner invokes agents."),
  test_command: external_exports.string().optional().describe("Command refineries (and tasks without their own) run to verify work, e.g. `npm test`."),
  sentinel: external_exports.object({
    enabled: external_exports.boolean().default(true).describe(
      "After a type 1, 2 or 3 task's own stages, an agent of another role (the sentinel, which did not write the code) checks the work against the task's acceptance criteria and its test command; what it finds the implementer fixes, and it checks again (see docs/runner.md#the-task-sentinel). A task turns it off for itself with `sentinel: false`."
    ),
    max_cycles: external_exports.number().int().min(0).max(5).default(2).describe("Fixes the sentinel may ask for before the attempt ends with exit 10 and the sentinel's findings as its refinement document; the last fix is judged by a final check.")
  }).strict().prefault({}).describe("Independent verification of every task (refineries verify in their own test and fix stages)."),
  branch_cleanup: external_exports.enum(["on_merge", "on_complete", "never"]).default("never").describe("When Forge deletes task branches: as each PR merges, when the run completes, or never (default: GitHub's 'Automatically delete head branches' setting does it for merged PRs without an API call)."),
  workflow: external_exports.string().default("forge-agent.yml").describe("File name of the agent workflow under .github/workflows/."),
  budgets: external_exports.object({
    attempt_usd: external_exports.number().positive().optional().describe("Dollars one task attempt may spend; the runner stops the agent past it, its work kept."),
    attempt_tokens: external_exports.number().int().positive().optional().describe("Model tokens one task attempt may use."),
    task_usd: external_exports.number().positive().optional().describe("Dollars all attempts of one task together may spend."),
    run_usd: external_exports.number().positive().optional().describe("Dollars the whole run may spend; the App dispatches only what the rest can cover (each running attempt's cap reserved) and pauses the run when it is spent. `/forge budget +<amount>` raises it.")
  }).strict().prefault({}).describe("Spend caps; none by default. A task's front matter `budget` overrides the attempt and task caps (see docs/runner.md#budgets)."),
  prices: external_exports.record(
    external_exports.string().min(1),
    external_exports.object({
      input_per_mtok: external_exports.number().min(0).describe("Dollars per million input tokens."),
      output_per_mtok: external_exports.number().min(0).describe("Dollars per million output tokens."),
      cache_write_per_mtok: external_exports.number().min(0).optional().describe("Dollars per million tokens written to the prompt cache (default: the input price)."),
      cache_read_per_mtok: external_exports.number().min(0).optional().describe("Dollars per million tokens read from the prompt cache (default: the input price).")
    }).strict()
  ).default({}).describe("Model prices by model id, for spend an adapter reports as tokens (Codex) and for the runner's model proxy; `default` prices a model not listed."),
  telemetry: external_exports.object({
    otlp_endpoint: external_exports.url({ protocol: /^https?$/ }).optional().describe(
      "OpenTelemetry collector (OTLP over HTTP, e.g. `http://collector:4318`): when set, the App and the runner export traces (run \u2192 task \u2192 attempt \u2192 stage) and metrics to `<endpoint>/v1/traces` and `/v1/metrics`. Off when unset."
    ),
    service_name: external_exports.string().min(1).max(100).default("forge").describe("The `service.name` of what Forge exports.")
  }).strict().prefault({}).describe("Optional export of traces and metrics (see docs/runner.md#telemetry).")
}).strict().describe("Forge configuration, read from .github/forge.yml on the default branch.");
function defaultConfig() {
  return forgeConfigSchema.parse({});
}

// src/core/config.ts
var import_yaml = __toESM(require_dist(), 1);
var CONFIG_PATH = ".github/forge.yml";
function parseYamlConfig(file, text, schema) {
  let raw = {};
  if (text !== void 0) {
    try {
      raw = (0, import_yaml.parse)(text) ?? {};
    } catch (e) {
      const line = e.linePos?.[0]?.line;
      return {
        ok: false,
        problems: [problem({ file, line }, "unreadable-yaml", `not valid YAML: ${e.message.split("\n")[0]}`)]
      };
    }
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, config: parsed.data };
  return {
    ok: false,
    problems: zodProblems(parsed.error, file).map((p) => problem(p, agentRuleOf(p.message) ?? "invalid-frontmatter", p.message))
  };
}
function parseConfigText(text) {
  return parseYamlConfig(CONFIG_PATH, text, forgeConfigSchema);
}

// src/core/clock.ts
function sleepOn(clock, ms, signal) {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clock.clear(timer);
      reject(signal.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
var realClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clear: (timer) => clearTimeout(timer),
  sleep: (ms, signal) => sleepOn(realClock, ms, signal)
};

// src/core/retry.ts
function unitHash(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return (h >>> 0) / 4294967296;
}
function backoffMs(config, retry, salt) {
  const base2 = config.retry_backoff.base_seconds * 1e3;
  const max = config.retry_backoff.max_seconds * 1e3;
  return delayMs({ baseMs: base2, maxMs: max }, retry, unitHash(salt));
}
var GIT_REMOTE_BACKOFF = { baseMs: 2e3, maxMs: 6e4, attempts: 5 };
function delayMs(policy, retry, unit) {
  const delay = policy.baseMs * 2 ** retry + Math.min(Math.max(unit, 0), 1) * policy.baseMs;
  return Math.round(Math.min(delay, policy.maxMs));
}

// src/core/feedback.ts
var FEEDBACK_LIMITS = { message: 4e3, items: 10, checks: 20, checkName: 200, details: 8e3, steer: 2e3 };
var feedbackSchema = external_exports.object({
  source: external_exports.enum(["review", "command", "ci"]).describe("A review asking for changes, `/forge fix`, or failing required checks."),
  actor: external_exports.string().optional().describe("Who gave it (review and command)."),
  reviewId: external_exports.number().int().optional().describe("The review: its body and inline comments are read from GitHub by the job."),
  message: external_exports.string().optional().describe("The review body or the command's message, bounded."),
  headSha: external_exports.string().optional().describe("The PR head it was given on."),
  checks: external_exports.array(external_exports.string()).optional().describe("Failing required checks (ci)."),
  details: external_exports.string().optional().describe("Failing checks (ci): their summaries, annotations and the end of their logs, as the App read them, bounded.")
}).strict();
function bounded(text, max) {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}
[\u2026 cut at ${max} of ${text.length} characters]`;
}

// src/core/schemas/checkpoint.ts
var CHECKPOINT_VERSION = 1;
var MAX_CHECKPOINT_BYTES = 16 * 1024;
var sha = external_exports.string().regex(/^[0-9a-f]{40}$/);
var stage = external_exports.string().regex(/^[a-z][a-z-]{0,31}$/);
var SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
var checkpointSchema = external_exports.object({
  checkpoint_version: external_exports.literal(CHECKPOINT_VERSION).describe("Checkpoint format version."),
  created_at: external_exports.string().max(40).describe("When it was written (ISO-8601)."),
  run_id: external_exports.string().min(1).max(200).describe("The run."),
  task_id: external_exports.string().min(1).max(200).describe("The task."),
  attempt: external_exports.number().int().min(1).max(1e4).describe("The attempt that wrote it."),
  trace_id: external_exports.string().regex(/^[0-9a-f]{16}$/).describe("The attempt's trace id."),
  completed_stages: external_exports.array(external_exports.object({ name: stage.describe("The stage."), exit_code: external_exports.number().int().describe("The stage's exit code.") }).strict()).max(32).describe("Stages that ended well (exit 0 or 12), in order."),
  pending_stages: external_exports.array(stage).max(32).describe("Stages still to run, in order: a resumed attempt starts at the first."),
  depth_used: external_exports.number().int().min(0).max(10).describe("Spawn depth the attempt's sessions reached (FORGE_SPAWN_DEPTH)."),
  depth_max: external_exports.number().int().min(1).max(10).describe("The attempt's depth budget."),
  agent_session: external_exports.object({
    adapter: external_exports.enum(ADAPTERS).describe("The CLI that holds the session."),
    id: external_exports.string().regex(SESSION_ID).describe("Its session id (Claude Code's `session_id`, Codex's `thread_id`)."),
    stage: stage.describe("The stage whose session it is.")
  }).strict().optional().describe("The last agent session, which a resumed attempt continues where its adapter can."),
  head_sha: sha.describe("The branch's head when it was written: the work pushed so far.")
}).strict();
var resumeContextSchema = external_exports.object({
  fromAttempt: external_exports.number().int().min(1).describe("The attempt whose work it continues, on that attempt's branch and PR."),
  reason: external_exports.enum(RESUME_CLASSES).describe("How that attempt ended."),
  head: sha.optional().describe("The head it continues from, when that attempt ended with a record commit."),
  stage: stage.optional().describe("The first stage that attempt's checkpoint left pending."),
  session: external_exports.object({
    adapter: external_exports.enum(ADAPTERS).describe("The CLI that holds the session."),
    id: external_exports.string().regex(SESSION_ID).describe("Its session id."),
    stage: stage.describe("The stage whose session it is.")
  }).strict().optional().describe("The agent CLI's session to resume, and the stage it belongs to."),
  depthUsed: external_exports.number().int().min(0).max(10).optional().describe("Spawn depth that attempt's sessions had used.")
}).strict().describe("A resumed attempt (docs/executor.md#resuming): what it continues.");

// src/core/live-progress.ts
var liveProgressSchema = external_exports.object({
  stage: external_exports.string().max(60).optional().describe("The stage running (absent: between stages)."),
  turns: external_exports.number().int().min(0).max(1e6).optional().describe("The agent's turns so far."),
  tool: external_exports.string().max(60).optional().describe("The last tool the agent called."),
  beat: external_exports.string().max(40).describe("When the agent last showed progress (ISO-8601, the job's clock).")
}).strip();
var MARKER = /<!-- forge-live (\{[^\n]{0,1000}?\}) -->/;
function liveProgressLine(p) {
  return `<!-- forge-live ${JSON.stringify(p).replace(/</g, "\\u003c").replace(/>/g, "\\u003e")} -->`;
}
function parseLiveProgress(summary) {
  const m = summary ? MARKER.exec(summary) : null;
  if (!m) return void 0;
  try {
    const p = liveProgressSchema.safeParse(JSON.parse(m[1]));
    if (!p.success || Number.isNaN(Date.parse(p.data.beat))) return void 0;
    return p.data;
  } catch {
    return void 0;
  }
}

// src/core/task-record.ts
var holdSchema = external_exports.enum(["exhausted", "fatal", "human", "escalated", "cancelled", "budget", "blocked"]).describe(
  "exhausted: retries used up; fatal: exit 2; human: waiting for an answer (exit 3); escalated: waiting for a CR (exit 11); cancelled: exit 20 or /forge cancel; budget: stopped at its budget, waiting for /forge budget; blocked: a rule of the repository refused the job's push, waiting for a person to change it and /forge retry."
);
var steeringMessageSchema = external_exports.object({
  id: external_exports.number().int().min(1).describe("Numbered from 1 per attempt: the job delivers each once."),
  actor: external_exports.string().describe("Who steered (write access checked on GitHub)."),
  message: external_exports.string().describe("The message, bounded."),
  at: external_exports.string().describe("When the App took it.")
}).strict();
var revisionRecordSchema = external_exports.object({
  iteration: external_exports.number().int().min(0).describe(
    "0 for the attempt's first run; each review asking for changes, `/forge fix` or red CI that starts a revision adds 1 (see docs/executor.md#iterations)."
  ),
  dispatchedAt: external_exports.string().describe("When this run was dispatched."),
  startedAt: external_exports.string().optional().describe("When its job was seen running."),
  lastHeartbeat: external_exports.string().optional().describe("Last sign of life of its job."),
  progress: liveProgressSchema.optional().describe(
    "The agent's latest progress as its job's live check run told it (stage, turns, last tool, last heartbeat), read by the reconciler; shown on the tracker while the task runs (see docs/runner.md#live-progress)."
  ),
  workflowRunId: external_exports.number().int().optional().describe("Its job's workflow run."),
  priorRunId: external_exports.number().int().optional().describe("The previous revision's workflow run: a job at or before it is never this revision's."),
  walkthroughSha: external_exports.string().optional().describe("head_sha claimed by this run's walkthrough."),
  pushedSha: external_exports.string().optional().describe("Head of this run's work as read back from GitHub (the parent of the runner's record commit)."),
  protectedPaths: external_exports.array(external_exports.string()).optional().describe("Protected paths the PR changes at this run's head, as GitHub listed them: its merge waits for `/forge approve`."),
  approvedHead: external_exports.string().optional().describe("The PR head a person approved with protected paths changed: that head merges without asking again."),
  checkedHead: external_exports.string().optional().describe("The head whose PR the App read and found no protected path in, before a refinery merges its branch."),
  reviewApprovedHead: external_exports.string().optional().describe("merge_policy review: the PR head a person with write access approved in a review; only that head merges."),
  waiting: external_exports.string().optional().describe("Why the MERGE_READY task waits for a person rather than revising (a bound on revisions was reached).")
}).strict();
var squashUpstreamSchema = external_exports.object({
  branch: external_exports.string().min(1).describe("The upstream task's branch."),
  head: external_exports.string().regex(/^[0-9a-f]{40}$/).describe("The upstream's verified head (its record commit) that the job squashes.")
}).strict();
var resumePointSchema = external_exports.object({
  reason: external_exports.enum(RESUME_CLASSES).describe("How the attempt it continues ended (the retry policy's class)."),
  fromAttempt: external_exports.number().int().min(1).describe("The attempt whose work it continues."),
  branch: external_exports.string().describe("That attempt's branch, which it continues on (its PR stays the PR)."),
  prNumber: external_exports.number().int().optional().describe("That attempt's PR, when known."),
  priorRunId: external_exports.number().int().describe("That attempt's last job: only workflow runs after it are the new attempt's."),
  head: external_exports.string().regex(/^[0-9a-f]{40}$/).optional().describe("The head it continues from, when the attempt ended with a record commit."),
  stage: external_exports.string().optional().describe("The first stage its checkpoint left pending."),
  session: external_exports.object({
    adapter: external_exports.enum(ADAPTERS).describe("The CLI that holds the session."),
    id: external_exports.string().describe("Its session id."),
    stage: external_exports.string().describe("The stage whose session it is.")
  }).strict().optional().describe("The agent CLI's session to resume, and the stage it belongs to."),
  depthUsed: external_exports.number().int().min(0).optional().describe("Spawn depth the attempt's sessions had used.")
}).strict();
var attemptRecordSchema = external_exports.object({
  branch: external_exports.string().describe("The attempt's branch."),
  prNumber: external_exports.number().int().optional().describe("The attempt's PR."),
  recordSha: external_exports.string().optional().describe(
    "The runner's latest record commit on the branch: the PR's head, which the merge names. A revision's replaces its predecessor's."
  ),
  branchUpdate: external_exports.object({
    over: external_exports.string().describe("The attempt's own head (its record commit, else its pushed work) the update was made over."),
    requested: external_exports.string().optional().describe(
      "The PR head Forge asked GitHub to bring up to date (update-branch's `expected_head_sha`), until its new head is seen."
    ),
    requestedAt: external_exports.string().optional().describe("When Forge asked."),
    head: external_exports.string().optional().describe(
      "The head GitHub made: the integration branch merged into the PR's previous head, by the App. The PR's head while the attempt's own head is `over`."
    )
  }).strict().optional().describe(
    "Forge brought the PR's branch up to date with the integration branch (update-branch), as the branch's rules want before a merge (docs/executor.md#merging-under-the-repositorys-rules)."
  ),
  mergeSha: external_exports.string().optional().describe("Commit that merged the attempt's PR."),
  mergeBlockedSaid: external_exports.literal(true).optional().describe(
    "Forge said on the attempt's PR why GitHub refused its merge (one comment, updated in place): once the PR merges, that comment says so."
  ),
  hold: holdSchema.optional(),
  question: external_exports.string().optional().describe("Exit 3: the agent's question."),
  conflicts: external_exports.array(external_exports.string()).optional().describe(
    "A refinery: upstream branches the App could not merge into its branch, kept when the branch was prepared and handed to its dispatch."
  ),
  squash: external_exports.array(squashUpstreamSchema).optional().describe(
    "A refinery whose branch must keep a linear history: its upstream branches, each at the head the journal verified, that its job squashes onto the branch (one commit each) instead of the App merging them."
  ),
  contained: external_exports.array(external_exports.string()).optional().describe(
    "A refinery: upstream task ids its record commit was seen to contain (GitHub's compare) when its result arrived; its merge marks only these MERGED."
  ),
  reservedUsd: external_exports.number().min(0).optional().describe("The attempt's dollar cap, reserved from the run's budget while it runs."),
  steering: external_exports.array(steeringMessageSchema).optional().describe("`/forge steer` messages for the attempt's agent, newest last (at most 10 kept); the job polls them every heartbeat."),
  feedback: external_exports.array(feedbackSchema).optional().describe("Feedback on the attempt's PR not yet handed to a revision: the next revision takes all of it at once."),
  answered: external_exports.array(external_exports.number().int()).optional().describe(
    "Reviews of the attempt's PR a revision already took (or the revision limit met): a redelivered review starts nothing again."
  ),
  answeredHeads: external_exports.array(external_exports.string()).optional().describe("Heads whose failing checks a fix revision already took."),
  reviewIterations: external_exports.number().int().min(0).optional().describe("Revisions started by reviews or `/forge fix`."),
  ciFixes: external_exports.number().int().min(0).optional().describe("Revisions started by failing required checks."),
  agent: external_exports.enum(ADAPTERS).optional().describe("The agent (adapter) the attempt runs on, as its dispatch told its job."),
  resumed: resumePointSchema.omit({ branch: true, prNumber: true, priorRunId: true, session: true }).optional().describe("The attempt continues an earlier attempt's work on its branch and PR: which, why, and from which stage."),
  revision: revisionRecordSchema.describe("The current run of the attempt's agent.")
}).strict();
var nextAttemptSchema = external_exports.object({
  notBefore: external_exports.string().optional().describe("Backoff: not dispatched before this time."),
  refinement: external_exports.string().optional().describe("Refinement document of the previous attempt (exit 10)."),
  answer: external_exports.string().optional().describe("A person's answer or message from /forge retry."),
  resume: resumePointSchema.optional().describe("The retry policy resumes the work: the next attempt continues on this branch and PR (absent: it starts fresh)."),
  fresh: external_exports.string().optional().describe("Why the next attempt starts fresh although the retry policy would resume it (a refused checkpoint, say)."),
  switched: external_exports.object({
    from: external_exports.enum(ADAPTERS).describe("The agent of the attempt that ended."),
    reason: external_exports.string().describe("Why the next attempt goes to the next agent of the list.")
  }).strict().optional().describe("The next attempt goes to another agent than the last one's (docs/executor.md#agent-fallback).")
}).strict();
var AGENT_HISTORY = 20;
var taskStateSchema = external_exports.object({
  id: external_exports.string().describe("Task id (same as the plan node)."),
  status: taskStatusSchema,
  blockers: external_exports.number().int().min(0).describe("Dependencies not yet satisfied (MERGED, or MERGE_READY for a refinery). Kept incrementally."),
  attempts: external_exports.number().int().min(0).describe("Attempts dispatched so far: the current attempt's number; a (task, attempt) is dispatched at most once."),
  retries: external_exports.number().int().min(0).describe("Automatic retries used (manual retries and usage limits are not counted)."),
  next: nextAttemptSchema.optional().describe("What the next attempt is given: set when the task fails or is retried, taken by its dispatch."),
  lastError: external_exports.string().optional().describe("Why the last attempt failed."),
  lastErrorLog: external_exports.string().optional().describe("The page of the job whose end without a result is the last error, where its log is (the tracker links it)."),
  confidence: external_exports.number().optional().describe("Walkthrough confidence of the last completed attempt."),
  walkthroughStatus: external_exports.enum(["completed", "failed", "partial"]).optional().describe("Walkthrough status of the last completed attempt."),
  filesChanged: external_exports.array(external_exports.string()).optional().describe("Files the last completed attempt changed."),
  spentUsd: external_exports.number().min(0).optional().describe("Model spend of every finished attempt of the task, in US dollars, as the runner measured it."),
  spentTokens: external_exports.number().int().min(0).optional().describe("Model tokens (input + output) of every finished attempt of the task."),
  agentMs: external_exports.number().int().min(0).optional().describe("Time the task's agents worked, over its finished attempts (milliseconds)."),
  budgetExtraUsd: external_exports.number().min(0).optional().describe("Dollars added to the task's budget by /forge budget <task> +<amount>."),
  approved: external_exports.boolean().optional().describe("A person approved this refinery's merge (refinery_approval)."),
  fallback: external_exports.number().int().min(1).optional().describe(
    "The position in the task's agent list of the agent its next attempts go to (absent: the first): moved on by a usage limit or a provider failure."
  ),
  agents: external_exports.array(
    external_exports.object({
      attempt: external_exports.number().int().min(1).describe("The attempt."),
      agent: external_exports.enum(ADAPTERS).describe("The agent (adapter) it ran on."),
      why: external_exports.string().optional().describe("Why it ran on another agent than the attempt before it.")
    }).strict()
  ).optional().describe(`Which agent each attempt ran on, oldest first (the latest ${AGENT_HISTORY} kept).`),
  attempt: attemptRecordSchema.optional().describe("The current attempt: from its dispatch until the task is retried (absent while the task is PENDING).")
}).strict();
function newTask(id) {
  return { id, status: "PENDING", blockers: 0, attempts: 0, retries: 0 };
}
function newAttempt(branch, at, reservedUsd) {
  return { branch, ...reservedUsd !== void 0 ? { reservedUsd } : {}, revision: { iteration: 0, dispatchedAt: at } };
}
function newRevision(iteration, at, priorRunId) {
  return { iteration, dispatchedAt: at, ...priorRunId !== void 0 ? { priorRunId } : {} };
}

// src/core/task-rules.ts
var isReady = (t) => t.status === "PENDING" && t.blockers === 0;
var backoffOver = (t, now) => t.next?.notBefore === void 0 || Date.parse(t.next.notBefore) <= now;
var IN_FLIGHT_STATUSES = /* @__PURE__ */ new Set(["RUNNING", "DONE", "MERGE_READY"]);
function ownHead(t) {
  return t.attempt?.recordSha ?? t.attempt?.revision.pushedSha;
}
function prHead(t) {
  const own = ownHead(t);
  const u = t.attempt?.branchUpdate;
  return u?.head !== void 0 && u.over === own ? u.head : own;
}
function branchUpdatePending(t) {
  const u = t.attempt?.branchUpdate;
  const head = prHead(t);
  return u?.requested !== void 0 && u.over === ownHead(t) && u.requested === head ? head : void 0;
}
function attemptNumbered(t, n) {
  return t?.attempt && t.attempts === n ? t.attempt : void 0;
}
var iterationOf = (t) => t.attempt?.revision.iteration ?? 0;
function heldForProtectedPaths(t) {
  const r = t.attempt?.revision;
  return !!r?.protectedPaths?.length && r.approvedHead !== prHead(t);
}
function clearedForRefinery(t) {
  const head = prHead(t);
  const r = t.attempt?.revision;
  if (head === void 0 || !r) return false;
  return r.approvedHead === head || !r.protectedPaths?.length && r.checkedHead === head;
}
function reviewSeen(a, reviewId) {
  return (a.answered?.includes(reviewId) ?? false) || (a.feedback?.some((f) => f.reviewId === reviewId) ?? false);
}
function reviewApproved(t) {
  const head = t.attempt?.revision.reviewApprovedHead;
  return head !== void 0 && head === prHead(t);
}
function attemptRef(t) {
  const a = t.attempt;
  return {
    id: t.id,
    attempt: t.attempts,
    ...a ? { branch: a.branch } : {},
    ...a?.prNumber !== void 0 ? { prNumber: a.prNumber } : {},
    ...a?.revision.workflowRunId !== void 0 ? { workflowRunId: a.revision.workflowRunId } : {},
    ...a?.hold !== void 0 ? { hold: a.hold } : {},
    ...t.lastError !== void 0 ? { lastError: t.lastError } : {}
  };
}
function pauseReasons(pause, now) {
  const reasons = [];
  if (pause.changeRequests.length) reasons.push("change_requests");
  if (pause.manual) reasons.push("manual");
  if (pause.budget) reasons.push("budget");
  if (pause.usageLimitUntil !== void 0 && Date.parse(pause.usageLimitUntil) > now) reasons.push("usage_limit");
  return reasons;
}
var schedulingHeld = (pause, now) => pauseReasons(pause, now).some((r) => r !== "budget");
function attemptOnBranch(journal, ref, branch) {
  const t = journal?.tasks.find((x) => x.id === ref.taskId);
  if (!t?.attempt || t.attempts <= ref.attempt || t.attempt.branch !== branch) return ref;
  return { ...ref, attempt: t.attempts };
}

// src/core/stages.ts
var STAGED_AGENT_TYPES = ["1", "2", "3", "refinery", "captain"];
var STAGE_NAMES = [
  "single",
  "implement",
  "verify",
  "walkthrough",
  "plan",
  "work",
  "merge",
  "test",
  "fix",
  "write",
  "validate",
  "sentinel"
];
var STAGES_FOR = {
  "1": ["single", "implement", "verify", "walkthrough", "sentinel"],
  "2": ["single", "implement", "verify", "walkthrough", "sentinel"],
  "3": ["single", "plan", "work", "implement", "verify", "walkthrough", "sentinel"],
  refinery: ["single", "merge", "test", "fix", "verify", "walkthrough"],
  captain: ["single", "write", "validate", "walkthrough"]
};
function isStageOf(type, stage2) {
  return STAGES_FOR[type].includes(stage2);
}
var SENTINEL_TYPES = ["1", "2", "3"];
var DEFAULT_STAGES = {
  "1": ["implement", "verify", "walkthrough"],
  "2": ["implement", "verify", "walkthrough"],
  "3": ["plan", "work", "walkthrough"],
  refinery: ["merge", "test", "fix", "walkthrough"],
  captain: ["write", "validate"]
};

// src/core/effects.ts
var base = { key: external_exports.string().describe("Deterministic idempotency key.") };
var effectSchema = external_exports.discriminatedUnion("kind", [
  external_exports.object({
    ...base,
    kind: external_exports.literal("PrepareBranch").describe("Effect kind."),
    taskId: external_exports.string().describe("Task id."),
    attempt: external_exports.number().int().describe("Attempt number."),
    branch: external_exports.string().describe("Branch to create."),
    from: external_exports.string().describe("Branch to cut it from: the run's integration branch."),
    merge: external_exports.array(external_exports.string()).describe("For a refinery: upstream task branches to merge server-side; conflicts are listed for the agent.")
  }),
  external_exports.object({
    ...base,
    kind: external_exports.literal("DispatchAgent").describe("Effect kind."),
    taskId: external_exports.string().describe("Task id."),
    attempt: external_exports.number().int().describe("Attempt number."),
    branch: external_exports.string().describe("Branch concerned."),
    agentType: agentTypeSchema.describe("Agent type that runs the attempt."),
    iteration: external_exports.number().int().min(1).optional().describe("A revision of the attempt on its PR (absent: the attempt's first run)."),
    afterRunId: external_exports.number().int().optional().describe("A revision or a resumed attempt: the previous job's workflow run on the branch; a replay looks only for newer runs."),
    context: external_exports.object({
      refinement: external_exports.string().optional().describe("Refinement document of the previous attempt (exit 10)."),
      answer: external_exports.string().optional().describe("A person's answer or message from /forge retry."),
      agent: dispatchAgentSchema.optional(),
      feedback: external_exports.array(feedbackSchema).optional().describe("A revision: the feedback it must answer."),
      prNumber: external_exports.number().int().optional().describe("A revision: the PR it revises."),
      resume: resumeContextSchema.optional(),
      budget: external_exports.object({
        usd: external_exports.number().min(0).optional().describe("Dollars the attempt may spend."),
        tokens: external_exports.number().int().min(0).optional().describe("Tokens the attempt may use.")
      }).optional().describe("The attempt's caps: the runner stops the agent past them.")
    }).optional().describe("Extra context handed to the attempt.")
  }),
  external_exports.object({
    ...base,
    kind: external_exports.literal("UpsertCheckRun").describe("Effect kind."),
    taskId: external_exports.string().describe("Task id."),
    attempt: external_exports.number().int().describe("Attempt number."),
    status: taskStatusSchema,
    summary: external_exports.string().describe("One line for the check run's title.")
  }),
  external_exports.object({
    ...base,
    kind: external_exports.literal("MergePullRequest").describe("Effect kind."),
    taskId: external_exports.string().describe("Task id."),
    attempt: external_exports.number().int().describe("Attempt number."),
    branch: external_exports.string().describe("Branch concerned."),
    prNumber: external_exports.number().int().optional().describe("Pull request number, when known.")
  }),
  external_exports.object({
    ...base,
    kind: external_exports.literal("OpenPullRequest").describe(
      "Effect kind: open a MERGE_READY task's pull request its runner did not open (a job's token may not open pull requests where Actions may not), when no merge will open it."
    ),
    taskId: external_exports.string().describe("Task id."),
    attempt: external_exports.number().int().describe("Attempt number."),
    branch: external_exports.string().describe("The attempt's branch: the pull request's head.")
  }),
  external_exports.object({
    ...base,
    kind: external_exports.literal("CheckUpstream").describe("Effect kind: read what a MERGE_READY task's pull request changes before a refinery merges its branch."),
    taskId: external_exports.string().describe("The upstream task."),
    attempt: external_exports.number().int().describe("Its attempt."),
    branch: external_exports.string().describe("Its branch, which the refinery's branch would merge."),
    prNumber: external_exports.number().int().optional().describe("Its pull request number, when known."),
    refinery: external_exports.string().describe("The refinery waiting to merge it.")
  }),
  external_exports.object({
    ...base,
    kind: external_exports.literal("OpenChangeRequest").describe("Effect kind."),
    crId: external_exports.string().describe("Change Request id."),
    emittedBy: external_exports.string().describe("Task that raised it."),
    attempt: external_exports.number().int().describe("Attempt number."),
    path: external_exports.string().optional().describe("Repository path of the CR document, when known.")
  }),
  external_exports.object({ ...base, kind: external_exports.literal("DispatchCaptain").describe("Effect kind."), crId: external_exports.string().describe("Change Request id.") }),
  external_exports.object({
    ...base,
    kind: external_exports.literal("PostComment").describe("Effect kind."),
    target: external_exports.discriminatedUnion("on", [
      external_exports.object({
        on: external_exports.literal("task").describe("What the comment is on."),
        taskId: external_exports.string().describe("Task id."),
        attempt: external_exports.number().int().describe("Attempt number.")
      }),
      external_exports.object({ on: external_exports.literal("tracker").describe("What the comment is on.") }),
      external_exports.object({ on: external_exports.literal("cr").describe("What the comment is on."), crId: external_exports.string().describe("Change Request id.") })
    ]).describe("Where the comment goes: a task's PR, the run tracker or a CR issue."),
    body: external_exports.string().describe("Comment body (Markdown)."),
    updates: external_exports.string().optional().describe(
      "The key of the PostComment whose comment this one replaces in place (its marker kept), if that comment was posted; none is posted otherwise."
    )
  }),
  external_exports.object({
    ...base,
    kind: external_exports.literal("UpdateTracker").describe("Effect kind."),
    seq: external_exports.number().int().min(0).optional().describe("The journal's seq when decided: the tracker is redrawn as of this event (absent in older journals).")
  }),
  external_exports.object({
    ...base,
    kind: external_exports.literal("SpawnFollowup").describe("Effect kind."),
    followupId: external_exports.string().describe("Follow-up id."),
    sourceTaskId: external_exports.string().describe("Task whose walkthrough listed the follow-up."),
    text: external_exports.string().describe("The follow-up text."),
    branch: external_exports.string().describe("Branch concerned.")
  }),
  external_exports.object({ ...base, kind: external_exports.literal("OpenFinalPullRequest").describe("Effect kind.") }),
  external_exports.object({
    ...base,
    kind: external_exports.literal("CleanupBranches").describe("Effect kind."),
    branches: external_exports.array(external_exports.string()).describe("Branches to delete.")
  }),
  external_exports.object({
    ...base,
    kind: external_exports.literal("CancelAgent").describe("Effect kind."),
    taskId: external_exports.string().describe("Task id."),
    attempt: external_exports.number().int().describe("Attempt number."),
    workflowRunId: external_exports.number().int().optional().describe("Workflow run to cancel, when known.")
  })
]);

// src/core/journal.ts
var JOURNAL_VERSION = 2;
var planNodeSchema = external_exports.object({
  id: external_exports.string().describe("Task id."),
  kind: external_exports.enum(["task", "refinery"]).describe("A task or a refinery."),
  agentType: agentTypeSchema.describe("Agent type that runs it."),
  title: external_exports.string().default("").describe("Task title, for checks and the tracker."),
  dependencies: external_exports.array(external_exports.string()).describe("Ids it depends on."),
  paths: external_exports.array(external_exports.string()).default([]).describe("Declared file scope (globs), for conflict prediction."),
  budget: taskBudgetSchema.optional().describe("The task's own budget caps, from its front matter."),
  retryPolicy: taskRetryPolicySchema.optional().describe("The task's own retry policy, from its front matter `retry_policy`."),
  agents: external_exports.array(external_exports.enum(ADAPTERS)).min(1).optional().describe("The task's own agents in fallback order, from its front matter `agent` (absent: its kind's, else the config's)."),
  priority: external_exports.number().int().min(0).default(0).describe("Number of nodes downstream of it; ready tasks with more go first.")
}).strict();
var changeRequestStateSchema = external_exports.object({
  id: external_exports.string().describe("CR id."),
  emittedBy: external_exports.string().describe("Task that raised it."),
  attempt: external_exports.number().int().describe("Attempt of that task."),
  title: external_exports.string().describe("One-line title, the CR issue's title."),
  reason: external_exports.string().describe("Why the plan is insufficient."),
  affectedTasks: external_exports.array(external_exports.string()).default([]).describe("Task ids the CR concerns."),
  suggestedAction: external_exports.enum(["RETRY", "AMEND", "MANUAL_REVIEW"]).optional().describe("What the emitter proposes."),
  priority: external_exports.enum(["HIGH", "MEDIUM", "LOW"]).optional().describe("How urgent the emitter says it is."),
  status: external_exports.enum(["pending", "approved", "rejected", "applied"]).describe("Lifecycle state of the CR."),
  path: external_exports.string().optional().describe("Repository path of the CR document on the emitter's branch."),
  issueNumber: external_exports.number().int().optional().describe("The CR issue."),
  overlayId: external_exports.string().optional().describe("Overlay that resolved it.")
}).strict();
var followupStateSchema = external_exports.object({
  id: external_exports.string().describe("_followup-<n>: the leading '_' keeps it apart from task ids."),
  sourceTaskId: external_exports.string().describe("Task whose walkthrough listed the follow-up."),
  sourceAttempt: external_exports.number().int().describe("Attempt of that task."),
  text: external_exports.string().describe("The follow-up from the walkthrough."),
  branch: external_exports.string().describe("Branch the follow-up agent works on."),
  status: external_exports.enum(["queued", "running", "done", "merged", "failed"]).describe("queued: waiting for capacity or for the run to resume."),
  prNumber: external_exports.number().int().optional().describe("The follow-up's PR, once opened.")
}).strict();
var COMMAND_MEMORY = 200;
var journalSchema = external_exports.object({
  version: external_exports.literal(JOURNAL_VERSION).describe("Journal format version."),
  runId: external_exports.string().describe("The run."),
  planId: external_exports.string().describe("The plan the run executes."),
  planCommit: external_exports.string().describe("Commit the plan was pinned at; only a merged overlay moves it."),
  dagHash: external_exports.string().describe("sha256 of the pinned dag.json."),
  integrationBranch: external_exports.string().describe("The run's integration branch, which task PRs target."),
  baseBranch: external_exports.string().describe("Branch the integration branch was cut from and the final PR targets."),
  createdAt: external_exports.string().describe("When the run started (ISO-8601)."),
  status: external_exports.enum(["running", "completed", "cancelled"]).describe("running until every node is MERGED (completed) or the run is cancelled."),
  completedAt: external_exports.string().optional().describe("When the run completed or was cancelled."),
  seq: external_exports.number().int().min(0).describe("seq of the last event emitted; the next is seq + 1."),
  plan: external_exports.object({
    nodes: external_exports.array(planNodeSchema).describe("The DAG's nodes, overlays applied."),
    overlays: external_exports.array(external_exports.string()).default([]).describe("Ids of the applied overlays, in order.")
  }).strict().describe("The plan as the run pinned it."),
  tasks: external_exports.array(taskStateSchema).describe("State of each node; tasks[i] belongs to plan.nodes[i]."),
  merged: external_exports.number().int().min(0).describe("Number of MERGED nodes; the run completes when it equals the node count."),
  pause: external_exports.object({
    manual: external_exports.boolean().describe("Paused by /forge pause."),
    changeRequests: external_exports.array(external_exports.string()).describe("Open CRs holding the run."),
    usageLimitUntil: external_exports.string().optional().describe("Model usage limit: no dispatch before this time."),
    budget: external_exports.boolean().optional().describe(
      "The run's remaining budget cannot cover the next attempt: nothing is dispatched until /forge budget +<amount> (or running attempts spend less than they reserved)."
    )
  }).strict().describe("Why dispatching is paused, if it is."),
  changeRequests: external_exports.array(changeRequestStateSchema).describe("Change Requests raised during the run."),
  followups: external_exports.array(followupStateSchema).describe("Follow-up agents spawned from walkthrough review."),
  outbox: external_exports.array(effectSchema).describe("Effects decided but not yet acknowledged as done."),
  budgetExtraUsd: external_exports.number().min(0).optional().describe("Dollars added to the run's budget by /forge budget +<amount>."),
  commands: external_exports.object({
    comments: external_exports.array(external_exports.number().int().positive()).max(COMMAND_MEMORY).describe("Ids of the latest comments whose commands the run took, ascending."),
    below: external_exports.number().int().min(0).describe("Every comment id up to this one is taken as seen: the oldest ids forgotten to keep the list short.")
  }).strict().optional().describe("The comments whose /forge commands the run acted on: each is acted on once, however often it is delivered.")
}).strict();

// src/core/journal-migration.ts
var taskStateV1Schema = external_exports.object({
  id: external_exports.string(),
  status: taskStatusSchema,
  attempt: external_exports.number().int().min(0),
  retries: external_exports.number().int().min(0),
  blockers: external_exports.number().int().min(0),
  notBefore: external_exports.string().optional(),
  dispatchedAttempt: external_exports.number().int().min(0),
  dispatchedAt: external_exports.string().optional(),
  startedAt: external_exports.string().optional(),
  lastHeartbeat: external_exports.string().optional(),
  branch: external_exports.string().optional(),
  walkthroughSha: external_exports.string().optional(),
  pushedSha: external_exports.string().optional(),
  recordSha: external_exports.string().optional(),
  prNumber: external_exports.number().int().optional(),
  workflowRunId: external_exports.number().int().optional(),
  mergeSha: external_exports.string().optional(),
  hold: holdSchema.optional(),
  question: external_exports.string().optional(),
  context: external_exports.object({ refinement: external_exports.string().optional(), answer: external_exports.string().optional(), conflicts: external_exports.array(external_exports.string()).optional() }).strict().optional(),
  confidence: external_exports.number().optional(),
  walkthroughStatus: external_exports.enum(["completed", "failed", "partial"]).optional(),
  filesChanged: external_exports.array(external_exports.string()).optional(),
  lastError: external_exports.string().optional(),
  spentUsd: external_exports.number().min(0).optional(),
  spentTokens: external_exports.number().int().min(0).optional(),
  agentMs: external_exports.number().int().min(0).optional(),
  reservedUsd: external_exports.number().min(0).optional(),
  budgetExtraUsd: external_exports.number().min(0).optional(),
  approved: external_exports.boolean().optional(),
  protectedPaths: external_exports.array(external_exports.string()).optional(),
  approvedHead: external_exports.string().optional(),
  checkedHead: external_exports.string().optional(),
  iteration: external_exports.number().int().min(0).optional(),
  reviewIterations: external_exports.number().int().min(0).optional(),
  ciFixes: external_exports.number().int().min(0).optional(),
  feedback: external_exports.array(feedbackSchema).optional(),
  answered: external_exports.array(external_exports.number().int()).optional(),
  answeredHeads: external_exports.array(external_exports.string()).optional(),
  steering: external_exports.array(steeringMessageSchema).optional(),
  priorRunId: external_exports.number().int().optional(),
  reviewApprovedHead: external_exports.string().optional(),
  waiting: external_exports.string().optional(),
  contained: external_exports.array(external_exports.string()).optional()
}).strict();
var some = (key, value) => value === void 0 ? {} : { [key]: value };
function migrateTaskV1(t, createdAt) {
  const next = {
    ...some("notBefore", t.notBefore),
    ...some("refinement", t.context?.refinement),
    ...some("answer", t.context?.answer)
  };
  const attempts = Math.max(t.attempt, t.dispatchedAttempt);
  return {
    id: t.id,
    status: t.status,
    blockers: t.blockers,
    attempts,
    retries: t.retries,
    ...Object.keys(next).length ? { next } : {},
    ...some("lastError", t.lastError),
    ...some("confidence", t.confidence),
    ...some("walkthroughStatus", t.walkthroughStatus),
    ...some("filesChanged", t.filesChanged),
    ...some("spentUsd", t.spentUsd),
    ...some("spentTokens", t.spentTokens),
    ...some("agentMs", t.agentMs),
    ...some("budgetExtraUsd", t.budgetExtraUsd),
    ...some("approved", t.approved),
    ...t.status !== "PENDING" && attempts > 0 ? { attempt: attemptOfV1(t, createdAt) } : {}
  };
}
function attemptOfV1(t, createdAt) {
  const revision = {
    iteration: t.iteration ?? 0,
    dispatchedAt: t.dispatchedAt ?? createdAt,
    ...some("startedAt", t.startedAt),
    ...some("lastHeartbeat", t.lastHeartbeat),
    ...some("workflowRunId", t.workflowRunId),
    ...some("priorRunId", t.priorRunId),
    ...some("walkthroughSha", t.walkthroughSha),
    ...some("pushedSha", t.pushedSha),
    ...some("protectedPaths", t.protectedPaths),
    ...some("approvedHead", t.approvedHead),
    ...some("checkedHead", t.checkedHead),
    ...some("reviewApprovedHead", t.reviewApprovedHead),
    ...some("waiting", t.waiting)
  };
  return {
    // A dispatched attempt always had its branch in version 1; without one the record fails the schema.
    branch: t.branch,
    ...some("prNumber", t.prNumber),
    ...some("recordSha", t.recordSha),
    ...some("mergeSha", t.mergeSha),
    ...some("hold", t.hold),
    ...some("question", t.question),
    ...some("conflicts", t.context?.conflicts),
    ...some("contained", t.contained),
    ...some("reservedUsd", t.reservedUsd),
    ...some("steering", t.steering),
    ...some("feedback", t.feedback),
    ...some("answered", t.answered),
    ...some("answeredHeads", t.answeredHeads),
    ...some("reviewIterations", t.reviewIterations),
    ...some("ciFixes", t.ciFixes),
    revision
  };
}
function migrateTask(raw, createdAt) {
  if (!raw || typeof raw !== "object" || !("dispatchedAttempt" in raw)) return raw;
  const v1 = taskStateV1Schema.safeParse(raw);
  return v1.success ? migrateTaskV1(v1.data, createdAt) : raw;
}
var isObject = (raw) => !!raw && typeof raw === "object" && !Array.isArray(raw);
function migrateJournal(raw) {
  if (!isObject(raw) || raw.version !== 1) return raw;
  const createdAt = typeof raw.createdAt === "string" ? raw.createdAt : (/* @__PURE__ */ new Date(0)).toISOString();
  const tasks = Array.isArray(raw.tasks) ? raw.tasks.map((t) => migrateTask(t, createdAt)) : raw.tasks;
  return { ...raw, version: 2, tasks };
}
function migratePart(raw, createdAt) {
  if (!isObject(raw) || raw.version !== void 0) return raw;
  const tasks = Array.isArray(raw.tasks) ? raw.tasks.map((t) => migrateTask(t, createdAt)) : raw.tasks;
  return { version: 2, ...raw, tasks };
}
function migrateStoredRun(raw) {
  if (!isObject(raw)) return raw;
  let stored = raw;
  const facts = isObject(stored.facts) ? stored.facts : void 0;
  const old = facts?.crIssues;
  if (facts && isObject(old)) {
    const { crIssues: _dropped, ...kept } = facts;
    const journal = isObject(stored.journal) ? stored.journal : void 0;
    const changeRequests = Array.isArray(journal?.changeRequests) ? journal.changeRequests.map(
      (c) => c.issueNumber === void 0 && typeof old[c.id] === "number" ? { ...c, issueNumber: old[c.id] } : c
    ) : void 0;
    stored = { ...stored, facts: kept, ...changeRequests ? { journal: { ...journal, changeRequests } } : {} };
  }
  if (stored.version !== 1) return stored;
  return { ...stored, version: 2, journal: migrateJournal(stored.journal) };
}

// src/core/journal-parts.ts
import { createHash } from "node:crypto";
var SPLIT_AT = 200;
var PART_SIZE = 500;
var LIVE_MAX = 100;
var LAYERS_MAX = 16;
var partPath = (sha2562) => `parts/${sha2562}.json`;
var SHA256 = /^[0-9a-f]{64}$/;
var journalSplitSchema = external_exports.object({
  nodes: external_exports.number().int().min(0).describe("Number of plan nodes in the run."),
  partSize: external_exports.number().int().min(1).describe("Consecutive nodes per part."),
  parts: external_exports.array(external_exports.string().regex(SHA256)).describe("sha256 of each part's file `parts/<sha256>.json`, in node order."),
  layers: external_exports.array(external_exports.string().regex(SHA256)).default([]).describe("sha256 of each layer's file `parts/<sha256>.json`, oldest first: laid over the parts in this order."),
  live: external_exports.array(external_exports.number().int().min(0)).describe(
    "Index of each node `journal.json` carries (journal.plan.nodes[k] and journal.tasks[k] are node live[k]); they override their parts."
  )
}).strict().describe("Present when the run's nodes are kept in parts (docs/formats.md#journal-parts).");
var partVersionSchema = external_exports.literal(JOURNAL_VERSION).describe("The journal version of the part's tasks.");
var journalPartSchema = external_exports.object({
  version: partVersionSchema,
  nodes: external_exports.array(planNodeSchema),
  tasks: external_exports.array(taskStateSchema),
  checkRuns: external_exports.record(external_exports.string(), external_exports.number().int()).describe("Check run id per `<taskId>:<attempt>` of this part's tasks.")
}).strict();
var journalLayerSchema = external_exports.object({
  version: partVersionSchema,
  layer: external_exports.array(external_exports.number().int().min(0)).describe("Index of each node the layer holds."),
  nodes: external_exports.array(planNodeSchema),
  tasks: external_exports.array(taskStateSchema),
  checkRuns: external_exports.record(external_exports.string(), external_exports.number().int()).describe("Check run id per `<taskId>:<attempt>` of this layer's tasks.")
}).strict();
var keyTask = (key, index) => index.get(key.slice(0, key.lastIndexOf(":")));
var same = (a, b) => a === b || JSON.stringify(a) === JSON.stringify(b);
var isSplit = (nodes, splitAt = SPLIT_AT) => nodes > splitAt;
var sha256 = (text) => createHash("sha256").update(text, "utf8").digest("hex");
function indexOf(nodes, base2) {
  if (base2 && base2.index.size === nodes.length) return base2.index;
  return new Map(nodes.map((n, i) => [n.id, i]));
}
var groupsOf = /* @__PURE__ */ new WeakMap();
function checkRunGroups(checkRuns, index) {
  const hit = groupsOf.get(checkRuns);
  if (hit && hit.index === index) return hit;
  const entries = Object.entries(checkRuns);
  const byNode = /* @__PURE__ */ new Map();
  const orphans = [];
  entries.forEach(([key], k) => {
    const i = keyTask(key, index);
    if (i === void 0) orphans.push(k);
    else {
      const list = byNode.get(i);
      if (list) list.push(k);
      else byNode.set(i, [k]);
    }
  });
  const groups = { index, byNode, orphans, entries };
  groupsOf.set(checkRuns, groups);
  return groups;
}
function liveCheckRuns(whole, index, live) {
  const g = checkRunGroups(whole.checkRuns, index);
  const picked = [...g.orphans];
  for (const i of live) picked.push(...g.byNode.get(i) ?? []);
  picked.sort((a, b) => a - b);
  const out = {};
  for (const k of picked) out[g.entries[k][0]] = g.entries[k][1];
  return out;
}
var checkRunsChanged = /* @__PURE__ */ new WeakMap();
function changedSince(whole, base2, index) {
  const changed = /* @__PURE__ */ new Set();
  for (let i = 0; i < whole.nodes.length; i++) {
    const node = whole.nodes[i];
    const task = whole.tasks[i];
    if (!base2 || i >= base2.nodes.length) changed.add(i);
    else if (base2.nodes[i] === node && base2.tasks[i] === task) continue;
    else if (!same(base2.nodes[i], node) || !same(base2.tasks[i], task)) changed.add(i);
    else {
      base2.nodes[i] = node;
      base2.tasks[i] = task;
    }
  }
  const known = base2 && checkRunsChanged.get(base2);
  if (known && known.checkRuns === whole.checkRuns) {
    for (const i of known.changed) changed.add(i);
    return changed;
  }
  const byCheckRuns = [];
  for (const [key, id] of Object.entries(whole.checkRuns)) {
    const i = keyTask(key, index);
    if (i !== void 0 && base2?.checkRuns[key] !== id) byCheckRuns.push(i);
  }
  if (base2) checkRunsChanged.set(base2, { checkRuns: whole.checkRuns, changed: byCheckRuns });
  for (const i of byCheckRuns) changed.add(i);
  return changed;
}
function checkRunsWhere(whole, index, keep) {
  const out = {};
  for (const [key, id] of Object.entries(whole.checkRuns)) if (keep(keyTask(key, index))) out[key] = id;
  return out;
}
function partOf(whole, index, from, to) {
  const checkRuns = checkRunsWhere(whole, index, (i) => i !== void 0 && i >= from && i < to);
  return JSON.stringify({ version: JOURNAL_VERSION, nodes: whole.nodes.slice(from, to), tasks: whole.tasks.slice(from, to), checkRuns }) + "\n";
}
function layerOf(whole, index, layer) {
  const held = new Set(layer);
  const checkRuns = checkRunsWhere(whole, index, (i) => i !== void 0 && held.has(i));
  const tasks = layer.map((i) => whole.tasks[i]);
  return JSON.stringify({ version: JOURNAL_VERSION, layer, nodes: layer.map((i) => whole.nodes[i]), tasks, checkRuns }) + "\n";
}
function splitRun(whole, base2, options = {}) {
  const partSize = options.partSize ?? PART_SIZE;
  const liveMax = options.liveMax ?? LIVE_MAX;
  const layersMax = options.layersMax ?? LAYERS_MAX;
  const index = indexOf(whole.nodes, base2);
  const changed = changedSince(whole, base2, index);
  const partCount = Math.ceil(whole.nodes.length / partSize);
  const compact = !base2 || base2.nodes.length !== whole.nodes.length || base2.parts.length !== partCount || changed.size > liveMax && base2.layers.length >= layersMax;
  const write = [];
  let next;
  let live;
  if (!compact && changed.size > liveMax) {
    const layer = [...changed].sort((a, b) => a - b);
    const content = layerOf(whole, index, layer);
    const hash = sha256(content);
    write.push({ path: partPath(hash), content });
    next = {
      parts: base2.parts,
      layers: [...base2.layers, hash],
      layered: /* @__PURE__ */ new Set([...base2.layered, ...layer]),
      nodes: base2.nodes.slice(),
      tasks: base2.tasks.slice(),
      checkRuns: { ...base2.checkRuns },
      index
    };
    for (const i of layer) {
      next.nodes[i] = whole.nodes[i];
      next.tasks[i] = whole.tasks[i];
    }
    Object.assign(
      next.checkRuns,
      checkRunsWhere(whole, index, (i) => i !== void 0)
    );
    live = [];
  } else if (compact) {
    const dirty = new Set([...changed, ...base2?.layered ?? []].map((i) => Math.floor(i / partSize)));
    const parts = [];
    for (let p = 0; p < partCount; p++) {
      if (base2 && !dirty.has(p) && base2.parts[p]) {
        parts.push(base2.parts[p]);
        continue;
      }
      const content = partOf(whole, index, p * partSize, Math.min(whole.nodes.length, (p + 1) * partSize));
      const hash = sha256(content);
      parts.push(hash);
      write.push({ path: partPath(hash), content });
    }
    next = {
      parts,
      layers: [],
      layered: /* @__PURE__ */ new Set(),
      nodes: whole.nodes.slice(),
      tasks: whole.tasks.slice(),
      checkRuns: { ...whole.checkRuns },
      index
    };
    live = [];
  } else {
    next = base2;
    live = [...changed];
  }
  for (let i = 0; i < whole.tasks.length; i++) if (whole.tasks[i].status === "RUNNING") live.push(i);
  live = [...new Set(live)].sort((a, b) => a - b);
  const checkRuns = liveCheckRuns(whole, index, live);
  return {
    live: { nodes: live.map((i) => whole.nodes[i]), tasks: live.map((i) => whole.tasks[i]), checkRuns },
    split: { nodes: whole.nodes.length, partSize, parts: next.parts, layers: next.layers, live },
    write,
    base: next
  };
}
function rememberWritten(cache, written) {
  for (const w of written) {
    const hash = sha256(w.content);
    if (w.path !== partPath(hash)) continue;
    if (cache.size > 2e3) cache.clear();
    cache.set(hash, JSON.parse(w.content));
  }
}
var JournalPartsError = class extends Error {
  constructor(message) {
    super(message);
    this.name = "JournalPartsError";
  }
};
async function joinRun(live, split, readPart, cache) {
  if (split.live.length !== live.nodes.length || split.live.length !== live.tasks.length)
    throw new JournalPartsError(
      `split.live names ${split.live.length} nodes but the journal carries ${live.nodes.length} nodes and ${live.tasks.length} tasks`
    );
  async function read(hash, schema, what) {
    const hit = cache?.get(hash);
    if (hit && "layer" in hit === (schema === journalLayerSchema)) return hit;
    const text = await readPart(hash);
    if (text === null) throw new JournalPartsError(`${partPath(hash)} is missing`);
    if (sha256(text) !== hash) throw new JournalPartsError(`${partPath(hash)} does not match its hash: it was not written by Forge`);
    let raw;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new JournalPartsError(`${partPath(hash)} is not JSON: ${e.message}`);
    }
    const parsed = schema.safeParse(migratePart(raw, (/* @__PURE__ */ new Date(0)).toISOString()));
    if (!parsed.success)
      throw new JournalPartsError(`${partPath(hash)} is not a journal ${what}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    if (cache) {
      if (cache.size > 2e3) cache.clear();
      cache.set(hash, parsed.data);
    }
    return parsed.data;
  }
  const [parts, layers] = await Promise.all([
    Promise.all(split.parts.map((hash) => read(hash, journalPartSchema, "part"))),
    Promise.all(split.layers.map((hash) => read(hash, journalLayerSchema, "layer")))
  ]);
  const nodes = [];
  const tasks = [];
  const checkRuns = {};
  for (const [p, part] of parts.entries()) {
    const expected = Math.min(split.partSize, split.nodes - p * split.partSize);
    if (part.nodes.length !== expected || part.tasks.length !== expected)
      throw new JournalPartsError(`${partPath(split.parts[p])} holds ${part.nodes.length} nodes where ${expected} were expected`);
    nodes.push(...part.nodes);
    tasks.push(...part.tasks);
    Object.assign(checkRuns, part.checkRuns);
  }
  if (nodes.length !== split.nodes) throw new JournalPartsError(`the parts hold ${nodes.length} nodes, the journal names ${split.nodes}`);
  const layered = /* @__PURE__ */ new Set();
  for (const [l, layer] of layers.entries()) {
    if (layer.nodes.length !== layer.layer.length || layer.tasks.length !== layer.layer.length)
      throw new JournalPartsError(`${partPath(split.layers[l])} names ${layer.layer.length} nodes but holds ${layer.nodes.length}`);
    for (const [k, i] of layer.layer.entries()) {
      if (i >= nodes.length) throw new JournalPartsError(`${partPath(split.layers[l])} names node ${i} of ${nodes.length}`);
      nodes[i] = layer.nodes[k];
      tasks[i] = layer.tasks[k];
      layered.add(i);
    }
    Object.assign(checkRuns, layer.checkRuns);
  }
  const base2 = {
    parts: [...split.parts],
    layers: [...split.layers],
    layered,
    nodes: nodes.slice(),
    tasks: tasks.slice(),
    checkRuns: { ...checkRuns },
    index: new Map(nodes.map((n, i) => [n.id, i]))
  };
  for (const [k, i] of split.live.entries()) {
    if (i >= nodes.length) throw new JournalPartsError(`split.live names node ${i} of ${nodes.length}`);
    nodes[i] = live.nodes[k];
    tasks[i] = live.tasks[k];
  }
  for (const [key, id] of Object.entries(live.checkRuns)) checkRuns[key] = id;
  return { whole: { nodes, tasks, checkRuns }, base: base2 };
}

// src/core/schemas/change-request.ts
var CHANGE_REQUEST_LIMITS = {
  bytes: 65536,
  title: 200,
  reason: 4e3,
  suggestedChanges: 8e3,
  affectedTasks: 50
};
var CR_TASK_ID = /^_?[a-z0-9][a-z0-9._-]{0,99}$/;
var ONE_LINE = /^[^\r\n]*$/;
var agentFields = {
  title: external_exports.string().trim().min(1).max(CHANGE_REQUEST_LIMITS.title).regex(ONE_LINE, "must be one line").describe("One-line title, in the emitter's words: the issue's title."),
  reason: external_exports.string().trim().min(1).max(CHANGE_REQUEST_LIMITS.reason).describe("Why the plan is insufficient."),
  affected_tasks: external_exports.array(external_exports.string().regex(CR_TASK_ID, "must be a task id")).max(CHANGE_REQUEST_LIMITS.affectedTasks).default([]).describe("Task ids the CR concerns (the runner puts the emitter here when the agent names none)."),
  suggested_action: external_exports.enum(["RETRY", "AMEND", "MANUAL_REVIEW"]).describe("What the emitter proposes."),
  priority: external_exports.enum(["HIGH", "MEDIUM", "LOW"]).default("MEDIUM").describe("How urgent it is."),
  suggested_changes: external_exports.string().max(CHANGE_REQUEST_LIMITS.suggestedChanges).default("").describe("Free text: tasks or edges the emitter suggests adding.")
};
var changeRequestFrontmatterSchema = external_exports.object({
  id: external_exports.string().regex(/^cr-_?[a-z0-9][a-z0-9._-]*$/, "must look like cr-<slug>").describe("CR id, unique within the run."),
  run_id: external_exports.string().min(1).describe("The run that raised it."),
  title: agentFields.title,
  emitted_by: external_exports.string().regex(CR_TASK_ID, "must be a task id").describe("Task id of the refinery or agent that raised it."),
  emitted_at: external_exports.string().describe("When it was raised (ISO-8601)."),
  status: external_exports.enum(["pending", "approved", "rejected", "applied"]).default("pending").describe("Lifecycle state."),
  reason: agentFields.reason,
  affected_tasks: agentFields.affected_tasks,
  suggested_action: agentFields.suggested_action,
  priority: agentFields.priority,
  suggested_changes: agentFields.suggested_changes
}).strict().describe("A Change Request: the plan needs amending before the run can go on.");
var CHANGE_REQUEST_RUNNER_FIELDS = ["id", "run_id", "emitted_by", "emitted_at", "status"];
var agentChangeRequestSchema = external_exports.object({
  ...agentFields,
  ...Object.fromEntries(CHANGE_REQUEST_RUNNER_FIELDS.map((k) => [k, external_exports.unknown().optional()]))
}).strict();
var CHANGE_REQUEST_BODY_SECTIONS = ["Description", "Impact Assessment", "Proposed Resolution"];

// src/core/render/as-data.ts
var FORGE_MARKER = /<!--\s*forge[\s\S]*?(?:-->|$)/gi;
var FORGE_OPENER = /<!--(?=\s*forge)/gi;
var MENTION = /(?<!\w)@(?=[A-Za-z0-9])/g;
var MENTION_BREAK = "\u200B";
function stripForgeMarkers(text) {
  return text.replace(FORGE_MARKER, "").replace(FORGE_OPENER, "&lt;!--");
}
function neutralizeMentions(text) {
  return text.replace(MENTION, `@${MENTION_BREAK}`);
}
function asData(text) {
  return neutralizeMentions(stripForgeMarkers(text));
}
function fenceFor(text) {
  let longest = 0;
  let run = 0;
  for (const ch of text) {
    run = ch === "`" ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return "`".repeat(Math.max(3, longest + 1));
}
function inlineData(text, max = 200) {
  const line = text.slice(0, max).replace(/[\r\n\t]+/g, " ");
  return asData(line.replace(/[\\`*_[\]<>|~]/g, (c) => `\\${c}`));
}

// src/core/schemas/walkthrough.ts
var walkthroughFrontmatterSchema = external_exports.object({
  task_id: external_exports.string().min(1).describe("The task (or follow-up) id."),
  run_id: external_exports.string().min(1).describe("The run id."),
  attempt: external_exports.number().int().min(1).describe("Attempt number, from 1."),
  branch: external_exports.string().min(1).describe("Task branch; filled in by the runner."),
  base_ref: external_exports.string().min(1).describe("Ref the branch was cut from; filled in by the runner."),
  head_sha: external_exports.string().regex(/^[0-9a-f]{40}$/, "must be a 40-character commit sha").describe("Commit the walkthrough describes; filled in by the runner."),
  status: external_exports.enum(["completed", "failed", "partial"]).describe("The agent's verdict on its own work."),
  confidence: external_exports.number().min(0).max(1).describe("The agent's self-assessed confidence, 0\u20131."),
  time_spent_minutes: external_exports.number().min(0).describe("Wall-clock minutes; measured by the runner."),
  files_changed: external_exports.array(external_exports.object({ path: external_exports.string().min(1).describe("Repository-relative path."), reason: external_exports.string().describe("Why it changed.") }).strict()).describe("Files changed on the branch; the list is measured by the runner, the reasons come from the agent."),
  tests: external_exports.array(
    external_exports.object({
      name: external_exports.string().min(1).describe("Test name."),
      result: external_exports.enum(["pass", "fail", "skip", "error"]).describe("Outcome.")
    }).strict()
  ).default([]).describe("Tests the agent ran and their results."),
  risks: external_exports.array(external_exports.string()).default([]).describe("Risks the reviewer should know; each becomes a warning event."),
  followups: external_exports.array(external_exports.string()).default([]).describe("Work left for later; bug-like ones spawn follow-up agents."),
  agent: external_exports.string().optional().describe("Agent adapter that did the work (claude, codex, gemini, opencode, qwen, copilot, command)."),
  model: external_exports.string().optional().describe("Model used, where known."),
  models: external_exports.array(
    external_exports.object({
      stage: external_exports.string().min(1).describe("The stage."),
      role: external_exports.enum(MODEL_ROLES).describe("Its sessions' role (implementer, analyst, verifier, sentinel, captain)."),
      tier: external_exports.enum(TIER_NAMES).optional().describe("The tier the model came from, when it came from one."),
      model: external_exports.string().optional().describe("The model asked of the CLI (absent: the CLI's own default).")
    }).strict()
  ).max(32).optional().describe("The model of each stage the attempt ran, as the runner chose it (see docs/runner.md#model-tiers)."),
  cost_usd: external_exports.number().min(0).optional().describe("Model cost in US dollars, where known."),
  turns: external_exports.number().int().min(0).optional().describe("Agent turns used, where known.")
}).strict().describe("A task walkthrough: what the agent did, for reviewers and for the executor's review.");
var WALKTHROUGH_BODY_SECTIONS = ["Summary", "Approach", "Issues Encountered", "Testing"];

// src/core/schemas/agent-result.ts
var sha2 = external_exports.string().regex(/^[0-9a-f]{40}$/);
var exitCodeSchema = external_exports.union(ALL_EXIT_CODES.map((n) => external_exports.literal(n))).describe("Exit code: 0 success, 1 failure, 2 depth exceeded, 3 human input, 10 refinement, 11 escalation, 12 partial, 20 interrupted, 21 timeout (see docs/runner.md#exit-codes).");
var agentResultSchema = external_exports.object({
  version: external_exports.literal(1).describe("Result format version."),
  run_id: external_exports.string().min(1).describe("The run id."),
  task_id: external_exports.string().min(1).describe("The task or follow-up id."),
  attempt: external_exports.number().int().min(1).describe("Attempt number."),
  exit_code: exitCodeSchema,
  branch: external_exports.string().min(1).describe("Branch the runner pushed."),
  head_sha: external_exports.string().regex(/^[0-9a-f]{40}$/).optional().describe("The agent's work commit (the walkthrough's head_sha). The record commit holding this file is its child and adds only the attempt's record folder."),
  squashed: external_exports.array(
    external_exports.object({
      branch: external_exports.string().min(1).describe("The upstream task's branch."),
      head_sha: sha2.describe("The upstream head the runner squashed (git merge --squash)."),
      commit_sha: sha2.describe(
        "The runner's commit on the refinery's branch that holds it: its squash commit, or the head that already held that content."
      )
    }).strict()
  ).optional().describe(
    "A refinery whose branch must keep a linear history: each upstream the runner squashed onto the branch (docs/executor.md#merging-under-the-repositorys-rules). The App counts an upstream contained when its verified head is listed here and the commit is an ancestor of the record commit."
  ),
  walkthrough_path: external_exports.string().optional().describe("Repository path of the walkthrough, when one was written."),
  walkthrough: walkthroughFrontmatterSchema.optional().describe("The validated walkthrough frontmatter, so the App reads one file per result."),
  error: external_exports.string().optional().describe("Why the attempt failed, for people (shown in the check run)."),
  refinement: external_exports.string().optional().describe("Refinement document (exit 10): what the next attempt must fix."),
  question: external_exports.string().optional().describe("Question for a person (exit 3); answered with `/forge retry <answer>`."),
  change_request_path: external_exports.string().optional().describe("Repository path of the Change Request document (exit 11)."),
  change_request: changeRequestFrontmatterSchema.optional().describe("The Change Request's front matter (exit 11), as the runner validated and completed it: the agent's title, reason and suggestions."),
  rate_limited_until: external_exports.string().optional().describe("The model's usage limit resets at this time (ISO-8601); the attempt is not counted as a failure."),
  started_at: external_exports.string().describe("When the agent started (ISO-8601)."),
  finished_at: external_exports.string().describe("When the job finished (ISO-8601)."),
  agent: external_exports.string().optional().describe("Adapter used."),
  model: external_exports.string().optional().describe("Model used."),
  cost_usd: external_exports.number().min(0).optional().describe("Model cost in US dollars."),
  turns: external_exports.number().int().min(0).optional().describe("Turns used."),
  tokens: external_exports.object({
    input: external_exports.number().int().min(0).describe("Input tokens (cache reads and writes included)."),
    output: external_exports.number().int().min(0).describe("Output tokens.")
  }).optional().describe("Model tokens of the attempt, where the adapter or the runner's model proxy counted them."),
  agent_ms: external_exports.number().int().min(0).optional().describe("How long the agent ran (milliseconds), by the job's clock."),
  sentinel: external_exports.object({
    role: external_exports.literal("sentinel").describe("The role that checked the work: never the implementer's."),
    grade: external_exports.enum(["PASS", "WARN", "FAIL"]).describe("The verdict: FAIL ends the attempt with exit 10 and the findings as its refinement document."),
    cycles: external_exports.number().int().min(0).describe("Checks that found something to fix, or that passed (the final check after the last fix is not one)."),
    fixes: external_exports.number().int().min(0).describe("Fix sessions of the implementer the sentinel's findings started."),
    blocking_counts: external_exports.array(external_exports.number().int().min(0)).describe("Blocking problems after each check, in order.")
  }).strict().optional().describe("The task sentinel's verdict (see docs/runner.md#the-task-sentinel), when its stage ran to one."),
  checkpoint: checkpointSchema.optional().describe(
    "The runner's last checkpoint of the attempt: the stages done and pending, the depth used, the agent CLI's session and the head pushed. The App checks it before a retry resumes from it; one that does not hold is refused and the retry starts fresh (see docs/executor.md#resuming)."
  ),
  budget_exceeded: external_exports.object({
    limit_usd: external_exports.number().min(0).optional().describe("The attempt's dollar cap."),
    limit_tokens: external_exports.number().int().min(0).optional().describe("The attempt's token cap."),
    spent_usd: external_exports.number().min(0).optional().describe("Dollars spent when the agent was stopped."),
    spent_tokens: external_exports.number().int().min(0).optional().describe("Tokens used when the agent was stopped.")
  }).strict().optional().describe("The runner stopped the agent when it crossed the attempt's budget (exit 20); its work is committed and pushed."),
  sub_agents: external_exports.object({
    limit: external_exports.number().int().min(0).describe("The job's cap (`agent.max_sub_agents`)."),
    spawned: external_exports.number().int().min(0).describe("Sub-agents started, every depth counted."),
    refused: external_exports.number().int().min(0).describe("Spawns refused because the cap was reached (exit 2, `sub_agents_exceeded`)."),
    refusals: external_exports.array(
      external_exports.object({
        at: external_exports.string().describe("When (ISO-8601)."),
        agentType: external_exports.string().optional().describe("The type asked for."),
        depth: external_exports.number().int().min(0).describe("Depth the sub-agent would have run at."),
        message: external_exports.string().describe("What the spawn answered.")
      }).strict()
    ).optional().describe("The first refusals (at most 20).")
  }).strict().optional().describe("Sub-agents of the attempt against the job's cap (see docs/runner.md#sub-agent-cap)."),
  proxy: external_exports.object({
    requests: external_exports.number().int().min(0).describe("Model answers that reported usage."),
    input_tokens: external_exports.number().int().min(0).describe("Input tokens, cache reads and writes included."),
    output_tokens: external_exports.number().int().min(0).describe("Output tokens."),
    cost_usd: external_exports.number().min(0).optional().describe("The tokens priced by the config's `prices` (absent when a model has no price).")
  }).strict().optional().describe("What the runner's model proxy measured of the attempt's model calls (tokens from the API's answers, priced by `prices`).")
}).strict().describe("The runner's report of one attempt.");

// src/core/render/steering.ts
var OPEN = "<!-- forge:steer ";
var CLOSE = " -->";
var inert = (value) => JSON.stringify(value).replace(/-/g, "\\u002d").replace(/>/g, "\\u003e");
function steeringComment(note) {
  const shown = asData(note.message).split("\n").map((l) => `> ${l}`).join("\n");
  return [
    `${OPEN}${inert(note)}${CLOSE}`,
    `**Steering** ${note.id} for \`${note.taskId}\` from \`${note.actor}\` (write access verified by Forge): the agent gets it at the start of its next stage.`,
    "",
    shown
  ].join("\n");
}
function readSteeringComment(body) {
  const start = body.indexOf(OPEN);
  if (start < 0 || start > 1e3) return void 0;
  const end = body.indexOf(CLOSE, start + OPEN.length);
  if (end < 0) return void 0;
  try {
    const n = JSON.parse(body.slice(start + OPEN.length, end));
    const ok = typeof n.runId === "string" && typeof n.taskId === "string" && typeof n.attempt === "number" && typeof n.id === "number" && typeof n.actor === "string" && typeof n.message === "string";
    return ok ? n : void 0;
  } catch {
    return void 0;
  }
}

export {
  RUN_ID_PATTERN,
  runIdFor,
  BRANCH_PREFIX,
  runBranchPrefix,
  stateBranch,
  parseStateBranch,
  integrationBranch,
  isReservedBranch,
  branchName,
  branchParser,
  followupId,
  FOLLOWUP_ID,
  isFollowupId,
  parseFollowupBranch,
  captainId,
  CAPTAIN_ID,
  parseCaptainId,
  captainBranch,
  planRunId,
  PLAN_RUN_ID,
  planCaptainId,
  CAPTAIN_PLAN_ID,
  parsePlanCaptainId,
  planCaptainBranch,
  JOURNAL_FILE,
  eventSegmentFile,
  taskRecordsDir,
  attemptDir,
  walkthroughPath,
  resultPath,
  checkpointPath,
  executionReportPath,
  planDir,
  parsePlanPath,
  PROTECTED_PATHS,
  TRAILERS,
  DISPATCH_INPUTS,
  checkRunName,
  LABELS,
  forgeConfigSchema,
  defaultConfig,
  CONFIG_PATH,
  parseYamlConfig,
  parseConfigText,
  realClock,
  backoffMs,
  GIT_REMOTE_BACKOFF,
  delayMs,
  FEEDBACK_LIMITS,
  feedbackSchema,
  bounded,
  CHECKPOINT_VERSION,
  MAX_CHECKPOINT_BYTES,
  checkpointSchema,
  resumeContextSchema,
  liveProgressLine,
  parseLiveProgress,
  squashUpstreamSchema,
  AGENT_HISTORY,
  newTask,
  newAttempt,
  newRevision,
  JOURNAL_VERSION,
  COMMAND_MEMORY,
  journalSchema,
  migrateJournal,
  migrateStoredRun,
  SPLIT_AT,
  partPath,
  journalSplitSchema,
  isSplit,
  splitRun,
  rememberWritten,
  JournalPartsError,
  joinRun,
  isReady,
  backoffOver,
  IN_FLIGHT_STATUSES,
  ownHead,
  prHead,
  branchUpdatePending,
  attemptNumbered,
  iterationOf,
  heldForProtectedPaths,
  clearedForRefinery,
  reviewSeen,
  reviewApproved,
  attemptRef,
  pauseReasons,
  schedulingHeld,
  attemptOnBranch,
  require_picomatch2 as require_picomatch,
  walkthroughFrontmatterSchema,
  WALKTHROUGH_BODY_SECTIONS,
  CHANGE_REQUEST_LIMITS,
  changeRequestFrontmatterSchema,
  agentChangeRequestSchema,
  CHANGE_REQUEST_BODY_SECTIONS,
  STAGED_AGENT_TYPES,
  STAGE_NAMES,
  isStageOf,
  SENTINEL_TYPES,
  DEFAULT_STAGES,
  stripForgeMarkers,
  asData,
  fenceFor,
  inlineData,
  agentResultSchema,
  steeringComment,
  readSteeringComment
};

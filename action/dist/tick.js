import { createRequire as __forgeCreateRequire } from 'node:module';
const require = __forgeCreateRequire(import.meta.url);
import {
  Telemetry,
  dispatchSpanId,
  dispatchTraceparent,
  runSpanId,
  runTraceId,
  taskSpanId
} from "./chunk-4N4ZCUVB.js";
import {
  AGENT_HISTORY,
  BRANCH_PREFIX,
  CHANGE_REQUEST_LIMITS,
  COMMAND_MEMORY,
  CONFIG_PATH,
  DISPATCH_INPUTS,
  FEEDBACK_LIMITS,
  IN_FLIGHT_STATUSES,
  JOURNAL_FILE,
  JOURNAL_VERSION,
  JournalPartsError,
  LABELS,
  MAX_CHECKPOINT_BYTES,
  PROTECTED_PATHS,
  SPLIT_AT,
  TRAILERS,
  agentResultSchema,
  asData,
  attemptNumbered,
  attemptOnBranch,
  attemptRef,
  backoffMs,
  backoffOver,
  bounded,
  branchName,
  branchParser,
  branchUpdatePending,
  captainBranch,
  captainId,
  changeRequestFrontmatterSchema,
  checkRunName,
  checkpointPath,
  checkpointSchema,
  clearedForRefinery,
  defaultConfig,
  eventSegmentFile,
  executionReportPath,
  fenceFor,
  followupId,
  forgeConfigSchema,
  heldForProtectedPaths,
  inlineData,
  integrationBranch,
  isFollowupId,
  isReady,
  isReservedBranch,
  isSplit,
  isStageOf,
  iterationOf,
  joinRun,
  journalSchema,
  journalSplitSchema,
  migrateStoredRun,
  newAttempt,
  newRevision,
  newTask,
  ownHead,
  parseConfigText,
  parseFollowupBranch,
  parseLiveProgress,
  parsePlanPath,
  parseStateBranch,
  partPath,
  pauseReasons,
  planCaptainBranch,
  planCaptainId,
  planDir,
  planRunId,
  prHead,
  realClock,
  rememberWritten,
  require_picomatch,
  resultPath,
  reviewApproved,
  reviewSeen,
  runBranchPrefix,
  runIdFor,
  schedulingHeld,
  splitRun,
  squashUpstreamSchema,
  stateBranch,
  steeringComment,
  stripForgeMarkers,
  walkthroughPath
} from "./chunk-K7CJKUVV.js";
import {
  Octokit,
  RequestError,
  createTokenAuth,
  getUserAgent,
  paginateRest,
  request,
  require_light,
  restEndpointMethods,
  retry
} from "./chunk-MOSYCUKF.js";
import {
  AGENT_REASON_MAX,
  EXIT_CODES,
  agentList,
  agentTypeSchema,
  agentsOf,
  external_exports,
  findCycles,
  formatProblem,
  parsePlan,
  readFrontMatter,
  require_dist,
  succeeded,
  taskStatusSchema,
  validateDagChange,
  validatePlan,
  zodProblems
} from "./chunk-SL7VK6UQ.js";
import {
  getInput,
  info,
  setFailed,
  setSecret
} from "./chunk-TKSPUYDL.js";
import "./chunk-7RVEMTZD.js";
import {
  __commonJS,
  __require,
  __toESM
} from "./chunk-54WUDIML.js";

// node_modules/deepmerge/dist/cjs.js
var require_cjs = __commonJS({
  "node_modules/deepmerge/dist/cjs.js"(exports2, module2) {
    "use strict";
    var isMergeableObject = function isMergeableObject2(value) {
      return isNonNullObject(value) && !isSpecial(value);
    };
    function isNonNullObject(value) {
      return !!value && typeof value === "object";
    }
    function isSpecial(value) {
      var stringValue = Object.prototype.toString.call(value);
      return stringValue === "[object RegExp]" || stringValue === "[object Date]" || isReactElement(value);
    }
    var canUseSymbol = typeof Symbol === "function" && Symbol.for;
    var REACT_ELEMENT_TYPE = canUseSymbol ? /* @__PURE__ */ Symbol.for("react.element") : 60103;
    function isReactElement(value) {
      return value.$$typeof === REACT_ELEMENT_TYPE;
    }
    function emptyTarget(val) {
      return Array.isArray(val) ? [] : {};
    }
    function cloneUnlessOtherwiseSpecified(value, options2) {
      return options2.clone !== false && options2.isMergeableObject(value) ? deepmerge(emptyTarget(value), value, options2) : value;
    }
    function defaultArrayMerge(target, source, options2) {
      return target.concat(source).map(function(element) {
        return cloneUnlessOtherwiseSpecified(element, options2);
      });
    }
    function getMergeFunction(key, options2) {
      if (!options2.customMerge) {
        return deepmerge;
      }
      var customMerge = options2.customMerge(key);
      return typeof customMerge === "function" ? customMerge : deepmerge;
    }
    function getEnumerableOwnPropertySymbols(target) {
      return Object.getOwnPropertySymbols ? Object.getOwnPropertySymbols(target).filter(function(symbol) {
        return Object.propertyIsEnumerable.call(target, symbol);
      }) : [];
    }
    function getKeys(target) {
      return Object.keys(target).concat(getEnumerableOwnPropertySymbols(target));
    }
    function propertyIsOnObject(object, property) {
      try {
        return property in object;
      } catch (_) {
        return false;
      }
    }
    function propertyIsUnsafe(target, key) {
      return propertyIsOnObject(target, key) && !(Object.hasOwnProperty.call(target, key) && Object.propertyIsEnumerable.call(target, key));
    }
    function mergeObject(target, source, options2) {
      var destination = {};
      if (options2.isMergeableObject(target)) {
        getKeys(target).forEach(function(key) {
          destination[key] = cloneUnlessOtherwiseSpecified(target[key], options2);
        });
      }
      getKeys(source).forEach(function(key) {
        if (propertyIsUnsafe(target, key)) {
          return;
        }
        if (propertyIsOnObject(target, key) && options2.isMergeableObject(source[key])) {
          destination[key] = getMergeFunction(key, options2)(target[key], source[key], options2);
        } else {
          destination[key] = cloneUnlessOtherwiseSpecified(source[key], options2);
        }
      });
      return destination;
    }
    function deepmerge(target, source, options2) {
      options2 = options2 || {};
      options2.arrayMerge = options2.arrayMerge || defaultArrayMerge;
      options2.isMergeableObject = options2.isMergeableObject || isMergeableObject;
      options2.cloneUnlessOtherwiseSpecified = cloneUnlessOtherwiseSpecified;
      var sourceIsArray = Array.isArray(source);
      var targetIsArray = Array.isArray(target);
      var sourceAndTargetTypesMatch = sourceIsArray === targetIsArray;
      if (!sourceAndTargetTypesMatch) {
        return cloneUnlessOtherwiseSpecified(source, options2);
      } else if (sourceIsArray) {
        return options2.arrayMerge(target, source, options2);
      } else {
        return mergeObject(target, source, options2);
      }
    }
    deepmerge.all = function deepmergeAll(array, options2) {
      if (!Array.isArray(array)) {
        throw new Error("first argument should be an array");
      }
      return array.reduce(function(prev, next) {
        return deepmerge(prev, next, options2);
      }, {});
    };
    var deepmerge_1 = deepmerge;
    module2.exports = deepmerge_1;
  }
});

// node_modules/pino-std-serializers/lib/err-helpers.js
var require_err_helpers = __commonJS({
  "node_modules/pino-std-serializers/lib/err-helpers.js"(exports2, module2) {
    "use strict";
    var isErrorLike = (err) => {
      return err && typeof err.message === "string";
    };
    var getErrorCause = (err) => {
      if (!err) return;
      const cause = err.cause;
      if (typeof cause === "function") {
        const causeResult = err.cause();
        return isErrorLike(causeResult) ? causeResult : void 0;
      } else {
        return isErrorLike(cause) ? cause : void 0;
      }
    };
    var _stackWithCauses = (err, seen) => {
      if (!isErrorLike(err)) return "";
      const stack = err.stack || "";
      if (seen.has(err)) {
        return stack + "\ncauses have become circular...";
      }
      const cause = getErrorCause(err);
      if (cause) {
        seen.add(err);
        return stack + "\ncaused by: " + _stackWithCauses(cause, seen);
      } else {
        return stack;
      }
    };
    var stackWithCauses = (err) => _stackWithCauses(err, /* @__PURE__ */ new Set());
    var _messageWithCauses = (err, seen, skip) => {
      if (!isErrorLike(err)) return "";
      const message = skip ? "" : err.message || "";
      if (seen.has(err)) {
        return message + ": ...";
      }
      const cause = getErrorCause(err);
      if (cause) {
        seen.add(err);
        const skipIfVErrorStyleCause = typeof err.cause === "function";
        return message + (skipIfVErrorStyleCause ? "" : ": ") + _messageWithCauses(cause, seen, skipIfVErrorStyleCause);
      } else {
        return message;
      }
    };
    var messageWithCauses = (err) => _messageWithCauses(err, /* @__PURE__ */ new Set());
    module2.exports = {
      isErrorLike,
      getErrorCause,
      stackWithCauses,
      messageWithCauses
    };
  }
});

// node_modules/pino-std-serializers/lib/err-proto.js
var require_err_proto = __commonJS({
  "node_modules/pino-std-serializers/lib/err-proto.js"(exports2, module2) {
    "use strict";
    var seen = /* @__PURE__ */ Symbol("circular-ref-tag");
    var rawSymbol = /* @__PURE__ */ Symbol("pino-raw-err-ref");
    var pinoErrProto = Object.create({}, {
      type: {
        enumerable: true,
        writable: true,
        value: void 0
      },
      message: {
        enumerable: true,
        writable: true,
        value: void 0
      },
      stack: {
        enumerable: true,
        writable: true,
        value: void 0
      },
      aggregateErrors: {
        enumerable: true,
        writable: true,
        value: void 0
      },
      raw: {
        enumerable: false,
        get: function() {
          return this[rawSymbol];
        },
        set: function(val) {
          this[rawSymbol] = val;
        }
      }
    });
    Object.defineProperty(pinoErrProto, rawSymbol, {
      writable: true,
      value: {}
    });
    module2.exports = {
      pinoErrProto,
      pinoErrorSymbols: {
        seen,
        rawSymbol
      }
    };
  }
});

// node_modules/pino-std-serializers/lib/err.js
var require_err = __commonJS({
  "node_modules/pino-std-serializers/lib/err.js"(exports2, module2) {
    "use strict";
    module2.exports = errSerializer;
    var { messageWithCauses, stackWithCauses, isErrorLike } = require_err_helpers();
    var { pinoErrProto, pinoErrorSymbols } = require_err_proto();
    var { seen } = pinoErrorSymbols;
    var { toString } = Object.prototype;
    function errSerializer(err) {
      if (!isErrorLike(err)) {
        return err;
      }
      err[seen] = void 0;
      const _err = Object.create(pinoErrProto);
      _err.type = toString.call(err.constructor) === "[object Function]" ? err.constructor.name : err.name;
      _err.message = messageWithCauses(err);
      _err.stack = stackWithCauses(err);
      if (Array.isArray(err.errors)) {
        _err.aggregateErrors = err.errors.map((err2) => errSerializer(err2));
      }
      for (const key in err) {
        if (_err[key] === void 0) {
          const val = err[key];
          if (isErrorLike(val)) {
            if (key !== "cause" && !Object.prototype.hasOwnProperty.call(val, seen)) {
              _err[key] = errSerializer(val);
            }
          } else {
            _err[key] = val;
          }
        }
      }
      delete err[seen];
      _err.raw = err;
      return _err;
    }
  }
});

// node_modules/pino-std-serializers/lib/err-with-cause.js
var require_err_with_cause = __commonJS({
  "node_modules/pino-std-serializers/lib/err-with-cause.js"(exports2, module2) {
    "use strict";
    module2.exports = errWithCauseSerializer;
    var { isErrorLike } = require_err_helpers();
    var { pinoErrProto, pinoErrorSymbols } = require_err_proto();
    var { seen } = pinoErrorSymbols;
    var { toString } = Object.prototype;
    function errWithCauseSerializer(err) {
      if (!isErrorLike(err)) {
        return err;
      }
      err[seen] = void 0;
      const _err = Object.create(pinoErrProto);
      _err.type = toString.call(err.constructor) === "[object Function]" ? err.constructor.name : err.name;
      _err.message = err.message;
      _err.stack = err.stack;
      if (Array.isArray(err.errors)) {
        _err.aggregateErrors = err.errors.map((err2) => errWithCauseSerializer(err2));
      }
      if (isErrorLike(err.cause) && !Object.prototype.hasOwnProperty.call(err.cause, seen)) {
        _err.cause = errWithCauseSerializer(err.cause);
      }
      for (const key in err) {
        if (_err[key] === void 0) {
          const val = err[key];
          if (isErrorLike(val)) {
            if (!Object.prototype.hasOwnProperty.call(val, seen)) {
              _err[key] = errWithCauseSerializer(val);
            }
          } else {
            _err[key] = val;
          }
        }
      }
      delete err[seen];
      _err.raw = err;
      return _err;
    }
  }
});

// node_modules/pino-std-serializers/lib/req.js
var require_req = __commonJS({
  "node_modules/pino-std-serializers/lib/req.js"(exports2, module2) {
    "use strict";
    module2.exports = {
      mapHttpRequest,
      reqSerializer
    };
    var rawSymbol = /* @__PURE__ */ Symbol("pino-raw-req-ref");
    var pinoReqProto = Object.create({}, {
      id: {
        enumerable: true,
        writable: true,
        value: ""
      },
      method: {
        enumerable: true,
        writable: true,
        value: ""
      },
      url: {
        enumerable: true,
        writable: true,
        value: ""
      },
      query: {
        enumerable: true,
        writable: true,
        value: ""
      },
      params: {
        enumerable: true,
        writable: true,
        value: ""
      },
      headers: {
        enumerable: true,
        writable: true,
        value: {}
      },
      remoteAddress: {
        enumerable: true,
        writable: true,
        value: ""
      },
      remotePort: {
        enumerable: true,
        writable: true,
        value: ""
      },
      raw: {
        enumerable: false,
        get: function() {
          return this[rawSymbol];
        },
        set: function(val) {
          this[rawSymbol] = val;
        }
      }
    });
    Object.defineProperty(pinoReqProto, rawSymbol, {
      writable: true,
      value: {}
    });
    function reqSerializer(req) {
      const connection = req.info || req.socket;
      const _req = Object.create(pinoReqProto);
      _req.id = typeof req.id === "function" ? req.id() : req.id || (req.info ? req.info.id : void 0);
      _req.method = req.method;
      if (req.originalUrl) {
        _req.url = req.originalUrl;
      } else {
        const path2 = req.path;
        _req.url = typeof path2 === "string" ? path2 : req.url ? req.url.path || req.url : void 0;
      }
      if (req.query) {
        _req.query = req.query;
      }
      if (req.params) {
        _req.params = req.params;
      }
      _req.headers = req.headers;
      _req.remoteAddress = connection && connection.remoteAddress;
      _req.remotePort = connection && connection.remotePort;
      _req.raw = req.raw || req;
      return _req;
    }
    function mapHttpRequest(req) {
      return {
        req: reqSerializer(req)
      };
    }
  }
});

// node_modules/pino-std-serializers/lib/res.js
var require_res = __commonJS({
  "node_modules/pino-std-serializers/lib/res.js"(exports2, module2) {
    "use strict";
    module2.exports = {
      mapHttpResponse,
      resSerializer
    };
    var rawSymbol = /* @__PURE__ */ Symbol("pino-raw-res-ref");
    var pinoResProto = Object.create({}, {
      statusCode: {
        enumerable: true,
        writable: true,
        value: 0
      },
      headers: {
        enumerable: true,
        writable: true,
        value: ""
      },
      raw: {
        enumerable: false,
        get: function() {
          return this[rawSymbol];
        },
        set: function(val) {
          this[rawSymbol] = val;
        }
      }
    });
    Object.defineProperty(pinoResProto, rawSymbol, {
      writable: true,
      value: {}
    });
    function resSerializer(res) {
      const _res = Object.create(pinoResProto);
      _res.statusCode = res.headersSent ? res.statusCode : null;
      _res.headers = res.getHeaders ? res.getHeaders() : res._headers;
      _res.raw = res;
      return _res;
    }
    function mapHttpResponse(res) {
      return {
        res: resSerializer(res)
      };
    }
  }
});

// node_modules/pino-std-serializers/index.js
var require_pino_std_serializers = __commonJS({
  "node_modules/pino-std-serializers/index.js"(exports2, module2) {
    "use strict";
    var errSerializer = require_err();
    var errWithCauseSerializer = require_err_with_cause();
    var reqSerializers = require_req();
    var resSerializers = require_res();
    module2.exports = {
      err: errSerializer,
      errWithCause: errWithCauseSerializer,
      mapHttpRequest: reqSerializers.mapHttpRequest,
      mapHttpResponse: resSerializers.mapHttpResponse,
      req: reqSerializers.reqSerializer,
      res: resSerializers.resSerializer,
      wrapErrorSerializer: function wrapErrorSerializer(customSerializer) {
        if (customSerializer === errSerializer) return customSerializer;
        return function wrapErrSerializer(err) {
          return customSerializer(errSerializer(err));
        };
      },
      wrapRequestSerializer: function wrapRequestSerializer(customSerializer) {
        if (customSerializer === reqSerializers.reqSerializer) return customSerializer;
        return function wrappedReqSerializer(req) {
          return customSerializer(reqSerializers.reqSerializer(req));
        };
      },
      wrapResponseSerializer: function wrapResponseSerializer(customSerializer) {
        if (customSerializer === resSerializers.resSerializer) return customSerializer;
        return function wrappedResSerializer(res) {
          return customSerializer(resSerializers.resSerializer(res));
        };
      }
    };
  }
});

// node_modules/pino/lib/caller.js
var require_caller = __commonJS({
  "node_modules/pino/lib/caller.js"(exports2, module2) {
    "use strict";
    var util = __require("node:util");
    var getCallSites = util.getCallSites ?? util.getCallSite;
    function noOpPrepareStackTrace(_, stack) {
      return stack;
    }
    module2.exports = function getCallers() {
      if (getCallSites) {
        return getCallSites().slice(2).map((callSite) => callSite.scriptName);
      }
      const originalPrepare = Error.prepareStackTrace;
      Error.prepareStackTrace = noOpPrepareStackTrace;
      const stack = new Error().stack;
      Error.prepareStackTrace = originalPrepare;
      if (!Array.isArray(stack)) {
        return void 0;
      }
      const entries = stack.slice(2);
      const fileNames = [];
      for (const entry of entries) {
        if (!entry) {
          continue;
        }
        fileNames.push(entry.getFileName());
      }
      return fileNames;
    };
  }
});

// node_modules/@pinojs/redact/index.js
var require_redact = __commonJS({
  "node_modules/@pinojs/redact/index.js"(exports2, module2) {
    "use strict";
    function deepClone(obj) {
      if (obj === null || typeof obj !== "object") {
        return obj;
      }
      if (obj instanceof Date) {
        return new Date(obj.getTime());
      }
      if (obj instanceof Array) {
        const cloned = [];
        for (let i = 0; i < obj.length; i++) {
          cloned[i] = deepClone(obj[i]);
        }
        return cloned;
      }
      if (typeof obj === "object") {
        const cloned = Object.create(Object.getPrototypeOf(obj));
        for (const key in obj) {
          if (Object.prototype.hasOwnProperty.call(obj, key)) {
            cloned[key] = deepClone(obj[key]);
          }
        }
        return cloned;
      }
      return obj;
    }
    function parsePath(path2) {
      const parts = [];
      let current = "";
      let inBrackets = false;
      let inQuotes = false;
      let quoteChar = "";
      for (let i = 0; i < path2.length; i++) {
        const char = path2[i];
        if (!inBrackets && char === ".") {
          if (current) {
            parts.push(current);
            current = "";
          }
        } else if (char === "[") {
          if (current) {
            parts.push(current);
            current = "";
          }
          inBrackets = true;
        } else if (char === "]" && inBrackets) {
          parts.push(current);
          current = "";
          inBrackets = false;
          inQuotes = false;
        } else if ((char === '"' || char === "'") && inBrackets) {
          if (!inQuotes) {
            inQuotes = true;
            quoteChar = char;
          } else if (char === quoteChar) {
            inQuotes = false;
            quoteChar = "";
          } else {
            current += char;
          }
        } else {
          current += char;
        }
      }
      if (current) {
        parts.push(current);
      }
      return parts;
    }
    function setValue(obj, parts, value) {
      let current = obj;
      for (let i = 0; i < parts.length - 1; i++) {
        const key = parts[i];
        if (typeof current !== "object" || current === null || !(key in current)) {
          return false;
        }
        if (typeof current[key] !== "object" || current[key] === null) {
          return false;
        }
        current = current[key];
      }
      const lastKey = parts[parts.length - 1];
      if (lastKey === "*") {
        if (Array.isArray(current)) {
          for (let i = 0; i < current.length; i++) {
            current[i] = value;
          }
        } else if (typeof current === "object" && current !== null) {
          for (const key in current) {
            if (Object.prototype.hasOwnProperty.call(current, key)) {
              current[key] = value;
            }
          }
        }
      } else {
        if (typeof current === "object" && current !== null && lastKey in current && Object.prototype.hasOwnProperty.call(current, lastKey)) {
          current[lastKey] = value;
        }
      }
      return true;
    }
    function removeKey(obj, parts) {
      let current = obj;
      for (let i = 0; i < parts.length - 1; i++) {
        const key = parts[i];
        if (typeof current !== "object" || current === null || !(key in current)) {
          return false;
        }
        if (typeof current[key] !== "object" || current[key] === null) {
          return false;
        }
        current = current[key];
      }
      const lastKey = parts[parts.length - 1];
      if (lastKey === "*") {
        if (Array.isArray(current)) {
          for (let i = 0; i < current.length; i++) {
            current[i] = void 0;
          }
        } else if (typeof current === "object" && current !== null) {
          for (const key in current) {
            if (Object.prototype.hasOwnProperty.call(current, key)) {
              delete current[key];
            }
          }
        }
      } else {
        if (typeof current === "object" && current !== null && lastKey in current && Object.prototype.hasOwnProperty.call(current, lastKey)) {
          delete current[lastKey];
        }
      }
      return true;
    }
    var PATH_NOT_FOUND = /* @__PURE__ */ Symbol("PATH_NOT_FOUND");
    function getValueIfExists(obj, parts) {
      let current = obj;
      for (const part of parts) {
        if (current === null || current === void 0) {
          return PATH_NOT_FOUND;
        }
        if (typeof current !== "object" || current === null) {
          return PATH_NOT_FOUND;
        }
        if (!(part in current)) {
          return PATH_NOT_FOUND;
        }
        current = current[part];
      }
      return current;
    }
    function getValue(obj, parts) {
      let current = obj;
      for (const part of parts) {
        if (current === null || current === void 0) {
          return void 0;
        }
        if (typeof current !== "object" || current === null) {
          return void 0;
        }
        current = current[part];
      }
      return current;
    }
    function redactPaths(obj, paths, censor, remove = false) {
      for (const path2 of paths) {
        const parts = parsePath(path2);
        if (parts.includes("*")) {
          redactWildcardPath(obj, parts, censor, path2, remove);
        } else {
          if (remove) {
            removeKey(obj, parts);
          } else {
            const value = getValueIfExists(obj, parts);
            if (value === PATH_NOT_FOUND) {
              continue;
            }
            const actualCensor = typeof censor === "function" ? censor(value, parts) : censor;
            setValue(obj, parts, actualCensor);
          }
        }
      }
    }
    function redactWildcardPath(obj, parts, censor, originalPath, remove = false) {
      const wildcardIndex = parts.indexOf("*");
      if (wildcardIndex === parts.length - 1) {
        const parentParts = parts.slice(0, -1);
        let current = obj;
        for (const part of parentParts) {
          if (current === null || current === void 0) return;
          if (typeof current !== "object" || current === null) return;
          current = current[part];
        }
        if (Array.isArray(current)) {
          if (remove) {
            for (let i = 0; i < current.length; i++) {
              current[i] = void 0;
            }
          } else {
            for (let i = 0; i < current.length; i++) {
              const indexPath = [...parentParts, i.toString()];
              const actualCensor = typeof censor === "function" ? censor(current[i], indexPath) : censor;
              current[i] = actualCensor;
            }
          }
        } else if (typeof current === "object" && current !== null) {
          if (remove) {
            const keysToDelete = [];
            for (const key in current) {
              if (Object.prototype.hasOwnProperty.call(current, key)) {
                keysToDelete.push(key);
              }
            }
            for (const key of keysToDelete) {
              delete current[key];
            }
          } else {
            for (const key in current) {
              const keyPath = [...parentParts, key];
              const actualCensor = typeof censor === "function" ? censor(current[key], keyPath) : censor;
              current[key] = actualCensor;
            }
          }
        }
      } else {
        redactIntermediateWildcard(obj, parts, censor, wildcardIndex, originalPath, remove);
      }
    }
    function redactIntermediateWildcard(obj, parts, censor, wildcardIndex, originalPath, remove = false) {
      const beforeWildcard = parts.slice(0, wildcardIndex);
      const afterWildcard = parts.slice(wildcardIndex + 1);
      const pathArray = [];
      function traverse(current, pathLength) {
        if (pathLength === beforeWildcard.length) {
          if (Array.isArray(current)) {
            for (let i = 0; i < current.length; i++) {
              pathArray[pathLength] = i.toString();
              traverse(current[i], pathLength + 1);
            }
          } else if (typeof current === "object" && current !== null) {
            for (const key in current) {
              pathArray[pathLength] = key;
              traverse(current[key], pathLength + 1);
            }
          }
        } else if (pathLength < beforeWildcard.length) {
          const nextKey = beforeWildcard[pathLength];
          if (current && typeof current === "object" && current !== null && nextKey in current) {
            pathArray[pathLength] = nextKey;
            traverse(current[nextKey], pathLength + 1);
          }
        } else {
          if (afterWildcard.includes("*")) {
            const wrappedCensor = typeof censor === "function" ? (value, path2) => {
              const fullPath = [...pathArray.slice(0, pathLength), ...path2];
              return censor(value, fullPath);
            } : censor;
            redactWildcardPath(current, afterWildcard, wrappedCensor, originalPath, remove);
          } else {
            if (remove) {
              removeKey(current, afterWildcard);
            } else {
              const actualCensor = typeof censor === "function" ? censor(getValue(current, afterWildcard), [...pathArray.slice(0, pathLength), ...afterWildcard]) : censor;
              setValue(current, afterWildcard, actualCensor);
            }
          }
        }
      }
      if (beforeWildcard.length === 0) {
        traverse(obj, 0);
      } else {
        let current = obj;
        for (let i = 0; i < beforeWildcard.length; i++) {
          const part = beforeWildcard[i];
          if (current === null || current === void 0) return;
          if (typeof current !== "object" || current === null) return;
          current = current[part];
          pathArray[i] = part;
        }
        if (current !== null && current !== void 0) {
          traverse(current, beforeWildcard.length);
        }
      }
    }
    function buildPathStructure(pathsToClone) {
      if (pathsToClone.length === 0) {
        return null;
      }
      const pathStructure = /* @__PURE__ */ new Map();
      for (const path2 of pathsToClone) {
        const parts = parsePath(path2);
        let current = pathStructure;
        for (let i = 0; i < parts.length; i++) {
          const part = parts[i];
          if (!current.has(part)) {
            current.set(part, /* @__PURE__ */ new Map());
          }
          current = current.get(part);
        }
      }
      return pathStructure;
    }
    function selectiveClone(obj, pathStructure) {
      if (!pathStructure) {
        return obj;
      }
      function cloneSelectively(source, pathMap, depth = 0) {
        if (!pathMap || pathMap.size === 0) {
          return source;
        }
        if (source === null || typeof source !== "object") {
          return source;
        }
        if (source instanceof Date) {
          return new Date(source.getTime());
        }
        if (Array.isArray(source)) {
          const cloned2 = [];
          for (let i = 0; i < source.length; i++) {
            const indexStr = i.toString();
            if (pathMap.has(indexStr) || pathMap.has("*")) {
              cloned2[i] = cloneSelectively(source[i], pathMap.get(indexStr) || pathMap.get("*"));
            } else {
              cloned2[i] = source[i];
            }
          }
          return cloned2;
        }
        const cloned = Object.create(Object.getPrototypeOf(source));
        for (const key in source) {
          if (Object.prototype.hasOwnProperty.call(source, key)) {
            if (pathMap.has(key) || pathMap.has("*")) {
              cloned[key] = cloneSelectively(source[key], pathMap.get(key) || pathMap.get("*"));
            } else {
              cloned[key] = source[key];
            }
          }
        }
        return cloned;
      }
      return cloneSelectively(obj, pathStructure);
    }
    function validatePath(path2) {
      if (typeof path2 !== "string") {
        throw new Error("Paths must be (non-empty) strings");
      }
      if (path2 === "") {
        throw new Error("Invalid redaction path ()");
      }
      if (path2.includes("..")) {
        throw new Error(`Invalid redaction path (${path2})`);
      }
      if (path2.includes(",")) {
        throw new Error(`Invalid redaction path (${path2})`);
      }
      let bracketCount = 0;
      let inQuotes = false;
      let quoteChar = "";
      for (let i = 0; i < path2.length; i++) {
        const char = path2[i];
        if ((char === '"' || char === "'") && bracketCount > 0) {
          if (!inQuotes) {
            inQuotes = true;
            quoteChar = char;
          } else if (char === quoteChar) {
            inQuotes = false;
            quoteChar = "";
          }
        } else if (char === "[" && !inQuotes) {
          bracketCount++;
        } else if (char === "]" && !inQuotes) {
          bracketCount--;
          if (bracketCount < 0) {
            throw new Error(`Invalid redaction path (${path2})`);
          }
        }
      }
      if (bracketCount !== 0) {
        throw new Error(`Invalid redaction path (${path2})`);
      }
    }
    function validatePaths(paths) {
      if (!Array.isArray(paths)) {
        throw new TypeError("paths must be an array");
      }
      for (const path2 of paths) {
        validatePath(path2);
      }
    }
    function slowRedact(options2 = {}) {
      const {
        paths = [],
        censor = "[REDACTED]",
        serialize = JSON.stringify,
        strict = true,
        remove = false
      } = options2;
      validatePaths(paths);
      const pathStructure = buildPathStructure(paths);
      return function redact(obj) {
        if (strict && (obj === null || typeof obj !== "object")) {
          if (obj === null || obj === void 0) {
            return serialize ? serialize(obj) : obj;
          }
          if (typeof obj !== "object") {
            return serialize ? serialize(obj) : obj;
          }
        }
        const cloned = selectiveClone(obj, pathStructure);
        const original = obj;
        let actualCensor = censor;
        if (typeof censor === "function") {
          actualCensor = censor;
        }
        redactPaths(cloned, paths, actualCensor, remove);
        if (serialize === false) {
          cloned.restore = function() {
            return deepClone(original);
          };
          return cloned;
        }
        if (typeof serialize === "function") {
          return serialize(cloned);
        }
        return JSON.stringify(cloned);
      };
    }
    module2.exports = slowRedact;
  }
});

// node_modules/pino/lib/symbols.js
var require_symbols = __commonJS({
  "node_modules/pino/lib/symbols.js"(exports2, module2) {
    "use strict";
    var setLevelSym = /* @__PURE__ */ Symbol("pino.setLevel");
    var getLevelSym = /* @__PURE__ */ Symbol("pino.getLevel");
    var levelValSym = /* @__PURE__ */ Symbol("pino.levelVal");
    var levelCompSym = /* @__PURE__ */ Symbol("pino.levelComp");
    var useLevelLabelsSym = /* @__PURE__ */ Symbol("pino.useLevelLabels");
    var useOnlyCustomLevelsSym = /* @__PURE__ */ Symbol("pino.useOnlyCustomLevels");
    var mixinSym = /* @__PURE__ */ Symbol("pino.mixin");
    var lsCacheSym = /* @__PURE__ */ Symbol("pino.lsCache");
    var chindingsSym = /* @__PURE__ */ Symbol("pino.chindings");
    var asJsonSym = /* @__PURE__ */ Symbol("pino.asJson");
    var writeSym = /* @__PURE__ */ Symbol("pino.write");
    var redactFmtSym = /* @__PURE__ */ Symbol("pino.redactFmt");
    var timeSym = /* @__PURE__ */ Symbol("pino.time");
    var timeSliceIndexSym = /* @__PURE__ */ Symbol("pino.timeSliceIndex");
    var streamSym = /* @__PURE__ */ Symbol("pino.stream");
    var stringifySym = /* @__PURE__ */ Symbol("pino.stringify");
    var stringifySafeSym = /* @__PURE__ */ Symbol("pino.stringifySafe");
    var stringifiersSym = /* @__PURE__ */ Symbol("pino.stringifiers");
    var endSym = /* @__PURE__ */ Symbol("pino.end");
    var formatOptsSym = /* @__PURE__ */ Symbol("pino.formatOpts");
    var messageKeySym = /* @__PURE__ */ Symbol("pino.messageKey");
    var errorKeySym = /* @__PURE__ */ Symbol("pino.errorKey");
    var nestedKeySym = /* @__PURE__ */ Symbol("pino.nestedKey");
    var nestedKeyStrSym = /* @__PURE__ */ Symbol("pino.nestedKeyStr");
    var mixinMergeStrategySym = /* @__PURE__ */ Symbol("pino.mixinMergeStrategy");
    var msgPrefixSym = /* @__PURE__ */ Symbol("pino.msgPrefix");
    var wildcardFirstSym = /* @__PURE__ */ Symbol("pino.wildcardFirst");
    var serializersSym = /* @__PURE__ */ Symbol.for("pino.serializers");
    var formattersSym = /* @__PURE__ */ Symbol.for("pino.formatters");
    var hooksSym = /* @__PURE__ */ Symbol.for("pino.hooks");
    var needsMetadataGsym = /* @__PURE__ */ Symbol.for("pino.metadata");
    var transportUsesMultistreamSym = /* @__PURE__ */ Symbol.for("pino.transport.usesMultistream");
    module2.exports = {
      setLevelSym,
      getLevelSym,
      levelValSym,
      levelCompSym,
      useLevelLabelsSym,
      mixinSym,
      lsCacheSym,
      chindingsSym,
      asJsonSym,
      writeSym,
      serializersSym,
      redactFmtSym,
      timeSym,
      timeSliceIndexSym,
      streamSym,
      stringifySym,
      stringifySafeSym,
      stringifiersSym,
      endSym,
      formatOptsSym,
      messageKeySym,
      errorKeySym,
      nestedKeySym,
      wildcardFirstSym,
      needsMetadataGsym,
      useOnlyCustomLevelsSym,
      formattersSym,
      hooksSym,
      nestedKeyStrSym,
      mixinMergeStrategySym,
      msgPrefixSym,
      transportUsesMultistreamSym
    };
  }
});

// node_modules/pino/lib/redaction.js
var require_redaction = __commonJS({
  "node_modules/pino/lib/redaction.js"(exports2, module2) {
    "use strict";
    var Redact = require_redact();
    var { redactFmtSym, wildcardFirstSym } = require_symbols();
    var rx = /[^.[\]]+|\[([^[\]]*?)\]/g;
    var CENSOR = "[Redacted]";
    var strict = false;
    function redaction(opts, serialize) {
      const { paths, censor, remove } = handle(opts);
      const shape = paths.reduce((o, str) => {
        rx.lastIndex = 0;
        const first = rx.exec(str);
        const next = rx.exec(str);
        let ns = first[1] !== void 0 ? first[1].replace(/^(?:"|'|`)(.*)(?:"|'|`)$/, "$1") : first[0];
        if (ns === "*") {
          ns = wildcardFirstSym;
        }
        if (next === null) {
          o[ns] = null;
          return o;
        }
        if (o[ns] === null) {
          return o;
        }
        const { index } = next;
        const nextPath = `${str.substr(index, str.length - 1)}`;
        o[ns] = o[ns] || [];
        if (ns !== wildcardFirstSym && o[ns].length === 0) {
          o[ns].push(...o[wildcardFirstSym] || []);
        }
        if (ns === wildcardFirstSym) {
          Object.keys(o).forEach(function(k) {
            if (o[k]) {
              o[k].push(nextPath);
            }
          });
        }
        o[ns].push(nextPath);
        return o;
      }, /* @__PURE__ */ Object.create(null));
      const result = Object.assign(/* @__PURE__ */ Object.create(null), {
        [redactFmtSym]: Redact({ paths, censor, serialize, strict, remove })
      });
      const topCensor = (...args) => {
        return typeof censor === "function" ? serialize(censor(...args)) : serialize(censor);
      };
      return [...Object.keys(shape), ...Object.getOwnPropertySymbols(shape)].reduce((o, k) => {
        if (shape[k] === null) {
          o[k] = (value) => topCensor(value, [k]);
        } else {
          const wrappedCensor = typeof censor === "function" ? (value, path2) => {
            return censor(value, [k, ...path2]);
          } : censor;
          o[k] = Redact({
            paths: shape[k],
            censor: wrappedCensor,
            serialize,
            strict,
            remove
          });
        }
        return o;
      }, result);
    }
    function handle(opts) {
      if (Array.isArray(opts)) {
        opts = { paths: opts, censor: CENSOR };
        return opts;
      }
      let { paths, censor = CENSOR, remove } = opts;
      if (Array.isArray(paths) === false) {
        throw Error("pino \u2013 redact must contain an array of strings");
      }
      if (remove === true) censor = void 0;
      return { paths, censor, remove };
    }
    module2.exports = redaction;
  }
});

// node_modules/pino/lib/time.js
var require_time = __commonJS({
  "node_modules/pino/lib/time.js"(exports2, module2) {
    "use strict";
    var nullTime = () => "";
    var epochTime = () => `,"time":${Date.now()}`;
    var unixTime = () => `,"time":${Math.round(Date.now() / 1e3)}`;
    var isoTime = () => `,"time":"${new Date(Date.now()).toISOString()}"`;
    var NS_PER_MS = 1000000n;
    var NS_PER_SEC = 1000000000n;
    var startWallTimeNs = BigInt(Date.now()) * NS_PER_MS;
    var startHrTime = process.hrtime.bigint();
    var isoTimeNano = () => {
      const elapsedNs = process.hrtime.bigint() - startHrTime;
      const currentTimeNs = startWallTimeNs + elapsedNs;
      const secondsSinceEpoch = currentTimeNs / NS_PER_SEC;
      const nanosWithinSecond = currentTimeNs % NS_PER_SEC;
      const msSinceEpoch = Number(secondsSinceEpoch * 1000n + nanosWithinSecond / 1000000n);
      const date = new Date(msSinceEpoch);
      const year = date.getUTCFullYear();
      const month = (date.getUTCMonth() + 1).toString().padStart(2, "0");
      const day = date.getUTCDate().toString().padStart(2, "0");
      const hours = date.getUTCHours().toString().padStart(2, "0");
      const minutes = date.getUTCMinutes().toString().padStart(2, "0");
      const seconds = date.getUTCSeconds().toString().padStart(2, "0");
      return `,"time":"${year}-${month}-${day}T${hours}:${minutes}:${seconds}.${nanosWithinSecond.toString().padStart(9, "0")}Z"`;
    };
    module2.exports = { nullTime, epochTime, unixTime, isoTime, isoTimeNano };
  }
});

// node_modules/quick-format-unescaped/index.js
var require_quick_format_unescaped = __commonJS({
  "node_modules/quick-format-unescaped/index.js"(exports2, module2) {
    "use strict";
    function tryStringify(o) {
      try {
        return JSON.stringify(o);
      } catch (e) {
        return '"[Circular]"';
      }
    }
    module2.exports = format;
    function format(f, args, opts) {
      var ss = opts && opts.stringify || tryStringify;
      var offset = 1;
      if (typeof f === "object" && f !== null) {
        var len = args.length + offset;
        if (len === 1) return f;
        var objects = new Array(len);
        objects[0] = ss(f);
        for (var index = 1; index < len; index++) {
          objects[index] = ss(args[index]);
        }
        return objects.join(" ");
      }
      if (typeof f !== "string") {
        return f;
      }
      var argLen = args.length;
      if (argLen === 0) return f;
      var str = "";
      var a = 1 - offset;
      var lastPos = -1;
      var flen = f && f.length || 0;
      for (var i = 0; i < flen; ) {
        if (f.charCodeAt(i) === 37 && i + 1 < flen) {
          lastPos = lastPos > -1 ? lastPos : 0;
          switch (f.charCodeAt(i + 1)) {
            case 100:
            // 'd'
            case 102:
              if (a >= argLen)
                break;
              if (args[a] == null) break;
              if (lastPos < i)
                str += f.slice(lastPos, i);
              str += Number(args[a]);
              lastPos = i + 2;
              i++;
              break;
            case 105:
              if (a >= argLen)
                break;
              if (args[a] == null) break;
              if (lastPos < i)
                str += f.slice(lastPos, i);
              str += Math.floor(Number(args[a]));
              lastPos = i + 2;
              i++;
              break;
            case 79:
            // 'O'
            case 111:
            // 'o'
            case 106:
              if (a >= argLen)
                break;
              if (args[a] === void 0) break;
              if (lastPos < i)
                str += f.slice(lastPos, i);
              var type = typeof args[a];
              if (type === "string") {
                str += "'" + args[a] + "'";
                lastPos = i + 2;
                i++;
                break;
              }
              if (type === "function") {
                str += args[a].name || "<anonymous>";
                lastPos = i + 2;
                i++;
                break;
              }
              str += ss(args[a]);
              lastPos = i + 2;
              i++;
              break;
            case 115:
              if (a >= argLen)
                break;
              if (lastPos < i)
                str += f.slice(lastPos, i);
              str += String(args[a]);
              lastPos = i + 2;
              i++;
              break;
            case 37:
              if (lastPos < i)
                str += f.slice(lastPos, i);
              str += "%";
              lastPos = i + 2;
              i++;
              a--;
              break;
          }
          ++a;
        }
        ++i;
      }
      if (lastPos === -1)
        return f;
      else if (lastPos < flen) {
        str += f.slice(lastPos);
      }
      return str;
    }
  }
});

// node_modules/atomic-sleep/index.js
var require_atomic_sleep = __commonJS({
  "node_modules/atomic-sleep/index.js"(exports2, module2) {
    "use strict";
    if (typeof SharedArrayBuffer !== "undefined" && typeof Atomics !== "undefined") {
      let sleep = function(ms) {
        const valid = ms > 0 && ms < Infinity;
        if (valid === false) {
          if (typeof ms !== "number" && typeof ms !== "bigint") {
            throw TypeError("sleep: ms must be a number");
          }
          throw RangeError("sleep: ms must be a number that is greater than 0 but less than Infinity");
        }
        Atomics.wait(nil, 0, 0, Number(ms));
      };
      const nil = new Int32Array(new SharedArrayBuffer(4));
      module2.exports = sleep;
    } else {
      let sleep = function(ms) {
        const valid = ms > 0 && ms < Infinity;
        if (valid === false) {
          if (typeof ms !== "number" && typeof ms !== "bigint") {
            throw TypeError("sleep: ms must be a number");
          }
          throw RangeError("sleep: ms must be a number that is greater than 0 but less than Infinity");
        }
        const target = Date.now() + Number(ms);
        while (target > Date.now()) {
        }
      };
      module2.exports = sleep;
    }
  }
});

// node_modules/sonic-boom/index.js
var require_sonic_boom = __commonJS({
  "node_modules/sonic-boom/index.js"(exports2, module2) {
    "use strict";
    var fs = __require("fs");
    var EventEmitter = __require("events");
    var inherits = __require("util").inherits;
    var path2 = __require("path");
    var sleep = require_atomic_sleep();
    var assert = __require("assert");
    var BUSY_WRITE_TIMEOUT = 100;
    var kEmptyBuffer = Buffer.allocUnsafe(0);
    var MAX_WRITE = 16 * 1024;
    var kContentModeBuffer = "buffer";
    var kContentModeUtf8 = "utf8";
    var [major, minor] = (process.versions.node || "0.0").split(".").map(Number);
    var kCopyBuffer = major >= 22 && minor >= 7;
    function openFile(file, sonic) {
      sonic._opening = true;
      sonic._writing = true;
      sonic._asyncDrainScheduled = false;
      function fileOpened(err, fd) {
        if (err) {
          sonic._reopening = false;
          sonic._writing = false;
          sonic._opening = false;
          if (sonic.sync) {
            process.nextTick(() => {
              if (sonic.listenerCount("error") > 0) {
                sonic.emit("error", err);
              }
            });
          } else {
            sonic.emit("error", err);
          }
          return;
        }
        const reopening = sonic._reopening;
        sonic.fd = fd;
        sonic.file = file;
        sonic._reopening = false;
        sonic._opening = false;
        sonic._writing = false;
        if (sonic.sync) {
          process.nextTick(() => sonic.emit("ready"));
        } else {
          sonic.emit("ready");
        }
        if (sonic.destroyed) {
          return;
        }
        if (!sonic._writing && sonic._len > sonic.minLength || sonic._flushPending) {
          sonic._actualWrite();
        } else if (reopening) {
          process.nextTick(() => sonic.emit("drain"));
        }
      }
      const flags = sonic.append ? "a" : "w";
      const mode = sonic.mode;
      if (sonic.sync) {
        try {
          if (sonic.mkdir) fs.mkdirSync(path2.dirname(file), { recursive: true });
          const fd = fs.openSync(file, flags, mode);
          fileOpened(null, fd);
        } catch (err) {
          fileOpened(err);
          throw err;
        }
      } else if (sonic.mkdir) {
        fs.mkdir(path2.dirname(file), { recursive: true }, (err) => {
          if (err) return fileOpened(err);
          fs.open(file, flags, mode, fileOpened);
        });
      } else {
        fs.open(file, flags, mode, fileOpened);
      }
    }
    function SonicBoom(opts) {
      if (!(this instanceof SonicBoom)) {
        return new SonicBoom(opts);
      }
      let { fd, dest, minLength, maxLength, maxWrite, periodicFlush, sync, append = true, mkdir, retryEAGAIN, fsync, contentMode, mode } = opts || {};
      fd = fd || dest;
      this._len = 0;
      this.fd = -1;
      this._bufs = [];
      this._lens = [];
      this._writing = false;
      this._ending = false;
      this._reopening = false;
      this._asyncDrainScheduled = false;
      this._flushPending = false;
      this._hwm = Math.max(minLength || 0, 16387);
      this.file = null;
      this.destroyed = false;
      this.minLength = minLength || 0;
      this.maxLength = maxLength || 0;
      this.maxWrite = maxWrite || MAX_WRITE;
      this._periodicFlush = periodicFlush || 0;
      this._periodicFlushTimer = void 0;
      this.sync = sync || false;
      this.writable = true;
      this._fsync = fsync || false;
      this.append = append || false;
      this.mode = mode;
      this.retryEAGAIN = retryEAGAIN || (() => true);
      this.mkdir = mkdir || false;
      let fsWriteSync;
      let fsWrite;
      if (contentMode === kContentModeBuffer) {
        this._writingBuf = kEmptyBuffer;
        this.write = writeBuffer;
        this.flush = flushBuffer;
        this.flushSync = flushBufferSync;
        this._actualWrite = actualWriteBuffer;
        fsWriteSync = () => fs.writeSync(this.fd, this._writingBuf);
        fsWrite = () => fs.write(this.fd, this._writingBuf, this.release);
      } else if (contentMode === void 0 || contentMode === kContentModeUtf8) {
        this._writingBuf = "";
        this.write = write;
        this.flush = flush;
        this.flushSync = flushSync;
        this._actualWrite = actualWrite;
        fsWriteSync = () => {
          if (Buffer.isBuffer(this._writingBuf)) {
            return fs.writeSync(this.fd, this._writingBuf);
          }
          return fs.writeSync(this.fd, this._writingBuf, "utf8");
        };
        fsWrite = () => {
          if (Buffer.isBuffer(this._writingBuf)) {
            return fs.write(this.fd, this._writingBuf, this.release);
          }
          return fs.write(this.fd, this._writingBuf, "utf8", this.release);
        };
      } else {
        throw new Error(`SonicBoom supports "${kContentModeUtf8}" and "${kContentModeBuffer}", but passed ${contentMode}`);
      }
      if (typeof fd === "number") {
        this.fd = fd;
        process.nextTick(() => this.emit("ready"));
      } else if (typeof fd === "string") {
        openFile(fd, this);
      } else {
        throw new Error("SonicBoom supports only file descriptors and files");
      }
      if (this.minLength >= this.maxWrite) {
        throw new Error(`minLength should be smaller than maxWrite (${this.maxWrite})`);
      }
      this.release = (err, n2) => {
        if (err) {
          if ((err.code === "EAGAIN" || err.code === "EBUSY") && this.retryEAGAIN(err, this._writingBuf.length, this._len - this._writingBuf.length)) {
            if (this.sync) {
              try {
                sleep(BUSY_WRITE_TIMEOUT);
                this.release(void 0, 0);
              } catch (err2) {
                this.release(err2);
              }
            } else {
              setTimeout(fsWrite, BUSY_WRITE_TIMEOUT);
            }
          } else {
            this._writing = false;
            this.emit("error", err);
          }
          return;
        }
        this.emit("write", n2);
        const releasedBufObj = releaseWritingBuf(this._writingBuf, this._len, n2);
        this._len = releasedBufObj.len;
        this._writingBuf = releasedBufObj.writingBuf;
        if (this._writingBuf.length) {
          if (!this.sync) {
            fsWrite();
            return;
          }
          try {
            do {
              const n3 = fsWriteSync();
              const releasedBufObj2 = releaseWritingBuf(this._writingBuf, this._len, n3);
              this._len = releasedBufObj2.len;
              this._writingBuf = releasedBufObj2.writingBuf;
            } while (this._writingBuf.length);
          } catch (err2) {
            this.release(err2);
            return;
          }
        }
        if (this._fsync) {
          fs.fsyncSync(this.fd);
        }
        const len = this._len;
        if (this._reopening) {
          this._writing = false;
          this._reopening = false;
          this.reopen();
        } else if (len > this.minLength) {
          this._actualWrite();
        } else if (this._ending) {
          if (len > 0) {
            this._actualWrite();
          } else {
            this._writing = false;
            actualClose(this);
          }
        } else {
          this._writing = false;
          if (this.sync) {
            if (!this._asyncDrainScheduled) {
              this._asyncDrainScheduled = true;
              process.nextTick(emitDrain, this);
            }
          } else {
            this.emit("drain");
          }
        }
      };
      this.on("newListener", function(name) {
        if (name === "drain") {
          this._asyncDrainScheduled = false;
        }
      });
      if (this._periodicFlush !== 0) {
        this._periodicFlushTimer = setInterval(() => this.flush(null), this._periodicFlush);
        this._periodicFlushTimer.unref();
      }
    }
    function releaseWritingBuf(writingBuf, len, n2) {
      if (typeof writingBuf === "string") {
        writingBuf = Buffer.from(writingBuf);
      }
      len = Math.max(len - n2, 0);
      writingBuf = writingBuf.subarray(n2);
      return { writingBuf, len };
    }
    function emitDrain(sonic) {
      const hasListeners = sonic.listenerCount("drain") > 0;
      if (!hasListeners) return;
      sonic._asyncDrainScheduled = false;
      sonic.emit("drain");
    }
    inherits(SonicBoom, EventEmitter);
    function mergeBuf(bufs, len) {
      if (bufs.length === 0) {
        return kEmptyBuffer;
      }
      if (bufs.length === 1) {
        return bufs[0];
      }
      return Buffer.concat(bufs, len);
    }
    function write(data) {
      if (this.destroyed) {
        throw new Error("SonicBoom destroyed");
      }
      data = "" + data;
      const dataLen = Buffer.byteLength(data);
      const len = this._len + dataLen;
      const bufs = this._bufs;
      if (this.maxLength && len > this.maxLength) {
        this.emit("drop", data);
        return this._len < this._hwm;
      }
      if (bufs.length === 0 || Buffer.byteLength(bufs[bufs.length - 1]) + dataLen > this.maxWrite) {
        bufs.push(data);
      } else {
        bufs[bufs.length - 1] += data;
      }
      this._len = len;
      if (!this._writing && this._len >= this.minLength) {
        this._actualWrite();
      }
      return this._len < this._hwm;
    }
    function writeBuffer(data) {
      if (this.destroyed) {
        throw new Error("SonicBoom destroyed");
      }
      const len = this._len + data.length;
      const bufs = this._bufs;
      const lens = this._lens;
      if (this.maxLength && len > this.maxLength) {
        this.emit("drop", data);
        return this._len < this._hwm;
      }
      if (bufs.length === 0 || lens[lens.length - 1] + data.length > this.maxWrite) {
        bufs.push([data]);
        lens.push(data.length);
      } else {
        bufs[bufs.length - 1].push(data);
        lens[lens.length - 1] += data.length;
      }
      this._len = len;
      if (!this._writing && this._len >= this.minLength) {
        this._actualWrite();
      }
      return this._len < this._hwm;
    }
    function callFlushCallbackOnDrain(cb) {
      this._flushPending = true;
      const onDrain = () => {
        if (!this._fsync) {
          try {
            fs.fsync(this.fd, (err) => {
              this._flushPending = false;
              cb(err);
            });
          } catch (err) {
            cb(err);
          }
        } else {
          this._flushPending = false;
          cb();
        }
        this.off("error", onError);
      };
      const onError = (err) => {
        this._flushPending = false;
        cb(err);
        this.off("drain", onDrain);
      };
      this.once("drain", onDrain);
      this.once("error", onError);
    }
    function flush(cb) {
      if (cb != null && typeof cb !== "function") {
        throw new Error("flush cb must be a function");
      }
      if (this.destroyed) {
        const error = new Error("SonicBoom destroyed");
        if (cb) {
          cb(error);
          return;
        }
        throw error;
      }
      if (this.minLength <= 0) {
        cb?.();
        return;
      }
      if (cb) {
        callFlushCallbackOnDrain.call(this, cb);
      }
      if (this._writing) {
        return;
      }
      if (this._bufs.length === 0) {
        this._bufs.push("");
      }
      this._actualWrite();
    }
    function flushBuffer(cb) {
      if (cb != null && typeof cb !== "function") {
        throw new Error("flush cb must be a function");
      }
      if (this.destroyed) {
        const error = new Error("SonicBoom destroyed");
        if (cb) {
          cb(error);
          return;
        }
        throw error;
      }
      if (this.minLength <= 0) {
        cb?.();
        return;
      }
      if (cb) {
        callFlushCallbackOnDrain.call(this, cb);
      }
      if (this._writing) {
        return;
      }
      if (this._bufs.length === 0) {
        this._bufs.push([]);
        this._lens.push(0);
      }
      this._actualWrite();
    }
    SonicBoom.prototype.reopen = function(file) {
      if (this.destroyed) {
        throw new Error("SonicBoom destroyed");
      }
      if (this._opening) {
        this.once("ready", () => {
          this.reopen(file);
        });
        return;
      }
      if (this._ending) {
        return;
      }
      if (!this.file) {
        throw new Error("Unable to reopen a file descriptor, you must pass a file to SonicBoom");
      }
      if (file) {
        this.file = file;
      }
      this._reopening = true;
      if (this._writing) {
        return;
      }
      const fd = this.fd;
      this.once("ready", () => {
        if (fd !== this.fd) {
          fs.close(fd, (err) => {
            if (err) {
              return this.emit("error", err);
            }
          });
        }
      });
      openFile(this.file, this);
    };
    SonicBoom.prototype.end = function() {
      if (this.destroyed) {
        throw new Error("SonicBoom destroyed");
      }
      if (this._opening) {
        this.once("ready", () => {
          this.end();
        });
        return;
      }
      if (this._ending) {
        return;
      }
      this._ending = true;
      if (this._writing) {
        return;
      }
      if (this._len > 0 && this.fd >= 0) {
        this._actualWrite();
      } else {
        actualClose(this);
      }
    };
    function flushSync() {
      if (this.destroyed) {
        throw new Error("SonicBoom destroyed");
      }
      if (this.fd < 0) {
        throw new Error("sonic boom is not ready yet");
      }
      if (!this._writing && this._writingBuf.length > 0) {
        this._bufs.unshift(this._writingBuf);
        this._writingBuf = "";
      }
      let buf = "";
      while (this._bufs.length || buf.length) {
        if (buf.length <= 0) {
          buf = this._bufs[0];
        }
        try {
          const n2 = Buffer.isBuffer(buf) ? fs.writeSync(this.fd, buf) : fs.writeSync(this.fd, buf, "utf8");
          const releasedBufObj = releaseWritingBuf(buf, this._len, n2);
          buf = releasedBufObj.writingBuf;
          this._len = releasedBufObj.len;
          if (buf.length <= 0) {
            this._bufs.shift();
          }
        } catch (err) {
          const shouldRetry = err.code === "EAGAIN" || err.code === "EBUSY";
          if (shouldRetry && !this.retryEAGAIN(err, buf.length, this._len - buf.length)) {
            throw err;
          }
          sleep(BUSY_WRITE_TIMEOUT);
        }
      }
      try {
        fs.fsyncSync(this.fd);
      } catch {
      }
    }
    function flushBufferSync() {
      if (this.destroyed) {
        throw new Error("SonicBoom destroyed");
      }
      if (this.fd < 0) {
        throw new Error("sonic boom is not ready yet");
      }
      if (!this._writing && this._writingBuf.length > 0) {
        this._bufs.unshift([this._writingBuf]);
        this._writingBuf = kEmptyBuffer;
      }
      let buf = kEmptyBuffer;
      while (this._bufs.length || buf.length) {
        if (buf.length <= 0) {
          buf = mergeBuf(this._bufs[0], this._lens[0]);
        }
        try {
          const n2 = fs.writeSync(this.fd, buf);
          buf = buf.subarray(n2);
          this._len = Math.max(this._len - n2, 0);
          if (buf.length <= 0) {
            this._bufs.shift();
            this._lens.shift();
          }
        } catch (err) {
          const shouldRetry = err.code === "EAGAIN" || err.code === "EBUSY";
          if (shouldRetry && !this.retryEAGAIN(err, buf.length, this._len - buf.length)) {
            throw err;
          }
          sleep(BUSY_WRITE_TIMEOUT);
        }
      }
    }
    SonicBoom.prototype.destroy = function() {
      if (this.destroyed) {
        return;
      }
      actualClose(this);
    };
    function actualWrite() {
      const release = this.release;
      this._writing = true;
      this._writingBuf = this._writingBuf.length ? this._writingBuf : this._bufs.shift() || "";
      if (this.sync) {
        try {
          const written = Buffer.isBuffer(this._writingBuf) ? fs.writeSync(this.fd, this._writingBuf) : fs.writeSync(this.fd, this._writingBuf, "utf8");
          release(null, written);
        } catch (err) {
          release(err);
        }
      } else {
        fs.write(this.fd, this._writingBuf, release);
      }
    }
    function actualWriteBuffer() {
      const release = this.release;
      this._writing = true;
      this._writingBuf = this._writingBuf.length ? this._writingBuf : mergeBuf(this._bufs.shift(), this._lens.shift());
      if (this.sync) {
        try {
          const written = fs.writeSync(this.fd, this._writingBuf);
          release(null, written);
        } catch (err) {
          release(err);
        }
      } else {
        if (kCopyBuffer) {
          this._writingBuf = Buffer.from(this._writingBuf);
        }
        fs.write(this.fd, this._writingBuf, release);
      }
    }
    function actualClose(sonic) {
      if (sonic.fd === -1) {
        sonic.once("ready", actualClose.bind(null, sonic));
        return;
      }
      if (sonic._periodicFlushTimer !== void 0) {
        clearInterval(sonic._periodicFlushTimer);
      }
      sonic.destroyed = true;
      sonic._bufs = [];
      sonic._lens = [];
      assert(typeof sonic.fd === "number", `sonic.fd must be a number, got ${typeof sonic.fd}`);
      try {
        fs.fsync(sonic.fd, closeWrapped);
      } catch {
      }
      function closeWrapped() {
        if (sonic.fd !== 1 && sonic.fd !== 2) {
          fs.close(sonic.fd, done2);
        } else {
          done2();
        }
      }
      function done2(err) {
        if (err) {
          sonic.emit("error", err);
          return;
        }
        if (sonic._ending && !sonic._writing) {
          sonic.emit("finish");
        }
        sonic.emit("close");
      }
    }
    SonicBoom.SonicBoom = SonicBoom;
    SonicBoom.default = SonicBoom;
    module2.exports = SonicBoom;
  }
});

// node_modules/on-exit-leak-free/index.js
var require_on_exit_leak_free = __commonJS({
  "node_modules/on-exit-leak-free/index.js"(exports2, module2) {
    "use strict";
    var refs = {
      exit: [],
      beforeExit: []
    };
    var functions = {
      exit: onExit,
      beforeExit: onBeforeExit
    };
    var registry;
    function ensureRegistry() {
      if (registry === void 0) {
        registry = new FinalizationRegistry(clear);
      }
    }
    function install(event) {
      if (refs[event].length > 0) {
        return;
      }
      process.on(event, functions[event]);
    }
    function uninstall(event) {
      if (refs[event].length > 0) {
        return;
      }
      process.removeListener(event, functions[event]);
      if (refs.exit.length === 0 && refs.beforeExit.length === 0) {
        registry = void 0;
      }
    }
    function onExit() {
      callRefs("exit");
    }
    function onBeforeExit() {
      callRefs("beforeExit");
    }
    function callRefs(event) {
      for (const ref of refs[event]) {
        const obj = ref.deref();
        const fn = ref.fn;
        if (obj !== void 0) {
          fn(obj, event);
        }
      }
      refs[event] = [];
    }
    function clear(ref) {
      for (const event of ["exit", "beforeExit"]) {
        const index = refs[event].indexOf(ref);
        refs[event].splice(index, index + 1);
        uninstall(event);
      }
    }
    function _register(event, obj, fn) {
      if (obj === void 0) {
        throw new Error("the object can't be undefined");
      }
      install(event);
      const ref = new WeakRef(obj);
      ref.fn = fn;
      ensureRegistry();
      registry.register(obj, ref);
      refs[event].push(ref);
    }
    function register(obj, fn) {
      _register("exit", obj, fn);
    }
    function registerBeforeExit(obj, fn) {
      _register("beforeExit", obj, fn);
    }
    function unregister(obj) {
      if (registry === void 0) {
        return;
      }
      registry.unregister(obj);
      for (const event of ["exit", "beforeExit"]) {
        refs[event] = refs[event].filter((ref) => {
          const _obj = ref.deref();
          return _obj && _obj !== obj;
        });
        uninstall(event);
      }
    }
    module2.exports = {
      register,
      registerBeforeExit,
      unregister
    };
  }
});

// node_modules/thread-stream/package.json
var require_package = __commonJS({
  "node_modules/thread-stream/package.json"(exports2, module2) {
    module2.exports = {
      name: "thread-stream",
      version: "4.2.1",
      description: "A streaming way to send data to a Node.js Worker Thread",
      main: "index.js",
      types: "index.d.ts",
      engines: {
        node: ">=20"
      },
      dependencies: {
        "real-require": "^1.0.0"
      },
      devDependencies: {
        "@types/node": "^26.1.1",
        "@yao-pkg/pkg": "^6.0.0",
        borp: "^1.0.0",
        desm: "^1.3.0",
        eslint: "^9.39.1",
        fastbench: "^1.0.1",
        neostandard: "^0.13.0",
        "pino-elasticsearch": "^9.0.0",
        "sonic-boom": "^5.0.0",
        "ts-node": "^10.8.0",
        tsd: "^0.33.0",
        typescript: "~5.7.3"
      },
      scripts: {
        build: "tsc --noEmit",
        lint: "eslint",
        test: 'npm run lint && npm run build && npm run test:types && npm run transpile && borp --expose-gc --pattern "test/*.test.{js,mjs}"',
        "test:ci": 'npm run lint && npm run test:types && npm run transpile && borp --expose-gc --pattern "test/*.test.{js,mjs}"',
        "test:types": "tsd",
        "test:yarn": 'npm run transpile && borp --expose-gc --pattern "test/*.test.js"',
        transpile: "sh ./test/ts/transpile.sh"
      },
      tsd: {
        directory: "test/types"
      },
      repository: {
        type: "git",
        url: "git+https://github.com/mcollina/thread-stream.git"
      },
      keywords: [
        "worker",
        "thread",
        "threads",
        "stream"
      ],
      author: "Matteo Collina <hello@matteocollina.com>",
      license: "MIT",
      bugs: {
        url: "https://github.com/mcollina/thread-stream/issues"
      },
      homepage: "https://github.com/mcollina/thread-stream#readme"
    };
  }
});

// node_modules/thread-stream/lib/wait.js
var require_wait = __commonJS({
  "node_modules/thread-stream/lib/wait.js"(exports2, module2) {
    "use strict";
    var WAIT_MS = 1e4;
    function wait2(state, index, expected, timeout, done2) {
      const max = timeout === Infinity ? Infinity : Date.now() + timeout;
      const check = (previous) => {
        const current = Atomics.load(state, index);
        if (current >= expected) {
          done2(null, "ok");
          return;
        }
        if (previous !== void 0 && current !== previous) {
          done2(null, "not-equal");
          return;
        }
        if (max !== Infinity && Date.now() > max) {
          done2(null, "timed-out");
          return;
        }
        const remaining = max === Infinity ? WAIT_MS : Math.min(WAIT_MS, Math.max(1, max - Date.now()));
        const result = Atomics.waitAsync(state, index, current, remaining);
        if (result.async) {
          result.value.then((res) => {
            if (res === "ok") {
              const latest = Atomics.load(state, index);
              done2(null, latest >= expected ? "ok" : "not-equal");
              return;
            }
            check(current);
          });
        } else {
          setImmediate(done2, null, "not-equal");
        }
      };
      check();
    }
    function waitDiff(state, index, expected, timeout, done2) {
      const max = timeout === Infinity ? Infinity : Date.now() + timeout;
      const check = () => {
        const current = Atomics.load(state, index);
        if (current !== expected) {
          done2(null, "ok");
          return;
        }
        if (max !== Infinity && Date.now() > max) {
          done2(null, "timed-out");
          return;
        }
        const remaining = max === Infinity ? WAIT_MS : Math.min(WAIT_MS, Math.max(1, max - Date.now()));
        const result = Atomics.waitAsync(state, index, expected, remaining);
        if (result.async) {
          result.value.then((res) => {
            if (res === "ok") {
              done2(null, "ok");
              return;
            }
            check();
          });
        } else {
          setImmediate(check);
        }
      };
      check();
    }
    module2.exports = { wait: wait2, waitDiff };
  }
});

// node_modules/thread-stream/lib/indexes.js
var require_indexes = __commonJS({
  "node_modules/thread-stream/lib/indexes.js"(exports2, module2) {
    "use strict";
    var SEQ_INDEX = 2;
    var WRITE_INDEX = 4;
    var READ_INDEX = 8;
    module2.exports = {
      WRITE_INDEX,
      READ_INDEX,
      SEQ_INDEX
    };
  }
});

// node_modules/thread-stream/index.js
var require_thread_stream = __commonJS({
  "node_modules/thread-stream/index.js"(exports2, module2) {
    "use strict";
    var { version } = require_package();
    var { EventEmitter } = __require("events");
    var { Worker } = __require("worker_threads");
    var { join: join2 } = __require("path");
    var { pathToFileURL: pathToFileURL2 } = __require("url");
    var { wait: wait2 } = require_wait();
    var {
      WRITE_INDEX,
      READ_INDEX,
      SEQ_INDEX
    } = require_indexes();
    var buffer = __require("buffer");
    var assert = __require("assert");
    var kImpl = /* @__PURE__ */ Symbol("kImpl");
    var MAX_STRING = buffer.constants.MAX_STRING_LENGTH;
    function noop2() {
    }
    function updateState(stream, fn) {
      Atomics.add(stream[kImpl].state, SEQ_INDEX, 1);
      fn();
      Atomics.add(stream[kImpl].state, SEQ_INDEX, 1);
      Atomics.notify(stream[kImpl].state, SEQ_INDEX);
    }
    function resetIndexes(stream) {
      updateState(stream, () => {
        Atomics.store(stream[kImpl].state, READ_INDEX, 0);
        Atomics.store(stream[kImpl].state, WRITE_INDEX, 0);
      });
      Atomics.notify(stream[kImpl].state, READ_INDEX);
    }
    var FakeWeakRef = class {
      constructor(value) {
        this._value = value;
      }
      deref() {
        return this._value;
      }
    };
    var FakeFinalizationRegistry = class {
      register() {
      }
      unregister() {
      }
    };
    var FinalizationRegistry2 = process.env.NODE_V8_COVERAGE ? FakeFinalizationRegistry : global.FinalizationRegistry || FakeFinalizationRegistry;
    var WeakRef2 = process.env.NODE_V8_COVERAGE ? FakeWeakRef : global.WeakRef || FakeWeakRef;
    var registry = new FinalizationRegistry2((worker) => {
      if (worker.exited) {
        return;
      }
      worker.terminate();
    });
    function createWorker(stream, opts) {
      const { filename, workerData } = opts;
      const bundlerOverrides = "__bundlerPathsOverrides" in globalThis ? globalThis.__bundlerPathsOverrides : {};
      const toExecute = bundlerOverrides["thread-stream-worker"] || join2(__dirname, "lib", "worker.js");
      const worker = new Worker(toExecute, {
        ...opts.workerOpts,
        name: opts.workerOpts?.name || "thread-stream",
        trackUnmanagedFds: false,
        workerData: {
          filename: filename.indexOf("file://") === 0 ? filename : pathToFileURL2(filename).href,
          dataBuf: stream[kImpl].dataBuf,
          stateBuf: stream[kImpl].stateBuf,
          workerData: {
            $context: {
              threadStreamVersion: version
            },
            ...workerData
          }
        }
      });
      worker.stream = new FakeWeakRef(stream);
      worker.on("message", onWorkerMessage);
      worker.on("exit", onWorkerExit);
      registry.register(stream, worker);
      return worker;
    }
    function drain(stream) {
      assert(!stream[kImpl].sync);
      if (stream[kImpl].needDrain) {
        stream[kImpl].needDrain = false;
        stream.emit("drain");
      }
    }
    function nextFlush(stream) {
      while (true) {
        const writeIndex = Atomics.load(stream[kImpl].state, WRITE_INDEX);
        if (stream.destroyed || writeIndex < 0) {
          return;
        }
        const leftover = stream[kImpl].data.length - writeIndex;
        if (leftover > 0) {
          if (stream[kImpl].bufLen === 0) {
            stream[kImpl].flushing = false;
            if (stream[kImpl].ending) {
              end(stream);
            } else if (stream[kImpl].needDrain) {
              process.nextTick(drain, stream);
            }
            return;
          }
          write(stream, leftover, noop2);
          continue;
        }
        if (leftover === 0) {
          if (writeIndex === 0 && stream[kImpl].bufLen === 0) {
            return;
          }
          waitForRead(stream, () => {
            if (stream.destroyed) {
              return;
            }
            resetIndexes(stream);
            nextFlush(stream);
          });
          return;
        }
        destroy(stream, new Error("overwritten"));
        return;
      }
    }
    function onWorkerMessage(msg) {
      const stream = this.stream.deref();
      if (stream === void 0) {
        this.exited = true;
        this.terminate();
        return;
      }
      if (msg?.code == null) {
        return;
      }
      switch (msg.code) {
        case "READY":
          if (!stream[kImpl].ending) {
            this.stream = new WeakRef2(stream);
          }
          waitForRead(stream, () => {
            stream[kImpl].ready = true;
            stream.emit("ready");
          });
          break;
        case "ERROR":
          destroy(stream, msg.err);
          break;
        case "EVENT":
          if (Array.isArray(msg.args)) {
            stream.emit(msg.name, ...msg.args);
          } else {
            stream.emit(msg.name, msg.args);
          }
          break;
        case "FLUSHED": {
          if (msg.context !== "thread-stream") {
            destroy(stream, new Error("this should not happen: " + msg.code));
            break;
          }
          const cb = stream[kImpl].flushCallbacks.get(msg.id);
          if (cb) {
            stream[kImpl].flushCallbacks.delete(msg.id);
            process.nextTick(cb);
          }
          break;
        }
        case "WARNING":
          process.emitWarning(msg.err);
          break;
        default:
          destroy(stream, new Error("this should not happen: " + msg.code));
      }
    }
    function onWorkerExit(code2) {
      const stream = this.stream.deref();
      if (stream === void 0) {
        return;
      }
      registry.unregister(stream);
      stream.worker.exited = true;
      stream.worker.off("exit", onWorkerExit);
      destroy(stream, code2 !== 0 ? new Error("the worker thread exited") : null);
    }
    var ThreadStream = class extends EventEmitter {
      constructor(opts = {}) {
        super();
        if (opts.bufferSize < 4) {
          throw new Error("bufferSize must at least fit a 4-byte utf-8 char");
        }
        this[kImpl] = {};
        this[kImpl].stateBuf = new SharedArrayBuffer(128);
        this[kImpl].state = new Int32Array(this[kImpl].stateBuf);
        this[kImpl].dataBuf = new SharedArrayBuffer(opts.bufferSize || 4 * 1024 * 1024);
        this[kImpl].data = Buffer.from(this[kImpl].dataBuf);
        this[kImpl].sync = opts.sync || false;
        this[kImpl].ending = false;
        this[kImpl].ended = false;
        this[kImpl].needDrain = false;
        this[kImpl].destroyed = false;
        this[kImpl].flushing = false;
        this[kImpl].ready = false;
        this[kImpl].finished = false;
        this[kImpl].errored = null;
        this[kImpl].closed = false;
        this[kImpl].buf = [];
        this[kImpl].bufHead = 0;
        this[kImpl].bufLen = 0;
        this[kImpl].flushCallbacks = /* @__PURE__ */ new Map();
        this[kImpl].nextFlushId = 0;
        this[kImpl].flushRetainCount = 0;
        this[kImpl].userRef = true;
        this.worker = createWorker(this, opts);
        this.on("message", (message, transferList) => {
          this.worker.postMessage(message, transferList);
        });
      }
      write(data) {
        const dataBuf = Buffer.isBuffer(data) ? data : Buffer.from(data);
        if (this[kImpl].destroyed) {
          error(this, new Error("the worker has exited"));
          return false;
        }
        if (this[kImpl].ending) {
          error(this, new Error("the worker is ending"));
          return false;
        }
        if (this[kImpl].flushing && this[kImpl].bufLen + dataBuf.length >= MAX_STRING) {
          try {
            writeSync(this);
            this[kImpl].flushing = true;
          } catch (err) {
            destroy(this, err);
            return false;
          }
        }
        this[kImpl].buf.push(dataBuf);
        this[kImpl].bufLen += dataBuf.length;
        if (this[kImpl].sync) {
          try {
            writeSync(this);
            return true;
          } catch (err) {
            destroy(this, err);
            return false;
          }
        }
        if (!this[kImpl].flushing) {
          this[kImpl].flushing = true;
          setImmediate(nextFlush, this);
        }
        this[kImpl].needDrain = this[kImpl].data.length - this[kImpl].bufLen - Atomics.load(this[kImpl].state, WRITE_INDEX) <= 0;
        return !this[kImpl].needDrain;
      }
      end() {
        if (this[kImpl].destroyed) {
          return;
        }
        this[kImpl].ending = true;
        this.worker.stream = new FakeWeakRef(this);
        end(this);
      }
      flush(cb) {
        const userCb = typeof cb === "function" ? cb : null;
        cb = userCb || noop2;
        if (userCb) {
          retainWorkerForPendingFlush(this);
        }
        let finished = false;
        const done2 = (err) => {
          if (finished) {
            return;
          }
          finished = true;
          if (userCb) {
            releaseWorkerForPendingFlush(this);
          }
          cb(err);
        };
        flushBuffer(this, (err) => {
          if (err) {
            process.nextTick(done2, err);
            return;
          }
          requestWorkerFlush(this, done2);
        });
      }
      flushSync() {
        if (this[kImpl].destroyed) {
          return;
        }
        writeSync(this);
        flushSync(this);
      }
      unref() {
        this[kImpl].userRef = false;
        if (this[kImpl].flushRetainCount === 0) {
          this.worker.unref();
        }
      }
      ref() {
        this[kImpl].userRef = true;
        this.worker.ref();
      }
      get ready() {
        return this[kImpl].ready;
      }
      get destroyed() {
        return this[kImpl].destroyed;
      }
      get closed() {
        return this[kImpl].closed;
      }
      get writable() {
        return !this[kImpl].destroyed && !this[kImpl].ending;
      }
      get writableEnded() {
        return this[kImpl].ending;
      }
      get writableFinished() {
        return this[kImpl].finished;
      }
      get writableNeedDrain() {
        return this[kImpl].needDrain;
      }
      get writableObjectMode() {
        return false;
      }
      get writableErrored() {
        return this[kImpl].errored;
      }
    };
    function flushBuffer(stream, cb) {
      if (stream[kImpl].destroyed) {
        process.nextTick(cb, new Error("the worker has exited"));
        return;
      }
      if (!stream[kImpl].sync && (stream[kImpl].flushing || stream[kImpl].bufLen > 0)) {
        setImmediate(flushBuffer, stream, cb);
        return;
      }
      waitForRead(stream, cb);
    }
    function waitForRead(stream, cb) {
      const writeIndex = Atomics.load(stream[kImpl].state, WRITE_INDEX);
      wait2(stream[kImpl].state, READ_INDEX, writeIndex, Infinity, (err, res) => {
        if (err) {
          destroy(stream, err);
          cb(err);
          return;
        }
        if (res !== "ok") {
          waitForRead(stream, cb);
          return;
        }
        cb();
      });
    }
    function retainWorkerForPendingFlush(stream) {
      if (stream[kImpl].flushRetainCount === 0) {
        stream.worker.ref();
      }
      stream[kImpl].flushRetainCount++;
    }
    function releaseWorkerForPendingFlush(stream) {
      if (stream[kImpl].flushRetainCount === 0) {
        return;
      }
      stream[kImpl].flushRetainCount--;
      if (stream[kImpl].flushRetainCount === 0 && !stream[kImpl].userRef) {
        stream.worker.unref();
      }
    }
    function requestWorkerFlush(stream, cb) {
      if (stream[kImpl].destroyed) {
        process.nextTick(cb, new Error("the worker has exited"));
        return;
      }
      if (!stream[kImpl].ready) {
        const onReady = () => {
          cleanup();
          requestWorkerFlush(stream, cb);
        };
        const onClose = () => {
          cleanup();
          process.nextTick(cb, new Error("the worker has exited"));
        };
        const cleanup = () => {
          stream.off("ready", onReady);
          stream.off("close", onClose);
        };
        stream.once("ready", onReady);
        stream.once("close", onClose);
        return;
      }
      const id = ++stream[kImpl].nextFlushId;
      stream[kImpl].flushCallbacks.set(id, cb);
      try {
        stream.worker.postMessage({
          code: "FLUSH",
          context: "thread-stream",
          id
        });
      } catch (err) {
        stream[kImpl].flushCallbacks.delete(id);
        destroy(stream, err);
        process.nextTick(cb, err);
      }
    }
    function failPendingFlushCallbacks(stream, err) {
      const callbacks = stream[kImpl].flushCallbacks;
      if (callbacks.size === 0) {
        return;
      }
      const flushErr = err || new Error("the worker has exited");
      for (const cb of callbacks.values()) {
        process.nextTick(cb, flushErr);
      }
      callbacks.clear();
    }
    function error(stream, err) {
      setImmediate(() => {
        stream.emit("error", err);
      });
    }
    function destroy(stream, err) {
      if (stream[kImpl].destroyed) {
        return;
      }
      stream[kImpl].destroyed = true;
      failPendingFlushCallbacks(stream, err);
      if (err) {
        stream[kImpl].errored = err;
        error(stream, err);
      }
      if (!stream.worker.exited) {
        stream.worker.terminate().catch(() => {
        }).then(() => {
          stream[kImpl].closed = true;
          stream.emit("close");
        });
      } else {
        setImmediate(() => {
          stream[kImpl].closed = true;
          stream.emit("close");
        });
      }
    }
    function write(stream, maxBytes, cb) {
      const current = Atomics.load(stream[kImpl].state, WRITE_INDEX);
      let offset = current;
      let remaining = maxBytes;
      while (remaining > 0 && stream[kImpl].bufLen !== 0) {
        const head = stream[kImpl].bufHead;
        const buf = stream[kImpl].buf[head];
        if (buf.length <= remaining) {
          buf.copy(stream[kImpl].data, offset);
          offset += buf.length;
          remaining -= buf.length;
          stream[kImpl].bufLen -= buf.length;
          stream[kImpl].bufHead = head + 1;
          if (stream[kImpl].bufHead === stream[kImpl].buf.length) {
            stream[kImpl].buf.length = 0;
            stream[kImpl].bufHead = 0;
          } else if (stream[kImpl].bufHead >= 1024 && stream[kImpl].bufHead * 2 >= stream[kImpl].buf.length) {
            stream[kImpl].buf.splice(0, stream[kImpl].bufHead);
            stream[kImpl].bufHead = 0;
          }
          continue;
        }
        buf.copy(stream[kImpl].data, offset, 0, remaining);
        stream[kImpl].buf[head] = buf.subarray(remaining);
        stream[kImpl].bufLen -= remaining;
        offset += remaining;
        remaining = 0;
      }
      updateState(stream, () => {
        Atomics.store(stream[kImpl].state, WRITE_INDEX, offset);
      });
      cb();
      return true;
    }
    function end(stream) {
      if (stream[kImpl].ended || !stream[kImpl].ending || stream[kImpl].flushing) {
        return;
      }
      stream[kImpl].ended = true;
      try {
        stream.flushSync();
        let readIndex = Atomics.load(stream[kImpl].state, READ_INDEX);
        updateState(stream, () => {
          Atomics.store(stream[kImpl].state, WRITE_INDEX, -1);
        });
        let spins = 0;
        while (readIndex !== -1) {
          Atomics.wait(stream[kImpl].state, READ_INDEX, readIndex, 1e3);
          readIndex = Atomics.load(stream[kImpl].state, READ_INDEX);
          if (readIndex === -2) {
            destroy(stream, new Error("end() failed"));
            return;
          }
          if (++spins === 10) {
            destroy(stream, new Error("end() took too long (10s)"));
            return;
          }
        }
        process.nextTick(() => {
          stream[kImpl].finished = true;
          stream.emit("finish");
        });
      } catch (err) {
        destroy(stream, err);
      }
    }
    function writeSync(stream) {
      const cb = () => {
        if (stream[kImpl].ending) {
          end(stream);
        } else if (stream[kImpl].needDrain) {
          process.nextTick(drain, stream);
        }
      };
      stream[kImpl].flushing = false;
      while (stream[kImpl].bufLen !== 0) {
        const writeIndex = Atomics.load(stream[kImpl].state, WRITE_INDEX);
        if (writeIndex < 0) {
          throw new Error("_writeSync failed");
        }
        const leftover = stream[kImpl].data.length - writeIndex;
        if (leftover === 0) {
          flushSync(stream);
          resetIndexes(stream);
          continue;
        } else if (leftover < 0) {
          throw new Error("overwritten");
        }
        write(stream, leftover, cb);
      }
    }
    function flushSync(stream) {
      if (stream[kImpl].flushing) {
        throw new Error("unable to flush while flushing");
      }
      const writeIndex = Atomics.load(stream[kImpl].state, WRITE_INDEX);
      let spins = 0;
      while (true) {
        const readIndex = Atomics.load(stream[kImpl].state, READ_INDEX);
        if (readIndex === -2) {
          throw Error("_flushSync failed");
        }
        if (readIndex !== writeIndex) {
          Atomics.wait(stream[kImpl].state, READ_INDEX, readIndex, 1e3);
        } else {
          break;
        }
        if (++spins === 10) {
          throw new Error("_flushSync took too long (10s)");
        }
      }
    }
    module2.exports = ThreadStream;
  }
});

// node_modules/pino/lib/transport.js
var require_transport = __commonJS({
  "node_modules/pino/lib/transport.js"(exports2, module2) {
    "use strict";
    var { createRequire: createRequire2 } = __require("module");
    var { existsSync } = __require("node:fs");
    var getCallers = require_caller();
    var { join: join2, isAbsolute, sep } = __require("node:path");
    var { fileURLToPath } = __require("node:url");
    var sleep = require_atomic_sleep();
    var onExit = require_on_exit_leak_free();
    var ThreadStream = require_thread_stream();
    var { transportUsesMultistreamSym } = require_symbols();
    function setupOnExit(stream) {
      onExit.register(stream, autoEnd);
      onExit.registerBeforeExit(stream, flush);
      stream.on("close", function() {
        onExit.unregister(stream);
      });
    }
    function hasPreloadFlags() {
      const execArgv = process.execArgv;
      for (let i = 0; i < execArgv.length; i++) {
        const arg = execArgv[i];
        if (arg === "--import" || arg === "--require" || arg === "-r") {
          return true;
        }
        if (arg.startsWith("--import=") || arg.startsWith("--require=") || arg.startsWith("-r=")) {
          return true;
        }
      }
      return false;
    }
    function sanitizeNodeOptions(nodeOptions) {
      const tokens = nodeOptions.match(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g);
      if (!tokens) {
        return nodeOptions;
      }
      const sanitized = [];
      let changed = false;
      for (let i = 0; i < tokens.length; i++) {
        const token = tokens[i];
        if (token === "--require" || token === "-r" || token === "--import") {
          const next = tokens[i + 1];
          if (next && shouldDropPreload(next)) {
            changed = true;
            i++;
            continue;
          }
          sanitized.push(token);
          if (next) {
            sanitized.push(next);
            i++;
          }
          continue;
        }
        if (token.startsWith("--require=") || token.startsWith("-r=") || token.startsWith("--import=")) {
          const value = token.slice(token.indexOf("=") + 1);
          if (shouldDropPreload(value)) {
            changed = true;
            continue;
          }
        }
        sanitized.push(token);
      }
      return changed ? sanitized.join(" ") : nodeOptions;
    }
    function shouldDropPreload(value) {
      const unquoted = stripQuotes(value);
      if (!unquoted) {
        return false;
      }
      let path2 = unquoted;
      if (path2.startsWith("file://")) {
        try {
          path2 = fileURLToPath(path2);
        } catch {
          return false;
        }
      }
      return isAbsolute(path2) && !existsSync(path2);
    }
    function stripQuotes(value) {
      const first = value[0];
      const last = value[value.length - 1];
      if (first === '"' && last === '"' || first === "'" && last === "'") {
        return value.slice(1, -1);
      }
      return value;
    }
    function buildStream(filename, workerData, workerOpts, sync, name) {
      if (!workerOpts.execArgv && hasPreloadFlags() && __require.main === void 0) {
        workerOpts = {
          ...workerOpts,
          execArgv: []
        };
      }
      if (!workerOpts.env && process.env.NODE_OPTIONS) {
        const nodeOptions = sanitizeNodeOptions(process.env.NODE_OPTIONS);
        if (nodeOptions !== process.env.NODE_OPTIONS) {
          workerOpts = {
            ...workerOpts,
            env: {
              ...process.env,
              NODE_OPTIONS: nodeOptions
            }
          };
        }
      }
      workerOpts = { ...workerOpts, name };
      const stream = new ThreadStream({
        filename,
        workerData,
        workerOpts,
        sync
      });
      stream.on("ready", onReady);
      stream.on("close", function() {
        process.removeListener("exit", onExit2);
      });
      process.on("exit", onExit2);
      function onReady() {
        process.removeListener("exit", onExit2);
        stream.unref();
        if (workerOpts.autoEnd !== false) {
          setupOnExit(stream);
        }
      }
      function onExit2() {
        if (stream.closed) {
          return;
        }
        stream.flushSync();
        sleep(100);
        stream.end();
      }
      return stream;
    }
    function autoEnd(stream) {
      stream.ref();
      stream.flushSync();
      stream.end();
      stream.once("close", function() {
        stream.unref();
      });
    }
    function flush(stream) {
      stream.flushSync();
    }
    function transport(fullOptions) {
      const { pipeline, targets, levels, dedupe, worker = {}, caller = getCallers(), sync = false } = fullOptions;
      const options2 = {
        ...fullOptions.options
      };
      let usesMultistream = false;
      const callers = typeof caller === "string" ? [caller] : caller;
      const bundlerOverrides = typeof globalThis === "object" && Object.prototype.hasOwnProperty.call(globalThis, "__bundlerPathsOverrides") && globalThis.__bundlerPathsOverrides && typeof globalThis.__bundlerPathsOverrides === "object" ? globalThis.__bundlerPathsOverrides : /* @__PURE__ */ Object.create(null);
      let target = fullOptions.target;
      if (target && targets) {
        throw new Error("only one of target or targets can be specified");
      }
      if (targets) {
        target = bundlerOverrides["pino-worker"] || join2(__dirname, "worker.js");
        options2.targets = targets.filter((dest) => dest.target).map((dest) => {
          return {
            ...dest,
            target: fixTarget(dest.target)
          };
        });
        options2.pipelines = targets.filter((dest) => dest.pipeline).map((dest) => {
          return dest.pipeline.map((t) => {
            return {
              ...t,
              level: dest.level,
              // duplicate the pipeline `level` property defined in the upper level
              target: fixTarget(t.target)
            };
          });
        });
        const targetsHaveLevel = options2.targets.some((t) => t.level != null);
        const pipelinesHaveLevel = options2.pipelines.some((p) => p.some((t) => t.level != null));
        usesMultistream = options2.targets.length + options2.pipelines.length > 1 || targetsHaveLevel || pipelinesHaveLevel;
      } else if (pipeline) {
        target = bundlerOverrides["pino-worker"] || join2(__dirname, "worker.js");
        options2.pipelines = [pipeline.map((dest) => {
          return {
            ...dest,
            target: fixTarget(dest.target)
          };
        })];
      }
      if (levels) {
        options2.levels = levels;
      }
      if (dedupe) {
        options2.dedupe = dedupe;
      }
      options2.pinoWillSendConfig = true;
      const name = targets || pipeline ? "pino.transport" : target;
      const stream = buildStream(fixTarget(target), options2, worker, sync, name);
      if (usesMultistream) {
        stream[transportUsesMultistreamSym] = true;
      }
      return stream;
      function fixTarget(origin) {
        origin = bundlerOverrides[origin] || origin;
        if (isAbsolute(origin) || origin.indexOf("file://") === 0) {
          return origin;
        }
        if (origin === "pino/file") {
          return join2(__dirname, "..", "file.js");
        }
        let fixTarget2;
        for (const filePath of callers) {
          try {
            const context = filePath === "node:repl" ? process.cwd() + sep : filePath;
            fixTarget2 = createRequire2(context).resolve(origin);
            break;
          } catch (err) {
            continue;
          }
        }
        if (!fixTarget2) {
          throw new Error(`unable to determine transport target for "${origin}"`);
        }
        return fixTarget2;
      }
    }
    module2.exports = transport;
  }
});

// node_modules/pino/lib/tools.js
var require_tools = __commonJS({
  "node_modules/pino/lib/tools.js"(exports2, module2) {
    "use strict";
    var diagChan = __require("node:diagnostics_channel");
    var format = require_quick_format_unescaped();
    var { mapHttpRequest, mapHttpResponse } = require_pino_std_serializers();
    var SonicBoom = require_sonic_boom();
    var onExit = require_on_exit_leak_free();
    var {
      lsCacheSym,
      chindingsSym,
      writeSym,
      serializersSym,
      formatOptsSym,
      endSym,
      stringifiersSym,
      stringifySym,
      stringifySafeSym,
      wildcardFirstSym,
      nestedKeySym,
      formattersSym,
      messageKeySym,
      errorKeySym,
      nestedKeyStrSym,
      msgPrefixSym
    } = require_symbols();
    var { isMainThread } = __require("worker_threads");
    var transport = require_transport();
    var [nodeMajor] = process.versions.node.split(".").map((v) => Number(v));
    var asJsonChan = diagChan.tracingChannel("pino_asJson");
    var asString = nodeMajor >= 25 ? (str) => JSON.stringify(str) : _asString;
    function noop2() {
    }
    function genLog(level, hook6) {
      if (!hook6) return LOG;
      return function hookWrappedLog(...args) {
        hook6.call(this, args, LOG, level);
      };
      function LOG(o, ...n2) {
        if (typeof o === "object") {
          let msg = o;
          if (o !== null) {
            if (o.method && o.headers && o.socket) {
              o = mapHttpRequest(o);
            } else if (typeof o.setHeader === "function") {
              o = mapHttpResponse(o);
            }
          }
          let formatParams;
          if (msg === null && n2.length === 0) {
            formatParams = [null];
          } else {
            msg = n2.shift();
            formatParams = n2;
          }
          if (typeof this[msgPrefixSym] === "string" && msg !== void 0 && msg !== null) {
            msg = this[msgPrefixSym] + msg;
          }
          this[writeSym](o, format(msg, formatParams, this[formatOptsSym]), level);
        } else {
          let msg = o === void 0 ? n2.shift() : o;
          if (typeof this[msgPrefixSym] === "string" && msg !== void 0 && msg !== null) {
            msg = this[msgPrefixSym] + msg;
          }
          this[writeSym](null, format(msg, n2, this[formatOptsSym]), level);
        }
      }
    }
    function _asString(str) {
      let result = "";
      let last = 0;
      let found = false;
      let point = 255;
      const l = str.length;
      if (l > 100) {
        return JSON.stringify(str);
      }
      for (var i = 0; i < l && point >= 32; i++) {
        point = str.charCodeAt(i);
        if (point === 34 || point === 92) {
          result += str.slice(last, i) + "\\";
          last = i;
          found = true;
        }
      }
      if (!found) {
        result = str;
      } else {
        result += str.slice(last);
      }
      return point < 32 ? JSON.stringify(str) : '"' + result + '"';
    }
    function asJson(obj, msg, num, time) {
      if (asJsonChan.hasSubscribers === false) {
        return _asJson.call(this, obj, msg, num, time);
      }
      const store = { instance: this, arguments };
      return asJsonChan.traceSync(_asJson, store, this, obj, msg, num, time);
    }
    function _asJson(obj, msg, num, time) {
      const stringify4 = this[stringifySym];
      const stringifySafe = this[stringifySafeSym];
      const stringifiers = this[stringifiersSym];
      const end = this[endSym];
      const chindings = this[chindingsSym];
      const serializers = this[serializersSym];
      const formatters = this[formattersSym];
      const messageKey = this[messageKeySym];
      const errorKey = this[errorKeySym];
      let data = this[lsCacheSym][num] + time;
      data = data + chindings;
      let value;
      if (formatters.log) {
        obj = formatters.log(obj);
      }
      const wildcardStringifier = stringifiers[wildcardFirstSym];
      let propStr = "";
      for (const key in obj) {
        value = obj[key];
        if (Object.prototype.hasOwnProperty.call(obj, key) && value !== void 0) {
          if (serializers[key]) {
            value = serializers[key](value);
          } else if (key === errorKey && serializers.err) {
            value = serializers.err(value);
          }
          const stringifier = stringifiers[key] || wildcardStringifier;
          switch (typeof value) {
            case "undefined":
            case "function":
              continue;
            case "number":
              if (Number.isFinite(value) === false) {
                value = null;
              }
            // this case explicitly falls through to the next one
            case "boolean":
              if (stringifier) value = stringifier(value);
              break;
            case "string":
              value = (stringifier || asString)(value);
              break;
            default:
              value = (stringifier || stringify4)(value, stringifySafe);
          }
          if (value === void 0) continue;
          const strKey = asString(key);
          propStr += "," + strKey + ":" + value;
        }
      }
      let msgStr = "";
      if (msg !== void 0) {
        value = serializers[messageKey] ? serializers[messageKey](msg) : msg;
        const stringifier = stringifiers[messageKey] || wildcardStringifier;
        switch (typeof value) {
          case "function":
            break;
          case "number":
            if (Number.isFinite(value) === false) {
              value = null;
            }
          // this case explicitly falls through to the next one
          case "boolean":
            if (stringifier) value = stringifier(value);
            msgStr = ',"' + messageKey + '":' + value;
            break;
          case "string":
            value = (stringifier || asString)(value);
            msgStr = ',"' + messageKey + '":' + value;
            break;
          default:
            value = (stringifier || stringify4)(value, stringifySafe);
            msgStr = ',"' + messageKey + '":' + value;
        }
      }
      if (this[nestedKeySym] && propStr) {
        return data + this[nestedKeyStrSym] + propStr.slice(1) + "}" + msgStr + end;
      } else {
        return data + propStr + msgStr + end;
      }
    }
    function asChindings(instance, bindings) {
      let value;
      let data = instance[chindingsSym];
      const stringify4 = instance[stringifySym];
      const stringifySafe = instance[stringifySafeSym];
      const stringifiers = instance[stringifiersSym];
      const wildcardStringifier = stringifiers[wildcardFirstSym];
      const serializers = instance[serializersSym];
      const formatter = instance[formattersSym].bindings;
      bindings = formatter(bindings);
      for (const key in bindings) {
        value = bindings[key];
        const valid = (key.length < 5 || key !== "level" && key !== "serializers" && key !== "formatters" && key !== "customLevels") && bindings.hasOwnProperty(key) && value !== void 0;
        if (valid === true) {
          value = serializers[key] ? serializers[key](value) : value;
          value = (stringifiers[key] || wildcardStringifier || stringify4)(value, stringifySafe);
          if (value === void 0) continue;
          data += "," + asString(key) + ":" + value;
        }
      }
      return data;
    }
    function hasBeenTampered(stream) {
      return stream.write !== stream.constructor.prototype.write;
    }
    function buildSafeSonicBoom(opts) {
      const stream = new SonicBoom(opts);
      stream.on("error", filterBrokenPipe);
      if (!opts.sync && isMainThread) {
        onExit.register(stream, autoEnd);
        stream.on("close", function() {
          onExit.unregister(stream);
        });
      }
      return stream;
      function filterBrokenPipe(err) {
        if (err.code === "EPIPE") {
          stream.write = noop2;
          stream.end = noop2;
          stream.flushSync = noop2;
          stream.destroy = noop2;
          return;
        }
        stream.removeListener("error", filterBrokenPipe);
        stream.emit("error", err);
      }
    }
    function autoEnd(stream, eventName) {
      if (stream.destroyed) {
        return;
      }
      if (eventName === "beforeExit") {
        stream.flush();
        stream.on("drain", function() {
          stream.end();
        });
      } else {
        stream.flushSync();
      }
    }
    function createArgsNormalizer(defaultOptions2) {
      return function normalizeArgs(instance, caller, opts = {}, stream) {
        if (typeof opts === "string") {
          stream = buildSafeSonicBoom({ dest: opts });
          opts = {};
        } else if (typeof stream === "string") {
          if (opts && opts.transport) {
            throw Error("only one of option.transport or stream can be specified");
          }
          stream = buildSafeSonicBoom({ dest: stream });
        } else if (opts instanceof SonicBoom || opts.writable || opts._writableState) {
          stream = opts;
          opts = {};
        } else if (opts.transport) {
          if (opts.transport instanceof SonicBoom || opts.transport.writable || opts.transport._writableState) {
            throw Error("option.transport do not allow stream, please pass to option directly. e.g. pino(transport)");
          }
          if (opts.transport.targets && opts.transport.targets.length && opts.formatters && typeof opts.formatters.level === "function") {
            throw Error("option.transport.targets do not allow custom level formatters");
          }
          let customLevels;
          if (opts.customLevels) {
            customLevels = opts.useOnlyCustomLevels ? opts.customLevels : Object.assign({}, opts.levels, opts.customLevels);
          }
          stream = transport({ caller, ...opts.transport, levels: customLevels });
        }
        opts = Object.assign({}, defaultOptions2, opts);
        opts.serializers = Object.assign(/* @__PURE__ */ Object.create(null), defaultOptions2.serializers, opts.serializers);
        opts.formatters = Object.assign({}, defaultOptions2.formatters, opts.formatters);
        if (opts.prettyPrint) {
          throw new Error("prettyPrint option is no longer supported, see the pino-pretty package (https://github.com/pinojs/pino-pretty)");
        }
        const { enabled, onChild } = opts;
        if (enabled === false) opts.level = "silent";
        if (!onChild) opts.onChild = noop2;
        if (!stream) {
          if (!hasBeenTampered(process.stdout)) {
            stream = buildSafeSonicBoom({ fd: process.stdout.fd || 1 });
          } else {
            stream = process.stdout;
          }
        }
        return { opts, stream };
      };
    }
    function stringify3(obj, stringifySafeFn) {
      try {
        return JSON.stringify(obj);
      } catch (_) {
        try {
          const stringify4 = stringifySafeFn || this[stringifySafeSym];
          return stringify4(obj);
        } catch (_2) {
          return '"[unable to serialize, circular reference is too complex to analyze]"';
        }
      }
    }
    function buildFormatters(level, bindings, log) {
      return {
        level,
        bindings,
        log
      };
    }
    function normalizeDestFileDescriptor(destination) {
      const fd = Number(destination);
      if (typeof destination === "string" && Number.isFinite(fd)) {
        return fd;
      }
      if (destination === void 0) {
        return 1;
      }
      return destination;
    }
    module2.exports = {
      noop: noop2,
      buildSafeSonicBoom,
      asChindings,
      asJson,
      genLog,
      createArgsNormalizer,
      stringify: stringify3,
      buildFormatters,
      normalizeDestFileDescriptor
    };
  }
});

// node_modules/pino/lib/constants.js
var require_constants = __commonJS({
  "node_modules/pino/lib/constants.js"(exports2, module2) {
    var DEFAULT_LEVELS = {
      trace: 10,
      debug: 20,
      info: 30,
      warn: 40,
      error: 50,
      fatal: 60
    };
    var SORTING_ORDER = {
      ASC: "ASC",
      DESC: "DESC"
    };
    module2.exports = {
      DEFAULT_LEVELS,
      SORTING_ORDER
    };
  }
});

// node_modules/pino/lib/levels.js
var require_levels = __commonJS({
  "node_modules/pino/lib/levels.js"(exports2, module2) {
    "use strict";
    var {
      lsCacheSym,
      levelValSym,
      useOnlyCustomLevelsSym,
      streamSym,
      formattersSym,
      hooksSym,
      levelCompSym
    } = require_symbols();
    var { noop: noop2, genLog } = require_tools();
    var { DEFAULT_LEVELS, SORTING_ORDER } = require_constants();
    var levelMethods = {
      fatal: (hook6) => {
        const logFatal = genLog(DEFAULT_LEVELS.fatal, hook6);
        return function(...args) {
          const stream = this[streamSym];
          logFatal.call(this, ...args);
          if (typeof stream.flushSync === "function") {
            try {
              stream.flushSync();
            } catch (e) {
            }
          }
        };
      },
      error: (hook6) => genLog(DEFAULT_LEVELS.error, hook6),
      warn: (hook6) => genLog(DEFAULT_LEVELS.warn, hook6),
      info: (hook6) => genLog(DEFAULT_LEVELS.info, hook6),
      debug: (hook6) => genLog(DEFAULT_LEVELS.debug, hook6),
      trace: (hook6) => genLog(DEFAULT_LEVELS.trace, hook6)
    };
    var nums = Object.keys(DEFAULT_LEVELS).reduce((o, k) => {
      o[DEFAULT_LEVELS[k]] = k;
      return o;
    }, {});
    var initialLsCache = Object.keys(nums).reduce((o, k) => {
      o[k] = '{"level":' + Number(k);
      return o;
    }, {});
    function genLsCache(instance) {
      const formatter = instance[formattersSym].level;
      const { labels } = instance.levels;
      const cache2 = {};
      for (const label in labels) {
        const level = formatter(labels[label], Number(label));
        cache2[label] = JSON.stringify(level).slice(0, -1);
      }
      instance[lsCacheSym] = cache2;
      return instance;
    }
    function isStandardLevel(level, useOnlyCustomLevels) {
      if (useOnlyCustomLevels) {
        return false;
      }
      switch (level) {
        case "fatal":
        case "error":
        case "warn":
        case "info":
        case "debug":
        case "trace":
          return true;
        default:
          return false;
      }
    }
    function setLevel(level) {
      const { labels, values } = this.levels;
      if (typeof level === "number") {
        if (labels[level] === void 0) throw Error("unknown level value" + level);
        level = labels[level];
      }
      if (values[level] === void 0) throw Error("unknown level " + level);
      const preLevelVal = this[levelValSym];
      const levelVal = this[levelValSym] = values[level];
      const useOnlyCustomLevelsVal = this[useOnlyCustomLevelsSym];
      const levelComparison = this[levelCompSym];
      const hook6 = this[hooksSym].logMethod;
      for (const key in values) {
        if (levelComparison(values[key], levelVal) === false) {
          this[key] = noop2;
          continue;
        }
        this[key] = isStandardLevel(key, useOnlyCustomLevelsVal) ? levelMethods[key](hook6) : genLog(values[key], hook6);
      }
      this.emit(
        "level-change",
        level,
        levelVal,
        labels[preLevelVal],
        preLevelVal,
        this
      );
    }
    function getLevel(level) {
      const { levels, levelVal } = this;
      return levels && levels.labels ? levels.labels[levelVal] : "";
    }
    function isLevelEnabled(logLevel) {
      const { values } = this.levels;
      const logLevelVal = values[logLevel];
      return logLevelVal !== void 0 && this[levelCompSym](logLevelVal, this[levelValSym]);
    }
    function compareLevel(direction, current, expected) {
      if (direction === SORTING_ORDER.DESC) {
        return current <= expected;
      }
      return current >= expected;
    }
    function genLevelComparison(levelComparison) {
      if (typeof levelComparison === "string") {
        return compareLevel.bind(null, levelComparison);
      }
      return levelComparison;
    }
    function mappings(customLevels = null, useOnlyCustomLevels = false) {
      const customNums = customLevels ? Object.keys(customLevels).reduce((o, k) => {
        o[customLevels[k]] = k;
        return o;
      }, {}) : null;
      const labels = Object.assign(
        Object.create(Object.prototype, { Infinity: { value: "silent" } }),
        useOnlyCustomLevels ? null : nums,
        customNums
      );
      const values = Object.assign(
        Object.create(Object.prototype, { silent: { value: Infinity } }),
        useOnlyCustomLevels ? null : DEFAULT_LEVELS,
        customLevels
      );
      return { labels, values };
    }
    function assertDefaultLevelFound(defaultLevel, customLevels, useOnlyCustomLevels) {
      if (typeof defaultLevel === "number") {
        const values = [].concat(
          Object.keys(customLevels || {}).map((key) => customLevels[key]),
          useOnlyCustomLevels ? [] : Object.keys(nums).map((level) => +level),
          Infinity
        );
        if (!values.includes(defaultLevel)) {
          throw Error(`default level:${defaultLevel} must be included in custom levels`);
        }
        return;
      }
      const labels = Object.assign(
        Object.create(Object.prototype, { silent: { value: Infinity } }),
        useOnlyCustomLevels ? null : DEFAULT_LEVELS,
        customLevels
      );
      if (!(defaultLevel in labels)) {
        throw Error(`default level:${defaultLevel} must be included in custom levels`);
      }
    }
    function assertNoLevelCollisions(levels, customLevels) {
      const { labels, values } = levels;
      for (const k in customLevels) {
        if (k in values) {
          throw Error("levels cannot be overridden");
        }
        if (customLevels[k] in labels) {
          throw Error("pre-existing level values cannot be used for new levels");
        }
      }
    }
    function assertLevelComparison(levelComparison) {
      if (typeof levelComparison === "function") {
        return;
      }
      if (typeof levelComparison === "string" && Object.values(SORTING_ORDER).includes(levelComparison)) {
        return;
      }
      throw new Error('Levels comparison should be one of "ASC", "DESC" or "function" type');
    }
    module2.exports = {
      initialLsCache,
      genLsCache,
      levelMethods,
      getLevel,
      setLevel,
      isLevelEnabled,
      mappings,
      assertNoLevelCollisions,
      assertDefaultLevelFound,
      genLevelComparison,
      assertLevelComparison
    };
  }
});

// node_modules/pino/lib/meta.js
var require_meta = __commonJS({
  "node_modules/pino/lib/meta.js"(exports2, module2) {
    "use strict";
    module2.exports = { version: "10.4.0" };
  }
});

// node_modules/pino/lib/proto.js
var require_proto = __commonJS({
  "node_modules/pino/lib/proto.js"(exports2, module2) {
    "use strict";
    var { EventEmitter } = __require("node:events");
    var {
      lsCacheSym,
      levelValSym,
      setLevelSym,
      getLevelSym,
      chindingsSym,
      mixinSym,
      asJsonSym,
      writeSym,
      mixinMergeStrategySym,
      timeSym,
      timeSliceIndexSym,
      streamSym,
      serializersSym,
      formattersSym,
      errorKeySym,
      messageKeySym,
      useOnlyCustomLevelsSym,
      needsMetadataGsym,
      redactFmtSym,
      stringifySym,
      formatOptsSym,
      stringifiersSym,
      msgPrefixSym,
      hooksSym
    } = require_symbols();
    var {
      getLevel,
      setLevel,
      isLevelEnabled,
      mappings,
      initialLsCache,
      genLsCache,
      assertNoLevelCollisions
    } = require_levels();
    var {
      asChindings,
      asJson,
      buildFormatters,
      stringify: stringify3,
      noop: noop2
    } = require_tools();
    var {
      version
    } = require_meta();
    var redaction = require_redaction();
    var constructor = class Pino {
    };
    var prototype = {
      constructor,
      child,
      bindings,
      setBindings,
      flush,
      isLevelEnabled,
      version,
      get level() {
        return this[getLevelSym]();
      },
      set level(lvl) {
        this[setLevelSym](lvl);
      },
      get levelVal() {
        return this[levelValSym];
      },
      set levelVal(n2) {
        throw Error("levelVal is read-only");
      },
      get msgPrefix() {
        return this[msgPrefixSym];
      },
      get [Symbol.toStringTag]() {
        return "Pino";
      },
      [lsCacheSym]: initialLsCache,
      [writeSym]: write,
      [asJsonSym]: asJson,
      [getLevelSym]: getLevel,
      [setLevelSym]: setLevel
    };
    Object.setPrototypeOf(prototype, EventEmitter.prototype);
    module2.exports = function() {
      return Object.create(prototype);
    };
    var resetChildingsFormatter = (bindings2) => bindings2;
    function child(bindings2, options2) {
      if (!bindings2) {
        throw Error("missing bindings for child Pino");
      }
      const serializers = this[serializersSym];
      const formatters = this[formattersSym];
      const instance = Object.create(this);
      if (options2 == null) {
        if (instance[formattersSym].bindings !== resetChildingsFormatter) {
          instance[formattersSym] = buildFormatters(
            formatters.level,
            resetChildingsFormatter,
            formatters.log
          );
        }
        instance[chindingsSym] = asChindings(instance, bindings2);
        if (this.onChild !== noop2) {
          this.onChild(instance);
        }
        return instance;
      }
      if (options2.hasOwnProperty("serializers") === true) {
        instance[serializersSym] = /* @__PURE__ */ Object.create(null);
        for (const k in serializers) {
          instance[serializersSym][k] = serializers[k];
        }
        const parentSymbols = Object.getOwnPropertySymbols(serializers);
        for (var i = 0; i < parentSymbols.length; i++) {
          const ks = parentSymbols[i];
          instance[serializersSym][ks] = serializers[ks];
        }
        for (const bk in options2.serializers) {
          instance[serializersSym][bk] = options2.serializers[bk];
        }
        const bindingsSymbols = Object.getOwnPropertySymbols(options2.serializers);
        for (var bi = 0; bi < bindingsSymbols.length; bi++) {
          const bks = bindingsSymbols[bi];
          instance[serializersSym][bks] = options2.serializers[bks];
        }
      } else instance[serializersSym] = serializers;
      if (options2.hasOwnProperty("formatters")) {
        const { level, bindings: chindings, log } = options2.formatters;
        instance[formattersSym] = buildFormatters(
          level || formatters.level,
          chindings || resetChildingsFormatter,
          log || formatters.log
        );
      } else {
        instance[formattersSym] = buildFormatters(
          formatters.level,
          resetChildingsFormatter,
          formatters.log
        );
      }
      if (options2.hasOwnProperty("customLevels") === true) {
        assertNoLevelCollisions(this.levels, options2.customLevels);
        instance.levels = mappings(options2.customLevels, instance[useOnlyCustomLevelsSym]);
        genLsCache(instance);
      }
      if (typeof options2.redact === "object" && options2.redact !== null || Array.isArray(options2.redact)) {
        instance.redact = options2.redact;
        const stringifiers = redaction(instance.redact, stringify3);
        const formatOpts = { stringify: stringifiers[redactFmtSym] };
        instance[stringifySym] = stringify3;
        instance[stringifiersSym] = stringifiers;
        instance[formatOptsSym] = formatOpts;
      }
      if (typeof options2.msgPrefix === "string") {
        instance[msgPrefixSym] = (this[msgPrefixSym] || "") + options2.msgPrefix;
      }
      instance[chindingsSym] = asChindings(instance, bindings2);
      if (options2.level !== void 0 && options2.level !== this.level || options2.hasOwnProperty("customLevels")) {
        const childLevel = options2.level || this.level;
        instance[setLevelSym](childLevel);
      }
      this.onChild(instance);
      return instance;
    }
    function bindings() {
      const chindings = this[chindingsSym];
      const chindingsJson = `{${chindings.substr(1)}}`;
      const bindingsFromJson = JSON.parse(chindingsJson);
      delete bindingsFromJson.pid;
      delete bindingsFromJson.hostname;
      return bindingsFromJson;
    }
    function setBindings(newBindings) {
      const chindings = asChindings(this, newBindings);
      this[chindingsSym] = chindings;
    }
    function defaultMixinMergeStrategy(mergeObject, mixinObject) {
      return Object.assign(mixinObject, mergeObject);
    }
    function write(_obj, msg, num) {
      const t = this[timeSym]();
      const mixin = this[mixinSym];
      const errorKey = this[errorKeySym];
      const messageKey = this[messageKeySym];
      const mixinMergeStrategy = this[mixinMergeStrategySym] || defaultMixinMergeStrategy;
      let obj;
      const streamWriteHook = this[hooksSym].streamWrite;
      if (_obj === void 0 || _obj === null) {
        obj = {};
      } else if (_obj instanceof Error) {
        obj = { [errorKey]: _obj };
        if (msg === void 0) {
          msg = _obj.message;
        }
      } else {
        obj = _obj;
        if (msg === void 0 && _obj[messageKey] === void 0 && _obj[errorKey]) {
          msg = _obj[errorKey].message;
        }
      }
      if (mixin) {
        obj = mixinMergeStrategy(obj, mixin(obj, num, this));
      }
      const s2 = this[asJsonSym](obj, msg, num, t);
      const stream = this[streamSym];
      if (stream[needsMetadataGsym] === true) {
        stream.lastLevel = num;
        stream.lastObj = obj;
        stream.lastMsg = msg;
        stream.lastTime = t.slice(this[timeSliceIndexSym]);
        stream.lastLogger = this;
      }
      stream.write(streamWriteHook ? streamWriteHook(s2) : s2);
    }
    function flush(cb) {
      if (cb != null && typeof cb !== "function") {
        throw Error("callback must be a function");
      }
      const stream = this[streamSym];
      if (typeof stream.flush === "function") {
        stream.flush(cb || noop2);
      } else if (cb) cb();
    }
  }
});

// node_modules/safe-stable-stringify/index.js
var require_safe_stable_stringify = __commonJS({
  "node_modules/safe-stable-stringify/index.js"(exports2, module2) {
    "use strict";
    var { hasOwnProperty } = Object.prototype;
    var stringify3 = configure();
    stringify3.configure = configure;
    stringify3.stringify = stringify3;
    stringify3.default = stringify3;
    exports2.stringify = stringify3;
    exports2.configure = configure;
    module2.exports = stringify3;
    var strEscapeSequencesRegExp = /[\u0000-\u001f\u0022\u005c\ud800-\udfff]/;
    function strEscape(str) {
      if (str.length < 5e3 && !strEscapeSequencesRegExp.test(str)) {
        return `"${str}"`;
      }
      return JSON.stringify(str);
    }
    function sort(array, comparator) {
      if (array.length > 200 || comparator) {
        return array.sort(comparator);
      }
      for (let i = 1; i < array.length; i++) {
        const currentValue = array[i];
        let position = i;
        while (position !== 0 && array[position - 1] > currentValue) {
          array[position] = array[position - 1];
          position--;
        }
        array[position] = currentValue;
      }
      return array;
    }
    var typedArrayPrototypeGetSymbolToStringTag = Object.getOwnPropertyDescriptor(
      Object.getPrototypeOf(
        Object.getPrototypeOf(
          new Int8Array()
        )
      ),
      Symbol.toStringTag
    ).get;
    function isTypedArrayWithEntries(value) {
      return typedArrayPrototypeGetSymbolToStringTag.call(value) !== void 0 && value.length !== 0;
    }
    function stringifyTypedArray(array, separator, maximumBreadth) {
      if (array.length < maximumBreadth) {
        maximumBreadth = array.length;
      }
      const whitespace = separator === "," ? "" : " ";
      let res = `"0":${whitespace}${array[0]}`;
      for (let i = 1; i < maximumBreadth; i++) {
        res += `${separator}"${i}":${whitespace}${array[i]}`;
      }
      return res;
    }
    function getCircularValueOption(options2) {
      if (hasOwnProperty.call(options2, "circularValue")) {
        const circularValue = options2.circularValue;
        if (typeof circularValue === "string") {
          return `"${circularValue}"`;
        }
        if (circularValue == null) {
          return circularValue;
        }
        if (circularValue === Error || circularValue === TypeError) {
          return {
            toString() {
              throw new TypeError("Converting circular structure to JSON");
            }
          };
        }
        throw new TypeError('The "circularValue" argument must be of type string or the value null or undefined');
      }
      return '"[Circular]"';
    }
    function getDeterministicOption(options2) {
      let value;
      if (hasOwnProperty.call(options2, "deterministic")) {
        value = options2.deterministic;
        if (typeof value !== "boolean" && typeof value !== "function") {
          throw new TypeError('The "deterministic" argument must be of type boolean or comparator function');
        }
      }
      return value === void 0 ? true : value;
    }
    function getBooleanOption(options2, key) {
      let value;
      if (hasOwnProperty.call(options2, key)) {
        value = options2[key];
        if (typeof value !== "boolean") {
          throw new TypeError(`The "${key}" argument must be of type boolean`);
        }
      }
      return value === void 0 ? true : value;
    }
    function getPositiveIntegerOption(options2, key) {
      let value;
      if (hasOwnProperty.call(options2, key)) {
        value = options2[key];
        if (typeof value !== "number") {
          throw new TypeError(`The "${key}" argument must be of type number`);
        }
        if (!Number.isInteger(value)) {
          throw new TypeError(`The "${key}" argument must be an integer`);
        }
        if (value < 1) {
          throw new RangeError(`The "${key}" argument must be >= 1`);
        }
      }
      return value === void 0 ? Infinity : value;
    }
    function getItemCount(number) {
      if (number === 1) {
        return "1 item";
      }
      return `${number} items`;
    }
    function getUniqueReplacerSet(replacerArray) {
      const replacerSet = /* @__PURE__ */ new Set();
      for (const value of replacerArray) {
        if (typeof value === "string" || typeof value === "number") {
          replacerSet.add(String(value));
        }
      }
      return replacerSet;
    }
    function getStrictOption(options2) {
      if (hasOwnProperty.call(options2, "strict")) {
        const value = options2.strict;
        if (typeof value !== "boolean") {
          throw new TypeError('The "strict" argument must be of type boolean');
        }
        if (value) {
          return (value2) => {
            let message = `Object can not safely be stringified. Received type ${typeof value2}`;
            if (typeof value2 !== "function") message += ` (${value2.toString()})`;
            throw new Error(message);
          };
        }
      }
    }
    function configure(options2) {
      options2 = { ...options2 };
      const fail2 = getStrictOption(options2);
      if (fail2) {
        if (options2.bigint === void 0) {
          options2.bigint = false;
        }
        if (!("circularValue" in options2)) {
          options2.circularValue = Error;
        }
      }
      const circularValue = getCircularValueOption(options2);
      const bigint = getBooleanOption(options2, "bigint");
      const deterministic = getDeterministicOption(options2);
      const comparator = typeof deterministic === "function" ? deterministic : void 0;
      const maximumDepth = getPositiveIntegerOption(options2, "maximumDepth");
      const maximumBreadth = getPositiveIntegerOption(options2, "maximumBreadth");
      function stringifyFnReplacer(key, parent, stack, replacer, spacer, indentation) {
        let value = parent[key];
        if (typeof value === "object" && value !== null && typeof value.toJSON === "function") {
          value = value.toJSON(key);
        }
        value = replacer.call(parent, key, value);
        switch (typeof value) {
          case "string":
            return strEscape(value);
          case "object": {
            if (value === null) {
              return "null";
            }
            if (stack.indexOf(value) !== -1) {
              return circularValue;
            }
            let res = "";
            let join2 = ",";
            const originalIndentation = indentation;
            if (Array.isArray(value)) {
              if (value.length === 0) {
                return "[]";
              }
              if (maximumDepth < stack.length + 1) {
                return '"[Array]"';
              }
              stack.push(value);
              if (spacer !== "") {
                indentation += spacer;
                res += `
${indentation}`;
                join2 = `,
${indentation}`;
              }
              const maximumValuesToStringify = Math.min(value.length, maximumBreadth);
              let i = 0;
              for (; i < maximumValuesToStringify - 1; i++) {
                const tmp2 = stringifyFnReplacer(String(i), value, stack, replacer, spacer, indentation);
                res += tmp2 !== void 0 ? tmp2 : "null";
                res += join2;
              }
              const tmp = stringifyFnReplacer(String(i), value, stack, replacer, spacer, indentation);
              res += tmp !== void 0 ? tmp : "null";
              if (value.length - 1 > maximumBreadth) {
                const removedKeys = value.length - maximumBreadth - 1;
                res += `${join2}"... ${getItemCount(removedKeys)} not stringified"`;
              }
              if (spacer !== "") {
                res += `
${originalIndentation}`;
              }
              stack.pop();
              return `[${res}]`;
            }
            let keys = Object.keys(value);
            const keyLength = keys.length;
            if (keyLength === 0) {
              return "{}";
            }
            if (maximumDepth < stack.length + 1) {
              return '"[Object]"';
            }
            let whitespace = "";
            let separator = "";
            if (spacer !== "") {
              indentation += spacer;
              join2 = `,
${indentation}`;
              whitespace = " ";
            }
            const maximumPropertiesToStringify = Math.min(keyLength, maximumBreadth);
            if (deterministic && !isTypedArrayWithEntries(value)) {
              keys = sort(keys, comparator);
            }
            stack.push(value);
            for (let i = 0; i < maximumPropertiesToStringify; i++) {
              const key2 = keys[i];
              const tmp = stringifyFnReplacer(key2, value, stack, replacer, spacer, indentation);
              if (tmp !== void 0) {
                res += `${separator}${strEscape(key2)}:${whitespace}${tmp}`;
                separator = join2;
              }
            }
            if (keyLength > maximumBreadth) {
              const removedKeys = keyLength - maximumBreadth;
              res += `${separator}"...":${whitespace}"${getItemCount(removedKeys)} not stringified"`;
              separator = join2;
            }
            if (spacer !== "" && separator.length > 1) {
              res = `
${indentation}${res}
${originalIndentation}`;
            }
            stack.pop();
            return `{${res}}`;
          }
          case "number":
            return isFinite(value) ? String(value) : fail2 ? fail2(value) : "null";
          case "boolean":
            return value === true ? "true" : "false";
          case "undefined":
            return void 0;
          case "bigint":
            if (bigint) {
              return String(value);
            }
          // fallthrough
          default:
            return fail2 ? fail2(value) : void 0;
        }
      }
      function stringifyArrayReplacer(key, value, stack, replacer, spacer, indentation) {
        if (typeof value === "object" && value !== null && typeof value.toJSON === "function") {
          value = value.toJSON(key);
        }
        switch (typeof value) {
          case "string":
            return strEscape(value);
          case "object": {
            if (value === null) {
              return "null";
            }
            if (stack.indexOf(value) !== -1) {
              return circularValue;
            }
            const originalIndentation = indentation;
            let res = "";
            let join2 = ",";
            if (Array.isArray(value)) {
              if (value.length === 0) {
                return "[]";
              }
              if (maximumDepth < stack.length + 1) {
                return '"[Array]"';
              }
              stack.push(value);
              if (spacer !== "") {
                indentation += spacer;
                res += `
${indentation}`;
                join2 = `,
${indentation}`;
              }
              const maximumValuesToStringify = Math.min(value.length, maximumBreadth);
              let i = 0;
              for (; i < maximumValuesToStringify - 1; i++) {
                const tmp2 = stringifyArrayReplacer(String(i), value[i], stack, replacer, spacer, indentation);
                res += tmp2 !== void 0 ? tmp2 : "null";
                res += join2;
              }
              const tmp = stringifyArrayReplacer(String(i), value[i], stack, replacer, spacer, indentation);
              res += tmp !== void 0 ? tmp : "null";
              if (value.length - 1 > maximumBreadth) {
                const removedKeys = value.length - maximumBreadth - 1;
                res += `${join2}"... ${getItemCount(removedKeys)} not stringified"`;
              }
              if (spacer !== "") {
                res += `
${originalIndentation}`;
              }
              stack.pop();
              return `[${res}]`;
            }
            stack.push(value);
            let whitespace = "";
            if (spacer !== "") {
              indentation += spacer;
              join2 = `,
${indentation}`;
              whitespace = " ";
            }
            let separator = "";
            for (const key2 of replacer) {
              const tmp = stringifyArrayReplacer(key2, value[key2], stack, replacer, spacer, indentation);
              if (tmp !== void 0) {
                res += `${separator}${strEscape(key2)}:${whitespace}${tmp}`;
                separator = join2;
              }
            }
            if (spacer !== "" && separator.length > 1) {
              res = `
${indentation}${res}
${originalIndentation}`;
            }
            stack.pop();
            return `{${res}}`;
          }
          case "number":
            return isFinite(value) ? String(value) : fail2 ? fail2(value) : "null";
          case "boolean":
            return value === true ? "true" : "false";
          case "undefined":
            return void 0;
          case "bigint":
            if (bigint) {
              return String(value);
            }
          // fallthrough
          default:
            return fail2 ? fail2(value) : void 0;
        }
      }
      function stringifyIndent(key, value, stack, spacer, indentation) {
        switch (typeof value) {
          case "string":
            return strEscape(value);
          case "object": {
            if (value === null) {
              return "null";
            }
            if (typeof value.toJSON === "function") {
              value = value.toJSON(key);
              if (typeof value !== "object") {
                return stringifyIndent(key, value, stack, spacer, indentation);
              }
              if (value === null) {
                return "null";
              }
            }
            if (stack.indexOf(value) !== -1) {
              return circularValue;
            }
            const originalIndentation = indentation;
            if (Array.isArray(value)) {
              if (value.length === 0) {
                return "[]";
              }
              if (maximumDepth < stack.length + 1) {
                return '"[Array]"';
              }
              stack.push(value);
              indentation += spacer;
              let res2 = `
${indentation}`;
              const join3 = `,
${indentation}`;
              const maximumValuesToStringify = Math.min(value.length, maximumBreadth);
              let i = 0;
              for (; i < maximumValuesToStringify - 1; i++) {
                const tmp2 = stringifyIndent(String(i), value[i], stack, spacer, indentation);
                res2 += tmp2 !== void 0 ? tmp2 : "null";
                res2 += join3;
              }
              const tmp = stringifyIndent(String(i), value[i], stack, spacer, indentation);
              res2 += tmp !== void 0 ? tmp : "null";
              if (value.length - 1 > maximumBreadth) {
                const removedKeys = value.length - maximumBreadth - 1;
                res2 += `${join3}"... ${getItemCount(removedKeys)} not stringified"`;
              }
              res2 += `
${originalIndentation}`;
              stack.pop();
              return `[${res2}]`;
            }
            let keys = Object.keys(value);
            const keyLength = keys.length;
            if (keyLength === 0) {
              return "{}";
            }
            if (maximumDepth < stack.length + 1) {
              return '"[Object]"';
            }
            indentation += spacer;
            const join2 = `,
${indentation}`;
            let res = "";
            let separator = "";
            let maximumPropertiesToStringify = Math.min(keyLength, maximumBreadth);
            if (isTypedArrayWithEntries(value)) {
              res += stringifyTypedArray(value, join2, maximumBreadth);
              keys = keys.slice(value.length);
              maximumPropertiesToStringify -= value.length;
              separator = join2;
            }
            if (deterministic) {
              keys = sort(keys, comparator);
            }
            stack.push(value);
            for (let i = 0; i < maximumPropertiesToStringify; i++) {
              const key2 = keys[i];
              const tmp = stringifyIndent(key2, value[key2], stack, spacer, indentation);
              if (tmp !== void 0) {
                res += `${separator}${strEscape(key2)}: ${tmp}`;
                separator = join2;
              }
            }
            if (keyLength > maximumBreadth) {
              const removedKeys = keyLength - maximumBreadth;
              res += `${separator}"...": "${getItemCount(removedKeys)} not stringified"`;
              separator = join2;
            }
            if (separator !== "") {
              res = `
${indentation}${res}
${originalIndentation}`;
            }
            stack.pop();
            return `{${res}}`;
          }
          case "number":
            return isFinite(value) ? String(value) : fail2 ? fail2(value) : "null";
          case "boolean":
            return value === true ? "true" : "false";
          case "undefined":
            return void 0;
          case "bigint":
            if (bigint) {
              return String(value);
            }
          // fallthrough
          default:
            return fail2 ? fail2(value) : void 0;
        }
      }
      function stringifySimple(key, value, stack) {
        switch (typeof value) {
          case "string":
            return strEscape(value);
          case "object": {
            if (value === null) {
              return "null";
            }
            if (typeof value.toJSON === "function") {
              value = value.toJSON(key);
              if (typeof value !== "object") {
                return stringifySimple(key, value, stack);
              }
              if (value === null) {
                return "null";
              }
            }
            if (stack.indexOf(value) !== -1) {
              return circularValue;
            }
            let res = "";
            const hasLength = value.length !== void 0;
            if (hasLength && Array.isArray(value)) {
              if (value.length === 0) {
                return "[]";
              }
              if (maximumDepth < stack.length + 1) {
                return '"[Array]"';
              }
              stack.push(value);
              const maximumValuesToStringify = Math.min(value.length, maximumBreadth);
              let i = 0;
              for (; i < maximumValuesToStringify - 1; i++) {
                const tmp2 = stringifySimple(String(i), value[i], stack);
                res += tmp2 !== void 0 ? tmp2 : "null";
                res += ",";
              }
              const tmp = stringifySimple(String(i), value[i], stack);
              res += tmp !== void 0 ? tmp : "null";
              if (value.length - 1 > maximumBreadth) {
                const removedKeys = value.length - maximumBreadth - 1;
                res += `,"... ${getItemCount(removedKeys)} not stringified"`;
              }
              stack.pop();
              return `[${res}]`;
            }
            let keys = Object.keys(value);
            const keyLength = keys.length;
            if (keyLength === 0) {
              return "{}";
            }
            if (maximumDepth < stack.length + 1) {
              return '"[Object]"';
            }
            let separator = "";
            let maximumPropertiesToStringify = Math.min(keyLength, maximumBreadth);
            if (hasLength && isTypedArrayWithEntries(value)) {
              res += stringifyTypedArray(value, ",", maximumBreadth);
              keys = keys.slice(value.length);
              maximumPropertiesToStringify -= value.length;
              separator = ",";
            }
            if (deterministic) {
              keys = sort(keys, comparator);
            }
            stack.push(value);
            for (let i = 0; i < maximumPropertiesToStringify; i++) {
              const key2 = keys[i];
              const tmp = stringifySimple(key2, value[key2], stack);
              if (tmp !== void 0) {
                res += `${separator}${strEscape(key2)}:${tmp}`;
                separator = ",";
              }
            }
            if (keyLength > maximumBreadth) {
              const removedKeys = keyLength - maximumBreadth;
              res += `${separator}"...":"${getItemCount(removedKeys)} not stringified"`;
            }
            stack.pop();
            return `{${res}}`;
          }
          case "number":
            return isFinite(value) ? String(value) : fail2 ? fail2(value) : "null";
          case "boolean":
            return value === true ? "true" : "false";
          case "undefined":
            return void 0;
          case "bigint":
            if (bigint) {
              return String(value);
            }
          // fallthrough
          default:
            return fail2 ? fail2(value) : void 0;
        }
      }
      function stringify4(value, replacer, space) {
        if (arguments.length > 1) {
          let spacer = "";
          if (typeof space === "number") {
            spacer = " ".repeat(Math.min(space, 10));
          } else if (typeof space === "string") {
            spacer = space.slice(0, 10);
          }
          if (replacer != null) {
            if (typeof replacer === "function") {
              return stringifyFnReplacer("", { "": value }, [], replacer, spacer, "");
            }
            if (Array.isArray(replacer)) {
              return stringifyArrayReplacer("", value, [], getUniqueReplacerSet(replacer), spacer, "");
            }
          }
          if (spacer.length !== 0) {
            return stringifyIndent("", value, [], spacer, "");
          }
        }
        return stringifySimple("", value, []);
      }
      return stringify4;
    }
  }
});

// node_modules/pino/lib/multistream.js
var require_multistream = __commonJS({
  "node_modules/pino/lib/multistream.js"(exports2, module2) {
    "use strict";
    var metadata = /* @__PURE__ */ Symbol.for("pino.metadata");
    var { DEFAULT_LEVELS } = require_constants();
    var DEFAULT_INFO_LEVEL = DEFAULT_LEVELS.info;
    function multistream(streamsArray, opts) {
      streamsArray = streamsArray || [];
      opts = opts || { dedupe: false };
      const streamLevels = Object.create(DEFAULT_LEVELS);
      streamLevels.silent = Infinity;
      if (opts.levels && typeof opts.levels === "object") {
        Object.keys(opts.levels).forEach((i) => {
          streamLevels[i] = opts.levels[i];
        });
      }
      const res = {
        write,
        add,
        remove,
        emit,
        flushSync,
        end,
        minLevel: 0,
        lastId: 0,
        streams: [],
        clone,
        [metadata]: true,
        streamLevels
      };
      if (Array.isArray(streamsArray)) {
        streamsArray.forEach(add, res);
      } else {
        add.call(res, streamsArray);
      }
      streamsArray = null;
      return res;
      function write(data) {
        let dest;
        const level = typeof this.lastLevel === "string" ? (this.streamLevels || streamLevels)[this.lastLevel] : this.lastLevel;
        const { streams } = this;
        let recordedLevel = 0;
        let stream;
        for (let i = initLoopVar(streams.length, opts.dedupe); checkLoopVar(i, streams.length, opts.dedupe); i = adjustLoopVar(i, opts.dedupe)) {
          dest = streams[i];
          if (dest.level <= level) {
            if (recordedLevel !== 0 && recordedLevel !== dest.level) {
              break;
            }
            stream = dest.stream;
            if (stream[metadata]) {
              const { lastTime, lastMsg, lastObj, lastLogger } = this;
              stream.lastLevel = level;
              stream.lastTime = lastTime;
              stream.lastMsg = lastMsg;
              stream.lastObj = lastObj;
              stream.lastLogger = lastLogger;
            }
            stream.write(data);
            if (opts.dedupe) {
              recordedLevel = dest.level;
            }
          } else if (!opts.dedupe) {
            break;
          }
        }
      }
      function emit(...args) {
        for (const { stream } of this.streams) {
          if (typeof stream.emit === "function") {
            stream.emit(...args);
          }
        }
      }
      function flushSync() {
        for (const { stream } of this.streams) {
          if (typeof stream.flushSync === "function") {
            stream.flushSync();
          }
        }
      }
      function add(dest) {
        if (!dest) {
          return this;
        }
        const isStream = typeof dest.write === "function" || dest.stream;
        const stream_ = dest.write ? dest : dest.stream;
        if (!isStream) {
          throw Error("stream object needs to implement either StreamEntry or DestinationStream interface");
        }
        const { streams, streamLevels: streamLevels2 } = this;
        let level;
        if (typeof dest.levelVal === "number") {
          level = dest.levelVal;
        } else if (typeof dest.level === "string") {
          level = streamLevels2[dest.level];
        } else if (typeof dest.level === "number") {
          level = dest.level;
        } else {
          level = DEFAULT_INFO_LEVEL;
        }
        const dest_ = {
          stream: stream_,
          level,
          levelVal: void 0,
          id: ++res.lastId
        };
        streams.unshift(dest_);
        streams.sort(compareByLevel);
        this.minLevel = streams[0].level;
        return this;
      }
      function remove(id) {
        const { streams } = this;
        const index = streams.findIndex((s2) => s2.id === id);
        if (index >= 0) {
          streams.splice(index, 1);
          streams.sort(compareByLevel);
          this.minLevel = streams.length > 0 ? streams[0].level : -1;
        }
        return this;
      }
      function end() {
        for (const { stream } of this.streams) {
          if (typeof stream.flushSync === "function") {
            stream.flushSync();
          }
          stream.end();
        }
      }
      function clone(level) {
        const streams = new Array(this.streams.length);
        for (let i = 0; i < streams.length; i++) {
          streams[i] = {
            level,
            stream: this.streams[i].stream
          };
        }
        return {
          write,
          add,
          remove,
          emit,
          flushSync,
          end,
          minLevel: level,
          streams,
          clone,
          [metadata]: true,
          streamLevels
        };
      }
    }
    function compareByLevel(a, b) {
      return a.level - b.level;
    }
    function initLoopVar(length, dedupe) {
      return dedupe ? length - 1 : 0;
    }
    function adjustLoopVar(i, dedupe) {
      return dedupe ? i - 1 : i + 1;
    }
    function checkLoopVar(i, length, dedupe) {
      return dedupe ? i >= 0 : i < length;
    }
    module2.exports = multistream;
  }
});

// node_modules/pino/pino.js
var require_pino = __commonJS({
  "node_modules/pino/pino.js"(exports2, module2) {
    "use strict";
    var os = __require("node:os");
    var stdSerializers = require_pino_std_serializers();
    var caller = require_caller();
    var redaction = require_redaction();
    var time = require_time();
    var proto = require_proto();
    var symbols = require_symbols();
    var { configure } = require_safe_stable_stringify();
    var { assertDefaultLevelFound, mappings, genLsCache, genLevelComparison, assertLevelComparison } = require_levels();
    var { DEFAULT_LEVELS, SORTING_ORDER } = require_constants();
    var {
      createArgsNormalizer,
      asChindings,
      buildSafeSonicBoom,
      buildFormatters,
      stringify: stringify3,
      normalizeDestFileDescriptor,
      noop: noop2
    } = require_tools();
    var { version } = require_meta();
    var {
      chindingsSym,
      redactFmtSym,
      serializersSym,
      timeSym,
      timeSliceIndexSym,
      streamSym,
      stringifySym,
      stringifySafeSym,
      stringifiersSym,
      setLevelSym,
      endSym,
      formatOptsSym,
      messageKeySym,
      errorKeySym,
      nestedKeySym,
      mixinSym,
      levelCompSym,
      useOnlyCustomLevelsSym,
      formattersSym,
      hooksSym,
      nestedKeyStrSym,
      mixinMergeStrategySym,
      msgPrefixSym,
      transportUsesMultistreamSym
    } = symbols;
    var { epochTime, nullTime } = time;
    var { pid } = process;
    var hostname = os.hostname();
    var defaultErrorSerializer = stdSerializers.err;
    var defaultOptions2 = {
      level: "info",
      levelComparison: SORTING_ORDER.ASC,
      levels: DEFAULT_LEVELS,
      messageKey: "msg",
      errorKey: "err",
      nestedKey: null,
      enabled: true,
      base: { pid, hostname },
      serializers: Object.assign(/* @__PURE__ */ Object.create(null), {
        err: defaultErrorSerializer
      }),
      formatters: Object.assign(/* @__PURE__ */ Object.create(null), {
        bindings(bindings) {
          return bindings;
        },
        level(label, number) {
          return { level: number };
        }
      }),
      hooks: {
        logMethod: void 0,
        streamWrite: void 0
      },
      timestamp: epochTime,
      name: void 0,
      redact: null,
      customLevels: null,
      useOnlyCustomLevels: false,
      depthLimit: 5,
      edgeLimit: 100
    };
    var normalize = createArgsNormalizer(defaultOptions2);
    var serializers = Object.assign(/* @__PURE__ */ Object.create(null), stdSerializers);
    function pino2(...args) {
      const instance = {};
      const { opts, stream } = normalize(instance, caller(), ...args);
      if (opts.level && typeof opts.level === "string" && DEFAULT_LEVELS[opts.level.toLowerCase()] !== void 0) opts.level = opts.level.toLowerCase();
      const {
        redact,
        crlf,
        serializers: serializers2,
        timestamp,
        messageKey,
        errorKey,
        nestedKey,
        base,
        name,
        level,
        customLevels,
        levelComparison,
        mixin,
        mixinMergeStrategy,
        useOnlyCustomLevels,
        formatters,
        hooks,
        depthLimit,
        edgeLimit,
        onChild,
        msgPrefix
      } = opts;
      const stringifySafe = configure({
        maximumDepth: depthLimit,
        maximumBreadth: edgeLimit
      });
      const allFormatters = buildFormatters(
        formatters.level,
        formatters.bindings,
        formatters.log
      );
      const stringifyFn = stringify3.bind({
        [stringifySafeSym]: stringifySafe
      });
      const stringifiers = redact ? Object.assign(/* @__PURE__ */ Object.create(null), redaction(redact, stringifyFn)) : /* @__PURE__ */ Object.create(null);
      const formatOpts = redact ? { stringify: stringifiers[redactFmtSym] } : { stringify: stringifyFn };
      const end = "}" + (crlf ? "\r\n" : "\n");
      const coreChindings = asChindings.bind(null, {
        [chindingsSym]: "",
        [serializersSym]: serializers2,
        [stringifiersSym]: stringifiers,
        [stringifySym]: stringify3,
        [stringifySafeSym]: stringifySafe,
        [formattersSym]: allFormatters
      });
      let chindings = "";
      if (base !== null) {
        if (name === void 0) {
          chindings = coreChindings(base);
        } else {
          chindings = coreChindings(Object.assign({}, base, { name }));
        }
      }
      const time2 = timestamp instanceof Function ? timestamp : timestamp ? epochTime : nullTime;
      const timeSliceIndex = time2().indexOf(":") + 1;
      if (useOnlyCustomLevels && !customLevels) throw Error("customLevels is required if useOnlyCustomLevels is set true");
      if (mixin && typeof mixin !== "function") throw Error(`Unknown mixin type "${typeof mixin}" - expected "function"`);
      if (msgPrefix && typeof msgPrefix !== "string") throw Error(`Unknown msgPrefix type "${typeof msgPrefix}" - expected "string"`);
      assertDefaultLevelFound(level, customLevels, useOnlyCustomLevels);
      const levels = mappings(customLevels, useOnlyCustomLevels);
      if (stream && stream[transportUsesMultistreamSym] === true) {
        let sampleLabel = typeof level === "string" ? level : void 0;
        if (!sampleLabel || levels[sampleLabel] === void 0) {
          sampleLabel = Object.keys(levels)[0];
        }
        const sampleNumber = levels[sampleLabel];
        let ok = false;
        try {
          const formatted = formatters.level(sampleLabel, sampleNumber);
          ok = formatted && typeof formatted === "object" && formatted.level === sampleNumber;
        } catch {
          ok = false;
        }
        if (!ok) {
          process.emitWarning(
            'custom formatters.level detected with multiple transport targets/pipelines; ensure logs include a numeric "level" field or they may be dropped',
            { code: "PINO_TRANSPORT_MULTI_TARGETS_LEVEL_FORMATTER" }
          );
        }
      }
      if (typeof stream.emit === "function") {
        stream.emit("message", { code: "PINO_CONFIG", config: { levels, messageKey, errorKey } });
      }
      assertLevelComparison(levelComparison);
      const levelCompFunc = genLevelComparison(levelComparison);
      Object.assign(instance, {
        levels,
        [levelCompSym]: levelCompFunc,
        [useOnlyCustomLevelsSym]: useOnlyCustomLevels,
        [streamSym]: stream,
        [timeSym]: time2,
        [timeSliceIndexSym]: timeSliceIndex,
        [stringifySym]: stringify3,
        [stringifySafeSym]: stringifySafe,
        [stringifiersSym]: stringifiers,
        [endSym]: end,
        [formatOptsSym]: formatOpts,
        [messageKeySym]: messageKey,
        [errorKeySym]: errorKey,
        [nestedKeySym]: nestedKey,
        // protect against injection
        [nestedKeyStrSym]: nestedKey ? `,${JSON.stringify(nestedKey)}:{` : "",
        [serializersSym]: serializers2,
        [mixinSym]: mixin,
        [mixinMergeStrategySym]: mixinMergeStrategy,
        [chindingsSym]: chindings,
        [formattersSym]: allFormatters,
        [hooksSym]: hooks,
        silent: noop2,
        onChild,
        [msgPrefixSym]: msgPrefix
      });
      Object.setPrototypeOf(instance, proto());
      genLsCache(instance);
      instance[setLevelSym](level);
      return instance;
    }
    module2.exports = pino2;
    module2.exports.destination = (dest = process.stdout.fd) => {
      if (typeof dest === "object") {
        dest.dest = normalizeDestFileDescriptor(dest.dest || process.stdout.fd);
        return buildSafeSonicBoom(dest);
      } else {
        return buildSafeSonicBoom({ dest: normalizeDestFileDescriptor(dest), minLength: 0 });
      }
    };
    module2.exports.transport = require_transport();
    module2.exports.multistream = require_multistream();
    module2.exports.levels = mappings();
    module2.exports.stdSerializers = serializers;
    module2.exports.stdTimeFunctions = Object.assign({}, time);
    module2.exports.symbols = symbols;
    module2.exports.version = version;
    module2.exports.default = pino2;
    module2.exports.pino = pino2;
  }
});

// node_modules/colorette/index.cjs
var require_colorette = __commonJS({
  "node_modules/colorette/index.cjs"(exports2) {
    "use strict";
    Object.defineProperty(exports2, "__esModule", { value: true });
    var tty = __require("tty");
    function _interopNamespace(e) {
      if (e && e.__esModule) return e;
      var n2 = /* @__PURE__ */ Object.create(null);
      if (e) {
        Object.keys(e).forEach(function(k) {
          if (k !== "default") {
            var d = Object.getOwnPropertyDescriptor(e, k);
            Object.defineProperty(n2, k, d.get ? d : {
              enumerable: true,
              get: function() {
                return e[k];
              }
            });
          }
        });
      }
      n2["default"] = e;
      return Object.freeze(n2);
    }
    var tty__namespace = /* @__PURE__ */ _interopNamespace(tty);
    var {
      env = {},
      argv = [],
      platform = ""
    } = typeof process === "undefined" ? {} : process;
    var isDisabled = "NO_COLOR" in env || argv.includes("--no-color");
    var isForced = "FORCE_COLOR" in env || argv.includes("--color");
    var isWindows = platform === "win32";
    var isDumbTerminal = env.TERM === "dumb";
    var isCompatibleTerminal = tty__namespace && tty__namespace.isatty && tty__namespace.isatty(1) && env.TERM && !isDumbTerminal;
    var isCI = "CI" in env && ("GITHUB_ACTIONS" in env || "GITLAB_CI" in env || "CIRCLECI" in env);
    var isColorSupported = !isDisabled && (isForced || isWindows && !isDumbTerminal || isCompatibleTerminal || isCI);
    var replaceClose = (index, string, close, replace, head = string.substring(0, index) + replace, tail = string.substring(index + close.length), next = tail.indexOf(close)) => head + (next < 0 ? tail : replaceClose(next, tail, close, replace));
    var clearBleed = (index, string, open, close, replace) => index < 0 ? open + string + close : open + replaceClose(index, string, close, replace) + close;
    var filterEmpty = (open, close, replace = open, at = open.length + 1) => (string) => string || !(string === "" || string === void 0) ? clearBleed(
      ("" + string).indexOf(close, at),
      string,
      open,
      close,
      replace
    ) : "";
    var init2 = (open, close, replace) => filterEmpty(`\x1B[${open}m`, `\x1B[${close}m`, replace);
    var colors = {
      reset: init2(0, 0),
      bold: init2(1, 22, "\x1B[22m\x1B[1m"),
      dim: init2(2, 22, "\x1B[22m\x1B[2m"),
      italic: init2(3, 23),
      underline: init2(4, 24),
      inverse: init2(7, 27),
      hidden: init2(8, 28),
      strikethrough: init2(9, 29),
      black: init2(30, 39),
      red: init2(31, 39),
      green: init2(32, 39),
      yellow: init2(33, 39),
      blue: init2(34, 39),
      magenta: init2(35, 39),
      cyan: init2(36, 39),
      white: init2(37, 39),
      gray: init2(90, 39),
      bgBlack: init2(40, 49),
      bgRed: init2(41, 49),
      bgGreen: init2(42, 49),
      bgYellow: init2(43, 49),
      bgBlue: init2(44, 49),
      bgMagenta: init2(45, 49),
      bgCyan: init2(46, 49),
      bgWhite: init2(47, 49),
      blackBright: init2(90, 39),
      redBright: init2(91, 39),
      greenBright: init2(92, 39),
      yellowBright: init2(93, 39),
      blueBright: init2(94, 39),
      magentaBright: init2(95, 39),
      cyanBright: init2(96, 39),
      whiteBright: init2(97, 39),
      bgBlackBright: init2(100, 49),
      bgRedBright: init2(101, 49),
      bgGreenBright: init2(102, 49),
      bgYellowBright: init2(103, 49),
      bgBlueBright: init2(104, 49),
      bgMagentaBright: init2(105, 49),
      bgCyanBright: init2(106, 49),
      bgWhiteBright: init2(107, 49)
    };
    var createColors = ({ useColor = isColorSupported } = {}) => useColor ? colors : Object.keys(colors).reduce(
      (colors2, key) => ({ ...colors2, [key]: String }),
      {}
    );
    var {
      reset,
      bold,
      dim,
      italic,
      underline,
      inverse,
      hidden,
      strikethrough,
      black,
      red,
      green,
      yellow,
      blue,
      magenta,
      cyan,
      white,
      gray,
      bgBlack,
      bgRed,
      bgGreen,
      bgYellow,
      bgBlue,
      bgMagenta,
      bgCyan,
      bgWhite,
      blackBright,
      redBright,
      greenBright,
      yellowBright,
      blueBright,
      magentaBright,
      cyanBright,
      whiteBright,
      bgBlackBright,
      bgRedBright,
      bgGreenBright,
      bgYellowBright,
      bgBlueBright,
      bgMagentaBright,
      bgCyanBright,
      bgWhiteBright
    } = createColors();
    exports2.bgBlack = bgBlack;
    exports2.bgBlackBright = bgBlackBright;
    exports2.bgBlue = bgBlue;
    exports2.bgBlueBright = bgBlueBright;
    exports2.bgCyan = bgCyan;
    exports2.bgCyanBright = bgCyanBright;
    exports2.bgGreen = bgGreen;
    exports2.bgGreenBright = bgGreenBright;
    exports2.bgMagenta = bgMagenta;
    exports2.bgMagentaBright = bgMagentaBright;
    exports2.bgRed = bgRed;
    exports2.bgRedBright = bgRedBright;
    exports2.bgWhite = bgWhite;
    exports2.bgWhiteBright = bgWhiteBright;
    exports2.bgYellow = bgYellow;
    exports2.bgYellowBright = bgYellowBright;
    exports2.black = black;
    exports2.blackBright = blackBright;
    exports2.blue = blue;
    exports2.blueBright = blueBright;
    exports2.bold = bold;
    exports2.createColors = createColors;
    exports2.cyan = cyan;
    exports2.cyanBright = cyanBright;
    exports2.dim = dim;
    exports2.gray = gray;
    exports2.green = green;
    exports2.greenBright = greenBright;
    exports2.hidden = hidden;
    exports2.inverse = inverse;
    exports2.isColorSupported = isColorSupported;
    exports2.italic = italic;
    exports2.magenta = magenta;
    exports2.magentaBright = magentaBright;
    exports2.red = red;
    exports2.redBright = redBright;
    exports2.reset = reset;
    exports2.strikethrough = strikethrough;
    exports2.underline = underline;
    exports2.white = white;
    exports2.whiteBright = whiteBright;
    exports2.yellow = yellow;
    exports2.yellowBright = yellowBright;
  }
});

// node_modules/wrappy/wrappy.js
var require_wrappy = __commonJS({
  "node_modules/wrappy/wrappy.js"(exports2, module2) {
    module2.exports = wrappy;
    function wrappy(fn, cb) {
      if (fn && cb) return wrappy(fn)(cb);
      if (typeof fn !== "function")
        throw new TypeError("need wrapper function");
      Object.keys(fn).forEach(function(k) {
        wrapper[k] = fn[k];
      });
      return wrapper;
      function wrapper() {
        var args = new Array(arguments.length);
        for (var i = 0; i < args.length; i++) {
          args[i] = arguments[i];
        }
        var ret = fn.apply(this, args);
        var cb2 = args[args.length - 1];
        if (typeof ret === "function" && ret !== cb2) {
          Object.keys(cb2).forEach(function(k) {
            ret[k] = cb2[k];
          });
        }
        return ret;
      }
    }
  }
});

// node_modules/once/once.js
var require_once = __commonJS({
  "node_modules/once/once.js"(exports2, module2) {
    var wrappy = require_wrappy();
    module2.exports = wrappy(once);
    module2.exports.strict = wrappy(onceStrict);
    once.proto = once(function() {
      Object.defineProperty(Function.prototype, "once", {
        value: function() {
          return once(this);
        },
        configurable: true
      });
      Object.defineProperty(Function.prototype, "onceStrict", {
        value: function() {
          return onceStrict(this);
        },
        configurable: true
      });
    });
    function once(fn) {
      var f = function() {
        if (f.called) return f.value;
        f.called = true;
        return f.value = fn.apply(this, arguments);
      };
      f.called = false;
      return f;
    }
    function onceStrict(fn) {
      var f = function() {
        if (f.called)
          throw new Error(f.onceError);
        f.called = true;
        return f.value = fn.apply(this, arguments);
      };
      var name = fn.name || "Function wrapped with `once`";
      f.onceError = name + " shouldn't be called more than once";
      f.called = false;
      return f;
    }
  }
});

// node_modules/end-of-stream/index.js
var require_end_of_stream = __commonJS({
  "node_modules/end-of-stream/index.js"(exports2, module2) {
    var once = require_once();
    var noop2 = function() {
    };
    var qnt = global.Bare ? queueMicrotask : process.nextTick.bind(process);
    var isRequest = function(stream) {
      return stream.setHeader && typeof stream.abort === "function";
    };
    var isChildProcess = function(stream) {
      return stream.stdio && Array.isArray(stream.stdio) && stream.stdio.length === 3;
    };
    var eos = function(stream, opts, callback) {
      if (typeof opts === "function") return eos(stream, null, opts);
      if (!opts) opts = {};
      callback = once(callback || noop2);
      var ws = stream._writableState;
      var rs = stream._readableState;
      var readable = opts.readable || opts.readable !== false && stream.readable;
      var writable = opts.writable || opts.writable !== false && stream.writable;
      var cancelled = false;
      var onlegacyfinish = function() {
        if (!stream.writable) onfinish();
      };
      var onfinish = function() {
        writable = false;
        if (!readable) callback.call(stream);
      };
      var onend = function() {
        readable = false;
        if (!writable) callback.call(stream);
      };
      var onexit = function(exitCode) {
        callback.call(stream, exitCode ? new Error("exited with error code: " + exitCode) : null);
      };
      var onerror = function(err) {
        callback.call(stream, err);
      };
      var onclose = function() {
        qnt(onclosenexttick);
      };
      var onclosenexttick = function() {
        if (cancelled) return;
        if (readable && !(rs && (rs.ended && !rs.destroyed))) return callback.call(stream, new Error("premature close"));
        if (writable && !(ws && (ws.ended && !ws.destroyed))) return callback.call(stream, new Error("premature close"));
      };
      var onrequest = function() {
        stream.req.on("finish", onfinish);
      };
      if (isRequest(stream)) {
        stream.on("complete", onfinish);
        stream.on("abort", onclose);
        if (stream.req) onrequest();
        else stream.on("request", onrequest);
      } else if (writable && !ws) {
        stream.on("end", onlegacyfinish);
        stream.on("close", onlegacyfinish);
      }
      if (isChildProcess(stream)) stream.on("exit", onexit);
      stream.on("end", onend);
      stream.on("finish", onfinish);
      if (opts.error !== false) stream.on("error", onerror);
      stream.on("close", onclose);
      return function() {
        cancelled = true;
        stream.removeListener("complete", onfinish);
        stream.removeListener("abort", onclose);
        stream.removeListener("request", onrequest);
        if (stream.req) stream.req.removeListener("finish", onfinish);
        stream.removeListener("end", onlegacyfinish);
        stream.removeListener("close", onlegacyfinish);
        stream.removeListener("finish", onfinish);
        stream.removeListener("exit", onexit);
        stream.removeListener("end", onend);
        stream.removeListener("error", onerror);
        stream.removeListener("close", onclose);
      };
    };
    module2.exports = eos;
  }
});

// node_modules/pump/index.js
var require_pump = __commonJS({
  "node_modules/pump/index.js"(exports2, module2) {
    var once = require_once();
    var eos = require_end_of_stream();
    var fs;
    try {
      fs = __require("fs");
    } catch (e) {
    }
    var noop2 = function() {
    };
    var ancient = typeof process === "undefined" ? false : /^v?\.0/.test(process.version);
    var isFn = function(fn) {
      return typeof fn === "function";
    };
    var isFS = function(stream) {
      if (!ancient) return false;
      if (!fs) return false;
      return (stream instanceof (fs.ReadStream || noop2) || stream instanceof (fs.WriteStream || noop2)) && isFn(stream.close);
    };
    var isRequest = function(stream) {
      return stream.setHeader && isFn(stream.abort);
    };
    var destroyer = function(stream, reading2, writing, callback) {
      callback = once(callback);
      var closed = false;
      stream.on("close", function() {
        closed = true;
      });
      eos(stream, { readable: reading2, writable: writing }, function(err) {
        if (err) return callback(err);
        closed = true;
        callback();
      });
      var destroyed = false;
      return function(err) {
        if (closed) return;
        if (destroyed) return;
        destroyed = true;
        if (isFS(stream)) return stream.close(noop2);
        if (isRequest(stream)) return stream.abort();
        if (isFn(stream.destroy)) return stream.destroy();
        callback(err || new Error("stream was destroyed"));
      };
    };
    var call = function(fn) {
      fn();
    };
    var pipe = function(from, to) {
      return from.pipe(to);
    };
    var pump = function() {
      var streams = Array.prototype.slice.call(arguments);
      var callback = isFn(streams[streams.length - 1] || noop2) && streams.pop() || noop2;
      if (Array.isArray(streams[0])) streams = streams[0];
      if (streams.length < 2) throw new Error("pump requires two streams per minimum");
      var error;
      var destroys = streams.map(function(stream, i) {
        var reading2 = i < streams.length - 1;
        var writing = i > 0;
        return destroyer(stream, reading2, writing, function(err) {
          if (!error) error = err;
          if (err) destroys.forEach(call);
          if (reading2) return;
          destroys.forEach(call);
          callback(error);
        });
      });
      return streams.reduce(pipe);
    };
    module2.exports = pump;
  }
});

// node_modules/split2/index.js
var require_split2 = __commonJS({
  "node_modules/split2/index.js"(exports2, module2) {
    "use strict";
    var { Transform: Transform2 } = __require("stream");
    var { StringDecoder } = __require("string_decoder");
    var kLast = /* @__PURE__ */ Symbol("last");
    var kDecoder = /* @__PURE__ */ Symbol("decoder");
    function transform(chunk, enc, cb) {
      let list;
      if (this.overflow) {
        const buf = this[kDecoder].write(chunk);
        list = buf.split(this.matcher);
        if (list.length === 1) return cb();
        list.shift();
        this.overflow = false;
      } else {
        this[kLast] += this[kDecoder].write(chunk);
        list = this[kLast].split(this.matcher);
      }
      this[kLast] = list.pop();
      for (let i = 0; i < list.length; i++) {
        try {
          push(this, this.mapper(list[i]));
        } catch (error) {
          return cb(error);
        }
      }
      this.overflow = this[kLast].length > this.maxLength;
      if (this.overflow && !this.skipOverflow) {
        cb(new Error("maximum buffer reached"));
        return;
      }
      cb();
    }
    function flush(cb) {
      this[kLast] += this[kDecoder].end();
      if (this[kLast]) {
        try {
          push(this, this.mapper(this[kLast]));
        } catch (error) {
          return cb(error);
        }
      }
      cb();
    }
    function push(self, val) {
      if (val !== void 0) {
        self.push(val);
      }
    }
    function noop2(incoming) {
      return incoming;
    }
    function split(matcher, mapper, options2) {
      matcher = matcher || /\r?\n/;
      mapper = mapper || noop2;
      options2 = options2 || {};
      switch (arguments.length) {
        case 1:
          if (typeof matcher === "function") {
            mapper = matcher;
            matcher = /\r?\n/;
          } else if (typeof matcher === "object" && !(matcher instanceof RegExp) && !matcher[Symbol.split]) {
            options2 = matcher;
            matcher = /\r?\n/;
          }
          break;
        case 2:
          if (typeof matcher === "function") {
            options2 = mapper;
            mapper = matcher;
            matcher = /\r?\n/;
          } else if (typeof mapper === "object") {
            options2 = mapper;
            mapper = noop2;
          }
      }
      options2 = Object.assign({}, options2);
      options2.autoDestroy = true;
      options2.transform = transform;
      options2.flush = flush;
      options2.readableObjectMode = true;
      const stream = new Transform2(options2);
      stream[kLast] = "";
      stream[kDecoder] = new StringDecoder("utf8");
      stream.matcher = matcher;
      stream.mapper = mapper;
      stream.maxLength = options2.maxLength;
      stream.skipOverflow = options2.skipOverflow || false;
      stream.overflow = false;
      stream._destroy = function(err, cb) {
        this._writableState.errorEmitted = false;
        cb(err);
      };
      return stream;
    }
    module2.exports = split;
  }
});

// node_modules/pino-abstract-transport/index.js
var require_pino_abstract_transport = __commonJS({
  "node_modules/pino-abstract-transport/index.js"(exports2, module2) {
    "use strict";
    var metadata = /* @__PURE__ */ Symbol.for("pino.metadata");
    var split = require_split2();
    var { Duplex } = __require("stream");
    var { parentPort, workerData } = __require("worker_threads");
    function createDeferred() {
      let resolve;
      let reject;
      const promise = new Promise((_resolve2, _reject) => {
        resolve = _resolve2;
        reject = _reject;
      });
      promise.resolve = resolve;
      promise.reject = reject;
      return promise;
    }
    module2.exports = function build(fn, opts = {}) {
      const waitForConfig = opts.expectPinoConfig === true && workerData?.workerData?.pinoWillSendConfig === true;
      const parseLines = opts.parse === "lines";
      const parseLine = typeof opts.parseLine === "function" ? opts.parseLine : JSON.parse;
      const close = opts.close || defaultClose;
      const stream = split(function(line) {
        let value;
        try {
          value = parseLine(line);
        } catch (error) {
          this.emit("unknown", line, error);
          return;
        }
        if (value === null) {
          this.emit("unknown", line, "Null value ignored");
          return;
        }
        if (typeof value !== "object") {
          value = {
            data: value,
            time: Date.now()
          };
        }
        if (stream[metadata]) {
          stream.lastTime = value.time;
          stream.lastLevel = value.level;
          stream.lastObj = value;
        }
        if (parseLines) {
          return line;
        }
        return value;
      }, { autoDestroy: true });
      stream._destroy = function(err, cb) {
        const promise = close(err, cb);
        if (promise && typeof promise.then === "function") {
          promise.then(cb, cb);
        }
      };
      if (opts.expectPinoConfig === true && workerData?.workerData?.pinoWillSendConfig !== true) {
        setImmediate(() => {
          stream.emit("error", new Error("This transport is not compatible with the current version of pino. Please upgrade pino to the latest version."));
        });
      }
      if (opts.metadata !== false) {
        stream[metadata] = true;
        stream.lastTime = 0;
        stream.lastLevel = 0;
        stream.lastObj = null;
      }
      if (waitForConfig) {
        let pinoConfig = {};
        const configReceived = createDeferred();
        parentPort.on("message", function handleMessage(message) {
          if (message.code === "PINO_CONFIG") {
            pinoConfig = message.config;
            configReceived.resolve();
            parentPort.off("message", handleMessage);
          }
        });
        Object.defineProperties(stream, {
          levels: {
            get() {
              return pinoConfig.levels;
            }
          },
          messageKey: {
            get() {
              return pinoConfig.messageKey;
            }
          },
          errorKey: {
            get() {
              return pinoConfig.errorKey;
            }
          }
        });
        return configReceived.then(finish);
      }
      return finish();
      function finish() {
        let res = fn(stream);
        if (res && typeof res.catch === "function") {
          res.catch((err) => {
            stream.destroy(err);
          });
          res = null;
        } else if (opts.enablePipelining && res) {
          return Duplex.from({ writable: stream, readable: res });
        }
        return stream;
      }
    };
    function defaultClose(err, cb) {
      process.nextTick(cb, err);
    }
  }
});

// node_modules/pino-pretty/lib/constants.js
var require_constants2 = __commonJS({
  "node_modules/pino-pretty/lib/constants.js"(exports2, module2) {
    "use strict";
    module2.exports = {
      DATE_FORMAT: "yyyy-mm-dd HH:MM:ss.l o",
      DATE_FORMAT_SIMPLE: "HH:MM:ss.l",
      /**
       * @type {K_ERROR_LIKE_KEYS}
       */
      ERROR_LIKE_KEYS: ["err", "error"],
      MESSAGE_KEY: "msg",
      LEVEL_KEY: "level",
      LEVEL_LABEL: "levelLabel",
      TIMESTAMP_KEY: "time",
      LEVELS: {
        default: "USERLVL",
        60: "FATAL",
        50: "ERROR",
        40: "WARN",
        30: "INFO",
        20: "DEBUG",
        10: "TRACE"
      },
      LEVEL_NAMES: {
        fatal: 60,
        error: 50,
        warn: 40,
        info: 30,
        debug: 20,
        trace: 10
      },
      // Object keys that probably came from a logger like Pino or Bunyan.
      LOGGER_KEYS: [
        "pid",
        "hostname",
        "name",
        "level",
        "time",
        "timestamp",
        "caller"
      ]
    };
  }
});

// node_modules/pino-pretty/lib/utils/get-level-label-data.js
var require_get_level_label_data = __commonJS({
  "node_modules/pino-pretty/lib/utils/get-level-label-data.js"(exports2, module2) {
    "use strict";
    module2.exports = getLevelLabelData;
    var { LEVELS, LEVEL_NAMES } = require_constants2();
    function getLevelLabelData(useOnlyCustomProps, customLevels, customLevelNames) {
      const levels = useOnlyCustomProps ? customLevels || LEVELS : Object.assign({}, LEVELS, customLevels);
      const levelNames = useOnlyCustomProps ? customLevelNames || LEVEL_NAMES : Object.assign({}, LEVEL_NAMES, customLevelNames);
      return function(level) {
        let levelNum = "default";
        if (Number.isInteger(+level)) {
          levelNum = Object.prototype.hasOwnProperty.call(levels, level) ? level : levelNum;
        } else {
          levelNum = Object.prototype.hasOwnProperty.call(levelNames, level.toLowerCase()) ? levelNames[level.toLowerCase()] : levelNum;
        }
        return [levels[levelNum], levelNum];
      };
    }
  }
});

// node_modules/pino-pretty/lib/colors.js
var require_colors = __commonJS({
  "node_modules/pino-pretty/lib/colors.js"(exports2, module2) {
    "use strict";
    var nocolor = (input) => input;
    var plain = {
      default: nocolor,
      60: nocolor,
      50: nocolor,
      40: nocolor,
      30: nocolor,
      20: nocolor,
      10: nocolor,
      message: nocolor,
      greyMessage: nocolor,
      property: nocolor
    };
    var { createColors } = require_colorette();
    var getLevelLabelData = require_get_level_label_data();
    var availableColors = createColors({ useColor: true });
    var { white, bgRed, red, yellow, green, blue, gray, cyan, magenta } = availableColors;
    var colored = {
      default: white,
      60: bgRed,
      50: red,
      40: yellow,
      30: green,
      20: blue,
      10: gray,
      message: cyan,
      greyMessage: gray,
      property: magenta
    };
    function resolveCustomColoredColorizer(customColors) {
      return customColors.reduce(
        function(agg, [level, color]) {
          agg[level] = typeof availableColors[color] === "function" ? availableColors[color] : white;
          return agg;
        },
        { default: white, message: cyan, greyMessage: gray, property: magenta }
      );
    }
    function colorizeLevel(useOnlyCustomProps) {
      return function(level, colorizer, { customLevels, customLevelNames } = {}) {
        const [levelStr, levelNum] = getLevelLabelData(useOnlyCustomProps, customLevels, customLevelNames)(level);
        return Object.prototype.hasOwnProperty.call(colorizer, levelNum) ? colorizer[levelNum](levelStr) : colorizer.default(levelStr);
      };
    }
    function plainColorizer(useOnlyCustomProps) {
      const newPlainColorizer = colorizeLevel(useOnlyCustomProps);
      const customColoredColorizer = function(level, opts) {
        return newPlainColorizer(level, plain, opts);
      };
      customColoredColorizer.message = plain.message;
      customColoredColorizer.greyMessage = plain.greyMessage;
      customColoredColorizer.property = plain.property;
      customColoredColorizer.colors = createColors({ useColor: false });
      return customColoredColorizer;
    }
    function coloredColorizer(useOnlyCustomProps) {
      const newColoredColorizer = colorizeLevel(useOnlyCustomProps);
      const customColoredColorizer = function(level, opts) {
        return newColoredColorizer(level, colored, opts);
      };
      customColoredColorizer.message = colored.message;
      customColoredColorizer.property = colored.property;
      customColoredColorizer.greyMessage = colored.greyMessage;
      customColoredColorizer.colors = availableColors;
      return customColoredColorizer;
    }
    function customColoredColorizerFactory(customColors, useOnlyCustomProps) {
      const onlyCustomColored = resolveCustomColoredColorizer(customColors);
      const customColored = useOnlyCustomProps ? onlyCustomColored : Object.assign({}, colored, onlyCustomColored);
      const colorizeLevelCustom = colorizeLevel(useOnlyCustomProps);
      const customColoredColorizer = function(level, opts) {
        return colorizeLevelCustom(level, customColored, opts);
      };
      customColoredColorizer.colors = availableColors;
      customColoredColorizer.message = customColoredColorizer.message || customColored.message;
      customColoredColorizer.property = customColoredColorizer.property || customColored.property;
      customColoredColorizer.greyMessage = customColoredColorizer.greyMessage || customColored.greyMessage;
      return customColoredColorizer;
    }
    module2.exports = function getColorizer(useColors = false, customColors, useOnlyCustomProps) {
      if (useColors && customColors !== void 0) {
        return customColoredColorizerFactory(customColors, useOnlyCustomProps);
      } else if (useColors) {
        return coloredColorizer(useOnlyCustomProps);
      }
      return plainColorizer(useOnlyCustomProps);
    };
  }
});

// node_modules/pino-pretty/node_modules/sonic-boom/index.js
var require_sonic_boom2 = __commonJS({
  "node_modules/pino-pretty/node_modules/sonic-boom/index.js"(exports2, module2) {
    "use strict";
    var fs = __require("node:fs");
    var EventEmitter = __require("node:events");
    var inherits = __require("node:util").inherits;
    var path2 = __require("node:path");
    var assert = __require("node:assert");
    var sleep = require_atomic_sleep();
    var BUSY_WRITE_TIMEOUT = 100;
    var kEmptyBuffer = Buffer.allocUnsafe(0);
    var MAX_WRITE = 16 * 1024;
    var kContentModeBuffer = "buffer";
    var kContentModeUtf8 = "utf8";
    var kFlush = /* @__PURE__ */ Symbol("kFlush");
    var kFlushSyncIdle = 0;
    var kFlushSyncRetry = 1;
    var kFlushSyncInWriteEvent = 2;
    var kFlushSyncInFlight = 3;
    function isIgnorableFsyncError(err) {
      switch (err?.code) {
        case "EBADF":
        case "EINVAL":
        case "ENOTSUP":
        case "EOPNOTSUPP":
        case "EROFS":
          return true;
        default:
          return false;
      }
    }
    var [major, minor] = (process.versions.node || "0.0").split(".").map(Number);
    var kCopyBuffer = major >= 22 && minor >= 7;
    function openFile(file, sonic) {
      sonic._opening = true;
      sonic._writing = true;
      sonic._asyncDrainScheduled = false;
      function fileOpened(err, fd) {
        if (err) {
          sonic._reopening = false;
          sonic._writing = false;
          sonic._opening = false;
          if (sonic.sync) {
            process.nextTick(() => {
              if (sonic.listenerCount("error") > 0) {
                sonic.emit("error", err);
              }
            });
          } else {
            sonic.emit("error", err);
          }
          return;
        }
        const reopening = sonic._reopening;
        sonic.fd = fd;
        sonic.file = file;
        sonic._reopening = false;
        sonic._opening = false;
        sonic._writing = false;
        if (sonic.sync) {
          process.nextTick(() => sonic.emit("ready"));
        } else {
          sonic.emit("ready");
        }
        if (sonic.destroyed) {
          return;
        }
        if (!sonic._writing && (sonic._len > sonic.minLength || sonic._flushPending)) {
          sonic._actualWrite();
        } else if (reopening && !sonic._writing) {
          process.nextTick(emitDrain, sonic);
        }
      }
      const flags = sonic.append ? "a" : "w";
      const mode = sonic.mode;
      if (sonic.sync) {
        try {
          if (sonic.mkdir) fs.mkdirSync(path2.dirname(file), { recursive: true });
          const fd = fs.openSync(file, flags, mode);
          fileOpened(null, fd);
        } catch (err) {
          fileOpened(err);
          throw err;
        }
      } else if (sonic.mkdir) {
        fs.mkdir(path2.dirname(file), { recursive: true }, (err) => {
          if (err) return fileOpened(err);
          fs.open(file, flags, mode, fileOpened);
        });
      } else {
        fs.open(file, flags, mode, fileOpened);
      }
    }
    function SonicBoom(opts) {
      if (!(this instanceof SonicBoom)) {
        return new SonicBoom(opts);
      }
      let { fd, dest, minLength, maxLength, maxWrite, periodicFlush, sync, append = true, mkdir, retryEAGAIN, maxWriteRetries, fsync, contentMode, mode } = opts || {};
      fd = fd || dest;
      this._len = 0;
      this.fd = -1;
      this._bufs = [];
      this._lens = [];
      this._writing = false;
      this._ending = false;
      this._reopening = false;
      this._asyncDrainScheduled = false;
      this._flushPending = 0;
      this._flushInProgress = 0;
      this._emittingFlush = false;
      this._emittingWrite = false;
      this._retryTimer = null;
      this._hwm = Math.max(minLength || 0, 16387);
      this.file = null;
      this.destroyed = false;
      this.minLength = minLength || 0;
      this.maxLength = maxLength || 0;
      this.maxWrite = maxWrite || MAX_WRITE;
      this._periodicFlush = periodicFlush || 0;
      this._periodicFlushTimer = void 0;
      this.sync = sync || false;
      this.writable = true;
      this._fsync = fsync || false;
      this.append = append || false;
      this.mode = mode;
      this.retryEAGAIN = retryEAGAIN || (() => true);
      this.maxWriteRetries = maxWriteRetries || 0;
      this._writeRetries = 0;
      this.mkdir = mkdir || false;
      let fsWriteSync;
      let fsWrite;
      if (contentMode === kContentModeBuffer) {
        this._writingBuf = kEmptyBuffer;
        this.write = writeBuffer;
        this.flush = flushBuffer;
        this.flushSync = flushBufferSync;
        this._actualWrite = actualWriteBuffer;
        fsWriteSync = () => fs.writeSync(this.fd, this._writingBuf);
        fsWrite = () => fs.write(this.fd, this._writingBuf, this.release);
      } else if (contentMode === void 0 || contentMode === kContentModeUtf8) {
        this._writingBuf = "";
        this.write = write;
        this.flush = flush;
        this.flushSync = flushSync;
        this._actualWrite = actualWrite;
        fsWriteSync = () => {
          if (Buffer.isBuffer(this._writingBuf)) {
            return fs.writeSync(this.fd, this._writingBuf);
          }
          return fs.writeSync(this.fd, this._writingBuf, "utf8");
        };
        fsWrite = () => {
          if (Buffer.isBuffer(this._writingBuf)) {
            return fs.write(this.fd, this._writingBuf, this.release);
          }
          return fs.write(this.fd, this._writingBuf, "utf8", this.release);
        };
      } else {
        throw new Error(`SonicBoom supports "${kContentModeUtf8}" and "${kContentModeBuffer}", but passed ${contentMode}`);
      }
      if (typeof fd === "number") {
        this.fd = fd;
        process.nextTick(() => this.emit("ready"));
      } else if (typeof fd === "string") {
        openFile(fd, this);
      } else {
        throw new Error("SonicBoom supports only file descriptors and files");
      }
      if (this.minLength >= this.maxWrite) {
        throw new Error(`minLength should be smaller than maxWrite (${this.maxWrite})`);
      }
      this.release = (err, n2) => {
        if (err) {
          const isRetryableErr = err.code === "EAGAIN" || err.code === "EBUSY";
          if (isRetryableErr) {
            this._writeRetries++;
          }
          const retriesExhausted = this.maxWriteRetries > 0 && this._writeRetries > this.maxWriteRetries;
          if (isRetryableErr && !retriesExhausted && this.retryEAGAIN(err, this._writingBuf.length, this._len - this._writingBuf.length)) {
            if (this.sync) {
              try {
                sleep(BUSY_WRITE_TIMEOUT);
                this.release(void 0, 0);
              } catch (err2) {
                this.release(err2);
              }
            } else {
              this._retryTimer = setTimeout(() => {
                this._retryTimer = null;
                fsWrite();
              }, BUSY_WRITE_TIMEOUT);
            }
          } else {
            this._writing = false;
            this.emit("error", err);
          }
          return;
        }
        if (n2 > 0) {
          this._writeRetries = 0;
        }
        const releasedBufObj = releaseWritingBuf(this._writingBuf, this._len, n2);
        this._len = releasedBufObj.len;
        this._writingBuf = releasedBufObj.writingBuf;
        this._emittingWrite = true;
        try {
          this.emit("write", n2);
        } finally {
          this._emittingWrite = false;
        }
        if (this.destroyed) {
          this._writing = false;
          if (this._flushPending > 0) {
            if (this._len === 0) {
              scheduleDrain(this);
            } else {
              this.emit(kFlush, new Error("SonicBoom destroyed"));
            }
          }
          return;
        }
        if (this._writingBuf.length) {
          if (!this.sync) {
            fsWrite();
            return;
          }
          try {
            do {
              const n3 = fsWriteSync();
              const releasedBufObj2 = releaseWritingBuf(this._writingBuf, this._len, n3);
              this._len = releasedBufObj2.len;
              this._writingBuf = releasedBufObj2.writingBuf;
            } while (this._writingBuf.length);
          } catch (err2) {
            this.release(err2);
            return;
          }
        }
        if (this._fsync) {
          fs.fsyncSync(this.fd);
        }
        const len = this._len;
        if (this._reopening) {
          this._writing = false;
          this._reopening = false;
          this.reopen();
        } else if (len > 0 && (len > this.minLength || this._flushPending)) {
          this._actualWrite();
        } else if (this._ending) {
          if (len > 0) {
            this._actualWrite();
          } else {
            this._writing = false;
            finishEnding(this);
          }
        } else {
          this._writing = false;
          scheduleDrain(this);
        }
      };
      this.on("newListener", function(name) {
        if (name === "drain" || name === kFlush) {
          this._asyncDrainScheduled = false;
        }
      });
      if (this._periodicFlush !== 0) {
        this._periodicFlushTimer = setInterval(() => {
          if (this._flushPending === 0 && this._flushInProgress === 0) {
            this.flush(null);
          }
        }, this._periodicFlush);
        this._periodicFlushTimer.unref();
      }
    }
    function releaseWritingBuf(writingBuf, len, n2) {
      if (typeof writingBuf === "string") {
        writingBuf = Buffer.from(writingBuf);
      }
      len = Math.max(len - n2, 0);
      writingBuf = writingBuf.subarray(n2);
      return { writingBuf, len };
    }
    function scheduleDrain(sonic) {
      if (sonic.sync) {
        if (!sonic._asyncDrainScheduled) {
          sonic._asyncDrainScheduled = true;
          process.nextTick(emitDrain, sonic);
        }
      } else {
        emitDrain(sonic);
      }
    }
    function emitDrain(sonic) {
      const hasListeners = sonic.listenerCount("drain") > 0 || sonic.listenerCount(kFlush) > 0;
      if (!hasListeners) return;
      sonic._asyncDrainScheduled = false;
      if (sonic._writing) return;
      emitFlush(sonic);
      if (sonic._writing || sonic.destroyed) return;
      if (sonic.listenerCount("drain") > 0) {
        sonic.emit("drain");
      }
    }
    function emitFlush(sonic) {
      if (sonic._emittingFlush) return;
      sonic._emittingFlush = true;
      try {
        sonic.emit(kFlush);
      } finally {
        sonic._emittingFlush = false;
      }
    }
    function finishEnding(sonic) {
      if (!sonic._ending || sonic._writing || sonic.destroyed) return;
      if (sonic._len > 0) {
        sonic._actualWrite();
        return;
      }
      if (sonic._flushPending > 0) emitFlush(sonic);
      if (sonic._flushPending === 0 && sonic._flushInProgress === 0 && !sonic._writing && sonic._len === 0) {
        actualClose(sonic);
      }
    }
    inherits(SonicBoom, EventEmitter);
    function mergeBuf(bufs, len) {
      if (bufs.length === 0) {
        return kEmptyBuffer;
      }
      if (bufs.length === 1) {
        return bufs[0];
      }
      return Buffer.concat(bufs, len);
    }
    function write(data) {
      if (this.destroyed) {
        throw new Error("SonicBoom destroyed");
      }
      data = "" + data;
      const dataLen = Buffer.byteLength(data);
      const len = this._len + dataLen;
      const bufs = this._bufs;
      if (this.maxLength && len > this.maxLength) {
        this.emit("drop", data);
        return this._len < this._hwm;
      }
      if (bufs.length === 0 || Buffer.byteLength(bufs[bufs.length - 1]) + dataLen > this.maxWrite) {
        bufs.push(data);
      } else {
        bufs[bufs.length - 1] += data;
      }
      this._len = len;
      if (!this._writing && this._len >= this.minLength) {
        this._actualWrite();
      }
      return this._len < this._hwm;
    }
    function writeBuffer(data) {
      if (this.destroyed) {
        throw new Error("SonicBoom destroyed");
      }
      const len = this._len + data.length;
      const bufs = this._bufs;
      const lens = this._lens;
      if (this.maxLength && len > this.maxLength) {
        this.emit("drop", data);
        return this._len < this._hwm;
      }
      if (bufs.length === 0 || lens[lens.length - 1] + data.length > this.maxWrite) {
        bufs.push([data]);
        lens.push(data.length);
      } else {
        bufs[bufs.length - 1].push(data);
        lens[lens.length - 1] += data.length;
      }
      this._len = len;
      if (!this._writing && this._len >= this.minLength) {
        this._actualWrite();
      }
      return this._len < this._hwm;
    }
    function callFlushCallbackOnDrain(cb) {
      this._flushPending++;
      let waiting = true;
      let completed2 = false;
      let flushing = false;
      const stopWaiting = () => {
        if (!waiting) return false;
        waiting = false;
        this.off(kFlush, onDrain);
        this.off("error", onError);
        return true;
      };
      const complete2 = (err, finish = true) => {
        if (completed2) return;
        completed2 = true;
        if (flushing) this._flushInProgress--;
        try {
          cb(err);
        } finally {
          if (finish) finishEnding(this);
        }
      };
      const onDrain = (err) => {
        if (!stopWaiting()) return;
        this._flushPending--;
        if (err) {
          complete2(err, false);
          return;
        }
        this._flushInProgress++;
        flushing = true;
        if (!this._fsync && !this.destroyed) {
          try {
            fs.fsync(this.fd, (err2) => {
              if (isIgnorableFsyncError(err2)) {
                complete2();
                return;
              }
              complete2(err2);
            });
          } catch (err2) {
            complete2(err2);
          }
        } else {
          complete2();
        }
      };
      const onError = (err) => {
        if (!stopWaiting()) return;
        this._flushPending--;
        complete2(err, false);
      };
      this.once(kFlush, onDrain);
      this.once("error", onError);
    }
    function flush(cb) {
      if (cb != null && typeof cb !== "function") {
        throw new Error("flush cb must be a function");
      }
      if (this.destroyed) {
        const error = new Error("SonicBoom destroyed");
        if (cb) {
          cb(error);
          return;
        }
        throw error;
      }
      if (this.minLength <= 0 && !this._writing && this._len === 0) {
        cb?.();
        return;
      }
      if (cb) {
        callFlushCallbackOnDrain.call(this, cb);
      }
      if (this._writing) {
        return;
      }
      if (this._bufs.length === 0) {
        this._bufs.push("");
      }
      this._actualWrite();
    }
    function flushBuffer(cb) {
      if (cb != null && typeof cb !== "function") {
        throw new Error("flush cb must be a function");
      }
      if (this.destroyed) {
        const error = new Error("SonicBoom destroyed");
        if (cb) {
          cb(error);
          return;
        }
        throw error;
      }
      if (this.minLength <= 0 && !this._writing && this._len === 0) {
        cb?.();
        return;
      }
      if (cb) {
        callFlushCallbackOnDrain.call(this, cb);
      }
      if (this._writing) {
        return;
      }
      if (this._bufs.length === 0) {
        this._bufs.push([]);
        this._lens.push(0);
      }
      this._actualWrite();
    }
    SonicBoom.prototype.reopen = function(file) {
      if (this.destroyed) {
        throw new Error("SonicBoom destroyed");
      }
      if (this._opening) {
        this.once("ready", () => {
          if (!this.destroyed) this.reopen(file);
        });
        return;
      }
      if (this._ending) {
        return;
      }
      if (!this.file) {
        throw new Error("Unable to reopen a file descriptor, you must pass a file to SonicBoom");
      }
      if (file) {
        this.file = file;
      }
      this._reopening = true;
      if (this._writing) {
        return;
      }
      const fd = this.fd;
      this.once("ready", () => {
        if (fd !== this.fd) {
          fs.close(fd, (err) => {
            if (err) {
              return this.emit("error", err);
            }
          });
        }
      });
      openFile(this.file, this);
    };
    SonicBoom.prototype.end = function() {
      if (this.destroyed) {
        throw new Error("SonicBoom destroyed");
      }
      if (this._opening) {
        this.once("ready", () => {
          if (!this.destroyed) this.end();
        });
        return;
      }
      if (this._ending) {
        return;
      }
      this._ending = true;
      if (this._writing) {
        return;
      }
      if (this._len > 0 && this.fd >= 0) {
        this._actualWrite();
      } else {
        finishEnding(this);
      }
    };
    function beginFlushSync(sonic) {
      if (sonic.destroyed) {
        throw new Error("SonicBoom destroyed");
      }
      if (sonic.fd < 0) {
        throw new Error("sonic boom is not ready yet");
      }
      if (!sonic._writing || sonic._opening) {
        return kFlushSyncIdle;
      }
      if (sonic._retryTimer !== null) {
        clearTimeout(sonic._retryTimer);
        sonic._retryTimer = null;
        return kFlushSyncRetry;
      }
      if (sonic._emittingWrite) {
        return kFlushSyncInWriteEvent;
      }
      return kFlushSyncInFlight;
    }
    function endFlushSyncRetry(sonic) {
      sonic._writing = false;
      process.nextTick(() => {
        if (sonic.destroyed || sonic._writing) return;
        if (sonic._reopening) {
          sonic._reopening = false;
          sonic.reopen();
        } else if (sonic._ending) {
          finishEnding(sonic);
        } else if (sonic._len > 0 && (sonic._len > sonic.minLength || sonic._flushPending)) {
          sonic._actualWrite();
        } else {
          emitDrain(sonic);
        }
      });
    }
    function flushSync() {
      const state = beginFlushSync(this);
      try {
        if (state !== kFlushSyncInFlight && this._writingBuf.length > 0) {
          this._bufs.unshift(this._writingBuf);
          this._writingBuf = "";
        }
        let buf = "";
        while (this._bufs.length || buf.length) {
          if (buf.length <= 0) {
            buf = this._bufs[0];
          }
          try {
            const n2 = Buffer.isBuffer(buf) ? fs.writeSync(this.fd, buf) : fs.writeSync(this.fd, buf, "utf8");
            this._writeRetries = 0;
            const releasedBufObj = releaseWritingBuf(buf, this._len, n2);
            buf = releasedBufObj.writingBuf;
            this._len = releasedBufObj.len;
            if (buf.length <= 0) {
              this._bufs.shift();
            }
          } catch (err) {
            const shouldRetry = err.code === "EAGAIN" || err.code === "EBUSY";
            if (shouldRetry) {
              this._writeRetries++;
            }
            const retriesExhausted = this.maxWriteRetries > 0 && this._writeRetries > this.maxWriteRetries;
            if (!shouldRetry || retriesExhausted || !this.retryEAGAIN(err, buf.length, this._len - buf.length)) {
              throw err;
            }
            sleep(BUSY_WRITE_TIMEOUT);
          }
        }
      } finally {
        if (state === kFlushSyncRetry) endFlushSyncRetry(this);
      }
      try {
        fs.fsyncSync(this.fd);
      } catch {
      }
    }
    function flushBufferSync() {
      const state = beginFlushSync(this);
      try {
        if (state !== kFlushSyncInFlight && this._writingBuf.length > 0) {
          this._bufs.unshift([this._writingBuf]);
          this._lens.unshift(this._writingBuf.length);
          this._writingBuf = kEmptyBuffer;
        }
        let buf = kEmptyBuffer;
        while (this._bufs.length || buf.length) {
          if (buf.length <= 0) {
            buf = mergeBuf(this._bufs[0], this._lens[0]);
          }
          try {
            const n2 = fs.writeSync(this.fd, buf);
            this._writeRetries = 0;
            buf = buf.subarray(n2);
            this._len = Math.max(this._len - n2, 0);
            if (buf.length <= 0) {
              this._bufs.shift();
              this._lens.shift();
            }
          } catch (err) {
            const shouldRetry = err.code === "EAGAIN" || err.code === "EBUSY";
            if (shouldRetry) {
              this._writeRetries++;
            }
            const retriesExhausted = this.maxWriteRetries > 0 && this._writeRetries > this.maxWriteRetries;
            if (!shouldRetry || retriesExhausted || !this.retryEAGAIN(err, buf.length, this._len - buf.length)) {
              throw err;
            }
            sleep(BUSY_WRITE_TIMEOUT);
          }
        }
      } finally {
        if (state === kFlushSyncRetry) endFlushSyncRetry(this);
      }
    }
    SonicBoom.prototype.destroy = function() {
      if (this.destroyed) {
        return;
      }
      const opening = this._opening;
      actualClose(this);
      if (opening && this._flushPending > 0) {
        this.emit("error", new Error("SonicBoom destroyed"));
      }
    };
    function actualWrite() {
      const release = this.release;
      this._writing = true;
      this._writingBuf = this._writingBuf.length ? this._writingBuf : this._bufs.shift() || "";
      if (this.sync) {
        try {
          const written = Buffer.isBuffer(this._writingBuf) ? fs.writeSync(this.fd, this._writingBuf) : fs.writeSync(this.fd, this._writingBuf, "utf8");
          release(null, written);
        } catch (err) {
          release(err);
        }
      } else {
        fs.write(this.fd, this._writingBuf, release);
      }
    }
    function actualWriteBuffer() {
      const release = this.release;
      this._writing = true;
      this._writingBuf = this._writingBuf.length ? this._writingBuf : mergeBuf(this._bufs.shift(), this._lens.shift());
      if (this.sync) {
        try {
          const written = fs.writeSync(this.fd, this._writingBuf);
          release(null, written);
        } catch (err) {
          release(err);
        }
      } else {
        if (kCopyBuffer) {
          this._writingBuf = Buffer.from(this._writingBuf);
        }
        fs.write(this.fd, this._writingBuf, release);
      }
    }
    function actualClose(sonic) {
      if (sonic.destroyed) {
        return;
      }
      if (sonic.fd === -1) {
        sonic.destroyed = true;
        sonic.once("ready", () => {
          sonic.destroyed = false;
          actualClose(sonic);
        });
        return;
      }
      if (sonic._periodicFlushTimer !== void 0) {
        clearInterval(sonic._periodicFlushTimer);
      }
      sonic.destroyed = true;
      sonic._bufs = [];
      sonic._lens = [];
      if (sonic._retryTimer !== null) {
        clearTimeout(sonic._retryTimer);
        sonic._retryTimer = null;
        sonic._writing = false;
      }
      if (sonic._flushPending > 0 && !sonic._writing) {
        sonic.emit(kFlush, new Error("SonicBoom destroyed"));
      }
      assert(typeof sonic.fd === "number", `sonic.fd must be a number, got ${typeof sonic.fd}`);
      try {
        fs.fsync(sonic.fd, closeWrapped);
      } catch {
      }
      function closeWrapped() {
        if (sonic.fd !== 1 && sonic.fd !== 2) {
          fs.close(sonic.fd, done2);
        } else {
          done2();
        }
      }
      function done2(err) {
        if (err) {
          sonic.emit("error", err);
          return;
        }
        if (sonic._ending && !sonic._writing) {
          sonic.emit("finish");
        }
        sonic.emit("close");
      }
    }
    SonicBoom.SonicBoom = SonicBoom;
    SonicBoom.default = SonicBoom;
    module2.exports = SonicBoom;
  }
});

// node_modules/pino-pretty/lib/utils/noop.js
var require_noop = __commonJS({
  "node_modules/pino-pretty/lib/utils/noop.js"(exports2, module2) {
    "use strict";
    module2.exports = function noop2() {
    };
  }
});

// node_modules/pino-pretty/lib/utils/build-safe-sonic-boom.js
var require_build_safe_sonic_boom = __commonJS({
  "node_modules/pino-pretty/lib/utils/build-safe-sonic-boom.js"(exports2, module2) {
    "use strict";
    module2.exports = buildSafeSonicBoom;
    var { isMainThread } = __require("node:worker_threads");
    var SonicBoom = require_sonic_boom2();
    var noop2 = require_noop();
    function buildSafeSonicBoom(opts) {
      const stream = new SonicBoom(opts);
      stream.on("error", filterBrokenPipe);
      if (!opts.sync && isMainThread) {
        setupOnExit(stream);
      }
      return stream;
      function filterBrokenPipe(err) {
        if (err.code === "EPIPE") {
          stream.write = noop2;
          stream.end = noop2;
          stream.flushSync = noop2;
          stream.destroy = noop2;
          return;
        }
        stream.removeListener("error", filterBrokenPipe);
      }
    }
    function setupOnExit(stream) {
      if (global.WeakRef && global.WeakMap && global.FinalizationRegistry) {
        const onExit = require_on_exit_leak_free();
        onExit.register(stream, autoEnd);
        stream.on("close", function() {
          onExit.unregister(stream);
        });
      }
    }
    function autoEnd(stream, eventName) {
      if (stream.destroyed) {
        return;
      }
      if (eventName === "beforeExit") {
        stream.flush();
        stream.on("drain", function() {
          stream.end();
        });
      } else {
        stream.flushSync();
      }
    }
  }
});

// node_modules/pino-pretty/lib/utils/is-valid-date.js
var require_is_valid_date = __commonJS({
  "node_modules/pino-pretty/lib/utils/is-valid-date.js"(exports2, module2) {
    "use strict";
    module2.exports = isValidDate;
    function isValidDate(date) {
      return date instanceof Date && !Number.isNaN(date.getTime());
    }
  }
});

// node_modules/pino-pretty/lib/utils/create-date.js
var require_create_date = __commonJS({
  "node_modules/pino-pretty/lib/utils/create-date.js"(exports2, module2) {
    "use strict";
    module2.exports = createDate;
    var isValidDate = require_is_valid_date();
    function createDate(epoch) {
      let date = new Date(epoch);
      if (isValidDate(date)) {
        return date;
      }
      date = /* @__PURE__ */ new Date(+epoch);
      return date;
    }
  }
});

// node_modules/pino-pretty/lib/utils/split-property-key.js
var require_split_property_key = __commonJS({
  "node_modules/pino-pretty/lib/utils/split-property-key.js"(exports2, module2) {
    "use strict";
    module2.exports = splitPropertyKey;
    function splitPropertyKey(key) {
      const result = [];
      let backslash = false;
      let segment = "";
      for (let i = 0; i < key.length; i++) {
        const c = key.charAt(i);
        if (c === "\\") {
          backslash = true;
          continue;
        }
        if (backslash) {
          backslash = false;
          segment += c;
          continue;
        }
        if (c === ".") {
          result.push(segment);
          segment = "";
          continue;
        }
        segment += c;
      }
      if (segment.length) {
        result.push(segment);
      }
      return result;
    }
  }
});

// node_modules/pino-pretty/lib/utils/get-property-value.js
var require_get_property_value = __commonJS({
  "node_modules/pino-pretty/lib/utils/get-property-value.js"(exports2, module2) {
    "use strict";
    module2.exports = getPropertyValue;
    var splitPropertyKey = require_split_property_key();
    function getPropertyValue(obj, property) {
      const props = Array.isArray(property) ? property : splitPropertyKey(property);
      for (const prop of props) {
        if (!Object.prototype.hasOwnProperty.call(obj, prop)) {
          return;
        }
        obj = obj[prop];
      }
      return obj;
    }
  }
});

// node_modules/pino-pretty/lib/utils/delete-log-property.js
var require_delete_log_property = __commonJS({
  "node_modules/pino-pretty/lib/utils/delete-log-property.js"(exports2, module2) {
    "use strict";
    module2.exports = deleteLogProperty;
    var getPropertyValue = require_get_property_value();
    var splitPropertyKey = require_split_property_key();
    function deleteLogProperty(log, property) {
      const props = splitPropertyKey(property);
      const propToDelete = props.pop();
      log = getPropertyValue(log, props);
      if (log !== null && typeof log === "object" && Object.prototype.hasOwnProperty.call(log, propToDelete)) {
        delete log[propToDelete];
      }
    }
  }
});

// node_modules/fast-copy/dist/cjs/index.cjs
var require_cjs2 = __commonJS({
  "node_modules/fast-copy/dist/cjs/index.cjs"(exports2) {
    "use strict";
    var MaxDepthExceededError = class extends RangeError {
      constructor(maxDepth) {
        super(`Maximum copy depth of ${String(maxDepth)} exceeded; the value copied is nested too deeply.`);
        this.maxDepth = maxDepth;
        this.name = "MaxDepthExceededError";
      }
    };
    var toStringFunction = Function.prototype.toString;
    var toStringObject = Object.prototype.toString;
    function getCleanClone(prototype) {
      if (!prototype) {
        return /* @__PURE__ */ Object.create(null);
      }
      const Constructor = prototype.constructor;
      if (Constructor === Object) {
        return prototype === Object.prototype ? {} : Object.create(prototype);
      }
      if (typeof Constructor === "function" && ~toStringFunction.call(Constructor).indexOf("[native code]")) {
        try {
          return new Constructor();
        } catch (_a) {
        }
      }
      return Object.create(prototype);
    }
    function getTag(value) {
      const stringTag = value[Symbol.toStringTag];
      if (stringTag) {
        return stringTag;
      }
      const type = toStringObject.call(value);
      return type.substring(8, type.length - 1);
    }
    var sliceTypedArray = Object.getPrototypeOf(Int8Array.prototype).slice;
    function copyOwnDescriptor(original, clone, property, state) {
      const ownDescriptor = Object.getOwnPropertyDescriptor(original, property) || {
        configurable: true,
        enumerable: true,
        value: original[property],
        writable: true
      };
      const descriptor = ownDescriptor.get || ownDescriptor.set ? ownDescriptor : {
        configurable: ownDescriptor.configurable,
        enumerable: ownDescriptor.enumerable,
        value: state.copier(ownDescriptor.value, state),
        writable: ownDescriptor.writable
      };
      try {
        Object.defineProperty(clone, property, descriptor);
      } catch (_a) {
        clone[property] = descriptor.get ? descriptor.get() : descriptor.value;
      }
    }
    function copyOwnPropertiesStrict(value, clone, state, names, start) {
      for (let index = start; index < names.length; ++index) {
        copyOwnDescriptor(value, clone, names[index], state);
      }
      for (const symbol of Object.getOwnPropertySymbols(value)) {
        copyOwnDescriptor(value, clone, symbol, state);
      }
      return clone;
    }
    function copyArray(array, state) {
      const clone = new state.Constructor();
      state.cache.set(array, clone);
      for (let index = 0; index < array.length; ++index) {
        clone[index] = state.copier(array[index], state);
      }
      return clone;
    }
    function copyArrayStrict(array, state) {
      const clone = new state.Constructor();
      state.cache.set(array, clone);
      return copyOwnPropertiesStrict(array, clone, state, Object.getOwnPropertyNames(array), 0);
    }
    function copyArrayBuffer(arrayBuffer, state) {
      if (ArrayBuffer.isView(arrayBuffer)) {
        return sliceTypedArray.call(arrayBuffer, 0);
      }
      if (arrayBuffer.resizable || arrayBuffer.growable) {
        const maxByteLength = arrayBuffer.maxByteLength;
        const clone = new state.Constructor(arrayBuffer.byteLength, { maxByteLength });
        new Uint8Array(clone).set(new Uint8Array(arrayBuffer));
        return clone;
      }
      if (!arrayBuffer.byteLength && getTag(arrayBuffer) === "SharedArrayBuffer") {
        return new state.Constructor(0);
      }
      return arrayBuffer.slice(0);
    }
    function copyArrayBufferStrict(arrayBuffer, state) {
      const clone = copyArrayBuffer(arrayBuffer, state);
      state.cache.set(arrayBuffer, clone);
      const start = ArrayBuffer.isView(clone) ? clone.length || 0 : 0;
      return copyOwnPropertiesStrict(arrayBuffer, clone, state, Object.getOwnPropertyNames(arrayBuffer), start);
    }
    function copyBlob(blob, _state) {
      return blob.slice(0, blob.size, blob.type);
    }
    var copyBlobStrict = createStrictHandler(copyBlob);
    function copyDataView(dataView, state) {
      return new state.Constructor(state.copier(dataView.buffer, state), dataView.byteOffset, dataView.byteLength);
    }
    function copyDataViewStrict(dataView, state) {
      const { buffer } = dataView;
      const { cache: cache2, Constructor } = state;
      const bufferCopied = cache2.has(buffer);
      const bufferClone = bufferCopied ? cache2.get(buffer) : state.copier(buffer, state);
      if (!bufferCopied && cache2.has(dataView)) {
        return cache2.get(dataView);
      }
      const clone = new Constructor(bufferClone, dataView.byteOffset, dataView.byteLength);
      state.cache.set(dataView, clone);
      return copyOwnPropertiesStrict(dataView, clone, state, Object.getOwnPropertyNames(dataView), 0);
    }
    function copyDate(date, state) {
      return new state.Constructor(date.getTime());
    }
    var copyDateStrict = createStrictHandler(copyDate);
    function copyMap(map, state) {
      const clone = new state.Constructor();
      state.cache.set(map, clone);
      for (const [key, value] of map) {
        clone.set(key, state.copier(value, state));
      }
      return clone;
    }
    function copyMapStrict(map, state) {
      return copyOwnPropertiesStrict(map, copyMap(map, state), state, Object.getOwnPropertyNames(map), 0);
    }
    function copyObject(object, state) {
      const clone = getCleanClone(state.prototype);
      state.cache.set(object, clone);
      for (const key of Object.keys(object)) {
        if (key === "__proto__") {
          Object.defineProperty(clone, key, {
            configurable: true,
            enumerable: true,
            value: state.copier(object[key], state),
            writable: true
          });
        } else {
          clone[key] = state.copier(object[key], state);
        }
      }
      for (const symbol of Object.getOwnPropertySymbols(object)) {
        if (Object.prototype.propertyIsEnumerable.call(object, symbol)) {
          clone[symbol] = state.copier(object[symbol], state);
        }
      }
      return clone;
    }
    function copyObjectStrict(object, state) {
      const clone = getCleanClone(state.prototype);
      state.cache.set(object, clone);
      return copyOwnPropertiesStrict(object, clone, state, Object.getOwnPropertyNames(object), 0);
    }
    function copyPrimitiveWrapper(primitiveObject, state) {
      return new state.Constructor(primitiveObject.valueOf());
    }
    var copyPrimitiveWrapperStrict = createStrictHandler(copyPrimitiveWrapper);
    function copyRegExp(regExp, state) {
      const clone = new state.Constructor(regExp.source, regExp.flags);
      clone.lastIndex = regExp.lastIndex;
      return clone;
    }
    var copyRegExpStrict = createStrictHandler(copyRegExp);
    function copySelf(value, _state) {
      return value;
    }
    function copySet(set2, state) {
      const clone = new state.Constructor();
      state.cache.set(set2, clone);
      for (const value of set2) {
        clone.add(state.copier(value, state));
      }
      return clone;
    }
    function copySetStrict(set2, state) {
      return copyOwnPropertiesStrict(set2, copySet(set2, state), state, Object.getOwnPropertyNames(set2), 0);
    }
    function createStrictHandler(handler) {
      return (value, state) => {
        const clone = handler(value, state);
        state.cache.set(value, clone);
        return copyOwnPropertiesStrict(value, clone, state, Object.getOwnPropertyNames(value), 0);
      };
    }
    function copyStringStrict(string, state) {
      const clone = copyPrimitiveWrapper(string, state);
      state.cache.set(string, clone);
      const { length } = string;
      const names = Object.getOwnPropertyNames(string);
      const start = names[length] === "length" ? length + 1 : length;
      return copyOwnPropertiesStrict(string, clone, state, names, start);
    }
    var DEFAULT_MAX_DEPTH = 1e3;
    function createDefaultCache() {
      return /* @__PURE__ */ new WeakMap();
    }
    function getOptions({ createCache: createCacheOverride, maxDepth, methods: methodsOverride, strict }) {
      const defaultMethods = {
        array: strict ? copyArrayStrict : copyArray,
        arrayBuffer: strict ? copyArrayBufferStrict : copyArrayBuffer,
        asyncGenerator: copySelf,
        blob: strict ? copyBlobStrict : copyBlob,
        dataView: strict ? copyDataViewStrict : copyDataView,
        date: strict ? copyDateStrict : copyDate,
        error: copySelf,
        generator: copySelf,
        map: strict ? copyMapStrict : copyMap,
        object: strict ? copyObjectStrict : copyObject,
        regExp: strict ? copyRegExpStrict : copyRegExp,
        set: strict ? copySetStrict : copySet
      };
      const methods = methodsOverride ? Object.assign(defaultMethods, methodsOverride) : defaultMethods;
      const copiers = getTagSpecificCopiers(methods, strict);
      const createCache = createCacheOverride || createDefaultCache;
      if (!copiers.Object || !copiers.Array) {
        throw new Error("An object and array copier must be provided.");
      }
      return {
        createCache,
        copiers,
        maxDepth: maxDepth == null ? DEFAULT_MAX_DEPTH : maxDepth,
        methods,
        strict: Boolean(strict)
      };
    }
    function getTagSpecificCopiers(methods, strict) {
      const copyPrimitive = strict ? copyPrimitiveWrapperStrict : copyPrimitiveWrapper;
      return Object.assign(/* @__PURE__ */ Object.create(null), {
        Arguments: methods.object,
        Array: methods.array,
        ArrayBuffer: methods.arrayBuffer,
        AsyncGenerator: methods.asyncGenerator,
        BigInt64Array: methods.arrayBuffer,
        BigUint64Array: methods.arrayBuffer,
        Blob: methods.blob,
        Boolean: copyPrimitive,
        DataView: methods.dataView,
        Date: methods.date,
        Error: methods.error,
        Float32Array: methods.arrayBuffer,
        Float64Array: methods.arrayBuffer,
        Generator: methods.generator,
        Int8Array: methods.arrayBuffer,
        Int16Array: methods.arrayBuffer,
        Int32Array: methods.arrayBuffer,
        Map: methods.map,
        Number: copyPrimitive,
        Object: methods.object,
        Promise: copySelf,
        RegExp: methods.regExp,
        Set: methods.set,
        SharedArrayBuffer: methods.arrayBuffer,
        String: strict ? copyStringStrict : copyPrimitiveWrapper,
        WeakMap: copySelf,
        WeakSet: copySelf,
        Uint8Array: methods.arrayBuffer,
        Uint8ClampedArray: methods.arrayBuffer,
        Uint16Array: methods.arrayBuffer,
        Uint32Array: methods.arrayBuffer
      });
    }
    function createCopier(options2 = {}) {
      const { createCache, copiers, maxDepth } = getOptions(options2);
      const { Array: copyArray2, Object: copyObject2 } = copiers;
      function copier(value, state) {
        state.prototype = state.Constructor = void 0;
        if (!value || typeof value !== "object") {
          return value;
        }
        if (state.cache.has(value)) {
          return state.cache.get(value);
        }
        if (++state.depth > maxDepth) {
          throw new MaxDepthExceededError(maxDepth);
        }
        state.prototype = Object.getPrototypeOf(value);
        state.Constructor = state.prototype && state.prototype.constructor;
        let clone;
        if (!state.Constructor || state.Constructor === Object) {
          clone = copyObject2(value, state);
        } else if (Array.isArray(value)) {
          clone = copyArray2(value, state);
        } else {
          const tagSpecificCopier = copiers[getTag(value)];
          if (tagSpecificCopier) {
            clone = tagSpecificCopier(value, state);
          } else {
            clone = typeof value.then === "function" ? value : copyObject2(value, state);
          }
        }
        --state.depth;
        return clone;
      }
      return function copy2(value) {
        return copier(value, {
          Constructor: void 0,
          cache: createCache(),
          copier,
          depth: 0,
          prototype: void 0
        });
      };
    }
    var copyStrict = createCopier({ strict: true });
    var copy = createCopier();
    exports2.MaxDepthExceededError = MaxDepthExceededError;
    exports2.copy = copy;
    exports2.copyStrict = copyStrict;
    exports2.createCopier = createCopier;
  }
});

// node_modules/pino-pretty/lib/utils/filter-log.js
var require_filter_log = __commonJS({
  "node_modules/pino-pretty/lib/utils/filter-log.js"(exports2, module2) {
    "use strict";
    module2.exports = filterLog;
    var { createCopier } = require_cjs2();
    var fastCopy = createCopier({});
    var deleteLogProperty = require_delete_log_property();
    var getPropertyValue = require_get_property_value();
    var splitPropertyKey = require_split_property_key();
    function hasLogProperty(log, property) {
      const props = splitPropertyKey(property);
      if (props.length === 0) {
        return false;
      }
      let current = log;
      for (const prop of props) {
        if (current === null || typeof current !== "object" || !Object.prototype.hasOwnProperty.call(current, prop)) {
          return false;
        }
        current = current[prop];
      }
      return true;
    }
    function setLogProperty(log, property, value) {
      const props = splitPropertyKey(property);
      const last = props.pop();
      let current = log;
      for (const prop of props) {
        if (current[prop] === null || typeof current[prop] !== "object") {
          current[prop] = {};
        }
        current = current[prop];
      }
      current[last] = value;
    }
    function filterLog({ log, context }) {
      const { ignoreKeys, includeKeys } = context;
      const logCopy = fastCopy(log);
      if (includeKeys) {
        const logIncluded = {};
        includeKeys.forEach((key) => {
          if (hasLogProperty(logCopy, key)) {
            setLogProperty(logIncluded, key, getPropertyValue(logCopy, key));
          }
        });
        return logIncluded;
      }
      ignoreKeys.forEach((ignoreKey) => {
        deleteLogProperty(logCopy, ignoreKey);
      });
      return logCopy;
    }
  }
});

// node_modules/dateformat/lib/dateformat.js
var require_dateformat = __commonJS({
  "node_modules/dateformat/lib/dateformat.js"(exports2, module2) {
    "use strict";
    function _typeof(obj) {
      "@babel/helpers - typeof";
      if (typeof Symbol === "function" && typeof Symbol.iterator === "symbol") {
        _typeof = function _typeof2(obj2) {
          return typeof obj2;
        };
      } else {
        _typeof = function _typeof2(obj2) {
          return obj2 && typeof Symbol === "function" && obj2.constructor === Symbol && obj2 !== Symbol.prototype ? "symbol" : typeof obj2;
        };
      }
      return _typeof(obj);
    }
    (function(global2) {
      var _arguments = arguments;
      var dateFormat = /* @__PURE__ */ (function() {
        var token = /d{1,4}|D{3,4}|m{1,4}|yy(?:yy)?|([HhMsTt])\1?|W{1,2}|[LlopSZN]|"[^"]*"|'[^']*'/g;
        var timezone = /\b(?:[PMCEA][SDP]T|(?:Pacific|Mountain|Central|Eastern|Atlantic) (?:Standard|Daylight|Prevailing) Time|(?:GMT|UTC)(?:[-+]\d{4})?)\b/g;
        var timezoneClip = /[^-+\dA-Z]/g;
        return function(date, mask2, utc, gmt) {
          if (_arguments.length === 1 && kindOf(date) === "string" && !/\d/.test(date)) {
            mask2 = date;
            date = void 0;
          }
          date = date || date === 0 ? date : /* @__PURE__ */ new Date();
          if (!(date instanceof Date)) {
            date = new Date(date);
          }
          if (isNaN(date)) {
            throw TypeError("Invalid date");
          }
          mask2 = String(dateFormat.masks[mask2] || mask2 || dateFormat.masks["default"]);
          var maskSlice = mask2.slice(0, 4);
          if (maskSlice === "UTC:" || maskSlice === "GMT:") {
            mask2 = mask2.slice(4);
            utc = true;
            if (maskSlice === "GMT:") {
              gmt = true;
            }
          }
          var _ = function _2() {
            return utc ? "getUTC" : "get";
          };
          var _d = function d() {
            return date[_() + "Date"]();
          };
          var D = function D2() {
            return date[_() + "Day"]();
          };
          var _m = function m() {
            return date[_() + "Month"]();
          };
          var y = function y2() {
            return date[_() + "FullYear"]();
          };
          var _H = function H() {
            return date[_() + "Hours"]();
          };
          var _M = function M() {
            return date[_() + "Minutes"]();
          };
          var _s = function s2() {
            return date[_() + "Seconds"]();
          };
          var _L = function L() {
            return date[_() + "Milliseconds"]();
          };
          var _o = function o() {
            return utc ? 0 : date.getTimezoneOffset();
          };
          var _W = function W() {
            return getWeek(date);
          };
          var _N = function N() {
            return getDayOfWeek(date);
          };
          var flags = { d: function d() {
            return _d();
          }, dd: function dd() {
            return pad(_d());
          }, ddd: function ddd() {
            return dateFormat.i18n.dayNames[D()];
          }, DDD: function DDD() {
            return getDayName({ y: y(), m: _m(), d: _d(), _: _(), dayName: dateFormat.i18n.dayNames[D()], short: true });
          }, dddd: function dddd() {
            return dateFormat.i18n.dayNames[D() + 7];
          }, DDDD: function DDDD() {
            return getDayName({ y: y(), m: _m(), d: _d(), _: _(), dayName: dateFormat.i18n.dayNames[D() + 7] });
          }, m: function m() {
            return _m() + 1;
          }, mm: function mm() {
            return pad(_m() + 1);
          }, mmm: function mmm() {
            return dateFormat.i18n.monthNames[_m()];
          }, mmmm: function mmmm() {
            return dateFormat.i18n.monthNames[_m() + 12];
          }, yy: function yy() {
            return String(y()).slice(2);
          }, yyyy: function yyyy() {
            return pad(y(), 4);
          }, h: function h() {
            return _H() % 12 || 12;
          }, hh: function hh() {
            return pad(_H() % 12 || 12);
          }, H: function H() {
            return _H();
          }, HH: function HH() {
            return pad(_H());
          }, M: function M() {
            return _M();
          }, MM: function MM() {
            return pad(_M());
          }, s: function s2() {
            return _s();
          }, ss: function ss() {
            return pad(_s());
          }, l: function l() {
            return pad(_L(), 3);
          }, L: function L() {
            return pad(Math.floor(_L() / 10));
          }, t: function t() {
            return _H() < 12 ? dateFormat.i18n.timeNames[0] : dateFormat.i18n.timeNames[1];
          }, tt: function tt() {
            return _H() < 12 ? dateFormat.i18n.timeNames[2] : dateFormat.i18n.timeNames[3];
          }, T: function T() {
            return _H() < 12 ? dateFormat.i18n.timeNames[4] : dateFormat.i18n.timeNames[5];
          }, TT: function TT() {
            return _H() < 12 ? dateFormat.i18n.timeNames[6] : dateFormat.i18n.timeNames[7];
          }, Z: function Z() {
            return gmt ? "GMT" : utc ? "UTC" : (String(date).match(timezone) || [""]).pop().replace(timezoneClip, "").replace(/GMT\+0000/g, "UTC");
          }, o: function o() {
            return (_o() > 0 ? "-" : "+") + pad(Math.floor(Math.abs(_o()) / 60) * 100 + Math.abs(_o()) % 60, 4);
          }, p: function p() {
            return (_o() > 0 ? "-" : "+") + pad(Math.floor(Math.abs(_o()) / 60), 2) + ":" + pad(Math.floor(Math.abs(_o()) % 60), 2);
          }, S: function S() {
            return ["th", "st", "nd", "rd"][_d() % 10 > 3 ? 0 : (_d() % 100 - _d() % 10 != 10) * _d() % 10];
          }, W: function W() {
            return _W();
          }, WW: function WW() {
            return pad(_W());
          }, N: function N() {
            return _N();
          } };
          return mask2.replace(token, function(match) {
            if (match in flags) {
              return flags[match]();
            }
            return match.slice(1, match.length - 1);
          });
        };
      })();
      dateFormat.masks = { default: "ddd mmm dd yyyy HH:MM:ss", shortDate: "m/d/yy", paddedShortDate: "mm/dd/yyyy", mediumDate: "mmm d, yyyy", longDate: "mmmm d, yyyy", fullDate: "dddd, mmmm d, yyyy", shortTime: "h:MM TT", mediumTime: "h:MM:ss TT", longTime: "h:MM:ss TT Z", isoDate: "yyyy-mm-dd", isoTime: "HH:MM:ss", isoDateTime: "yyyy-mm-dd'T'HH:MM:sso", isoUtcDateTime: "UTC:yyyy-mm-dd'T'HH:MM:ss'Z'", expiresHeaderFormat: "ddd, dd mmm yyyy HH:MM:ss Z" };
      dateFormat.i18n = { dayNames: ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"], monthNames: ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"], timeNames: ["a", "p", "am", "pm", "A", "P", "AM", "PM"] };
      var pad = function pad2(val, len) {
        val = String(val);
        len = len || 2;
        while (val.length < len) {
          val = "0" + val;
        }
        return val;
      };
      var getDayName = function getDayName2(_ref) {
        var y = _ref.y, m = _ref.m, d = _ref.d, _ = _ref._, dayName = _ref.dayName, _ref$short = _ref["short"], _short = _ref$short === void 0 ? false : _ref$short;
        var today = /* @__PURE__ */ new Date();
        var yesterday = /* @__PURE__ */ new Date();
        yesterday.setDate(yesterday[_ + "Date"]() - 1);
        var tomorrow = /* @__PURE__ */ new Date();
        tomorrow.setDate(tomorrow[_ + "Date"]() + 1);
        var today_d = function today_d2() {
          return today[_ + "Date"]();
        };
        var today_m = function today_m2() {
          return today[_ + "Month"]();
        };
        var today_y = function today_y2() {
          return today[_ + "FullYear"]();
        };
        var yesterday_d = function yesterday_d2() {
          return yesterday[_ + "Date"]();
        };
        var yesterday_m = function yesterday_m2() {
          return yesterday[_ + "Month"]();
        };
        var yesterday_y = function yesterday_y2() {
          return yesterday[_ + "FullYear"]();
        };
        var tomorrow_d = function tomorrow_d2() {
          return tomorrow[_ + "Date"]();
        };
        var tomorrow_m = function tomorrow_m2() {
          return tomorrow[_ + "Month"]();
        };
        var tomorrow_y = function tomorrow_y2() {
          return tomorrow[_ + "FullYear"]();
        };
        if (today_y() === y && today_m() === m && today_d() === d) {
          return _short ? "Tdy" : "Today";
        } else if (yesterday_y() === y && yesterday_m() === m && yesterday_d() === d) {
          return _short ? "Ysd" : "Yesterday";
        } else if (tomorrow_y() === y && tomorrow_m() === m && tomorrow_d() === d) {
          return _short ? "Tmw" : "Tomorrow";
        }
        return dayName;
      };
      var getWeek = function getWeek2(date) {
        var targetThursday = new Date(date.getFullYear(), date.getMonth(), date.getDate());
        targetThursday.setDate(targetThursday.getDate() - (targetThursday.getDay() + 6) % 7 + 3);
        var firstThursday = new Date(targetThursday.getFullYear(), 0, 4);
        firstThursday.setDate(firstThursday.getDate() - (firstThursday.getDay() + 6) % 7 + 3);
        var ds = targetThursday.getTimezoneOffset() - firstThursday.getTimezoneOffset();
        targetThursday.setHours(targetThursday.getHours() - ds);
        var weekDiff = (targetThursday - firstThursday) / (864e5 * 7);
        return 1 + Math.floor(weekDiff);
      };
      var getDayOfWeek = function getDayOfWeek2(date) {
        var dow = date.getDay();
        if (dow === 0) {
          dow = 7;
        }
        return dow;
      };
      var kindOf = function kindOf2(val) {
        if (val === null) {
          return "null";
        }
        if (val === void 0) {
          return "undefined";
        }
        if (_typeof(val) !== "object") {
          return _typeof(val);
        }
        if (Array.isArray(val)) {
          return "array";
        }
        return {}.toString.call(val).slice(8, -1).toLowerCase();
      };
      if (typeof define === "function" && define.amd) {
        define(function() {
          return dateFormat;
        });
      } else if ((typeof exports2 === "undefined" ? "undefined" : _typeof(exports2)) === "object") {
        module2.exports = dateFormat;
      } else {
        global2.dateFormat = dateFormat;
      }
    })(void 0);
  }
});

// node_modules/pino-pretty/lib/utils/format-time.js
var require_format_time = __commonJS({
  "node_modules/pino-pretty/lib/utils/format-time.js"(exports2, module2) {
    "use strict";
    module2.exports = formatTime;
    var {
      DATE_FORMAT,
      DATE_FORMAT_SIMPLE
    } = require_constants2();
    var dateformat = require_dateformat();
    var createDate = require_create_date();
    var isValidDate = require_is_valid_date();
    function formatTime(epoch, translateTime = false) {
      if (translateTime === false) {
        return epoch;
      }
      const instant = createDate(epoch);
      if (!isValidDate(instant)) {
        return epoch;
      }
      if (translateTime === true) {
        return dateformat(instant, DATE_FORMAT_SIMPLE);
      }
      const upperFormat = translateTime.toUpperCase();
      if (upperFormat === "SYS:STANDARD") {
        return dateformat(instant, DATE_FORMAT);
      }
      const prefix = upperFormat.substr(0, 4);
      if (prefix === "SYS:" || prefix === "UTC:") {
        if (prefix === "UTC:") {
          return dateformat(instant, translateTime);
        }
        return dateformat(instant, translateTime.slice(4));
      }
      return dateformat(instant, `UTC:${translateTime}`);
    }
  }
});

// node_modules/pino-pretty/lib/utils/handle-custom-levels-names-opts.js
var require_handle_custom_levels_names_opts = __commonJS({
  "node_modules/pino-pretty/lib/utils/handle-custom-levels-names-opts.js"(exports2, module2) {
    "use strict";
    module2.exports = handleCustomLevelsNamesOpts;
    function handleCustomLevelsNamesOpts(cLevels) {
      if (!cLevels) return {};
      if (typeof cLevels === "string") {
        return cLevels.split(",").reduce((agg, value, idx) => {
          const [levelName, levelNum = idx] = value.split(":");
          agg[levelName.toLowerCase()] = levelNum;
          return agg;
        }, {});
      } else if (Object.prototype.toString.call(cLevels) === "[object Object]") {
        return Object.keys(cLevels).reduce((agg, levelName) => {
          agg[levelName.toLowerCase()] = cLevels[levelName];
          return agg;
        }, {});
      } else {
        return {};
      }
    }
  }
});

// node_modules/pino-pretty/lib/utils/handle-custom-levels-opts.js
var require_handle_custom_levels_opts = __commonJS({
  "node_modules/pino-pretty/lib/utils/handle-custom-levels-opts.js"(exports2, module2) {
    "use strict";
    module2.exports = handleCustomLevelsOpts;
    function handleCustomLevelsOpts(cLevels) {
      if (!cLevels) return {};
      if (typeof cLevels === "string") {
        return cLevels.split(",").reduce(
          (agg, value, idx) => {
            const [levelName, levelNum = idx] = value.split(":");
            agg[levelNum] = levelName.toUpperCase();
            return agg;
          },
          { default: "USERLVL" }
        );
      } else if (Object.prototype.toString.call(cLevels) === "[object Object]") {
        return Object.keys(cLevels).reduce((agg, levelName) => {
          agg[cLevels[levelName]] = levelName.toUpperCase();
          return agg;
        }, { default: "USERLVL" });
      } else {
        return {};
      }
    }
  }
});

// node_modules/pino-pretty/lib/utils/interpret-conditionals.js
var require_interpret_conditionals = __commonJS({
  "node_modules/pino-pretty/lib/utils/interpret-conditionals.js"(exports2, module2) {
    "use strict";
    module2.exports = interpretConditionals;
    var getPropertyValue = require_get_property_value();
    function interpretConditionals(messageFormat, log) {
      messageFormat = messageFormat.replace(/{if (.*?)}([\s\S]*?){end}/g, replacer);
      messageFormat = messageFormat.replace(/{if (.*?)}/g, "");
      messageFormat = messageFormat.replace(/{end}/g, "");
      messageFormat = messageFormat.replace(/[^\S\r\n]+/g, " ");
      messageFormat = messageFormat.replace(/\n[^\S\r\n]*\n/g, "\n");
      return messageFormat.trim();
      function replacer(_, key, value) {
        const propertyValue = getPropertyValue(log, key);
        if (propertyValue && value.includes(key)) {
          return value.replace(new RegExp("{" + key + "}", "g"), propertyValue);
        } else {
          return "";
        }
      }
    }
  }
});

// node_modules/pino-pretty/lib/utils/is-object.js
var require_is_object = __commonJS({
  "node_modules/pino-pretty/lib/utils/is-object.js"(exports2, module2) {
    "use strict";
    module2.exports = isObject;
    function isObject(input) {
      return Object.prototype.toString.apply(input) === "[object Object]";
    }
  }
});

// node_modules/pino-pretty/lib/utils/join-lines-with-indentation.js
var require_join_lines_with_indentation = __commonJS({
  "node_modules/pino-pretty/lib/utils/join-lines-with-indentation.js"(exports2, module2) {
    "use strict";
    module2.exports = joinLinesWithIndentation;
    function joinLinesWithIndentation({ input, ident = "    ", eol = "\n" }) {
      const lines = input.split(/\r?\n/);
      for (let i = 1; i < lines.length; i += 1) {
        lines[i] = ident + lines[i];
      }
      return lines.join(eol);
    }
  }
});

// node_modules/pino-pretty/lib/utils/parse-factory-options.js
var require_parse_factory_options = __commonJS({
  "node_modules/pino-pretty/lib/utils/parse-factory-options.js"(exports2, module2) {
    "use strict";
    module2.exports = parseFactoryOptions;
    var {
      LEVEL_NAMES
    } = require_constants2();
    var colors = require_colors();
    var handleCustomLevelsOpts = require_handle_custom_levels_opts();
    var handleCustomLevelsNamesOpts = require_handle_custom_levels_names_opts();
    var handleLevelLabelData = require_get_level_label_data();
    function parseFactoryOptions(options2) {
      const EOL = options2.crlf ? "\r\n" : "\n";
      const IDENT = "    ";
      const {
        customPrettifiers,
        errorLikeObjectKeys,
        hideObject,
        levelFirst,
        levelKey,
        levelLabel,
        messageFormat,
        messageKey,
        minimumLevel,
        singleLine,
        timestampKey,
        translateTime
      } = options2;
      const errorProps = options2.errorProps.split(",");
      const useOnlyCustomProps = options2.useOnlyCustomProps;
      const customLevels = handleCustomLevelsOpts(options2.customLevels);
      const customLevelNames = handleCustomLevelsNamesOpts(options2.customLevels);
      const getLevelLabelData = handleLevelLabelData(useOnlyCustomProps, customLevels, customLevelNames);
      let customColors;
      if (options2.customColors) {
        if (typeof options2.customColors === "string") {
          customColors = options2.customColors.split(",").reduce((agg, value) => {
            const [level, color] = value.split(":");
            const condition = useOnlyCustomProps ? options2.customLevels : customLevelNames[level] !== void 0;
            const levelNum = condition ? customLevelNames[level] : LEVEL_NAMES[level];
            const colorIdx = levelNum !== void 0 ? levelNum : level;
            agg.push([colorIdx, color]);
            return agg;
          }, []);
        } else if (typeof options2.customColors === "object") {
          customColors = Object.keys(options2.customColors).reduce((agg, value) => {
            const [level, color] = [value, options2.customColors[value]];
            const condition = useOnlyCustomProps ? options2.customLevels : customLevelNames[level] !== void 0;
            const levelNum = condition ? customLevelNames[level] : LEVEL_NAMES[level];
            const colorIdx = levelNum !== void 0 ? levelNum : level;
            agg.push([colorIdx, color]);
            return agg;
          }, []);
        } else {
          throw new Error("options.customColors must be of type string or object.");
        }
      }
      const customProperties = { customLevels, customLevelNames };
      if (useOnlyCustomProps === true && !options2.customLevels) {
        customProperties.customLevels = void 0;
        customProperties.customLevelNames = void 0;
      }
      const includeKeys = options2.include !== void 0 ? new Set(options2.include.split(",")) : void 0;
      const ignoreKeys = !includeKeys && options2.ignore ? new Set(options2.ignore.split(",")) : void 0;
      const colorizer = colors(options2.colorize, customColors, useOnlyCustomProps);
      const objectColorizer = options2.colorizeObjects ? colorizer : colors(false, [], false);
      return {
        EOL,
        IDENT,
        colorizer,
        customColors,
        customLevelNames,
        customLevels,
        customPrettifiers,
        customProperties,
        errorLikeObjectKeys,
        errorProps,
        getLevelLabelData,
        hideObject,
        ignoreKeys,
        includeKeys,
        levelFirst,
        levelKey,
        levelLabel,
        messageFormat,
        messageKey,
        minimumLevel,
        objectColorizer,
        singleLine,
        timestampKey,
        translateTime,
        useOnlyCustomProps
      };
    }
  }
});

// node_modules/fast-safe-stringify/index.js
var require_fast_safe_stringify = __commonJS({
  "node_modules/fast-safe-stringify/index.js"(exports2, module2) {
    module2.exports = stringify3;
    stringify3.default = stringify3;
    stringify3.stable = deterministicStringify;
    stringify3.stableStringify = deterministicStringify;
    var LIMIT_REPLACE_NODE = "[...]";
    var CIRCULAR_REPLACE_NODE = "[Circular]";
    var arr = [];
    var replacerStack = [];
    function defaultOptions2() {
      return {
        depthLimit: Number.MAX_SAFE_INTEGER,
        edgesLimit: Number.MAX_SAFE_INTEGER
      };
    }
    function stringify3(obj, replacer, spacer, options2) {
      if (typeof options2 === "undefined") {
        options2 = defaultOptions2();
      }
      decirc(obj, "", 0, [], void 0, 0, options2);
      var res;
      try {
        if (replacerStack.length === 0) {
          res = JSON.stringify(obj, replacer, spacer);
        } else {
          res = JSON.stringify(obj, replaceGetterValues(replacer), spacer);
        }
      } catch (_) {
        return JSON.stringify("[unable to serialize, circular reference is too complex to analyze]");
      } finally {
        while (arr.length !== 0) {
          var part = arr.pop();
          if (part.length === 4) {
            Object.defineProperty(part[0], part[1], part[3]);
          } else {
            part[0][part[1]] = part[2];
          }
        }
      }
      return res;
    }
    function setReplace(replace, val, k, parent) {
      var propertyDescriptor = Object.getOwnPropertyDescriptor(parent, k);
      if (propertyDescriptor.get !== void 0) {
        if (propertyDescriptor.configurable) {
          Object.defineProperty(parent, k, { value: replace });
          arr.push([parent, k, val, propertyDescriptor]);
        } else {
          replacerStack.push([val, k, replace]);
        }
      } else {
        parent[k] = replace;
        arr.push([parent, k, val]);
      }
    }
    function decirc(val, k, edgeIndex, stack, parent, depth, options2) {
      depth += 1;
      var i;
      if (typeof val === "object" && val !== null) {
        for (i = 0; i < stack.length; i++) {
          if (stack[i] === val) {
            setReplace(CIRCULAR_REPLACE_NODE, val, k, parent);
            return;
          }
        }
        if (typeof options2.depthLimit !== "undefined" && depth > options2.depthLimit) {
          setReplace(LIMIT_REPLACE_NODE, val, k, parent);
          return;
        }
        if (typeof options2.edgesLimit !== "undefined" && edgeIndex + 1 > options2.edgesLimit) {
          setReplace(LIMIT_REPLACE_NODE, val, k, parent);
          return;
        }
        stack.push(val);
        if (Array.isArray(val)) {
          for (i = 0; i < val.length; i++) {
            decirc(val[i], i, i, stack, val, depth, options2);
          }
        } else {
          var keys = Object.keys(val);
          for (i = 0; i < keys.length; i++) {
            var key = keys[i];
            decirc(val[key], key, i, stack, val, depth, options2);
          }
        }
        stack.pop();
      }
    }
    function compareFunction(a, b) {
      if (a < b) {
        return -1;
      }
      if (a > b) {
        return 1;
      }
      return 0;
    }
    function deterministicStringify(obj, replacer, spacer, options2) {
      if (typeof options2 === "undefined") {
        options2 = defaultOptions2();
      }
      var tmp = deterministicDecirc(obj, "", 0, [], void 0, 0, options2) || obj;
      var res;
      try {
        if (replacerStack.length === 0) {
          res = JSON.stringify(tmp, replacer, spacer);
        } else {
          res = JSON.stringify(tmp, replaceGetterValues(replacer), spacer);
        }
      } catch (_) {
        return JSON.stringify("[unable to serialize, circular reference is too complex to analyze]");
      } finally {
        while (arr.length !== 0) {
          var part = arr.pop();
          if (part.length === 4) {
            Object.defineProperty(part[0], part[1], part[3]);
          } else {
            part[0][part[1]] = part[2];
          }
        }
      }
      return res;
    }
    function deterministicDecirc(val, k, edgeIndex, stack, parent, depth, options2) {
      depth += 1;
      var i;
      if (typeof val === "object" && val !== null) {
        for (i = 0; i < stack.length; i++) {
          if (stack[i] === val) {
            setReplace(CIRCULAR_REPLACE_NODE, val, k, parent);
            return;
          }
        }
        try {
          if (typeof val.toJSON === "function") {
            return;
          }
        } catch (_) {
          return;
        }
        if (typeof options2.depthLimit !== "undefined" && depth > options2.depthLimit) {
          setReplace(LIMIT_REPLACE_NODE, val, k, parent);
          return;
        }
        if (typeof options2.edgesLimit !== "undefined" && edgeIndex + 1 > options2.edgesLimit) {
          setReplace(LIMIT_REPLACE_NODE, val, k, parent);
          return;
        }
        stack.push(val);
        if (Array.isArray(val)) {
          for (i = 0; i < val.length; i++) {
            deterministicDecirc(val[i], i, i, stack, val, depth, options2);
          }
        } else {
          var tmp = {};
          var keys = Object.keys(val).sort(compareFunction);
          for (i = 0; i < keys.length; i++) {
            var key = keys[i];
            deterministicDecirc(val[key], key, i, stack, val, depth, options2);
            tmp[key] = val[key];
          }
          if (typeof parent !== "undefined") {
            arr.push([parent, k, val]);
            parent[k] = tmp;
          } else {
            return tmp;
          }
        }
        stack.pop();
      }
    }
    function replaceGetterValues(replacer) {
      replacer = typeof replacer !== "undefined" ? replacer : function(k, v) {
        return v;
      };
      return function(key, val) {
        if (replacerStack.length > 0) {
          for (var i = 0; i < replacerStack.length; i++) {
            var part = replacerStack[i];
            if (part[1] === key && part[0] === val) {
              val = part[2];
              replacerStack.splice(i, 1);
              break;
            }
          }
        }
        return replacer.call(this, key, val);
      };
    }
  }
});

// node_modules/pino-pretty/lib/utils/strip-unsafe-control-chars.js
var require_strip_unsafe_control_chars = __commonJS({
  "node_modules/pino-pretty/lib/utils/strip-unsafe-control-chars.js"(exports2, module2) {
    "use strict";
    module2.exports = stripUnsafeControlChars;
    var unsafeControlChars = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;
    function stripUnsafeControlChars(input) {
      return String(input).replace(unsafeControlChars, "");
    }
  }
});

// node_modules/pino-pretty/lib/utils/prettify-error.js
var require_prettify_error = __commonJS({
  "node_modules/pino-pretty/lib/utils/prettify-error.js"(exports2, module2) {
    "use strict";
    module2.exports = prettifyError;
    var joinLinesWithIndentation = require_join_lines_with_indentation();
    var stripUnsafeControlChars = require_strip_unsafe_control_chars();
    function prettifyError({ keyName, lines, eol, ident, sanitizeStack = true }) {
      let result = "";
      const joinedLines = joinLinesWithIndentation({ input: lines, ident, eol });
      const safeKeyName = stripUnsafeControlChars(keyName);
      const splitLines = `${ident}${safeKeyName}: ${joinedLines}${eol}`.split(eol);
      for (let j = 0; j < splitLines.length; j += 1) {
        if (j !== 0) result += eol;
        const line = splitLines[j];
        if (/^\s*"stack"/.test(line)) {
          const matches = /^(\s*"stack":)\s*(".*"),?$/.exec(line);
          if (matches && matches.length === 3) {
            const indentSize = /^\s*/.exec(line)[0].length + 4;
            const indentation = " ".repeat(indentSize);
            const stackMessage = matches[2];
            const parsedStack = JSON.parse(stackMessage);
            const stack = sanitizeStack ? stripUnsafeControlChars(parsedStack) : parsedStack;
            result += matches[1] + eol + indentation + stack.replace(/\n/g, eol + indentation);
          } else {
            result += line;
          }
        } else {
          result += line;
        }
      }
      return result;
    }
  }
});

// node_modules/pino-pretty/lib/utils/prettify-object.js
var require_prettify_object = __commonJS({
  "node_modules/pino-pretty/lib/utils/prettify-object.js"(exports2, module2) {
    "use strict";
    module2.exports = prettifyObject;
    var {
      LOGGER_KEYS
    } = require_constants2();
    var stringifySafe = require_fast_safe_stringify();
    var joinLinesWithIndentation = require_join_lines_with_indentation();
    var prettifyError = require_prettify_error();
    var stripUnsafeControlChars = require_strip_unsafe_control_chars();
    function prettifyObject({
      log,
      excludeLoggerKeys = true,
      skipKeys = [],
      context
    }) {
      const {
        EOL: eol,
        IDENT: ident,
        customPrettifiers,
        errorLikeObjectKeys: errorLikeKeys,
        objectColorizer,
        singleLine,
        colorizer
      } = context;
      const keysToIgnore = [].concat(skipKeys);
      if (excludeLoggerKeys === true) Array.prototype.push.apply(keysToIgnore, LOGGER_KEYS);
      let result = "";
      const { plain, errors } = Object.entries(log).reduce(({ plain: plain2, errors: errors2 }, [k, v]) => {
        if (keysToIgnore.includes(k) === false) {
          const pretty = typeof customPrettifiers[k] === "function" ? customPrettifiers[k](v, k, log, { colors: colorizer.colors }) : v;
          if (errorLikeKeys.includes(k)) {
            errors2[k] = pretty;
          } else {
            plain2[k] = pretty;
          }
        }
        return { plain: plain2, errors: errors2 };
      }, { plain: {}, errors: {} });
      if (singleLine) {
        if (Object.keys(plain).length > 0) {
          result += objectColorizer.greyMessage(stringifySafe(plain));
        }
        result += eol;
        result = result.replace(/\\\\/gi, "\\");
      } else {
        Object.entries(plain).forEach(([keyName, keyValue]) => {
          let lines = typeof customPrettifiers[keyName] === "function" ? keyValue : stringifySafe(keyValue, null, 2);
          if (lines === void 0) return;
          lines = lines.replace(/\\\\/gi, "\\");
          const joinedLines = joinLinesWithIndentation({ input: lines, ident, eol });
          const safeKeyName = stripUnsafeControlChars(keyName);
          result += `${ident}${objectColorizer.property(safeKeyName)}:${joinedLines.startsWith(eol) ? "" : " "}${joinedLines}${eol}`;
        });
      }
      Object.entries(errors).forEach(([keyName, keyValue]) => {
        const hasCustomPrettifier = typeof customPrettifiers[keyName] === "function";
        const lines = hasCustomPrettifier ? keyValue : stringifySafe(keyValue, null, 2);
        if (lines === void 0) return;
        result += prettifyError({ keyName, lines, eol, ident, sanitizeStack: !hasCustomPrettifier });
      });
      return result;
    }
  }
});

// node_modules/pino-pretty/lib/utils/prettify-error-log.js
var require_prettify_error_log = __commonJS({
  "node_modules/pino-pretty/lib/utils/prettify-error-log.js"(exports2, module2) {
    "use strict";
    module2.exports = prettifyErrorLog;
    var {
      LOGGER_KEYS
    } = require_constants2();
    var isObject = require_is_object();
    var joinLinesWithIndentation = require_join_lines_with_indentation();
    var prettifyObject = require_prettify_object();
    var stripUnsafeControlChars = require_strip_unsafe_control_chars();
    function prettifyErrorLog({ log, context }) {
      const {
        EOL: eol,
        IDENT: ident,
        errorProps: errorProperties,
        messageKey
      } = context;
      const stack = stripUnsafeControlChars(log.stack);
      const joinedLines = joinLinesWithIndentation({ input: stack, ident, eol });
      let result = `${ident}${joinedLines}${eol}`;
      if (errorProperties.length > 0) {
        const excludeProperties = LOGGER_KEYS.concat(messageKey, "type", "stack");
        let propertiesToPrint;
        if (errorProperties[0] === "*") {
          propertiesToPrint = Object.keys(log).filter((k) => excludeProperties.includes(k) === false);
        } else {
          propertiesToPrint = errorProperties.filter((k) => excludeProperties.includes(k) === false);
        }
        for (let i = 0; i < propertiesToPrint.length; i += 1) {
          const key = propertiesToPrint[i];
          if (key in log === false) continue;
          const safeKey = stripUnsafeControlChars(key);
          if (isObject(log[key])) {
            const prettifiedObject = prettifyObject({
              log: log[key],
              excludeLoggerKeys: false,
              context: {
                ...context,
                IDENT: ident + ident
              }
            });
            result = `${result}${ident}${safeKey}: {${eol}${prettifiedObject}${ident}}${eol}`;
            continue;
          }
          const value = stripUnsafeControlChars(log[key]);
          result = `${result}${ident}${safeKey}: ${value}${eol}`;
        }
      }
      return result;
    }
  }
});

// node_modules/pino-pretty/lib/utils/prettify-level.js
var require_prettify_level = __commonJS({
  "node_modules/pino-pretty/lib/utils/prettify-level.js"(exports2, module2) {
    "use strict";
    module2.exports = prettifyLevel;
    var getPropertyValue = require_get_property_value();
    function prettifyLevel({ log, context }) {
      const {
        colorizer,
        customLevels,
        customLevelNames,
        levelKey,
        getLevelLabelData
      } = context;
      const prettifier = context.customPrettifiers?.level;
      const output = getPropertyValue(log, levelKey);
      if (output === void 0) return void 0;
      const labelColorized = colorizer(output, { customLevels, customLevelNames });
      if (prettifier) {
        const [label] = getLevelLabelData(output);
        return prettifier(output, levelKey, log, { label, labelColorized, colors: colorizer.colors });
      }
      return labelColorized;
    }
  }
});

// node_modules/pino-pretty/lib/utils/prettify-message.js
var require_prettify_message = __commonJS({
  "node_modules/pino-pretty/lib/utils/prettify-message.js"(exports2, module2) {
    "use strict";
    module2.exports = prettifyMessage;
    var {
      LEVELS
    } = require_constants2();
    var getPropertyValue = require_get_property_value();
    var interpretConditionals = require_interpret_conditionals();
    var stripUnsafeControlChars = require_strip_unsafe_control_chars();
    function prettifyMessage({ log, context }) {
      const {
        colorizer,
        customLevels,
        levelKey,
        levelLabel,
        messageFormat,
        messageKey,
        useOnlyCustomProps
      } = context;
      if (messageFormat && typeof messageFormat === "string") {
        const parsedMessageFormat = interpretConditionals(messageFormat, log);
        const message = String(parsedMessageFormat).replace(
          /{([^{}]+)}/g,
          function(match, p1) {
            let level;
            if (p1 === levelLabel && (level = getPropertyValue(log, levelKey)) !== void 0) {
              const condition = useOnlyCustomProps ? customLevels === void 0 : customLevels[level] === void 0;
              return condition ? LEVELS[level] : customLevels[level];
            }
            const value = getPropertyValue(log, p1);
            return value !== void 0 ? value : "";
          }
        );
        return colorizer.message(stripUnsafeControlChars(message));
      }
      if (messageFormat && typeof messageFormat === "function") {
        const msg = messageFormat(log, messageKey, levelLabel, { colors: colorizer.colors });
        return colorizer.message(msg);
      }
      if (messageKey in log === false) return void 0;
      if (typeof log[messageKey] !== "string" && typeof log[messageKey] !== "number" && typeof log[messageKey] !== "boolean") return void 0;
      return colorizer.message(stripUnsafeControlChars(log[messageKey]));
    }
  }
});

// node_modules/pino-pretty/lib/utils/prettify-metadata.js
var require_prettify_metadata = __commonJS({
  "node_modules/pino-pretty/lib/utils/prettify-metadata.js"(exports2, module2) {
    "use strict";
    module2.exports = prettifyMetadata;
    var stripUnsafeControlChars = require_strip_unsafe_control_chars();
    function prettifyMetadata({ log, context }) {
      const { customPrettifiers: prettifiers, colorizer } = context;
      let line = "";
      if (log.name || log.pid || log.hostname) {
        line += "(";
        if (log.name) {
          line += prettifiers.name ? prettifiers.name(log.name, "name", log, { colors: colorizer.colors }) : stripUnsafeControlChars(log.name);
        }
        if (log.pid) {
          const prettyPid = prettifiers.pid ? prettifiers.pid(log.pid, "pid", log, { colors: colorizer.colors }) : stripUnsafeControlChars(log.pid);
          if (log.name && log.pid) {
            line += "/" + prettyPid;
          } else {
            line += prettyPid;
          }
        }
        if (log.hostname) {
          const prettyHostname = prettifiers.hostname ? prettifiers.hostname(log.hostname, "hostname", log, { colors: colorizer.colors }) : stripUnsafeControlChars(log.hostname);
          line += `${line === "(" ? "on" : " on"} ${prettyHostname}`;
        }
        line += ")";
      }
      if (log.caller) {
        const prettyCaller = prettifiers.caller ? prettifiers.caller(log.caller, "caller", log, { colors: colorizer.colors }) : stripUnsafeControlChars(log.caller);
        line += `${line === "" ? "" : " "}<${prettyCaller}>`;
      }
      if (line === "") {
        return void 0;
      } else {
        return line;
      }
    }
  }
});

// node_modules/pino-pretty/lib/utils/prettify-time.js
var require_prettify_time = __commonJS({
  "node_modules/pino-pretty/lib/utils/prettify-time.js"(exports2, module2) {
    "use strict";
    module2.exports = prettifyTime;
    var formatTime = require_format_time();
    var stripUnsafeControlChars = require_strip_unsafe_control_chars();
    function prettifyTime({ log, context }) {
      const {
        timestampKey,
        translateTime: translateFormat
      } = context;
      const prettifier = context.customPrettifiers?.time;
      let time = null;
      if (timestampKey in log) {
        time = log[timestampKey];
      } else if ("timestamp" in log) {
        time = log.timestamp;
      }
      if (time === null) return void 0;
      const output = translateFormat ? formatTime(time, translateFormat) : time;
      return prettifier ? prettifier(output) : `[${stripUnsafeControlChars(output)}]`;
    }
  }
});

// node_modules/pino-pretty/lib/utils/index.js
var require_utils = __commonJS({
  "node_modules/pino-pretty/lib/utils/index.js"(exports2, module2) {
    "use strict";
    module2.exports = {
      buildSafeSonicBoom: require_build_safe_sonic_boom(),
      createDate: require_create_date(),
      deleteLogProperty: require_delete_log_property(),
      filterLog: require_filter_log(),
      formatTime: require_format_time(),
      getPropertyValue: require_get_property_value(),
      handleCustomLevelsNamesOpts: require_handle_custom_levels_names_opts(),
      handleCustomLevelsOpts: require_handle_custom_levels_opts(),
      interpretConditionals: require_interpret_conditionals(),
      isObject: require_is_object(),
      isValidDate: require_is_valid_date(),
      joinLinesWithIndentation: require_join_lines_with_indentation(),
      noop: require_noop(),
      parseFactoryOptions: require_parse_factory_options(),
      prettifyErrorLog: require_prettify_error_log(),
      prettifyError: require_prettify_error(),
      prettifyLevel: require_prettify_level(),
      prettifyMessage: require_prettify_message(),
      prettifyMetadata: require_prettify_metadata(),
      prettifyObject: require_prettify_object(),
      prettifyTime: require_prettify_time(),
      splitPropertyKey: require_split_property_key(),
      stripUnsafeControlChars: require_strip_unsafe_control_chars(),
      getLevelLabelData: require_get_level_label_data()
    };
  }
});

// node_modules/secure-json-parse/index.js
var require_secure_json_parse = __commonJS({
  "node_modules/secure-json-parse/index.js"(exports2, module2) {
    "use strict";
    var hasBuffer = typeof Buffer !== "undefined";
    var suspectProtoRx = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;
    var suspectConstructorRx = /"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"\s*:/;
    function _parse(text, reviver, options2) {
      if (options2 == null) {
        if (reviver !== null && typeof reviver === "object") {
          options2 = reviver;
          reviver = void 0;
        }
      }
      if (hasBuffer && Buffer.isBuffer(text)) {
        text = text.toString();
      }
      if (text && text.charCodeAt(0) === 65279) {
        text = text.slice(1);
      }
      const obj = JSON.parse(text, reviver);
      if (obj === null || typeof obj !== "object") {
        return obj;
      }
      const protoAction = options2 && options2.protoAction || "error";
      const constructorAction = options2 && options2.constructorAction || "error";
      if (protoAction === "ignore" && constructorAction === "ignore") {
        return obj;
      }
      if (protoAction !== "ignore" && constructorAction !== "ignore") {
        if (suspectProtoRx.test(text) === false && suspectConstructorRx.test(text) === false) {
          return obj;
        }
      } else if (protoAction !== "ignore" && constructorAction === "ignore") {
        if (suspectProtoRx.test(text) === false) {
          return obj;
        }
      } else {
        if (suspectConstructorRx.test(text) === false) {
          return obj;
        }
      }
      return filter(obj, { protoAction, constructorAction, safe: options2 && options2.safe });
    }
    function filter(obj, { protoAction = "error", constructorAction = "error", safe } = {}) {
      let next = [obj];
      while (next.length) {
        const nodes = next;
        next = [];
        for (const node of nodes) {
          if (protoAction !== "ignore" && Object.prototype.hasOwnProperty.call(node, "__proto__")) {
            if (safe === true) {
              return null;
            } else if (protoAction === "error") {
              throw new SyntaxError("Object contains forbidden prototype property");
            }
            delete node.__proto__;
          }
          if (constructorAction !== "ignore" && Object.prototype.hasOwnProperty.call(node, "constructor") && node.constructor !== null && typeof node.constructor === "object" && Object.prototype.hasOwnProperty.call(node.constructor, "prototype")) {
            if (safe === true) {
              return null;
            } else if (constructorAction === "error") {
              throw new SyntaxError("Object contains forbidden prototype property");
            }
            delete node.constructor;
          }
          for (const key in node) {
            const value = node[key];
            if (value && typeof value === "object") {
              next.push(value);
            }
          }
        }
      }
      return obj;
    }
    function parse(text, reviver, options2) {
      const { stackTraceLimit } = Error;
      Error.stackTraceLimit = 0;
      try {
        return _parse(text, reviver, options2);
      } finally {
        Error.stackTraceLimit = stackTraceLimit;
      }
    }
    function safeParse(text, reviver) {
      const { stackTraceLimit } = Error;
      Error.stackTraceLimit = 0;
      let result;
      try {
        result = _parse(text, reviver, { safe: true });
      } catch {
        result = void 0;
      } finally {
        Error.stackTraceLimit = stackTraceLimit;
      }
      return result;
    }
    module2.exports = parse;
    module2.exports.default = parse;
    module2.exports.parse = parse;
    module2.exports.safeParse = safeParse;
    module2.exports.scan = filter;
  }
});

// node_modules/pino-pretty/lib/pretty.js
var require_pretty = __commonJS({
  "node_modules/pino-pretty/lib/pretty.js"(exports2, module2) {
    "use strict";
    module2.exports = pretty;
    var sjs = require_secure_json_parse();
    var isObject = require_is_object();
    var prettifyErrorLog = require_prettify_error_log();
    var prettifyLevel = require_prettify_level();
    var prettifyMessage = require_prettify_message();
    var prettifyMetadata = require_prettify_metadata();
    var prettifyObject = require_prettify_object();
    var prettifyTime = require_prettify_time();
    var filterLog = require_filter_log();
    var {
      LEVELS,
      LEVEL_KEY,
      LEVEL_NAMES
    } = require_constants2();
    var jsonParser = (input) => {
      try {
        return { value: sjs.parse(input, { protoAction: "remove" }) };
      } catch (err) {
        return { err };
      }
    };
    function pretty(inputData) {
      let log;
      if (!isObject(inputData)) {
        const parsed = jsonParser(inputData);
        if (parsed.err || !isObject(parsed.value)) {
          return inputData + this.EOL;
        }
        log = parsed.value;
      } else {
        log = inputData;
      }
      if (this.minimumLevel) {
        let condition;
        if (this.useOnlyCustomProps) {
          condition = this.customLevels;
        } else {
          condition = this.customLevelNames[this.minimumLevel] !== void 0;
        }
        let minimum;
        if (condition) {
          minimum = this.customLevelNames[this.minimumLevel];
        } else {
          minimum = LEVEL_NAMES[this.minimumLevel];
        }
        if (!minimum) {
          minimum = typeof this.minimumLevel === "string" ? LEVEL_NAMES[this.minimumLevel] : LEVEL_NAMES[LEVELS[this.minimumLevel].toLowerCase()];
        }
        const level = log[this.levelKey === void 0 ? LEVEL_KEY : this.levelKey];
        if (level < minimum) return;
      }
      const prettifiedMessage = prettifyMessage({ log, context: this.context });
      if (this.ignoreKeys || this.includeKeys) {
        log = filterLog({ log, context: this.context });
      }
      const prettifiedLevel = prettifyLevel({
        log,
        context: {
          ...this.context,
          // This is odd. The colorizer ends up relying on the value of
          // `customProperties` instead of the original `customLevels` and
          // `customLevelNames`.
          ...this.context.customProperties
        }
      });
      const prettifiedMetadata = prettifyMetadata({ log, context: this.context });
      const prettifiedTime = prettifyTime({ log, context: this.context });
      let line = "";
      if (this.levelFirst && prettifiedLevel) {
        line = `${prettifiedLevel}`;
      }
      if (prettifiedTime && line === "") {
        line = `${prettifiedTime}`;
      } else if (prettifiedTime) {
        line = `${line} ${prettifiedTime}`;
      }
      if (!this.levelFirst && prettifiedLevel) {
        if (line.length > 0) {
          line = `${line} ${prettifiedLevel}`;
        } else {
          line = prettifiedLevel;
        }
      }
      if (prettifiedMetadata) {
        if (line.length > 0) {
          line = `${line} ${prettifiedMetadata}:`;
        } else {
          line = prettifiedMetadata;
        }
      }
      if (line.endsWith(":") === false && line !== "") {
        line += ":";
      }
      if (prettifiedMessage !== void 0) {
        if (line.length > 0) {
          line = `${line} ${prettifiedMessage}`;
        } else {
          line = prettifiedMessage;
        }
      }
      if (line.length > 0 && !this.singleLine) {
        line += this.EOL;
      }
      if (log.type === "Error" && typeof log.stack === "string") {
        const prettifiedErrorLog = prettifyErrorLog({ log, context: this.context });
        if (this.singleLine) line += this.EOL;
        line += prettifiedErrorLog;
      } else if (this.hideObject === false) {
        const skipKeys = [
          this.messageKey,
          this.levelKey,
          this.timestampKey
        ].map((key) => key.replaceAll(/\\/g, "")).filter((key) => {
          return typeof log[key] === "string" || typeof log[key] === "number" || typeof log[key] === "boolean";
        });
        const prettifiedObject = prettifyObject({
          log,
          skipKeys,
          context: this.context
        });
        if (this.singleLine && !/^\s$/.test(prettifiedObject)) {
          line += " ";
        }
        line += prettifiedObject;
      }
      return line;
    }
  }
});

// node_modules/pino-pretty/index.js
var require_pino_pretty = __commonJS({
  "node_modules/pino-pretty/index.js"(exports2, module2) {
    "use strict";
    var { isColorSupported } = require_colorette();
    var pump = require_pump();
    var { Transform: Transform2 } = __require("node:stream");
    var abstractTransport = require_pino_abstract_transport();
    var colors = require_colors();
    var {
      ERROR_LIKE_KEYS,
      LEVEL_KEY,
      LEVEL_LABEL,
      MESSAGE_KEY,
      TIMESTAMP_KEY
    } = require_constants2();
    var {
      buildSafeSonicBoom,
      parseFactoryOptions
    } = require_utils();
    var pretty = require_pretty();
    var defaultOptions2 = {
      colorize: isColorSupported,
      colorizeObjects: true,
      crlf: false,
      customColors: null,
      customLevels: null,
      customPrettifiers: {},
      errorLikeObjectKeys: ERROR_LIKE_KEYS,
      errorProps: "",
      hideObject: false,
      ignore: "hostname",
      include: void 0,
      levelFirst: false,
      levelKey: LEVEL_KEY,
      levelLabel: LEVEL_LABEL,
      messageFormat: null,
      messageKey: MESSAGE_KEY,
      minimumLevel: void 0,
      singleLine: false,
      timestampKey: TIMESTAMP_KEY,
      translateTime: true,
      useOnlyCustomProps: true
    };
    function normalizeBoolean(value) {
      if (value === "true") return true;
      if (value === "false") return false;
      return value;
    }
    function normalizeBooleanOptions(options2) {
      const normalized = { ...options2 };
      const booleanOptions = [
        "colorize",
        "colorizeObjects",
        "crlf",
        "hideObject",
        "levelFirst",
        "singleLine",
        "useOnlyCustomProps"
      ];
      for (const key of booleanOptions) {
        if (key in normalized) {
          normalized[key] = normalizeBoolean(normalized[key]);
        }
      }
      if ("translateTime" in normalized && (normalized.translateTime === "true" || normalized.translateTime === "false")) {
        normalized.translateTime = normalizeBoolean(normalized.translateTime);
      }
      return normalized;
    }
    function prettyFactory2(options2) {
      const mergedOptions = Object.assign({}, defaultOptions2, options2);
      const normalizedOptions = normalizeBooleanOptions(mergedOptions);
      const context = parseFactoryOptions(normalizedOptions);
      return pretty.bind({ ...context, context });
    }
    function build(opts = {}) {
      let pretty2 = prettyFactory2(opts);
      let destination;
      return abstractTransport(function(source) {
        source.on("message", function pinoConfigListener(message) {
          if (!message || message.code !== "PINO_CONFIG") return;
          Object.assign(opts, {
            messageKey: message.config.messageKey,
            errorLikeObjectKeys: Array.from(/* @__PURE__ */ new Set([...opts.errorLikeObjectKeys || ERROR_LIKE_KEYS, message.config.errorKey])),
            customLevels: message.config.levels.values
          });
          pretty2 = prettyFactory2(opts);
          source.off("message", pinoConfigListener);
        });
        const stream = new Transform2({
          objectMode: true,
          autoDestroy: true,
          transform(chunk, enc, cb) {
            const line = pretty2(chunk);
            cb(null, line);
          }
        });
        if (typeof opts.destination === "object" && typeof opts.destination.write === "function") {
          destination = opts.destination;
        } else {
          destination = buildSafeSonicBoom({
            dest: opts.destination || 1,
            append: opts.append,
            mkdir: opts.mkdir,
            sync: opts.sync
            // by default sonic will be async
          });
        }
        source.on("unknown", function(line) {
          destination.write(line + "\n");
        });
        pump(source, stream, destination);
        return stream;
      }, {
        parse: "lines",
        close(err, cb) {
          destination.on("close", () => {
            cb(err);
          });
        }
      });
    }
    module2.exports = build;
    module2.exports.build = build;
    module2.exports.PinoPretty = build;
    module2.exports.prettyFactory = prettyFactory2;
    module2.exports.colorizerFactory = colors;
    module2.exports.isColorSupported = isColorSupported;
    module2.exports.default = build;
  }
});

// node_modules/bottleneck/lib/parser.js
var require_parser = __commonJS({
  "node_modules/bottleneck/lib/parser.js"(exports2) {
    "use strict";
    exports2.load = function(received, defaults, onto = {}) {
      var k, ref, v;
      for (k in defaults) {
        v = defaults[k];
        onto[k] = (ref = received[k]) != null ? ref : v;
      }
      return onto;
    };
    exports2.overwrite = function(received, defaults, onto = {}) {
      var k, v;
      for (k in received) {
        v = received[k];
        if (defaults[k] !== void 0) {
          onto[k] = v;
        }
      }
      return onto;
    };
  }
});

// node_modules/bottleneck/lib/DLList.js
var require_DLList = __commonJS({
  "node_modules/bottleneck/lib/DLList.js"(exports2, module2) {
    "use strict";
    var DLList;
    DLList = class DLList {
      constructor(incr, decr) {
        this.incr = incr;
        this.decr = decr;
        this._first = null;
        this._last = null;
        this.length = 0;
      }
      push(value) {
        var node;
        this.length++;
        if (typeof this.incr === "function") {
          this.incr();
        }
        node = {
          value,
          prev: this._last,
          next: null
        };
        if (this._last != null) {
          this._last.next = node;
          this._last = node;
        } else {
          this._first = this._last = node;
        }
        return void 0;
      }
      shift() {
        var value;
        if (this._first == null) {
          return;
        } else {
          this.length--;
          if (typeof this.decr === "function") {
            this.decr();
          }
        }
        value = this._first.value;
        if ((this._first = this._first.next) != null) {
          this._first.prev = null;
        } else {
          this._last = null;
        }
        return value;
      }
      first() {
        if (this._first != null) {
          return this._first.value;
        }
      }
      getArray() {
        var node, ref, results;
        node = this._first;
        results = [];
        while (node != null) {
          results.push((ref = node, node = node.next, ref.value));
        }
        return results;
      }
      forEachShift(cb) {
        var node;
        node = this.shift();
        while (node != null) {
          cb(node), node = this.shift();
        }
        return void 0;
      }
      debug() {
        var node, ref, ref1, ref2, results;
        node = this._first;
        results = [];
        while (node != null) {
          results.push((ref = node, node = node.next, {
            value: ref.value,
            prev: (ref1 = ref.prev) != null ? ref1.value : void 0,
            next: (ref2 = ref.next) != null ? ref2.value : void 0
          }));
        }
        return results;
      }
    };
    module2.exports = DLList;
  }
});

// node_modules/bottleneck/lib/Events.js
var require_Events = __commonJS({
  "node_modules/bottleneck/lib/Events.js"(exports2, module2) {
    "use strict";
    function asyncGeneratorStep2(gen, resolve, reject, _next, _throw, key, arg) {
      try {
        var info2 = gen[key](arg);
        var value = info2.value;
      } catch (error) {
        reject(error);
        return;
      }
      if (info2.done) {
        resolve(value);
      } else {
        Promise.resolve(value).then(_next, _throw);
      }
    }
    function _asyncToGenerator2(fn) {
      return function() {
        var self = this, args = arguments;
        return new Promise(function(resolve, reject) {
          var gen = fn.apply(self, args);
          function _next(value) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "next", value);
          }
          function _throw(err) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "throw", err);
          }
          _next(void 0);
        });
      };
    }
    var Events2;
    Events2 = class Events {
      constructor(instance) {
        this.instance = instance;
        this._events = {};
        if (this.instance.on != null || this.instance.once != null || this.instance.removeAllListeners != null) {
          throw new Error("An Emitter already exists for this object");
        }
        this.instance.on = (name, cb) => {
          return this._addListener(name, "many", cb);
        };
        this.instance.once = (name, cb) => {
          return this._addListener(name, "once", cb);
        };
        this.instance.removeAllListeners = (name = null) => {
          if (name != null) {
            return delete this._events[name];
          } else {
            return this._events = {};
          }
        };
      }
      _addListener(name, status, cb) {
        var base;
        if ((base = this._events)[name] == null) {
          base[name] = [];
        }
        this._events[name].push({
          cb,
          status
        });
        return this.instance;
      }
      listenerCount(name) {
        if (this._events[name] != null) {
          return this._events[name].length;
        } else {
          return 0;
        }
      }
      trigger(name, ...args) {
        var _this = this;
        return _asyncToGenerator2(function* () {
          var e, promises;
          try {
            if (name !== "debug") {
              _this.trigger("debug", `Event triggered: ${name}`, args);
            }
            if (_this._events[name] == null) {
              return;
            }
            _this._events[name] = _this._events[name].filter(function(listener) {
              return listener.status !== "none";
            });
            promises = _this._events[name].map(
              /* @__PURE__ */ (function() {
                var _ref = _asyncToGenerator2(function* (listener) {
                  var e2, returned;
                  if (listener.status === "none") {
                    return;
                  }
                  if (listener.status === "once") {
                    listener.status = "none";
                  }
                  try {
                    returned = typeof listener.cb === "function" ? listener.cb(...args) : void 0;
                    if (typeof (returned != null ? returned.then : void 0) === "function") {
                      return yield returned;
                    } else {
                      return returned;
                    }
                  } catch (error) {
                    e2 = error;
                    if (true) {
                      _this.trigger("error", e2);
                    }
                    return null;
                  }
                });
                return function(_x) {
                  return _ref.apply(this, arguments);
                };
              })()
            );
            return (yield Promise.all(promises)).find(function(x) {
              return x != null;
            });
          } catch (error) {
            e = error;
            if (true) {
              _this.trigger("error", e);
            }
            return null;
          }
        })();
      }
    };
    module2.exports = Events2;
  }
});

// node_modules/bottleneck/lib/Queues.js
var require_Queues = __commonJS({
  "node_modules/bottleneck/lib/Queues.js"(exports2, module2) {
    "use strict";
    var DLList;
    var Events2;
    var Queues;
    DLList = require_DLList();
    Events2 = require_Events();
    Queues = class Queues {
      constructor(num_priorities) {
        var i;
        this.Events = new Events2(this);
        this._length = 0;
        this._lists = function() {
          var j, ref, results;
          results = [];
          for (i = j = 1, ref = num_priorities; 1 <= ref ? j <= ref : j >= ref; i = 1 <= ref ? ++j : --j) {
            results.push(new DLList(() => {
              return this.incr();
            }, () => {
              return this.decr();
            }));
          }
          return results;
        }.call(this);
      }
      incr() {
        if (this._length++ === 0) {
          return this.Events.trigger("leftzero");
        }
      }
      decr() {
        if (--this._length === 0) {
          return this.Events.trigger("zero");
        }
      }
      push(job) {
        return this._lists[job.options.priority].push(job);
      }
      queued(priority) {
        if (priority != null) {
          return this._lists[priority].length;
        } else {
          return this._length;
        }
      }
      shiftAll(fn) {
        return this._lists.forEach(function(list) {
          return list.forEachShift(fn);
        });
      }
      getFirst(arr = this._lists) {
        var j, len, list;
        for (j = 0, len = arr.length; j < len; j++) {
          list = arr[j];
          if (list.length > 0) {
            return list;
          }
        }
        return [];
      }
      shiftLastFrom(priority) {
        return this.getFirst(this._lists.slice(priority).reverse()).shift();
      }
    };
    module2.exports = Queues;
  }
});

// node_modules/bottleneck/lib/BottleneckError.js
var require_BottleneckError = __commonJS({
  "node_modules/bottleneck/lib/BottleneckError.js"(exports2, module2) {
    "use strict";
    var BottleneckError;
    BottleneckError = class BottleneckError extends Error {
    };
    module2.exports = BottleneckError;
  }
});

// node_modules/bottleneck/lib/Job.js
var require_Job = __commonJS({
  "node_modules/bottleneck/lib/Job.js"(exports2, module2) {
    "use strict";
    function asyncGeneratorStep2(gen, resolve, reject, _next, _throw, key, arg) {
      try {
        var info2 = gen[key](arg);
        var value = info2.value;
      } catch (error) {
        reject(error);
        return;
      }
      if (info2.done) {
        resolve(value);
      } else {
        Promise.resolve(value).then(_next, _throw);
      }
    }
    function _asyncToGenerator2(fn) {
      return function() {
        var self = this, args = arguments;
        return new Promise(function(resolve, reject) {
          var gen = fn.apply(self, args);
          function _next(value) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "next", value);
          }
          function _throw(err) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "throw", err);
          }
          _next(void 0);
        });
      };
    }
    var BottleneckError;
    var DEFAULT_PRIORITY;
    var Job;
    var NUM_PRIORITIES;
    var parser2;
    NUM_PRIORITIES = 10;
    DEFAULT_PRIORITY = 5;
    parser2 = require_parser();
    BottleneckError = require_BottleneckError();
    Job = class Job {
      constructor(task2, args, options2, jobDefaults, rejectOnDrop, Events2, _states, Promise2) {
        this.task = task2;
        this.args = args;
        this.rejectOnDrop = rejectOnDrop;
        this.Events = Events2;
        this._states = _states;
        this.Promise = Promise2;
        this.options = parser2.load(options2, jobDefaults);
        this.options.priority = this._sanitizePriority(this.options.priority);
        if (this.options.id === jobDefaults.id) {
          this.options.id = `${this.options.id}-${this._randomIndex()}`;
        }
        this.promise = new this.Promise((_resolve2, _reject) => {
          this._resolve = _resolve2;
          this._reject = _reject;
        });
        this.retryCount = 0;
      }
      _sanitizePriority(priority) {
        var sProperty;
        sProperty = ~~priority !== priority ? DEFAULT_PRIORITY : priority;
        if (sProperty < 0) {
          return 0;
        } else if (sProperty > NUM_PRIORITIES - 1) {
          return NUM_PRIORITIES - 1;
        } else {
          return sProperty;
        }
      }
      _randomIndex() {
        return Math.random().toString(36).slice(2);
      }
      doDrop({
        error,
        message = "This job has been dropped by Bottleneck"
      } = {}) {
        if (this._states.remove(this.options.id)) {
          if (this.rejectOnDrop) {
            this._reject(error != null ? error : new BottleneckError(message));
          }
          this.Events.trigger("dropped", {
            args: this.args,
            options: this.options,
            task: this.task,
            promise: this.promise
          });
          return true;
        } else {
          return false;
        }
      }
      _assertStatus(expected) {
        var status;
        status = this._states.jobStatus(this.options.id);
        if (!(status === expected || expected === "DONE" && status === null)) {
          throw new BottleneckError(`Invalid job status ${status}, expected ${expected}. Please open an issue at https://github.com/SGrondin/bottleneck/issues`);
        }
      }
      doReceive() {
        this._states.start(this.options.id);
        return this.Events.trigger("received", {
          args: this.args,
          options: this.options
        });
      }
      doQueue(reachedHWM, blocked2) {
        this._assertStatus("RECEIVED");
        this._states.next(this.options.id);
        return this.Events.trigger("queued", {
          args: this.args,
          options: this.options,
          reachedHWM,
          blocked: blocked2
        });
      }
      doRun() {
        if (this.retryCount === 0) {
          this._assertStatus("QUEUED");
          this._states.next(this.options.id);
        } else {
          this._assertStatus("EXECUTING");
        }
        return this.Events.trigger("scheduled", {
          args: this.args,
          options: this.options
        });
      }
      doExecute(chained, clearGlobalState, run2, free) {
        var _this = this;
        return _asyncToGenerator2(function* () {
          var error, eventInfo, passed;
          if (_this.retryCount === 0) {
            _this._assertStatus("RUNNING");
            _this._states.next(_this.options.id);
          } else {
            _this._assertStatus("EXECUTING");
          }
          eventInfo = {
            args: _this.args,
            options: _this.options,
            retryCount: _this.retryCount
          };
          _this.Events.trigger("executing", eventInfo);
          try {
            passed = yield chained != null ? chained.schedule(_this.options, _this.task, ..._this.args) : _this.task(..._this.args);
            if (clearGlobalState()) {
              _this.doDone(eventInfo);
              yield free(_this.options, eventInfo);
              _this._assertStatus("DONE");
              return _this._resolve(passed);
            }
          } catch (error1) {
            error = error1;
            return _this._onFailure(error, eventInfo, clearGlobalState, run2, free);
          }
        })();
      }
      doExpire(clearGlobalState, run2, free) {
        var error, eventInfo;
        if (this._states.jobStatus(this.options.id === "RUNNING")) {
          this._states.next(this.options.id);
        }
        this._assertStatus("EXECUTING");
        eventInfo = {
          args: this.args,
          options: this.options,
          retryCount: this.retryCount
        };
        error = new BottleneckError(`This job timed out after ${this.options.expiration} ms.`);
        return this._onFailure(error, eventInfo, clearGlobalState, run2, free);
      }
      _onFailure(error, eventInfo, clearGlobalState, run2, free) {
        var _this2 = this;
        return _asyncToGenerator2(function* () {
          var retry3, retryAfter;
          if (clearGlobalState()) {
            retry3 = yield _this2.Events.trigger("failed", error, eventInfo);
            if (retry3 != null) {
              retryAfter = ~~retry3;
              _this2.Events.trigger("retry", `Retrying ${_this2.options.id} after ${retryAfter} ms`, eventInfo);
              _this2.retryCount++;
              return run2(retryAfter);
            } else {
              _this2.doDone(eventInfo);
              yield free(_this2.options, eventInfo);
              _this2._assertStatus("DONE");
              return _this2._reject(error);
            }
          }
        })();
      }
      doDone(eventInfo) {
        this._assertStatus("EXECUTING");
        this._states.next(this.options.id);
        return this.Events.trigger("done", eventInfo);
      }
    };
    module2.exports = Job;
  }
});

// node_modules/bottleneck/lib/LocalDatastore.js
var require_LocalDatastore = __commonJS({
  "node_modules/bottleneck/lib/LocalDatastore.js"(exports2, module2) {
    "use strict";
    function asyncGeneratorStep2(gen, resolve, reject, _next, _throw, key, arg) {
      try {
        var info2 = gen[key](arg);
        var value = info2.value;
      } catch (error) {
        reject(error);
        return;
      }
      if (info2.done) {
        resolve(value);
      } else {
        Promise.resolve(value).then(_next, _throw);
      }
    }
    function _asyncToGenerator2(fn) {
      return function() {
        var self = this, args = arguments;
        return new Promise(function(resolve, reject) {
          var gen = fn.apply(self, args);
          function _next(value) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "next", value);
          }
          function _throw(err) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "throw", err);
          }
          _next(void 0);
        });
      };
    }
    var BottleneckError;
    var LocalDatastore;
    var parser2;
    parser2 = require_parser();
    BottleneckError = require_BottleneckError();
    LocalDatastore = class LocalDatastore {
      constructor(instance, storeOptions, storeInstanceOptions) {
        this.instance = instance;
        this.storeOptions = storeOptions;
        this.clientId = this.instance._randomIndex();
        parser2.load(storeInstanceOptions, storeInstanceOptions, this);
        this._nextRequest = this._lastReservoirRefresh = this._lastReservoirIncrease = Date.now();
        this._running = 0;
        this._done = 0;
        this._unblockTime = 0;
        this.ready = this.Promise.resolve();
        this.clients = {};
        this._startHeartbeat();
      }
      _startHeartbeat() {
        var base;
        if (this.heartbeat == null && (this.storeOptions.reservoirRefreshInterval != null && this.storeOptions.reservoirRefreshAmount != null || this.storeOptions.reservoirIncreaseInterval != null && this.storeOptions.reservoirIncreaseAmount != null)) {
          return typeof (base = this.heartbeat = setInterval(() => {
            var amount, incr, maximum, now, reservoir;
            now = Date.now();
            if (this.storeOptions.reservoirRefreshInterval != null && now >= this._lastReservoirRefresh + this.storeOptions.reservoirRefreshInterval) {
              this._lastReservoirRefresh = now;
              this.storeOptions.reservoir = this.storeOptions.reservoirRefreshAmount;
              this.instance._drainAll(this.computeCapacity());
            }
            if (this.storeOptions.reservoirIncreaseInterval != null && now >= this._lastReservoirIncrease + this.storeOptions.reservoirIncreaseInterval) {
              var _this$storeOptions = this.storeOptions;
              amount = _this$storeOptions.reservoirIncreaseAmount;
              maximum = _this$storeOptions.reservoirIncreaseMaximum;
              reservoir = _this$storeOptions.reservoir;
              this._lastReservoirIncrease = now;
              incr = maximum != null ? Math.min(amount, maximum - reservoir) : amount;
              if (incr > 0) {
                this.storeOptions.reservoir += incr;
                return this.instance._drainAll(this.computeCapacity());
              }
            }
          }, this.heartbeatInterval)).unref === "function" ? base.unref() : void 0;
        } else {
          return clearInterval(this.heartbeat);
        }
      }
      __publish__(message) {
        var _this = this;
        return _asyncToGenerator2(function* () {
          yield _this.yieldLoop();
          return _this.instance.Events.trigger("message", message.toString());
        })();
      }
      __disconnect__(flush) {
        var _this2 = this;
        return _asyncToGenerator2(function* () {
          yield _this2.yieldLoop();
          clearInterval(_this2.heartbeat);
          return _this2.Promise.resolve();
        })();
      }
      yieldLoop(t = 0) {
        return new this.Promise(function(resolve, reject) {
          return setTimeout(resolve, t);
        });
      }
      computePenalty() {
        var ref;
        return (ref = this.storeOptions.penalty) != null ? ref : 15 * this.storeOptions.minTime || 5e3;
      }
      __updateSettings__(options2) {
        var _this3 = this;
        return _asyncToGenerator2(function* () {
          yield _this3.yieldLoop();
          parser2.overwrite(options2, options2, _this3.storeOptions);
          _this3._startHeartbeat();
          _this3.instance._drainAll(_this3.computeCapacity());
          return true;
        })();
      }
      __running__() {
        var _this4 = this;
        return _asyncToGenerator2(function* () {
          yield _this4.yieldLoop();
          return _this4._running;
        })();
      }
      __queued__() {
        var _this5 = this;
        return _asyncToGenerator2(function* () {
          yield _this5.yieldLoop();
          return _this5.instance.queued();
        })();
      }
      __done__() {
        var _this6 = this;
        return _asyncToGenerator2(function* () {
          yield _this6.yieldLoop();
          return _this6._done;
        })();
      }
      __groupCheck__(time) {
        var _this7 = this;
        return _asyncToGenerator2(function* () {
          yield _this7.yieldLoop();
          return _this7._nextRequest + _this7.timeout < time;
        })();
      }
      computeCapacity() {
        var maxConcurrent, reservoir;
        var _this$storeOptions2 = this.storeOptions;
        maxConcurrent = _this$storeOptions2.maxConcurrent;
        reservoir = _this$storeOptions2.reservoir;
        if (maxConcurrent != null && reservoir != null) {
          return Math.min(maxConcurrent - this._running, reservoir);
        } else if (maxConcurrent != null) {
          return maxConcurrent - this._running;
        } else if (reservoir != null) {
          return reservoir;
        } else {
          return null;
        }
      }
      conditionsCheck(weight) {
        var capacity;
        capacity = this.computeCapacity();
        return capacity == null || weight <= capacity;
      }
      __incrementReservoir__(incr) {
        var _this8 = this;
        return _asyncToGenerator2(function* () {
          var reservoir;
          yield _this8.yieldLoop();
          reservoir = _this8.storeOptions.reservoir += incr;
          _this8.instance._drainAll(_this8.computeCapacity());
          return reservoir;
        })();
      }
      __currentReservoir__() {
        var _this9 = this;
        return _asyncToGenerator2(function* () {
          yield _this9.yieldLoop();
          return _this9.storeOptions.reservoir;
        })();
      }
      isBlocked(now) {
        return this._unblockTime >= now;
      }
      check(weight, now) {
        return this.conditionsCheck(weight) && this._nextRequest - now <= 0;
      }
      __check__(weight) {
        var _this10 = this;
        return _asyncToGenerator2(function* () {
          var now;
          yield _this10.yieldLoop();
          now = Date.now();
          return _this10.check(weight, now);
        })();
      }
      __register__(index, weight, expiration) {
        var _this11 = this;
        return _asyncToGenerator2(function* () {
          var now, wait2;
          yield _this11.yieldLoop();
          now = Date.now();
          if (_this11.conditionsCheck(weight)) {
            _this11._running += weight;
            if (_this11.storeOptions.reservoir != null) {
              _this11.storeOptions.reservoir -= weight;
            }
            wait2 = Math.max(_this11._nextRequest - now, 0);
            _this11._nextRequest = now + wait2 + _this11.storeOptions.minTime;
            return {
              success: true,
              wait: wait2,
              reservoir: _this11.storeOptions.reservoir
            };
          } else {
            return {
              success: false
            };
          }
        })();
      }
      strategyIsBlock() {
        return this.storeOptions.strategy === 3;
      }
      __submit__(queueLength, weight) {
        var _this12 = this;
        return _asyncToGenerator2(function* () {
          var blocked2, now, reachedHWM;
          yield _this12.yieldLoop();
          if (_this12.storeOptions.maxConcurrent != null && weight > _this12.storeOptions.maxConcurrent) {
            throw new BottleneckError(`Impossible to add a job having a weight of ${weight} to a limiter having a maxConcurrent setting of ${_this12.storeOptions.maxConcurrent}`);
          }
          now = Date.now();
          reachedHWM = _this12.storeOptions.highWater != null && queueLength === _this12.storeOptions.highWater && !_this12.check(weight, now);
          blocked2 = _this12.strategyIsBlock() && (reachedHWM || _this12.isBlocked(now));
          if (blocked2) {
            _this12._unblockTime = now + _this12.computePenalty();
            _this12._nextRequest = _this12._unblockTime + _this12.storeOptions.minTime;
            _this12.instance._dropAllQueued();
          }
          return {
            reachedHWM,
            blocked: blocked2,
            strategy: _this12.storeOptions.strategy
          };
        })();
      }
      __free__(index, weight) {
        var _this13 = this;
        return _asyncToGenerator2(function* () {
          yield _this13.yieldLoop();
          _this13._running -= weight;
          _this13._done += weight;
          _this13.instance._drainAll(_this13.computeCapacity());
          return {
            running: _this13._running
          };
        })();
      }
    };
    module2.exports = LocalDatastore;
  }
});

// node_modules/bottleneck/lib/lua.json
var require_lua = __commonJS({
  "node_modules/bottleneck/lib/lua.json"(exports2, module2) {
    module2.exports = {
      "blacklist_client.lua": "local blacklist = ARGV[num_static_argv + 1]\n\nif redis.call('zscore', client_last_seen_key, blacklist) then\n  redis.call('zadd', client_last_seen_key, 0, blacklist)\nend\n\n\nreturn {}\n",
      "check.lua": "local weight = tonumber(ARGV[num_static_argv + 1])\n\nlocal capacity = process_tick(now, false)['capacity']\nlocal nextRequest = tonumber(redis.call('hget', settings_key, 'nextRequest'))\n\nreturn conditions_check(capacity, weight) and nextRequest - now <= 0\n",
      "conditions_check.lua": "local conditions_check = function (capacity, weight)\n  return capacity == nil or weight <= capacity\nend\n",
      "current_reservoir.lua": "return process_tick(now, false)['reservoir']\n",
      "done.lua": "process_tick(now, false)\n\nreturn tonumber(redis.call('hget', settings_key, 'done'))\n",
      "free.lua": "local index = ARGV[num_static_argv + 1]\n\nredis.call('zadd', job_expirations_key, 0, index)\n\nreturn process_tick(now, false)['running']\n",
      "get_time.lua": "redis.replicate_commands()\n\nlocal get_time = function ()\n  local time = redis.call('time')\n\n  return tonumber(time[1]..string.sub(time[2], 1, 3))\nend\n",
      "group_check.lua": "return not (redis.call('exists', settings_key) == 1)\n",
      "heartbeat.lua": "process_tick(now, true)\n",
      "increment_reservoir.lua": "local incr = tonumber(ARGV[num_static_argv + 1])\n\nredis.call('hincrby', settings_key, 'reservoir', incr)\n\nlocal reservoir = process_tick(now, true)['reservoir']\n\nlocal groupTimeout = tonumber(redis.call('hget', settings_key, 'groupTimeout'))\nrefresh_expiration(0, 0, groupTimeout)\n\nreturn reservoir\n",
      "init.lua": `local clear = tonumber(ARGV[num_static_argv + 1])
local limiter_version = ARGV[num_static_argv + 2]
local num_local_argv = num_static_argv + 2

if clear == 1 then
  redis.call('del', unpack(KEYS))
end

if redis.call('exists', settings_key) == 0 then
  -- Create
  local args = {'hmset', settings_key}

  for i = num_local_argv + 1, #ARGV do
    table.insert(args, ARGV[i])
  end

  redis.call(unpack(args))
  redis.call('hmset', settings_key,
    'nextRequest', now,
    'lastReservoirRefresh', now,
    'lastReservoirIncrease', now,
    'running', 0,
    'done', 0,
    'unblockTime', 0,
    'capacityPriorityCounter', 0
  )

else
  -- Apply migrations
  local settings = redis.call('hmget', settings_key,
    'id',
    'version'
  )
  local id = settings[1]
  local current_version = settings[2]

  if current_version ~= limiter_version then
    local version_digits = {}
    for k, v in string.gmatch(current_version, "([^.]+)") do
      table.insert(version_digits, tonumber(k))
    end

    -- 2.10.0
    if version_digits[2] < 10 then
      redis.call('hsetnx', settings_key, 'reservoirRefreshInterval', '')
      redis.call('hsetnx', settings_key, 'reservoirRefreshAmount', '')
      redis.call('hsetnx', settings_key, 'lastReservoirRefresh', '')
      redis.call('hsetnx', settings_key, 'done', 0)
      redis.call('hset', settings_key, 'version', '2.10.0')
    end

    -- 2.11.1
    if version_digits[2] < 11 or (version_digits[2] == 11 and version_digits[3] < 1) then
      if redis.call('hstrlen', settings_key, 'lastReservoirRefresh') == 0 then
        redis.call('hmset', settings_key,
          'lastReservoirRefresh', now,
          'version', '2.11.1'
        )
      end
    end

    -- 2.14.0
    if version_digits[2] < 14 then
      local old_running_key = 'b_'..id..'_running'
      local old_executing_key = 'b_'..id..'_executing'

      if redis.call('exists', old_running_key) == 1 then
        redis.call('rename', old_running_key, job_weights_key)
      end
      if redis.call('exists', old_executing_key) == 1 then
        redis.call('rename', old_executing_key, job_expirations_key)
      end
      redis.call('hset', settings_key, 'version', '2.14.0')
    end

    -- 2.15.2
    if version_digits[2] < 15 or (version_digits[2] == 15 and version_digits[3] < 2) then
      redis.call('hsetnx', settings_key, 'capacityPriorityCounter', 0)
      redis.call('hset', settings_key, 'version', '2.15.2')
    end

    -- 2.17.0
    if version_digits[2] < 17 then
      redis.call('hsetnx', settings_key, 'clientTimeout', 10000)
      redis.call('hset', settings_key, 'version', '2.17.0')
    end

    -- 2.18.0
    if version_digits[2] < 18 then
      redis.call('hsetnx', settings_key, 'reservoirIncreaseInterval', '')
      redis.call('hsetnx', settings_key, 'reservoirIncreaseAmount', '')
      redis.call('hsetnx', settings_key, 'reservoirIncreaseMaximum', '')
      redis.call('hsetnx', settings_key, 'lastReservoirIncrease', now)
      redis.call('hset', settings_key, 'version', '2.18.0')
    end

  end

  process_tick(now, false)
end

local groupTimeout = tonumber(redis.call('hget', settings_key, 'groupTimeout'))
refresh_expiration(0, 0, groupTimeout)

return {}
`,
      "process_tick.lua": "local process_tick = function (now, always_publish)\n\n  local compute_capacity = function (maxConcurrent, running, reservoir)\n    if maxConcurrent ~= nil and reservoir ~= nil then\n      return math.min((maxConcurrent - running), reservoir)\n    elseif maxConcurrent ~= nil then\n      return maxConcurrent - running\n    elseif reservoir ~= nil then\n      return reservoir\n    else\n      return nil\n    end\n  end\n\n  local settings = redis.call('hmget', settings_key,\n    'id',\n    'maxConcurrent',\n    'running',\n    'reservoir',\n    'reservoirRefreshInterval',\n    'reservoirRefreshAmount',\n    'lastReservoirRefresh',\n    'reservoirIncreaseInterval',\n    'reservoirIncreaseAmount',\n    'reservoirIncreaseMaximum',\n    'lastReservoirIncrease',\n    'capacityPriorityCounter',\n    'clientTimeout'\n  )\n  local id = settings[1]\n  local maxConcurrent = tonumber(settings[2])\n  local running = tonumber(settings[3])\n  local reservoir = tonumber(settings[4])\n  local reservoirRefreshInterval = tonumber(settings[5])\n  local reservoirRefreshAmount = tonumber(settings[6])\n  local lastReservoirRefresh = tonumber(settings[7])\n  local reservoirIncreaseInterval = tonumber(settings[8])\n  local reservoirIncreaseAmount = tonumber(settings[9])\n  local reservoirIncreaseMaximum = tonumber(settings[10])\n  local lastReservoirIncrease = tonumber(settings[11])\n  local capacityPriorityCounter = tonumber(settings[12])\n  local clientTimeout = tonumber(settings[13])\n\n  local initial_capacity = compute_capacity(maxConcurrent, running, reservoir)\n\n  --\n  -- Process 'running' changes\n  --\n  local expired = redis.call('zrangebyscore', job_expirations_key, '-inf', '('..now)\n\n  if #expired > 0 then\n    redis.call('zremrangebyscore', job_expirations_key, '-inf', '('..now)\n\n    local flush_batch = function (batch, acc)\n      local weights = redis.call('hmget', job_weights_key, unpack(batch))\n                      redis.call('hdel',  job_weights_key, unpack(batch))\n      local clients = redis.call('hmget', job_clients_key, unpack(batch))\n                      redis.call('hdel',  job_clients_key, unpack(batch))\n\n      -- Calculate sum of removed weights\n      for i = 1, #weights do\n        acc['total'] = acc['total'] + (tonumber(weights[i]) or 0)\n      end\n\n      -- Calculate sum of removed weights by client\n      local client_weights = {}\n      for i = 1, #clients do\n        local removed = tonumber(weights[i]) or 0\n        if removed > 0 then\n          acc['client_weights'][clients[i]] = (acc['client_weights'][clients[i]] or 0) + removed\n        end\n      end\n    end\n\n    local acc = {\n      ['total'] = 0,\n      ['client_weights'] = {}\n    }\n    local batch_size = 1000\n\n    -- Compute changes to Zsets and apply changes to Hashes\n    for i = 1, #expired, batch_size do\n      local batch = {}\n      for j = i, math.min(i + batch_size - 1, #expired) do\n        table.insert(batch, expired[j])\n      end\n\n      flush_batch(batch, acc)\n    end\n\n    -- Apply changes to Zsets\n    if acc['total'] > 0 then\n      redis.call('hincrby', settings_key, 'done', acc['total'])\n      running = tonumber(redis.call('hincrby', settings_key, 'running', -acc['total']))\n    end\n\n    for client, weight in pairs(acc['client_weights']) do\n      redis.call('zincrby', client_running_key, -weight, client)\n    end\n  end\n\n  --\n  -- Process 'reservoir' changes\n  --\n  local reservoirRefreshActive = reservoirRefreshInterval ~= nil and reservoirRefreshAmount ~= nil\n  if reservoirRefreshActive and now >= lastReservoirRefresh + reservoirRefreshInterval then\n    reservoir = reservoirRefreshAmount\n    redis.call('hmset', settings_key,\n      'reservoir', reservoir,\n      'lastReservoirRefresh', now\n    )\n  end\n\n  local reservoirIncreaseActive = reservoirIncreaseInterval ~= nil and reservoirIncreaseAmount ~= nil\n  if reservoirIncreaseActive and now >= lastReservoirIncrease + reservoirIncreaseInterval then\n    local num_intervals = math.floor((now - lastReservoirIncrease) / reservoirIncreaseInterval)\n    local incr = reservoirIncreaseAmount * num_intervals\n    if reservoirIncreaseMaximum ~= nil then\n      incr = math.min(incr, reservoirIncreaseMaximum - (reservoir or 0))\n    end\n    if incr > 0 then\n      reservoir = (reservoir or 0) + incr\n    end\n    redis.call('hmset', settings_key,\n      'reservoir', reservoir,\n      'lastReservoirIncrease', lastReservoirIncrease + (num_intervals * reservoirIncreaseInterval)\n    )\n  end\n\n  --\n  -- Clear unresponsive clients\n  --\n  local unresponsive = redis.call('zrangebyscore', client_last_seen_key, '-inf', (now - clientTimeout))\n  local unresponsive_lookup = {}\n  local terminated_clients = {}\n  for i = 1, #unresponsive do\n    unresponsive_lookup[unresponsive[i]] = true\n    if tonumber(redis.call('zscore', client_running_key, unresponsive[i])) == 0 then\n      table.insert(terminated_clients, unresponsive[i])\n    end\n  end\n  if #terminated_clients > 0 then\n    redis.call('zrem', client_running_key,         unpack(terminated_clients))\n    redis.call('hdel', client_num_queued_key,      unpack(terminated_clients))\n    redis.call('zrem', client_last_registered_key, unpack(terminated_clients))\n    redis.call('zrem', client_last_seen_key,       unpack(terminated_clients))\n  end\n\n  --\n  -- Broadcast capacity changes\n  --\n  local final_capacity = compute_capacity(maxConcurrent, running, reservoir)\n\n  if always_publish or (initial_capacity ~= nil and final_capacity == nil) then\n    -- always_publish or was not unlimited, now unlimited\n    redis.call('publish', 'b_'..id, 'capacity:'..(final_capacity or ''))\n\n  elseif initial_capacity ~= nil and final_capacity ~= nil and final_capacity > initial_capacity then\n    -- capacity was increased\n    -- send the capacity message to the limiter having the lowest number of running jobs\n    -- the tiebreaker is the limiter having not registered a job in the longest time\n\n    local lowest_concurrency_value = nil\n    local lowest_concurrency_clients = {}\n    local lowest_concurrency_last_registered = {}\n    local client_concurrencies = redis.call('zrange', client_running_key, 0, -1, 'withscores')\n\n    for i = 1, #client_concurrencies, 2 do\n      local client = client_concurrencies[i]\n      local concurrency = tonumber(client_concurrencies[i+1])\n\n      if (\n        lowest_concurrency_value == nil or lowest_concurrency_value == concurrency\n      ) and (\n        not unresponsive_lookup[client]\n      ) and (\n        tonumber(redis.call('hget', client_num_queued_key, client)) > 0\n      ) then\n        lowest_concurrency_value = concurrency\n        table.insert(lowest_concurrency_clients, client)\n        local last_registered = tonumber(redis.call('zscore', client_last_registered_key, client))\n        table.insert(lowest_concurrency_last_registered, last_registered)\n      end\n    end\n\n    if #lowest_concurrency_clients > 0 then\n      local position = 1\n      local earliest = lowest_concurrency_last_registered[1]\n\n      for i,v in ipairs(lowest_concurrency_last_registered) do\n        if v < earliest then\n          position = i\n          earliest = v\n        end\n      end\n\n      local next_client = lowest_concurrency_clients[position]\n      redis.call('publish', 'b_'..id,\n        'capacity-priority:'..(final_capacity or '')..\n        ':'..next_client..\n        ':'..capacityPriorityCounter\n      )\n      redis.call('hincrby', settings_key, 'capacityPriorityCounter', '1')\n    else\n      redis.call('publish', 'b_'..id, 'capacity:'..(final_capacity or ''))\n    end\n  end\n\n  return {\n    ['capacity'] = final_capacity,\n    ['running'] = running,\n    ['reservoir'] = reservoir\n  }\nend\n",
      "queued.lua": "local clientTimeout = tonumber(redis.call('hget', settings_key, 'clientTimeout'))\nlocal valid_clients = redis.call('zrangebyscore', client_last_seen_key, (now - clientTimeout), 'inf')\nlocal client_queued = redis.call('hmget', client_num_queued_key, unpack(valid_clients))\n\nlocal sum = 0\nfor i = 1, #client_queued do\n  sum = sum + tonumber(client_queued[i])\nend\n\nreturn sum\n",
      "refresh_expiration.lua": "local refresh_expiration = function (now, nextRequest, groupTimeout)\n\n  if groupTimeout ~= nil then\n    local ttl = (nextRequest + groupTimeout) - now\n\n    for i = 1, #KEYS do\n      redis.call('pexpire', KEYS[i], ttl)\n    end\n  end\n\nend\n",
      "refs.lua": "local settings_key = KEYS[1]\nlocal job_weights_key = KEYS[2]\nlocal job_expirations_key = KEYS[3]\nlocal job_clients_key = KEYS[4]\nlocal client_running_key = KEYS[5]\nlocal client_num_queued_key = KEYS[6]\nlocal client_last_registered_key = KEYS[7]\nlocal client_last_seen_key = KEYS[8]\n\nlocal now = tonumber(ARGV[1])\nlocal client = ARGV[2]\n\nlocal num_static_argv = 2\n",
      "register.lua": "local index = ARGV[num_static_argv + 1]\nlocal weight = tonumber(ARGV[num_static_argv + 2])\nlocal expiration = tonumber(ARGV[num_static_argv + 3])\n\nlocal state = process_tick(now, false)\nlocal capacity = state['capacity']\nlocal reservoir = state['reservoir']\n\nlocal settings = redis.call('hmget', settings_key,\n  'nextRequest',\n  'minTime',\n  'groupTimeout'\n)\nlocal nextRequest = tonumber(settings[1])\nlocal minTime = tonumber(settings[2])\nlocal groupTimeout = tonumber(settings[3])\n\nif conditions_check(capacity, weight) then\n\n  redis.call('hincrby', settings_key, 'running', weight)\n  redis.call('hset', job_weights_key, index, weight)\n  if expiration ~= nil then\n    redis.call('zadd', job_expirations_key, now + expiration, index)\n  end\n  redis.call('hset', job_clients_key, index, client)\n  redis.call('zincrby', client_running_key, weight, client)\n  redis.call('hincrby', client_num_queued_key, client, -1)\n  redis.call('zadd', client_last_registered_key, now, client)\n\n  local wait = math.max(nextRequest - now, 0)\n  local newNextRequest = now + wait + minTime\n\n  if reservoir == nil then\n    redis.call('hset', settings_key,\n      'nextRequest', newNextRequest\n    )\n  else\n    reservoir = reservoir - weight\n    redis.call('hmset', settings_key,\n      'reservoir', reservoir,\n      'nextRequest', newNextRequest\n    )\n  end\n\n  refresh_expiration(now, newNextRequest, groupTimeout)\n\n  return {true, wait, reservoir}\n\nelse\n  return {false}\nend\n",
      "register_client.lua": "local queued = tonumber(ARGV[num_static_argv + 1])\n\n-- Could have been re-registered concurrently\nif not redis.call('zscore', client_last_seen_key, client) then\n  redis.call('zadd', client_running_key, 0, client)\n  redis.call('hset', client_num_queued_key, client, queued)\n  redis.call('zadd', client_last_registered_key, 0, client)\nend\n\nredis.call('zadd', client_last_seen_key, now, client)\n\nreturn {}\n",
      "running.lua": "return process_tick(now, false)['running']\n",
      "submit.lua": "local queueLength = tonumber(ARGV[num_static_argv + 1])\nlocal weight = tonumber(ARGV[num_static_argv + 2])\n\nlocal capacity = process_tick(now, false)['capacity']\n\nlocal settings = redis.call('hmget', settings_key,\n  'id',\n  'maxConcurrent',\n  'highWater',\n  'nextRequest',\n  'strategy',\n  'unblockTime',\n  'penalty',\n  'minTime',\n  'groupTimeout'\n)\nlocal id = settings[1]\nlocal maxConcurrent = tonumber(settings[2])\nlocal highWater = tonumber(settings[3])\nlocal nextRequest = tonumber(settings[4])\nlocal strategy = tonumber(settings[5])\nlocal unblockTime = tonumber(settings[6])\nlocal penalty = tonumber(settings[7])\nlocal minTime = tonumber(settings[8])\nlocal groupTimeout = tonumber(settings[9])\n\nif maxConcurrent ~= nil and weight > maxConcurrent then\n  return redis.error_reply('OVERWEIGHT:'..weight..':'..maxConcurrent)\nend\n\nlocal reachedHWM = (highWater ~= nil and queueLength == highWater\n  and not (\n    conditions_check(capacity, weight)\n    and nextRequest - now <= 0\n  )\n)\n\nlocal blocked = strategy == 3 and (reachedHWM or unblockTime >= now)\n\nif blocked then\n  local computedPenalty = penalty\n  if computedPenalty == nil then\n    if minTime == 0 then\n      computedPenalty = 5000\n    else\n      computedPenalty = 15 * minTime\n    end\n  end\n\n  local newNextRequest = now + computedPenalty + minTime\n\n  redis.call('hmset', settings_key,\n    'unblockTime', now + computedPenalty,\n    'nextRequest', newNextRequest\n  )\n\n  local clients_queued_reset = redis.call('hkeys', client_num_queued_key)\n  local queued_reset = {}\n  for i = 1, #clients_queued_reset do\n    table.insert(queued_reset, clients_queued_reset[i])\n    table.insert(queued_reset, 0)\n  end\n  redis.call('hmset', client_num_queued_key, unpack(queued_reset))\n\n  redis.call('publish', 'b_'..id, 'blocked:')\n\n  refresh_expiration(now, newNextRequest, groupTimeout)\nend\n\nif not blocked and not reachedHWM then\n  redis.call('hincrby', client_num_queued_key, client, 1)\nend\n\nreturn {reachedHWM, blocked, strategy}\n",
      "update_settings.lua": "local args = {'hmset', settings_key}\n\nfor i = num_static_argv + 1, #ARGV do\n  table.insert(args, ARGV[i])\nend\n\nredis.call(unpack(args))\n\nprocess_tick(now, true)\n\nlocal groupTimeout = tonumber(redis.call('hget', settings_key, 'groupTimeout'))\nrefresh_expiration(0, 0, groupTimeout)\n\nreturn {}\n",
      "validate_client.lua": "if not redis.call('zscore', client_last_seen_key, client) then\n  return redis.error_reply('UNKNOWN_CLIENT')\nend\n\nredis.call('zadd', client_last_seen_key, now, client)\n",
      "validate_keys.lua": "if not (redis.call('exists', settings_key) == 1) then\n  return redis.error_reply('SETTINGS_KEY_NOT_FOUND')\nend\n"
    };
  }
});

// node_modules/bottleneck/lib/Scripts.js
var require_Scripts = __commonJS({
  "node_modules/bottleneck/lib/Scripts.js"(exports2) {
    "use strict";
    var headers;
    var lua;
    var templates;
    lua = require_lua();
    headers = {
      refs: lua["refs.lua"],
      validate_keys: lua["validate_keys.lua"],
      validate_client: lua["validate_client.lua"],
      refresh_expiration: lua["refresh_expiration.lua"],
      process_tick: lua["process_tick.lua"],
      conditions_check: lua["conditions_check.lua"],
      get_time: lua["get_time.lua"]
    };
    exports2.allKeys = function(id) {
      return [
        /*
        HASH
        */
        `b_${id}_settings`,
        /*
        HASH
        job index -> weight
        */
        `b_${id}_job_weights`,
        /*
        ZSET
        job index -> expiration
        */
        `b_${id}_job_expirations`,
        /*
        HASH
        job index -> client
        */
        `b_${id}_job_clients`,
        /*
        ZSET
        client -> sum running
        */
        `b_${id}_client_running`,
        /*
        HASH
        client -> num queued
        */
        `b_${id}_client_num_queued`,
        /*
        ZSET
        client -> last job registered
        */
        `b_${id}_client_last_registered`,
        /*
        ZSET
        client -> last seen
        */
        `b_${id}_client_last_seen`
      ];
    };
    templates = {
      init: {
        keys: exports2.allKeys,
        headers: ["process_tick"],
        refresh_expiration: true,
        code: lua["init.lua"]
      },
      group_check: {
        keys: exports2.allKeys,
        headers: [],
        refresh_expiration: false,
        code: lua["group_check.lua"]
      },
      register_client: {
        keys: exports2.allKeys,
        headers: ["validate_keys"],
        refresh_expiration: false,
        code: lua["register_client.lua"]
      },
      blacklist_client: {
        keys: exports2.allKeys,
        headers: ["validate_keys", "validate_client"],
        refresh_expiration: false,
        code: lua["blacklist_client.lua"]
      },
      heartbeat: {
        keys: exports2.allKeys,
        headers: ["validate_keys", "validate_client", "process_tick"],
        refresh_expiration: false,
        code: lua["heartbeat.lua"]
      },
      update_settings: {
        keys: exports2.allKeys,
        headers: ["validate_keys", "validate_client", "process_tick"],
        refresh_expiration: true,
        code: lua["update_settings.lua"]
      },
      running: {
        keys: exports2.allKeys,
        headers: ["validate_keys", "validate_client", "process_tick"],
        refresh_expiration: false,
        code: lua["running.lua"]
      },
      queued: {
        keys: exports2.allKeys,
        headers: ["validate_keys", "validate_client"],
        refresh_expiration: false,
        code: lua["queued.lua"]
      },
      done: {
        keys: exports2.allKeys,
        headers: ["validate_keys", "validate_client", "process_tick"],
        refresh_expiration: false,
        code: lua["done.lua"]
      },
      check: {
        keys: exports2.allKeys,
        headers: ["validate_keys", "validate_client", "process_tick", "conditions_check"],
        refresh_expiration: false,
        code: lua["check.lua"]
      },
      submit: {
        keys: exports2.allKeys,
        headers: ["validate_keys", "validate_client", "process_tick", "conditions_check"],
        refresh_expiration: true,
        code: lua["submit.lua"]
      },
      register: {
        keys: exports2.allKeys,
        headers: ["validate_keys", "validate_client", "process_tick", "conditions_check"],
        refresh_expiration: true,
        code: lua["register.lua"]
      },
      free: {
        keys: exports2.allKeys,
        headers: ["validate_keys", "validate_client", "process_tick"],
        refresh_expiration: true,
        code: lua["free.lua"]
      },
      current_reservoir: {
        keys: exports2.allKeys,
        headers: ["validate_keys", "validate_client", "process_tick"],
        refresh_expiration: false,
        code: lua["current_reservoir.lua"]
      },
      increment_reservoir: {
        keys: exports2.allKeys,
        headers: ["validate_keys", "validate_client", "process_tick"],
        refresh_expiration: true,
        code: lua["increment_reservoir.lua"]
      }
    };
    exports2.names = Object.keys(templates);
    exports2.keys = function(name, id) {
      return templates[name].keys(id);
    };
    exports2.payload = function(name) {
      var template;
      template = templates[name];
      return Array.prototype.concat(headers.refs, template.headers.map(function(h) {
        return headers[h];
      }), template.refresh_expiration ? headers.refresh_expiration : "", template.code).join("\n");
    };
  }
});

// node_modules/bottleneck/lib/RedisConnection.js
var require_RedisConnection = __commonJS({
  "node_modules/bottleneck/lib/RedisConnection.js"(exports, module) {
    "use strict";
    function asyncGeneratorStep(gen, resolve, reject, _next, _throw, key, arg) {
      try {
        var info2 = gen[key](arg);
        var value = info2.value;
      } catch (error) {
        reject(error);
        return;
      }
      if (info2.done) {
        resolve(value);
      } else {
        Promise.resolve(value).then(_next, _throw);
      }
    }
    function _asyncToGenerator(fn) {
      return function() {
        var self = this, args = arguments;
        return new Promise(function(resolve, reject) {
          var gen = fn.apply(self, args);
          function _next(value) {
            asyncGeneratorStep(gen, resolve, reject, _next, _throw, "next", value);
          }
          function _throw(err) {
            asyncGeneratorStep(gen, resolve, reject, _next, _throw, "throw", err);
          }
          _next(void 0);
        });
      };
    }
    var Events;
    var RedisConnection;
    var Scripts;
    var parser;
    parser = require_parser();
    Events = require_Events();
    Scripts = require_Scripts();
    RedisConnection = function() {
      class RedisConnection {
        constructor(options = {}) {
          parser.load(options, this.defaults, this);
          if (this.Redis == null) {
            this.Redis = eval("require")("redis");
          }
          if (this.Events == null) {
            this.Events = new Events(this);
          }
          this.terminated = false;
          if (this.client == null) {
            this.client = this.Redis.createClient(this.clientOptions);
          }
          this.subscriber = this.client.duplicate();
          this.limiters = {};
          this.shas = {};
          this.ready = this.Promise.all([this._setup(this.client, false), this._setup(this.subscriber, true)]).then(() => {
            return this._loadScripts();
          }).then(() => {
            return {
              client: this.client,
              subscriber: this.subscriber
            };
          });
        }
        _setup(client, sub) {
          client.setMaxListeners(0);
          return new this.Promise((resolve, reject) => {
            client.on("error", (e) => {
              return this.Events.trigger("error", e);
            });
            if (sub) {
              client.on("message", (channel, message) => {
                var ref;
                return (ref = this.limiters[channel]) != null ? ref._store.onMessage(channel, message) : void 0;
              });
            }
            if (client.ready) {
              return resolve();
            } else {
              return client.once("ready", resolve);
            }
          });
        }
        _loadScript(name) {
          return new this.Promise((resolve, reject) => {
            var payload;
            payload = Scripts.payload(name);
            return this.client.multi([["script", "load", payload]]).exec((err, replies) => {
              if (err != null) {
                return reject(err);
              }
              this.shas[name] = replies[0];
              return resolve(replies[0]);
            });
          });
        }
        _loadScripts() {
          return this.Promise.all(Scripts.names.map((k) => {
            return this._loadScript(k);
          }));
        }
        __runCommand__(cmd) {
          var _this = this;
          return _asyncToGenerator(function* () {
            yield _this.ready;
            return new _this.Promise((resolve, reject) => {
              return _this.client.multi([cmd]).exec_atomic(function(err, replies) {
                if (err != null) {
                  return reject(err);
                } else {
                  return resolve(replies[0]);
                }
              });
            });
          })();
        }
        __addLimiter__(instance) {
          return this.Promise.all([instance.channel(), instance.channel_client()].map((channel) => {
            return new this.Promise((resolve, reject) => {
              var handler;
              handler = (chan) => {
                if (chan === channel) {
                  this.subscriber.removeListener("subscribe", handler);
                  this.limiters[channel] = instance;
                  return resolve();
                }
              };
              this.subscriber.on("subscribe", handler);
              return this.subscriber.subscribe(channel);
            });
          }));
        }
        __removeLimiter__(instance) {
          var _this2 = this;
          return this.Promise.all([instance.channel(), instance.channel_client()].map(
            /* @__PURE__ */ (function() {
              var _ref = _asyncToGenerator(function* (channel) {
                if (!_this2.terminated) {
                  yield new _this2.Promise((resolve, reject) => {
                    return _this2.subscriber.unsubscribe(channel, function(err, chan) {
                      if (err != null) {
                        return reject(err);
                      }
                      if (chan === channel) {
                        return resolve();
                      }
                    });
                  });
                }
                return delete _this2.limiters[channel];
              });
              return function(_x) {
                return _ref.apply(this, arguments);
              };
            })()
          ));
        }
        __scriptArgs__(name, id, args, cb) {
          var keys;
          keys = Scripts.keys(name, id);
          return [this.shas[name], keys.length].concat(keys, args, cb);
        }
        __scriptFn__(name) {
          return this.client.evalsha.bind(this.client);
        }
        disconnect(flush = true) {
          var i, k, len, ref;
          ref = Object.keys(this.limiters);
          for (i = 0, len = ref.length; i < len; i++) {
            k = ref[i];
            clearInterval(this.limiters[k]._store.heartbeat);
          }
          this.limiters = {};
          this.terminated = true;
          this.client.end(flush);
          this.subscriber.end(flush);
          return this.Promise.resolve();
        }
      }
      ;
      RedisConnection.prototype.datastore = "redis";
      RedisConnection.prototype.defaults = {
        Redis: null,
        clientOptions: {},
        client: null,
        Promise,
        Events: null
      };
      return RedisConnection;
    }.call(void 0);
    module.exports = RedisConnection;
  }
});

// node_modules/bottleneck/lib/IORedisConnection.js
var require_IORedisConnection = __commonJS({
  "node_modules/bottleneck/lib/IORedisConnection.js"(exports, module) {
    "use strict";
    function _slicedToArray(arr, i) {
      return _arrayWithHoles(arr) || _iterableToArrayLimit(arr, i) || _nonIterableRest();
    }
    function _nonIterableRest() {
      throw new TypeError("Invalid attempt to destructure non-iterable instance");
    }
    function _iterableToArrayLimit(arr, i) {
      var _arr = [];
      var _n = true;
      var _d = false;
      var _e = void 0;
      try {
        for (var _i = arr[Symbol.iterator](), _s; !(_n = (_s = _i.next()).done); _n = true) {
          _arr.push(_s.value);
          if (i && _arr.length === i) break;
        }
      } catch (err) {
        _d = true;
        _e = err;
      } finally {
        try {
          if (!_n && _i["return"] != null) _i["return"]();
        } finally {
          if (_d) throw _e;
        }
      }
      return _arr;
    }
    function _arrayWithHoles(arr) {
      if (Array.isArray(arr)) return arr;
    }
    function asyncGeneratorStep(gen, resolve, reject, _next, _throw, key, arg) {
      try {
        var info2 = gen[key](arg);
        var value = info2.value;
      } catch (error) {
        reject(error);
        return;
      }
      if (info2.done) {
        resolve(value);
      } else {
        Promise.resolve(value).then(_next, _throw);
      }
    }
    function _asyncToGenerator(fn) {
      return function() {
        var self = this, args = arguments;
        return new Promise(function(resolve, reject) {
          var gen = fn.apply(self, args);
          function _next(value) {
            asyncGeneratorStep(gen, resolve, reject, _next, _throw, "next", value);
          }
          function _throw(err) {
            asyncGeneratorStep(gen, resolve, reject, _next, _throw, "throw", err);
          }
          _next(void 0);
        });
      };
    }
    var Events;
    var IORedisConnection;
    var Scripts;
    var parser;
    parser = require_parser();
    Events = require_Events();
    Scripts = require_Scripts();
    IORedisConnection = function() {
      class IORedisConnection {
        constructor(options = {}) {
          parser.load(options, this.defaults, this);
          if (this.Redis == null) {
            this.Redis = eval("require")("ioredis");
          }
          if (this.Events == null) {
            this.Events = new Events(this);
          }
          this.terminated = false;
          if (this.clusterNodes != null) {
            this.client = new this.Redis.Cluster(this.clusterNodes, this.clientOptions);
            this.subscriber = new this.Redis.Cluster(this.clusterNodes, this.clientOptions);
          } else if (this.client != null && this.client.duplicate == null) {
            this.subscriber = new this.Redis.Cluster(this.client.startupNodes, this.client.options);
          } else {
            if (this.client == null) {
              this.client = new this.Redis(this.clientOptions);
            }
            this.subscriber = this.client.duplicate();
          }
          this.limiters = {};
          this.ready = this.Promise.all([this._setup(this.client, false), this._setup(this.subscriber, true)]).then(() => {
            this._loadScripts();
            return {
              client: this.client,
              subscriber: this.subscriber
            };
          });
        }
        _setup(client, sub) {
          client.setMaxListeners(0);
          return new this.Promise((resolve, reject) => {
            client.on("error", (e) => {
              return this.Events.trigger("error", e);
            });
            if (sub) {
              client.on("message", (channel, message) => {
                var ref;
                return (ref = this.limiters[channel]) != null ? ref._store.onMessage(channel, message) : void 0;
              });
            }
            if (client.status === "ready") {
              return resolve();
            } else {
              return client.once("ready", resolve);
            }
          });
        }
        _loadScripts() {
          return Scripts.names.forEach((name) => {
            return this.client.defineCommand(name, {
              lua: Scripts.payload(name)
            });
          });
        }
        __runCommand__(cmd) {
          var _this = this;
          return _asyncToGenerator(function* () {
            var _, deleted;
            yield _this.ready;
            var _ref = yield _this.client.pipeline([cmd]).exec();
            var _ref2 = _slicedToArray(_ref, 1);
            var _ref2$ = _slicedToArray(_ref2[0], 2);
            _ = _ref2$[0];
            deleted = _ref2$[1];
            return deleted;
          })();
        }
        __addLimiter__(instance) {
          return this.Promise.all([instance.channel(), instance.channel_client()].map((channel) => {
            return new this.Promise((resolve, reject) => {
              return this.subscriber.subscribe(channel, () => {
                this.limiters[channel] = instance;
                return resolve();
              });
            });
          }));
        }
        __removeLimiter__(instance) {
          var _this2 = this;
          return [instance.channel(), instance.channel_client()].forEach(
            /* @__PURE__ */ (function() {
              var _ref3 = _asyncToGenerator(function* (channel) {
                if (!_this2.terminated) {
                  yield _this2.subscriber.unsubscribe(channel);
                }
                return delete _this2.limiters[channel];
              });
              return function(_x) {
                return _ref3.apply(this, arguments);
              };
            })()
          );
        }
        __scriptArgs__(name, id, args, cb) {
          var keys;
          keys = Scripts.keys(name, id);
          return [keys.length].concat(keys, args, cb);
        }
        __scriptFn__(name) {
          return this.client[name].bind(this.client);
        }
        disconnect(flush = true) {
          var i, k, len, ref;
          ref = Object.keys(this.limiters);
          for (i = 0, len = ref.length; i < len; i++) {
            k = ref[i];
            clearInterval(this.limiters[k]._store.heartbeat);
          }
          this.limiters = {};
          this.terminated = true;
          if (flush) {
            return this.Promise.all([this.client.quit(), this.subscriber.quit()]);
          } else {
            this.client.disconnect();
            this.subscriber.disconnect();
            return this.Promise.resolve();
          }
        }
      }
      ;
      IORedisConnection.prototype.datastore = "ioredis";
      IORedisConnection.prototype.defaults = {
        Redis: null,
        clientOptions: {},
        clusterNodes: null,
        client: null,
        Promise,
        Events: null
      };
      return IORedisConnection;
    }.call(void 0);
    module.exports = IORedisConnection;
  }
});

// node_modules/bottleneck/lib/RedisDatastore.js
var require_RedisDatastore = __commonJS({
  "node_modules/bottleneck/lib/RedisDatastore.js"(exports2, module2) {
    "use strict";
    function _slicedToArray2(arr, i) {
      return _arrayWithHoles2(arr) || _iterableToArrayLimit2(arr, i) || _nonIterableRest2();
    }
    function _nonIterableRest2() {
      throw new TypeError("Invalid attempt to destructure non-iterable instance");
    }
    function _iterableToArrayLimit2(arr, i) {
      var _arr = [];
      var _n = true;
      var _d = false;
      var _e = void 0;
      try {
        for (var _i = arr[Symbol.iterator](), _s; !(_n = (_s = _i.next()).done); _n = true) {
          _arr.push(_s.value);
          if (i && _arr.length === i) break;
        }
      } catch (err) {
        _d = true;
        _e = err;
      } finally {
        try {
          if (!_n && _i["return"] != null) _i["return"]();
        } finally {
          if (_d) throw _e;
        }
      }
      return _arr;
    }
    function _arrayWithHoles2(arr) {
      if (Array.isArray(arr)) return arr;
    }
    function asyncGeneratorStep2(gen, resolve, reject, _next, _throw, key, arg) {
      try {
        var info2 = gen[key](arg);
        var value = info2.value;
      } catch (error) {
        reject(error);
        return;
      }
      if (info2.done) {
        resolve(value);
      } else {
        Promise.resolve(value).then(_next, _throw);
      }
    }
    function _asyncToGenerator2(fn) {
      return function() {
        var self = this, args = arguments;
        return new Promise(function(resolve, reject) {
          var gen = fn.apply(self, args);
          function _next(value) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "next", value);
          }
          function _throw(err) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "throw", err);
          }
          _next(void 0);
        });
      };
    }
    var BottleneckError;
    var IORedisConnection2;
    var RedisConnection2;
    var RedisDatastore;
    var parser2;
    parser2 = require_parser();
    BottleneckError = require_BottleneckError();
    RedisConnection2 = require_RedisConnection();
    IORedisConnection2 = require_IORedisConnection();
    RedisDatastore = class RedisDatastore {
      constructor(instance, storeOptions, storeInstanceOptions) {
        this.instance = instance;
        this.storeOptions = storeOptions;
        this.originalId = this.instance.id;
        this.clientId = this.instance._randomIndex();
        parser2.load(storeInstanceOptions, storeInstanceOptions, this);
        this.clients = {};
        this.capacityPriorityCounters = {};
        this.sharedConnection = this.connection != null;
        if (this.connection == null) {
          this.connection = this.instance.datastore === "redis" ? new RedisConnection2({
            Redis: this.Redis,
            clientOptions: this.clientOptions,
            Promise: this.Promise,
            Events: this.instance.Events
          }) : this.instance.datastore === "ioredis" ? new IORedisConnection2({
            Redis: this.Redis,
            clientOptions: this.clientOptions,
            clusterNodes: this.clusterNodes,
            Promise: this.Promise,
            Events: this.instance.Events
          }) : void 0;
        }
        this.instance.connection = this.connection;
        this.instance.datastore = this.connection.datastore;
        this.ready = this.connection.ready.then((clients) => {
          this.clients = clients;
          return this.runScript("init", this.prepareInitSettings(this.clearDatastore));
        }).then(() => {
          return this.connection.__addLimiter__(this.instance);
        }).then(() => {
          return this.runScript("register_client", [this.instance.queued()]);
        }).then(() => {
          var base;
          if (typeof (base = this.heartbeat = setInterval(() => {
            return this.runScript("heartbeat", []).catch((e) => {
              return this.instance.Events.trigger("error", e);
            });
          }, this.heartbeatInterval)).unref === "function") {
            base.unref();
          }
          return this.clients;
        });
      }
      __publish__(message) {
        var _this = this;
        return _asyncToGenerator2(function* () {
          var client;
          var _ref = yield _this.ready;
          client = _ref.client;
          return client.publish(_this.instance.channel(), `message:${message.toString()}`);
        })();
      }
      onMessage(channel, message) {
        var _this2 = this;
        return _asyncToGenerator2(function* () {
          var capacity, counter, data, drained, e, newCapacity, pos, priorityClient, rawCapacity, type;
          try {
            pos = message.indexOf(":");
            var _ref2 = [message.slice(0, pos), message.slice(pos + 1)];
            type = _ref2[0];
            data = _ref2[1];
            if (type === "capacity") {
              return yield _this2.instance._drainAll(data.length > 0 ? ~~data : void 0);
            } else if (type === "capacity-priority") {
              var _data$split = data.split(":");
              var _data$split2 = _slicedToArray2(_data$split, 3);
              rawCapacity = _data$split2[0];
              priorityClient = _data$split2[1];
              counter = _data$split2[2];
              capacity = rawCapacity.length > 0 ? ~~rawCapacity : void 0;
              if (priorityClient === _this2.clientId) {
                drained = yield _this2.instance._drainAll(capacity);
                newCapacity = capacity != null ? capacity - (drained || 0) : "";
                return yield _this2.clients.client.publish(_this2.instance.channel(), `capacity-priority:${newCapacity}::${counter}`);
              } else if (priorityClient === "") {
                clearTimeout(_this2.capacityPriorityCounters[counter]);
                delete _this2.capacityPriorityCounters[counter];
                return _this2.instance._drainAll(capacity);
              } else {
                return _this2.capacityPriorityCounters[counter] = setTimeout(
                  /* @__PURE__ */ _asyncToGenerator2(function* () {
                    var e2;
                    try {
                      delete _this2.capacityPriorityCounters[counter];
                      yield _this2.runScript("blacklist_client", [priorityClient]);
                      return yield _this2.instance._drainAll(capacity);
                    } catch (error) {
                      e2 = error;
                      return _this2.instance.Events.trigger("error", e2);
                    }
                  }),
                  1e3
                );
              }
            } else if (type === "message") {
              return _this2.instance.Events.trigger("message", data);
            } else if (type === "blocked") {
              return yield _this2.instance._dropAllQueued();
            }
          } catch (error) {
            e = error;
            return _this2.instance.Events.trigger("error", e);
          }
        })();
      }
      __disconnect__(flush) {
        clearInterval(this.heartbeat);
        if (this.sharedConnection) {
          return this.connection.__removeLimiter__(this.instance);
        } else {
          return this.connection.disconnect(flush);
        }
      }
      runScript(name, args) {
        var _this3 = this;
        return _asyncToGenerator2(function* () {
          if (!(name === "init" || name === "register_client")) {
            yield _this3.ready;
          }
          return new _this3.Promise((resolve, reject) => {
            var all_args, arr;
            all_args = [Date.now(), _this3.clientId].concat(args);
            _this3.instance.Events.trigger("debug", `Calling Redis script: ${name}.lua`, all_args);
            arr = _this3.connection.__scriptArgs__(name, _this3.originalId, all_args, function(err, replies) {
              if (err != null) {
                return reject(err);
              }
              return resolve(replies);
            });
            return _this3.connection.__scriptFn__(name)(...arr);
          }).catch((e) => {
            if (e.message === "SETTINGS_KEY_NOT_FOUND") {
              if (name === "heartbeat") {
                return _this3.Promise.resolve();
              } else {
                return _this3.runScript("init", _this3.prepareInitSettings(false)).then(() => {
                  return _this3.runScript(name, args);
                });
              }
            } else if (e.message === "UNKNOWN_CLIENT") {
              return _this3.runScript("register_client", [_this3.instance.queued()]).then(() => {
                return _this3.runScript(name, args);
              });
            } else {
              return _this3.Promise.reject(e);
            }
          });
        })();
      }
      prepareArray(arr) {
        var i, len, results, x;
        results = [];
        for (i = 0, len = arr.length; i < len; i++) {
          x = arr[i];
          results.push(x != null ? x.toString() : "");
        }
        return results;
      }
      prepareObject(obj) {
        var arr, k, v;
        arr = [];
        for (k in obj) {
          v = obj[k];
          arr.push(k, v != null ? v.toString() : "");
        }
        return arr;
      }
      prepareInitSettings(clear) {
        var args;
        args = this.prepareObject(Object.assign({}, this.storeOptions, {
          id: this.originalId,
          version: this.instance.version,
          groupTimeout: this.timeout,
          clientTimeout: this.clientTimeout
        }));
        args.unshift(clear ? 1 : 0, this.instance.version);
        return args;
      }
      convertBool(b) {
        return !!b;
      }
      __updateSettings__(options2) {
        var _this4 = this;
        return _asyncToGenerator2(function* () {
          yield _this4.runScript("update_settings", _this4.prepareObject(options2));
          return parser2.overwrite(options2, options2, _this4.storeOptions);
        })();
      }
      __running__() {
        return this.runScript("running", []);
      }
      __queued__() {
        return this.runScript("queued", []);
      }
      __done__() {
        return this.runScript("done", []);
      }
      __groupCheck__() {
        var _this5 = this;
        return _asyncToGenerator2(function* () {
          return _this5.convertBool(yield _this5.runScript("group_check", []));
        })();
      }
      __incrementReservoir__(incr) {
        return this.runScript("increment_reservoir", [incr]);
      }
      __currentReservoir__() {
        return this.runScript("current_reservoir", []);
      }
      __check__(weight) {
        var _this6 = this;
        return _asyncToGenerator2(function* () {
          return _this6.convertBool(yield _this6.runScript("check", _this6.prepareArray([weight])));
        })();
      }
      __register__(index, weight, expiration) {
        var _this7 = this;
        return _asyncToGenerator2(function* () {
          var reservoir, success, wait2;
          var _ref4 = yield _this7.runScript("register", _this7.prepareArray([index, weight, expiration]));
          var _ref5 = _slicedToArray2(_ref4, 3);
          success = _ref5[0];
          wait2 = _ref5[1];
          reservoir = _ref5[2];
          return {
            success: _this7.convertBool(success),
            wait: wait2,
            reservoir
          };
        })();
      }
      __submit__(queueLength, weight) {
        var _this8 = this;
        return _asyncToGenerator2(function* () {
          var blocked2, e, maxConcurrent, overweight, reachedHWM, strategy;
          try {
            var _ref6 = yield _this8.runScript("submit", _this8.prepareArray([queueLength, weight]));
            var _ref7 = _slicedToArray2(_ref6, 3);
            reachedHWM = _ref7[0];
            blocked2 = _ref7[1];
            strategy = _ref7[2];
            return {
              reachedHWM: _this8.convertBool(reachedHWM),
              blocked: _this8.convertBool(blocked2),
              strategy
            };
          } catch (error) {
            e = error;
            if (e.message.indexOf("OVERWEIGHT") === 0) {
              var _e$message$split = e.message.split(":");
              var _e$message$split2 = _slicedToArray2(_e$message$split, 3);
              overweight = _e$message$split2[0];
              weight = _e$message$split2[1];
              maxConcurrent = _e$message$split2[2];
              throw new BottleneckError(`Impossible to add a job having a weight of ${weight} to a limiter having a maxConcurrent setting of ${maxConcurrent}`);
            } else {
              throw e;
            }
          }
        })();
      }
      __free__(index, weight) {
        var _this9 = this;
        return _asyncToGenerator2(function* () {
          var running;
          running = yield _this9.runScript("free", _this9.prepareArray([index]));
          return {
            running
          };
        })();
      }
    };
    module2.exports = RedisDatastore;
  }
});

// node_modules/bottleneck/lib/States.js
var require_States = __commonJS({
  "node_modules/bottleneck/lib/States.js"(exports2, module2) {
    "use strict";
    var BottleneckError;
    var States;
    BottleneckError = require_BottleneckError();
    States = class States {
      constructor(status1) {
        this.status = status1;
        this._jobs = {};
        this.counts = this.status.map(function() {
          return 0;
        });
      }
      next(id) {
        var current, next;
        current = this._jobs[id];
        next = current + 1;
        if (current != null && next < this.status.length) {
          this.counts[current]--;
          this.counts[next]++;
          return this._jobs[id]++;
        } else if (current != null) {
          this.counts[current]--;
          return delete this._jobs[id];
        }
      }
      start(id) {
        var initial;
        initial = 0;
        this._jobs[id] = initial;
        return this.counts[initial]++;
      }
      remove(id) {
        var current;
        current = this._jobs[id];
        if (current != null) {
          this.counts[current]--;
          delete this._jobs[id];
        }
        return current != null;
      }
      jobStatus(id) {
        var ref;
        return (ref = this.status[this._jobs[id]]) != null ? ref : null;
      }
      statusJobs(status) {
        var k, pos, ref, results, v;
        if (status != null) {
          pos = this.status.indexOf(status);
          if (pos < 0) {
            throw new BottleneckError(`status must be one of ${this.status.join(", ")}`);
          }
          ref = this._jobs;
          results = [];
          for (k in ref) {
            v = ref[k];
            if (v === pos) {
              results.push(k);
            }
          }
          return results;
        } else {
          return Object.keys(this._jobs);
        }
      }
      statusCounts() {
        return this.counts.reduce((acc, v, i) => {
          acc[this.status[i]] = v;
          return acc;
        }, {});
      }
    };
    module2.exports = States;
  }
});

// node_modules/bottleneck/lib/Sync.js
var require_Sync = __commonJS({
  "node_modules/bottleneck/lib/Sync.js"(exports2, module2) {
    "use strict";
    function asyncGeneratorStep2(gen, resolve, reject, _next, _throw, key, arg) {
      try {
        var info2 = gen[key](arg);
        var value = info2.value;
      } catch (error) {
        reject(error);
        return;
      }
      if (info2.done) {
        resolve(value);
      } else {
        Promise.resolve(value).then(_next, _throw);
      }
    }
    function _asyncToGenerator2(fn) {
      return function() {
        var self = this, args = arguments;
        return new Promise(function(resolve, reject) {
          var gen = fn.apply(self, args);
          function _next(value) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "next", value);
          }
          function _throw(err) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "throw", err);
          }
          _next(void 0);
        });
      };
    }
    var DLList;
    var Sync;
    DLList = require_DLList();
    Sync = class Sync {
      constructor(name, Promise2) {
        this.schedule = this.schedule.bind(this);
        this.name = name;
        this.Promise = Promise2;
        this._running = 0;
        this._queue = new DLList();
      }
      isEmpty() {
        return this._queue.length === 0;
      }
      _tryToRun() {
        var _this = this;
        return _asyncToGenerator2(function* () {
          var args, cb, error, reject, resolve, returned, task2;
          if (_this._running < 1 && _this._queue.length > 0) {
            _this._running++;
            var _this$_queue$shift = _this._queue.shift();
            task2 = _this$_queue$shift.task;
            args = _this$_queue$shift.args;
            resolve = _this$_queue$shift.resolve;
            reject = _this$_queue$shift.reject;
            cb = yield _asyncToGenerator2(function* () {
              try {
                returned = yield task2(...args);
                return function() {
                  return resolve(returned);
                };
              } catch (error1) {
                error = error1;
                return function() {
                  return reject(error);
                };
              }
            })();
            _this._running--;
            _this._tryToRun();
            return cb();
          }
        })();
      }
      schedule(task2, ...args) {
        var promise, reject, resolve;
        resolve = reject = null;
        promise = new this.Promise(function(_resolve2, _reject) {
          resolve = _resolve2;
          return reject = _reject;
        });
        this._queue.push({
          task: task2,
          args,
          resolve,
          reject
        });
        this._tryToRun();
        return promise;
      }
    };
    module2.exports = Sync;
  }
});

// node_modules/bottleneck/lib/version.json
var require_version = __commonJS({
  "node_modules/bottleneck/lib/version.json"(exports2, module2) {
    module2.exports = { version: "2.19.5" };
  }
});

// node_modules/bottleneck/lib/Group.js
var require_Group = __commonJS({
  "node_modules/bottleneck/lib/Group.js"(exports2, module2) {
    "use strict";
    function _slicedToArray2(arr, i) {
      return _arrayWithHoles2(arr) || _iterableToArrayLimit2(arr, i) || _nonIterableRest2();
    }
    function _nonIterableRest2() {
      throw new TypeError("Invalid attempt to destructure non-iterable instance");
    }
    function _iterableToArrayLimit2(arr, i) {
      var _arr = [];
      var _n = true;
      var _d = false;
      var _e = void 0;
      try {
        for (var _i = arr[Symbol.iterator](), _s; !(_n = (_s = _i.next()).done); _n = true) {
          _arr.push(_s.value);
          if (i && _arr.length === i) break;
        }
      } catch (err) {
        _d = true;
        _e = err;
      } finally {
        try {
          if (!_n && _i["return"] != null) _i["return"]();
        } finally {
          if (_d) throw _e;
        }
      }
      return _arr;
    }
    function _arrayWithHoles2(arr) {
      if (Array.isArray(arr)) return arr;
    }
    function asyncGeneratorStep2(gen, resolve, reject, _next, _throw, key, arg) {
      try {
        var info2 = gen[key](arg);
        var value = info2.value;
      } catch (error) {
        reject(error);
        return;
      }
      if (info2.done) {
        resolve(value);
      } else {
        Promise.resolve(value).then(_next, _throw);
      }
    }
    function _asyncToGenerator2(fn) {
      return function() {
        var self = this, args = arguments;
        return new Promise(function(resolve, reject) {
          var gen = fn.apply(self, args);
          function _next(value) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "next", value);
          }
          function _throw(err) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "throw", err);
          }
          _next(void 0);
        });
      };
    }
    var Events2;
    var Group;
    var IORedisConnection2;
    var RedisConnection2;
    var Scripts2;
    var parser2;
    parser2 = require_parser();
    Events2 = require_Events();
    RedisConnection2 = require_RedisConnection();
    IORedisConnection2 = require_IORedisConnection();
    Scripts2 = require_Scripts();
    Group = function() {
      class Group2 {
        constructor(limiterOptions = {}) {
          this.deleteKey = this.deleteKey.bind(this);
          this.limiterOptions = limiterOptions;
          parser2.load(this.limiterOptions, this.defaults, this);
          this.Events = new Events2(this);
          this.instances = {};
          this.Bottleneck = require_Bottleneck();
          this._startAutoCleanup();
          this.sharedConnection = this.connection != null;
          if (this.connection == null) {
            if (this.limiterOptions.datastore === "redis") {
              this.connection = new RedisConnection2(Object.assign({}, this.limiterOptions, {
                Events: this.Events
              }));
            } else if (this.limiterOptions.datastore === "ioredis") {
              this.connection = new IORedisConnection2(Object.assign({}, this.limiterOptions, {
                Events: this.Events
              }));
            }
          }
        }
        key(key = "") {
          var ref;
          return (ref = this.instances[key]) != null ? ref : (() => {
            var limiter;
            limiter = this.instances[key] = new this.Bottleneck(Object.assign(this.limiterOptions, {
              id: `${this.id}-${key}`,
              timeout: this.timeout,
              connection: this.connection
            }));
            this.Events.trigger("created", limiter, key);
            return limiter;
          })();
        }
        deleteKey(key = "") {
          var _this = this;
          return _asyncToGenerator2(function* () {
            var deleted, instance;
            instance = _this.instances[key];
            if (_this.connection) {
              deleted = yield _this.connection.__runCommand__(["del", ...Scripts2.allKeys(`${_this.id}-${key}`)]);
            }
            if (instance != null) {
              delete _this.instances[key];
              yield instance.disconnect();
            }
            return instance != null || deleted > 0;
          })();
        }
        limiters() {
          var k, ref, results, v;
          ref = this.instances;
          results = [];
          for (k in ref) {
            v = ref[k];
            results.push({
              key: k,
              limiter: v
            });
          }
          return results;
        }
        keys() {
          return Object.keys(this.instances);
        }
        clusterKeys() {
          var _this2 = this;
          return _asyncToGenerator2(function* () {
            var cursor, end, found, i, k, keys, len, next, start;
            if (_this2.connection == null) {
              return _this2.Promise.resolve(_this2.keys());
            }
            keys = [];
            cursor = null;
            start = `b_${_this2.id}-`.length;
            end = "_settings".length;
            while (cursor !== 0) {
              var _ref = yield _this2.connection.__runCommand__(["scan", cursor != null ? cursor : 0, "match", `b_${_this2.id}-*_settings`, "count", 1e4]);
              var _ref2 = _slicedToArray2(_ref, 2);
              next = _ref2[0];
              found = _ref2[1];
              cursor = ~~next;
              for (i = 0, len = found.length; i < len; i++) {
                k = found[i];
                keys.push(k.slice(start, -end));
              }
            }
            return keys;
          })();
        }
        _startAutoCleanup() {
          var _this3 = this;
          var base;
          clearInterval(this.interval);
          return typeof (base = this.interval = setInterval(
            /* @__PURE__ */ _asyncToGenerator2(function* () {
              var e, k, ref, results, time, v;
              time = Date.now();
              ref = _this3.instances;
              results = [];
              for (k in ref) {
                v = ref[k];
                try {
                  if (yield v._store.__groupCheck__(time)) {
                    results.push(_this3.deleteKey(k));
                  } else {
                    results.push(void 0);
                  }
                } catch (error) {
                  e = error;
                  results.push(v.Events.trigger("error", e));
                }
              }
              return results;
            }),
            this.timeout / 2
          )).unref === "function" ? base.unref() : void 0;
        }
        updateSettings(options2 = {}) {
          parser2.overwrite(options2, this.defaults, this);
          parser2.overwrite(options2, options2, this.limiterOptions);
          if (options2.timeout != null) {
            return this._startAutoCleanup();
          }
        }
        disconnect(flush = true) {
          var ref;
          if (!this.sharedConnection) {
            return (ref = this.connection) != null ? ref.disconnect(flush) : void 0;
          }
        }
      }
      ;
      Group2.prototype.defaults = {
        timeout: 1e3 * 60 * 5,
        connection: null,
        Promise,
        id: "group-key"
      };
      return Group2;
    }.call(void 0);
    module2.exports = Group;
  }
});

// node_modules/bottleneck/lib/Batcher.js
var require_Batcher = __commonJS({
  "node_modules/bottleneck/lib/Batcher.js"(exports2, module2) {
    "use strict";
    var Batcher;
    var Events2;
    var parser2;
    parser2 = require_parser();
    Events2 = require_Events();
    Batcher = function() {
      class Batcher2 {
        constructor(options2 = {}) {
          this.options = options2;
          parser2.load(this.options, this.defaults, this);
          this.Events = new Events2(this);
          this._arr = [];
          this._resetPromise();
          this._lastFlush = Date.now();
        }
        _resetPromise() {
          return this._promise = new this.Promise((res, rej) => {
            return this._resolve = res;
          });
        }
        _flush() {
          clearTimeout(this._timeout);
          this._lastFlush = Date.now();
          this._resolve();
          this.Events.trigger("batch", this._arr);
          this._arr = [];
          return this._resetPromise();
        }
        add(data) {
          var ret;
          this._arr.push(data);
          ret = this._promise;
          if (this._arr.length === this.maxSize) {
            this._flush();
          } else if (this.maxTime != null && this._arr.length === 1) {
            this._timeout = setTimeout(() => {
              return this._flush();
            }, this.maxTime);
          }
          return ret;
        }
      }
      ;
      Batcher2.prototype.defaults = {
        maxTime: null,
        maxSize: null,
        Promise
      };
      return Batcher2;
    }.call(void 0);
    module2.exports = Batcher;
  }
});

// node_modules/bottleneck/lib/Bottleneck.js
var require_Bottleneck = __commonJS({
  "node_modules/bottleneck/lib/Bottleneck.js"(exports2, module2) {
    "use strict";
    function _slicedToArray2(arr, i) {
      return _arrayWithHoles2(arr) || _iterableToArrayLimit2(arr, i) || _nonIterableRest2();
    }
    function _iterableToArrayLimit2(arr, i) {
      var _arr = [];
      var _n = true;
      var _d = false;
      var _e = void 0;
      try {
        for (var _i = arr[Symbol.iterator](), _s; !(_n = (_s = _i.next()).done); _n = true) {
          _arr.push(_s.value);
          if (i && _arr.length === i) break;
        }
      } catch (err) {
        _d = true;
        _e = err;
      } finally {
        try {
          if (!_n && _i["return"] != null) _i["return"]();
        } finally {
          if (_d) throw _e;
        }
      }
      return _arr;
    }
    function _toArray(arr) {
      return _arrayWithHoles2(arr) || _iterableToArray(arr) || _nonIterableRest2();
    }
    function _nonIterableRest2() {
      throw new TypeError("Invalid attempt to destructure non-iterable instance");
    }
    function _iterableToArray(iter) {
      if (Symbol.iterator in Object(iter) || Object.prototype.toString.call(iter) === "[object Arguments]") return Array.from(iter);
    }
    function _arrayWithHoles2(arr) {
      if (Array.isArray(arr)) return arr;
    }
    function asyncGeneratorStep2(gen, resolve, reject, _next, _throw, key, arg) {
      try {
        var info2 = gen[key](arg);
        var value = info2.value;
      } catch (error) {
        reject(error);
        return;
      }
      if (info2.done) {
        resolve(value);
      } else {
        Promise.resolve(value).then(_next, _throw);
      }
    }
    function _asyncToGenerator2(fn) {
      return function() {
        var self = this, args = arguments;
        return new Promise(function(resolve, reject) {
          var gen = fn.apply(self, args);
          function _next(value) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "next", value);
          }
          function _throw(err) {
            asyncGeneratorStep2(gen, resolve, reject, _next, _throw, "throw", err);
          }
          _next(void 0);
        });
      };
    }
    var Bottleneck3;
    var DEFAULT_PRIORITY;
    var Events2;
    var Job;
    var LocalDatastore;
    var NUM_PRIORITIES;
    var Queues;
    var RedisDatastore;
    var States;
    var Sync;
    var parser2;
    var splice = [].splice;
    NUM_PRIORITIES = 10;
    DEFAULT_PRIORITY = 5;
    parser2 = require_parser();
    Queues = require_Queues();
    Job = require_Job();
    LocalDatastore = require_LocalDatastore();
    RedisDatastore = require_RedisDatastore();
    Events2 = require_Events();
    States = require_States();
    Sync = require_Sync();
    Bottleneck3 = function() {
      class Bottleneck4 {
        constructor(options2 = {}, ...invalid) {
          var storeInstanceOptions, storeOptions;
          this._addToQueue = this._addToQueue.bind(this);
          this._validateOptions(options2, invalid);
          parser2.load(options2, this.instanceDefaults, this);
          this._queues = new Queues(NUM_PRIORITIES);
          this._scheduled = {};
          this._states = new States(["RECEIVED", "QUEUED", "RUNNING", "EXECUTING"].concat(this.trackDoneStatus ? ["DONE"] : []));
          this._limiter = null;
          this.Events = new Events2(this);
          this._submitLock = new Sync("submit", this.Promise);
          this._registerLock = new Sync("register", this.Promise);
          storeOptions = parser2.load(options2, this.storeDefaults, {});
          this._store = function() {
            if (this.datastore === "redis" || this.datastore === "ioredis" || this.connection != null) {
              storeInstanceOptions = parser2.load(options2, this.redisStoreDefaults, {});
              return new RedisDatastore(this, storeOptions, storeInstanceOptions);
            } else if (this.datastore === "local") {
              storeInstanceOptions = parser2.load(options2, this.localStoreDefaults, {});
              return new LocalDatastore(this, storeOptions, storeInstanceOptions);
            } else {
              throw new Bottleneck4.prototype.BottleneckError(`Invalid datastore type: ${this.datastore}`);
            }
          }.call(this);
          this._queues.on("leftzero", () => {
            var ref;
            return (ref = this._store.heartbeat) != null ? typeof ref.ref === "function" ? ref.ref() : void 0 : void 0;
          });
          this._queues.on("zero", () => {
            var ref;
            return (ref = this._store.heartbeat) != null ? typeof ref.unref === "function" ? ref.unref() : void 0 : void 0;
          });
        }
        _validateOptions(options2, invalid) {
          if (!(options2 != null && typeof options2 === "object" && invalid.length === 0)) {
            throw new Bottleneck4.prototype.BottleneckError("Bottleneck v2 takes a single object argument. Refer to https://github.com/SGrondin/bottleneck#upgrading-to-v2 if you're upgrading from Bottleneck v1.");
          }
        }
        ready() {
          return this._store.ready;
        }
        clients() {
          return this._store.clients;
        }
        channel() {
          return `b_${this.id}`;
        }
        channel_client() {
          return `b_${this.id}_${this._store.clientId}`;
        }
        publish(message) {
          return this._store.__publish__(message);
        }
        disconnect(flush = true) {
          return this._store.__disconnect__(flush);
        }
        chain(_limiter) {
          this._limiter = _limiter;
          return this;
        }
        queued(priority) {
          return this._queues.queued(priority);
        }
        clusterQueued() {
          return this._store.__queued__();
        }
        empty() {
          return this.queued() === 0 && this._submitLock.isEmpty();
        }
        running() {
          return this._store.__running__();
        }
        done() {
          return this._store.__done__();
        }
        jobStatus(id) {
          return this._states.jobStatus(id);
        }
        jobs(status) {
          return this._states.statusJobs(status);
        }
        counts() {
          return this._states.statusCounts();
        }
        _randomIndex() {
          return Math.random().toString(36).slice(2);
        }
        check(weight = 1) {
          return this._store.__check__(weight);
        }
        _clearGlobalState(index) {
          if (this._scheduled[index] != null) {
            clearTimeout(this._scheduled[index].expiration);
            delete this._scheduled[index];
            return true;
          } else {
            return false;
          }
        }
        _free(index, job, options2, eventInfo) {
          var _this = this;
          return _asyncToGenerator2(function* () {
            var e, running;
            try {
              var _ref = yield _this._store.__free__(index, options2.weight);
              running = _ref.running;
              _this.Events.trigger("debug", `Freed ${options2.id}`, eventInfo);
              if (running === 0 && _this.empty()) {
                return _this.Events.trigger("idle");
              }
            } catch (error1) {
              e = error1;
              return _this.Events.trigger("error", e);
            }
          })();
        }
        _run(index, job, wait2) {
          var clearGlobalState, free, run2;
          job.doRun();
          clearGlobalState = this._clearGlobalState.bind(this, index);
          run2 = this._run.bind(this, index, job);
          free = this._free.bind(this, index, job);
          return this._scheduled[index] = {
            timeout: setTimeout(() => {
              return job.doExecute(this._limiter, clearGlobalState, run2, free);
            }, wait2),
            expiration: job.options.expiration != null ? setTimeout(function() {
              return job.doExpire(clearGlobalState, run2, free);
            }, wait2 + job.options.expiration) : void 0,
            job
          };
        }
        _drainOne(capacity) {
          return this._registerLock.schedule(() => {
            var args, index, next, options2, queue;
            if (this.queued() === 0) {
              return this.Promise.resolve(null);
            }
            queue = this._queues.getFirst();
            var _next2 = next = queue.first();
            options2 = _next2.options;
            args = _next2.args;
            if (capacity != null && options2.weight > capacity) {
              return this.Promise.resolve(null);
            }
            this.Events.trigger("debug", `Draining ${options2.id}`, {
              args,
              options: options2
            });
            index = this._randomIndex();
            return this._store.__register__(index, options2.weight, options2.expiration).then(({
              success,
              wait: wait2,
              reservoir
            }) => {
              var empty;
              this.Events.trigger("debug", `Drained ${options2.id}`, {
                success,
                args,
                options: options2
              });
              if (success) {
                queue.shift();
                empty = this.empty();
                if (empty) {
                  this.Events.trigger("empty");
                }
                if (reservoir === 0) {
                  this.Events.trigger("depleted", empty);
                }
                this._run(index, next, wait2);
                return this.Promise.resolve(options2.weight);
              } else {
                return this.Promise.resolve(null);
              }
            });
          });
        }
        _drainAll(capacity, total = 0) {
          return this._drainOne(capacity).then((drained) => {
            var newCapacity;
            if (drained != null) {
              newCapacity = capacity != null ? capacity - drained : capacity;
              return this._drainAll(newCapacity, total + drained);
            } else {
              return this.Promise.resolve(total);
            }
          }).catch((e) => {
            return this.Events.trigger("error", e);
          });
        }
        _dropAllQueued(message) {
          return this._queues.shiftAll(function(job) {
            return job.doDrop({
              message
            });
          });
        }
        stop(options2 = {}) {
          var done2, waitForExecuting;
          options2 = parser2.load(options2, this.stopDefaults);
          waitForExecuting = (at) => {
            var finished;
            finished = () => {
              var counts;
              counts = this._states.counts;
              return counts[0] + counts[1] + counts[2] + counts[3] === at;
            };
            return new this.Promise((resolve, reject) => {
              if (finished()) {
                return resolve();
              } else {
                return this.on("done", () => {
                  if (finished()) {
                    this.removeAllListeners("done");
                    return resolve();
                  }
                });
              }
            });
          };
          done2 = options2.dropWaitingJobs ? (this._run = function(index, next) {
            return next.doDrop({
              message: options2.dropErrorMessage
            });
          }, this._drainOne = () => {
            return this.Promise.resolve(null);
          }, this._registerLock.schedule(() => {
            return this._submitLock.schedule(() => {
              var k, ref, v;
              ref = this._scheduled;
              for (k in ref) {
                v = ref[k];
                if (this.jobStatus(v.job.options.id) === "RUNNING") {
                  clearTimeout(v.timeout);
                  clearTimeout(v.expiration);
                  v.job.doDrop({
                    message: options2.dropErrorMessage
                  });
                }
              }
              this._dropAllQueued(options2.dropErrorMessage);
              return waitForExecuting(0);
            });
          })) : this.schedule({
            priority: NUM_PRIORITIES - 1,
            weight: 0
          }, () => {
            return waitForExecuting(1);
          });
          this._receive = function(job) {
            return job._reject(new Bottleneck4.prototype.BottleneckError(options2.enqueueErrorMessage));
          };
          this.stop = () => {
            return this.Promise.reject(new Bottleneck4.prototype.BottleneckError("stop() has already been called"));
          };
          return done2;
        }
        _addToQueue(job) {
          var _this2 = this;
          return _asyncToGenerator2(function* () {
            var args, blocked2, error, options2, reachedHWM, shifted, strategy;
            args = job.args;
            options2 = job.options;
            try {
              var _ref2 = yield _this2._store.__submit__(_this2.queued(), options2.weight);
              reachedHWM = _ref2.reachedHWM;
              blocked2 = _ref2.blocked;
              strategy = _ref2.strategy;
            } catch (error1) {
              error = error1;
              _this2.Events.trigger("debug", `Could not queue ${options2.id}`, {
                args,
                options: options2,
                error
              });
              job.doDrop({
                error
              });
              return false;
            }
            if (blocked2) {
              job.doDrop();
              return true;
            } else if (reachedHWM) {
              shifted = strategy === Bottleneck4.prototype.strategy.LEAK ? _this2._queues.shiftLastFrom(options2.priority) : strategy === Bottleneck4.prototype.strategy.OVERFLOW_PRIORITY ? _this2._queues.shiftLastFrom(options2.priority + 1) : strategy === Bottleneck4.prototype.strategy.OVERFLOW ? job : void 0;
              if (shifted != null) {
                shifted.doDrop();
              }
              if (shifted == null || strategy === Bottleneck4.prototype.strategy.OVERFLOW) {
                if (shifted == null) {
                  job.doDrop();
                }
                return reachedHWM;
              }
            }
            job.doQueue(reachedHWM, blocked2);
            _this2._queues.push(job);
            yield _this2._drainAll();
            return reachedHWM;
          })();
        }
        _receive(job) {
          if (this._states.jobStatus(job.options.id) != null) {
            job._reject(new Bottleneck4.prototype.BottleneckError(`A job with the same id already exists (id=${job.options.id})`));
            return false;
          } else {
            job.doReceive();
            return this._submitLock.schedule(this._addToQueue, job);
          }
        }
        submit(...args) {
          var cb, fn, job, options2, ref, ref1, task2;
          if (typeof args[0] === "function") {
            var _ref3, _ref4, _splice$call, _splice$call2;
            ref = args, _ref3 = ref, _ref4 = _toArray(_ref3), fn = _ref4[0], args = _ref4.slice(1), _ref3, _splice$call = splice.call(args, -1), _splice$call2 = _slicedToArray2(_splice$call, 1), cb = _splice$call2[0], _splice$call;
            options2 = parser2.load({}, this.jobDefaults);
          } else {
            var _ref5, _ref6, _splice$call3, _splice$call4;
            ref1 = args, _ref5 = ref1, _ref6 = _toArray(_ref5), options2 = _ref6[0], fn = _ref6[1], args = _ref6.slice(2), _ref5, _splice$call3 = splice.call(args, -1), _splice$call4 = _slicedToArray2(_splice$call3, 1), cb = _splice$call4[0], _splice$call3;
            options2 = parser2.load(options2, this.jobDefaults);
          }
          task2 = (...args2) => {
            return new this.Promise(function(resolve, reject) {
              return fn(...args2, function(...args3) {
                return (args3[0] != null ? reject : resolve)(args3);
              });
            });
          };
          job = new Job(task2, args, options2, this.jobDefaults, this.rejectOnDrop, this.Events, this._states, this.Promise);
          job.promise.then(function(args2) {
            return typeof cb === "function" ? cb(...args2) : void 0;
          }).catch(function(args2) {
            if (Array.isArray(args2)) {
              return typeof cb === "function" ? cb(...args2) : void 0;
            } else {
              return typeof cb === "function" ? cb(args2) : void 0;
            }
          });
          return this._receive(job);
        }
        schedule(...args) {
          var job, options2, task2;
          if (typeof args[0] === "function") {
            var _args = args;
            var _args2 = _toArray(_args);
            task2 = _args2[0];
            args = _args2.slice(1);
            options2 = {};
          } else {
            var _args3 = args;
            var _args4 = _toArray(_args3);
            options2 = _args4[0];
            task2 = _args4[1];
            args = _args4.slice(2);
          }
          job = new Job(task2, args, options2, this.jobDefaults, this.rejectOnDrop, this.Events, this._states, this.Promise);
          this._receive(job);
          return job.promise;
        }
        wrap(fn) {
          var schedule2, wrapped;
          schedule2 = this.schedule.bind(this);
          wrapped = function wrapped2(...args) {
            return schedule2(fn.bind(this), ...args);
          };
          wrapped.withOptions = function(options2, ...args) {
            return schedule2(options2, fn, ...args);
          };
          return wrapped;
        }
        updateSettings(options2 = {}) {
          var _this3 = this;
          return _asyncToGenerator2(function* () {
            yield _this3._store.__updateSettings__(parser2.overwrite(options2, _this3.storeDefaults));
            parser2.overwrite(options2, _this3.instanceDefaults, _this3);
            return _this3;
          })();
        }
        currentReservoir() {
          return this._store.__currentReservoir__();
        }
        incrementReservoir(incr = 0) {
          return this._store.__incrementReservoir__(incr);
        }
      }
      ;
      Bottleneck4.default = Bottleneck4;
      Bottleneck4.Events = Events2;
      Bottleneck4.version = Bottleneck4.prototype.version = require_version().version;
      Bottleneck4.strategy = Bottleneck4.prototype.strategy = {
        LEAK: 1,
        OVERFLOW: 2,
        OVERFLOW_PRIORITY: 4,
        BLOCK: 3
      };
      Bottleneck4.BottleneckError = Bottleneck4.prototype.BottleneckError = require_BottleneckError();
      Bottleneck4.Group = Bottleneck4.prototype.Group = require_Group();
      Bottleneck4.RedisConnection = Bottleneck4.prototype.RedisConnection = require_RedisConnection();
      Bottleneck4.IORedisConnection = Bottleneck4.prototype.IORedisConnection = require_IORedisConnection();
      Bottleneck4.Batcher = Bottleneck4.prototype.Batcher = require_Batcher();
      Bottleneck4.prototype.jobDefaults = {
        priority: DEFAULT_PRIORITY,
        weight: 1,
        expiration: null,
        id: "<no-id>"
      };
      Bottleneck4.prototype.storeDefaults = {
        maxConcurrent: null,
        minTime: 0,
        highWater: null,
        strategy: Bottleneck4.prototype.strategy.LEAK,
        penalty: null,
        reservoir: null,
        reservoirRefreshInterval: null,
        reservoirRefreshAmount: null,
        reservoirIncreaseInterval: null,
        reservoirIncreaseAmount: null,
        reservoirIncreaseMaximum: null
      };
      Bottleneck4.prototype.localStoreDefaults = {
        Promise,
        timeout: null,
        heartbeatInterval: 250
      };
      Bottleneck4.prototype.redisStoreDefaults = {
        Promise,
        timeout: null,
        heartbeatInterval: 5e3,
        clientTimeout: 1e4,
        Redis: null,
        clientOptions: {},
        clusterNodes: null,
        clearDatastore: false,
        connection: null
      };
      Bottleneck4.prototype.instanceDefaults = {
        datastore: "local",
        connection: null,
        id: "<no-id>",
        rejectOnDrop: true,
        trackDoneStatus: false,
        Promise
      };
      Bottleneck4.prototype.stopDefaults = {
        enqueueErrorMessage: "This limiter has been stopped and cannot accept new jobs.",
        dropWaitingJobs: true,
        dropErrorMessage: "This limiter has been stopped."
      };
      return Bottleneck4;
    }.call(void 0);
    module2.exports = Bottleneck3;
  }
});

// node_modules/bottleneck/lib/index.js
var require_lib = __commonJS({
  "node_modules/bottleneck/lib/index.js"(exports2, module2) {
    "use strict";
    module2.exports = require_Bottleneck();
  }
});

// node_modules/get-caller-file/index.js
var require_get_caller_file = __commonJS({
  "node_modules/get-caller-file/index.js"(exports2, module2) {
    "use strict";
    module2.exports = function getCallerFile(position) {
      if (position === void 0) {
        position = 2;
      }
      if (position >= Error.stackTraceLimit) {
        throw new TypeError("getCallerFile(position) requires position be less then Error.stackTraceLimit but position was: `" + position + "` and Error.stackTraceLimit was: `" + Error.stackTraceLimit + "`");
      }
      var oldPrepareStackTrace = Error.prepareStackTrace;
      Error.prepareStackTrace = function(_, stack2) {
        return stack2;
      };
      var stack = new Error().stack;
      Error.prepareStackTrace = oldPrepareStackTrace;
      if (stack !== null && typeof stack === "object") {
        return stack[position] ? stack[position].getFileName() : void 0;
      }
    };
  }
});

// node_modules/pino-http/logger.js
var require_logger = __commonJS({
  "node_modules/pino-http/logger.js"(exports2, module2) {
    "use strict";
    var { pino: pino2, symbols: { stringifySym, chindingsSym } } = require_pino();
    var serializers = require_pino_std_serializers();
    var getCallerFile = require_get_caller_file();
    var startTime2 = /* @__PURE__ */ Symbol("startTime");
    var reqObject = /* @__PURE__ */ Symbol("reqObject");
    function pinoLogger(opts, stream) {
      if (opts && opts._writableState) {
        stream = opts;
        opts = null;
      }
      opts = Object.assign({}, opts);
      opts.customAttributeKeys = opts.customAttributeKeys || {};
      const reqKey = opts.customAttributeKeys.req || "req";
      const resKey = opts.customAttributeKeys.res || "res";
      const errKey = opts.customAttributeKeys.err || "err";
      const requestIdKey = opts.customAttributeKeys.reqId || "reqId";
      const responseTimeKey = opts.customAttributeKeys.responseTime || "responseTime";
      delete opts.customAttributeKeys;
      const customProps = opts.customProps || void 0;
      opts.wrapSerializers = "wrapSerializers" in opts ? opts.wrapSerializers : true;
      if (opts.wrapSerializers) {
        opts.serializers = Object.assign({}, opts.serializers);
        const requestSerializer = opts.serializers[reqKey] || opts.serializers.req || serializers.req;
        const responseSerializer = opts.serializers[resKey] || opts.serializers.res || serializers.res;
        const errorSerializer = opts.serializers[errKey] || opts.serializers.err || serializers.err;
        opts.serializers[reqKey] = serializers.wrapRequestSerializer(requestSerializer);
        opts.serializers[resKey] = serializers.wrapResponseSerializer(responseSerializer);
        opts.serializers[errKey] = serializers.wrapErrorSerializer(errorSerializer);
      }
      delete opts.wrapSerializers;
      if (opts.useLevel && opts.customLogLevel) {
        throw new Error("You can't pass 'useLevel' and 'customLogLevel' together");
      }
      function getValidLogLevel(level, defaultValue = "info") {
        if (level && typeof level === "string") {
          const logLevel = level.trim();
          if (validLogLevels.includes(logLevel) === true) {
            return logLevel;
          }
        }
        return defaultValue;
      }
      function getLogLevelFromCustomLogLevel(customLogLevel2, useLevel2, res, err, req) {
        return customLogLevel2 ? getValidLogLevel(customLogLevel2(req, res, err), useLevel2) : useLevel2;
      }
      const customLogLevel = opts.customLogLevel;
      delete opts.customLogLevel;
      const theStream = opts.stream || stream;
      delete opts.stream;
      const autoLogging = opts.autoLogging !== false;
      const autoLoggingIgnore = opts.autoLogging && opts.autoLogging.ignore ? opts.autoLogging.ignore : null;
      delete opts.autoLogging;
      const onRequestReceivedObject = getFunctionOrDefault(opts.customReceivedObject, void 0);
      const receivedMessage = getFunctionOrDefault(opts.customReceivedMessage, void 0);
      const onRequestSuccessObject = getFunctionOrDefault(opts.customSuccessObject, defaultSuccessfulRequestObjectProvider);
      const successMessage = getFunctionOrDefault(opts.customSuccessMessage, defaultSuccessfulRequestMessageProvider);
      const onRequestErrorObject = getFunctionOrDefault(opts.customErrorObject, defaultFailedRequestObjectProvider);
      const errorMessage = getFunctionOrDefault(opts.customErrorMessage, defaultFailedRequestMessageProvider);
      delete opts.customSuccessfulMessage;
      delete opts.customErroredMessage;
      const quietReqLogger = !!opts.quietReqLogger;
      const quietResLogger = !!opts.quietResLogger;
      const logger = wrapChild(opts, theStream);
      const validLogLevels = Object.keys(logger.levels.values).concat("silent");
      const useLevel = getValidLogLevel(opts.useLevel);
      delete opts.useLevel;
      const genReqId = reqIdGenFactory(opts.genReqId);
      const result = (req, res, next) => {
        return loggingMiddleware(logger, req, res, next);
      };
      result.logger = logger;
      return result;
      function onResFinished(res, logger2, err) {
        let log = logger2;
        const responseTime = Date.now() - res[startTime2];
        const req = res[reqObject];
        const level = getLogLevelFromCustomLogLevel(customLogLevel, useLevel, res, err, req);
        if (level === "silent") {
          return;
        }
        const customPropBindings = typeof customProps === "function" ? customProps(req, res) : customProps;
        if (customPropBindings) {
          const customPropBindingStr = logger2[stringifySym](customPropBindings).replace(/[{}]/g, "");
          const customPropBindingsStr = logger2[chindingsSym];
          if (!customPropBindingsStr.includes(customPropBindingStr)) {
            log = logger2.child(customPropBindings);
          }
        }
        if (err || res.err || res.statusCode >= 500) {
          const error = err || res.err || new Error("failed with status code " + res.statusCode);
          log[level](
            onRequestErrorObject(req, res, error, {
              [resKey]: res,
              [errKey]: error,
              [responseTimeKey]: responseTime
            }),
            errorMessage(req, res, error, responseTime)
          );
          return;
        }
        log[level](
          onRequestSuccessObject(req, res, {
            [resKey]: res,
            [responseTimeKey]: responseTime
          }),
          successMessage(req, res, responseTime)
        );
      }
      function loggingMiddleware(logger2, req, res, next) {
        let shouldLogSuccess = true;
        req.id = req.id || genReqId(req, res);
        const log = quietReqLogger ? logger2.child({ [requestIdKey]: req.id }) : logger2;
        let fullReqLogger = log.child({ [reqKey]: req });
        const customPropBindings = typeof customProps === "function" ? customProps(req, res) : customProps;
        if (customPropBindings) {
          fullReqLogger = fullReqLogger.child(customPropBindings);
        }
        const responseLogger = quietResLogger ? log : fullReqLogger;
        const requestLogger = quietReqLogger ? log : fullReqLogger;
        if (!res.log) {
          res.log = responseLogger;
        }
        if (Array.isArray(res.allLogs) === false) {
          res.allLogs = [];
        }
        res.allLogs.push(responseLogger);
        if (!req.log) {
          req.log = requestLogger;
        }
        if (!req.allLogs) {
          req.allLogs = [];
        }
        req.allLogs.push(requestLogger);
        res[startTime2] = res[startTime2] || Date.now();
        res[reqObject] = req;
        const onResponseComplete = (err) => {
          res.removeListener("close", onResponseComplete);
          res.removeListener("finish", onResponseComplete);
          res.removeListener("error", onResponseComplete);
          return onResFinished(res, responseLogger, err);
        };
        if (autoLogging) {
          if (autoLoggingIgnore !== null && shouldLogSuccess === true) {
            const isIgnored = autoLoggingIgnore(req);
            shouldLogSuccess = !isIgnored;
          }
          if (shouldLogSuccess) {
            const shouldLogReceived = receivedMessage !== void 0 || onRequestReceivedObject !== void 0;
            if (shouldLogReceived) {
              const level = getLogLevelFromCustomLogLevel(customLogLevel, useLevel, res, void 0, req);
              const receivedObjectResult = onRequestReceivedObject !== void 0 ? onRequestReceivedObject(req, res, void 0) : {};
              const receivedStringResult = receivedMessage !== void 0 ? receivedMessage(req, res) : void 0;
              requestLogger[level](receivedObjectResult, receivedStringResult);
            }
            res.on("close", onResponseComplete);
            res.on("finish", onResponseComplete);
          }
          res.on("error", onResponseComplete);
        }
        if (next) {
          next();
        }
      }
    }
    function wrapChild(opts, stream) {
      const prevLogger = opts.logger;
      const prevGenReqId = opts.genReqId;
      let logger = null;
      if (prevLogger) {
        opts.logger = void 0;
        opts.genReqId = void 0;
        logger = prevLogger.child({}, opts);
        opts.logger = prevLogger;
        opts.genReqId = prevGenReqId;
      } else {
        if (opts.transport && !opts.transport.caller) {
          opts.transport.caller = getCallerFile();
        }
        logger = pino2(opts, stream);
      }
      return logger;
    }
    function reqIdGenFactory(func) {
      if (typeof func === "function") return func;
      const maxInt = 2147483647;
      let nextReqId = 0;
      return function genReqId(req, res) {
        return req.id || (nextReqId = nextReqId + 1 & maxInt);
      };
    }
    function getFunctionOrDefault(value, defaultValue) {
      if (value && typeof value === "function") {
        return value;
      }
      return defaultValue;
    }
    function defaultSuccessfulRequestObjectProvider(req, res, successObject) {
      return successObject;
    }
    function defaultFailedRequestObjectProvider(req, res, error, errorObject) {
      return errorObject;
    }
    function defaultFailedRequestMessageProvider() {
      return "request errored";
    }
    function defaultSuccessfulRequestMessageProvider(req, res) {
      return !req.readableAborted && res.writableEnded ? "request completed" : "request aborted";
    }
    module2.exports = pinoLogger;
    module2.exports.stdSerializers = {
      err: serializers.err,
      req: serializers.req,
      res: serializers.res
    };
    module2.exports.startTime = startTime2;
    module2.exports.default = pinoLogger;
    module2.exports.pinoHttp = pinoLogger;
  }
});

// node_modules/probot/lib/context.js
var import_deepmerge = __toESM(require_cjs(), 1);
import path from "node:path";
var kOctokitRequestHookAdded = /* @__PURE__ */ Symbol("octokit request hook added");
var Context = class {
  name;
  id;
  payload;
  /**
   * An authenticated Octokit instance that can be used to make GitHub API
   * requests in the context of the webhook event.
   */
  octokit;
  /**
   * A logger with context about the event.
   */
  log;
  constructor(event, octokit, log) {
    this.name = event.name;
    this.id = event.id;
    this.payload = event.payload;
    this.octokit = octokit;
    this.log = log;
    if (octokit[kOctokitRequestHookAdded] !== true) {
      octokit.hook.before("request", (options2) => {
        options2.headers["x-github-delivery"] = event.id;
      });
      octokit[kOctokitRequestHookAdded] = true;
    }
  }
  /**
   * Return the `owner` and `repo` params for making API requests against a
   * repository.
   *
   * ```js
   * const params = context.repo({path: '.github/config.yml'})
   * // Returns: {owner: 'username', repo: 'reponame', path: '.github/config.yml'}
   * ```
   *
   * @param object - Params to be merged with the repo params.
   *
   */
  repo(object) {
    const repo = this.payload.repository;
    if (!repo) {
      throw new Error("context.repo() is not supported for this webhook event.");
    }
    return Object.assign({
      owner: repo.owner.login,
      repo: repo.name
    }, object);
  }
  /**
   * Return the `owner`, `repo`, and `issue_number` params for making API requests
   * against an issue. The object passed in will be merged with the repo params.
   *
   *
   * ```js
   * const params = context.issue({body: 'Hello World!'})
   * // Returns: {owner: 'username', repo: 'reponame', issue_number: 123, body: 'Hello World!'}
   * ```
   *
   * @param object - Params to be merged with the issue params.
   */
  issue(object) {
    return Object.assign({
      issue_number: (
        // @ts-expect-error - this.payload may not have `issue` or `pull_request` keys
        (this.payload.issue || this.payload.pull_request || this.payload).number
      )
    }, this.repo(object));
  }
  /**
   * Return the `owner`, `repo`, and `pull_number` params for making API requests
   * against a pull request. The object passed in will be merged with the repo params.
   *
   *
   * ```js
   * const params = context.pullRequest({body: 'Hello World!'})
   * // Returns: {owner: 'username', repo: 'reponame', pull_number: 123, body: 'Hello World!'}
   * ```
   *
   * @param object - Params to be merged with the pull request params.
   */
  pullRequest(object) {
    const payload = this.payload;
    return Object.assign({
      // @ts-expect-error - this.payload may not have `issue` or `pull_request` keys
      pull_number: (payload.issue || payload.pull_request || payload).number
    }, this.repo(object));
  }
  /**
   * Returns a boolean if the actor on the event was a bot.
   * @type {boolean}
   */
  get isBot() {
    return this.payload.sender?.type === "Bot";
  }
  /**
   * Reads the app configuration from the given YAML file in the `.github`
   * directory of the repository.
   *
   * For example, given a file named `.github/config.yml`:
   *
   * ```yml
   * close: true
   * comment: Check the specs on the rotary girder.
   * ```
   *
   * Your app can read that file from the target repository:
   *
   * ```js
   * // Load config from .github/config.yml in the repository
   * const config = await context.config('config.yml')
   *
   * if (config.close) {
   *   context.octokit.rest.issues.comment(context.issue({body: config.comment}))
   *   context.octokit.rest.issues.edit(context.issue({state: 'closed'}))
   * }
   * ```
   *
   * You can also use a `defaultConfig` object:
   *
   * ```js
   * // Load config from .github/config.yml in the repository and combine with default config
   * const config = await context.config('config.yml', {comment: 'Make sure to check all the specs.'})
   *
   * if (config.close) {
   *   context.octokit.rest.issues.comment(context.issue({body: config.comment}));
   *   context.octokit.rest.issues.edit(context.issue({state: 'closed'}))
   * }
   * ```
   *
   * Config files can also specify a base that they extend. `deepMergeOptions` can be used
   * to configure how the target config, extended base, and default configs are merged.
   *
   * For security reasons, configuration is only loaded from the repository's default branch,
   * changes made in pull requests from different branches or forks are ignored.
   *
   * If you need more lower-level control over reading and merging configuration files,
   * you can `context.octokit.config.get(options)`, see https://github.com/probot/octokit-plugin-config.
   *
   * @param fileName - Name of the YAML file in the `.github` directory
   * @param defaultConfig - An object of default config options
   * @param deepMergeOptions - Controls merging configs (from the [deepmerge](https://github.com/TehShrike/deepmerge) module)
   * @return Configuration object read from the file
   */
  async config(fileName, defaultConfig2, deepMergeOptions) {
    const params = this.repo({
      path: path.posix.join(".github", fileName),
      defaults(configs) {
        const result = import_deepmerge.default.all([defaultConfig2 || {}, ...configs], deepMergeOptions);
        return result;
      }
    });
    const { config: config2, files } = await this.octokit.config.get(params);
    if (!defaultConfig2 && !files.find((file) => file.config !== null)) {
      return null;
    }
    return config2;
  }
};

// node_modules/@octokit/webhooks-methods/dist-node/index.js
import { createHmac } from "node:crypto";
import { timingSafeEqual } from "node:crypto";
import { Buffer as Buffer2 } from "node:buffer";
var VERSION = "6.0.0";
async function sign(secret, payload) {
  if (!secret || !payload) {
    throw new TypeError(
      "[@octokit/webhooks-methods] secret & payload required for sign()"
    );
  }
  if (typeof payload !== "string") {
    throw new TypeError("[@octokit/webhooks-methods] payload must be a string");
  }
  const algorithm = "sha256";
  return `${algorithm}=${createHmac(algorithm, secret).update(payload).digest("hex")}`;
}
sign.VERSION = VERSION;
async function verify(secret, eventPayload, signature) {
  if (!secret || !eventPayload || !signature) {
    throw new TypeError(
      "[@octokit/webhooks-methods] secret, eventPayload & signature required"
    );
  }
  if (typeof eventPayload !== "string") {
    throw new TypeError(
      "[@octokit/webhooks-methods] eventPayload must be a string"
    );
  }
  const signatureBuffer = Buffer2.from(signature);
  const verificationBuffer = Buffer2.from(await sign(secret, eventPayload));
  if (signatureBuffer.length !== verificationBuffer.length) {
    return false;
  }
  return timingSafeEqual(signatureBuffer, verificationBuffer);
}
verify.VERSION = VERSION;
async function verifyWithFallback(secret, payload, signature, additionalSecrets) {
  const firstPass = await verify(secret, payload, signature);
  if (firstPass) {
    return true;
  }
  if (additionalSecrets !== void 0) {
    for (const s2 of additionalSecrets) {
      const v = await verify(s2, payload, signature);
      if (v) {
        return v;
      }
    }
  }
  return false;
}

// node_modules/@octokit/webhooks/dist-bundle/index.js
var createLogger = (logger = {}) => {
  if (typeof logger.debug !== "function") {
    logger.debug = () => {
    };
  }
  if (typeof logger.info !== "function") {
    logger.info = () => {
    };
  }
  if (typeof logger.warn !== "function") {
    logger.warn = console.warn.bind(console);
  }
  if (typeof logger.error !== "function") {
    logger.error = console.error.bind(console);
  }
  return logger;
};
var emitterEventNames = [
  "branch_protection_configuration",
  "branch_protection_configuration.disabled",
  "branch_protection_configuration.enabled",
  "branch_protection_rule",
  "branch_protection_rule.created",
  "branch_protection_rule.deleted",
  "branch_protection_rule.edited",
  "check_run",
  "check_run.completed",
  "check_run.created",
  "check_run.requested_action",
  "check_run.rerequested",
  "check_suite",
  "check_suite.completed",
  "check_suite.requested",
  "check_suite.rerequested",
  "code_scanning_alert",
  "code_scanning_alert.appeared_in_branch",
  "code_scanning_alert.closed_by_user",
  "code_scanning_alert.created",
  "code_scanning_alert.fixed",
  "code_scanning_alert.reopened",
  "code_scanning_alert.reopened_by_user",
  "commit_comment",
  "commit_comment.created",
  "create",
  "custom_property",
  "custom_property.created",
  "custom_property.deleted",
  "custom_property.promote_to_enterprise",
  "custom_property.updated",
  "custom_property_values",
  "custom_property_values.updated",
  "delete",
  "dependabot_alert",
  "dependabot_alert.auto_dismissed",
  "dependabot_alert.auto_reopened",
  "dependabot_alert.created",
  "dependabot_alert.dismissed",
  "dependabot_alert.fixed",
  "dependabot_alert.reintroduced",
  "dependabot_alert.reopened",
  "deploy_key",
  "deploy_key.created",
  "deploy_key.deleted",
  "deployment",
  "deployment.created",
  "deployment_protection_rule",
  "deployment_protection_rule.requested",
  "deployment_review",
  "deployment_review.approved",
  "deployment_review.rejected",
  "deployment_review.requested",
  "deployment_status",
  "deployment_status.created",
  "discussion",
  "discussion.answered",
  "discussion.category_changed",
  "discussion.closed",
  "discussion.created",
  "discussion.deleted",
  "discussion.edited",
  "discussion.labeled",
  "discussion.locked",
  "discussion.pinned",
  "discussion.reopened",
  "discussion.transferred",
  "discussion.unanswered",
  "discussion.unlabeled",
  "discussion.unlocked",
  "discussion.unpinned",
  "discussion_comment",
  "discussion_comment.created",
  "discussion_comment.deleted",
  "discussion_comment.edited",
  "fork",
  "github_app_authorization",
  "github_app_authorization.revoked",
  "gollum",
  "installation",
  "installation.created",
  "installation.deleted",
  "installation.new_permissions_accepted",
  "installation.suspend",
  "installation.unsuspend",
  "installation_repositories",
  "installation_repositories.added",
  "installation_repositories.removed",
  "installation_target",
  "installation_target.renamed",
  "issue_comment",
  "issue_comment.created",
  "issue_comment.deleted",
  "issue_comment.edited",
  "issue_dependencies",
  "issue_dependencies.blocked_by_added",
  "issue_dependencies.blocked_by_removed",
  "issue_dependencies.blocking_added",
  "issue_dependencies.blocking_removed",
  "issues",
  "issues.assigned",
  "issues.closed",
  "issues.deleted",
  "issues.demilestoned",
  "issues.edited",
  "issues.labeled",
  "issues.locked",
  "issues.milestoned",
  "issues.opened",
  "issues.pinned",
  "issues.reopened",
  "issues.transferred",
  "issues.typed",
  "issues.unassigned",
  "issues.unlabeled",
  "issues.unlocked",
  "issues.unpinned",
  "issues.untyped",
  "label",
  "label.created",
  "label.deleted",
  "label.edited",
  "marketplace_purchase",
  "marketplace_purchase.cancelled",
  "marketplace_purchase.changed",
  "marketplace_purchase.pending_change",
  "marketplace_purchase.pending_change_cancelled",
  "marketplace_purchase.purchased",
  "member",
  "member.added",
  "member.edited",
  "member.removed",
  "membership",
  "membership.added",
  "membership.removed",
  "merge_group",
  "merge_group.checks_requested",
  "merge_group.destroyed",
  "meta",
  "meta.deleted",
  "milestone",
  "milestone.closed",
  "milestone.created",
  "milestone.deleted",
  "milestone.edited",
  "milestone.opened",
  "org_block",
  "org_block.blocked",
  "org_block.unblocked",
  "organization",
  "organization.deleted",
  "organization.member_added",
  "organization.member_invited",
  "organization.member_removed",
  "organization.renamed",
  "package",
  "package.published",
  "package.updated",
  "page_build",
  "personal_access_token_request",
  "personal_access_token_request.approved",
  "personal_access_token_request.cancelled",
  "personal_access_token_request.created",
  "personal_access_token_request.denied",
  "ping",
  "project",
  "project.closed",
  "project.created",
  "project.deleted",
  "project.edited",
  "project.reopened",
  "project_card",
  "project_card.converted",
  "project_card.created",
  "project_card.deleted",
  "project_card.edited",
  "project_card.moved",
  "project_column",
  "project_column.created",
  "project_column.deleted",
  "project_column.edited",
  "project_column.moved",
  "projects_v2",
  "projects_v2.closed",
  "projects_v2.created",
  "projects_v2.deleted",
  "projects_v2.edited",
  "projects_v2.reopened",
  "projects_v2_item",
  "projects_v2_item.archived",
  "projects_v2_item.converted",
  "projects_v2_item.created",
  "projects_v2_item.deleted",
  "projects_v2_item.edited",
  "projects_v2_item.reordered",
  "projects_v2_item.restored",
  "projects_v2_status_update",
  "projects_v2_status_update.created",
  "projects_v2_status_update.deleted",
  "projects_v2_status_update.edited",
  "public",
  "pull_request",
  "pull_request.assigned",
  "pull_request.auto_merge_disabled",
  "pull_request.auto_merge_enabled",
  "pull_request.closed",
  "pull_request.converted_to_draft",
  "pull_request.demilestoned",
  "pull_request.dequeued",
  "pull_request.edited",
  "pull_request.enqueued",
  "pull_request.labeled",
  "pull_request.locked",
  "pull_request.milestoned",
  "pull_request.opened",
  "pull_request.ready_for_review",
  "pull_request.reopened",
  "pull_request.review_request_removed",
  "pull_request.review_requested",
  "pull_request.synchronize",
  "pull_request.unassigned",
  "pull_request.unlabeled",
  "pull_request.unlocked",
  "pull_request_review",
  "pull_request_review.dismissed",
  "pull_request_review.edited",
  "pull_request_review.submitted",
  "pull_request_review_comment",
  "pull_request_review_comment.created",
  "pull_request_review_comment.deleted",
  "pull_request_review_comment.edited",
  "pull_request_review_thread",
  "pull_request_review_thread.resolved",
  "pull_request_review_thread.unresolved",
  "push",
  "registry_package",
  "registry_package.published",
  "registry_package.updated",
  "release",
  "release.created",
  "release.deleted",
  "release.edited",
  "release.prereleased",
  "release.published",
  "release.released",
  "release.unpublished",
  "repository",
  "repository.archived",
  "repository.created",
  "repository.deleted",
  "repository.edited",
  "repository.privatized",
  "repository.publicized",
  "repository.renamed",
  "repository.transferred",
  "repository.unarchived",
  "repository_advisory",
  "repository_advisory.published",
  "repository_advisory.reported",
  "repository_dispatch",
  "repository_dispatch.sample.collected",
  "repository_import",
  "repository_ruleset",
  "repository_ruleset.created",
  "repository_ruleset.deleted",
  "repository_ruleset.edited",
  "repository_vulnerability_alert",
  "repository_vulnerability_alert.create",
  "repository_vulnerability_alert.dismiss",
  "repository_vulnerability_alert.reopen",
  "repository_vulnerability_alert.resolve",
  "secret_scanning_alert",
  "secret_scanning_alert.assigned",
  "secret_scanning_alert.created",
  "secret_scanning_alert.publicly_leaked",
  "secret_scanning_alert.reopened",
  "secret_scanning_alert.resolved",
  "secret_scanning_alert.unassigned",
  "secret_scanning_alert.validated",
  "secret_scanning_alert_location",
  "secret_scanning_alert_location.created",
  "secret_scanning_scan",
  "secret_scanning_scan.completed",
  "security_advisory",
  "security_advisory.published",
  "security_advisory.updated",
  "security_advisory.withdrawn",
  "security_and_analysis",
  "sponsorship",
  "sponsorship.cancelled",
  "sponsorship.created",
  "sponsorship.edited",
  "sponsorship.pending_cancellation",
  "sponsorship.pending_tier_change",
  "sponsorship.tier_changed",
  "star",
  "star.created",
  "star.deleted",
  "status",
  "sub_issues",
  "sub_issues.parent_issue_added",
  "sub_issues.parent_issue_removed",
  "sub_issues.sub_issue_added",
  "sub_issues.sub_issue_removed",
  "team",
  "team.added_to_repository",
  "team.created",
  "team.deleted",
  "team.edited",
  "team.removed_from_repository",
  "team_add",
  "watch",
  "watch.started",
  "workflow_dispatch",
  "workflow_job",
  "workflow_job.completed",
  "workflow_job.in_progress",
  "workflow_job.queued",
  "workflow_job.waiting",
  "workflow_run",
  "workflow_run.completed",
  "workflow_run.in_progress",
  "workflow_run.requested"
];
function validateEventName(eventName, options2 = {}) {
  if (typeof eventName !== "string") {
    throw new TypeError("eventName must be of type string");
  }
  if (eventName === "*") {
    throw new TypeError(
      `Using the "*" event with the regular Webhooks.on() function is not supported. Please use the Webhooks.onAny() method instead`
    );
  }
  if (eventName === "error") {
    throw new TypeError(
      `Using the "error" event with the regular Webhooks.on() function is not supported. Please use the Webhooks.onError() method instead`
    );
  }
  if (options2.onUnknownEventName === "ignore") {
    return;
  }
  if (!emitterEventNames.includes(eventName)) {
    if (options2.onUnknownEventName !== "warn") {
      throw new TypeError(
        `"${eventName}" is not a known webhook name (https://developer.github.com/v3/activity/events/types/)`
      );
    } else {
      (options2.log || console).warn(
        `"${eventName}" is not a known webhook name (https://developer.github.com/v3/activity/events/types/)`
      );
    }
  }
}
function handleEventHandlers(state, webhookName, handler) {
  if (!state.hooks[webhookName]) {
    state.hooks[webhookName] = [];
  }
  state.hooks[webhookName].push(handler);
}
function receiverOn(state, webhookNameOrNames, handler) {
  if (Array.isArray(webhookNameOrNames)) {
    webhookNameOrNames.forEach(
      (webhookName) => receiverOn(state, webhookName, handler)
    );
    return;
  }
  validateEventName(webhookNameOrNames, {
    onUnknownEventName: "warn",
    log: state.log
  });
  handleEventHandlers(state, webhookNameOrNames, handler);
}
function receiverOnAny(state, handler) {
  handleEventHandlers(state, "*", handler);
}
function receiverOnError(state, handler) {
  handleEventHandlers(state, "error", handler);
}
function wrapErrorHandler(handler, error) {
  let returnValue;
  try {
    returnValue = handler(error);
  } catch (error2) {
    console.log('FATAL: Error occurred in "error" event handler');
    console.log(error2);
  }
  if (returnValue && returnValue.catch) {
    returnValue.catch((error2) => {
      console.log('FATAL: Error occurred in "error" event handler');
      console.log(error2);
    });
  }
}
function getHooks(state, eventPayloadAction, eventName) {
  const hooks = [state.hooks[eventName], state.hooks["*"]];
  if (eventPayloadAction) {
    hooks.unshift(state.hooks[`${eventName}.${eventPayloadAction}`]);
  }
  return [].concat(...hooks.filter(Boolean));
}
function receiverHandle(state, event) {
  const errorHandlers = state.hooks.error || [];
  if (event instanceof Error) {
    const error = Object.assign(new AggregateError([event], event.message), {
      event
    });
    errorHandlers.forEach((handler) => wrapErrorHandler(handler, error));
    return Promise.reject(error);
  }
  if (!event || !event.name) {
    const error = new Error("Event name not passed");
    throw new AggregateError([error], error.message);
  }
  if (!event.payload) {
    const error = new Error("Event name not passed");
    throw new AggregateError([error], error.message);
  }
  const hooks = getHooks(
    state,
    "action" in event.payload ? event.payload.action : null,
    event.name
  );
  if (hooks.length === 0) {
    return Promise.resolve();
  }
  const errors = [];
  const promises = hooks.map((handler) => {
    let promise = Promise.resolve(event);
    if (state.transform) {
      promise = promise.then(state.transform);
    }
    return promise.then((event2) => {
      return handler(event2);
    }).catch((error) => errors.push(Object.assign(error, { event })));
  });
  return Promise.all(promises).then(() => {
    if (errors.length === 0) {
      return;
    }
    const error = new AggregateError(
      errors,
      errors.map((error2) => error2.message).join("\n")
    );
    Object.assign(error, {
      event
    });
    errorHandlers.forEach((handler) => wrapErrorHandler(handler, error));
    throw error;
  });
}
function removeListener(state, webhookNameOrNames, handler) {
  if (Array.isArray(webhookNameOrNames)) {
    webhookNameOrNames.forEach(
      (webhookName) => removeListener(state, webhookName, handler)
    );
    return;
  }
  if (!state.hooks[webhookNameOrNames]) {
    return;
  }
  for (let i = state.hooks[webhookNameOrNames].length - 1; i >= 0; i--) {
    if (state.hooks[webhookNameOrNames][i] === handler) {
      state.hooks[webhookNameOrNames].splice(i, 1);
      return;
    }
  }
}
function createEventHandler(options2) {
  const state = {
    hooks: {},
    log: createLogger(options2 && options2.log)
  };
  if (options2 && options2.transform) {
    state.transform = options2.transform;
  }
  return {
    on: receiverOn.bind(null, state),
    onAny: receiverOnAny.bind(null, state),
    onError: receiverOnError.bind(null, state),
    removeListener: removeListener.bind(null, state),
    receive: receiverHandle.bind(null, state)
  };
}
async function verifyAndReceive(state, event) {
  const matchesSignature = await verifyWithFallback(
    state.secret,
    event.payload,
    event.signature,
    state.additionalSecrets
  ).catch(() => false);
  if (!matchesSignature) {
    const error = new Error(
      "[@octokit/webhooks] signature does not match event payload and secret"
    );
    error.event = event;
    error.status = 400;
    return state.eventHandler.receive(error);
  }
  let payload;
  try {
    payload = JSON.parse(event.payload);
  } catch (error) {
    error.message = "Invalid JSON";
    error.status = 400;
    throw new AggregateError([error], error.message);
  }
  return state.eventHandler.receive({
    id: event.id,
    name: event.name,
    payload
  });
}
function normalizeTrailingSlashes(path2) {
  let i = path2.length;
  if (i === 0) {
    return "/";
  }
  while (i > 0) {
    if (path2.charCodeAt(--i) !== 47) {
      break;
    }
  }
  if (i === -1) {
    return "/";
  }
  return path2.slice(0, i + 1);
}
var isApplicationJsonRE = /^\s*(application\/json)\s*(?:;|$)/u;
var WEBHOOK_HEADERS = [
  "x-github-event",
  "x-hub-signature-256",
  "x-github-delivery"
];
function createMiddleware(options2) {
  const { handleResponse: handleResponse3, getRequestHeader: getRequestHeader3, getPayload: getPayload3 } = options2;
  return function middleware(webhooks, options22) {
    const middlewarePath = normalizeTrailingSlashes(options22.path);
    return async function octokitWebhooksMiddleware(request2, response, next) {
      let pathname;
      try {
        pathname = new URL(
          normalizeTrailingSlashes(request2.url),
          "http://localhost"
        ).pathname;
      } catch (error) {
        return handleResponse3(
          JSON.stringify({
            error: `Request URL could not be parsed: ${request2.url}`
          }),
          422,
          {
            "content-type": "application/json"
          },
          response
        );
      }
      if (pathname !== middlewarePath) {
        next?.();
        return handleResponse3(null);
      } else if (request2.method !== "POST") {
        return handleResponse3(
          JSON.stringify({
            error: `Unknown route: ${request2.method} ${pathname}`
          }),
          404,
          {
            "content-type": "application/json"
          },
          response
        );
      }
      const contentType = getRequestHeader3(request2, "content-type");
      if (typeof contentType !== "string" || !isApplicationJsonRE.test(contentType)) {
        return handleResponse3(
          JSON.stringify({
            error: `Unsupported "Content-Type" header value. Must be "application/json"`
          }),
          415,
          {
            "content-type": "application/json",
            accept: "application/json"
          },
          response
        );
      }
      const missingHeaders = WEBHOOK_HEADERS.filter((header) => {
        return getRequestHeader3(request2, header) == void 0;
      }).join(", ");
      if (missingHeaders) {
        return handleResponse3(
          JSON.stringify({
            error: `Required headers missing: ${missingHeaders}`
          }),
          400,
          {
            "content-type": "application/json",
            accept: "application/json"
          },
          response
        );
      }
      const eventName = getRequestHeader3(
        request2,
        "x-github-event"
      );
      const signature = getRequestHeader3(request2, "x-hub-signature-256");
      const id = getRequestHeader3(request2, "x-github-delivery");
      options22.log.debug(`${eventName} event received (id: ${id})`);
      let didTimeout = false;
      let timeout;
      const timeoutPromise = new Promise((resolve) => {
        timeout = setTimeout(() => {
          didTimeout = true;
          resolve(
            handleResponse3(
              "still processing\n",
              202,
              {
                "Content-Type": "text/plain",
                accept: "application/json"
              },
              response
            )
          );
        }, options22.timeout);
      });
      const processWebhook = async () => {
        try {
          const payload = await getPayload3(request2);
          await webhooks.verifyAndReceive({
            id,
            name: eventName,
            payload,
            signature
          });
          clearTimeout(timeout);
          if (didTimeout) return handleResponse3(null);
          return handleResponse3(
            "ok\n",
            200,
            {
              "content-type": "text/plain",
              accept: "application/json"
            },
            response
          );
        } catch (error) {
          clearTimeout(timeout);
          if (didTimeout) return handleResponse3(null);
          const err = Array.from(error.errors)[0];
          const errorMessage = err.message ? `${err.name}: ${err.message}` : "Error: An Unspecified error occurred";
          const statusCode = typeof err.status !== "undefined" ? err.status : 500;
          options22.log.error(error);
          return handleResponse3(
            JSON.stringify({
              error: errorMessage
            }),
            statusCode,
            {
              "content-type": "application/json",
              accept: "application/json"
            },
            response
          );
        }
      };
      return await Promise.race([timeoutPromise, processWebhook()]);
    };
  };
}
function handleResponse(body, status = 200, headers = {}, response) {
  if (body === null) {
    return false;
  }
  headers["content-length"] = body.length.toString();
  response.writeHead(status, headers).end(body);
  return true;
}
function getRequestHeader(request2, key) {
  return request2.headers[key];
}
function concatUint8Array(data) {
  if (data.length === 0) {
    return new Uint8Array(0);
  }
  let totalLength = 0;
  for (let i = 0; i < data.length; i++) {
    totalLength += data[i].length;
  }
  if (totalLength === 0) {
    return new Uint8Array(0);
  }
  const result = new Uint8Array(totalLength);
  let offset = 0;
  for (let i = 0; i < data.length; i++) {
    result.set(data[i], offset);
    offset += data[i].length;
  }
  return result;
}
var textDecoder = new TextDecoder("utf-8", { fatal: false });
var decode = textDecoder.decode.bind(textDecoder);
async function getPayload(request2) {
  if (typeof request2.body === "object" && "rawBody" in request2 && request2.rawBody instanceof Uint8Array) {
    return decode(request2.rawBody);
  } else if (typeof request2.body === "string") {
    return request2.body;
  }
  const payload = await getPayloadFromRequestStream(request2);
  return decode(payload);
}
function getPayloadFromRequestStream(request2) {
  return new Promise((resolve, reject) => {
    let data = [];
    request2.on(
      "error",
      (error) => reject(new AggregateError([error], error.message))
    );
    request2.on("data", data.push.bind(data));
    request2.on("end", () => {
      const result = concatUint8Array(data);
      queueMicrotask(() => resolve(result));
    });
  });
}
function createNodeMiddleware(webhooks, {
  path: path2 = "/api/github/webhooks",
  log = createLogger(),
  timeout = 9e3
} = {}) {
  return createMiddleware({
    handleResponse,
    getRequestHeader,
    getPayload
  })(webhooks, {
    path: path2,
    log,
    timeout
  });
}
var Webhooks = class {
  sign;
  verify;
  on;
  onAny;
  onError;
  removeListener;
  receive;
  verifyAndReceive;
  constructor(options2) {
    if (!options2 || !options2.secret) {
      throw new Error("[@octokit/webhooks] options.secret required");
    }
    const state = {
      eventHandler: createEventHandler(options2),
      secret: options2.secret,
      additionalSecrets: options2.additionalSecrets,
      hooks: {},
      log: createLogger(options2.log)
    };
    this.sign = sign.bind(null, options2.secret);
    this.verify = verify.bind(null, options2.secret);
    this.on = state.eventHandler.on;
    this.onAny = state.eventHandler.onAny;
    this.onError = state.eventHandler.onError;
    this.removeListener = state.eventHandler.removeListener;
    this.receive = state.eventHandler.receive;
    this.verifyAndReceive = verifyAndReceive.bind(null, state);
  }
};

// node_modules/toad-cache/dist/toad-cache.mjs
function validateCacheParams(max, ttlInMsecs) {
  if (typeof max !== "number" || !Number.isInteger(max) || max < 0) {
    throw new Error("Invalid max value");
  }
  if (typeof ttlInMsecs !== "number" || !Number.isInteger(ttlInMsecs) || ttlInMsecs < 0) {
    throw new Error("Invalid ttl value");
  }
}
var LruObject = class {
  constructor(max = 1e3, ttlInMsecs = 0) {
    validateCacheParams(max, ttlInMsecs);
    this.first = null;
    this.items = /* @__PURE__ */ Object.create(null);
    this.last = null;
    this.size = 0;
    this.max = max;
    this.ttl = ttlInMsecs;
  }
  bumpLru(item) {
    if (this.last === item) {
      return;
    }
    const last = this.last;
    const next = item.next;
    const prev = item.prev;
    if (this.first === item) {
      this.first = next;
    }
    item.next = null;
    item.prev = last;
    last.next = item;
    if (prev !== null) {
      prev.next = next;
    }
    if (next !== null) {
      next.prev = prev;
    }
    this.last = item;
  }
  clear() {
    this.items = /* @__PURE__ */ Object.create(null);
    this.first = null;
    this.last = null;
    this.size = 0;
  }
  delete(key) {
    const item = this.items[key];
    if (item !== void 0) {
      delete this.items[key];
      this.size--;
      if (item.prev !== null) {
        item.prev.next = item.next;
      }
      if (item.next !== null) {
        item.next.prev = item.prev;
      }
      if (this.first === item) {
        this.first = item.next;
      }
      if (this.last === item) {
        this.last = item.prev;
      }
    }
  }
  deleteMany(keys) {
    for (var i = 0; i < keys.length; i++) {
      this.delete(keys[i]);
    }
  }
  evict() {
    if (this.size > 0) {
      const item = this.first;
      delete this.items[item.key];
      if (--this.size === 0) {
        this.first = null;
        this.last = null;
      } else {
        this.first = item.next;
        this.first.prev = null;
      }
    }
  }
  expiresAt(key) {
    const item = this.items[key];
    if (item !== void 0) {
      return item.expiry;
    }
  }
  get(key) {
    const item = this.items[key];
    if (item !== void 0) {
      if (this.ttl > 0 && item.expiry <= Date.now()) {
        this.delete(key);
        return;
      }
      this.bumpLru(item);
      return item.value;
    }
  }
  getMany(keys) {
    const result = new Array(keys.length);
    for (var i = 0; i < keys.length; i++) {
      result[i] = this.get(keys[i]);
    }
    return result;
  }
  keys() {
    return Object.keys(this.items);
  }
  set(key, value) {
    const existing = this.items[key];
    if (existing !== void 0) {
      existing.value = value;
      existing.expiry = this.ttl > 0 ? Date.now() + this.ttl : this.ttl;
      this.bumpLru(existing);
      return;
    }
    if (this.max > 0 && this.size >= this.max) {
      this.evict();
    }
    const item = {
      expiry: this.ttl > 0 ? Date.now() + this.ttl : this.ttl,
      key,
      prev: this.last,
      next: null,
      value
    };
    this.items[key] = item;
    if (++this.size === 1) {
      this.first = item;
    } else {
      this.last.next = item;
    }
    this.last = item;
  }
};

// node_modules/probot/lib/helpers/create-deferred-promise.js
function createDeferredPromise() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

// node_modules/probot/lib/octokit/get-authenticated-octokit.js
async function getAuthenticatedOctokit(options2) {
  const { octokit, log, installationId } = options2;
  if (!installationId)
    return octokit;
  return octokit.auth({
    type: "installation",
    installationId,
    factory: ({ octokit: octokit2, octokitOptions, ...otherOptions }) => {
      const options3 = {
        ...octokitOptions,
        log: log.child({ name: "github" }),
        throttle: octokitOptions.throttle?.enabled ? {
          ...octokitOptions.throttle,
          id: String(installationId)
        } : { enabled: false },
        auth: {
          ...octokitOptions.auth,
          otherOptions,
          installationId
        }
      };
      const Octokit2 = octokit2.constructor;
      return new Octokit2(options3);
    }
  });
}

// node_modules/probot/lib/helpers/get-log.js
var import_pino = __toESM(require_pino(), 1);

// node_modules/@probot/pino/index.js
import { Transform } from "node:stream";

// node_modules/npx-import-light/index.js
import { exec } from "node:child_process";
import { builtinModules, createRequire } from "node:module";
import { platform as osPlatform } from "node:os";
import { resolve as pathResolve } from "node:path";
import { pathToFileURL } from "node:url";
function wrapExec(exec2) {
  return (cmd, options2) => new Promise((resolve, reject) => {
    exec2(cmd, { windowsHide: true, ...options2 }, (err, stdout, stderr) => {
      err ? reject(new Error(`Failed executing '${cmd}': ${stderr || err.message}`)) : resolve(stdout.trim());
    });
  });
}
var INSTALLED_LOCALLY = /* @__PURE__ */ Symbol();
var INSTALL_CACHE = { __proto__: null };
var emitPath = osPlatform() === "win32" ? `set PATH` : `printenv PATH`;
var isTempPath = RegExp.prototype.test.bind(
  osPlatform() === "win32" ? /\\npm[-\\]+cache\\_npx\\/ : /\/\.npm\/_npx\//
);
var splitPathEnvVar = osPlatform() === "win32" ? (path2) => path2.replace(/^PATH=/i, "").replace(/\\\\\\\\/g, "\\\\").replace(/\\r\\n/g, ";").split(";") : (path2) => path2.split(":");
var getTempPath = (stdout) => {
  const paths = splitPathEnvVar(stdout);
  const tempPath = paths.find(isTempPath);
  if (!tempPath)
    throw new Error(`Failed to find temporary install directory in:
${JSON.stringify(paths)}`);
  return tempPath;
};
async function _import(packageWithPath) {
  return await import(packageWithPath);
}
async function _importRelative(installDir, packageWithPath) {
  return await import(pathToFileURL(_resolveRelative(installDir, packageWithPath)).href);
}
function _resolve(packageWithPath) {
  return createRequire(import.meta.url).resolve(packageWithPath);
}
function _resolveRelative(installDir, packageWithPath) {
  return createRequire(pathToFileURL(installDir).href).resolve(packageWithPath);
}
var _logger = { log: (message) => console.log(`[NPXI] ${message}`) };
async function npxImport(pkg, options2 = {}) {
  const opts = {
    logger: _logger,
    import: _import,
    importRelative: _importRelative,
    resolve: _resolve,
    resolveRelative: _resolveRelative,
    onlyPackageRunner: true,
    ...options2,
    exec: wrapExec(options2.exec || exec)
  };
  const packages = await processPackageParameter(pkg);
  if (opts.onlyPackageRunner === true && isRunningInPackageRunner() === false) {
    return Array.isArray(pkg) ? Promise.all(packages.map((p) => opts.import(p.nameWithPath))) : opts.import(packages[0].nameWithPath);
  }
  const missingPackages = [];
  for (const p of packages) {
    try {
      p.imported = await opts.import(p.nameWithPath);
      INSTALL_CACHE[p.name] = INSTALLED_LOCALLY;
    } catch (e) {
      missingPackages.push(p);
    }
  }
  if (missingPackages.length !== 0) {
    await checkNpxVersion(opts);
    opts.logger.log(
      `Package${missingPackages.length === 1 ? "" : "s"} ${missingPackages.map((p) => p.nameWithPath).join(", ")} not available locally. Attempting to use npx to install temporarily.`
    );
    try {
      const installDir = await installPackage(missingPackages, opts);
      for (const pkg2 of missingPackages) {
        pkg2.imported = await opts.importRelative(installDir, pkg2.nameWithPath);
        INSTALL_CACHE[pkg2.name] = installDir;
      }
    } catch (e) {
      throw new Error(
        `import failed for ${missingPackages.map((p) => p.nameWithPath).join(",")} with message:
    ${e.message}

You should install ${missingPackages.map((p) => p.name).join(", ")} locally: 
    npm install ${missingPackages.map((p) => p.cli).join(" ")}

`,
        { cause: e }
      );
    }
  }
  return Array.isArray(pkg) ? packages.map((p) => p.imported) : packages[0].imported;
}
async function processPackageParameter(pkg) {
  if (typeof pkg !== "string" && !Array.isArray(pkg) || Array.isArray(pkg) && pkg.length === 0 || Array.isArray(pkg) && pkg.some((p) => typeof p !== "string")) {
    throw new TypeError(`can't import invalid package name: parsed name '${pkg}' from '${pkg}'`);
  }
  const packageNames = [];
  const packages = [];
  for (const p of Array.isArray(pkg) ? pkg : [pkg]) {
    const { raw, scope, name, packageName, nameWithPath, version, cli, path: path2 } = parsePackage(p);
    if (packageNames.includes(name)) {
      throw new Error(
        `cannot import the same package twice! Got: '${p}' but already saw '${name}' earlier!`
      );
    }
    packageNames.push(name);
    packages.push({
      cli,
      name,
      nameWithPath,
      packageName,
      path: path2,
      raw,
      scope,
      version,
      imported: null
    });
  }
  return packages;
}
var semverRE = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/u;
var isValidSemver = RegExp.prototype.test.bind(semverRE);
var cliEscapeCharsRE = /[<>*]/u;
var packageWithVersionRE = /^((?:(?:@([a-z0-9-][a-z0-9-_.]*))\/)?([a-z0-9-][a-z0-9-_.]+))(?:@([^/]+))?(\/.*)?$/u;
function parsePackage(pkg) {
  if (pkg[0] === "." || pkg[0] === "/") {
    throw new Error(`cannot import relative paths: got '${pkg}'`);
  }
  const [
    match = null,
    name,
    scope = "",
    packageName,
    version = "latest",
    // Default to 'latest' if no version is specified
    path2 = ""
  ] = packageWithVersionRE.exec(pkg) || [];
  if (match === null) {
    throw new TypeError(`can't import invalid package name: parsed name '${pkg}' from '${pkg}'`);
  }
  const nameWithPath = `${name}${path2}`;
  const cli = cliEscapeCharsRE.test(version) ? `'${name}@${version}'` : `${name}@${version}`;
  if (name.length === 0 || name.length > 214 || name === "favicon.ico" || name === "node_modules") {
    throw new TypeError(`can't import invalid package name: parsed name '${name}' from '${pkg}'`);
  }
  if (builtinModules.includes(name)) {
    throw new TypeError(`can only import NPM packages, got core module '${name}' from '${pkg}'`);
  }
  return {
    cli,
    name,
    nameWithPath,
    packageName,
    path: path2,
    raw: pkg,
    scope,
    version
  };
}
async function checkNpxVersion(opts) {
  let npmVersion;
  try {
    npmVersion = await opts.exec(`npx --version`);
  } catch (e) {
    throw new Error(`Couldn't execute 'npx --version'. Is npm installed and up-to-date?`, {
      cause: e
    });
  }
  if (npmVersion === null || Number(semverRE.exec(npmVersion)?.[1]) < 7) {
    throw new Error(`Require npm version 7+. Got '${npmVersion}' when running 'npx --version'`);
  }
}
async function installPackage(packages, opts) {
  const preference = packages.every((p) => isValidSemver(p.version)) ? "offline" : "online";
  const installPackage2 = `npx --prefer-${preference} -y ${packages.map((p) => `-p ${p.cli}`).join(" ")}`;
  opts.logger.log(`Installing... (${installPackage2})`);
  let tempPathResult;
  try {
    tempPathResult = await opts.exec(`${installPackage2} ${emitPath}`);
  } catch (e) {
    throw new Error(
      `Failed installing ${packages.map((p) => `'${p.name}'`).join(",")} using: ${installPackage2}.`,
      { cause: e }
    );
  }
  const tempPath = getTempPath(tempPathResult);
  const nodeModulesPath = pathResolve(tempPath, "..");
  if (!nodeModulesPath.endsWith("node_modules")) {
    throw new Error(
      `Found NPX temporary path of '${tempPath}' but expected to be able to find a node_modules directory by looking in '..'.`
    );
  }
  opts.logger.log(
    `Installed into ${nodeModulesPath}.`,
    `To skip this step in future, run: npm install ${packages.map((p) => p.cli).join(" ")}`
  );
  return nodeModulesPath;
}
function isRunningInPackageRunner() {
  return process.env.npm_lifecycle_event === "npx" || process.env.npm_lifecycle_event === "bunx";
}

// node_modules/@probot/pino/index.js
var import_pino_pretty = __toESM(require_pino_pretty(), 1);
var LEVEL_MAP = {
  10: "trace",
  20: "debug",
  30: "info",
  40: "warn",
  50: "error",
  60: "fatal"
};
var pinoIgnore = [
  // default pino keys
  "time",
  "pid",
  "hostname",
  // remove keys from pino-http
  "req",
  "res",
  "responseTime"
].join(",");
var pinoErrorProps = [
  "event",
  "status",
  "headers",
  "request",
  "sentryEventId"
].join(",");
var init;
var withScope;
var captureException;
var sentry;
async function getTransformStream(options2 = {}) {
  const formattingEnabled = options2.logFormat !== "json";
  const levelAsString = options2.logLevelInString;
  const pretty = (0, import_pino_pretty.prettyFactory)({
    ignore: pinoIgnore,
    errorProps: pinoErrorProps
  });
  if (!options2.sentryDsn) {
    return new Transform({
      objectMode: true,
      transform(chunk, enc, cb) {
        const line = chunk.toString().trim();
        if (formattingEnabled) {
          return cb(null, pretty(line));
        }
        if (levelAsString) {
          return cb(null, stringifyLogLevel(JSON.parse(line)));
        }
        cb(null, line + "\n");
        return;
      }
    });
  } else {
    if (!sentry) {
      sentry = await npxImport("@sentry/node@9.43.0", {
        onlyPackageRunner: true
      });
      init = sentry.init;
      withScope = sentry.withScope;
      captureException = sentry.captureException;
    }
    init({
      dsn: options2.sentryDsn,
      // See https://github.com/getsentry/sentry-javascript/issues/1964#issuecomment-688482615
      // 6 is enough to serialize the deepest property across all GitHub Event payloads
      normalizeDepth: 6
    });
    return new Transform({
      objectMode: true,
      transform(chunk, enc, cb) {
        const line = chunk.toString().trim();
        const data = JSON.parse(line);
        if (data.level < 50) {
          if (formattingEnabled) {
            return cb(null, pretty(line));
          }
          if (levelAsString) {
            return cb(null, stringifyLogLevel(data));
          }
          cb(null, line + "\n");
          return;
        }
        withScope((scope) => {
          const sentryLevelName = data.level === 50 ? "error" : "fatal";
          scope.setLevel(sentryLevelName);
          if (data.event) {
            scope.setExtra("event", data.event);
          }
          if (data.headers) {
            scope.setExtra("headers", data.headers);
          }
          if (data.request) {
            scope.setExtra("request", data.request);
          }
          if (data.status) {
            scope.setExtra("status", data.status);
          }
          const payload = data.event?.payload || data.err?.event?.payload;
          if (payload) {
            const {
              // When GitHub App is installed organization wide
              installation: { id, account: { login: account } = {} } = {},
              // When the repository belongs to an organization
              organization: { login: organization } = {},
              // When the repository belongs to a user
              repository: { owner: { login: owner } = {} } = {}
            } = payload;
            scope.setUser({
              id,
              username: account || organization || owner
            });
          }
          const sentryEventId = captureException(toSentryError(data));
          if (data.event) {
            data.event = { id: data.event.id };
          }
          if (data.request) {
            data.request = {
              method: data.request.method,
              url: data.request.url
            };
          }
          data.sentryEventId = sentryEventId;
          if (formattingEnabled) {
            return cb(null, pretty(data));
          }
          if (levelAsString) {
            return cb(null, stringifyLogLevel(data));
          }
          cb(null, JSON.stringify(data) + "\n");
        });
      }
    });
  }
}
function stringifyLogLevel(data) {
  data.level = LEVEL_MAP[data.level];
  return JSON.stringify(data) + "\n";
}
function toSentryError(data) {
  const error = new Error(data.msg);
  error.name = data.type || data.err?.type;
  error.stack = data.stack || data.err?.stack;
  return error;
}

// node_modules/probot/lib/helpers/get-log.js
async function getLog(options2 = {}) {
  const { level, logMessageKey, ...getTransformStreamOptions } = options2;
  const pinoOptions = {
    level: level || "info",
    name: "probot",
    messageKey: logMessageKey || "msg"
  };
  const transform = await getTransformStream(getTransformStreamOptions);
  transform.pipe(import_pino.default.destination(1));
  return (0, import_pino.default)(pinoOptions, transform);
}

// node_modules/@octokit/plugin-enterprise-compatibility/dist-src/version.js
var VERSION2 = "6.0.3";

// node_modules/@octokit/plugin-enterprise-compatibility/dist-src/index.js
function enterpriseCompatibility(octokit) {
  octokit.hook.wrap("request", async (request2, options2) => {
    if (/\/orgs\/[^/]+\/teams/.test(options2.url)) {
      try {
        return await request2(options2);
      } catch (error) {
        if (error.status !== 404) {
          throw error;
        }
        if (!error.response || !error.response.headers["x-github-enterprise-version"]) {
          throw error;
        }
        const deprecatedUrl = options2.url.replace(
          /\/orgs\/[^/]+\/teams\/[^/]+/,
          "/teams/{team_id}"
        );
        throw new RequestError(
          `"${options2.method} ${options2.url}" is not supported in your GitHub Enterprise Server version. Please replace with octokit.request("${options2.method} ${deprecatedUrl}", { team_id })`,
          404,
          {
            request: options2
          }
        );
      }
    }
    return request2(options2);
  });
}
enterpriseCompatibility.VERSION = VERSION2;

// node_modules/@octokit/plugin-throttling/dist-bundle/index.js
var import_light = __toESM(require_light(), 1);
var VERSION3 = "0.0.0-development";
var noop = () => Promise.resolve();
function wrapRequest(state, request2, options2) {
  return state.retryLimiter.schedule(doRequest, state, request2, options2);
}
async function doRequest(state, request2, options2) {
  const { pathname } = new URL(options2.url, "http://github.test");
  const isAuth = isAuthRequest(options2.method, pathname);
  const isWrite = !isAuth && options2.method !== "GET" && options2.method !== "HEAD";
  const isSearch = options2.method === "GET" && pathname.startsWith("/search/");
  const isGraphQL = pathname.startsWith("/graphql");
  const retryCount = ~~request2.retryCount;
  const jobOptions = retryCount > 0 ? { priority: 0, weight: 0 } : {};
  if (state.clustering) {
    jobOptions.expiration = 1e3 * 60;
  }
  if (isWrite || isGraphQL) {
    await state.write.key(state.id).schedule(jobOptions, noop);
  }
  if (isWrite && state.triggersNotification(pathname)) {
    await state.notifications.key(state.id).schedule(jobOptions, noop);
  }
  if (isSearch) {
    await state.search.key(state.id).schedule(jobOptions, noop);
  }
  const req = (isAuth ? state.auth : state.global).key(state.id).schedule(jobOptions, request2, options2);
  if (isGraphQL) {
    const res = await req;
    if (res.data.errors != null && res.data.errors.some((error) => error.type === "RATE_LIMITED")) {
      const error = Object.assign(new Error("GraphQL Rate Limit Exceeded"), {
        response: res,
        data: res.data
      });
      throw error;
    }
  }
  return req;
}
function isAuthRequest(method, pathname) {
  return method === "PATCH" && // https://docs.github.com/en/rest/apps/apps?apiVersion=2022-11-28#create-a-scoped-access-token
  /^\/applications\/[^/]+\/token\/scoped$/.test(pathname) || method === "POST" && // https://docs.github.com/en/rest/apps/oauth-applications?apiVersion=2022-11-28#reset-a-token
  (/^\/applications\/[^/]+\/token$/.test(pathname) || // https://docs.github.com/en/rest/apps/apps?apiVersion=2022-11-28#create-an-installation-access-token-for-an-app
  /^\/app\/installations\/[^/]+\/access_tokens$/.test(pathname) || // https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
  pathname === "/login/oauth/access_token");
}
var triggers_notification_paths_default = [
  "/orgs/{org}/invitations",
  "/orgs/{org}/invitations/{invitation_id}",
  "/orgs/{org}/teams/{team_slug}/discussions",
  "/orgs/{org}/teams/{team_slug}/discussions/{discussion_number}/comments",
  "/repos/{owner}/{repo}/collaborators/{username}",
  "/repos/{owner}/{repo}/commits/{commit_sha}/comments",
  "/repos/{owner}/{repo}/issues",
  "/repos/{owner}/{repo}/issues/{issue_number}/comments",
  "/repos/{owner}/{repo}/issues/{issue_number}/sub_issue",
  "/repos/{owner}/{repo}/issues/{issue_number}/sub_issues/priority",
  "/repos/{owner}/{repo}/pulls",
  "/repos/{owner}/{repo}/pulls/{pull_number}/comments",
  "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
  "/repos/{owner}/{repo}/pulls/{pull_number}/merge",
  "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers",
  "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
  "/repos/{owner}/{repo}/releases",
  "/teams/{team_id}/discussions",
  "/teams/{team_id}/discussions/{discussion_number}/comments"
];
function routeMatcher(paths) {
  const regexes = paths.map(
    (path2) => path2.split("/").map((c) => c.startsWith("{") ? "(?:.+?)" : c).join("/")
  );
  const regex2 = `^(?:${regexes.map((r) => `(?:${r})`).join("|")})[^/]*$`;
  return new RegExp(regex2, "i");
}
var regex = routeMatcher(triggers_notification_paths_default);
var triggersNotification = regex.test.bind(regex);
var groups = {};
var createGroups = function(Bottleneck3, common) {
  groups.global = new Bottleneck3.Group({
    id: "octokit-global",
    maxConcurrent: 10,
    ...common
  });
  groups.auth = new Bottleneck3.Group({
    id: "octokit-auth",
    maxConcurrent: 1,
    ...common
  });
  groups.search = new Bottleneck3.Group({
    id: "octokit-search",
    maxConcurrent: 1,
    minTime: 2e3,
    ...common
  });
  groups.write = new Bottleneck3.Group({
    id: "octokit-write",
    maxConcurrent: 1,
    minTime: 1e3,
    ...common
  });
  groups.notifications = new Bottleneck3.Group({
    id: "octokit-notifications",
    maxConcurrent: 1,
    minTime: 3e3,
    ...common
  });
};
function throttling(octokit, octokitOptions) {
  const {
    enabled = true,
    Bottleneck: Bottleneck3 = import_light.default,
    id = "no-id",
    timeout = 1e3 * 60 * 2,
    // Redis TTL: 2 minutes
    connection
  } = octokitOptions.throttle || {};
  if (!enabled) {
    return {};
  }
  const common = { timeout };
  if (typeof connection !== "undefined") {
    common.connection = connection;
  }
  const state = Object.assign(
    {
      clustering: connection != null,
      triggersNotification,
      fallbackSecondaryRateRetryAfter: 60,
      retryAfterBaseValue: 1e3,
      id
    },
    octokitOptions.throttle
  );
  if (typeof state.onSecondaryRateLimit !== "function" || typeof state.onRateLimit !== "function") {
    throw new Error(`octokit/plugin-throttling error:
        You must pass the onSecondaryRateLimit and onRateLimit error handlers.
        See https://octokit.github.io/rest.js/#throttling

        const octokit = new Octokit({
          throttle: {
            onSecondaryRateLimit: (retryAfter, options) => {/* ... */},
            onRateLimit: (retryAfter, options) => {/* ... */}
          }
        })
    `);
  }
  let initialized = false;
  const initializeBottleneck = () => {
    if (initialized) {
      return;
    }
    initialized = true;
    if (groups.global == null) {
      createGroups(Bottleneck3, common);
    }
    state.global = state.global ?? groups.global;
    state.auth = state.auth ?? groups.auth;
    state.search = state.search ?? groups.search;
    state.write = state.write ?? groups.write;
    state.notifications = state.notifications ?? groups.notifications;
    state.retryLimiter = state.retryLimiter ?? new Bottleneck3();
    const events = {};
    const emitter = new Bottleneck3.Events(events);
    events.on("secondary-limit", state.onSecondaryRateLimit);
    events.on("rate-limit", state.onRateLimit);
    events.on(
      "error",
      (e) => octokit.log.warn("Error in throttling-plugin limit handler", e)
    );
    state.retryLimiter.on("failed", async function(error, info2) {
      const [state2, request2, options2] = info2.args;
      const { pathname } = new URL(options2.url, "http://github.test");
      const shouldRetryGraphQL = pathname.startsWith("/graphql") && error.status !== 401;
      if (!(shouldRetryGraphQL || error.status === 403 || error.status === 429)) {
        return;
      }
      const retryCount = ~~request2.retryCount;
      request2.retryCount = retryCount;
      options2.request.retryCount = retryCount;
      const { wantRetry, retryAfter = 0 } = await (async function() {
        if (/\bsecondary rate\b/i.test(error.message)) {
          const retryAfter2 = Number(error.response.headers["retry-after"]) || state2.fallbackSecondaryRateRetryAfter;
          const wantRetry2 = await emitter.trigger(
            "secondary-limit",
            retryAfter2,
            options2,
            octokit,
            retryCount
          );
          return { wantRetry: wantRetry2, retryAfter: retryAfter2 };
        }
        if (error.response.headers != null && error.response.headers["x-ratelimit-remaining"] === "0" || (error.response.data?.errors ?? []).some(
          (error2) => error2.type === "RATE_LIMITED"
        )) {
          const rateLimitReset = new Date(
            ~~error.response.headers["x-ratelimit-reset"] * 1e3
          ).getTime();
          const retryAfter2 = Math.max(
            // Add one second so we retry _after_ the reset time
            // https://docs.github.com/en/rest/overview/resources-in-the-rest-api?apiVersion=2022-11-28#exceeding-the-rate-limit
            Math.ceil((rateLimitReset - Date.now()) / 1e3) + 1,
            0
          );
          const wantRetry2 = await emitter.trigger(
            "rate-limit",
            retryAfter2,
            options2,
            octokit,
            retryCount
          );
          return { wantRetry: wantRetry2, retryAfter: retryAfter2 };
        }
        return {};
      })();
      if (wantRetry) {
        request2.retryCount++;
        return retryAfter * state2.retryAfterBaseValue;
      }
    });
  };
  octokit.hook.wrap("request", (request2, options2) => {
    initializeBottleneck();
    return wrapRequest(state, request2, options2);
  });
  return {};
}
throttling.VERSION = VERSION3;
throttling.triggersNotification = triggersNotification;

// node_modules/@probot/octokit-plugin-config/dist-src/version.js
var VERSION4 = "4.1.0";

// node_modules/@probot/octokit-plugin-config/dist-src/util/get-config-file.js
var import_yaml = __toESM(require_dist(), 1);
var SUPPORTED_FILE_EXTENSIONS = ["json", "yml", "yaml"];
async function getConfigFile(octokit, { owner, repo, path: path2, ref }) {
  const fileExtension = path2.split(".").pop().toLowerCase();
  if (!SUPPORTED_FILE_EXTENSIONS.includes(fileExtension)) {
    throw new Error(
      `[@probot/octokit-plugin-config] .${fileExtension} extension is not support for configuration (path: "${path2}")`
    );
  }
  const endpoint = {
    method: "GET",
    url: "/repos/{owner}/{repo}/contents/{path}",
    owner,
    repo,
    path: path2,
    mediaType: {
      format: "raw"
    },
    // this can be just `ref` once https://github.com/octokit/endpoint.js/issues/206 is resolved
    ...ref ? { ref } : {}
  };
  const { url } = octokit.request.endpoint(endpoint);
  const emptyConfigResult = {
    owner,
    repo,
    path: path2,
    url,
    config: null
  };
  let data, headers;
  try {
    const response = await octokit.request(endpoint);
    data = response.data;
    headers = response.headers;
  } catch (error) {
    if (error.status === 404) {
      return emptyConfigResult;
    }
    throw error;
  }
  if (headers["content-type"] === "application/json; charset=utf-8") {
    throw new Error(
      `[@probot/octokit-plugin-config] ${url} exists, but is either a directory or a submodule. Ignoring.`
    );
  }
  if (fileExtension === "json") {
    if (typeof data === "string") {
      throw new Error(
        `[@probot/octokit-plugin-config] Configuration could not be parsed from ${url} (invalid JSON)`
      );
    }
    return {
      ...emptyConfigResult,
      config: data
    };
  }
  let config2;
  try {
    config2 = import_yaml.default.parse(data, { logLevel: "error" }) || {};
  } catch (error) {
    throw new Error(
      `[@probot/octokit-plugin-config] Configuration could not be parsed from ${url} (invalid YAML)`,
      { cause: error }
    );
  }
  if (typeof config2 === "string") {
    throw new Error(
      `[@probot/octokit-plugin-config] Configuration could not be parsed from ${url} (YAML is not an object)`
    );
  }
  return {
    ...emptyConfigResult,
    config: config2
  };
}

// node_modules/@probot/octokit-plugin-config/dist-src/util/extends-to-get-content-params.js
var EXTENDS_REGEX = new RegExp(
  "^(?:([a-z\\d](?:[a-z\\d]|-(?=[a-z\\d])){0,38})/)?([-_.\\w\\d]+)(?::([-_./\\w\\d]+\\.ya?ml))?$",
  "i"
);
function extendsToGetContentParams({
  owner,
  path: path2,
  url,
  extendsValue
}) {
  if (typeof extendsValue !== "string") {
    throw new Error(
      `[@probot/octokit-plugin-config] Invalid value ${JSON.stringify(
        extendsValue
      )} for _extends in ${url}`
    );
  }
  const match = extendsValue.match(EXTENDS_REGEX);
  if (match === null) {
    throw new Error(
      `[@probot/octokit-plugin-config] Invalid value "${extendsValue}" for _extends in ${url}`
    );
  }
  return {
    owner: match[1] || owner,
    repo: match[2],
    path: match[3] || path2
  };
}

// node_modules/@probot/octokit-plugin-config/dist-src/util/get-config-files.js
async function getConfigFiles(octokit, { owner, repo, path: path2, branch }) {
  const requestedRepoFile = await getConfigFile(octokit, {
    owner,
    repo,
    path: path2,
    ref: branch
  });
  const files = [requestedRepoFile];
  if (!requestedRepoFile.config) {
    if (repo === ".github") {
      return files;
    }
    const defaultRepoConfig = await getConfigFile(octokit, {
      owner,
      repo: ".github",
      path: path2
    });
    files.push(defaultRepoConfig);
  }
  const file = files[files.length - 1];
  if (!file.config || !file.config._extends) {
    return files;
  }
  let extendConfigOptions = extendsToGetContentParams({
    owner,
    path: path2,
    url: file.url,
    extendsValue: file.config._extends
  });
  delete file.config._extends;
  do {
    const extendRepoConfig = await getConfigFile(octokit, extendConfigOptions);
    files.push(extendRepoConfig);
    if (!extendRepoConfig.config || !extendRepoConfig.config._extends) {
      return files;
    }
    extendConfigOptions = extendsToGetContentParams({
      owner,
      path: path2,
      url: extendRepoConfig.url,
      extendsValue: extendRepoConfig.config._extends
    });
    delete extendRepoConfig.config._extends;
    const alreadyLoaded = files.find(
      (file2) => file2.owner === extendConfigOptions.owner && file2.repo === extendConfigOptions.repo && file2.path === extendConfigOptions.path
    );
    if (alreadyLoaded) {
      throw new Error(
        `[@probot/octokit-plugin-config] Recursion detected. Ignoring  "_extends: ${extendRepoConfig.config._extends}" from ${extendRepoConfig.url} because ${alreadyLoaded.url} was already loaded.`
      );
    }
  } while (true);
}

// node_modules/@probot/octokit-plugin-config/dist-src/compose-config-get.js
async function composeConfigGet(octokit, { owner, repo, defaults, path: path2, branch }) {
  const files = await getConfigFiles(octokit, {
    owner,
    repo,
    path: path2,
    branch
  });
  const configs = files.map((file) => file.config).reverse().filter(Boolean);
  return {
    files,
    config: typeof defaults === "function" ? defaults(configs) : Object.assign({}, defaults, ...configs)
  };
}

// node_modules/@probot/octokit-plugin-config/dist-src/index.js
function config(octokit) {
  return {
    config: {
      async get(options2) {
        return composeConfigGet(octokit, options2);
      }
    }
  };
}
config.VERSION = VERSION4;

// node_modules/@octokit/auth-unauthenticated/dist-node/index.js
async function auth(reason) {
  return {
    type: "unauthenticated",
    reason
  };
}
function isRateLimitError(error) {
  if (error.status !== 403) {
    return false;
  }
  if (!error.response) {
    return false;
  }
  return error.response.headers["x-ratelimit-remaining"] === "0";
}
var REGEX_ABUSE_LIMIT_MESSAGE = /\babuse\b/i;
function isAbuseLimitError(error) {
  if (error.status !== 403) {
    return false;
  }
  return REGEX_ABUSE_LIMIT_MESSAGE.test(error.message);
}
async function hook(reason, request2, route, parameters) {
  const endpoint = request2.endpoint.merge(
    route,
    parameters
  );
  return request2(endpoint).catch((error) => {
    if (error.status === 404) {
      error.message = `Not found. May be due to lack of authentication. Reason: ${reason}`;
      throw error;
    }
    if (isRateLimitError(error)) {
      error.message = `API rate limit exceeded. This maybe caused by the lack of authentication. Reason: ${reason}`;
      throw error;
    }
    if (isAbuseLimitError(error)) {
      error.message = `You have triggered an abuse detection mechanism. This maybe caused by the lack of authentication. Reason: ${reason}`;
      throw error;
    }
    if (error.status === 401) {
      error.message = `Unauthorized. "${endpoint.method} ${endpoint.url}" failed most likely due to lack of authentication. Reason: ${reason}`;
      throw error;
    }
    if (error.status >= 400 && error.status < 500) {
      error.message = error.message.replace(
        /\.?$/,
        `. May be caused by lack of authentication (${reason}).`
      );
    }
    throw error;
  });
}
var createUnauthenticatedAuth = function createUnauthenticatedAuth2(options2) {
  if (!options2 || !options2.reason) {
    throw new Error(
      "[@octokit/auth-unauthenticated] No reason passed to createUnauthenticatedAuth"
    );
  }
  return Object.assign(auth.bind(null, options2.reason), {
    hook: hook.bind(null, options2.reason)
  });
};

// node_modules/@octokit/oauth-methods/dist-bundle/index.js
function requestToOAuthBaseUrl(request2) {
  const endpointDefaults = request2.endpoint.DEFAULTS;
  if (/^https:\/\/(api\.)?github\.com$/.test(endpointDefaults.baseUrl)) {
    return "https://github.com";
  }
  if (/^https:\/\/api\..*\.ghe\.com$/.test(endpointDefaults.baseUrl)) {
    return endpointDefaults.baseUrl.replace("api.", "");
  }
  return endpointDefaults.baseUrl.replace("/api/v3", "");
}
async function oauthRequest(request2, route, parameters) {
  const withOAuthParameters = {
    baseUrl: requestToOAuthBaseUrl(request2),
    headers: {
      accept: "application/json"
    },
    ...parameters
  };
  const response = await request2(route, withOAuthParameters);
  if ("error" in response.data) {
    const error = new RequestError(
      `${response.data.error_description} (${response.data.error}, ${response.data.error_uri})`,
      400,
      {
        request: request2.endpoint.merge(
          route,
          withOAuthParameters
        )
      }
    );
    error.response = response;
    throw error;
  }
  return response;
}
async function exchangeWebFlowCode(options2) {
  const request2 = options2.request || request;
  const response = await oauthRequest(
    request2,
    "POST /login/oauth/access_token",
    {
      client_id: options2.clientId,
      client_secret: options2.clientSecret,
      code: options2.code,
      redirect_uri: options2.redirectUrl
    }
  );
  const authentication = {
    clientType: options2.clientType,
    clientId: options2.clientId,
    clientSecret: options2.clientSecret,
    token: response.data.access_token,
    scopes: response.data.scope.split(/\s+/).filter(Boolean)
  };
  if (options2.clientType === "github-app") {
    if ("refresh_token" in response.data) {
      const apiTimeInMs = new Date(response.headers.date).getTime();
      authentication.refreshToken = response.data.refresh_token, authentication.expiresAt = toTimestamp(
        apiTimeInMs,
        response.data.expires_in
      ), authentication.refreshTokenExpiresAt = toTimestamp(
        apiTimeInMs,
        response.data.refresh_token_expires_in
      );
    }
    delete authentication.scopes;
  }
  return { ...response, authentication };
}
function toTimestamp(apiTimeInMs, expirationInSeconds) {
  return new Date(apiTimeInMs + expirationInSeconds * 1e3).toISOString();
}
async function createDeviceCode(options2) {
  const request2 = options2.request || request;
  const parameters = {
    client_id: options2.clientId
  };
  if ("scopes" in options2 && Array.isArray(options2.scopes)) {
    parameters.scope = options2.scopes.join(" ");
  }
  return oauthRequest(request2, "POST /login/device/code", parameters);
}
async function exchangeDeviceCode(options2) {
  const request2 = options2.request || request;
  const response = await oauthRequest(
    request2,
    "POST /login/oauth/access_token",
    {
      client_id: options2.clientId,
      device_code: options2.code,
      grant_type: "urn:ietf:params:oauth:grant-type:device_code"
    }
  );
  const authentication = {
    clientType: options2.clientType,
    clientId: options2.clientId,
    token: response.data.access_token,
    scopes: response.data.scope.split(/\s+/).filter(Boolean)
  };
  if ("clientSecret" in options2) {
    authentication.clientSecret = options2.clientSecret;
  }
  if (options2.clientType === "github-app") {
    if ("refresh_token" in response.data) {
      const apiTimeInMs = new Date(response.headers.date).getTime();
      authentication.refreshToken = response.data.refresh_token, authentication.expiresAt = toTimestamp2(
        apiTimeInMs,
        response.data.expires_in
      ), authentication.refreshTokenExpiresAt = toTimestamp2(
        apiTimeInMs,
        response.data.refresh_token_expires_in
      );
    }
    delete authentication.scopes;
  }
  return { ...response, authentication };
}
function toTimestamp2(apiTimeInMs, expirationInSeconds) {
  return new Date(apiTimeInMs + expirationInSeconds * 1e3).toISOString();
}
async function checkToken(options2) {
  const request2 = options2.request || request;
  const response = await request2("POST /applications/{client_id}/token", {
    headers: {
      authorization: `basic ${btoa(
        `${options2.clientId}:${options2.clientSecret}`
      )}`
    },
    client_id: options2.clientId,
    access_token: options2.token
  });
  const authentication = {
    clientType: options2.clientType,
    clientId: options2.clientId,
    clientSecret: options2.clientSecret,
    token: options2.token,
    scopes: response.data.scopes
  };
  if (response.data.expires_at)
    authentication.expiresAt = response.data.expires_at;
  if (options2.clientType === "github-app") {
    delete authentication.scopes;
  }
  return { ...response, authentication };
}
async function refreshToken(options2) {
  const request2 = options2.request || request;
  const response = await oauthRequest(
    request2,
    "POST /login/oauth/access_token",
    {
      client_id: options2.clientId,
      client_secret: options2.clientSecret,
      grant_type: "refresh_token",
      refresh_token: options2.refreshToken
    }
  );
  const apiTimeInMs = new Date(response.headers.date).getTime();
  const authentication = {
    clientType: "github-app",
    clientId: options2.clientId,
    clientSecret: options2.clientSecret,
    token: response.data.access_token,
    refreshToken: response.data.refresh_token,
    expiresAt: toTimestamp3(apiTimeInMs, response.data.expires_in),
    refreshTokenExpiresAt: toTimestamp3(
      apiTimeInMs,
      response.data.refresh_token_expires_in
    )
  };
  return { ...response, authentication };
}
function toTimestamp3(apiTimeInMs, expirationInSeconds) {
  return new Date(apiTimeInMs + expirationInSeconds * 1e3).toISOString();
}
async function resetToken(options2) {
  const request2 = options2.request || request;
  const auth7 = btoa(`${options2.clientId}:${options2.clientSecret}`);
  const response = await request2(
    "PATCH /applications/{client_id}/token",
    {
      headers: {
        authorization: `basic ${auth7}`
      },
      client_id: options2.clientId,
      access_token: options2.token
    }
  );
  const authentication = {
    clientType: options2.clientType,
    clientId: options2.clientId,
    clientSecret: options2.clientSecret,
    token: response.data.token,
    scopes: response.data.scopes
  };
  if (response.data.expires_at)
    authentication.expiresAt = response.data.expires_at;
  if (options2.clientType === "github-app") {
    delete authentication.scopes;
  }
  return { ...response, authentication };
}
async function deleteToken(options2) {
  const request2 = options2.request || request;
  const auth7 = btoa(`${options2.clientId}:${options2.clientSecret}`);
  return request2(
    "DELETE /applications/{client_id}/token",
    {
      headers: {
        authorization: `basic ${auth7}`
      },
      client_id: options2.clientId,
      access_token: options2.token
    }
  );
}
async function deleteAuthorization(options2) {
  const request2 = options2.request || request;
  const auth7 = btoa(`${options2.clientId}:${options2.clientSecret}`);
  return request2(
    "DELETE /applications/{client_id}/grant",
    {
      headers: {
        authorization: `basic ${auth7}`
      },
      client_id: options2.clientId,
      access_token: options2.token
    }
  );
}

// node_modules/@octokit/auth-oauth-device/dist-bundle/index.js
async function getOAuthAccessToken(state, options2) {
  const cachedAuthentication = getCachedAuthentication(state, options2.auth);
  if (cachedAuthentication) return cachedAuthentication;
  const { data: verification } = await createDeviceCode({
    clientType: state.clientType,
    clientId: state.clientId,
    request: options2.request || state.request,
    // @ts-expect-error the extra code to make TS happy is not worth it
    scopes: options2.auth.scopes || state.scopes
  });
  await state.onVerification(verification);
  const authentication = await waitForAccessToken(
    options2.request || state.request,
    state.clientId,
    state.clientType,
    verification
  );
  state.authentication = authentication;
  return authentication;
}
function getCachedAuthentication(state, auth22) {
  if (auth22.refresh === true) return false;
  if (!state.authentication) return false;
  if (state.clientType === "github-app") {
    return state.authentication;
  }
  const authentication = state.authentication;
  const newScope = ("scopes" in auth22 && auth22.scopes || state.scopes).join(
    " "
  );
  const currentScope = authentication.scopes.join(" ");
  return newScope === currentScope ? authentication : false;
}
async function wait(seconds) {
  await new Promise((resolve) => setTimeout(resolve, seconds * 1e3));
}
async function waitForAccessToken(request2, clientId, clientType, verification) {
  try {
    const options2 = {
      clientId,
      request: request2,
      code: verification.device_code
    };
    const { authentication } = clientType === "oauth-app" ? await exchangeDeviceCode({
      ...options2,
      clientType: "oauth-app"
    }) : await exchangeDeviceCode({
      ...options2,
      clientType: "github-app"
    });
    return {
      type: "token",
      tokenType: "oauth",
      ...authentication
    };
  } catch (error) {
    if (!error.response) throw error;
    const errorType = error.response.data.error;
    if (errorType === "authorization_pending") {
      await wait(verification.interval);
      return waitForAccessToken(request2, clientId, clientType, verification);
    }
    if (errorType === "slow_down") {
      await wait(verification.interval + 7);
      return waitForAccessToken(request2, clientId, clientType, verification);
    }
    throw error;
  }
}
async function auth2(state, authOptions) {
  return getOAuthAccessToken(state, {
    auth: authOptions
  });
}
async function hook2(state, request2, route, parameters) {
  let endpoint = request2.endpoint.merge(
    route,
    parameters
  );
  if (/\/login\/(oauth\/access_token|device\/code)$/.test(endpoint.url)) {
    return request2(endpoint);
  }
  const { token } = await getOAuthAccessToken(state, {
    request: request2,
    auth: { type: "oauth" }
  });
  endpoint.headers.authorization = `token ${token}`;
  return request2(endpoint);
}
var VERSION5 = "0.0.0-development";
function createOAuthDeviceAuth(options2) {
  const requestWithDefaults = options2.request || request.defaults({
    headers: {
      "user-agent": `octokit-auth-oauth-device.js/${VERSION5} ${getUserAgent()}`
    }
  });
  const { request: request2 = requestWithDefaults, ...otherOptions } = options2;
  const state = options2.clientType === "github-app" ? {
    ...otherOptions,
    clientType: "github-app",
    request: request2
  } : {
    ...otherOptions,
    clientType: "oauth-app",
    request: request2,
    scopes: options2.scopes || []
  };
  if (!options2.clientId) {
    throw new Error(
      '[@octokit/auth-oauth-device] "clientId" option must be set (https://github.com/octokit/auth-oauth-device.js#usage)'
    );
  }
  if (!options2.onVerification) {
    throw new Error(
      '[@octokit/auth-oauth-device] "onVerification" option must be a function (https://github.com/octokit/auth-oauth-device.js#usage)'
    );
  }
  return Object.assign(auth2.bind(null, state), {
    hook: hook2.bind(null, state)
  });
}

// node_modules/@octokit/auth-oauth-user/dist-bundle/index.js
var VERSION6 = "0.0.0-development";
async function getAuthentication(state) {
  if ("code" in state.strategyOptions) {
    const { authentication } = await exchangeWebFlowCode({
      clientId: state.clientId,
      clientSecret: state.clientSecret,
      clientType: state.clientType,
      onTokenCreated: state.onTokenCreated,
      ...state.strategyOptions,
      request: state.request
    });
    return {
      type: "token",
      tokenType: "oauth",
      ...authentication
    };
  }
  if ("onVerification" in state.strategyOptions) {
    const deviceAuth = createOAuthDeviceAuth({
      clientType: state.clientType,
      clientId: state.clientId,
      onTokenCreated: state.onTokenCreated,
      ...state.strategyOptions,
      request: state.request
    });
    const authentication = await deviceAuth({
      type: "oauth"
    });
    return {
      clientSecret: state.clientSecret,
      ...authentication
    };
  }
  if ("token" in state.strategyOptions) {
    return {
      type: "token",
      tokenType: "oauth",
      clientId: state.clientId,
      clientSecret: state.clientSecret,
      clientType: state.clientType,
      onTokenCreated: state.onTokenCreated,
      ...state.strategyOptions
    };
  }
  throw new Error("[@octokit/auth-oauth-user] Invalid strategy options");
}
async function auth3(state, options2 = {}) {
  if (!state.authentication) {
    state.authentication = state.clientType === "oauth-app" ? await getAuthentication(state) : await getAuthentication(state);
  }
  if (state.authentication.invalid) {
    throw new Error("[@octokit/auth-oauth-user] Token is invalid");
  }
  const currentAuthentication = state.authentication;
  if ("expiresAt" in currentAuthentication) {
    if (options2.type === "refresh" || new Date(currentAuthentication.expiresAt) < /* @__PURE__ */ new Date()) {
      const { authentication } = await refreshToken({
        clientType: "github-app",
        clientId: state.clientId,
        clientSecret: state.clientSecret,
        refreshToken: currentAuthentication.refreshToken,
        request: state.request
      });
      state.authentication = {
        tokenType: "oauth",
        type: "token",
        ...authentication
      };
    }
  }
  if (options2.type === "refresh") {
    if (state.clientType === "oauth-app") {
      throw new Error(
        "[@octokit/auth-oauth-user] OAuth Apps do not support expiring tokens"
      );
    }
    if (!currentAuthentication.hasOwnProperty("expiresAt")) {
      throw new Error("[@octokit/auth-oauth-user] Refresh token missing");
    }
    await state.onTokenCreated?.(state.authentication, {
      type: options2.type
    });
  }
  if (options2.type === "check" || options2.type === "reset") {
    const method = options2.type === "check" ? checkToken : resetToken;
    try {
      const { authentication } = await method({
        // @ts-expect-error making TS happy would require unnecessary code so no
        clientType: state.clientType,
        clientId: state.clientId,
        clientSecret: state.clientSecret,
        token: state.authentication.token,
        request: state.request
      });
      state.authentication = {
        tokenType: "oauth",
        type: "token",
        // @ts-expect-error TBD
        ...authentication
      };
      if (options2.type === "reset") {
        await state.onTokenCreated?.(state.authentication, {
          type: options2.type
        });
      }
      return state.authentication;
    } catch (error) {
      if (error.status === 404) {
        error.message = "[@octokit/auth-oauth-user] Token is invalid";
        state.authentication.invalid = true;
      }
      throw error;
    }
  }
  if (options2.type === "delete" || options2.type === "deleteAuthorization") {
    const method = options2.type === "delete" ? deleteToken : deleteAuthorization;
    try {
      await method({
        // @ts-expect-error making TS happy would require unnecessary code so no
        clientType: state.clientType,
        clientId: state.clientId,
        clientSecret: state.clientSecret,
        token: state.authentication.token,
        request: state.request
      });
    } catch (error) {
      if (error.status !== 404) throw error;
    }
    state.authentication.invalid = true;
    return state.authentication;
  }
  return state.authentication;
}
var ROUTES_REQUIRING_BASIC_AUTH = /\/applications\/[^/]+\/(token|grant)s?/;
function requiresBasicAuth(url) {
  return url && ROUTES_REQUIRING_BASIC_AUTH.test(url);
}
async function hook3(state, request2, route, parameters = {}) {
  const endpoint = request2.endpoint.merge(
    route,
    parameters
  );
  if (/\/login\/(oauth\/access_token|device\/code)$/.test(endpoint.url)) {
    return request2(endpoint);
  }
  if (requiresBasicAuth(endpoint.url)) {
    const credentials = btoa(`${state.clientId}:${state.clientSecret}`);
    endpoint.headers.authorization = `basic ${credentials}`;
    return request2(endpoint);
  }
  const { token } = state.clientType === "oauth-app" ? await auth3({ ...state, request: request2 }) : await auth3({ ...state, request: request2 });
  endpoint.headers.authorization = "token " + token;
  return request2(endpoint);
}
function createOAuthUserAuth({
  clientId,
  clientSecret,
  clientType = "oauth-app",
  request: request2 = request.defaults({
    headers: {
      "user-agent": `octokit-auth-oauth-app.js/${VERSION6} ${getUserAgent()}`
    }
  }),
  onTokenCreated,
  ...strategyOptions
}) {
  const state = Object.assign({
    clientType,
    clientId,
    clientSecret,
    onTokenCreated,
    strategyOptions,
    request: request2
  });
  return Object.assign(auth3.bind(null, state), {
    // @ts-expect-error not worth the extra code needed to appease TS
    hook: hook3.bind(null, state)
  });
}
createOAuthUserAuth.VERSION = VERSION6;

// node_modules/@octokit/auth-oauth-app/dist-bundle/index.js
async function auth4(state, authOptions) {
  if (authOptions.type === "oauth-app") {
    return {
      type: "oauth-app",
      clientId: state.clientId,
      clientSecret: state.clientSecret,
      clientType: state.clientType,
      headers: {
        authorization: `basic ${btoa(
          `${state.clientId}:${state.clientSecret}`
        )}`
      }
    };
  }
  if ("factory" in authOptions) {
    const { type, ...options2 } = {
      ...authOptions,
      ...state
    };
    return authOptions.factory(options2);
  }
  const common = {
    clientId: state.clientId,
    clientSecret: state.clientSecret,
    request: state.request,
    ...authOptions
  };
  const userAuth = state.clientType === "oauth-app" ? await createOAuthUserAuth({
    ...common,
    clientType: state.clientType
  }) : await createOAuthUserAuth({
    ...common,
    clientType: state.clientType
  });
  return userAuth();
}
async function hook4(state, request2, route, parameters) {
  let endpoint = request2.endpoint.merge(
    route,
    parameters
  );
  if (/\/login\/(oauth\/access_token|device\/code)$/.test(endpoint.url)) {
    return request2(endpoint);
  }
  if (state.clientType === "github-app" && !requiresBasicAuth(endpoint.url)) {
    throw new Error(
      `[@octokit/auth-oauth-app] GitHub Apps cannot use their client ID/secret for basic authentication for endpoints other than "/applications/{client_id}/**". "${endpoint.method} ${endpoint.url}" is not supported.`
    );
  }
  const credentials = btoa(`${state.clientId}:${state.clientSecret}`);
  endpoint.headers.authorization = `basic ${credentials}`;
  try {
    return await request2(endpoint);
  } catch (error) {
    if (error.status !== 401) throw error;
    error.message = `[@octokit/auth-oauth-app] "${endpoint.method} ${endpoint.url}" does not support clientId/clientSecret basic authentication.`;
    throw error;
  }
}
var VERSION7 = "0.0.0-development";
function createOAuthAppAuth(options2) {
  const state = Object.assign(
    {
      request: request.defaults({
        headers: {
          "user-agent": `octokit-auth-oauth-app.js/${VERSION7} ${getUserAgent()}`
        }
      }),
      clientType: "oauth-app"
    },
    options2
  );
  return Object.assign(auth4.bind(null, state), {
    hook: hook4.bind(null, state)
  });
}

// node_modules/universal-github-app-jwt/lib/utils.js
function isPkcs1(privateKey) {
  return privateKey.includes("-----BEGIN RSA PRIVATE KEY-----");
}
function isOpenSsh(privateKey) {
  return privateKey.includes("-----BEGIN OPENSSH PRIVATE KEY-----");
}
function string2ArrayBuffer(str) {
  const buf = new ArrayBuffer(str.length);
  const bufView = new Uint8Array(buf);
  for (let i = 0, strLen = str.length; i < strLen; i++) {
    bufView[i] = str.charCodeAt(i);
  }
  return buf;
}
function getDERfromPEM(pem) {
  const pemB64 = pem.trim().split("\n").slice(1, -1).join("");
  const decoded = atob(pemB64);
  return string2ArrayBuffer(decoded);
}
function getEncodedMessage(header, payload) {
  return `${base64encodeJSON(header)}.${base64encodeJSON(payload)}`;
}
function base64encode(buffer) {
  var binary = "";
  var bytes = new Uint8Array(buffer);
  var len = bytes.byteLength;
  for (var i = 0; i < len; i++) {
    binary += String.fromCharCode(bytes[i]);
  }
  return fromBase64(btoa(binary));
}
function fromBase64(base64) {
  return base64.replace(/=/g, "").replace(/\+/g, "-").replace(/\//g, "_");
}
function base64encodeJSON(obj) {
  return fromBase64(btoa(JSON.stringify(obj)));
}

// node_modules/universal-github-app-jwt/lib/crypto-node.js
import { subtle } from "node:crypto";
import { createPrivateKey } from "node:crypto";
function convertPrivateKey(privateKey) {
  if (!isPkcs1(privateKey)) return privateKey;
  return createPrivateKey(privateKey).export({
    type: "pkcs8",
    format: "pem"
  });
}

// node_modules/universal-github-app-jwt/lib/get-token.js
async function getToken({ privateKey, payload }) {
  const convertedPrivateKey = convertPrivateKey(privateKey);
  if (isPkcs1(convertedPrivateKey)) {
    throw new Error(
      "[universal-github-app-jwt] Private Key is in PKCS#1 format, but only PKCS#8 is supported. See https://github.com/gr2m/universal-github-app-jwt#private-key-formats"
    );
  }
  if (isOpenSsh(convertedPrivateKey)) {
    throw new Error(
      "[universal-github-app-jwt] Private Key is in OpenSSH format, but only PKCS#8 is supported. See https://github.com/gr2m/universal-github-app-jwt#private-key-formats"
    );
  }
  const algorithm = {
    name: "RSASSA-PKCS1-v1_5",
    hash: { name: "SHA-256" }
  };
  const header = { alg: "RS256", typ: "JWT" };
  const privateKeyDER = getDERfromPEM(convertedPrivateKey);
  const importedKey = await subtle.importKey(
    "pkcs8",
    privateKeyDER,
    algorithm,
    false,
    ["sign"]
  );
  const encodedMessage = getEncodedMessage(header, payload);
  const encodedMessageArrBuf = string2ArrayBuffer(encodedMessage);
  const signatureArrBuf = await subtle.sign(
    algorithm.name,
    importedKey,
    encodedMessageArrBuf
  );
  const encodedSignature = base64encode(signatureArrBuf);
  return `${encodedMessage}.${encodedSignature}`;
}

// node_modules/universal-github-app-jwt/index.js
async function githubAppJwt({
  id,
  privateKey,
  now = Math.floor(Date.now() / 1e3)
}) {
  const privateKeyWithNewlines = privateKey.replace(/\\n/g, "\n");
  const nowWithSafetyMargin = now - 30;
  const expiration = nowWithSafetyMargin + 60 * 10;
  const payload = {
    iat: nowWithSafetyMargin,
    // Issued at time
    exp: expiration,
    iss: id
  };
  const token = await getToken({
    privateKey: privateKeyWithNewlines,
    payload
  });
  return {
    appId: id,
    expiration,
    token
  };
}

// node_modules/@octokit/auth-app/dist-node/index.js
async function getAppAuthentication({
  appId,
  privateKey,
  timeDifference,
  createJwt
}) {
  try {
    if (createJwt) {
      const { jwt, expiresAt } = await createJwt(appId, timeDifference);
      return {
        type: "app",
        token: jwt,
        appId,
        expiresAt
      };
    }
    const authOptions = {
      id: appId,
      privateKey
    };
    if (timeDifference) {
      Object.assign(authOptions, {
        now: Math.floor(Date.now() / 1e3) + timeDifference
      });
    }
    const appAuthentication = await githubAppJwt(authOptions);
    return {
      type: "app",
      token: appAuthentication.token,
      appId: appAuthentication.appId,
      expiresAt: new Date(appAuthentication.expiration * 1e3).toISOString()
    };
  } catch (error) {
    if (privateKey === "-----BEGIN RSA PRIVATE KEY-----") {
      throw new Error(
        "The 'privateKey` option contains only the first line '-----BEGIN RSA PRIVATE KEY-----'. If you are setting it using a `.env` file, make sure it is set on a single line with newlines replaced by '\n'"
      );
    } else {
      throw error;
    }
  }
}
function getCache() {
  return new LruObject(
    // cache max. 15000 tokens, that will use less than 10mb memory
    15e3,
    // Cache for 1 minute less than GitHub expiry
    1e3 * 60 * 59
  );
}
async function get(cache2, options2) {
  const cacheKey = optionsToCacheKey(options2);
  const result = await cache2.get(cacheKey);
  if (!result) {
    return;
  }
  const [
    token,
    createdAt,
    expiresAt,
    repositorySelection,
    permissionsString,
    singleFileName
  ] = result.split("|");
  const permissions = options2.permissions || permissionsString.split(/,/).reduce((permissions2, string) => {
    if (/!$/.test(string)) {
      permissions2[string.slice(0, -1)] = "write";
    } else {
      permissions2[string] = "read";
    }
    return permissions2;
  }, {});
  return {
    token,
    createdAt,
    expiresAt,
    permissions,
    repositoryIds: options2.repositoryIds,
    repositoryNames: options2.repositoryNames,
    singleFileName,
    repositorySelection
  };
}
async function set(cache2, options2, data) {
  const key = optionsToCacheKey(options2);
  const permissionsString = options2.permissions ? "" : Object.keys(data.permissions).map(
    (name) => `${name}${data.permissions[name] === "write" ? "!" : ""}`
  ).join(",");
  const value = [
    data.token,
    data.createdAt,
    data.expiresAt,
    data.repositorySelection,
    permissionsString,
    data.singleFileName
  ].join("|");
  await cache2.set(key, value);
}
function optionsToCacheKey({
  installationId,
  permissions = {},
  repositoryIds = [],
  repositoryNames = []
}) {
  const permissionsString = Object.keys(permissions).sort().map((name) => permissions[name] === "read" ? name : `${name}!`).join(",");
  const repositoryIdsString = repositoryIds.sort().join(",");
  const repositoryNamesString = repositoryNames.join(",");
  return [
    installationId,
    repositoryIdsString,
    repositoryNamesString,
    permissionsString
  ].filter(Boolean).join("|");
}
function toTokenAuthentication({
  installationId,
  token,
  createdAt,
  expiresAt,
  repositorySelection,
  permissions,
  repositoryIds,
  repositoryNames,
  singleFileName
}) {
  return Object.assign(
    {
      type: "token",
      tokenType: "installation",
      token,
      installationId,
      permissions,
      createdAt,
      expiresAt,
      repositorySelection
    },
    repositoryIds ? { repositoryIds } : null,
    repositoryNames ? { repositoryNames } : null,
    singleFileName ? { singleFileName } : null
  );
}
async function getInstallationAuthentication(state, options2, customRequest) {
  const installationId = Number(options2.installationId || state.installationId);
  if (!installationId) {
    throw new Error(
      "[@octokit/auth-app] installationId option is required for installation authentication."
    );
  }
  if (options2.factory) {
    const { type, factory, oauthApp, ...factoryAuthOptions } = {
      ...state,
      ...options2
    };
    return factory(factoryAuthOptions);
  }
  const request2 = customRequest || state.request;
  return getInstallationAuthenticationConcurrently(
    state,
    { ...options2, installationId },
    request2
  );
}
var pendingPromises = /* @__PURE__ */ new Map();
function getInstallationAuthenticationConcurrently(state, options2, request2) {
  const cacheKey = optionsToCacheKey(options2);
  if (pendingPromises.has(cacheKey)) {
    return pendingPromises.get(cacheKey);
  }
  const promise = getInstallationAuthenticationImpl(
    state,
    options2,
    request2
  ).finally(() => pendingPromises.delete(cacheKey));
  pendingPromises.set(cacheKey, promise);
  return promise;
}
async function getInstallationAuthenticationImpl(state, options2, request2) {
  if (!options2.refresh) {
    const result = await get(state.cache, options2);
    if (result) {
      const {
        token: token2,
        createdAt: createdAt2,
        expiresAt: expiresAt2,
        permissions: permissions2,
        repositoryIds: repositoryIds2,
        repositoryNames: repositoryNames2,
        singleFileName: singleFileName2,
        repositorySelection: repositorySelection2
      } = result;
      return toTokenAuthentication({
        installationId: options2.installationId,
        token: token2,
        createdAt: createdAt2,
        expiresAt: expiresAt2,
        permissions: permissions2,
        repositorySelection: repositorySelection2,
        repositoryIds: repositoryIds2,
        repositoryNames: repositoryNames2,
        singleFileName: singleFileName2
      });
    }
  }
  const appAuthentication = await getAppAuthentication(state);
  const payload = {
    installation_id: options2.installationId,
    mediaType: {
      previews: ["machine-man"]
    },
    headers: {
      authorization: `bearer ${appAuthentication.token}`
    }
  };
  if (options2.repositoryIds) {
    Object.assign(payload, { repository_ids: options2.repositoryIds });
  }
  if (options2.repositoryNames) {
    Object.assign(payload, {
      repositories: options2.repositoryNames
    });
  }
  if (options2.permissions) {
    Object.assign(payload, { permissions: options2.permissions });
  }
  const {
    data: {
      token,
      expires_at: expiresAt,
      repositories,
      permissions: permissionsOptional,
      repository_selection: repositorySelectionOptional,
      single_file: singleFileName
    }
  } = await request2(
    "POST /app/installations/{installation_id}/access_tokens",
    payload
  );
  const permissions = permissionsOptional || {};
  const repositorySelection = repositorySelectionOptional || "all";
  const repositoryIds = repositories ? repositories.map((r) => r.id) : void 0;
  const repositoryNames = repositories ? repositories.map((repo) => repo.name) : void 0;
  const createdAt = (/* @__PURE__ */ new Date()).toISOString();
  const cacheOptions = {
    token,
    createdAt,
    expiresAt,
    repositorySelection,
    permissions,
    repositoryIds,
    repositoryNames
  };
  if (singleFileName) {
    Object.assign(payload, { singleFileName });
  }
  await set(state.cache, options2, cacheOptions);
  const cacheData = {
    installationId: options2.installationId,
    token,
    createdAt,
    expiresAt,
    repositorySelection,
    permissions,
    repositoryIds,
    repositoryNames
  };
  if (singleFileName) {
    Object.assign(cacheData, { singleFileName });
  }
  return toTokenAuthentication(cacheData);
}
async function auth5(state, authOptions) {
  switch (authOptions.type) {
    case "app":
      return getAppAuthentication(state);
    case "oauth-app":
      return state.oauthApp({ type: "oauth-app" });
    case "installation":
      authOptions;
      return getInstallationAuthentication(state, {
        ...authOptions,
        type: "installation"
      });
    case "oauth-user":
      return state.oauthApp(authOptions);
    default:
      throw new Error(`Invalid auth type: ${authOptions.type}`);
  }
}
var PATHS = [
  "/app",
  "/app/hook/config",
  "/app/hook/deliveries",
  "/app/hook/deliveries/{delivery_id}",
  "/app/hook/deliveries/{delivery_id}/attempts",
  "/app/installations",
  "/app/installations/{installation_id}",
  "/app/installations/{installation_id}/access_tokens",
  "/app/installations/{installation_id}/suspended",
  "/app/installation-requests",
  "/marketplace_listing/accounts/{account_id}",
  "/marketplace_listing/plan",
  "/marketplace_listing/plans",
  "/marketplace_listing/plans/{plan_id}/accounts",
  "/marketplace_listing/stubbed/accounts/{account_id}",
  "/marketplace_listing/stubbed/plan",
  "/marketplace_listing/stubbed/plans",
  "/marketplace_listing/stubbed/plans/{plan_id}/accounts",
  "/orgs/{org}/installation",
  "/repos/{owner}/{repo}/installation",
  "/users/{username}/installation",
  "/enterprises/{enterprise}/installation"
];
function routeMatcher2(paths) {
  const regexes = paths.map(
    (p) => p.split("/").map((c) => c.startsWith("{") ? "(?:.+?)" : c).join("/")
  );
  const regex2 = `^(?:${regexes.map((r) => `(?:${r})`).join("|")})$`;
  return new RegExp(regex2, "i");
}
var REGEX = routeMatcher2(PATHS);
function requiresAppAuth(url) {
  return !!url && REGEX.test(url.split("?")[0]);
}
var FIVE_SECONDS_IN_MS = 5 * 1e3;
function isNotTimeSkewError(error) {
  return !(error.message.match(
    /'Expiration time' claim \('exp'\) is too far in the future/
  ) || error.message.match(
    /'Expiration time' claim \('exp'\) must be a numeric value representing the future time at which the assertion expires/
  ) || error.message.match(
    /'Issued at' claim \('iat'\) must be an Integer representing the time that the assertion was issued/
  ));
}
async function hook5(state, request2, route, parameters) {
  const endpoint = request2.endpoint.merge(route, parameters);
  const url = endpoint.url;
  if (/\/login\/oauth\/access_token$/.test(url)) {
    return request2(endpoint);
  }
  if (requiresAppAuth(url.replace(request2.endpoint.DEFAULTS.baseUrl, ""))) {
    const { token: token2 } = await getAppAuthentication(state);
    endpoint.headers.authorization = `bearer ${token2}`;
    let response;
    try {
      response = await request2(endpoint);
    } catch (error) {
      if (isNotTimeSkewError(error)) {
        throw error;
      }
      if (typeof error.response.headers.date === "undefined") {
        throw error;
      }
      const diff = Math.floor(
        (Date.parse(error.response.headers.date) - Date.parse((/* @__PURE__ */ new Date()).toString())) / 1e3
      );
      state.log.warn(error.message);
      state.log.warn(
        `[@octokit/auth-app] GitHub API time and system time are different by ${diff} seconds. Retrying request with the difference accounted for.`
      );
      const { token: token3 } = await getAppAuthentication({
        ...state,
        timeDifference: diff
      });
      endpoint.headers.authorization = `bearer ${token3}`;
      return request2(endpoint);
    }
    return response;
  }
  if (requiresBasicAuth(url)) {
    const authentication = await state.oauthApp({ type: "oauth-app" });
    endpoint.headers.authorization = authentication.headers.authorization;
    return request2(endpoint);
  }
  const { token, createdAt } = await getInstallationAuthentication(
    state,
    // @ts-expect-error TBD
    {},
    request2.defaults({ baseUrl: endpoint.baseUrl })
  );
  endpoint.headers.authorization = `token ${token}`;
  return sendRequestWithRetries(
    state,
    request2,
    endpoint,
    createdAt
  );
}
async function sendRequestWithRetries(state, request2, options2, createdAt, retries = 0) {
  const timeSinceTokenCreationInMs = +/* @__PURE__ */ new Date() - +new Date(createdAt);
  try {
    return await request2(options2);
  } catch (error) {
    if (error.status !== 401) {
      throw error;
    }
    if (timeSinceTokenCreationInMs >= FIVE_SECONDS_IN_MS) {
      if (retries > 0) {
        error.message = `After ${retries} retries within ${timeSinceTokenCreationInMs / 1e3}s of creating the installation access token, the response remains 401. At this point, the cause may be an authentication problem or a system outage. Please check https://www.githubstatus.com for status information`;
      }
      throw error;
    }
    ++retries;
    const awaitTime = retries * 1e3;
    state.log.warn(
      `[@octokit/auth-app] Retrying after 401 response to account for token replication delay (retry: ${retries}, wait: ${awaitTime / 1e3}s)`
    );
    await new Promise((resolve) => setTimeout(resolve, awaitTime));
    return sendRequestWithRetries(state, request2, options2, createdAt, retries);
  }
}
var VERSION8 = "8.3.1";
function createAppAuth(options2) {
  if (!options2.appId) {
    throw new Error("[@octokit/auth-app] appId option is required");
  }
  if (!options2.privateKey && !options2.createJwt) {
    throw new Error("[@octokit/auth-app] privateKey option is required");
  } else if (options2.privateKey && options2.createJwt) {
    throw new Error(
      "[@octokit/auth-app] privateKey and createJwt options are mutually exclusive"
    );
  }
  if ("installationId" in options2 && !options2.installationId) {
    throw new Error(
      "[@octokit/auth-app] installationId is set to a falsy value"
    );
  }
  const log = options2.log || {};
  if (typeof log.warn !== "function") {
    log.warn = console.warn.bind(console);
  }
  const request2 = options2.request || request.defaults({
    headers: {
      "user-agent": `octokit-auth-app.js/${VERSION8} ${getUserAgent()}`
    }
  });
  const state = Object.assign(
    {
      request: request2,
      cache: getCache()
    },
    options2,
    options2.installationId ? { installationId: Number(options2.installationId) } : {},
    {
      log,
      oauthApp: createOAuthAppAuth({
        clientType: "github-app",
        clientId: options2.clientId || "",
        clientSecret: options2.clientSecret || "",
        request: request2
      })
    }
  );
  return Object.assign(auth5.bind(null, state), {
    hook: hook5.bind(null, state)
  });
}

// node_modules/octokit-auth-probot/dist-node/index.js
async function auth6(state, options2) {
  if (options2.type !== "event-octokit") {
    if (state.type === "token" && options2.type === "installation" && options2.factory) {
      const { type, factory, ...factoryAuthOptions } = options2;
      return factory(
        Object.assign({}, factoryAuthOptions, {
          octokit: state.octokit,
          octokitOptions: state.octokitOptions
        })
      );
    }
    return state.auth(options2);
  }
  if (state.type !== "app") {
    return state.octokit;
  }
  const action = options2.event.payload.action;
  const installationId = options2.event.payload.installation && options2.event.payload.installation.id;
  const fullEventName = options2.event.name + (action ? "." + action : "");
  const OctokitWithEventAuth = state.octokit.constructor;
  if (!installationId) {
    const { auth: auth22, ...octokitOptions } = state.octokitOptions;
    return new OctokitWithEventAuth({
      authStrategy: createUnauthenticatedAuth,
      auth: {
        reason: `Handling a "${fullEventName}" event: an "installation" key is missing. The installation ID cannot be determined`
      },
      ...octokitOptions
    });
  }
  if (options2.event.name === "installation" && ["suspend", "deleted"].includes(String(action))) {
    const { auth: auth22, ...octokitOptions } = state.octokitOptions;
    return new OctokitWithEventAuth({
      authStrategy: createUnauthenticatedAuth,
      auth: {
        reason: `Handling a "${fullEventName}" event: The app's access has been revoked from @octokit (id: ${installationId})`
      },
      ...octokitOptions
    });
  }
  return state.auth({
    type: "installation",
    installationId,
    factory: (auth22) => {
      const options22 = Object.assign({}, state.octokitOptions, {
        auth: Object.assign({}, auth22, {
          installationId
        })
      });
      return new OctokitWithEventAuth(options22);
    }
  });
}
function getState(options2) {
  const common = {
    octokit: options2.octokit,
    octokitOptions: options2.octokitOptions
  };
  if ("token" in options2) {
    return {
      type: "token",
      auth: createTokenAuth(String(options2.token)),
      ...common
    };
  }
  if ("appId" in options2 && ("privateKey" in options2 || "createJwt" in options2)) {
    return {
      type: "app",
      auth: createAppAuth(options2),
      ...common
    };
  }
  return {
    type: "unauthenticated",
    auth: createUnauthenticatedAuth({
      reason: `Neither "appId"/"privateKey" nor "token" have been set as auth options`
    }),
    ...common
  };
}
var VERSION9 = "0.0.0-development";
function createProbotAuthFn(options2) {
  const state = getState(options2);
  return Object.assign(auth6.bind(null, state), {
    hook: state.auth.hook
  });
}
createProbotAuthFn.VERSION = VERSION9;
var createProbotAuth = createProbotAuthFn;

// node_modules/probot/lib/octokit/octokit-plugin-probot-request-logging.js
function probotRequestLogging(octokit) {
  octokit.hook.error("request", (error, options2) => {
    if ("status" in error) {
      const { method, url, ...params } = octokit.request.endpoint.parse(options2);
      const msg = `GitHub request: ${method} ${url} - ${error.status}`;
      octokit.log.debug(params.body || {}, msg);
    }
    throw error;
  });
  octokit.hook.after("request", (result, options2) => {
    const { method, url, ...params } = octokit.request.endpoint.parse(options2);
    const msg = `GitHub request: ${method} ${url} - ${result.status}`;
    octokit.log.debug(params.body || {}, msg);
  });
}

// node_modules/probot/lib/version.js
var VERSION10 = "14.3.2";

// node_modules/probot/lib/octokit/probot-octokit.js
var defaultOptions = {
  authStrategy: createProbotAuth,
  throttle: {
    enabled: true,
    onSecondaryRateLimit: (retryAfter, options2, octokit) => {
      octokit.log.warn(`Secondary Rate limit hit with "${options2.method} ${options2.url}", retrying in ${retryAfter} seconds.`);
      return true;
    },
    onRateLimit: (retryAfter, options2, octokit) => {
      octokit.log.warn(`Rate limit hit with "${options2.method} ${options2.url}", retrying in ${retryAfter} seconds.`);
      return true;
    }
  },
  userAgent: `probot/${VERSION10}`
};
var ProbotOctokit = Octokit.plugin(throttling, retry, paginateRest, restEndpointMethods, enterpriseCompatibility, probotRequestLogging, config).defaults((instanceOptions) => {
  const options2 = {
    ...defaultOptions,
    ...instanceOptions,
    ...{
      throttle: { ...defaultOptions.throttle, ...instanceOptions?.throttle }
    }
  };
  return options2;
});

// node_modules/probot/lib/octokit/get-octokit-throttle-options.js
var import_bottleneck = __toESM(require_lib(), 1);
async function getOctokitThrottleOptions(options2) {
  const { log, redisConfig } = options2;
  const throttlingOptions = {
    onRateLimit: (retryAfter, options3) => {
      log.warn(`Request quota exhausted for request ${options3.method} ${options3.url}`);
      if (options3.request.retryCount <= 2) {
        log.info(`Retrying after ${retryAfter} seconds!`);
        return true;
      }
      return false;
    },
    onSecondaryRateLimit: (_retryAfter, options3) => {
      log.warn(`Secondary quota detected for request ${options3.method} ${options3.url}`);
    }
  };
  if (!redisConfig)
    return throttlingOptions;
  const connection = new import_bottleneck.default.IORedisConnection({
    client: await getRedisClient(options2)
  });
  connection.on("error", (error) => {
    log.error(Object.assign(error, { source: "bottleneck" }));
  });
  throttlingOptions.Bottleneck = import_bottleneck.default;
  throttlingOptions.connection = connection;
  return throttlingOptions;
}
var Redis = null;
async function getRedisClient({ redisConfig }) {
  Redis ??= (await npxImport("ioredis@5.9.3", { onlyPackageRunner: true })).Redis;
  if (redisConfig)
    return new Redis(redisConfig);
}

// node_modules/probot/lib/octokit/get-probot-octokit-with-defaults.js
async function getProbotOctokitWithDefaults(options2) {
  const authOptions = options2.githubToken ? {
    token: options2.githubToken,
    request: request.defaults({
      request: {
        fetch: options2.request?.fetch
      }
    })
  } : {
    cache: options2.cache,
    appId: options2.appId,
    privateKey: options2.privateKey,
    request: request.defaults({
      request: {
        fetch: options2.request?.fetch
      }
    })
  };
  const log = options2.log.child({ name: "octokit" });
  const octokitThrottleOptions = await getOctokitThrottleOptions({
    log,
    redisConfig: options2.redisConfig
  });
  const defaultOptions2 = {
    log,
    auth: authOptions
  };
  if (options2.request) {
    defaultOptions2.request = options2.request;
  }
  if (options2.baseUrl) {
    defaultOptions2.baseUrl = options2.baseUrl;
  }
  if (octokitThrottleOptions) {
    defaultOptions2.throttle = octokitThrottleOptions;
  }
  return options2.Octokit.defaults((instanceOptions) => {
    const options3 = Object.assign({}, defaultOptions2, instanceOptions, {
      auth: instanceOptions.auth ? Object.assign({}, defaultOptions2.auth, instanceOptions.auth) : defaultOptions2.auth
    });
    if (instanceOptions.throttle) {
      options3.throttle = Object.assign({}, defaultOptions2.throttle, instanceOptions.throttle);
    }
    return options3;
  });
}

// node_modules/probot/lib/helpers/get-error-handler.js
function getErrorHandler(log) {
  return (error) => {
    const errors = error instanceof AggregateError ? error.errors : [error];
    const event = error.event;
    for (const error2 of errors) {
      const errMessage = (error2.message || "").toLowerCase();
      if (errMessage.includes("x-hub-signature-256")) {
        log.error(error2, "Go to https://github.com/settings/apps/YOUR_APP and verify that the Webhook secret matches the value of the WEBHOOK_SECRET environment variable.");
        continue;
      }
      if (errMessage.includes("pem") || errMessage.includes("json web token")) {
        log.error(error2, "Your private key (a .pem file or PRIVATE_KEY environment variable) or APP_ID is incorrect. Go to https://github.com/settings/apps/YOUR_APP, verify that APP_ID is set correctly, and generate a new PEM file if necessary.");
        continue;
      }
      log.child({
        name: "event",
        id: event?.id
      }).error(error2);
    }
  };
}

// node_modules/probot/lib/octokit/octokit-webhooks-transform.js
async function webhookTransform(options2, event) {
  const octokit = await options2.octokit.auth({
    type: "event-octokit",
    event
  });
  const log = options2.log.child({ name: "event", id: event.id });
  return new Context(event, octokit, log);
}

// node_modules/probot/lib/octokit/get-webhooks.js
function getWebhooks(options2) {
  const webhooks = new Webhooks({
    log: options2.log,
    secret: options2.webhookSecret,
    transform: (event) => webhookTransform(options2, event)
  });
  webhooks.onError(getErrorHandler(options2.log));
  return webhooks;
}

// node_modules/probot/lib/server/handlers/http-logger.js
var import_pino_http = __toESM(require_logger(), 1);

// node_modules/probot/lib/server/server.js
var defaultWebhookPath = "/api/github/webhooks";
var defaultWebhookSecret = "development";

// node_modules/probot/lib/probot.js
var UNINITIALIZED = 0;
var INITIALIZING = 1;
var INITIALIZED = 2;
var Probot = class {
  static defaults(defaults) {
    const ProbotWithDefaults = class extends this {
      constructor(...args) {
        const options2 = args[0] || {};
        super(Object.assign({}, defaults, options2));
      }
    };
    return ProbotWithDefaults;
  }
  #state;
  constructor(options2 = {}) {
    if (!options2.githubToken) {
      if (!options2.appId) {
        throw new Error("appId option is required");
      }
      if (!options2.privateKey) {
        throw new Error("privateKey option is required");
      }
    }
    this.#state = {
      initializationState: UNINITIALIZED,
      initializedPromise: createDeferredPromise(),
      initEventListeners: [],
      cache: null,
      octokit: null,
      webhooks: null,
      log: options2.log || null,
      logFormat: options2.logFormat || "pretty",
      logLevelInString: options2.logLevelInString || false,
      logLevel: options2.logLevel || "warn",
      logMessageKey: options2.logMessageKey,
      sentryDsn: options2.sentryDsn,
      githubToken: options2.githubToken,
      appId: Number.parseInt(options2.appId, 10),
      privateKey: options2.privateKey,
      host: options2.host,
      port: options2.port,
      OctokitBase: options2.Octokit || ProbotOctokit,
      baseUrl: options2.baseUrl,
      redisConfig: options2.redisConfig,
      webhookPath: options2.webhookPath || defaultWebhookPath,
      webhookSecret: options2.secret || defaultWebhookSecret,
      request: options2.request,
      server: options2.server
    };
    this.#initialize().catch(() => {
    });
  }
  async #initialize() {
    if (this.#state.initializationState !== UNINITIALIZED) {
      return this.#state.initializedPromise.promise;
    }
    this.#state.initializationState = INITIALIZING;
    try {
      this.#state.cache = new LruObject(
        // cache max. 15000 tokens, that will use less than 10mb memory
        15e3,
        // Cache for 1 minute less than GitHub expiry
        1e3 * 60 * 59
      );
      this.#state.log = this.#state.log || await getLog({
        logFormat: this.#state.logFormat,
        logLevelInString: this.#state.logLevelInString,
        level: this.#state.logLevel,
        logMessageKey: this.#state.logMessageKey,
        sentryDsn: this.#state.sentryDsn
      });
      this.#state.log = this.#state.log.child({ name: "probot" });
      const Octokit2 = await getProbotOctokitWithDefaults({
        githubToken: this.#state.githubToken,
        Octokit: this.#state.OctokitBase,
        appId: this.#state.appId,
        privateKey: this.#state.privateKey,
        cache: this.#state.cache,
        log: this.#state.log,
        redisConfig: this.#state.redisConfig,
        baseUrl: this.#state.baseUrl,
        request: this.#state.request
      });
      this.#state.octokit = new Octokit2();
      this.#state.webhooks = getWebhooks({
        log: this.#state.log,
        octokit: this.#state.octokit,
        webhookSecret: this.#state.webhookSecret
      });
      this.#state.initializationState = INITIALIZED;
      for (const [type, listener, name] of this.#state.initEventListeners) {
        switch (type) {
          case "on":
            this.#state.webhooks.on(name, listener);
            break;
          case "onAny":
            this.#state.webhooks.onAny(listener);
            break;
          case "onError":
            this.#state.webhooks.onError(listener);
            break;
        }
      }
      this.#state.initEventListeners.length = 0;
      this.#state.initializedPromise.resolve();
    } catch (error) {
      if (this.#state.log) {
        this.#state.log.error({ err: error }, "Failed to initialize Probot");
      } else {
        console.error("Failed to initialize Probot", error);
      }
      this.#state.initializedPromise.reject(error);
    } finally {
      return this.#state.initializedPromise.promise;
    }
  }
  async getNodeMiddleware({ log, path: path2 } = {}) {
    await this.#initialize();
    return createNodeMiddleware(this.#state.webhooks, {
      log: log || this.#state.log,
      path: path2 || this.#state.webhookPath
    });
  }
  async auth(installationId) {
    await this.#initialize();
    return await getAuthenticatedOctokit({
      log: this.#state.log,
      octokit: this.#state.octokit,
      installationId
    });
  }
  async load(appFn, options2 = {
    cwd: process.cwd()
  }) {
    await this.#state.initializedPromise.promise;
    if (typeof options2.addHandler !== "function") {
      options2.addHandler = this.#state.server ? this.#state.server.addHandler.bind(this.#state.server) : () => {
        throw new Error("No server instance");
      };
    }
    if (Array.isArray(appFn)) {
      for (const fn of appFn) {
        await this.load(fn, options2);
      }
      return;
    }
    await appFn(this, options2);
    return;
  }
  get log() {
    return this.#state.log;
  }
  on = (eventName, callback) => {
    if (Array.isArray(eventName)) {
      for (const name of eventName) {
        validateEventName(name, {
          onUnknownEventName: "ignore"
        });
      }
    } else {
      validateEventName(eventName, {
        onUnknownEventName: "ignore"
      });
    }
    if (this.#state.initializationState !== INITIALIZED) {
      this.#state.initEventListeners.push(["on", callback, eventName]);
      return;
    }
    this.#state.webhooks.on(eventName, callback);
  };
  onAny = (callback) => {
    if (this.#state.initializationState !== INITIALIZED) {
      this.#state.initEventListeners.push(["onAny", callback]);
      return;
    }
    this.#state.webhooks.onAny(callback);
  };
  onError = (callback) => {
    if (this.#state.initializationState !== INITIALIZED) {
      this.#state.initEventListeners.push(["onError", callback]);
      return;
    }
    this.#state.webhooks.onError(callback);
  };
  async ready() {
    await this.#state.initializedPromise.promise;
    return this;
  }
  async receive(event) {
    await this.#state.initializedPromise.promise;
    this.#state.log.debug({ event }, "Webhook received");
    await this.#state.webhooks.receive(event);
    return;
  }
  static get version() {
    return VERSION10;
  }
  get version() {
    return VERSION10;
  }
  get webhooks() {
    return this.#state.webhooks;
  }
  get webhookPath() {
    return this.#state.webhookPath;
  }
};

// node_modules/probot/lib/manifest-creation.js
var import_yaml2 = __toESM(require_dist(), 1);

// node_modules/probot/lib/helpers/get-payload.js
var textDecoder2 = new TextDecoder("utf-8", { fatal: false });
var decode2 = textDecoder2.decode.bind(textDecoder2);

// src/github/app-client.ts
var import_bottleneck2 = __toESM(require_lib(), 1);

// src/github/instrument.ts
var CONTENT_CREATING = [
  /^POST \/repos\/[^/]+\/[^/]+\/issues$/,
  /^POST \/repos\/[^/]+\/[^/]+\/issues\/\d+\/comments$/,
  /^POST \/repos\/[^/]+\/[^/]+\/pulls$/,
  /^PUT \/repos\/[^/]+\/[^/]+\/contents\//,
  /^POST \/repos\/[^/]+\/[^/]+\/git\/commits$/,
  /^POST \/repos\/[^/]+\/[^/]+\/merges$/,
  /^PUT \/repos\/[^/]+\/[^/]+\/pulls\/\d+\/merge$/,
  /^POST \/repos\/[^/]+\/[^/]+\/check-runs$/,
  /reactions$/
];
function isGraphqlQuery(path2, o) {
  const query = o.query;
  return path2.endsWith("/graphql") && typeof query === "string" && !/^\s*mutation\b/.test(query);
}
var isContentCreating = (route) => CONTENT_CREATING.some((re) => re.test(route));
function newCallStats() {
  return { reads: 0, writes: 0, contentCreating: 0, byRoute: {} };
}
function pathOf(octokit, o) {
  const parsed = octokit.request.endpoint.parse(o);
  return {
    method: parsed.method.toUpperCase(),
    path: parsed.url.replace(/^https?:\/\/[^/]+/, "").replace(/^\/api\/v3/, "").split("?")[0]
  };
}
function instrument(octokit, stats, onRequest) {
  if (onRequest) {
    octokit.hook.wrap("request", async (request2, o) => {
      const { method, path: path2 } = pathOf(octokit, o);
      const route = `${method} ${path2}`;
      const start = performance.now();
      let status;
      try {
        const res = await request2(o);
        status = res.status;
        return res;
      } catch (e) {
        status = e.status;
        throw e;
      } finally {
        onRequest({ route, start, end: performance.now(), ...status !== void 0 ? { status } : {} });
      }
    });
  }
  octokit.hook.before("request", (o) => {
    const { method, path: path2 } = pathOf(octokit, o);
    const route = `${method} ${path2}`;
    if (method === "GET" || isGraphqlQuery(path2, o)) stats.reads++;
    else stats.writes++;
    if (isContentCreating(route)) stats.contentCreating++;
    const template = `${method} ${typeof o.url === "string" && o.url.includes("{") ? o.url : path2}`;
    stats.byRoute[template] = (stats.byRoute[template] ?? 0) + 1;
  });
}

// src/github/pacing.ts
var GITHUB_PACE = { concurrent: 100, perMinute: 80, perHour: 500 };
var MINUTE = 6e4;
var HOUR = 36e5;
var Pacer = class {
  constructor(limits = GITHUB_PACE, clock = realClock) {
    this.limits = limits;
    this.clock = clock;
  }
  limits;
  clock;
  #inFlight = 0;
  #waiting = [];
  #closed = false;
  /** Start times of the content-creating requests of the last hour, oldest first. */
  #created = [];
  #timer;
  /** No request starts before this time (GitHub answered a rate limit). */
  #heldUntil = 0;
  /** Figures for benchmarks: the longest wait and how many requests waited. */
  stats = { waited: 0, longestWaitMs: 0, maxInFlight: 0, holds: 0 };
  now() {
    return this.clock.now();
  }
  /** Run `request` when the bounds allow; `creating` when GitHub counts it as content-creating. */
  async run(creating, request2) {
    const asked = this.now();
    if (this.#closed) throw new PaceClosedError();
    if (this.#waiting.length || !this.#free(creating)) {
      await new Promise((go, refuse) => {
        this.#waiting.push({ creating, go, refuse });
        this.#pump();
      });
      this.stats.waited++;
      this.stats.longestWaitMs = Math.max(this.stats.longestWaitMs, this.now() - asked);
    } else this.#start(creating);
    try {
      return await request2();
    } finally {
      this.#inFlight--;
      this.#pump();
    }
  }
  /** GitHub answered a rate limit: no request of the installation starts before `at`. */
  holdUntil(at) {
    if (at <= this.#heldUntil) return;
    this.#heldUntil = at;
    this.stats.holds++;
    this.clock.clear(this.#timer);
    this.#timer = void 0;
    this.#pump();
  }
  /** When the installation's requests may start again (0: not held). */
  get heldUntil() {
    return this.#heldUntil > this.now() ? this.#heldUntil : 0;
  }
  /**
   * The App is closing: requests still waiting for their turn are refused, not sent later by a
   * process that is going away (their effects stay in the outbox for the next process); requests
   * under way finish. Later requests are refused at once.
   */
  close() {
    this.#closed = true;
    this.clock.clear(this.#timer);
    this.#timer = void 0;
    for (const w of this.#waiting.splice(0)) w.refuse(new PaceClosedError());
  }
  /** Requests waiting for their turn (for a window to open, or for a hold to end). */
  get waiting() {
    return this.#waiting.length;
  }
  /** When a content-creating request may start (now or later), by the minute and hour windows. */
  #creatableAt() {
    const now = this.now();
    while (this.#created.length && this.#created[0] <= now - HOUR) this.#created.shift();
    let at = Math.max(now, this.#heldUntil);
    const n2 = this.#created.length;
    if (n2 >= this.limits.perHour) at = Math.max(at, this.#created[n2 - this.limits.perHour] + HOUR);
    if (n2 >= this.limits.perMinute) at = Math.max(at, this.#created[n2 - this.limits.perMinute] + MINUTE);
    return at;
  }
  #free(creating) {
    const now = this.now();
    return this.#inFlight < this.limits.concurrent && this.#heldUntil <= now && (!creating || this.#creatableAt() <= now);
  }
  #start(creating) {
    this.#inFlight++;
    this.stats.maxInFlight = Math.max(this.stats.maxInFlight, this.#inFlight);
    if (creating) this.#created.push(this.now());
  }
  /** Start the waiting requests in order while the bounds allow; wake up when the window opens. */
  #pump() {
    if (this.#closed) return;
    while (this.#waiting.length && this.#free(this.#waiting[0].creating)) {
      const next = this.#waiting.shift();
      this.#start(next.creating);
      next.go();
    }
    const head = this.#waiting[0];
    if (!head || this.#timer || this.#inFlight >= this.limits.concurrent) return;
    this.#timer = this.clock.setTimeout(
      () => {
        this.#timer = void 0;
        this.#pump();
      },
      Math.max(1, (head.creating ? this.#creatableAt() : this.#heldUntil) - this.now())
    );
  }
};
var PaceClosedError = class extends Error {
  constructor() {
    super("the App is closing: a request that waited for its turn under the pace was not sent");
    this.name = "PaceClosedError";
  }
};

// src/github/port.ts
var GitHubError = class extends Error {
  constructor(message, status, operation, options2) {
    super(message, options2);
    this.status = status;
    this.operation = operation;
    this.name = "GitHubError";
  }
  status;
  operation;
};
var ConflictError = class extends GitHubError {
  constructor(operation, message = "the ref moved since it was read") {
    super(message, 409, operation);
    this.name = "ConflictError";
  }
};

// src/github/octokit-rest.ts
function statusOf(e) {
  return e?.status;
}
function rateLimitWaitMs(e, now) {
  const err = e instanceof GitHubError && e.cause ? e.cause : e;
  if (err?.status !== 403 && err?.status !== 429) return void 0;
  const h = err.response?.headers ?? {};
  const after = Number(h["retry-after"]);
  if (h["retry-after"] !== void 0 && Number.isFinite(after)) return Math.max(0, after * 1e3);
  if (String(h["x-ratelimit-remaining"]) === "0") {
    const reset = Number(h["x-ratelimit-reset"]);
    if (Number.isFinite(reset)) return Math.max(0, reset * 1e3 - now) + 1e3;
  }
  const message = err.response?.data?.message ?? err.message ?? "";
  if (err.status === 429 || /secondary rate limit/i.test(message)) return 6e4;
  return void 0;
}
function wrap(operation, e) {
  if (e instanceof GitHubError) return e;
  const status = statusOf(e) ?? 0;
  const message = e?.response?.data?.message ?? e?.message ?? String(e);
  return new GitHubError(`${operation}: ${status} ${message}`, status, operation, { cause: e });
}
function pull(data) {
  const merged = data.merged ?? data.merged_at != null;
  return {
    number: data.number,
    state: data.state === "open" ? "open" : "closed",
    merged,
    ...merged && data.merge_commit_sha ? { mergeSha: data.merge_commit_sha } : {},
    headRef: data.head.ref,
    headSha: data.head.sha,
    baseRef: data.base.ref,
    draft: data.draft ?? false,
    // GitHub gives a null head repository when the fork was deleted: not this repository either.
    fromFork: !data.head.repo || data.base.repo != null && data.head.repo.id !== data.base.repo.id,
    // Only a pull request read alone says (a list does not): null while GitHub computes it.
    ..."mergeable" in data ? { mergeable: data.mergeable ?? null } : {},
    ..."auto_merge" in data ? { autoMerge: data.auto_merge != null } : {}
  };
}
function mergeRefusal(e) {
  if (statusOf(e) === 405) {
    const message = wrap("pulls.merge", e).message;
    return /base branch was modified/i.test(message) ? { kind: "base_moved", message } : { kind: "not_mergeable", message };
  }
  if (statusOf(e) === 409) return { kind: "head_moved" };
  throw wrap("pulls.merge", e);
}
function reviewInfo(r) {
  return { id: r.id, login: r.user?.login ?? "", bot: r.user?.type === "Bot", state: r.state, commitId: r.commit_id ?? "", body: r.body };
}
function runInfo(r) {
  return {
    id: r.id,
    headBranch: r.head_branch ?? "",
    status: r.status ?? "",
    conclusion: r.conclusion ?? null,
    createdAt: r.created_at,
    event: r.event,
    path: r.path ?? void 0,
    headRepositoryId: r.head_repository?.id ?? null
  };
}
function checkBody(f) {
  return {
    ...f.name !== void 0 ? { name: f.name } : {},
    ...f.headSha !== void 0 ? { head_sha: f.headSha } : {},
    ...f.status !== void 0 ? { status: f.status } : {},
    ...f.conclusion !== void 0 ? { conclusion: f.conclusion } : {},
    ...f.detailsUrl !== void 0 ? { details_url: f.detailsUrl } : {},
    ...f.externalId !== void 0 ? { external_id: f.externalId } : {},
    ...f.actions !== void 0 ? { actions: f.actions } : {},
    ...f.title !== void 0 || f.summary !== void 0 ? {
      output: {
        title: f.title ?? "",
        summary: f.summary ?? "",
        ...f.text !== void 0 ? { text: f.text } : {},
        ...f.annotations !== void 0 ? {
          annotations: f.annotations.map((a) => ({
            path: a.path,
            start_line: a.startLine,
            end_line: a.endLine,
            annotation_level: a.level,
            message: a.message,
            ...a.title ? { title: a.title } : {}
          }))
        } : {}
      }
    } : {},
    ...f.status === "completed" ? { completed_at: (/* @__PURE__ */ new Date()).toISOString() } : {}
  };
}
function endedJobsOf(jobs) {
  const runnerLost = jobs.some((j) => j.status === "completed" && (j.steps ?? []).some((step2) => step2.status !== "completed"));
  const job = jobs.find((j) => j.conclusion !== null && j.conclusion !== "success" && j.conclusion !== "skipped");
  if (!job) return { runnerLost };
  const step = (job.steps ?? []).find((x) => x.conclusion === "failure" || x.conclusion === "timed_out" || x.conclusion === "cancelled");
  return {
    runnerLost,
    failed: { name: job.name, ...step ? { step: step.name } : {}, ...job.html_url ? { htmlUrl: job.html_url } : {} }
  };
}

// src/github/branch-update.ts
async function updatePullBranch(octokit, owner, repo, number, expectedHeadSha) {
  try {
    await octokit.rest.pulls.updateBranch({ owner, repo, pull_number: number, expected_head_sha: expectedHeadSha });
    return { kind: "accepted" };
  } catch (e) {
    const status = statusOf(e);
    const message = e.response?.data?.message ?? e.message ?? "";
    if (status === 422) {
      if (/expected head sha/i.test(message)) return { kind: "head_moved", message };
      if (/no new commits/i.test(message)) return { kind: "up_to_date", message };
      if (/merge conflict/i.test(message)) return { kind: "conflict", message };
      return { kind: "refused", message };
    }
    if (status === 403 && rateLimitWaitMs(e, 0) === void 0) return { kind: "refused", message };
    throw wrap("pulls.updateBranch", e);
  }
}
var wantsUpToDate = (message) => /out of date/i.test(message);
var BRANCH_UPDATE_POLL_MS = 2e3;
var BRANCH_UPDATE_WAIT_MS = 2 * 6e4;
function conflictBlocker(taskId, branch, base, message) {
  return `\`${branch}\` conflicts with \`${base}\`, and GitHub cannot merge or update it ("${message.replace(/\s+/g, " ").trim()}"). Comment \`/forge fix ${taskId} merge ${base} into the branch and resolve the conflicts\` (a revision of the task does it), or resolve them on the pull request and merge it by hand.`;
}
function updateRefusedBlocker(branch, base, message) {
  return `\`${base}\` requires branches to be up to date before merging, and GitHub refused to update \`${branch}\` ("${message.replace(/\s+/g, " ").trim()}"). Give the Forge App write access to \`${branch}\` (Contents and Pull requests), or turn off "Require branches to be up to date" for \`${base}\`, then comment \`/forge retry\`.`;
}

// src/github/ci-checks.ts
function ciVerdict(ci, configured) {
  if (ci.running || ci.missing.some((n2) => configured.includes(n2))) return "wait";
  return ci.failing.length ? "red" : "go";
}
var CI_LIMITS = { checks: 5, summary: 1e3, annotations: 10, annotation: 300, logLines: 40, logChars: 3e3 };
var cut = (text, max) => text.length > max ? `${text.slice(0, max)}\u2026` : text;
var isForges = (name) => name.startsWith("forge \xB7 ");
async function readCiChecks(octokit, r, headSha, names) {
  if (names.length === 0) return { pending: false, running: false, missing: [], failing: [] };
  const { data } = await octokit.rest.checks.listForRef({ ...r, ref: headSha, filter: "latest", per_page: 100 });
  const considered = data.check_runs.filter((c) => !isForges(c.name) && names.includes(c.name));
  const { data: combined } = await octokit.rest.repos.getCombinedStatusForRef({ ...r, ref: headSha, per_page: 100 });
  const statuses = combined.statuses.filter((st) => !isForges(st.context) && names.includes(st.context));
  const running = considered.some((c) => c.status !== "completed") || statuses.some((st) => st.state === "pending");
  const missing = names.filter((n2) => !considered.some((c) => c.name === n2) && !statuses.some((st) => st.context === n2));
  const pending = running || missing.length > 0;
  const failed = considered.filter((c) => c.status === "completed" && (c.conclusion === "failure" || c.conclusion === "timed_out"));
  const failing = [];
  for (const c of failed.slice(0, CI_LIMITS.checks)) {
    const annotations = c.output.annotations_count ? (await octokit.rest.checks.listAnnotations({ ...r, check_run_id: c.id, per_page: CI_LIMITS.annotations })).data.map(
      (a) => cut(`${a.path}:${a.start_line} ${a.annotation_level}: ${a.message ?? ""}`, CI_LIMITS.annotation)
    ) : [];
    failing.push({
      name: cut(c.name, 200),
      conclusion: c.conclusion ?? "failure",
      title: cut(c.output.title ?? "", 200),
      summary: cut(c.output.summary ?? "", CI_LIMITS.summary),
      annotations,
      log: c.app?.slug === "github-actions" ? await jobLogTail(octokit, r, c.id) : ""
    });
  }
  for (const st of statuses.filter((x) => x.state === "failure" || x.state === "error")) {
    if (failing.length >= CI_LIMITS.checks) break;
    failing.push({
      name: cut(st.context, 200),
      conclusion: st.state,
      title: "",
      summary: cut([st.description ?? "", st.target_url ? `Details: ${st.target_url}` : ""].filter(Boolean).join("\n"), CI_LIMITS.summary),
      annotations: [],
      log: ""
    });
  }
  return { pending, running, missing, failing };
}
async function jobLogTail(octokit, r, jobId) {
  try {
    const res = await octokit.rest.actions.downloadJobLogsForWorkflowRun({ ...r, job_id: jobId });
    const text = typeof res.data === "string" ? res.data : Buffer.from(res.data).toString("utf8");
    return cut(text.split("\n").slice(-CI_LIMITS.logLines).join("\n"), CI_LIMITS.logChars);
  } catch {
    return "";
  }
}
function checksFailedInput(ref, headSha, failing) {
  const details = failing.map(
    (c) => [
      `### ${c.name} (${c.conclusion})${c.title ? `: ${c.title}` : ""}`,
      c.summary,
      c.annotations.length ? `Annotations:
${c.annotations.map((a) => `- ${a}`).join("\n")}` : "",
      c.log ? `End of the log:
${c.log}` : ""
    ].filter(Boolean).join("\n\n")
  ).join("\n\n");
  return {
    kind: "checks.failed",
    taskId: ref.taskId,
    attempt: ref.attempt,
    headSha,
    checks: failing.map((c) => c.name),
    details: bounded(details, FEEDBACK_LIMITS.details)
  };
}
function onGroup(failing, group, base) {
  const where2 = `Failed in the merge queue: on merge group ${group.slice(0, 7)}, this pull request merged onto the tip of ${base} (the checks of the pull request's own head passed).`;
  return failing.map((c) => ({ ...c, summary: `${where2}

${c.summary}` }));
}

// src/github/ttl-cache.ts
function ttlCache() {
  const owners = /* @__PURE__ */ new WeakMap();
  const entries = (owner) => {
    let byKey = owners.get(owner);
    if (!byKey) owners.set(owner, byKey = /* @__PURE__ */ new Map());
    return byKey;
  };
  return {
    async get(owner, key, now, ttlMs, read) {
      const hit = entries(owner).get(key);
      if (hit && now - hit.at < ttlMs) return hit.value;
      const value = await read();
      entries(owner).set(key, { at: now, value });
      return value;
    },
    peek: (owner, key) => owners.get(owner)?.get(key)?.value,
    set: (owner, key, value, now) => void entries(owner).set(key, { at: now, value })
  };
}

// src/github/required-checks.ts
var REQUIRED_CHECK_LIMITS = { names: 50, name: 200 };
function rulesetContexts(rules) {
  const out = [];
  for (const r of rules) {
    if (r.type !== "required_status_checks") continue;
    const list = r.parameters?.required_status_checks;
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      const context = c?.context;
      if (typeof context === "string") out.push(context);
    }
  }
  return bound(out);
}
function protectionContexts(branch) {
  const checks = branch?.protection?.required_status_checks;
  const contexts = Array.isArray(checks?.contexts) ? checks.contexts : [];
  const named = Array.isArray(checks?.checks) ? checks.checks.map((c) => c?.context) : [];
  return bound([...contexts, ...named].filter((c) => typeof c === "string"));
}
async function readRuledChecks(port, branch, rules = () => port.branchRules(branch)) {
  const [ruled2, protectedBy] = await Promise.all([rules(), port.protectionChecks(branch)]);
  return [...rulesetContexts(ruled2), ...protectedBy];
}
function bound(names) {
  const out = /* @__PURE__ */ new Set();
  for (const n2 of names) {
    if (out.size >= REQUIRED_CHECK_LIMITS.names) break;
    const cut4 = n2.slice(0, REQUIRED_CHECK_LIMITS.name);
    if (cut4.trim()) out.add(cut4);
  }
  return [...out];
}
var ruled = ttlCache();
async function requiredChecks(owner, branch, configured, now, ttlMs, read) {
  let names;
  try {
    names = await ruled.get(owner, branch, now, ttlMs, async () => bound(await read()));
  } catch {
    return { all: [...configured], configured: [...configured] };
  }
  return { all: [.../* @__PURE__ */ new Set([...configured, ...names])], configured: [...configured] };
}
var RULED_CHECK_GRACE_MS = 45e3;
var unreported = /* @__PURE__ */ new WeakMap();
function graceLeft(owner, head, missing, now, graceMs = RULED_CHECK_GRACE_MS) {
  const seen = unreported.get(owner) ?? /* @__PURE__ */ new Map();
  unreported.set(owner, seen);
  if (missing.length === 0) {
    seen.delete(head);
    return 0;
  }
  const since = seen.get(head) ?? now;
  if (!seen.has(head)) {
    if (seen.size >= 1e3) seen.delete(seen.keys().next().value);
    seen.set(head, since);
  }
  return Math.max(0, since + graceMs - now);
}

// src/github/rule-refusals.ts
function ruleRefusal(text) {
  const lines = text.replace(/\r/g, "").replace(/%0A/gi, "\n").split("\n").map((l) => l.replace(/^.*?remote:\s?/, "").replace(/\s+$/, ""));
  const at = lines.findIndex(
    (l) => /GH013: Repository rule violations found for|GH006: Protected branch update failed for|Repository rule violations found/.test(l)
  );
  if (at < 0) return void 0;
  const head = lines[at];
  const gh = /(GH013|GH006): .* for (\S+?)\.?$/.exec(head);
  const code2 = gh?.[1] ?? "REST";
  const messages = [];
  const found = [];
  let listing = false;
  for (const raw of lines.slice(at + 1)) {
    if (/^To |^ ! \[|^error: failed to push/.test(raw)) break;
    const l = raw.replace(/^error:\s*/, "");
    if (!l.trim()) continue;
    if (/^Review all repository rules at /.test(l)) continue;
    if (/^\s+Found \d+ violations?:/.test(l)) {
      listing = true;
      continue;
    }
    if (listing && /^\s{2,}\S/.test(l)) {
      found.push(l.trim());
      continue;
    }
    listing = false;
    const m = code2 === "GH013" ? /^- (.+)$/.exec(l) : /^(?:- )?(.+)$/.exec(l.trim());
    if (m && !messages.includes(m[1])) messages.push(m[1]);
  }
  return { code: code2, ...gh ? { ref: gh[2] } : {}, messages, found };
}
var TEXTS = [
  [/through the merge queue/i, "merge_queue"],
  [/verified signatures/i, "required_signatures"],
  [/must not contain merge commits|merge commits are not allowed/i, "required_linear_history"],
  [/through a pull request/i, "pull_request"],
  [/approving review/i, "pull_request"],
  [/merge method/i, "pull_request"],
  [/required status check/i, "required_status_checks"],
  [/out of date/i, "required_status_checks"],
  [/creations being restricted/i, "creation"],
  [/cannot update this protected ref/i, "update"],
  [/cannot delete this protected/i, "deletion"],
  [/cannot force-push/i, "non_fast_forward"],
  [/^commit message must/i, "commit_message_pattern"],
  [/^commit author email must/i, "commit_author_email_pattern"],
  [/^committer email must/i, "committer_email_pattern"],
  [/^branch name must/i, "branch_name_pattern"],
  [/^tag name must/i, "tag_name_pattern"],
  [/restricted file paths?|file path is restricted/i, "file_path_restriction"],
  [/file extension/i, "file_extension_restriction"],
  [/file paths? must not be longer|path length|path is too long/i, "max_file_path_length"],
  [/larger than|file size/i, "max_file_size"]
];
function ruleTypesOf(message, rules = []) {
  const named = rules.filter((r) => typeof r.parameters?.name === "string" && r.parameters.name === message).map((r) => r.type);
  if (named.length) return [...new Set(named)];
  return [...new Set(TEXTS.filter(([re]) => re.test(message)).map(([, t]) => t))];
}
function describeRules(types, rules) {
  if (!types.length) return "a rule";
  const parts = types.map((type) => {
    const sets = rules.filter((r) => r.type === type && r.ruleset).map((r) => r.ruleset);
    const where2 = sets.map(
      (s2) => `${s2.name ? `"${s2.name}"` : `#${s2.id}`}${s2.sourceType === "Organization" ? ` of the organisation ${s2.source ?? ""}`.trimEnd() : ""}`
    ).filter((x, i, all) => all.indexOf(x) === i);
    return `the \`${type}\` rule${where2.length ? ` of ruleset ${where2.join(", ")}` : ""}`;
  });
  return parts.join(" and ");
}
function remedy(type, branch, push) {
  const on = `\`${branch}\``;
  const bypass = push ? "adds GitHub Actions (which the jobs push as) and the Forge App to the ruleset's bypass list" : "adds the Forge App to the ruleset's bypass list";
  switch (type) {
    case "merge_queue":
      return `an administrator removes the merge queue rule from ${on}, or ${bypass}`;
    case "required_signatures":
      return push ? `the job's commits are not signed (GitHub signs only the commits it creates itself): an administrator excludes Forge's branches (\`forge/**\`) from the rule or ${bypass}` : `GitHub signs the squash and merge commits it makes but not a rebase's: an administrator allows squash merging, or excludes ${on} from the rule`;
    case "file_path_restriction":
    case "file_extension_restriction":
    case "max_file_path_length":
    case "max_file_size":
      return `the task's work has files the rule refuses: a person changes the task so that it does not need them (or lifts the rule for Forge's branches, \`forge/**\`)`;
    case "commit_message_pattern":
    case "commit_author_email_pattern":
    case "committer_email_pattern":
    case "branch_name_pattern":
      return `Forge's commit messages, addresses and branch names are its own: an administrator excludes Forge's branches (\`forge/**\`) from the rule or ${bypass}`;
    case "pull_request":
    case "update":
    case "creation":
    case "non_fast_forward":
      return `an administrator excludes Forge's branches (\`forge/**\`) from the rule or ${bypass}`;
    default:
      return `an administrator changes the rule or ${bypass}`;
  }
}
function pushBlockedReason(refusal2, branch, rules = []) {
  const types = [...new Set(refusal2.messages.flatMap((m) => ruleTypesOf(m, rules)))];
  const said = refusal2.messages.length ? refusal2.messages.join(" ") : "no rule named";
  const found = refusal2.found.length ? ` (found: ${refusal2.found.slice(0, 5).join(", ")}${refusal2.found.length > 5 ? ", \u2026" : ""})` : "";
  const what = refusal2.code === "GH006" ? "the branch's protection" : describeRules(types, rules);
  const fix = refusal2.code === "GH006" ? "an administrator changes the branch protection that covers it (or lets GitHub Actions and the Forge App push to it)" : remedy(types[0] ?? "", branch, true);
  return `GitHub refused the push of \`${branch}\` (${refusal2.code}): ${what} \u2014 "${said}"${found}. What a person can do: ${fix}; then a writer comments \`/forge retry\`.`;
}
function mergeRemedy(types, branch) {
  return remedy(types[0] ?? "", branch, false);
}
async function readEndedJobs(octokit, r, runId) {
  let jobs;
  try {
    jobs = (await octokit.rest.actions.listJobsForWorkflowRun({ ...r, run_id: runId, per_page: 100 })).data.jobs;
  } catch (e) {
    throw wrap("actions.listJobsForWorkflowRun", e);
  }
  const ended = endedJobsOf(jobs);
  if (ended.runnerLost) return { ...ended, errors: [] };
  const errors = [];
  for (const j of jobs.filter((x) => x.conclusion === "failure").slice(0, 3)) {
    const id = Number(/\/check-runs\/(\d+)$/.exec(j.check_run_url ?? "")?.[1] ?? j.id);
    const annotations = await octokit.rest.checks.listAnnotations({ ...r, check_run_id: id, per_page: 50 }).then((x) => x.data).catch(() => []);
    for (const a of annotations) if (a.annotation_level === "failure" && a.message) errors.push(a.message);
  }
  return { ...ended, errors };
}

// src/github/merge-rules.ts
async function readBranchRules(octokit, owner, repo, branch) {
  try {
    const rules = await octokit.paginate(octokit.rest.repos.getBranchRules, { owner, repo, branch, per_page: 100 });
    return rules.map((r) => ({
      type: r.type,
      ..."parameters" in r && r.parameters ? { parameters: r.parameters } : {},
      ...typeof r.ruleset_id === "number" ? {
        ruleset: {
          id: r.ruleset_id,
          ...r.ruleset_source ? { source: r.ruleset_source } : {},
          ...r.ruleset_source_type ? { sourceType: r.ruleset_source_type } : {}
        }
      } : {}
    }));
  } catch (e) {
    throw wrap("repos.getBranchRules", e);
  }
}
async function readRulesetName(octokit, owner, repo, id) {
  try {
    return (await octokit.rest.repos.getRepoRuleset({ owner, repo, ruleset_id: id })).data.name;
  } catch (e) {
    throw wrap("repos.getRepoRuleset", e);
  }
}
async function withRulesetNames(rules, types, name) {
  const out = [];
  for (const r of rules) {
    if (!types.includes(r.type) || !r.ruleset) {
      out.push(r);
      continue;
    }
    const got = await name(r.ruleset.id).catch(() => void 0);
    out.push({ ...r, ruleset: { ...r.ruleset, ...got ? { name: got } : {} } });
  }
  return out;
}
async function mergePull(octokit, owner, repo, number, fields) {
  try {
    const { data } = await octokit.rest.pulls.merge({
      owner,
      repo,
      pull_number: number,
      ...fields.sha ? { sha: fields.sha } : {},
      merge_method: fields.method ?? "merge",
      ...fields.title ? { commit_title: fields.title } : {}
    });
    return { kind: "merged", sha: data.sha };
  } catch (e) {
    return mergeRefusal(e);
  }
}
function mergeMethodFor(rules) {
  if (rules.some((r) => r.type === "required_linear_history" || r.type === "required_signatures")) return "squash";
  const allowed = rules.flatMap(
    (r) => r.type === "pull_request" && Array.isArray(r.parameters?.allowed_merge_methods) ? [r.parameters.allowed_merge_methods] : []
  );
  if (allowed.length === 0 || allowed.every((a) => a.includes("merge"))) return "merge";
  for (const m of ["squash", "rebase"]) if (allowed.every((a) => a.includes(m))) return m;
  return "squash";
}
function finalMergeMethod(rules) {
  if (mergeMethodFor(rules) === "merge") return void 0;
  const allowed = rules.flatMap(
    (r) => r.type === "pull_request" && Array.isArray(r.parameters?.allowed_merge_methods) ? [r.parameters.allowed_merge_methods] : []
  );
  return allowed.every((a) => a.includes("rebase")) ? "rebase" : "squash";
}
var refusesMergeCommits = (message) => /must not contain merge commits|merge commits are not allowed/i.test(message);
function mergeBlocker(message, branch, requiredChecks2, rules = []) {
  const text = message.replace(/\s+/g, " ").trim();
  const on = `\`${branch}\``;
  const said = ruleRefusal(message)?.messages ?? [];
  const types = [...new Set((said.length ? said : [text]).flatMap((m) => ruleTypesOf(m, rules)))];
  const held = (...of) => {
    const hit = of.filter((t) => rules.some((r) => r.type === t && r.ruleset));
    return hit.length ? ` (${describeRules(hit, rules)})` : "";
  };
  const retry3 = "then a writer comments `/forge retry`";
  if (types.includes("merge_queue"))
    return `${describeRules(["merge_queue"], rules)} on ${on} requires merges through GitHub's merge queue, and the queue did not take this pull request ("${text}"). ${cap(mergeRemedy(["merge_queue"], branch))}, ${retry3}.`;
  const approvals = /At least (\d+) approving reviews? (?:is|are) required/i.exec(text);
  if (approvals)
    return `required approvals on ${on}${held("pull_request")}: GitHub wants ${approvals[1]} approving review${approvals[1] === "1" ? "" : "s"} of the pull request's head by people with write access ("${text}"). A person with write access approves the pull request (Forge then merges it), or an administrator lowers the branch's required approvals and comments \`/forge retry\`.`;
  const check = /Required status check "([^"]+)" is (expected|failing)/i.exec(text);
  if (check && !requiredChecks2.includes(check[1]))
    return `required status check "${check[1]}" on ${on}${held("required_status_checks")} is ${check[2]}, and Forge does not run or wait for it ("${text}"). Make the check run on the pull request (or add it to Forge's \`required_checks\`), or remove it from the branch's rules, then comment \`/forge retry\`.`;
  const checks = /(\d+) of (\d+) required status checks/i.exec(text);
  if (checks && !requiredChecks2.length)
    return `required status checks on ${on}${held("required_status_checks")} have not succeeded ("${text}"). Make them run on the pull request (or add them to Forge's \`required_checks\`), or remove them from the branch's rules, then comment \`/forge retry\`.`;
  if (wantsUpToDate(text)) return void 0;
  if (refusesMergeCommits(text))
    return `${on} requires a linear history${held("required_linear_history")} and refused even a squash merge ("${text}"). Allow squash merging in the repository's settings, or lift the rule, then comment \`/forge retry\`.`;
  if (types.includes("required_signatures"))
    return `${describeRules(["required_signatures"], rules)} on ${on} refused the merge ("${text}"). ${cap(mergeRemedy(["required_signatures"], branch))}, ${retry3}.`;
  if (/rule violations|protected branch|not authorized|changes must be made through a pull request/i.test(text))
    return `${types.length ? describeRules(types, rules) : "a rule"} of ${on} refused the merge ("${text}"). An administrator adds the Forge App to the rule's bypass list or changes the rule, then comments \`/forge retry\`.`;
  return void 0;
}
var cap = (s2) => s2.charAt(0).toUpperCase() + s2.slice(1);
var RULES_TTL_MS = 10 * 6e4;
var branchRules = ttlCache();
function cachedBranchRules(owner, branch, now, ttlMs, read) {
  return branchRules.get(owner, branch, now, ttlMs, async () => {
    let list = [];
    try {
      const rules = await read();
      if (Array.isArray(rules)) list = rules;
    } catch {
    }
    return { method: mergeMethodFor(list), rules: list };
  });
}
function rememberLinear(owner, branch, now) {
  branchRules.set(owner, branch, { method: "squash", rules: branchRules.peek(owner, branch)?.rules ?? [] }, now);
}
var rulesetNames = ttlCache();
function cachedRulesetName(owner, id, now, ttlMs, read) {
  return rulesetNames.get(owner, id, now, ttlMs, read);
}

// src/github/merge-queue.ts
var PULL_QUEUE = `query ($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      id
      mergeQueueEntry { state position headCommit { oid } }
    }
  }
}`;
var ENQUEUE = `mutation ($id: ID!, $head: GitObjectID) {
  enqueuePullRequest(input: { pullRequestId: $id, expectedHeadOid: $head }) {
    mergeQueueEntry { state position headCommit { oid } }
  }
}`;
var AUTO_MERGE = `mutation ($id: ID!, $mergeMethod: PullRequestMergeMethod, $head: GitObjectID) {
  enablePullRequestAutoMerge(input: { pullRequestId: $id, mergeMethod: $mergeMethod, expectedHeadOid: $head }) {
    pullRequest { number }
  }
}`;
var entryInfo = (e) => ({
  state: e.state,
  position: e.position,
  ...e.headCommit ? { groupSha: e.headCommit.oid } : {}
});
function refusal(e) {
  const errors = e.errors;
  if (!Array.isArray(errors) || errors.length === 0) return void 0;
  if (errors.some((x) => x.type === "NOT_FOUND" || x.type === "FORBIDDEN")) return void 0;
  return errors.map((x) => x.message ?? "").join("; ");
}
function mergeQueuePort(octokit, r) {
  const read = async (number) => {
    try {
      const data = await octokit.graphql(PULL_QUEUE, { owner: r.owner, name: r.repo, number });
      const p = data.repository?.pullRequest;
      if (!p) throw new Error(`pull request #${number} not found`);
      return p;
    } catch (e) {
      throw wrap("graphql pullRequest.mergeQueueEntry", e);
    }
  };
  return {
    async entry(number) {
      const e = (await read(number)).mergeQueueEntry;
      return e ? entryInfo(e) : null;
    },
    async enqueue(number, expectedHeadSha) {
      const { id } = await read(number);
      try {
        const data = await octokit.graphql(ENQUEUE, {
          id,
          head: expectedHeadSha
        });
        const e = data.enqueuePullRequest?.mergeQueueEntry;
        return { kind: "queued", entry: e ? entryInfo(e) : { state: "QUEUED", position: 0 } };
      } catch (e) {
        const message = refusal(e);
        if (message !== void 0) return { kind: "refused", message };
        throw wrap("graphql enqueuePullRequest", e);
      }
    },
    async groupHeads(branch) {
      try {
        const { data } = await octokit.rest.actions.listWorkflowRunsForRepo({ ...r, branch, event: "merge_group", per_page: 20 });
        return [...new Set(data.workflow_runs.map((w) => w.head_sha))];
      } catch (e) {
        throw wrap("actions.listWorkflowRunsForRepo", e);
      }
    },
    async enableAutoMerge(number, method, expectedHeadSha) {
      const { id } = await read(number);
      try {
        await octokit.graphql(AUTO_MERGE, { id, mergeMethod: method.toUpperCase(), ...expectedHeadSha ? { head: expectedHeadSha } : {} });
        return { kind: "enabled" };
      } catch (e) {
        const message = refusal(e);
        if (message !== void 0) return { kind: "refused", message };
        throw wrap("graphql enablePullRequestAutoMerge", e);
      }
    }
  };
}

// src/github/web-url.ts
function webUrlOf(apiUrl) {
  if (/^https:\/\/api\.github\.com\/?$/.test(apiUrl)) return "https://github.com";
  return apiUrl.replace(/\/+$/, "").replace(/\/api\/v3$/, "");
}
function repoPage(r, path2) {
  return `${r.webUrl.replace(/\/+$/, "")}/${r.owner}/${r.repo}/${path2.replace(/^\/+/, "")}`;
}

// src/github/octokit-graphql.ts
var PULL_WITH_FILES = `query ($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      number
      state
      merged
      mergeCommit { oid }
      headRefName
      headRefOid
      baseRefName
      isDraft
      mergeable
      autoMergeRequest { enabledAt }
      isCrossRepository
      headRepository { id }
      files(first: 100) { pageInfo { hasNextPage } nodes { path changeType } }
      reviews(last: 20, states: [CHANGES_REQUESTED]) { nodes { databaseId body commit { oid } author { __typename login } } }
    }
  }
}`;
function changeRequestsOf(p) {
  return (p.reviews?.nodes ?? []).flatMap(
    (r) => r.databaseId == null ? [] : [
      {
        id: r.databaseId,
        login: r.author?.login ?? "",
        bot: r.author?.__typename === "Bot",
        state: "CHANGES_REQUESTED",
        commitId: r.commit?.oid ?? "",
        body: r.body
      }
    ]
  );
}
function pullInfo(p) {
  return {
    number: p.number,
    state: p.state === "OPEN" ? "open" : "closed",
    merged: p.merged,
    ...p.merged && p.mergeCommit ? { mergeSha: p.mergeCommit.oid } : {},
    headRef: p.headRefName,
    headSha: p.headRefOid,
    baseRef: p.baseRefName,
    draft: p.isDraft,
    // A deleted fork leaves no head repository: not this repository either.
    fromFork: p.isCrossRepository || p.headRepository === null,
    // UNKNOWN: GitHub is still computing it — null, as REST says, never false.
    ...p.mergeable !== void 0 ? { mergeable: p.mergeable === "UNKNOWN" ? null : p.mergeable === "MERGEABLE" } : {},
    // As REST's `auto_merge`: absent when the answer did not say.
    ...p.autoMergeRequest !== void 0 ? { autoMerge: p.autoMergeRequest !== null } : {}
  };
}
function readFilesQuery(owner, name, ref, batch) {
  const vars = { owner, name };
  batch.forEach((path2, k) => vars[`e${k}`] = `${ref}:${path2}`);
  const query = `query(${["$owner: String!", "$name: String!", ...batch.map((_, k) => `$e${k}: String!`)].join(", ")}) {
  repository(owner: $owner, name: $name) {
${batch.map((_, k) => `    f${k}: object(expression: $e${k}) { __typename ... on Blob { oid text isBinary isTruncated } }`).join("\n")}
  }
}`;
  return { query, vars };
}
var ISSUE_AS_EDITED = "query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) { issue(number: $number) { title body lastEditedAt } } }";
async function readFilesInBatches(owner, name, ref, paths, size, query, readOne2) {
  const out = /* @__PURE__ */ new Map();
  for (let from = 0; from < paths.length; from += size) {
    const batch = paths.slice(from, from + size);
    const q = readFilesQuery(owner, name, ref, batch);
    const data = await query(q.query, q.vars);
    for (const [k, path2] of batch.entries()) {
      const o = data.repository[`f${k}`];
      if (!o || o.__typename !== "Blob") out.set(path2, null);
      else if (o.isBinary || o.isTruncated || typeof o.text !== "string" || !o.oid) out.set(path2, await readOne2(path2));
      else out.set(path2, { content: o.text, blobSha: o.oid });
    }
  }
  return out;
}

// src/github/octokit-port.ts
var READ_FILES_BATCH = 100;
var OctokitPort = class {
  constructor(octokit, owner, repo, self, webUrl = webUrlOf(octokit.request?.endpoint?.DEFAULTS?.baseUrl ?? "https://api.github.com")) {
    this.owner = owner;
    this.repo = repo;
    this.self = self;
    this.webUrl = webUrl;
    this.#octokit = octokit;
    this.queue = mergeQueuePort(octokit, { owner, repo });
  }
  owner;
  repo;
  self;
  webUrl;
  #octokit;
  queue;
  #repositoryInfo;
  #repositoryId;
  /** Whom a marker is looked for from: the App's own login, or anyone when it is not known. */
  async #author() {
    const self = await this.self?.();
    return (user) => self === void 0 || user?.login === self;
  }
  get #r() {
    return { owner: this.owner, repo: this.repo };
  }
  async #call(operation, fn) {
    try {
      return await fn();
    } catch (e) {
      throw wrap(operation, e);
    }
  }
  async #repository() {
    this.#repositoryInfo ??= await this.#call("repos.get", async () => {
      const { data } = await this.#octokit.rest.repos.get(this.#r);
      return { defaultBranch: data.default_branch, id: data.id };
    });
    return this.#repositoryInfo;
  }
  async defaultBranch() {
    return (await this.#repository()).defaultBranch;
  }
  async repositoryId() {
    return this.#repositoryId ?? (this.#repositoryId = (await this.#repository()).id);
  }
  knowRepositoryId = (id) => void (this.#repositoryId = id);
  async branchHead(branch) {
    try {
      return (await this.#octokit.rest.git.getRef({ ...this.#r, ref: `heads/${branch}` })).data.object.sha;
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw wrap("git.getRef", e);
    }
  }
  async createBranch(branch, sha) {
    try {
      await this.#octokit.rest.git.createRef({ ...this.#r, ref: `refs/heads/${branch}`, sha });
      return true;
    } catch (e) {
      const message = e.response?.data?.message ?? "";
      if (statusOf(e) === 422 && /already exists/i.test(message)) return false;
      throw wrap("git.createRef", e);
    }
  }
  async deleteBranch(branch) {
    try {
      await this.#octokit.rest.git.deleteRef({ ...this.#r, ref: `heads/${branch}` });
    } catch (e) {
      if (statusOf(e) === 422 || statusOf(e) === 404) return;
      throw wrap("git.deleteRef", e);
    }
  }
  async listBranches(prefix) {
    return this.#call("git.listMatchingRefs", async () => {
      const refs = await this.#octokit.paginate(this.#octokit.rest.git.listMatchingRefs, {
        ...this.#r,
        ref: `heads/${prefix}`,
        per_page: 100
      });
      return refs.map((r) => ({ name: r.ref.replace(/^refs\/heads\//, ""), sha: r.object.sha }));
    });
  }
  async mergeBranch(base, head, message) {
    try {
      const res = await this.#octokit.rest.repos.merge({ ...this.#r, base, head, commit_message: message });
      if (res.status === 204) return { kind: "noop" };
      return { kind: "merged", sha: res.data.sha };
    } catch (e) {
      if (statusOf(e) === 409 && !/rule|protected|merge commits/i.test(wrap("repos.merge", e).message)) return { kind: "conflict" };
      throw wrap("repos.merge", e);
    }
  }
  async compareCommits(base, head) {
    return this.#call("repos.compareCommits", async () => {
      const { data } = await this.#octokit.rest.repos.compareCommits({ ...this.#r, base, head, per_page: 1 });
      return data.status;
    });
  }
  async commit(sha) {
    return this.#call("git.getCommit", async () => {
      const { data } = await this.#octokit.rest.git.getCommit({ ...this.#r, commit_sha: sha });
      return { sha: data.sha, message: data.message, parents: data.parents.map((p) => p.sha) };
    });
  }
  async readFile(path2, ref) {
    try {
      const { data } = await this.#octokit.rest.repos.getContent({ ...this.#r, path: path2, ref });
      if (Array.isArray(data) || data.type !== "file") return null;
      const base64 = data.encoding === "none" ? (await this.#octokit.rest.git.getBlob({ ...this.#r, file_sha: data.sha })).data.content : data.content;
      return { content: Buffer.from(base64, "base64").toString("utf8"), blobSha: data.sha };
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw wrap("repos.getContent", e);
    }
  }
  async readFiles(paths, ref) {
    return readFilesInBatches(
      this.owner,
      this.repo,
      ref,
      paths,
      READ_FILES_BATCH,
      (query, vars) => this.#call("graphql repository.object", () => this.#octokit.graphql(query, vars)),
      (path2) => this.readFile(path2, ref)
    );
  }
  async listDirectory(path2, ref) {
    try {
      const { data } = await this.#octokit.rest.repos.getContent({ ...this.#r, path: path2, ref });
      if (!Array.isArray(data)) return [];
      return data.filter((d) => d.type === "file" || d.type === "dir").map((d) => ({ name: d.name, path: d.path, type: d.type, size: d.size }));
    } catch (e) {
      if (statusOf(e) === 404) return [];
      throw wrap("repos.getContent", e);
    }
  }
  async writeFile(branch, path2, content, message, expectedBlobSha) {
    try {
      const { data } = await this.#octokit.rest.repos.createOrUpdateFileContents({
        ...this.#r,
        branch,
        path: path2,
        message,
        content: Buffer.from(content, "utf8").toString("base64"),
        ...expectedBlobSha ? { sha: expectedBlobSha } : {}
      });
      return { blobSha: data.content?.sha ?? "", commitSha: data.commit.sha ?? "" };
    } catch (e) {
      const status = statusOf(e);
      const ruled2 = /rule violations/i.test(e.message ?? "");
      if (status === 409 && !ruled2 || status === 422 && !expectedBlobSha)
        throw new ConflictError("repos.createOrUpdateFileContents", `${path2} on ${branch} changed since it was read`);
      throw wrap("repos.createOrUpdateFileContents", e);
    }
  }
  async dispatchWorkflow(workflow, ref, inputs) {
    return this.#call("actions.createWorkflowDispatch", async () => {
      const res = await this.#octokit.request("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", {
        ...this.#r,
        workflow_id: workflow,
        ref,
        inputs,
        return_run_details: true,
        // Not retried here: a 5xx may come after GitHub created the run, and a second dispatch would
        // start the same attempt twice. The caller looks for the run on the branch before trying again.
        request: { retries: 0 }
      });
      const data = res.data;
      return data && typeof data.workflow_run_id === "number" ? { workflowRunId: data.workflow_run_id } : {};
    });
  }
  async listWorkflowRuns(workflow, filter) {
    return this.#call("actions.listWorkflowRuns", async () => {
      const { data } = await this.#octokit.rest.actions.listWorkflowRuns({
        ...this.#r,
        workflow_id: workflow,
        per_page: 100,
        ...filter.branch ? { branch: filter.branch } : {}
      });
      const after = filter.createdAfter ? Date.parse(filter.createdAfter) : 0;
      const file = /^\d+$/.test(workflow) ? void 0 : workflow.startsWith(".github/") ? workflow : `.github/workflows/${workflow}`;
      return data.workflow_runs.filter((r) => Date.parse(r.created_at) >= after).map((r) => ({ ...runInfo(r), ...r.path ? {} : { path: file } }));
    });
  }
  async getWorkflowRun(id) {
    try {
      return runInfo((await this.#octokit.rest.actions.getWorkflowRun({ ...this.#r, run_id: id })).data);
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw wrap("actions.getWorkflowRun", e);
    }
  }
  endedJobs(runId) {
    return readEndedJobs(this.#octokit, this.#r, runId);
  }
  async cancelWorkflowRun(id) {
    try {
      await this.#octokit.rest.actions.cancelWorkflowRun({ ...this.#r, run_id: id });
    } catch (e) {
      if (statusOf(e) === 409) return;
      throw wrap("actions.cancelWorkflowRun", e);
    }
  }
  async createCheckRun(fields) {
    const body = checkBody(fields);
    return this.#call("checks.create", async () => (await this.#octokit.rest.checks.create({ ...this.#r, ...body })).data.id);
  }
  async ciChecks(headSha, names) {
    return this.#call("checks.listForRef", () => readCiChecks(this.#octokit, this.#r, headSha, names));
  }
  async findCheckRun(headSha, name, externalId) {
    return (await this.listCheckRuns(headSha, name)).find((c) => c.externalId === externalId)?.id ?? null;
  }
  async listCheckRuns(headSha, name) {
    return this.#call("checks.listForRef", async () => {
      const query = { ...this.#r, ref: headSha, check_name: name, filter: "all", per_page: 100 };
      const { data } = await this.#octokit.rest.checks.listForRef(query);
      return data.check_runs.map((c) => ({ id: c.id, externalId: c.external_id ?? null, summary: c.output?.summary ?? null }));
    });
  }
  async updateCheckRun(id, fields) {
    await this.#call("checks.update", () => this.#octokit.rest.checks.update({ ...this.#r, check_run_id: id, ...checkBody(fields) }));
  }
  async findPullRequest(head, state = "all") {
    return this.#call("pulls.list", async () => {
      const { data } = await this.#octokit.rest.pulls.list({ ...this.#r, head: `${this.owner}:${head}`, state, per_page: 10 });
      const first = data[0];
      return first ? pull(first) : null;
    });
  }
  async getPullRequest(number) {
    return this.#call("pulls.get", async () => pull((await this.#octokit.rest.pulls.get({ ...this.#r, pull_number: number })).data));
  }
  async getPullRequestWithFiles(number) {
    const data = await this.#call(
      "graphql pullRequest",
      () => this.#octokit.graphql(PULL_WITH_FILES, {
        owner: this.#r.owner,
        name: this.#r.repo,
        number
      })
    );
    const p = data.repository?.pullRequest;
    if (!p) throw new GitHubError(`pull request #${number} not found`, 404, "graphql pullRequest");
    const info2 = pullInfo(p);
    const nodes = p.files?.nodes ?? [];
    const files = p.files?.pageInfo.hasNextPage || nodes.some((f) => f.changeType === "RENAMED") ? await this.listPullRequestFiles(number) : nodes.map((f) => f.path);
    return { ...info2, files, changeRequests: changeRequestsOf(p) };
  }
  async createPullRequest(fields) {
    return this.#call("pulls.create", async () => pull((await this.#octokit.rest.pulls.create({ ...this.#r, ...fields })).data));
  }
  async updatePullRequest(number, fields) {
    await this.#call("pulls.update", () => this.#octokit.rest.pulls.update({ ...this.#r, pull_number: number, ...fields }));
  }
  async listPullRequestFiles(number) {
    return this.#call("pulls.listFiles", async () => {
      const files = await this.#octokit.paginate(this.#octokit.rest.pulls.listFiles, { ...this.#r, pull_number: number, per_page: 100 });
      return files.flatMap((f) => f.previous_filename ? [f.filename, f.previous_filename] : [f.filename]);
    });
  }
  mergePullRequest(number, fields) {
    return mergePull(this.#octokit, this.owner, this.repo, number, fields);
  }
  updatePullRequestBranch(number, expectedHeadSha) {
    return updatePullBranch(this.#octokit, this.owner, this.repo, number, expectedHeadSha);
  }
  branchRules(branch) {
    return readBranchRules(this.#octokit, this.owner, this.repo, branch);
  }
  rulesetName(id) {
    return readRulesetName(this.#octokit, this.owner, this.repo, id);
  }
  async protectionChecks(branch) {
    return this.#call("repos.getBranch", async () => {
      try {
        return protectionContexts((await this.#octokit.rest.repos.getBranch({ ...this.#r, branch })).data);
      } catch (e) {
        if (statusOf(e) === 404) return [];
        throw e;
      }
    });
  }
  async findIssue(label, marker) {
    const mine = await this.#author();
    return this.#call("issues.listForRepo", async () => {
      const { data } = await this.#octokit.rest.issues.listForRepo({
        ...this.#r,
        labels: label,
        state: "all",
        sort: "created",
        direction: "desc",
        per_page: 100
      });
      return data.find((i) => !i.pull_request && mine(i.user) && (i.body ?? "").includes(marker))?.number ?? null;
    });
  }
  async createIssue(fields) {
    return this.#call("issues.create", async () => (await this.#octokit.rest.issues.create({ ...this.#r, ...fields })).data.number);
  }
  async updateIssue(number, fields) {
    await this.#call("issues.update", () => this.#octokit.rest.issues.update({ ...this.#r, issue_number: number, ...fields }));
  }
  async getIssue(number) {
    return this.#call("issues.get", async () => {
      const { data } = await this.#octokit.rest.issues.get({ ...this.#r, issue_number: number });
      return {
        number: data.number,
        title: data.title,
        body: data.body ?? "",
        state: data.state === "open" ? "open" : "closed",
        labels: data.labels.map((l) => typeof l === "string" ? l : l.name ?? ""),
        isPullRequest: !!data.pull_request,
        ...data.closed_by?.login ? { closedBy: data.closed_by.login } : {}
      };
    });
  }
  async issueAsEdited(number) {
    const data = await this.#call(
      "graphql issue",
      () => this.#octokit.graphql(ISSUE_AS_EDITED, { owner: this.#r.owner, name: this.#r.repo, number })
    );
    const issue = data.repository?.issue;
    if (!issue) throw new GitHubError(`issue #${number} not found`, 404, "graphql issue");
    return issue;
  }
  async findComment(issue, marker) {
    const mine = await this.#author();
    return this.#call("issues.listComments", async () => {
      const all = await this.#octokit.paginate(this.#octokit.rest.issues.listComments, { ...this.#r, issue_number: issue, per_page: 100 });
      return all.find((c) => mine(c.user) && (c.body ?? "").includes(marker))?.id ?? null;
    });
  }
  async createComment(issue, body) {
    return this.#call(
      "issues.createComment",
      async () => (await this.#octokit.rest.issues.createComment({ ...this.#r, issue_number: issue, body })).data.id
    );
  }
  async updateComment(id, body) {
    await this.#call("issues.updateComment", () => this.#octokit.rest.issues.updateComment({ ...this.#r, comment_id: id, body }));
  }
  async addReaction(target, content) {
    await this.#call(
      "reactions.create",
      () => "commentId" in target ? this.#octokit.rest.reactions.createForIssueComment({ ...this.#r, comment_id: target.commentId, content }) : this.#octokit.rest.reactions.createForIssue({ ...this.#r, issue_number: target.issue, content })
    );
  }
  async listReviews(number) {
    return this.#call("pulls.listReviews", async () => {
      const { data } = await this.#octokit.rest.pulls.listReviews({ ...this.#r, pull_number: number, per_page: 100 });
      return data.map(reviewInfo);
    });
  }
  async permission(user) {
    try {
      const { data } = await this.#octokit.rest.repos.getCollaboratorPermissionLevel({ ...this.#r, username: user });
      return data.permission;
    } catch (e) {
      if (statusOf(e) === 404) return "none";
      throw wrap("repos.getCollaboratorPermissionLevel", e);
    }
  }
};

// src/github/octokit-issue-tree.ts
var OctokitIssuesPort = class extends OctokitPort {
  #o;
  constructor(octokit, owner, repo, self, webUrl) {
    super(octokit, owner, repo, self, ...webUrl !== void 0 ? [webUrl] : []);
    this.#o = octokit;
  }
  #linked(i) {
    const tail = `/repos/${this.owner}/${this.repo}`.toLowerCase();
    return {
      id: i.id,
      number: i.number,
      title: i.title,
      body: i.body ?? "",
      state: i.state === "closed" ? "closed" : "open",
      labels: (i.labels ?? []).map((l) => typeof l === "string" ? l : l.name ?? ""),
      sameRepo: (i.repository_url ?? "").toLowerCase().endsWith(tail)
    };
  }
  async #list(route, operation, issue) {
    try {
      const { data } = await this.#o.request(route, { owner: this.owner, repo: this.repo, issue_number: issue, per_page: 100 });
      return data.map((i) => this.#linked(i));
    } catch (e) {
      throw wrap(operation, e);
    }
  }
  subIssues(issue) {
    return this.#list("GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", "issues.listSubIssues", issue);
  }
  blockedBy(issue) {
    return this.#list("GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", "issues.listDependenciesBlockedBy", issue);
  }
  async commitFiles(branch, from, files, message) {
    const r = { owner: this.owner, repo: this.repo };
    let op = "git.getCommit";
    try {
      const base = (await this.#o.rest.git.getCommit({ ...r, commit_sha: from })).data.tree.sha;
      op = "git.createTree";
      const tree = [...files].map(([path2, content]) => ({ path: path2, mode: "100644", type: "blob", content }));
      const { data: t } = await this.#o.rest.git.createTree({ ...r, base_tree: base, tree });
      op = "git.createCommit";
      const { data: c } = await this.#o.rest.git.createCommit({ ...r, message, tree: t.sha, parents: [from] });
      return { created: await this.createBranch(branch, c.sha), sha: c.sha };
    } catch (e) {
      throw wrap(op, e);
    }
  }
};

// src/github/app-client.ts
var asApp = async (app) => await app.auth();
var asInstallation = async (app, installationId) => await app.auth(installationId);
async function* installedRepositories(app) {
  const octokit = await asApp(app);
  const installations = await octokit.paginate(octokit.rest.apps.listInstallations, { per_page: 100 });
  for (const installation of installations) {
    if (installation.suspended_at) continue;
    const own = await asInstallation(app, installation.id);
    const repos = await own.paginate(own.rest.apps.listReposAccessibleToInstallation, { per_page: 100 });
    yield { installationId: installation.id, repositories: repos.map((r) => ({ owner: r.owner.login, repo: r.name, id: r.id })) };
  }
}
var pacers = /* @__PURE__ */ new WeakMap();
function pacerOf(app, installationId, limits = GITHUB_PACE, clock = realClock) {
  const own = pacers.get(app) ?? pacers.set(app, /* @__PURE__ */ new Map()).get(app);
  return own.get(installationId) ?? own.set(installationId, new Pacer(limits, clock)).get(installationId);
}
function closePaces(app) {
  for (const pacer of pacers.get(app)?.values() ?? []) pacer.close();
  pacers.delete(app);
}
var atGitHub = /* @__PURE__ */ new WeakMap();
function waitsForClock(app, asleep) {
  const waiting = asleep + [...pacers.get(app)?.values() ?? []].reduce((n2, p) => n2 + p.waiting, 0);
  return waiting > 0 && (atGitHub.get(app)?.n ?? 0) === 0;
}
var slugs = /* @__PURE__ */ new WeakMap();
function appSlug(app) {
  const known = slugs.get(app);
  if (known !== void 0) return Promise.resolve(known);
  return asApp(app).then((o) => o.rest.apps.getAuthenticated()).then((r) => {
    const slug = r.data?.slug;
    if (slug) slugs.set(app, slug);
    return slug;
  }).catch(() => void 0);
}
async function repositoryInstallationId(app, owner, repo) {
  const { data } = await (await asApp(app)).rest.apps.getRepoInstallation({ owner, repo });
  return data.id;
}
async function installationPort(app, installationId, owner, repo, stats, onRequest, pace = GITHUB_PACE, clock = realClock) {
  const octokit = await asInstallation(app, installationId);
  instrument(octokit, stats, onRequest);
  const pacer = pace ? pacerOf(app, installationId, pace, clock) : void 0;
  const sent = atGitHub.get(app) ?? atGitHub.set(app, { n: 0 }).get(app);
  octokit.hook.wrap("request", (request2, o) => {
    const send = async () => {
      sent.n++;
      try {
        return await request2(o);
      } catch (e) {
        const wait2 = rateLimitWaitMs(e, clock.now());
        if (wait2 !== void 0) pacer?.holdUntil(clock.now() + wait2);
        throw e;
      } finally {
        sent.n--;
      }
    };
    if (!pacer) return send();
    const { method, path: path2 } = pathOf(octokit, o);
    return pacer.run(isContentCreating(`${method} ${path2}`), send);
  });
  return new OctokitIssuesPort(octokit, owner, repo, async () => {
    const slug = await appSlug(app);
    return slug ? `${slug}[bot]` : void 0;
  });
}

// src/app/deliveries.ts
var DELIVERY_MEMORY = 1e4;
var Deliveries = class {
  #ids = /* @__PURE__ */ new Set();
  /** Was this delivery handled already? A new one is remembered from now on. */
  seen(id) {
    if (!id) return false;
    if (this.#ids.has(id)) return true;
    this.#ids.add(id);
    if (this.#ids.size > DELIVERY_MEMORY) this.#ids.delete(this.#ids.values().next().value);
    return false;
  }
  /** Forget a delivery, so that its redelivery is handled. */
  forget(id) {
    this.#ids.delete(id);
  }
};

// src/core/render/run-messages.ts
function checkRunTitle(t, status) {
  switch (status) {
    case "RUNNING":
      return `Attempt ${t.attempt} running`;
    case "DONE":
      return `Attempt ${t.attempt} done; waiting for its pushed head`;
    case "MERGE_READY":
      return `Attempt ${t.attempt} ready to merge`;
    case "MERGED":
      return `Merged`;
    case "FAILED":
      return t.hold === "exhausted" ? `Failed; retries exhausted` : t.hold === "human" ? `Waiting for an answer: /forge retry <answer>` : t.hold === "blocked" ? `Blocked by a rule of the repository; /forge retry once it is changed` : `Attempt ${t.attempt} failed${t.lastError ? `: ${t.lastError}` : ""}`;
    case "STALE":
      return `Attempt ${t.attempt} went silent`;
    case "PENDING":
      return `Waiting to be retried`;
  }
}
var DEFAULT_QUESTION = "The agent needs a person's input.";
function questionComment(taskId, question) {
  return `The agent working on \`${taskId}\` needs your input:

> ${question.replaceAll("\n", "\n> ")}

Answer with \`/forge retry ${taskId} <your answer>\`.`;
}
function approvalComment(taskId) {
  return `Refinery \`${taskId}\` is ready to merge and needs approval: comment \`/forge approve\` to merge it.`;
}
function protectedPathsComment(taskId, paths) {
  const shown2 = paths.slice(0, 50).map((p) => `- \`${p.replace(/`/g, "'")}\``);
  if (paths.length > 50) shown2.push(`- \u2026 and ${paths.length - 50} more`);
  return [
    `Forge did not merge \`${taskId}\`: this pull request changes protected paths (the plans, \`.github/\`, or the config's \`protected_paths\`):`,
    "",
    ...shown2,
    "",
    "A person with write access reviews them and comments `/forge approve` to merge this head, or pushes a fix and retries."
  ].join("\n");
}
function revisionLimitComment(taskId, reason) {
  return `Forge will not revise \`${taskId}\` again by itself: ${reason}. A person with write access may approve it, merge it by hand, push a fix, or \`/forge retry\` it once it fails.`;
}
function mergeBlockedComment(taskId, reason) {
  return `Forge cannot merge \`${taskId}\` yet: ${reason}

Forge tries again after every change it hears of (a review, a check, a reconcile pass) and on \`/forge retry ${taskId}\`.`;
}
function mergeUnblockedComment(taskId, mergeSha) {
  return `\`${taskId}\` is merged (${mergeSha.slice(0, 7)}): GitHub no longer refuses it, and Forge carries on with the tasks that wait for it.`;
}
function pushBlockedComment(taskId, reason) {
  return `Forge stopped \`${taskId}\`: ${reason}

Forge does not retry it by itself (the same push would be refused again): once the rule lets it through, comment \`/forge retry ${taskId}\`.`;
}
function checkpointRefusedComment(taskId, attempt, reason) {
  return `Forge did not resume \`${taskId}\` from the checkpoint attempt ${attempt} left, which it refused: ${reason}.

The next attempt starts fresh, on a new branch and pull request; nothing the refused checkpoint says is used.`;
}
function mergeRefusedComment(taskId, attempt, error) {
  return `Forge did not merge \`${taskId}\` (attempt ${attempt}): ${error}. Check the new head and merge the pull request yourself (Forge then carries on), or comment \`/forge cancel\` on the run's tracker to stop the run.`;
}
var changeRequestTitle = (taskId) => `${taskId} needs the plan amended`;
function changeRequestAnswer(crId, resolution, overlayId) {
  return resolution === "applied" ? `Change Request ${crId} was applied as ${overlayId}.` : `Change Request ${crId} was rejected; complete the task within the current plan.`;
}
var code = (id) => `\`${id.replace(/`/g, "'")}\``;
var WAITING = {
  human: (id) => `waits for an answer: \`/forge retry ${id.replace(/`/g, "'")} <answer>\``,
  escalated: () => "waits for its Change Request",
  budget: (id) => `waits for \`/forge budget ${id.replace(/`/g, "'")} +<dollars>\``
};
function roundRetryReply(retried, left) {
  const lines = [`Retried ${retried.length} failed task${retried.length === 1 ? "" : "s"}: ${retried.map(code).join(", ")}.`];
  const waiting = left.flatMap((t) => WAITING[t.hold] ? [`- ${code(t.id)} ${WAITING[t.hold](t.id)}`] : []);
  if (waiting.length) lines.push("", "Not retried, each waiting for a command of its own:", ...waiting);
  return lines.join("\n");
}
var commandReplies = {
  runNotRunning: (status) => `the run is ${status}`,
  budgetHow: "say how much to add: `/forge budget +5` (dollars) for the run, `/forge budget <task> +5` for one task",
  alreadyPaused: "the run is already paused",
  waitsForChangeRequests: (crIds) => `the run waits for ${crIds.join(", ")}`,
  notPaused: "the run is not paused",
  retryWhich: "say which task: /forge retry <taskId> [message], or /forge retry failed for every failed task",
  nothingFailed: "no task of the run is failed or exhausted: nothing to retry",
  unknownTask: (taskId) => `unknown task ${taskId}`,
  notRetryable: (taskId, status) => `${taskId} is ${status}; only a FAILED or STALE task can be retried`,
  waitsForItsChangeRequest: (taskId) => `${taskId} waits for its Change Request`,
  alreadyRetrying: (taskId) => `${taskId} is already being retried`,
  unknownChangeRequest: (crId) => `unknown Change Request ${crId}`,
  changeRequestResolved: (crId, status) => `Change Request ${crId} is already ${status}`,
  notARefinery: (taskId) => `${taskId} is not a refinery of this run, and its merge is not waiting for approval`,
  fixWhere: "comment /forge fix [message] on the task's pull request",
  steerWhere: "comment /forge steer <message> on the running task's pull request, or /forge steer <task> <message> on the tracker",
  steerWhat: "say what to tell the agent: /forge steer <message>",
  notRunning: (taskId, status) => `${taskId} is ${status}; only a running agent can be steered`,
  notRevisable: (taskId, status) => `${taskId} is ${status}; only a task whose PR waits for review or is being revised takes /forge fix`,
  approveWhat: (command2) => `say what to ${command2}: a Change Request issue or a refinery PR`
};

// src/core/decide/effects.ts
function prepareBranch(t, from, merge2) {
  return { key: `branch:${t.id}:${t.attempt}`, kind: "PrepareBranch", taskId: t.id, attempt: t.attempt, branch: t.branch, from, merge: merge2 };
}
function dispatchAgent(t, agentType, context, afterRunId) {
  return {
    key: `dispatch:${t.id}:${t.attempt}`,
    kind: "DispatchAgent",
    taskId: t.id,
    attempt: t.attempt,
    branch: t.branch,
    agentType,
    ...afterRunId !== void 0 ? { afterRunId } : {},
    ...context ? { context } : {}
  };
}
function dispatchRevision(t, agentType, context, afterRunId) {
  return {
    key: `dispatch:${t.id}:${t.attempt}:${t.iteration}`,
    kind: "DispatchAgent",
    taskId: t.id,
    attempt: t.attempt,
    branch: t.branch,
    agentType,
    iteration: t.iteration,
    ...afterRunId !== void 0 ? { afterRunId } : {},
    context
  };
}
function checkRun(t, status) {
  return {
    key: `check:${t.id}:${t.attempt}`,
    kind: "UpsertCheckRun",
    taskId: t.id,
    attempt: t.attempt,
    status,
    summary: checkRunTitle(t, status)
  };
}
function mergePullRequest(t) {
  return {
    key: `merge:${t.id}:${t.attempt}`,
    kind: "MergePullRequest",
    taskId: t.id,
    attempt: t.attempt,
    branch: t.branch ?? "",
    ...t.prNumber !== void 0 ? { prNumber: t.prNumber } : {}
  };
}
function openPullRequest(t) {
  return { key: `pr:${t.id}:${t.attempt}`, kind: "OpenPullRequest", taskId: t.id, attempt: t.attempt, branch: t.branch };
}
function checkUpstream(t, refinery) {
  return {
    key: `upstream:${t.id}:${t.attempt}`,
    kind: "CheckUpstream",
    taskId: t.id,
    attempt: t.attempt,
    branch: t.branch ?? "",
    ...t.prNumber !== void 0 ? { prNumber: t.prNumber } : {},
    refinery
  };
}
function openChangeRequest(cr) {
  return {
    key: `cr:${cr.id}`,
    kind: "OpenChangeRequest",
    crId: cr.id,
    emittedBy: cr.emittedBy,
    attempt: cr.attempt,
    ...cr.path ? { path: cr.path } : {}
  };
}
function dispatchCaptain(crId) {
  return { key: `captain:${crId}`, kind: "DispatchCaptain", crId };
}
function postComment(subject, t, body, updates) {
  return {
    key: `${subject}:${t.id}:${t.attempt}`,
    kind: "PostComment",
    target: { on: "task", taskId: t.id, attempt: t.attempt },
    body,
    ...updates ? { updates: `${updates}:${t.id}:${t.attempt}` } : {}
  };
}
function updateTracker(seq) {
  return { key: "tracker", kind: "UpdateTracker", seq };
}
function spawnFollowup(f) {
  return { key: `followup:${f.id}`, kind: "SpawnFollowup", followupId: f.id, sourceTaskId: f.sourceTaskId, text: f.text, branch: f.branch };
}
function openFinalPullRequest() {
  return { key: "final-pr", kind: "OpenFinalPullRequest" };
}
function cleanupBranches(branches, of) {
  return { key: of ? `cleanup:${of.id}:${of.attempt}` : "cleanup:run", kind: "CleanupBranches", branches };
}
function cancelAgent(t) {
  return {
    key: `cancel:${t.id}:${t.attempt}`,
    kind: "CancelAgent",
    taskId: t.id,
    attempt: t.attempt,
    ...t.workflowRunId !== void 0 ? { workflowRunId: t.workflowRunId } : {}
  };
}

// src/core/decide/follow-ups.ts
var ATTEMPT = 1;
function isFollowup(s2, id) {
  return s2.find(id) === void 0 && s2.j.followups.some((f) => f.id === id);
}
function setFollowup(s2, id, patch) {
  s2.j.followups = s2.j.followups.map((f) => f.id === id ? { ...f, ...patch } : f);
}
function queueFollowup(s2, sourceTaskId, sourceAttempt, text) {
  const id = followupId(s2.j.followups.length + 1);
  const followup = {
    id,
    sourceTaskId,
    sourceAttempt,
    text,
    branch: branchName(s2.config, s2.j.runId, id, ATTEMPT),
    status: "queued"
  };
  s2.j.followups = [...s2.j.followups, followup];
}
function runningFollowups(s2) {
  let running = 0;
  for (const f of s2.j.followups) if (f.status === "running") running++;
  return running;
}
function spawnFollowups(s2, capacity) {
  for (const f of s2.j.followups) {
    if (capacity <= 0) break;
    if (f.status !== "queued") continue;
    setFollowup(s2, f.id, { status: "running" });
    s2.emit("followup.spawned", f.sourceTaskId, { followupId: f.id, sourceTaskId: f.sourceTaskId, reason: f.text, branch: f.branch });
    s2.effect(spawnFollowup(f));
    capacity--;
  }
  return capacity;
}
function followupPrOpened(s2, id, prNumber) {
  setFollowup(s2, id, { prNumber });
}
function followupFinished(s2, id, ok) {
  const f = s2.j.followups.find((x) => x.id === id);
  if (f.status !== "running") return;
  if (ok) {
    setFollowup(s2, id, { status: "done" });
    if (s2.config.merge_policy === "auto")
      s2.effect(mergePullRequest({ id, attempt: ATTEMPT, branch: f.branch, prNumber: f.prNumber }));
  } else {
    setFollowup(s2, id, { status: "failed" });
    s2.emit("followup.completed", f.sourceTaskId, { followupId: id, status: "failed" });
  }
}
function followupMerged(s2, id) {
  const f = s2.j.followups.find((x) => x.id === id);
  if (f.status === "merged") return;
  setFollowup(s2, id, { status: "merged" });
  s2.emit("followup.completed", f.sourceTaskId, { followupId: id, status: "merged" });
}

// src/core/decide/merge-request.ts
function requestMerge(s2, i) {
  const t = s2.task(i);
  if (t.status !== "MERGE_READY" || s2.idx.mergedByRefinery[i] || s2.revision(i).waiting) return;
  if (s2.config.merge_policy === "manual") return;
  if (s2.config.merge_policy === "review" && !reviewApproved(t)) return;
  if (s2.idx.isRefinery[i] && s2.config.refinery_approval && !t.approved) {
    s2.effect(postComment("approval", attemptRef(t), approvalComment(t.id)));
    return;
  }
  s2.effect(mergePullRequest(attemptRef(t)));
}

// src/core/decide/iterations.ts
var OPEN_FOR_FEEDBACK = /* @__PURE__ */ new Set(["RUNNING", "DONE", "MERGE_READY"]);
function reviewSubmitted(s2, input) {
  const i = s2.current(input);
  if (i === void 0) return;
  const t = s2.task(i);
  if (!OPEN_FOR_FEEDBACK.has(t.status)) return s2.reject(input.kind, `${t.id} is ${t.status}: its PR takes no review`, t.id);
  const a = s2.attempt(i);
  if (reviewSeen(a, input.reviewId)) return;
  s2.emit("review.submitted", t.id, {
    attempt: t.attempts,
    reviewId: input.reviewId,
    actor: input.actor,
    state: input.state,
    headSha: input.headSha
  });
  if (input.state === "approved") return approved(s2, i, input);
  addFeedback(s2, i, {
    source: "review",
    actor: input.actor,
    reviewId: input.reviewId,
    headSha: input.headSha,
    ...input.body ? { message: bounded(input.body, FEEDBACK_LIMITS.message) } : {}
  });
}
function approved(s2, i, input) {
  const t = s2.task(i);
  if (t.status === "RUNNING" || input.headSha !== prHead(t))
    return s2.reject(input.kind, `the review approved ${input.headSha.slice(0, 7)}, not the PR's current head`, t.id);
  const r = s2.editRevision(i);
  r.reviewApprovedHead = input.headSha;
  if (r.waiting) r.waiting = void 0;
  requestMerge(s2, i);
}
function reviewDismissed(s2, input) {
  const i = s2.current(input);
  if (i === void 0) return;
  const t = s2.task(i);
  if (t.status !== "MERGE_READY") return s2.reject(input.kind, `${t.id} is ${t.status}: a dismissed review changes nothing`, t.id);
  const head = s2.revision(i).reviewApprovedHead;
  if (!head || input.approved && input.headSha === head) return;
  s2.editRevision(i).reviewApprovedHead = void 0;
  s2.emit("review.dismissed", t.id, { attempt: t.attempts, reviewId: input.reviewId, headSha: head });
  if (s2.config.merge_policy === "review") s2.dropEffect(mergePullRequest(attemptRef(t)).key);
}
function fixCommand(s2, c) {
  if (!c.taskId) return s2.reject(c.kind, commandReplies.fixWhere);
  const i = s2.find(c.taskId);
  if (i === void 0) return s2.reject(c.kind, commandReplies.unknownTask(c.taskId), c.taskId);
  const t = s2.task(i);
  if (!OPEN_FOR_FEEDBACK.has(t.status)) return s2.reject(c.kind, commandReplies.notRevisable(c.taskId, t.status), c.taskId);
  const head = prHead(t);
  addFeedback(s2, i, {
    source: "command",
    actor: c.actor,
    ...c.message ? { message: bounded(c.message, FEEDBACK_LIMITS.message) } : {},
    ...head ? { headSha: head } : {}
  });
}
function checksFailed(s2, input) {
  const i = s2.current(input);
  if (i === void 0) return;
  const t = s2.task(i);
  if (t.status !== "MERGE_READY" || input.headSha !== prHead(t)) return;
  const a = s2.attempt(i);
  if (a.feedback?.some((f) => f.source === "ci" && f.headSha === input.headSha) || a.answeredHeads?.includes(input.headSha)) return;
  addFeedback(s2, i, {
    source: "ci",
    headSha: input.headSha,
    // A check's name is the reporter's text: bounded like the rest of it.
    checks: input.checks.slice(0, FEEDBACK_LIMITS.checks).map((name) => name.slice(0, FEEDBACK_LIMITS.checkName)),
    ...input.details ? { details: bounded(input.details, FEEDBACK_LIMITS.details) } : {}
  });
}
function steerCommand(s2, c) {
  if (!c.taskId) return s2.reject(c.kind, commandReplies.steerWhere);
  const i = s2.find(c.taskId);
  if (i === void 0) return s2.reject(c.kind, commandReplies.unknownTask(c.taskId), c.taskId);
  const t = s2.task(i);
  if (t.status !== "RUNNING") return s2.reject(c.kind, commandReplies.notRunning(c.taskId, t.status), c.taskId);
  if (!c.message) return s2.reject(c.kind, commandReplies.steerWhat, c.taskId);
  const steering = s2.attempt(i).steering ?? [];
  const id = (steering.at(-1)?.id ?? 0) + 1;
  const message = bounded(c.message, FEEDBACK_LIMITS.steer);
  s2.editAttempt(i).steering = [...steering, { id, actor: c.actor, message, at: s2.iso(s2.now) }].slice(-FEEDBACK_LIMITS.items);
  s2.emit("task.steered", t.id, { attempt: t.attempts, id, actor: c.actor });
}
function addFeedback(s2, i, f) {
  const t = s2.task(i);
  const queued = t.status !== "MERGE_READY";
  s2.editAttempt(i).feedback = [...s2.attempt(i).feedback ?? [], f].slice(-FEEDBACK_LIMITS.items);
  s2.emit("task.feedback", t.id, { attempt: t.attempts, source: f.source, ...f.actor ? { actor: f.actor } : {}, queued });
  if (!queued) revise(s2, i, "review.submitted");
}
function revise(s2, i, kind) {
  const t = s2.task(i);
  if (t.status !== "MERGE_READY") return false;
  const a = s2.attempt(i);
  const feedback = a.feedback ?? [];
  if (feedback.length === 0) return false;
  const ciOnly = feedback.every((f) => f.source === "ci");
  const used = ciOnly ? a.ciFixes ?? 0 : a.reviewIterations ?? 0;
  const limit = ciOnly ? s2.config.ci_fix.max_attempts : s2.config.review.max_iterations;
  const blocked2 = refineryUnderWay(s2, i);
  if (used >= limit || blocked2) {
    const reason = blocked2 ? `its refinery ${blocked2} already carries this branch` : ciOnly ? `required checks still fail after ${used} fix revision${used === 1 ? "" : "s"} (ci_fix.max_attempts: ${limit}): ${feedback.flatMap((f) => f.checks ?? []).map((name) => inlineData(name)).join(", ")}` : `${used} revision${used === 1 ? "" : "s"} made (review.max_iterations: ${limit})`;
    const e = s2.editAttempt(i);
    e.feedback = [];
    Object.assign(e, answering(a, feedback));
    s2.editRevision(i).waiting = reason;
    const ref = attemptRef(t);
    s2.dropEffect(mergePullRequest(ref).key);
    s2.emit("task.revision_limit", t.id, { attempt: t.attempts, kind: ciOnly ? "ci" : "review", limit, reason });
    s2.effect(postComment("revision-limit", ref, revisionLimitComment(t.id, reason)));
    return true;
  }
  startRevision(s2, i, kind, feedback, ciOnly);
  return true;
}
function answering(a, feedback) {
  const reviewIds = feedback.flatMap((f) => f.reviewId !== void 0 ? [f.reviewId] : []);
  return reviewIds.length ? { answered: [...a.answered ?? [], ...reviewIds].slice(-50) } : {};
}
function startRevision(s2, i, kind, feedback, ciOnly) {
  const t = s2.task(i);
  const a = s2.attempt(i);
  const iteration = iterationOf(t) + 1;
  const priorRunId = a.revision.workflowRunId;
  const heads = feedback.flatMap((f) => f.source === "ci" && f.headSha ? [f.headSha] : []);
  const e = s2.editAttempt(i);
  Object.assign(e, {
    feedback: [],
    revision: newRevision(iteration, s2.iso(s2.now), priorRunId),
    ...ciOnly ? { ciFixes: (a.ciFixes ?? 0) + 1 } : { reviewIterations: (a.reviewIterations ?? 0) + 1 },
    ...answering(a, feedback),
    ...heads.length ? { answeredHeads: [...a.answeredHeads ?? [], ...heads].slice(-20) } : {}
  });
  const ref = attemptRef(t);
  s2.dropEffect(mergePullRequest(ref).key);
  if (!s2.move(i, "RUNNING", kind)) return;
  s2.emit("task.revising", t.id, { attempt: t.attempts, iteration, sources: [...new Set(feedback.map((f) => f.source))] });
  s2.effect(
    dispatchRevision(
      { id: t.id, attempt: t.attempts, branch: a.branch, iteration },
      s2.node(i).agentType,
      {
        feedback,
        ...a.prNumber !== void 0 ? { prNumber: a.prNumber } : {},
        // A revision runs on its attempt's agent.
        ...a.agent !== void 0 && a.agent !== s2.config.agent.adapter ? { agent: { adapter: a.agent } } : {}
      },
      priorRunId
    )
  );
}
function refineryUnderWay(s2, i) {
  for (const d of s2.idx.dependents[i]) {
    if (s2.idx.isRefinery[d] && s2.task(d).status !== "PENDING") return s2.task(d).id;
  }
  return void 0;
}

// src/core/decide/merge-blocked.ts
var MERGE_BLOCKED = "GitHub refuses the merge: ";
var isMergeBlocked = (t) => t.attempt?.revision.waiting?.startsWith(MERGE_BLOCKED) ?? false;
function mergeBlocked(s2, input) {
  const i = s2.current(input);
  if (i === void 0) return;
  const t = s2.task(i);
  if (t.status !== "MERGE_READY") return s2.reject(input.kind, `${t.id} is ${t.status}: no merge of it waits`, t.id);
  const now = s2.revision(i).waiting;
  if (now && !isMergeBlocked(t)) return;
  const waiting = `${MERGE_BLOCKED}${input.reason}`;
  if (now === waiting) return;
  s2.editRevision(i).waiting = waiting;
  s2.editAttempt(i).mergeBlockedSaid = true;
  s2.emit("task.merge_blocked", t.id, { attempt: t.attempts, reason: input.reason });
  s2.effect(postComment("merge-blocked", attemptRef(t), mergeBlockedComment(t.id, input.reason)));
}
function mergedAfterBlock(s2, i, mergeSha) {
  if (!s2.attempt(i).mergeBlockedSaid) return;
  const t = s2.task(i);
  const ref = attemptRef(t);
  s2.dropEffect(postComment("merge-blocked", ref, "").key);
  s2.effect(postComment("merge-unblocked", ref, mergeUnblockedComment(t.id, mergeSha), "merge-blocked"));
}
function mergeUnblocked(s2, i, by) {
  const t = s2.task(i);
  if (!isMergeBlocked(t)) return;
  s2.editRevision(i).waiting = void 0;
  s2.emit("task.merge_unblocked", t.id, { attempt: t.attempts, by });
}
function retryBlockedMerge(s2, i) {
  mergeUnblocked(s2, i, "retry");
  requestMerge(s2, i);
}

// src/core/decide/names.ts
var agentId = (runId, taskId, attempt) => `${runId}/${taskId}/${attempt}`;

// src/core/decide/merge-gate.ts
function branchPushed(s2, input) {
  const i = s2.current(input);
  if (i === void 0) return;
  s2.editRevision(i).pushedSha = input.headSha;
  s2.emit("branch.pushed", input.taskId, { branch: s2.attempt(i).branch, headSha: input.headSha, attempt: input.attempt });
  gate(s2, i, input.kind);
}
function prOpened(s2, input) {
  const i = s2.current(input);
  if (i !== void 0) s2.editAttempt(i).prNumber = input.number;
}
function gate(s2, i, kind) {
  const t = s2.task(i);
  const r = t.attempt?.revision;
  if (t.status !== "DONE" || !r?.walkthroughSha || r.pushedSha !== r.walkthroughSha) return;
  s2.move(i, "MERGE_READY", kind);
  s2.emit("task.merge_ready", t.id, { attempt: t.attempts, headSha: r.walkthroughSha });
  const mergeSha = s2.attempt(i).mergeSha;
  if (mergeSha) {
    return prMerged(s2, t.id, t.attempts, mergeSha, kind);
  }
  if (revise(s2, i, kind)) return;
  requestMerge(s2, i);
  openMissingPull(s2, i);
}
function openMissingPull(s2, i) {
  const a = s2.attempt(i);
  if (a.prNumber !== void 0) return;
  const ref = attemptRef(s2.task(i));
  if (s2.j.outbox.some((e) => e.key === mergePullRequest(ref).key)) return;
  s2.effect(openPullRequest({ ...ref, branch: a.branch }));
}
function mergeHeld(s2, taskId, attempt, paths) {
  const i = s2.current({ kind: "effect.done", taskId, attempt });
  if (i === void 0 || s2.task(i).status !== "MERGE_READY") return;
  const t = s2.task(i);
  s2.editRevision(i).protectedPaths = paths;
  s2.emit("task.held", t.id, { attempt: t.attempts, paths });
  s2.effect(checkRun(attemptRef(s2.task(i)), "MERGE_READY"));
  s2.effect(postComment("protected", attemptRef(t), protectedPathsComment(t.id, paths)));
}
function approveHeld(s2, i) {
  s2.editRevision(i).approvedHead = prHead(s2.task(i));
  requestMerge(s2, i);
}
function prMerged(s2, taskId, attempt, mergeSha, kind) {
  const i = s2.current({ kind, taskId, attempt });
  if (i === void 0) return;
  const t = s2.task(i);
  if (t.status === "MERGED") return;
  if (t.status === "RUNNING" || t.status === "DONE") {
    s2.editAttempt(i).mergeSha = mergeSha;
    return;
  }
  if (t.status !== "MERGE_READY") return s2.reject(kind, `merged while ${t.status}`, taskId);
  mergeUnblocked(s2, i, "merged");
  mergedAfterBlock(s2, i, mergeSha);
  s2.editAttempt(i).mergeSha = mergeSha;
  s2.move(i, "MERGED", kind);
  s2.emit("task.merged", t.id, { attempt: t.attempts, mergeSha, by: "direct" });
  if (s2.config.branch_cleanup === "on_merge") s2.effect(cleanupBranches([s2.attempt(i).branch], attemptRef(t)));
  if (s2.idx.isRefinery[i]) mergeThroughRefinery(s2, i, mergeSha, kind);
}
function mergeThroughRefinery(s2, refinery, mergeSha, kind) {
  const stack = [refinery];
  while (stack.length > 0) {
    const i = stack.pop();
    const merged = [];
    for (const d of s2.idx.deps[i]) {
      const dt = s2.task(d);
      if (dt.status !== "MERGE_READY" || !s2.idx.mergedByRefinery[d]) continue;
      s2.editAttempt(d).mergeSha = mergeSha;
      s2.move(d, "MERGED", kind);
      s2.emit("task.merged", dt.id, { attempt: dt.attempts, mergeSha, by: "refinery" });
      merged.push(dt.id);
      if (s2.idx.isRefinery[d]) stack.push(d);
    }
    const t = s2.task(i);
    s2.emit("refinery.merged", t.id, { agentId: agentId(s2.j.runId, t.id, t.attempts), mergedBranches: merged, resultRef: mergeSha });
  }
}

// src/core/state-machine.ts
var TRANSITIONS = {
  PENDING: ["RUNNING"],
  RUNNING: ["DONE", "FAILED", "STALE"],
  DONE: ["MERGE_READY"],
  MERGE_READY: ["MERGED", "RUNNING"],
  MERGED: [],
  FAILED: ["PENDING"],
  STALE: ["PENDING"]
};
function checkTransition(from, to) {
  if (from === to) return { ok: true, noop: true };
  if (isValidTransition(from, to)) return { ok: true, noop: false };
  const allowed = TRANSITIONS[from];
  return {
    ok: false,
    reason: `${from} \u2192 ${to} is not a valid transition (from ${from} only ${allowed.length ? allowed.join(" or ") : "nothing"} is allowed)`
  };
}
function isValidTransition(from, to) {
  return TRANSITIONS[from].includes(to);
}

// src/core/decide/agents.ts
function agentListOf(s2, i) {
  return agentsOf(s2.node(i), s2.config.agent).agents;
}
function nextAgent(s2, i) {
  const list = agentListOf(s2, i);
  return list[Math.min(s2.task(i).fallback ?? 0, list.length - 1)];
}
function currentAgent(s2, i) {
  return s2.task(i).attempt?.agent ?? agentListOf(s2, i)[0];
}
var cut2 = (text) => text.length > AGENT_REASON_MAX ? `${text.slice(0, AGENT_REASON_MAX - 1)}\u2026` : text;
function fallBack(s2, i, why) {
  const list = agentListOf(s2, i);
  const from = currentAgent(s2, i);
  const at = Math.max(0, list.indexOf(from));
  const e = s2.edit(i);
  if (at + 1 < list.length) {
    e.fallback = at + 1;
    e.next = { ...e.next, switched: { from, reason: cut2(`${why}; ${list[at + 1]} takes the next attempt`) } };
    return true;
  }
  delete e.fallback;
  if (list[0] !== from)
    e.next = {
      ...e.next,
      switched: { from, reason: cut2(`${why}; every agent of the list was stopped, ${list[0]} goes on after the pause`) }
    };
  return false;
}
function assignAgent(s2, i, next) {
  const adapter = nextAgent(s2, i);
  const t = s2.task(i);
  const switched = next?.switched && next.switched.from !== adapter ? next.switched : void 0;
  s2.editAttempt(i).agent = adapter;
  const e = s2.edit(i);
  const entry = { attempt: t.attempts, agent: adapter, ...switched ? { why: `after ${switched.from}: ${switched.reason}` } : {} };
  e.agents = [...e.agents ?? [], entry].slice(-AGENT_HISTORY);
  return { adapter, ...switched ? { switched: { ...switched } } : {} };
}

// src/core/decide/resume.ts
function retryWay(config2, node, cls) {
  return node.retryPolicy?.[cls] ?? config2.retry_policy[cls];
}
function checkpointProblems(cp, at) {
  const problems = [];
  if (cp.run_id !== at.runId || cp.task_id !== at.taskId || cp.attempt !== at.attempt)
    problems.push(`it names ${cp.run_id}/${cp.task_id}/${cp.attempt}, not ${at.runId}/${at.taskId}/${at.attempt}`);
  if (at.pushedSha === void 0) problems.push("the attempt's pushed work is unknown");
  else if (cp.head_sha !== at.pushedSha)
    problems.push(`its head ${cp.head_sha.slice(0, 12)} is not the attempt's pushed work ${at.pushedSha.slice(0, 12)}`);
  const stages = [...cp.completed_stages.map((c) => c.name), ...cp.pending_stages];
  for (const stage of stages)
    if (at.agentType === "refinery" || !isStageOf(at.agentType, stage)) problems.push(`'${stage}' is not a stage of type ${at.agentType}`);
  if (new Set(stages).size !== stages.length) problems.push("it names a stage twice");
  if (cp.depth_max > at.maxDepth) problems.push(`its depth budget ${cp.depth_max} is over the config's ${at.maxDepth}`);
  if (cp.depth_used > cp.depth_max) problems.push(`its depth ${cp.depth_used} is over its budget ${cp.depth_max}`);
  if (Number.isNaN(Date.parse(cp.created_at))) problems.push("its time is not a time");
  if (cp.agent_session && !stages.includes(cp.agent_session.stage))
    problems.push(`its agent session belongs to '${cp.agent_session.stage}', a stage it does not name`);
  return problems;
}
function whyFresh(node, a) {
  if (node.kind === "refinery") return "a refinery's attempt starts fresh (its upstreams are merged when its branch is cut)";
  if (a.revision.iteration > 0) return "a revision that ended so is retried fresh";
  if (a.revision.workflowRunId === void 0) return "its job never ran";
  return void 0;
}
function planResume(s2, i, ev) {
  const t = s2.task(i);
  const node = s2.node(i);
  const { resume: _earlier, fresh: _why, ...rest } = t.next ?? {};
  const keep = (extra) => {
    const next = { ...rest, ...extra };
    const e = s2.edit(i);
    if (Object.keys(next).length) e.next = next;
    else delete e.next;
  };
  if (retryWay(s2.config, node, ev.cls) !== "resume") return keep({});
  const a = t.attempt;
  if (!a) return keep({});
  const priorRunId = a.revision.workflowRunId;
  const why = whyFresh(node, a);
  if (why) return keep({ fresh: why });
  const refuse = (problem) => {
    s2.effect(postComment("checkpoint-refused", attemptRef(t), checkpointRefusedComment(t.id, t.attempts, problem)));
    keep({ fresh: `its checkpoint was refused: ${problem}` });
  };
  if (ev.checkpointProblem !== void 0) return refuse(ev.checkpointProblem);
  const cp = ev.checkpoint;
  if (cp) {
    const problems = checkpointProblems(cp, {
      runId: s2.j.runId,
      taskId: t.id,
      attempt: t.attempts,
      agentType: node.agentType,
      maxDepth: s2.config.agent.max_depth,
      pushedSha: ev.pushedSha
    });
    if (problems.length) return refuse(problems.join("; "));
  }
  const session = cp?.agent_session && cp.agent_session.adapter === nextAgent(s2, i) ? cp.agent_session : void 0;
  keep({
    resume: {
      reason: ev.cls,
      fromAttempt: t.attempts,
      branch: a.branch,
      ...a.prNumber !== void 0 ? { prNumber: a.prNumber } : {},
      priorRunId,
      ...ev.recordSha ? { head: ev.recordSha } : {},
      ...cp?.pending_stages[0] ? { stage: cp.pending_stages[0] } : {},
      ...session ? { session: { ...session } } : {},
      ...cp ? { depthUsed: cp.depth_used } : {}
    }
  });
}

// src/core/decide/retries.ts
function setLastError(s2, i, error, logUrl) {
  const t = s2.edit(i);
  t.lastError = error;
  if (logUrl !== void 0) t.lastErrorLog = logUrl;
  else delete t.lastErrorLog;
}
function fail(s2, i, kind, f) {
  const check = checkTransition(s2.task(i).status, "FAILED");
  if (!check.ok) return s2.reject(kind, check.reason, s2.task(i).id);
  if (check.noop) return;
  setLastError(s2, i, f.error, f.logUrl);
  if (f.hold) s2.editAttempt(i).hold = f.hold;
  s2.move(i, "FAILED", kind);
  const t = s2.task(i);
  s2.emit("task.failed", t.id, {
    agentId: agentId(s2.j.runId, t.id, t.attempts),
    error: f.error,
    attemptId: t.attempts,
    ...f.exitCode !== void 0 ? { exitCode: f.exitCode } : {},
    retryable: f.retryable
  });
  if (f.refinement !== void 0) s2.edit(i).next = { refinement: f.refinement };
  if (f.resume) planResume(s2, i, f.resume);
  if (f.retryable) retry2(s2, i, kind, { counted: f.counted ?? true, ...f.notBefore !== void 0 ? { notBefore: f.notBefore } : {} });
}
function stale(s2, i, kind, reason, logUrl, ev) {
  const t = s2.task(i);
  if (!s2.move(i, "STALE", kind)) return;
  setLastError(s2, i, reason, logUrl);
  const r = s2.revision(i);
  const threshold = r.startedAt ? s2.config.timeouts.liveness_minutes * 60 : s2.config.timeouts.dispatch_start_minutes * 60;
  s2.emit("task.stale", t.id, { ...r.lastHeartbeat ? { lastHeartbeat: r.lastHeartbeat } : {}, threshold, attempt: t.attempts });
  s2.effect(cancelAgent(attemptRef(t)));
  planResume(s2, i, ev ?? { cls: "stale" });
  retry2(s2, i, kind, { counted: true });
}
function retry2(s2, i, kind, opts) {
  const t = s2.task(i);
  if (s2.j.status !== "running") return;
  if (opts.counted && !opts.manual && t.retries >= s2.config.max_retries) {
    s2.editAttempt(i).hold = "exhausted";
    s2.emit("task.exhausted", t.id, { attempts: t.attempts, finalStatus: t.status });
    s2.effect(checkRun(attemptRef(s2.task(i)), t.status));
    return;
  }
  const retries = opts.counted && !opts.manual ? t.retries + 1 : t.retries;
  const notBefore = opts.manual ? void 0 : opts.notBefore ?? s2.now + backoffMs(s2.config, Math.max(0, retries - 1), `${s2.j.runId}:${t.id}:${t.attempts}`);
  if (!s2.move(i, "PENDING", kind)) return;
  const { attempt: _ended, next: given, ...task2 } = s2.task(i);
  const { notBefore: _old, ...handed } = given ?? {};
  const backoff = notBefore !== void 0 && notBefore > s2.now ? s2.iso(notBefore) : void 0;
  const next = { ...handed, ...backoff !== void 0 ? { notBefore: backoff } : {} };
  s2.replaceTask(i, { ...task2, retries, ...Object.keys(next).length ? { next } : {} });
  const attempt = t.attempts + 1;
  const { resume, fresh, switched } = next;
  const to = switched ? nextAgent(s2, i) : void 0;
  s2.emit("task.retried", t.id, {
    attemptId: attempt,
    branch: resume?.branch ?? branchName(s2.config, s2.j.runId, t.id, attempt),
    ...backoff ? { notBefore: backoff } : {},
    manual: opts.manual ?? false,
    ...resume ? { resumes: { fromAttempt: resume.fromAttempt, ...resume.stage ? { stage: resume.stage } : {} } } : {},
    ...fresh ? { fresh } : {},
    ...switched && to !== switched.from ? { agent: { from: switched.from, to, reason: switched.reason } } : {}
  });
}

// src/core/decide/acknowledgements.ts
function effectDone(s2, { key, result }) {
  const effect = s2.j.outbox.find((e) => e.key === key);
  if (!effect) return;
  s2.j.outbox = s2.j.outbox.filter((e) => e.key !== key);
  switch (effect.kind) {
    case "DispatchAgent": {
      const i = s2.find(effect.taskId);
      const t = i === void 0 ? void 0 : s2.task(i);
      if (i === void 0 || !t?.attempt || t.attempts !== effect.attempt || typeof result.workflowRunId !== "number") return;
      if ((effect.iteration ?? 0) === t.attempt.revision.iteration) s2.editRevision(i).workflowRunId = result.workflowRunId;
      return;
    }
    case "PrepareBranch": {
      const conflicts = Array.isArray(result.conflicts) ? result.conflicts.filter((c) => typeof c === "string") : [];
      const squash = Array.isArray(result.squash) ? result.squash.flatMap((u) => squashUpstreamSchema.safeParse(u).data ?? []) : [];
      const i = s2.find(effect.taskId);
      if (conflicts.length === 0 && squash.length === 0 || i === void 0) return;
      const t = s2.task(i);
      if (!t.attempt || t.attempts !== effect.attempt || t.status !== "RUNNING") return;
      if (conflicts.length) s2.editAttempt(i).conflicts = conflicts;
      if (squash.length) s2.editAttempt(i).squash = squash;
      return;
    }
    case "CheckUpstream":
      if (Array.isArray(result.held)) {
        const paths = result.held.filter((p) => typeof p === "string");
        return mergeHeld(s2, effect.taskId, effect.attempt, paths);
      }
      if (result.clean === true) {
        const i = s2.current({ kind: "effect.done", taskId: effect.taskId, attempt: effect.attempt });
        const t = i === void 0 ? void 0 : s2.task(i);
        if (i !== void 0 && t?.status === "MERGE_READY") s2.editRevision(i).checkedHead = prHead(t);
      }
      return;
    case "OpenPullRequest":
      if (typeof result.prNumber === "number") {
        const i = s2.current({ kind: "effect.done", taskId: effect.taskId, attempt: effect.attempt });
        if (i !== void 0 && s2.attempt(i).prNumber === void 0) s2.editAttempt(i).prNumber = result.prNumber;
      }
      return;
    case "OpenChangeRequest":
      if (typeof result.issueNumber === "number") {
        const n2 = result.issueNumber;
        s2.j.changeRequests = s2.j.changeRequests.map((c) => c.id === effect.crId ? { ...c, issueNumber: n2 } : c);
      }
      return;
    case "MergePullRequest":
      if (Array.isArray(result.held)) {
        const paths = result.held.filter((p) => typeof p === "string");
        return mergeHeld(s2, effect.taskId, effect.attempt, paths);
      }
      if (typeof result.mergeSha === "string") {
        if (isFollowup(s2, effect.taskId)) return followupMerged(s2, effect.taskId);
        return prMerged(s2, effect.taskId, effect.attempt, result.mergeSha, "effect.done");
      }
      return;
    default:
      return;
  }
}
function effectFailed(s2, { key, error }) {
  const effect = s2.j.outbox.find((e) => e.key === key);
  if (!effect) return;
  s2.j.outbox = s2.j.outbox.filter((e) => e.key !== key);
  s2.reject("effect.failed", `${effect.kind} failed: ${error}`, "taskId" in effect ? effect.taskId : void 0);
  if (effect.kind === "PrepareBranch" || effect.kind === "DispatchAgent") {
    const i = s2.find(effect.taskId);
    if (i === void 0) return;
    const t = s2.task(i);
    if (t.attempts !== effect.attempt || t.status !== "RUNNING") return;
    s2.j.outbox = s2.j.outbox.filter((e) => !(e.kind === "DispatchAgent" && e.taskId === t.id && e.attempt === t.attempts));
    fail(s2, i, "effect.failed", {
      error: `${effect.kind === "PrepareBranch" ? "preparing the branch" : "dispatching the agent"} failed: ${error}`,
      retryable: true,
      counted: true
    });
  } else if (effect.kind === "CheckUpstream") {
    mergeHeld(s2, effect.taskId, effect.attempt, [`(what this pull request changes could not be read: ${error.slice(0, 200)})`]);
  } else if (effect.kind === "SpawnFollowup") {
    followupFinished(s2, effect.followupId, false);
  } else if (effect.kind === "MergePullRequest") {
    const i = s2.find(effect.taskId);
    if (i === void 0 || s2.task(i).attempts !== effect.attempt || s2.task(i).status !== "MERGE_READY") return;
    const t = s2.edit(i);
    t.lastError = `merge refused: ${error}`;
    delete t.lastErrorLog;
    const attempt = { id: effect.taskId, attempt: effect.attempt };
    s2.effect(postComment("merge-refused", attempt, mergeRefusedComment(effect.taskId, effect.attempt, error)));
  }
}

// src/core/plan-index.ts
var cache = /* @__PURE__ */ new WeakMap();
function planIndex(plan) {
  let index = cache.get(plan);
  if (!index) {
    index = buildIndex(plan.nodes);
    cache.set(plan, index);
  }
  return index;
}
function buildIndex(nodes) {
  const indexOf = /* @__PURE__ */ new Map();
  nodes.forEach((n2, i) => indexOf.set(n2.id, i));
  const deps = [];
  const dependents = nodes.map(() => []);
  nodes.forEach((n2, i) => {
    const d = [];
    for (const id of n2.dependencies) {
      const j = indexOf.get(id);
      if (j === void 0) throw new Error(`plan node ${n2.id} depends on unknown node ${id}`);
      d.push(j);
      dependents[j].push(i);
    }
    deps.push(d);
  });
  const isRefinery = nodes.map((n2) => n2.kind === "refinery");
  const mergedByRefinery = dependents.map((ds) => ds.length > 0 && ds.every((j) => isRefinery[j]));
  return { indexOf, deps, dependents, isRefinery, mergedByRefinery };
}
function topologicalOrder(index) {
  const n2 = index.deps.length;
  const indegree = index.deps.map((d) => d.length);
  const order = [];
  for (let i = 0; i < n2; i++) if (indegree[i] === 0) order.push(i);
  for (let k = 0; k < order.length; k++) {
    for (const j of index.dependents[order[k]]) {
      if (--indegree[j] === 0) order.push(j);
    }
  }
  return order.length === n2 ? order : null;
}
function popcount32(x) {
  x -= x >>> 1 & 1431655765;
  x = (x & 858993459) + (x >>> 2 & 858993459);
  return (x + (x >>> 4) & 252645135) * 16843009 >>> 24;
}
function downstreamCounts(index) {
  const n2 = index.deps.length;
  const order = topologicalOrder(index);
  if (!order) throw new Error("the plan has a cycle");
  const words = n2 + 31 >>> 5;
  const sets = new Uint32Array(n2 * words);
  const counts = new Array(n2).fill(0);
  for (let k = n2 - 1; k >= 0; k--) {
    const v = order[k];
    const off = v * words;
    for (const d of index.dependents[v]) {
      const doff = d * words;
      for (let w = 0; w < words; w++) sets[off + w] |= sets[doff + w];
      sets[off + (d >>> 5)] |= 1 << (d & 31);
    }
    let c = 0;
    for (let w = 0; w < words; w++) c += popcount32(sets[off + w]);
    counts[v] = c;
  }
  return counts;
}

// src/core/decide/plan-state.ts
function planNode(n2) {
  return {
    id: n2.id,
    kind: n2.kind,
    agentType: n2.agentType,
    title: n2.title ?? "",
    dependencies: n2.dependencies.slice(),
    paths: n2.paths ?? [],
    ...n2.budget ? { budget: { ...n2.budget } } : {},
    ...n2.retryPolicy ? { retryPolicy: { ...n2.retryPolicy } } : {},
    ...n2.agents?.length ? { agents: [...n2.agents] } : {},
    priority: 0
  };
}
function prioritise(nodes) {
  const index = buildIndex(nodes);
  const priorities = downstreamCounts(index);
  nodes.forEach((n2, k) => n2.priority = priorities[k]);
  return index;
}
function countBlockers(index, k, tasks) {
  let blockers = 0;
  for (const d of index.deps[k]) {
    const st = tasks[d].status;
    const satisfied = st === "MERGED" || index.isRefinery[k] && st === "MERGE_READY";
    if (!satisfied) blockers++;
  }
  return blockers;
}

// src/core/decide/change-requests.ts
function escalate(s2, i, input) {
  const t = s2.task(i);
  const cr = input.changeRequest ?? {
    title: changeRequestTitle(t.id),
    reason: input.error ?? "escalation",
    affectedTasks: [t.id]
  };
  let crId = cr.id ?? `cr-${t.id}-${t.attempts}`;
  if (s2.j.changeRequests.some((c) => c.id === crId)) crId = `${crId}-${t.attempts}`;
  fail(s2, i, input.kind, { error: `escalated: ${cr.reason}`, retryable: false, hold: "escalated", exitCode: EXIT_CODES.NEEDS_ESCALATION });
  const state = {
    id: crId,
    emittedBy: t.id,
    attempt: t.attempts,
    title: cr.title,
    reason: cr.reason,
    affectedTasks: cr.affectedTasks ?? [],
    ...cr.suggestedAction ? { suggestedAction: cr.suggestedAction } : {},
    ...cr.priority ? { priority: cr.priority } : {},
    status: "pending",
    ...cr.path ? { path: cr.path } : {}
  };
  s2.j.changeRequests = [...s2.j.changeRequests, state];
  s2.emit("cr.emitted", t.id, { crId, refineryId: t.id, reason: cr.reason, scope: state.affectedTasks });
  s2.j.pause = { ...s2.j.pause, changeRequests: [...s2.j.pause.changeRequests, crId] };
  s2.emit("run.paused", void 0, { reason: "change_request", crId });
  s2.effect(openChangeRequest(state));
  if (s2.config.cr_mode === "replan") s2.effect(dispatchCaptain(crId));
}
function approveCr(s2, crId) {
  s2.j.changeRequests = s2.j.changeRequests.map((x) => x.id === crId ? { ...x, status: "approved" } : x);
  s2.effect(dispatchCaptain(crId));
}
function resolveCr(s2, crId, resolution, overlayId) {
  const cr = s2.j.changeRequests.find((c) => c.id === crId);
  s2.j.changeRequests = s2.j.changeRequests.map(
    (c) => c.id === crId ? { ...c, status: resolution, ...overlayId ? { overlayId } : {} } : c
  );
  s2.emit("cr.resolved", cr.emittedBy, { crId, resolution, ...overlayId ? { overlayId } : {} });
  const i = s2.find(cr.emittedBy);
  if (i !== void 0 && s2.task(i).status === "FAILED" && s2.task(i).attempt?.hold === "escalated") {
    s2.edit(i).next = { answer: changeRequestAnswer(crId, resolution, overlayId) };
    retry2(s2, i, "cr.closed", { counted: false, manual: true });
  }
  s2.j.pause = { ...s2.j.pause, changeRequests: s2.j.pause.changeRequests.filter((c) => c !== crId) };
  if (s2.j.pause.changeRequests.length === 0 && !s2.j.pause.manual) {
    s2.emit("run.resumed", void 0, { reason: "change_request", crId, ...overlayId ? { overlayId } : {} });
  }
}
function crClosed(s2, input) {
  const cr = s2.j.changeRequests.find((c) => c.id === input.crId);
  if (!cr || cr.status === "applied" || cr.status === "rejected") return;
  resolveCr(s2, cr.id, "rejected");
}
function planChanged(s2, input) {
  s2.emit("plan.edit_ignored", void 0, { commit: input.commit });
}
function overlayApplied(s2, input) {
  const cr = s2.j.changeRequests.find((c) => c.id === input.crId);
  if (!cr) return s2.reject(input.kind, `unknown Change Request ${input.crId}`);
  if (cr.status === "applied") return;
  if (cr.status === "rejected") return s2.reject(input.kind, `Change Request ${input.crId} was rejected`);
  const problem = checkOverlay(s2, input.nodes, input.edges);
  if (problem) return s2.reject(input.kind, `overlay ${input.overlayId} refused: ${problem}`);
  const nodes = s2.j.plan.nodes.map((n2) => ({ ...n2, dependencies: n2.dependencies.slice() }));
  const byId = new Map(nodes.map((n2) => [n2.id, n2]));
  for (const n2 of input.nodes) {
    const node = planNode(n2);
    nodes.push(node);
    byId.set(n2.id, node);
  }
  for (const e of input.edges) {
    const to = byId.get(e.to);
    if (!to.dependencies.includes(e.from)) to.dependencies.push(e.from);
  }
  const index = prioritise(nodes);
  const plan = { nodes, overlays: [...s2.j.plan.overlays, input.overlayId] };
  const tasks = s2.j.tasks.slice();
  for (const n2 of input.nodes) tasks.push(newTask(n2.id));
  nodes.forEach((_, k) => {
    const blockers = countBlockers(index, k, tasks);
    if (tasks[k].blockers !== blockers) tasks[k] = { ...tasks[k], blockers };
  });
  s2.j.planCommit = input.planCommit;
  s2.replacePlan(plan, tasks);
  tasks.forEach((t, k) => {
    if (t.status === "MERGE_READY" && !s2.idx.mergedByRefinery[k]) requestMerge(s2, k);
  });
  resolveCr(s2, input.crId, "applied", input.overlayId);
}
function checkOverlay(s2, nodes, edges) {
  const known = new Set(s2.j.plan.nodes.map((n2) => n2.id));
  const added = /* @__PURE__ */ new Set();
  for (const n2 of nodes) {
    if (known.has(n2.id) || added.has(n2.id)) return `task ${n2.id} already exists`;
    added.add(n2.id);
  }
  for (const n2 of nodes)
    for (const d of n2.dependencies) if (!known.has(d) && !added.has(d)) return `task ${n2.id} depends on unknown task ${d}`;
  for (const n2 of nodes) if (n2.kind === "refinery" && n2.dependencies.length === 0) return `refinery ${n2.id} has no dependencies`;
  for (const e of edges) {
    if (!known.has(e.from) && !added.has(e.from)) return `edge ${e.from} \u2192 ${e.to} names unknown task ${e.from}`;
    if (added.has(e.to)) continue;
    const k = s2.find(e.to);
    if (k === void 0) return `edge ${e.from} \u2192 ${e.to} names unknown task ${e.to}`;
    const st = s2.task(k).status;
    if (st !== "PENDING" && st !== "FAILED" && st !== "STALE") return `edge ${e.from} \u2192 ${e.to}: ${e.to} is already ${st}`;
  }
  const all = s2.j.plan.nodes.map((n2) => ({ id: n2.id, dependencies: n2.dependencies.slice() }));
  for (const n2 of nodes) all.push({ id: n2.id, dependencies: n2.dependencies.slice() });
  const pos = new Map(all.map((n2, k) => [n2.id, k]));
  for (const e of edges) all[pos.get(e.to)].dependencies.push(e.from);
  const deps = all.map((n2) => n2.dependencies.map((d) => pos.get(d)));
  const dependents = all.map(() => []);
  deps.forEach((ds, k) => ds.forEach((d) => dependents[d].push(k)));
  if (!topologicalOrder({ deps, dependents })) return "it would create a cycle";
  return void 0;
}

// src/core/review.ts
var import_picomatch = __toESM(require_picomatch(), 1);
var escape = (s2) => s2.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
function keywordMatcher(keywords) {
  if (keywords.length === 0) return () => false;
  const re = new RegExp(`\\b(?:${keywords.map(escape).join("|")})(?:s|es|ed|ing)?\\b`, "i");
  return (text) => re.test(text);
}
var matcherCache = /* @__PURE__ */ new Map();
function globMatcher(glob) {
  let m = matcherCache.get(glob);
  if (!m) {
    m = (0, import_picomatch.default)(glob, { dot: true });
    matcherCache.set(glob, m);
  }
  return m;
}
function globStem(glob) {
  const cut4 = glob.search(/[*?[{]/);
  const stem = (cut4 < 0 ? glob : glob.slice(0, cut4)).replace(/\/+$/, "");
  return stem;
}
function basename(path2) {
  const slash = path2.lastIndexOf("/");
  return slash < 0 ? path2 : path2.slice(slash + 1);
}
var wordCache = /* @__PURE__ */ new Map();
function hasWord(text, name) {
  if (!text.includes(name)) return false;
  let re = wordCache.get(name);
  if (!re) {
    re = new RegExp(`(^|[^A-Za-z0-9_])${escape(name)}($|[^A-Za-z0-9_])`);
    if (wordCache.size > 1e4) wordCache.clear();
    wordCache.set(name, re);
  }
  return re.test(text);
}
function mentions(text, path2) {
  if (text.includes(path2)) return true;
  const file = basename(path2);
  if (hasWord(text, file)) return true;
  const module2 = file.replace(/\.[^.]+$/, "");
  return module2.length >= 3 && module2 !== file && hasWord(text, module2);
}
function touches(other, path2) {
  return other.files.includes(path2) || other.paths.some((g) => globMatcher(g)(path2));
}
function reviewWalkthrough(w, inFlight, opts) {
  const conflicts = [];
  const overlapTasks = [];
  const overlapFiles = /* @__PURE__ */ new Set();
  for (const other of inFlight) {
    const shared = w.filesChanged.filter((f) => touches(other, f));
    if (shared.length > 0) {
      overlapTasks.push(other.id);
      for (const f of shared) overlapFiles.add(f);
    }
  }
  if (overlapTasks.length > 0) {
    conflicts.push({
      riskDescription: "changed files overlap with tasks in flight",
      relatedTasks: overlapTasks,
      files: [...overlapFiles].sort()
    });
  }
  for (const risk of w.risks) {
    const related = [];
    const files = /* @__PURE__ */ new Set();
    for (const other of inFlight) {
      let hit = false;
      for (const f of other.files) {
        if (mentions(risk, f)) {
          files.add(f);
          hit = true;
        }
      }
      for (const g of other.paths) {
        const stem = globStem(g);
        if (stem.length >= 3 && risk.includes(stem)) {
          files.add(g);
          hit = true;
        }
      }
      if (hit) related.push(other.id);
    }
    if (related.length > 0) conflicts.push({ riskDescription: risk, relatedTasks: related, files: [...files].sort() });
  }
  const bugLike = keywordMatcher(opts.keywords);
  return {
    conflicts,
    lowConfidence: w.confidence < opts.threshold,
    followups: w.followups.map((text) => ({ text, spawn: bugLike(text) || opts.spawnOpenEnded }))
  };
}

// src/core/decide/review.ts
function review(s2, i, w) {
  const t = s2.task(i);
  const others = [];
  for (const k of [...s2.derived.inFlight].sort((a, b) => a - b)) {
    if (k === i) continue;
    const o = s2.task(k);
    others.push({ id: o.id, files: o.status === "RUNNING" ? [] : o.filesChanged ?? [], paths: s2.node(k).paths });
  }
  const result = reviewWalkthrough(
    { risks: w.risks, followups: w.followups, confidence: w.confidence, filesChanged: w.filesChanged },
    others,
    {
      threshold: s2.config.low_confidence_threshold,
      keywords: s2.config.followups.keywords,
      spawnOpenEnded: s2.config.followups.spawn_open_ended
    }
  );
  for (const risk of w.risks) s2.emit("review.risk", t.id, { attempt: t.attempts, risk });
  for (const c of result.conflicts) s2.emit("conflict.potential", t.id, c);
  if (result.lowConfidence)
    s2.emit("review.low_confidence", t.id, { confidence: w.confidence, threshold: s2.config.low_confidence_threshold });
  for (const f of result.followups) {
    if (!f.spawn) {
      s2.emit("followup.logged", t.id, { sourceTaskId: t.id, reason: f.text });
      continue;
    }
    if (s2.j.followups.length >= s2.config.followups.max_per_run) {
      s2.emit("followup.logged", t.id, { sourceTaskId: t.id, reason: `${f.text} (follow-up limit reached)` });
      continue;
    }
    queueFollowup(s2, t.id, t.attempts, f.text);
  }
}

// src/core/budget.ts
var round = (usd2) => Math.round(usd2 * 1e6) / 1e6;
function runLeft(j, config2) {
  const cap2 = config2.budgets.run_usd;
  if (cap2 === void 0) return void 0;
  let used = 0;
  for (const t of j.tasks) used += (t.spentUsd ?? 0) + (t.status === "RUNNING" ? t.attempt?.reservedUsd ?? 0 : 0);
  return round(cap2 + (j.budgetExtraUsd ?? 0) - used);
}
function taskLeft(node, t, config2) {
  const cap2 = node.budget?.task_usd ?? config2.budgets.task_usd;
  return cap2 === void 0 ? void 0 : round(cap2 + (t.budgetExtraUsd ?? 0) - (t.spentUsd ?? 0));
}
function nextAttemptCap(j, node, t, config2) {
  const tokens = node.budget?.attempt_tokens ?? config2.budgets.attempt_tokens;
  const base = node.budget?.attempt_usd ?? config2.budgets.attempt_usd;
  const attempt = base === void 0 ? void 0 : round(base + (t.budgetExtraUsd ?? 0));
  const task2 = taskLeft(node, t, config2);
  const run2 = runLeft(j, config2);
  if (task2 !== void 0 && task2 <= 0) return { cap: {}, blocked: "task" };
  if (run2 !== void 0 && (run2 <= 0 || attempt !== void 0 && run2 < Math.min(attempt, task2 ?? attempt)))
    return { cap: {}, blocked: "run" };
  const usd2 = [attempt, task2, run2].filter((x) => x !== void 0);
  return { cap: { ...usd2.length ? { usd: Math.min(...usd2) } : {}, ...tokens !== void 0 ? { tokens } : {} } };
}
function runSpent(j) {
  return round(j.tasks.reduce((n2, t) => n2 + (t.spentUsd ?? 0), 0));
}

// src/core/decide/dispatch.ts
function schedule(s2) {
  const running = s2.derived.running.size + runningFollowups(s2);
  let capacity = s2.config.max_parallel_agents - running;
  if (capacity <= 0) return;
  const picked = [];
  let runBlocked = false;
  for (const i of s2.derived.ready.slice()) {
    if (picked.length >= capacity) break;
    const t = s2.task(i);
    if (!backoffOver(t, s2.now)) continue;
    if (s2.idx.isRefinery[i] && !upstreamsCleared(s2, i)) continue;
    const { cap: cap2, blocked: blocked2 } = nextAttemptCap(s2.j, s2.node(i), t, s2.config);
    if (blocked2 === "run") {
      runBlocked = true;
      break;
    }
    if (blocked2 === "task") continue;
    dispatch(s2, i, cap2);
    picked.push(i);
  }
  if (runBlocked || picked.length) budgetPause(s2, runBlocked);
  capacity -= picked.length;
  spawnFollowups(s2, capacity);
}
function upstreamsCleared(s2, i) {
  let cleared = true;
  for (const d of s2.idx.deps[i]) {
    const dt = s2.task(d);
    if (dt.status !== "MERGE_READY" || !dt.attempt || clearedForRefinery(dt)) continue;
    cleared = false;
    if (!dt.attempt.revision.protectedPaths?.length) s2.effect(checkUpstream(attemptRef(dt), s2.task(i).id));
  }
  return cleared;
}
function dispatch(s2, i, cap2) {
  const { next, ...t } = s2.task(i);
  const attempt = t.attempts + 1;
  const resume = next?.resume;
  const branch = resume?.branch ?? branchName(s2.config, s2.j.runId, t.id, attempt);
  s2.replaceTask(i, { ...t, attempts: attempt, attempt: resumedAttempt(newAttempt(branch, s2.iso(s2.now), cap2.usd), resume) });
  const node = s2.node(i);
  const agent = assignAgent(s2, i, next);
  s2.emit("task.scheduled", t.id, { type: node.agentType, dependencies: node.dependencies });
  if (!s2.move(i, "RUNNING", "tick")) return;
  const resumes = resume ? { resumes: { fromAttempt: resume.fromAttempt, ...resume.stage ? { stage: resume.stage } : {} } } : {};
  s2.emit("task.started", t.id, {
    agentId: agentId(s2.j.runId, t.id, attempt),
    type: node.agentType,
    branch,
    attempt,
    agent: agent.adapter,
    ...resumes
  });
  const ref = { id: t.id, attempt, branch };
  const told = agent.adapter !== s2.config.agent.adapter || agent.switched ? { agent } : {};
  if (resume) {
    const r = resumeContext(resume, agent.adapter);
    s2.effect(dispatchAgent(ref, node.agentType, { ...handoff(next, cap2), ...told, resume: r }, resume.priorRunId));
    return;
  }
  const merge2 = [];
  if (s2.idx.isRefinery[i]) {
    const targets = [];
    for (const d of s2.idx.deps[i]) {
      const dt = s2.task(d);
      targets.push(dt.id);
      if (dt.status === "MERGE_READY" && dt.attempt) merge2.push(dt.attempt.branch);
    }
    s2.emit("refinery.started", t.id, { agentId: agentId(s2.j.runId, t.id, attempt), mergeTargets: targets });
  }
  s2.effect(prepareBranch(ref, s2.j.integrationBranch, merge2));
  const context = { ...handoff(next, cap2), ...told };
  s2.effect(dispatchAgent(ref, node.agentType, Object.keys(context).length ? context : void 0));
}
function budgetPause(s2, blocked2) {
  if (blocked2 === (s2.j.pause.budget === true)) return;
  if (blocked2) {
    s2.j.pause = { ...s2.j.pause, budget: true };
    s2.emit("run.paused", void 0, { reason: "budget" });
  } else {
    const { budget: _b, ...pause } = s2.j.pause;
    s2.j.pause = pause;
    s2.emit("run.resumed", void 0, { reason: "budget" });
  }
  s2.effect(updateTracker(s2.j.seq));
}
function handoff(next, cap2) {
  const budget = cap2.usd !== void 0 || cap2.tokens !== void 0 ? { budget: { ...cap2 } } : {};
  if (!next || next.answer === void 0 && next.refinement === void 0) return Object.keys(budget).length ? budget : void 0;
  return {
    ...next.refinement !== void 0 ? { refinement: next.refinement } : {},
    ...next.answer !== void 0 ? { answer: next.answer } : {},
    ...budget
  };
}
function resumedAttempt(a, resume) {
  if (!resume) return a;
  const { reason, fromAttempt, head, stage, depthUsed } = resume;
  return {
    ...a,
    ...resume.prNumber !== void 0 ? { prNumber: resume.prNumber } : {},
    resumed: {
      reason,
      fromAttempt,
      ...head !== void 0 ? { head } : {},
      ...stage !== void 0 ? { stage } : {},
      ...depthUsed !== void 0 ? { depthUsed } : {}
    },
    revision: { ...a.revision, priorRunId: resume.priorRunId }
  };
}
function resumeContext(r, adapter) {
  return {
    fromAttempt: r.fromAttempt,
    reason: r.reason,
    ...r.head !== void 0 ? { head: r.head } : {},
    ...r.stage !== void 0 ? { stage: r.stage } : {},
    ...r.session && r.session.adapter === adapter ? { session: { ...r.session } } : {},
    ...r.depthUsed !== void 0 ? { depthUsed: r.depthUsed } : {}
  };
}

// src/core/decide/liveness.ts
function silenceOf(t, config2, now) {
  const r = t.attempt?.revision;
  if (t.status !== "RUNNING" || !r) return void 0;
  if (!r.startedAt) return now - Date.parse(r.dispatchedAt) > config2.timeouts.dispatch_start_minutes * 6e4 ? "never started" : void 0;
  const last = Date.parse(r.lastHeartbeat ?? r.startedAt);
  return now - last > config2.timeouts.liveness_minutes * 6e4 ? "silent" : void 0;
}
function checkpointReadsAt(journal, config2, now) {
  if (journal.status !== "running") return [];
  const out = [];
  journal.tasks.forEach((t, i) => {
    const node = journal.plan.nodes[i];
    const a = t.attempt;
    if (!node || !a || silenceOf(t, config2, now) !== "silent") return;
    if (retryWay(config2, node, "stale") !== "resume" || whyFresh(node, a) !== void 0) return;
    out.push({ taskId: t.id, attempt: t.attempts, branch: a.branch });
  });
  return out;
}

// src/core/decide/tick.ts
function tick(s2, input) {
  const p = s2.j.pause;
  if (p.usageLimitUntil !== void 0 && Date.parse(p.usageLimitUntil) <= s2.now) {
    const { usageLimitUntil: _gone, ...rest } = p;
    s2.j.pause = rest;
    s2.emit("run.resumed", void 0, { reason: "usage_limit" });
  }
  for (const i of [...s2.derived.running].sort((a, b) => a - b)) {
    const silence = silenceOf(s2.task(i), s2.config, s2.now);
    if (silence === "never started") stale(s2, i, "tick", "the dispatched job never started");
    else if (silence === "silent") stale(s2, i, "tick", "no sign of life from the job", void 0, silentEvidence(s2, i, input));
  }
}
function silentEvidence(s2, i, input) {
  const t = s2.task(i);
  const read = input.checkpoints?.find((c) => c.taskId === t.id && c.attempt === t.attempts);
  return {
    cls: "stale",
    checkpoint: read?.checkpoint,
    checkpointProblem: read?.checkpointProblem,
    recordSha: read?.checkpointSha,
    pushedSha: read?.pushedSha
  };
}
function usageLimited(s2, until) {
  const prev = s2.j.pause.usageLimitUntil ? Date.parse(s2.j.pause.usageLimitUntil) : 0;
  if (until <= prev || until <= s2.now) return;
  if (!(prev > s2.now)) s2.emit("run.paused", void 0, { reason: "usage_limit", until: s2.iso(until) });
  s2.j.pause = { ...s2.j.pause, usageLimitUntil: s2.iso(until) };
}
function usageLimitedInput(s2, input) {
  const until = Date.parse(input.until);
  if (!Number.isNaN(until)) usageLimited(s2, until);
}
function settle(s2) {
  if (s2.j.status === "running" && s2.j.merged === s2.j.tasks.length) return complete(s2);
  if (s2.j.status !== "running" || schedulingHeld(s2.j.pause, s2.now)) return;
  schedule(s2);
}
function complete(s2) {
  s2.j.status = "completed";
  s2.j.completedAt = s2.iso(s2.now);
  s2.emit("run.completed", void 0, { duration: s2.now - Date.parse(s2.j.createdAt), taskCount: s2.j.tasks.length });
  s2.effect(openFinalPullRequest());
  if (s2.config.branch_cleanup === "on_complete") {
    const branches = [];
    for (const t of s2.j.tasks) for (let a = 1; a <= t.attempts; a++) branches.push(branchName(s2.config, s2.j.runId, t.id, a));
    for (const f of s2.j.followups) branches.push(f.branch);
    s2.effect(cleanupBranches(branches));
  }
}

// src/core/decide/agent-results.ts
function currentRevision(s2, input) {
  const i = s2.current(input);
  if (i === void 0) return void 0;
  const t = s2.task(i);
  const iteration = iterationOf(t);
  if ("iteration" in input && input.iteration !== void 0 && input.iteration !== iteration) {
    s2.reject(input.kind, `iteration ${input.iteration} is not the current revision (${iteration})`, t.id);
    return void 0;
  }
  const runId = "workflowRunId" in input ? input.workflowRunId : void 0;
  const prior = s2.revision(i).priorRunId;
  if (runId !== void 0 && prior !== void 0 && runId <= prior) {
    s2.reject(input.kind, `workflow run ${runId} is an earlier revision's job`, t.id);
    return void 0;
  }
  return i;
}
function agentAlive(s2, input) {
  const i = currentRevision(s2, input);
  if (i === void 0) return;
  const t = s2.task(i);
  if (t.status !== "RUNNING") return;
  const known = s2.revision(i).workflowRunId;
  if (input.kind === "agent.started" && input.workflowRunId !== void 0 && known !== void 0 && input.workflowRunId !== known)
    return s2.reject(input.kind, `workflow run ${input.workflowRunId} is not the job of ${t.id} (run ${known})`, t.id);
  const e = s2.editRevision(i);
  const at = s2.iso(s2.now);
  if (input.kind === "agent.started") {
    if (!e.startedAt) e.startedAt = at;
    if (input.workflowRunId !== void 0) e.workflowRunId = input.workflowRunId;
  }
  if (!e.lastHeartbeat || Date.parse(e.lastHeartbeat) < s2.now) e.lastHeartbeat = at;
  const p = input.kind === "agent.heartbeat" ? input.progress : void 0;
  if (!p || e.progress && Date.parse(p.beat) < Date.parse(e.progress.beat) || JSON.stringify(p) === JSON.stringify(e.progress)) return;
  const before = e.progress;
  e.progress = { ...p };
  if (p.stage && p.stage !== before?.stage) s2.emit("task.progress", t.id, { attempt: t.attempts, message: `stage ${p.stage} reached` });
  else s2.touchTracker();
}
function agentLost(s2, input) {
  const i = currentRevision(s2, input);
  if (i === void 0 || s2.task(i).status !== "RUNNING") return;
  const logUrl = input.logUrl ? { logUrl: input.logUrl } : {};
  const ev = {
    cls: "lost",
    checkpoint: input.checkpoint,
    checkpointProblem: input.checkpointProblem,
    recordSha: input.checkpointSha,
    pushedSha: input.pushedSha
  };
  if (input.runnerLost) return stale(s2, i, input.kind, input.reason, input.logUrl, ev);
  if (input.blockedBy) {
    fail(s2, i, input.kind, { error: input.blockedBy, retryable: false, hold: "blocked", ...logUrl });
    const t = s2.task(i);
    s2.effect(postComment("push-blocked", attemptRef(t), pushBlockedComment(t.id, input.blockedBy)));
    return;
  }
  return fail(s2, i, input.kind, { error: input.reason, retryable: true, counted: true, ...logUrl, resume: ev });
}
function agentFinished(s2, input) {
  const i = currentRevision(s2, input);
  if (i === void 0) return;
  const t = s2.task(i);
  if (t.status !== "RUNNING") {
    if (t.status === "DONE" || t.status === "MERGE_READY" || t.status === "MERGED") return;
    s2.reject(input.kind, `the attempt is ${t.status}, not RUNNING`, t.id);
    return;
  }
  if (input.pushedSha) s2.editRevision(i).pushedSha = input.pushedSha;
  if (input.recordSha) s2.editAttempt(i).recordSha = input.recordSha;
  addSpend(s2, i, input.spend);
  const ev = (cls) => ({
    cls,
    checkpoint: input.checkpoint,
    checkpointProblem: input.checkpointProblem,
    recordSha: input.recordSha,
    pushedSha: input.pushedSha
  });
  if (input.budgetExceeded) {
    const b = input.budgetExceeded;
    const spent = b.spentUsd !== void 0 ? `$${b.spentUsd.toFixed(2)}` : `${b.spentTokens ?? 0} tokens`;
    const limit = b.limitUsd !== void 0 ? `$${b.limitUsd.toFixed(2)}` : `${b.limitTokens ?? 0} tokens`;
    return fail(s2, i, input.kind, {
      error: `stopped at its budget: ${spent} of ${limit}; /forge budget ${s2.task(i).id} +<amount> to go on`,
      retryable: false,
      hold: "budget",
      exitCode: input.exitCode,
      resume: ev("budget")
    });
  }
  if (input.rateLimitedUntil) {
    const until = Date.parse(input.rateLimitedUntil);
    if (!Number.isNaN(until) && until > s2.now) {
      const from = currentAgent(s2, i);
      if (fallBack(s2, i, `${from} stopped by its usage limit until ${s2.iso(until)}`))
        return fail(s2, i, input.kind, {
          error: `${from}: model usage limit until ${s2.iso(until)}; the next attempt goes to ${nextAgent(s2, i)}`,
          retryable: true,
          counted: false,
          notBefore: s2.now,
          resume: ev("usage_limit")
        });
      usageLimited(s2, until);
      return fail(s2, i, input.kind, {
        error: `model usage limit until ${s2.iso(until)}`,
        retryable: true,
        counted: false,
        notBefore: until,
        resume: ev("usage_limit")
      });
    }
  }
  switch (input.exitCode) {
    case EXIT_CODES.SUCCESS:
    case EXIT_CODES.PARTIAL_SUCCESS:
      if (s2.idx.isRefinery[i] && !refineryContains(s2, i, input.uncontainedUpstreams, input.kind)) return;
      return completed(s2, i, input.walkthrough, input.exitCode === EXIT_CODES.PARTIAL_SUCCESS, input.kind, ev("failure"));
    case EXIT_CODES.FAILURE:
      return fail(s2, i, input.kind, {
        error: input.error ?? "the agent failed",
        retryable: true,
        counted: true,
        exitCode: EXIT_CODES.FAILURE,
        resume: ev("failure")
      });
    case EXIT_CODES.DEPTH_EXCEEDED:
      return fail(s2, i, input.kind, {
        error: input.error ?? "spawn depth exhausted",
        retryable: false,
        hold: "fatal",
        exitCode: EXIT_CODES.DEPTH_EXCEEDED
      });
    case EXIT_CODES.HUMAN_INPUT:
      return askPerson(s2, i, input.question ?? input.error ?? DEFAULT_QUESTION, input.kind);
    case EXIT_CODES.NEEDS_REFINEMENT:
      fail(s2, i, input.kind, {
        error: input.error ?? "the quality gate failed",
        retryable: true,
        counted: true,
        exitCode: EXIT_CODES.NEEDS_REFINEMENT,
        refinement: input.refinement ?? input.error ?? "",
        resume: ev("refinement")
      });
      return;
    case EXIT_CODES.NEEDS_ESCALATION:
      return escalate(s2, i, input);
    case EXIT_CODES.INTERRUPTED:
      return fail(s2, i, input.kind, {
        error: input.error ?? "cancelled",
        retryable: false,
        hold: "cancelled",
        exitCode: EXIT_CODES.INTERRUPTED
      });
    case EXIT_CODES.TIMEOUT:
      return stale(s2, i, input.kind, input.error ?? "the agent timed out", void 0, ev("stale"));
    default:
      return fail(s2, i, input.kind, {
        error: input.error ?? `unknown exit code ${input.exitCode}`,
        retryable: true,
        counted: true,
        exitCode: input.exitCode,
        resume: ev("failure")
      });
  }
}
function askPerson(s2, i, question, kind) {
  const t = s2.task(i);
  fail(s2, i, kind, { error: "waiting for a person", retryable: false, hold: "human", exitCode: EXIT_CODES.HUMAN_INPUT });
  s2.editAttempt(i).question = question;
  s2.emit("task.waiting", t.id, { attempt: t.attempts, question });
  s2.effect(postComment("question", attemptRef(t), questionComment(t.id, question)));
}
function refineryContains(s2, i, uncontained, kind) {
  if (uncontained === void 0) return true;
  const t = s2.task(i);
  const missing = s2.idx.deps[i].filter((d) => uncontained.includes(s2.task(d).id));
  if (missing.length > 0) {
    const what = missing.map((d) => `${s2.task(d).id}'s work (branch ${s2.task(d).attempt?.branch ?? "?"})`).join(", ");
    fail(s2, i, kind, { error: `${t.id}'s head does not contain ${what}`, retryable: true, counted: true, exitCode: EXIT_CODES.SUCCESS });
    return false;
  }
  s2.editAttempt(i).contained = s2.idx.deps[i].filter((d) => s2.task(d).status === "MERGE_READY").map((d) => s2.task(d).id);
  return true;
}
function completed(s2, i, w, partial, kind, ev) {
  const failed = (error) => fail(s2, i, kind, { error, retryable: true, counted: true, exitCode: EXIT_CODES.SUCCESS, resume: ev });
  if (!w) return failed("no valid walkthrough was committed");
  if (w.filesChanged.length === 0) return failed("the attempt changed no files");
  s2.editRevision(i).walkthroughSha = w.headSha;
  const e = s2.edit(i);
  e.confidence = w.confidence;
  e.walkthroughStatus = partial ? "partial" : w.status;
  e.filesChanged = w.filesChanged;
  if (!s2.move(i, "DONE", kind)) return;
  const t = s2.task(i);
  s2.emit("task.completed", t.id, {
    agentId: agentId(s2.j.runId, t.id, t.attempts),
    status: e.walkthroughStatus,
    confidence: w.confidence,
    attempt: t.attempts
  });
  review(s2, i, w);
  gate(s2, i, kind);
}
function addSpend(s2, i, spend) {
  if (!spend) return;
  const e = s2.edit(i);
  if (spend.usd !== void 0) e.spentUsd = Math.round(((e.spentUsd ?? 0) + spend.usd) * 1e6) / 1e6;
  if (spend.tokens !== void 0) e.spentTokens = (e.spentTokens ?? 0) + spend.tokens;
  if (spend.agentMs !== void 0) e.agentMs = (e.agentMs ?? 0) + spend.agentMs;
}

// src/core/decide/commands.ts
var commands = {
  pause(s2, c) {
    if (s2.j.pause.manual) return s2.reject(c.kind, commandReplies.alreadyPaused);
    s2.j.pause = { ...s2.j.pause, manual: true };
    s2.emit("run.paused", void 0, { reason: "manual" });
  },
  resume(s2, c) {
    if (!s2.j.pause.manual)
      return s2.reject(
        c.kind,
        s2.j.pause.changeRequests.length ? commandReplies.waitsForChangeRequests(s2.j.pause.changeRequests) : commandReplies.notPaused
      );
    s2.j.pause = { ...s2.j.pause, manual: false };
    s2.emit("run.resumed", void 0, { reason: "manual" });
  },
  cancel(s2, c) {
    s2.j.status = "cancelled";
    s2.j.completedAt = s2.iso(s2.now);
    s2.emit("run.cancelled", void 0, { actor: c.actor });
    for (const i of [...s2.derived.running].sort((a, b) => a - b)) s2.effect(cancelAgent(attemptRef(s2.task(i))));
  },
  retry(s2, c) {
    if (c.which === "failed") return retryRound(s2, c);
    if (!c.taskId) return s2.reject(c.kind, commandReplies.retryWhich);
    const i = s2.find(c.taskId);
    if (i === void 0) return s2.reject(c.kind, commandReplies.unknownTask(c.taskId), c.taskId);
    const t = s2.task(i);
    if (t.status === "MERGE_READY" && isMergeBlocked(t)) return retryBlockedMerge(s2, i);
    if (t.status !== "FAILED" && t.status !== "STALE") return s2.reject(c.kind, commandReplies.notRetryable(c.taskId, t.status), c.taskId);
    const hold = s2.attempt(i).hold;
    if (hold === "escalated") return s2.reject(c.kind, commandReplies.waitsForItsChangeRequest(c.taskId), c.taskId);
    if (t.status === "FAILED" && !hold) return s2.reject(c.kind, commandReplies.alreadyRetrying(c.taskId), c.taskId);
    if (c.message) s2.edit(i).next = { ...t.next, answer: c.message };
    retry2(s2, i, c.kind, { counted: false, manual: true });
  },
  approve: approveOrReject,
  reject: approveOrReject,
  fix: fixCommand,
  steer: steerCommand,
  budget: raiseBudget
};
var WAITS_FOR_A_PERSON = /* @__PURE__ */ new Set(["human", "escalated", "budget"]);
function retryRound(s2, c) {
  const round3 = [];
  for (let i = 0; i < s2.j.tasks.length; i++) {
    const t = s2.task(i);
    const hold = t.attempt?.hold;
    if (t.status !== "FAILED" && t.status !== "STALE") continue;
    if (t.status === "FAILED" && !hold || hold && WAITS_FOR_A_PERSON.has(hold)) continue;
    round3.push(i);
  }
  if (!round3.length) return s2.reject(c.kind, commandReplies.nothingFailed);
  for (const i of round3) {
    if (c.message) s2.edit(i).next = { ...s2.task(i).next, answer: c.message };
    retry2(s2, i, c.kind, { counted: false, manual: true });
  }
}
function raiseBudget(s2, c) {
  if (c.amountUsd === void 0 || !(c.amountUsd > 0)) return s2.reject(c.kind, commandReplies.budgetHow);
  const amount = c.amountUsd;
  if (!c.taskId) {
    s2.j.budgetExtraUsd = Math.round(((s2.j.budgetExtraUsd ?? 0) + amount) * 1e6) / 1e6;
    if (s2.j.pause.budget) {
      const { budget: _b, ...pause } = s2.j.pause;
      s2.j.pause = pause;
      s2.emit("run.resumed", void 0, { reason: "budget" });
    }
    for (let i2 = 0; i2 < s2.j.tasks.length; i2++)
      if (s2.task(i2).attempt?.hold === "budget") retry2(s2, i2, c.kind, { counted: false, manual: true });
    return;
  }
  const i = s2.find(c.taskId);
  if (i === void 0) return s2.reject(c.kind, commandReplies.unknownTask(c.taskId), c.taskId);
  s2.edit(i).budgetExtraUsd = Math.round(((s2.task(i).budgetExtraUsd ?? 0) + amount) * 1e6) / 1e6;
  if (s2.task(i).attempt?.hold === "budget") retry2(s2, i, c.kind, { counted: false, manual: true });
}
function approveOrReject(s2, c) {
  if (c.crId) {
    const cr = s2.j.changeRequests.find((x) => x.id === c.crId);
    if (!cr) return s2.reject(c.kind, commandReplies.unknownChangeRequest(c.crId));
    if (cr.status !== "pending") return s2.reject(c.kind, commandReplies.changeRequestResolved(c.crId, cr.status));
    if (c.command === "reject") return resolveCr(s2, cr.id, "rejected");
    return approveCr(s2, cr.id);
  }
  if (c.taskId && c.command === "approve") {
    const i = s2.find(c.taskId);
    const t = i === void 0 ? void 0 : s2.task(i);
    if (i !== void 0 && t?.status === "MERGE_READY" && t.attempt?.revision.protectedPaths?.length) {
      if (s2.idx.isRefinery[i]) s2.edit(i).approved = true;
      return approveHeld(s2, i);
    }
    if (i === void 0 || !s2.idx.isRefinery[i]) return s2.reject(c.kind, commandReplies.notARefinery(c.taskId), c.taskId);
    s2.edit(i).approved = true;
    return requestMerge(s2, i);
  }
  return s2.reject(c.kind, commandReplies.approveWhat(c.command));
}
function seenBefore(s2, commentId) {
  const memory = s2.j.commands ?? { comments: [], below: 0 };
  if (commentId <= memory.below || memory.comments.includes(commentId)) return true;
  const comments = [...memory.comments, commentId].sort((a, b) => a - b);
  const over = comments.length - COMMAND_MEMORY;
  const below = over > 0 ? comments[over - 1] : memory.below;
  s2.j.commands = { comments: over > 0 ? comments.slice(over) : comments, below };
  return false;
}
function command(s2, c) {
  if (c.commentId !== void 0 && seenBefore(s2, c.commentId)) return;
  commands[c.command](s2, c);
}

// src/core/decide/branch-update.ts
function branchUpdateRequested(s2, input) {
  const i = s2.current(input);
  if (i === void 0) return;
  const t = s2.task(i);
  if (t.status !== "MERGE_READY" || prHead(t) !== input.from) return;
  const own = ownHead(t);
  const a = s2.editAttempt(i);
  a.branchUpdate = { ...a.branchUpdate?.over === own ? a.branchUpdate : {}, over: own, requested: input.from, requestedAt: s2.iso(s2.now) };
}
var CARRIED = ["approvedHead", "checkedHead", "reviewApprovedHead"];
function branchUpdated(s2, input) {
  const i = s2.current(input);
  if (i === void 0) return;
  const t = s2.task(i);
  if (t.status !== "MERGE_READY") return s2.reject(input.kind, `${t.id} is ${t.status}: its branch is not Forge's to update`, t.id);
  const from = prHead(t);
  if (input.head === from) return;
  if (input.from !== from)
    return s2.reject(input.kind, `the update was made over ${input.from.slice(0, 7)}, not the PR's head ${from?.slice(0, 7) ?? "?"}`, t.id);
  s2.editAttempt(i).branchUpdate = { over: ownHead(t), head: input.head };
  const r = s2.revision(i);
  if (CARRIED.some((k) => r[k] === from)) {
    const e = s2.editRevision(i);
    for (const k of CARRIED) if (e[k] === from) e[k] = input.head;
  }
  s2.emit("task.branch_updated", t.id, { attempt: t.attempts, from: input.from, headSha: input.head });
}

// src/core/decide/handlers.ts
var handlers = {
  tick,
  "agent.started": agentAlive,
  "agent.heartbeat": agentAlive,
  "agent.finished": (s2, input) => isFollowup(s2, input.taskId) ? followupFinished(s2, input.taskId, succeeded(input.exitCode)) : agentFinished(s2, input),
  "agent.lost": (s2, input) => isFollowup(s2, input.taskId) ? followupFinished(s2, input.taskId, false) : agentLost(s2, input),
  "branch.pushed": branchPushed,
  "pr.opened": (s2, input) => isFollowup(s2, input.taskId) ? followupPrOpened(s2, input.taskId, input.number) : prOpened(s2, input),
  "pr.merged": (s2, input) => isFollowup(s2, input.taskId) ? followupMerged(s2, input.taskId) : prMerged(s2, input.taskId, input.attempt, input.mergeSha, input.kind),
  "effect.done": effectDone,
  "effect.failed": effectFailed,
  command,
  "overlay.applied": overlayApplied,
  "cr.closed": crClosed,
  "plan.changed": planChanged,
  "usage.limited": usageLimitedInput,
  "review.submitted": reviewSubmitted,
  "review.dismissed": reviewDismissed,
  "checks.failed": checksFailed,
  "merge.blocked": mergeBlocked,
  "branch.update_requested": branchUpdateRequested,
  "branch.updated": branchUpdated
};
var AFTER_THE_RUN = ["effect.done", "effect.failed", "agent.finished", "agent.lost", "pr.merged"];
function apply(s2, input) {
  if (s2.j.status !== "running" && !AFTER_THE_RUN.includes(input.kind)) {
    if (input.kind === "command") s2.reject(input.kind, commandReplies.runNotRunning(s2.j.status));
    return;
  }
  handlers[input.kind](s2, input);
}

// src/core/derived.ts
var memo = /* @__PURE__ */ new WeakMap();
function derivedOf(journal) {
  let d = memo.get(journal);
  if (!d) {
    d = computeDerived(journal.tasks, journal.plan.nodes);
    memo.set(journal, d);
  }
  return d;
}
function remember(journal, d) {
  memo.set(journal, d);
}
function computeDerived(tasks, nodes) {
  const ready = [];
  const inFlight = /* @__PURE__ */ new Set();
  const running = /* @__PURE__ */ new Set();
  tasks.forEach((t, i) => {
    if (isReady(t)) ready.push(i);
    if (IN_FLIGHT_STATUSES.has(t.status)) inFlight.add(i);
    if (t.status === "RUNNING") running.add(i);
  });
  ready.sort((a, b) => nodes[b].priority - nodes[a].priority || a - b);
  return { ready, inFlight, running };
}
var DerivedDraft = class {
  ready;
  inFlight;
  running;
  constructor(from) {
    this.ready = from.ready.slice();
    this.inFlight = new Set(from.inFlight);
    this.running = new Set(from.running);
  }
  /** Bring task i's memberships up to date with its state. */
  update(i, t, nodes) {
    const pos = this.#position(i, nodes);
    const present = this.ready[pos] === i;
    if (isReady(t) && !present) this.ready.splice(pos, 0, i);
    else if (!isReady(t) && present) this.ready.splice(pos, 1);
    if (IN_FLIGHT_STATUSES.has(t.status)) this.inFlight.add(i);
    else this.inFlight.delete(i);
    if (t.status === "RUNNING") this.running.add(i);
    else this.running.delete(i);
  }
  /** Binary search for i's place in the ready order. */
  #position(i, nodes) {
    const p = nodes[i].priority;
    let lo = 0;
    let hi = this.ready.length;
    while (lo < hi) {
      const mid = lo + hi >>> 1;
      const m = this.ready[mid];
      const pm = nodes[m].priority;
      if (pm > p || pm === p && m < i) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
};

// src/core/decide/step.ts
var Step = class {
  constructor(journal, now, config2) {
    this.now = now;
    this.config = config2;
    this.j = { ...journal };
    this.idx = planIndex(journal.plan);
    this.base = derivedOf(journal);
    this.timestamp = new Date(now).toISOString();
  }
  now;
  config;
  j;
  idx;
  events = [];
  effects = [];
  transitions = [];
  rejections = [];
  /** Position of the input being applied in its batch. */
  leaf = 0;
  tasksCopied = false;
  touched = /* @__PURE__ */ new Set();
  /** Tasks whose attempt (and whose revision) this decision copied already, so writing them writes its own. */
  touchedAttempt = /* @__PURE__ */ new Set();
  touchedRevision = /* @__PURE__ */ new Set();
  timestamp;
  trackerDirty = false;
  base;
  draft;
  /** The incremental indexes as of now (read-only view). */
  get derived() {
    return this.draft ?? this.base;
  }
  /** Re-index task i after a change of its status or blockers. */
  reindex(i) {
    this.draft ??= new DerivedDraft(this.base);
    this.draft.update(i, this.task(i), this.j.plan.nodes);
  }
  /**
   * Replace task i with a fresh object (no `delete`, so every task object keeps one shape). Its
   * attempt and revision may be shared with the input journal: they are copied again before a write.
   */
  replaceTask(i, t) {
    this.edit(i);
    this.j.tasks[i] = t;
    this.touchedAttempt.delete(i);
    this.touchedRevision.delete(i);
  }
  // ---- reading ----
  task(i) {
    return this.j.tasks[i];
  }
  node(i) {
    return this.j.plan.nodes[i];
  }
  find(taskId) {
    return this.idx.indexOf.get(taskId);
  }
  iso(ms) {
    return new Date(ms).toISOString();
  }
  /**
   * The task index when the input names the task's current attempt; stale or unknown inputs change
   * nothing. A retried task has no current attempt until its next is dispatched.
   */
  current(input) {
    const i = this.find(input.taskId);
    if (i === void 0) {
      this.reject(input.kind, `unknown task ${input.taskId}`, input.taskId);
      return void 0;
    }
    const t = this.task(i);
    if (t.attempts !== input.attempt || !t.attempt) {
      const now = t.attempt ? `${t.attempts}` : t.attempts ? `none since ${t.attempts} was retried` : "none yet";
      this.reject(input.kind, `attempt ${input.attempt} is not the current attempt (${now})`, input.taskId);
      return void 0;
    }
    return i;
  }
  /** Task i's current attempt (a task with none is a caller's error: `current` or the status says there is one). */
  attempt(i) {
    const a = this.task(i).attempt;
    if (!a) throw new Error(`task ${this.task(i).id} has no current attempt`);
    return a;
  }
  /** The current revision of task i's attempt. */
  revision(i) {
    return this.attempt(i).revision;
  }
  // ---- writing ----
  /** A writable copy of task i. */
  edit(i) {
    if (!this.tasksCopied) {
      this.j.tasks = this.j.tasks.slice();
      this.tasksCopied = true;
    }
    if (!this.touched.has(i)) {
      this.j.tasks[i] = { ...this.j.tasks[i] };
      this.touched.add(i);
    }
    return this.j.tasks[i];
  }
  /** A writable copy of task i's current attempt (the revision still shared until `editRevision`). */
  editAttempt(i) {
    const t = this.edit(i);
    if (!t.attempt) throw new Error(`task ${t.id} has no current attempt`);
    if (!this.touchedAttempt.has(i)) {
      t.attempt = { ...t.attempt };
      this.touchedAttempt.add(i);
    }
    return t.attempt;
  }
  /** A writable copy of the current revision of task i's attempt. */
  editRevision(i) {
    const a = this.editAttempt(i);
    if (!this.touchedRevision.has(i)) {
      a.revision = { ...a.revision };
      this.touchedRevision.add(i);
    }
    return a.revision;
  }
  emit(type, taskId, data) {
    const seq = this.j.seq + 1;
    this.j.seq = seq;
    const event = { eventId: `${this.j.runId}:${seq}`, seq, timestamp: this.timestamp, type, runId: this.j.runId, data };
    if (taskId !== void 0) event.taskId = taskId;
    this.events.push(event);
    this.trackerDirty = true;
  }
  /** The tracker shows something that changed without an event of its own (a running task's progress). */
  touchTracker() {
    this.trackerDirty = true;
  }
  /** Add an effect to the outbox; one with the same key, pending or decided just now, is replaced (latest wins). */
  effect(e) {
    const outbox = this.j.outbox.slice();
    const at = outbox.findIndex((o) => o.key === e.key);
    if (at >= 0) outbox[at] = e;
    else outbox.push(e);
    this.j.outbox = outbox;
    const mine = this.effects.findIndex((o) => o.key === e.key);
    if (mine >= 0) this.effects[mine] = e;
    else this.effects.push(e);
  }
  /** Take a pending effect out of the outbox (its reason is gone), whether decided now or before. */
  dropEffect(key) {
    if (this.j.outbox.some((o) => o.key === key)) this.j.outbox = this.j.outbox.filter((o) => o.key !== key);
    const mine = this.effects.findIndex((o) => o.key === key);
    if (mine >= 0) this.effects.splice(mine, 1);
  }
  reject(input, reason, taskId) {
    this.rejections.push(taskId === void 0 ? { input, reason, leaf: this.leaf } : { input, taskId, reason, leaf: this.leaf });
  }
  /**
   * Apply `to` to task i through the state machine. True when applied; false when it was a no-op
   * (the task already made it) or invalid (the reason is recorded).
   */
  move(i, to, input) {
    const t = this.task(i);
    const check = checkTransition(t.status, to);
    if (!check.ok) {
      this.reject(input, check.reason, t.id);
      return false;
    }
    if (check.noop) return false;
    const from = t.status;
    this.edit(i).status = to;
    this.reindex(i);
    this.transitions.push({ taskId: t.id, attempt: t.attempts, from, to });
    this.onStatusChange(i, from, to);
    return true;
  }
  onStatusChange(i, from, to) {
    const t = this.task(i);
    if (from === "MERGE_READY" && to === "RUNNING") {
      for (const d of this.idx.dependents[i]) {
        if (!this.idx.isRefinery[d]) continue;
        this.edit(d).blockers += 1;
        this.reindex(d);
      }
    }
    if (to === "MERGE_READY" || to === "MERGED") {
      for (const d of this.idx.dependents[i]) {
        if (this.idx.isRefinery[d] === (to === "MERGE_READY")) {
          const dt = this.edit(d);
          dt.blockers = Math.max(0, dt.blockers - 1);
          if (dt.blockers === 0) this.reindex(d);
        }
      }
    }
    if (to === "MERGED") this.j.merged += 1;
    if (t.attempts > 0 && to !== "PENDING") this.effect(checkRun(attemptRef(t), to));
  }
  /** Continue the decision on an amended plan (overlay), with a new index. */
  replacePlan(plan, tasks) {
    this.j.plan = plan;
    this.j.tasks = tasks;
    this.idx = planIndex(plan);
    this.tasksCopied = true;
    this.touched.clear();
    this.touchedAttempt.clear();
    this.touchedRevision.clear();
    this.draft = new DerivedDraft(computeDerived(tasks, plan.nodes));
  }
  finish() {
    if (this.trackerDirty) this.effect(updateTracker(this.j.seq));
    remember(this.j, this.derived);
    return { journal: this.j, events: this.events, effects: this.effects, transitions: this.transitions, rejections: this.rejections };
  }
};

// src/core/decide/start-run.ts
function startRun(run2, now, config2) {
  const nodes = run2.nodes.map(planNode);
  const index = prioritise(nodes);
  const tasks = nodes.map((n2) => newTask(n2.id));
  tasks.forEach((t, k) => t.blockers = countBlockers(index, k, tasks));
  const journal = {
    version: JOURNAL_VERSION,
    runId: run2.runId,
    planId: run2.planId,
    planCommit: run2.planCommit,
    dagHash: run2.dagHash,
    integrationBranch: run2.integrationBranch,
    baseBranch: run2.baseBranch,
    createdAt: new Date(now).toISOString(),
    status: "running",
    seq: 0,
    plan: { nodes, overlays: [] },
    tasks,
    merged: 0,
    pause: { manual: false, changeRequests: [] },
    changeRequests: [],
    followups: [],
    outbox: []
  };
  const s2 = new Step(journal, now, config2);
  s2.emit("run.started", void 0, { planId: run2.planId, dagHash: run2.dagHash, planCommit: run2.planCommit, taskCount: nodes.length });
  settle(s2);
  return s2.finish();
}

// src/core/decide/index.ts
function decide(journal, input, now, config2) {
  const step = new Step(journal, now, config2);
  const leaves = input.kind === "batch" ? input.inputs : [input];
  leaves.forEach((leaf, k) => {
    step.leaf = k;
    apply(step, leaf);
  });
  settle(step);
  return step.finish();
}

// src/app/render.ts
var import_yaml3 = __toESM(require_dist(), 1);

// src/core/render/mermaid.ts
var STATUS_STYLES = {
  PENDING: "fill:#eaeef2,stroke:#8c959f,color:#24292f",
  RUNNING: "fill:#ddf4ff,stroke:#0969da,color:#0a3069",
  DONE: "fill:#dafbe1,stroke:#4ac26b,color:#116329",
  MERGE_READY: "fill:#a7f3d0,stroke:#1a7f37,color:#044f1e",
  MERGED: "fill:#1f883d,stroke:#116329,color:#ffffff",
  FAILED: "fill:#ffebe9,stroke:#cf222e,color:#82071e",
  STALE: "fill:#fff8c5,stroke:#bf8700,color:#7d4e00"
};
function renderMermaid(nodes, statuses, options2 = {}) {
  const key = /* @__PURE__ */ new Map();
  nodes.forEach((n2, i) => {
    if (!key.has(n2.id)) key.set(n2.id, `n${i}`);
  });
  const lines = ["flowchart TD"];
  nodes.forEach((n2, i) => {
    const k = `n${i}`;
    if (key.get(n2.id) !== k) return;
    const label = escapeLabel(n2.id) + (options2.titles && n2.title ? `<br/>${escapeLabel(n2.title)}` : "");
    const refinery = (n2.type ?? n2.kind) === "refinery";
    lines.push(refinery ? `  ${k}{{"${label}"}}` : `  ${k}["${label}"]`);
  });
  for (const n2 of nodes) {
    const to = key.get(n2.id);
    for (const d of n2.dependencies) {
      const from = key.get(d);
      if (from !== void 0 && from !== to) lines.push(`  ${from} --> ${to}`);
    }
  }
  if (statuses) {
    const get2 = statuses instanceof Map ? (id) => statuses.get(id) : (id) => statuses[id];
    const byStatus = /* @__PURE__ */ new Map();
    for (const [id, k] of key) {
      const s2 = get2(id);
      if (s2 === void 0) continue;
      const list = byStatus.get(s2) ?? [];
      list.push(k);
      byStatus.set(s2, list);
    }
    for (const status of Object.keys(STATUS_STYLES)) {
      const members = byStatus.get(status);
      if (!members) continue;
      const cls = status.toLowerCase();
      lines.push(`  classDef ${cls} ${STATUS_STYLES[status]}`);
      lines.push(`  class ${members.join(",")} ${cls}`);
    }
  }
  return lines.join("\n") + "\n";
}
function escapeLabel(text) {
  return text.replace(/#/g, "#35;").replace(/"/g, "#quot;").replace(/</g, "#lt;").replace(/>/g, "#gt;");
}
var MERMAID_LIMITS = { maxEdges: 500, maxTextSize: 5e4 };
var LIMIT_SHARE = 0.8;
function mermaidEdgeCount(nodes) {
  const ids = new Set(nodes.map((n2) => n2.id));
  let edges = 0;
  for (const n2 of nodes) for (const d of n2.dependencies) if (d !== n2.id && ids.has(d)) edges++;
  return edges;
}
function fitsMermaid(text, edges) {
  return edges <= MERMAID_LIMITS.maxEdges * LIMIT_SHARE && text.length <= MERMAID_LIMITS.maxTextSize * LIMIT_SHARE;
}
function waves(nodes) {
  const index = /* @__PURE__ */ new Map();
  nodes.forEach((n2, i) => {
    if (!index.has(n2.id)) index.set(n2.id, i);
  });
  const waiting = nodes.map(() => 0);
  const dependents = nodes.map(() => []);
  nodes.forEach((n2, i) => {
    for (const d of n2.dependencies) {
      const from = index.get(d);
      if (from === void 0 || from === i) continue;
      waiting[i]++;
      dependents[from].push(i);
    }
  });
  const wave = nodes.map(() => 1);
  const ready = nodes.flatMap((_, i) => waiting[i] === 0 ? [i] : []);
  for (let k = 0; k < ready.length; k++) {
    const from = ready[k];
    for (const to of dependents[from]) {
      wave[to] = Math.max(wave[to], wave[from] + 1);
      if (--waiting[to] === 0) ready.push(to);
    }
  }
  if (ready.length < nodes.length) {
    const last = Math.max(0, ...ready.map((i) => wave[i]));
    nodes.forEach((_, i) => {
      if (waiting[i] > 0) wave[i] = last + 1;
    });
  }
  return wave;
}
var SUMMARY_MAX_GROUPS = 40;
var COUNT_ORDER = ["MERGED", "MERGE_READY", "DONE", "RUNNING", "STALE", "FAILED", "PENDING"];
var WORST_FIRST = ["FAILED", "STALE", "PENDING", "RUNNING", "DONE", "MERGE_READY", "MERGED"];
function summarizeByWave(nodes, statuses, maxGroups = SUMMARY_MAX_GROUPS, wave = waves(nodes)) {
  const deepest = Math.max(0, ...wave);
  const band = Math.max(1, Math.ceil(deepest / maxGroups));
  const groups2 = [];
  for (let w = 1; w <= deepest; w += band) groups2.push({ from: w, to: Math.min(deepest, w + band - 1), tasks: 0, counts: {} });
  nodes.forEach((n2, i) => {
    const g = groups2[Math.floor((wave[i] - 1) / band)];
    g.tasks++;
    const s2 = statuses.get(n2.id);
    if (s2 !== void 0) g.counts[s2] = (g.counts[s2] ?? 0) + 1;
  });
  for (const g of groups2) g.worst = WORST_FIRST.find((s2) => g.counts[s2]);
  return groups2;
}
function renderWaveSummary(groups2) {
  const lines = ["flowchart TD"];
  groups2.forEach((g, i) => {
    const waves2 = g.from === g.to ? `wave ${g.from}` : `waves ${g.from}\u2013${g.to}`;
    const counts = COUNT_ORDER.filter((s2) => g.counts[s2]).map((s2) => `${g.counts[s2]} ${s2.toLowerCase().replace("_", " ")}`).join(", ");
    lines.push(`  w${i}["${waves2}: ${g.tasks} task${g.tasks === 1 ? "" : "s"}${counts ? `<br/>${counts}` : ""}"]`);
  });
  for (let i = 1; i < groups2.length; i++) lines.push(`  w${i - 1} --> w${i}`);
  for (const status of Object.keys(STATUS_STYLES)) {
    const members = groups2.flatMap((g, i) => g.worst === status ? [`w${i}`] : []);
    if (!members.length) continue;
    const cls = status.toLowerCase();
    lines.push(`  classDef ${cls} ${STATUS_STYLES[status]}`);
    lines.push(`  class ${members.join(",")} ${cls}`);
  }
  return lines.join("\n") + "\n";
}

// src/app/render-notes.ts
function progressNote(p) {
  if (!p) return "";
  const beat = new Date(Date.parse(p.beat)).toISOString().slice(11, 19);
  return `${p.stage ? `stage ${p.stage}` : "between stages"}${p.turns ? `, ${p.turns} turn${p.turns === 1 ? "" : "s"}` : ""}, last heartbeat ${beat} UTC`;
}
function resumedNote(r) {
  return `resumed: continues attempt ${r.fromAttempt} (${r.reason.replace("_", " ")})${r.stage ? `, from stage ${r.stage}` : ""}`;
}
function mixedAgents(tasks) {
  const seen = /* @__PURE__ */ new Set();
  for (const t of tasks) for (const a of t.agents ?? []) if (seen.add(a.agent).size > 1) return true;
  return false;
}
function agentNote(t) {
  const order = [];
  for (const a of t.agents ?? []) if (order.at(-1) !== a.agent) order.push(a.agent);
  return order.length ? `agent ${order.join(" \u2192 ")}` : "";
}

// src/core/outcomes.ts
function quantile(sorted, q) {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
function spread(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  return { count: sorted.length, medianMs: quantile(sorted, 0.5), p95Ms: quantile(sorted, 0.95) };
}
function timeline(events) {
  const firstStart = /* @__PURE__ */ new Map();
  const starts = [];
  const merged = /* @__PURE__ */ new Map();
  const manual = /* @__PURE__ */ new Set();
  const iterations = { review: 0, ci: 0 };
  let runStart;
  let firstReady;
  for (const e of events) {
    const at = Date.parse(e.timestamp);
    if (!Number.isFinite(at)) continue;
    const id = e.taskId;
    if (e.type === "run.started") runStart ??= at;
    else if (e.type === "task.merge_ready") firstReady = Math.min(firstReady ?? at, at);
    else if (id && e.type === "task.started") {
      if (!firstStart.has(id)) firstStart.set(id, at);
      starts.push({ taskId: id, at });
    } else if (id && e.type === "task.merged") merged.set(id, at);
    else if (id && e.type === "task.retried" && e.data.manual) manual.add(id);
    else if (id && e.type === "task.feedback" && e.data.source !== "ci") manual.add(id);
    else if (e.type === "task.revising") {
      const sources = e.data.sources ?? [];
      if (sources.length && sources.every((s2) => s2 === "ci")) iterations.ci++;
      else iterations.review++;
    }
  }
  return { firstStart, starts, merged, manual, iterations, runStart, firstReady };
}
function outcomeFigures(journal, events, config2) {
  const tl = timeline(events);
  const manualMerge = config2.merge_policy === "manual";
  const perTask = journal.tasks.map((t) => ({
    id: t.id,
    status: t.status,
    attempts: t.attempts,
    retries: Math.max(0, t.attempts - 1),
    spentUsd: t.spentUsd ?? null,
    agentMs: t.agentMs ?? null,
    person: manualMerge || tl.manual.has(t.id) || t.approved === true || t.attempt?.revision.approvedHead !== void 0
  }));
  const merged = perTask.filter((t) => t.status === "MERGED");
  const spent = journal.tasks.filter((t) => t.spentUsd !== void 0);
  const spendUsd = spent.length ? round2(spent.reduce((n2, t) => n2 + t.spentUsd, 0)) : null;
  const tokenTasks = journal.tasks.filter((t) => t.spentTokens !== void 0);
  const gaps = [];
  for (const [id, at] of tl.merged) {
    const dependents = new Set(journal.plan.nodes.filter((n2) => n2.dependencies.includes(id)).map((n2) => n2.id));
    const next = tl.starts.find((s2) => dependents.has(s2.taskId) && s2.at >= at);
    if (next) gaps.push(next.at - at);
  }
  const agentMs = journal.tasks.reduce((n2, t) => n2 + (t.agentMs ?? 0), 0);
  let waitingMs = 0;
  for (const t of journal.tasks) {
    const from = tl.firstStart.get(t.id);
    const to = tl.merged.get(t.id);
    if (from !== void 0 && to !== void 0) waitingMs += Math.max(0, to - from - (t.agentMs ?? 0));
  }
  return {
    version: 1,
    runId: journal.runId,
    planId: journal.planId,
    status: journal.status,
    tasks: journal.tasks.length,
    tasksMerged: merged.length,
    mergedWithoutPerson: merged.filter((t) => !t.person).length,
    retries: perTask.reduce((n2, t) => n2 + t.retries, 0),
    reviewIterations: tl.iterations.review,
    ciIterations: tl.iterations.ci,
    spendUsd,
    spendPerMergedTaskUsd: spendUsd !== null && merged.length ? round2(spendUsd / merged.length) : null,
    tokens: tokenTasks.length ? tokenTasks.reduce((n2, t) => n2 + t.spentTokens, 0) : null,
    timeToFirstPrMs: tl.runStart !== void 0 && tl.firstReady !== void 0 ? Math.max(0, tl.firstReady - tl.runStart) : null,
    mergeToNextDispatch: spread(gaps),
    agentMs,
    waitingMs,
    perTask
  };
}
var round2 = (usd2) => Math.round(usd2 * 1e6) / 1e6;
var secs = (ms) => ms === null ? "\u2014" : ms < 6e4 ? `${(ms / 1e3).toFixed(1)} s` : `${(ms / 6e4).toFixed(1)} min`;
var usd = (n2) => n2 === null ? "not reported" : `$${n2.toFixed(2)}`;
function renderOutcomeTable(f) {
  const share = f.agentMs + f.waitingMs > 0 ? ` (${Math.round(100 * f.agentMs / (f.agentMs + f.waitingMs))} % agent)` : "";
  return [
    "| Outcome | |",
    "|---|---:|",
    `| Tasks merged | ${f.tasksMerged} of ${f.tasks} |`,
    `| Merged with no person involved | ${f.mergedWithoutPerson} |`,
    `| Retries | ${f.retries} |`,
    `| Review iterations \xB7 CI iterations | ${f.reviewIterations} \xB7 ${f.ciIterations} |`,
    `| Spend | ${usd(f.spendUsd)} |`,
    `| Spend per merged task | ${usd(f.spendPerMergedTaskUsd)} |`,
    `| Time to first PR ready | ${secs(f.timeToFirstPrMs)} |`,
    `| Merge \u2192 next dispatch, median \xB7 p95 (${f.mergeToNextDispatch.count}) | ${secs(f.mergeToNextDispatch.medianMs)} \xB7 ${secs(f.mergeToNextDispatch.p95Ms)} |`,
    `| Agent time \xB7 waiting time | ${secs(f.agentMs)} \xB7 ${secs(f.waitingMs)}${share} |`
  ];
}

// src/app/render.ts
var BODY_LIMIT = 65536;
var trackerMarker = (runId) => `<!-- forge:run ${runId} -->`;
var crMarker = (runId, crId) => `<!-- forge:cr ${runId} ${crId} -->`;
function parseMarker(body) {
  const eol = body.indexOf("\n");
  const first = (eol === -1 ? body : body.slice(0, eol)).replace(/\r$/, "");
  const cr = /^<!-- forge:cr (\S+) (\S+) -->$/.exec(first);
  if (cr) return { runId: cr[1], crId: cr[2] };
  const run2 = /^<!-- forge:run (\S+) -->$/.exec(first);
  return run2 ? { runId: run2[1] } : void 0;
}
function isAppAuthor(user, slug) {
  return !!slug && user?.type === "Bot" && user.login === `${slug}[bot]`;
}
var STATUS_ICON = {
  PENDING: "\u26AA",
  RUNNING: "\u{1F535}",
  DONE: "\u{1F7E2}",
  MERGE_READY: "\u{1F7E9}",
  MERGED: "\u2705",
  FAILED: "\u{1F534}",
  STALE: "\u{1F7E1}"
};
function cut3(body, note2) {
  if (body.length <= BODY_LIMIT) return body;
  const tail = `

\u2026${note2}`;
  return body.slice(0, BODY_LIMIT - tail.length) + tail;
}
function oneLine(text) {
  return asData(text).split("\n").map((line) => line.trim()).filter(Boolean).join(" ");
}
function eventLine(e) {
  const data = Object.entries(e.data).filter(([, v]) => v !== void 0 && (typeof v !== "object" || Array.isArray(v) && v.length)).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : String(v)}`).join(" ");
  return `| ${e.seq} | ${e.timestamp.slice(11, 19)} | \`${e.type}\` | ${e.taskId ?? ""} | ${asData(data).replaceAll("|", "\\|").slice(0, 160)} |`;
}
function renderTracker(journal, events, facts, repo, now, config2) {
  const statuses = new Map(journal.tasks.map((t) => [t.id, t.status]));
  const counts = /* @__PURE__ */ new Map();
  for (const t of journal.tasks) counts.set(t.status, (counts.get(t.status) ?? 0) + 1);
  const paused = pauseReasons(journal.pause, now)[0];
  const lines = [
    trackerMarker(journal.runId),
    `## Forge run \`${journal.runId}\` \u2014 plan \`${journal.planId}\``,
    "",
    `**Status:** ${journal.status}${paused && journal.status === "running" ? ` (paused${pauseText(journal, paused)})` : ""} \xB7 ${journal.merged}/${journal.tasks.length} merged \xB7 ` + [...counts].map(([s2, n2]) => `${STATUS_ICON[s2] ?? ""} ${s2} ${n2}`).join(" \xB7 "),
    `**Plan:** \`${journal.planCommit.slice(0, 7)}\`${journal.plan.overlays.length ? ` + ${journal.plan.overlays.join(", ")}` : ""} \xB7 **Integration branch:** \`${journal.integrationBranch}\`` + // Forge never merges the final PR: it waits for a person, whatever the base branch's rules ask of them.
    (facts.finalPr !== void 0 ? ` \xB7 **Final PR:** #${facts.finalPr}, waiting for a person to review and merge it` : ""),
    ...spendLine(journal, config2),
    ""
  ];
  if (facts.stateBranchWarning)
    lines.push(
      "> [!WARNING]",
      `> **The run's state branch is not protected:** ${facts.stateBranchWarning}. Anyone who can push to this repository can rewrite the run's journal; Forge refuses a journal it did not write, and the run then stands still.`,
      '> Add the ruleset README.md describes ("Protect the state branches") so that only the Forge App can create or update `forge/*/_state`.',
      ""
    );
  lines.push(...trackerChart(journal, statuses), "");
  const head = lines.join("\n");
  const tail = [];
  if (journal.followups.length) {
    tail.push("", "**Follow-ups**", "");
    const shown2 = journal.followups.map(
      (f) => `- \`${f.id}\` from \`${f.sourceTaskId}\` \u2014 ${f.status}${f.prNumber ? ` (#${f.prNumber})` : ""}: ${oneLine(f.text)}`
    );
    tail.push(...fitLines(shown2, LIST_BUDGET, (n2) => `- \u2026and ${n2} more follow-up${n2 === 1 ? "" : "s"}`));
  }
  if (journal.changeRequests.length) {
    tail.push("", "**Change Requests**", "");
    const shown2 = journal.changeRequests.map(
      (c) => `- \`${c.id}\` from \`${c.emittedBy}\` \u2014 ${c.status}${c.issueNumber ? ` (#${c.issueNumber})` : ""}: ${inlineData(c.title)}`
    );
    tail.push(...fitLines(shown2, LIST_BUDGET, (n2) => `- \u2026and ${n2} more Change Request${n2 === 1 ? "" : "s"}`));
  }
  const latest = events.slice(-20);
  if (latest.length) {
    tail.push(
      "",
      "<details><summary>Latest events</summary>",
      "",
      "| # | time | event | task | data |",
      "|---:|---|---|---|---|",
      ...latest.map(eventLine),
      "",
      "</details>"
    );
  }
  tail.push(
    "",
    "Commands: `/forge status` \xB7 `/forge pause` \xB7 `/forge resume` \xB7 `/forge cancel` \xB7 `/forge retry <task> [message]` \xB7 `/forge retry failed` \xB7 `/forge help`"
  );
  const tailText = tail.join("\n");
  const table = taskTable(journal, facts, repo, BODY_LIMIT - BODY_MARGIN - head.length - tailText.length - 2);
  return cut3([head, table, tailText].join("\n"), " (cut: the tracker is too long for one issue)");
}
function pauseText(journal, reason) {
  const p = journal.pause;
  switch (reason) {
    case "change_requests":
      return `: waiting for ${p.changeRequests.join(", ")}`;
    case "manual":
      return ": /forge resume to continue";
    case "budget":
      return ": the run's budget is spent \u2014 `/forge budget +<dollars>` raises it";
    case "usage_limit":
      return `: model usage limit until ${p.usageLimitUntil}`;
  }
}
function spendLine(journal, config2) {
  const spent = runSpent(journal);
  const cap2 = config2?.budgets.run_usd;
  if (cap2 === void 0 && !journal.tasks.some((t) => t.spentUsd !== void 0)) return [];
  const total = cap2 !== void 0 ? cap2 + (journal.budgetExtraUsd ?? 0) : void 0;
  return [`**Spend:** $${spent.toFixed(2)}${total !== void 0 ? ` of $${total.toFixed(2)} (run budget)` : ""}`];
}
var BODY_MARGIN = 1024;
var LIST_BUDGET = 8e3;
function fitLines(lines, budget, more) {
  let used = 0;
  for (let i = 0; i < lines.length; i++) {
    used += lines[i].length + 1;
    if (used > budget) return [...lines.slice(0, i), more(lines.length - i)];
  }
  return [...lines];
}
var shapes = /* @__PURE__ */ new WeakMap();
function planShape(nodes) {
  let shape = shapes.get(nodes);
  if (!shape) shapes.set(nodes, shape = { edges: mermaidEdgeCount(nodes) });
  return shape;
}
function trackerChart(journal, statuses) {
  const nodes = journal.plan.nodes;
  const shape = planShape(nodes);
  const edges = shape.edges;
  if (fitsMermaid("", edges)) {
    const full = renderMermaid(nodes, statuses, { titles: false });
    if (fitsMermaid(full, edges)) return ["```mermaid", full, "```"];
  }
  shape.wave ??= waves(nodes);
  const groups2 = summarizeByWave(nodes, statuses, SUMMARY_MAX_GROUPS, shape.wave);
  return [
    "```mermaid",
    renderWaveSummary(groups2),
    "```",
    "",
    `_The DAG has ${nodes.length.toLocaleString("en-US")} tasks and ${edges.toLocaleString("en-US")} dependencies, more than GitHub can draw: it is summarised by wave (a task's wave is 1 + the longest chain of dependencies before it; each box is coloured by its worst status). The full graph: \`npx forge graph ${planDir(journal.planId)}\` at the plan's commit, Forge's package installed._`
  ];
}
var TABLE_FIRST = ["FAILED", "STALE", "RUNNING", "MERGE_READY", "DONE", "PENDING", "MERGED"];
function taskTable(journal, facts, repo, budget) {
  const header = ["| Task | Type | Status | Attempt | PR | Check | Notes |", "|---|---|---|---:|---|---|---|"];
  const rows = [];
  const mixed = mixedAgents(journal.tasks);
  const row = (i) => rows[i] ??= taskRow(journal, facts, repo, i, mixed);
  let length = header.join("\n").length;
  for (let i = 0; i < journal.tasks.length && length <= budget; i++) length += row(i).length + 1;
  if (length <= budget) return [...header, ...rows].join("\n");
  const byStatus = new Map(TABLE_FIRST.map((s2) => [s2, []]));
  journal.tasks.forEach((t, i) => byStatus.get(t.status).push(i));
  const order = [...byStatus.values()].flat();
  let used = header.join("\n").length + 400;
  const shown2 = [];
  for (const i of order) {
    used += row(i).length + 1;
    if (used > budget) break;
    shown2.push(i);
  }
  const left = /* @__PURE__ */ new Map();
  for (const i of order.slice(shown2.length)) left.set(journal.tasks[i].status, (left.get(journal.tasks[i].status) ?? 0) + 1);
  const rest = TABLE_FIRST.filter((s2) => left.get(s2)).map((s2) => `${left.get(s2).toLocaleString("en-US")} ${s2}`).join(", ");
  const total = journal.tasks.length.toLocaleString("en-US");
  return [
    `_${shown2.length.toLocaleString("en-US")} of ${total} tasks shown \u2014 failed, stale and running first, merged last; not shown: ${rest}._`,
    "",
    ...header,
    ...shown2.map(row)
  ].join("\n");
}
var rowCache = /* @__PURE__ */ new WeakMap();
function taskRow(journal, facts, repo, i, mixed) {
  const t = journal.tasks[i];
  const node = journal.plan.nodes[i];
  const check = facts.checkRuns[`${t.id}:${t.attempts}`];
  const where2 = repoPage(repo, "");
  const hit = rowCache.get(t);
  if (hit && hit.node === node && hit.check === check && hit.repo === where2 && hit.mixed === mixed) return hit.row;
  const row = renderRow(t, node, check, repo, mixed);
  rowCache.set(t, { node, check, repo: where2, mixed, row });
  return row;
}
var JOB_PAGE = /^https?:\/\/[^\s()<>|[\]]{1,300}$/;
function renderRow(t, node, check, repo, mixed) {
  const a = t.attempt;
  const paths = a?.revision.protectedPaths ?? [];
  const notes = [
    mixed ? agentNote(t) : "",
    t.status === "RUNNING" ? progressNote(a?.revision.progress) : "",
    a?.resumed ? resumedNote(a.resumed) : "",
    a?.revision.waiting && t.status === "MERGE_READY" ? `waiting for a person: ${a.revision.waiting}` : "",
    a?.revision.iteration && t.status === "RUNNING" ? `revision ${a.revision.iteration}` : "",
    a?.hold ? `held: ${a.hold}` : "",
    t.status === "MERGE_READY" && heldForProtectedPaths(t) ? `waiting for /forge approve: changes ${paths.slice(0, 3).join(", ")}${paths.length > 3 ? ", \u2026" : ""}` : "",
    t.lastError && t.status !== "MERGED" ? t.lastError : "",
    t.spentUsd !== void 0 ? `spent $${t.spentUsd.toFixed(2)}` : "",
    t.confidence !== void 0 && t.confidence < 0.6 ? `low confidence ${t.confidence}` : ""
  ].filter(Boolean).join("; ");
  const shown2 = asData(notes).replaceAll("|", "\\|").slice(0, 120);
  const run2 = a?.revision.workflowRunId;
  const page = t.lastErrorLog && JOB_PAGE.test(t.lastErrorLog) ? t.lastErrorLog : (t.status === "FAILED" || t.status === "STALE") && run2 !== void 0 ? repoPage(repo, `actions/runs/${run2}`) : void 0;
  const log = page && t.status !== "MERGED" ? ` [job log](${page})` : "";
  return `| \`${t.id}\`${node.title ? ` ${asData(node.title).replaceAll("|", "\\|").slice(0, 60)}` : ""} | ${node.agentType} | ${STATUS_ICON[t.status]} ${t.status} | ${t.attempts} | ${a?.prNumber !== void 0 ? `#${a.prNumber}` : ""} | ${check !== void 0 ? `[check](${repoPage(repo, `runs/${check}`)})` : ""} | ${shown2}${log} |`;
}
var TITLE_LIMIT = 256;
function changeRequestIssueTitle(title) {
  const line = asData(title).replace(/\s+/g, " ").trim() || "Change Request";
  return line.length > TITLE_LIMIT ? `${line.slice(0, TITLE_LIMIT - 1)}\u2026` : line;
}
function suggestedChanges(document) {
  if (document === void 0) return void 0;
  const fm = readFrontMatter("change-request.md", document.slice(0, CHANGE_REQUEST_LIMITS.bytes * 2));
  const parsed = changeRequestFrontmatterSchema.safeParse(fm.data);
  return parsed.success && parsed.data.suggested_changes.trim() ? parsed.data.suggested_changes : void 0;
}
function renderChangeRequestIssue(journal, crId, document, config2) {
  const cr = journal.changeRequests.find((c) => c.id === crId);
  const emitter = cr ? journal.plan.nodes.find((n2) => n2.id === cr.emittedBy) : void 0;
  const changes = suggestedChanges(document);
  const front = cr ? (0, import_yaml3.stringify)({
    id: cr.id,
    run_id: journal.runId,
    title: asData(cr.title),
    emitted_by: cr.emittedBy,
    status: cr.status,
    reason: asData(cr.reason),
    affected_tasks: cr.affectedTasks,
    ...cr.suggestedAction ? { suggested_action: cr.suggestedAction } : {},
    ...cr.priority ? { priority: cr.priority } : {},
    ...changes !== void 0 ? { suggested_changes: asData(changes) } : {}
  }) : `id: ${crId}
`;
  const fence = fenceFor(front);
  const next = config2.cr_mode === "replan" ? "A Captain agent is writing an overlay for this request; its PR will link here. The run is paused until the overlay is merged." : "The run is paused. Comment `/forge approve` to have a Captain agent write an overlay, or `/forge reject` to continue without changing the plan.";
  const code2 = (id) => `\`${inlineData(id, 100)}\``;
  const who = cr ? [
    `**Raised by** ${code2(cr.emittedBy)}${emitter ? ` (${emitter.kind === "refinery" ? "refinery" : `type ${emitter.agentType}`})` : ""}, attempt ${cr.attempt}`,
    ...cr.priority ? [`**Priority** ${cr.priority}`] : [],
    ...cr.suggestedAction ? [`**Suggested action** ${cr.suggestedAction}`] : []
  ].join(" \xB7 ") : `Change Request ${code2(crId)}`;
  const affected = cr?.affectedTasks.length ? [`**Affected tasks:** ${cr.affectedTasks.slice(0, 50).map(code2).join(", ")}`] : [];
  const body = document !== void 0 ? readFrontMatter("change-request.md", document.slice(0, CHANGE_REQUEST_LIMITS.bytes * 2)).body.trim() : "";
  return cut3(
    [
      crMarker(journal.runId, crId),
      who,
      ...affected,
      "",
      next,
      "",
      `${fence}yaml`,
      front.trimEnd(),
      fence,
      ...body ? ["", "---", "", asData(body)] : []
    ].join("\n"),
    " (cut)"
  );
}
var FINAL_TABLE_ROWS = 500;
function finalTaskTable(journal) {
  const row = (t) => `| \`${t.id}\` | ${t.attempts} | ${t.spentUsd !== void 0 ? `$${t.spentUsd.toFixed(2)}` : ""} | ${t.attempt?.prNumber !== void 0 ? `#${t.attempt.prNumber}` : ""} |`;
  const header = ["| Task | Attempts | Spend | PR |", "|---|---:|---:|---|"];
  if (journal.tasks.length <= FINAL_TABLE_ROWS) return [...header, ...journal.tasks.map(row)];
  const retried = journal.tasks.filter((t) => t.attempts > 1).sort((a, b) => b.attempts - a.attempts);
  const shown2 = retried.slice(0, FINAL_TABLE_ROWS);
  return [
    `${journal.tasks.length - retried.length} of ${journal.tasks.length} tasks merged at their first attempt; ${retried.length} took more${retried.length > shown2.length ? ` (the ${shown2.length} with the most attempts below)` : ""}.`,
    ...shown2.length ? ["", ...header, ...shown2.map(row)] : []
  ];
}
function renderFinalPr(journal, facts, figures, baseMethod) {
  const lines = [
    trackerMarker(journal.runId),
    `Forge run \`${journal.runId}\` of plan \`${journal.planId}\` is complete: ${journal.tasks.length} tasks merged into \`${journal.integrationBranch}\`.`,
    "",
    facts.trackerIssue !== void 0 ? `Run tracker: #${facts.trackerIssue}` : "",
    "",
    ...baseMethod ? [finalMergeNote(journal.baseBranch, baseMethod), ""] : [],
    ...figures ? [...renderOutcomeTable(figures), ""] : [],
    ...finalTaskTable(journal)
  ];
  if (journal.followups.length)
    lines.push("", "Follow-ups:", ...journal.followups.map((f) => `- \`${f.id}\` (${f.status}): ${oneLine(f.text)}`));
  return cut3(lines.join("\n"), " (cut)");
}
function finalMergeNote(base, method) {
  const how = method === "rebase" ? "**Rebase and merge** (each task's commit lands, as on the integration branch) or **Squash and merge** (the run lands as one commit)" : "**Squash and merge** (the run lands as one commit)";
  return `\`${base}\` must keep a linear history: GitHub refuses this pull request as a merge commit. Merge it with ${how}.`;
}
function journalRefusedComment(runId, reason, lastGood) {
  const branch = stateBranch(runId);
  return [
    `**Forge froze this run.** The journal on \`${branch}\` was refused: ${reason}.`,
    "",
    "Only the Forge App writes that branch; nothing of a journal it did not write for this repository and run, or of one older than the last it recorded, is carried out, so the run stands still until the branch holds Forge's newest journal again.",
    "",
    lastGood ? `To go on, a person with write access puts the branch back at the last journal Forge wrote, \`${lastGood.slice(0, 12)}\`:

\`\`\`sh
git push --force origin ${lastGood}:refs/heads/${branch}
\`\`\`

Forge picks the run up at its next pass.` : "Forge found no journal of its own in the branch's recent history: start the plan again with `/forge run <planId>` once the branch is deleted.",
    "",
    'To keep this from happening, add the ruleset README.md describes ("Protect the state branches"), so that only the Forge App can create or update `forge/*/_state`.'
  ].join("\n");
}

// src/core/dispatch-inputs.ts
var DISPATCH_LIMITS = { inputs: 25, characters: 65535 };
function dispatchInputsLength(inputs) {
  return JSON.stringify(inputs).length;
}
var dispatchContextPath = (taskId, attempt, iteration) => iteration ? `dispatch/${taskId}/${attempt}-${iteration}.json` : `dispatch/${taskId}/${attempt}.json`;
var INLINE_ALWAYS = /* @__PURE__ */ new Set(["agent"]);
function splitDispatchContext(base, context, path2, limit = DISPATCH_LIMITS.characters) {
  const length = (c) => dispatchInputsLength({ ...base, context: JSON.stringify(c) });
  if (length(context) <= limit) return { inline: context };
  const file = { path: path2, sha: "0".repeat(40) };
  const inline = { ...context };
  const spilled = {};
  const size = (key) => JSON.stringify(context[key]).length;
  for (const key of Object.keys(context).filter((k) => !INLINE_ALWAYS.has(k)).sort((a, b) => size(b) - size(a))) {
    if (length({ ...inline, file }) <= limit) break;
    spilled[key] = inline[key];
    delete inline[key];
  }
  return { inline, spilled };
}
function cutDispatchContext(base, context, field, limit = DISPATCH_LIMITS.characters) {
  const text = context[field];
  if (typeof text !== "string") return context;
  const length = (t) => dispatchInputsLength({ ...base, context: JSON.stringify({ ...context, [field]: t }) });
  if (length(text) <= limit) return context;
  const note2 = (kept) => `

[\u2026 cut at ${kept} of ${text.length} characters to fit GitHub's limit on dispatch inputs]`;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (length(text.slice(0, mid) + note2(mid)) <= limit) lo = mid;
    else hi = mid - 1;
  }
  return { ...context, [field]: text.slice(0, lo) + note2(lo) };
}

// src/app/telemetry.ts
var exporters = /* @__PURE__ */ new Map();
function appTelemetry(config2) {
  const endpoint = config2.telemetry.otlp_endpoint;
  if (!endpoint || process.env.FORGE_TELEMETRY === "off") return void 0;
  const key = `${endpoint} ${config2.telemetry.service_name}`;
  let t = exporters.get(key);
  if (!t) {
    t = new Telemetry({ endpoint, serviceName: config2.telemetry.service_name, attributes: { "forge.component": "app" } });
    exporters.set(key, t);
  }
  return t;
}
function traceDispatch(t, runId, taskId, attempt, at) {
  const span = t.startSpan({
    name: "forge.dispatch",
    startTime: at,
    attributes: { "forge.run_id": runId, "forge.task_id": taskId, "forge.attempt": attempt },
    parent: { traceId: runTraceId(runId), spanId: taskSpanId(runId, taskId) },
    ids: { spanId: dispatchSpanId(runId, taskId, attempt) }
  });
  span.end(at);
  t.meter.createCounter("forge.dispatches", { description: "Agent jobs dispatched" }).add(1);
}
function traceRun(t, journal, events, end) {
  const { runId } = journal;
  const traceId = runTraceId(runId);
  const start = Date.parse(journal.createdAt);
  const run2 = t.startSpan({
    name: "forge.run",
    startTime: start,
    attributes: { "forge.run_id": runId, "forge.plan_id": journal.planId, "forge.tasks": journal.tasks.length },
    ids: { traceId, spanId: runSpanId(runId) }
  });
  const first = /* @__PURE__ */ new Map();
  const merged = /* @__PURE__ */ new Map();
  for (const e of events) {
    if (!e.taskId) continue;
    if (e.type === "task.started" && !first.has(e.taskId)) first.set(e.taskId, Date.parse(e.timestamp));
    if (e.type === "task.merged") merged.set(e.taskId, Date.parse(e.timestamp));
  }
  for (const task2 of journal.tasks) {
    const span = t.startSpan({
      name: "forge.task",
      startTime: first.get(task2.id) ?? start,
      attributes: { "forge.run_id": runId, "forge.task_id": task2.id, "forge.status": task2.status, "forge.attempts": task2.attempts },
      parent: { traceId, spanId: runSpanId(runId) },
      ids: { spanId: taskSpanId(runId, task2.id) }
    });
    span.end(merged.get(task2.id) ?? end);
  }
  run2.end(end);
  t.meter.createCounter("forge.runs", { description: "Runs completed" }).add(1);
}

// src/app/effects/context.ts
var done = (result = {}, learned) => ({
  kind: "done",
  result,
  ...learned ? { learned } : {}
});
function task(ctx, taskId) {
  return ctx.journal.tasks.find((t) => t.id === taskId);
}
async function ownRuns(ctx, branch) {
  const runs = await ctx.port.listWorkflowRuns(ctx.config.workflow, { branch });
  if (runs.length === 0) return runs;
  const repositoryId = await ctx.port.repositoryId();
  return runs.filter((r) => r.event === "workflow_dispatch" && r.headRepositoryId === repositoryId);
}
async function dispatchedBefore(ctx, branch) {
  const runs = await ownRuns(ctx, branch);
  return runs.sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))[0];
}

// src/app/effects/branches-and-dispatch.ts
async function prepareBranch2(effect, ctx) {
  const { port } = ctx;
  const from = await ctx.prefetchedHead ?? await port.branchHead(effect.from);
  if (!from) return { kind: "failed", error: `branch ${effect.from} does not exist` };
  await port.createBranch(effect.branch, from);
  const upstreams = await Promise.all(
    effect.merge.map(async (upstream) => {
      const u = ctx.journal.tasks.find((t) => t.attempt?.branch === upstream && t.status === "MERGE_READY");
      return { branch: upstream, head: (u && prHead(u)) ?? await port.branchHead(upstream) ?? upstream };
    })
  );
  const key = `${effect.taskId}:${effect.attempt}`;
  const conflicts = [];
  if (upstreams.length > 0 && await wantsLinearHistory(port, effect.branch)) return squashed(ctx, key, upstreams);
  for (const [n2, upstream] of upstreams.entries()) {
    const merged = await port.mergeBranch(effect.branch, upstream.head, `forge: merge ${upstream.branch} into ${effect.branch}`).catch((e) => {
      if (e instanceof GitHubError && refusesMergeCommits(e.message)) return void 0;
      throw e;
    });
    if (!merged) {
      const left = [...upstreams.filter((u) => conflicts.includes(u.branch)), ...upstreams.slice(n2)];
      return squashed(ctx, key, left);
    }
    if (merged.kind === "conflict") conflicts.push(upstream.branch);
  }
  if (conflicts.length) ctx.conflicts.set(key, conflicts);
  return done({ conflicts });
}
async function wantsLinearHistory(port, branch) {
  try {
    const rules = await port.branchRules(branch);
    return Array.isArray(rules) && rules.some((r) => r.type === "required_linear_history");
  } catch {
    return false;
  }
}
function squashed(ctx, key, upstreams) {
  const squash = upstreams.filter((u) => /^[0-9a-f]{40}$/.test(u.head));
  ctx.squash?.set(key, squash);
  return done({ conflicts: [], squash });
}
async function dispatchAgent2(effect, ctx) {
  if (ctx.replay) {
    const run2 = await dispatchedBefore(ctx, effect.branch);
    if (run2 && (effect.afterRunId === void 0 || run2.id > effect.afterRunId)) return done({ workflowRunId: run2.id });
  }
  const t = task(ctx, effect.taskId);
  const conflicts = ctx.conflicts.get(`${effect.taskId}:${effect.attempt}`) ?? attemptNumbered(t, effect.attempt)?.conflicts;
  const squash = ctx.squash?.get(`${effect.taskId}:${effect.attempt}`) ?? attemptNumbered(t, effect.attempt)?.squash;
  const context = {
    ...effect.context ?? {},
    ...conflicts?.length ? { conflicts } : {},
    ...squash?.length ? { squash } : {},
    ...effect.iteration !== void 0 ? { iteration: effect.iteration } : {}
  };
  const { workflowRunId } = await dispatchJob(ctx, effect.branch, effect.taskId, effect.attempt, context, effect.iteration);
  return done(workflowRunId !== void 0 ? { workflowRunId } : {});
}
async function dispatchJob(ctx, branch, taskId, attempt, context, iteration) {
  const base = {
    [DISPATCH_INPUTS.runId]: ctx.journal.runId,
    [DISPATCH_INPUTS.taskId]: taskId,
    [DISPATCH_INPUTS.attempt]: String(attempt)
  };
  const inputs = { ...base };
  const telemetry = appTelemetry(ctx.config);
  if (telemetry) {
    context = { ...context, traceparent: dispatchTraceparent(ctx.journal.runId, taskId, attempt) };
    traceDispatch(telemetry, ctx.journal.runId, taskId, attempt, ctx.now);
  }
  if (Object.keys(context).length) {
    const path2 = dispatchContextPath(taskId, attempt, iteration);
    const { inline, spilled } = splitDispatchContext(base, context, path2);
    const file = spilled ? { path: path2, sha: await writeContextFile(ctx, path2, JSON.stringify(spilled)) } : void 0;
    inputs[DISPATCH_INPUTS.context] = JSON.stringify(file ? { ...inline, file } : inline);
  }
  return ctx.port.dispatchWorkflow(ctx.config.workflow, branch, inputs);
}
async function writeContextFile(ctx, path2, text) {
  const branch = stateBranch(ctx.journal.runId);
  const message = `forge: the dispatch context of ${path2}`;
  try {
    return (await ctx.port.writeFile(branch, path2, text, message)).blobSha;
  } catch (e) {
    if (!(e instanceof ConflictError)) throw e;
    const existing = await ctx.port.readFile(path2, branch);
    if (existing?.content === text) return existing.blobSha;
    if (existing) return (await ctx.port.writeFile(branch, path2, text, message, existing.blobSha)).blobSha;
    throw e;
  }
}
async function dispatchCaptain2(effect, ctx) {
  const { port } = ctx;
  const base = ctx.journal.baseBranch;
  const branch = captainBranch(ctx.journal.runId, effect.crId);
  if (ctx.replay) {
    const run2 = await dispatchedBefore(ctx, branch);
    if (run2) return done({ workflowRunId: run2.id });
  }
  if (!await port.branchHead(branch)) {
    const head = await port.branchHead(base);
    if (!head) return { kind: "failed", error: `base branch ${base} does not exist` };
    await port.createBranch(branch, head);
  }
  const cr = ctx.journal.changeRequests.find((c) => c.id === effect.crId);
  const { workflowRunId } = await dispatchJob(ctx, branch, captainId(effect.crId), 1, {
    changeRequest: effect.crId,
    planDir: planDir(ctx.journal.planId),
    reason: cr?.reason ?? "",
    ...cr?.issueNumber !== void 0 ? { issue: cr.issueNumber } : {}
  });
  return done(workflowRunId !== void 0 ? { workflowRunId } : {});
}
async function spawnFollowup2(effect, ctx) {
  const { port } = ctx;
  if (ctx.replay) {
    const run2 = await dispatchedBefore(ctx, effect.branch);
    if (run2) return done({ workflowRunId: run2.id });
  }
  if (!await port.branchHead(effect.branch)) {
    const from = await port.branchHead(ctx.journal.integrationBranch);
    if (!from) return { kind: "failed", error: `branch ${ctx.journal.integrationBranch} does not exist` };
    await port.createBranch(effect.branch, from);
  }
  const { workflowRunId } = await dispatchJob(ctx, effect.branch, effect.followupId, 1, {
    followup: effect.text,
    sourceTaskId: effect.sourceTaskId
  });
  return done(workflowRunId !== void 0 ? { workflowRunId } : {});
}

// src/app/check-summary.ts
function checkSummary(ctx, t, effect, held) {
  const lines = [`**Task** \`${effect.taskId}\` \xB7 attempt ${effect.attempt} \xB7 run \`${ctx.journal.runId}\``, ""];
  const a = attemptNumbered(t, effect.attempt);
  if (t && a) {
    if (t.confidence !== void 0) lines.push(`Confidence: ${t.confidence}`);
    if (t.filesChanged?.length) lines.push(`Files changed: ${t.filesChanged.map((f) => `\`${f}\``).join(", ")}`);
    if (t.lastError && (effect.status === "FAILED" || effect.status === "STALE")) lines.push(`Error: ${t.lastError}`);
    if (t.spentUsd !== void 0)
      lines.push(`Spend: $${t.spentUsd.toFixed(2)} for this task \xB7 $${runSpent(ctx.journal).toFixed(2)} for the run`);
    if (a.recordSha)
      lines.push(
        `Execution report: [execution-report.md](${repoPage(ctx.repo, `blob/${a.recordSha}/${executionReportPath(ctx.journal.runId, t.id, t.attempts)}`)})`
      );
    if (effect.status === "MERGE_READY" && held)
      lines.push(
        "",
        "This pull request changes protected paths; it merges once a person with write access comments `/forge approve` on it:",
        ...(a.revision.protectedPaths ?? []).slice(0, 50).map((p) => `- \`${p}\``)
      );
    if (a.hold === "exhausted")
      lines.push("", `Retries exhausted after ${t.attempts} attempts. Comment \`/forge retry ${t.id}\` to try again.`);
  }
  if (ctx.facts.trackerIssue !== void 0) lines.push("", `Run tracker: #${ctx.facts.trackerIssue}`);
  return lines.join("\n");
}

// src/app/effects/check-runs.ts
var CONCLUSION = {
  MERGE_READY: "success",
  MERGED: "success",
  FAILED: "failure",
  STALE: "timed_out"
};
async function upsertCheckRun(effect, ctx) {
  const t = task(ctx, effect.taskId);
  const a = attemptNumbered(t, effect.attempt);
  const held = effect.status === "MERGE_READY" && !!a && heldForProtectedPaths(t);
  const conclusion = held ? "action_required" : CONCLUSION[effect.status];
  if (!conclusion) return done();
  const key = `${effect.taskId}:${effect.attempt}`;
  const existing = ctx.facts.checkRuns[key];
  const fields = {
    status: "completed",
    conclusion,
    title: held ? `${effect.taskId}: waiting for /forge approve (protected paths changed)` : asData(effect.summary),
    summary: asData(checkSummary({ journal: ctx.journal, facts: ctx.facts, repo: ctx.port }, t, effect, held)),
    externalId: `${ctx.journal.runId}/${effect.taskId}/${effect.attempt}`,
    // "Details": the attempt's job on the GitHub the App talks to, where its log is (else GitHub shows the App's page).
    ...a?.revision.workflowRunId !== void 0 ? { detailsUrl: repoPage(ctx.port, `actions/runs/${a.revision.workflowRunId}`) } : {},
    ...effect.status === "FAILED" || effect.status === "STALE" ? { actions: [{ label: "Retry", description: `Retry ${effect.taskId} with a new attempt`, identifier: "retry" }] } : {}
  };
  if (existing !== void 0) {
    if (effect.status === "MERGED") return done({ checkRunId: existing });
    await ctx.port.updateCheckRun(existing, fields);
    return done({ checkRunId: existing });
  }
  const branch = a ? a.branch : t ? branchName(ctx.config, ctx.journal.runId, effect.taskId, effect.attempt) : void 0;
  const headSha = (a ? prHead(t) : void 0) ?? (branch ? await ctx.port.branchHead(branch) : null);
  if (!headSha) return done();
  const found = ctx.replay ? await ctx.port.findCheckRun(headSha, checkRunName(effect.taskId), fields.externalId) : null;
  if (found !== null) {
    if (effect.status !== "MERGED") await ctx.port.updateCheckRun(found, fields);
    return done({ checkRunId: found }, { checkRuns: { [key]: found } });
  }
  const id = await ctx.port.createCheckRun({ name: checkRunName(effect.taskId), headSha, ...fields });
  return done({ checkRunId: id }, { checkRuns: { [key]: id } });
}

// src/app/effects/cleanup.ts
async function cleanupBranches2(effect, ctx) {
  for (const b of effect.branches) await ctx.port.deleteBranch(b);
  return done();
}
async function cancelAgent2(effect, ctx) {
  const { port } = ctx;
  const a = attemptNumbered(task(ctx, effect.taskId), effect.attempt);
  const id = effect.workflowRunId ?? a?.revision.workflowRunId;
  if (id !== void 0) await port.cancelWorkflowRun(id);
  else {
    const branch = a?.branch ?? branchName(ctx.config, ctx.journal.runId, effect.taskId, effect.attempt);
    for (const run2 of await ownRuns(ctx, branch)) if (run2.status !== "completed") await port.cancelWorkflowRun(run2.id);
  }
  return done();
}

// src/app/effects/issues-and-comments.ts
import { createHash as createHash2 } from "node:crypto";

// src/core/schemas/events.ts
var s = external_exports.string();
var n = external_exports.number();
var eventDataSchemas = {
  "run.started": external_exports.object({ planId: s.describe("Plan id."), dagHash: s.describe("sha256 of the DAG the run pinned."), planCommit: s.describe("Commit the plan was read from."), taskCount: n.describe("Number of DAG nodes.") }),
  "run.paused": external_exports.object({ reason: external_exports.enum(["change_request", "manual", "usage_limit", "budget"]).describe("Why dispatching stopped."), crId: s.optional().describe("CR that paused the run."), until: s.optional().describe("For usage limits: when dispatching may resume.") }),
  "run.resumed": external_exports.object({ reason: external_exports.enum(["change_request", "manual", "usage_limit", "budget"]).describe("Which pause ended."), crId: s.optional().describe("CR that was resolved."), overlayId: s.optional().describe("Overlay applied, if any.") }),
  "run.completed": external_exports.object({ duration: n.describe("Milliseconds from run.started."), taskCount: n.describe("Number of DAG nodes, all MERGED.") }),
  "run.cancelled": external_exports.object({ actor: s.optional().describe("Who cancelled (Forge).") }),
  "task.scheduled": external_exports.object({ type: agentTypeSchema.describe("Agent type."), dependencies: external_exports.array(s).describe("Its dependencies, all satisfied.") }),
  "task.started": external_exports.object({ agentId: s.describe("Agent id: <runId>/<taskId>/<attempt>."), type: agentTypeSchema.describe("Agent type."), branch: s.describe("Task branch."), attempt: n.describe("Attempt number."), agent: s.optional().describe("The agent (adapter) the attempt runs on (Forge)."), resumes: external_exports.object({ fromAttempt: n.describe("The attempt whose work it continues."), stage: s.optional().describe("The stage it starts at.") }).optional().describe("A resumed attempt: what it continues (Forge).") }),
  "task.completed": external_exports.object({ agentId: s.describe("Agent id: <runId>/<taskId>/<attempt>."), status: external_exports.enum(["completed", "failed", "partial"]).describe("Walkthrough status."), confidence: n.optional().describe("Walkthrough confidence."), attempt: n.describe("Attempt number.") }),
  "task.failed": external_exports.object({ agentId: s.describe("Agent id: <runId>/<taskId>/<attempt>."), error: s.describe("Why."), attemptId: n.describe("Attempt that failed."), exitCode: n.optional().describe("Exit code, when the agent reported one."), retryable: external_exports.boolean().describe("Whether Forge will retry it by itself.") }),
  "task.stale": external_exports.object({ lastHeartbeat: s.optional().describe("Last sign of life."), threshold: n.describe("Seconds allowed."), attempt: n.describe("Attempt number.") }),
  "task.retried": external_exports.object({ attemptId: n.describe("The new attempt."), branch: s.describe("Its branch."), notBefore: s.optional().describe("Backoff: not dispatched before this time."), manual: external_exports.boolean().describe("Asked for by a person."), agent: external_exports.object({ from: s.describe("The agent of the attempt that ended."), to: s.describe("The agent of the next attempt."), reason: s.describe("Why it changed.") }).optional().describe("The next attempt goes to the next agent of the task's list (Forge)."), resumes: external_exports.object({ fromAttempt: n.describe("The attempt whose work it continues."), stage: s.optional().describe("The stage it starts at.") }).optional().describe("It will continue the attempt's work on its branch and PR (Forge)."), fresh: s.optional().describe("Why it starts fresh although the retry policy would resume it (Forge).") }),
  "task.exhausted": external_exports.object({ attempts: n.describe("Attempts made."), finalStatus: taskStatusSchema.describe("Status it stays in.") }),
  "task.heartbeat": external_exports.object({ agentId: s.describe("Agent id: <runId>/<taskId>/<attempt>."), timestamp: s.describe("When the agent was seen alive.") }),
  "task.waiting": external_exports.object({ attempt: n.describe("Attempt number."), question: s.describe("What the agent asks (Forge: exit 3).") }),
  "task.merge_ready": external_exports.object({ attempt: n.describe("Attempt number."), headSha: s.describe("Pushed head, equal to the walkthrough's (Forge).") }),
  "task.held": external_exports.object({ attempt: n.describe("Attempt number."), paths: external_exports.array(s).describe("Protected paths its PR changes (Forge).") }),
  "task.merged": external_exports.object({ attempt: n.describe("Attempt number."), mergeSha: s.optional().describe("Merge commit (Forge)."), by: external_exports.enum(["direct", "refinery"]).describe("How it was merged.") }),
  "task.progress": external_exports.object({ attempt: n.describe("Attempt number."), message: s.describe("What the agent is doing (Forge).") }),
  "branch.pushed": external_exports.object({ branch: s.describe("Branch concerned."), headSha: s.describe("Head commit of the branch."), attempt: n.describe("Attempt the branch belongs to (Forge).") }),
  "refinery.started": external_exports.object({ agentId: s.describe("Agent id: <runId>/<taskId>/<attempt>."), mergeTargets: external_exports.array(s).describe("Upstream task ids it merges.") }),
  "refinery.merged": external_exports.object({ agentId: s.describe("Agent id: <runId>/<taskId>/<attempt>."), mergedBranches: external_exports.array(s).describe("Upstream task ids merged through it."), resultRef: s.describe("Ref holding the result.") }),
  "cr.emitted": external_exports.object({ crId: s.describe("Change Request id."), refineryId: s.describe("Task that raised it."), reason: s.describe("Why it was raised."), scope: external_exports.array(s).describe("Affected tasks.") }),
  "cr.resolved": external_exports.object({ crId: s.describe("Change Request id."), resolution: external_exports.enum(["applied", "rejected"]).describe("How it ended (Forge)."), overlayId: s.optional().describe("Overlay that applied it, if any.") }),
  "conflict.potential": external_exports.object({ riskDescription: s.describe("What could conflict."), relatedTasks: external_exports.array(s).describe("In-flight tasks that touch the same files."), files: external_exports.array(s).describe("Files concerned (Forge).") }),
  "review.risk": external_exports.object({ attempt: n.describe("Attempt number."), risk: s.describe("A risk from the walkthrough, logged as a warning (Forge).") }),
  "review.dismissed": external_exports.object({ attempt: n.describe("Attempt number."), reviewId: n.describe("The dismissed review."), headSha: s.describe("The head whose approval was withdrawn (Forge).") }),
  "review.submitted": external_exports.object({ attempt: n.describe("Attempt number."), reviewId: n.describe("The review."), actor: s.describe("Who reviewed (write access checked on GitHub)."), state: external_exports.enum(["approved", "changes_requested"]).describe("What the review said."), headSha: s.describe("The PR head it was given on (Forge).") }),
  "task.feedback": external_exports.object({ attempt: n.describe("Attempt number."), source: external_exports.enum(["review", "command", "ci"]).describe("What asked for a revision."), actor: s.optional().describe("Who asked."), queued: external_exports.boolean().describe("Waiting for the revision under way to end (Forge).") }),
  "task.steered": external_exports.object({ attempt: n.describe("Attempt number."), id: n.describe("The message's number for the task."), actor: s.describe("Who steered (Forge).") }),
  "task.revising": external_exports.object({ attempt: n.describe("Attempt number."), iteration: n.describe("The revision started, from 1."), sources: external_exports.array(external_exports.enum(["review", "command", "ci"])).describe("What it answers (Forge).") }),
  "task.revision_limit": external_exports.object({ attempt: n.describe("Attempt number."), kind: external_exports.enum(["review", "ci"]).describe("Which bound was reached."), limit: n.describe("review.max_iterations or ci_fix.max_attempts."), reason: s.describe("Why the task waits for a person (Forge).") }),
  "task.merge_blocked": external_exports.object({ attempt: n.describe("Attempt number."), reason: s.describe("Which rule refused the merge, on which branch, and what a person can do (Forge).") }),
  "task.branch_updated": external_exports.object({ attempt: n.describe("Attempt number."), from: s.describe("The PR head the update was made over."), headSha: s.describe("The new head: the integration branch merged in by the App (Forge).") }),
  "task.merge_unblocked": external_exports.object({ attempt: n.describe("Attempt number."), by: external_exports.enum(["retry", "approval", "merged"]).describe("What let the merge go on (Forge).") }),
  "review.low_confidence": external_exports.object({ confidence: n.describe("Walkthrough confidence, 0\u20131."), threshold: n.describe("The configured threshold.") }),
  "followup.spawned": external_exports.object({ followupId: s.describe("Follow-up id."), sourceTaskId: s.describe("Task whose walkthrough listed the follow-up."), reason: s.describe("The follow-up text."), branch: s.describe("Branch concerned.") }),
  "followup.logged": external_exports.object({ sourceTaskId: s.describe("Task whose walkthrough listed the follow-up."), reason: s.describe("A follow-up noted but not spawned (Forge).") }),
  "followup.completed": external_exports.object({ followupId: s.describe("Follow-up id."), status: external_exports.enum(["merged", "failed"]).describe("How it ended (Forge).") }),
  "plan.edit_ignored": external_exports.object({ commit: s.describe("A default-branch commit that changed the pinned plan; the run keeps its pin (Forge).") })
};
var EVENT_TYPES = Object.keys(eventDataSchemas);
var eventEnvelopeSchema = external_exports.object({
  eventId: s.describe("Unique id: <runId>:<seq>."),
  seq: external_exports.number().int().min(1).describe("Position in the run's log, gap-free from 1."),
  timestamp: s.describe("When the executor decided it (ISO-8601)."),
  type: external_exports.enum(EVENT_TYPES).describe("Event type from the catalog."),
  runId: s.describe("The run."),
  taskId: s.optional().describe("The task, for task events."),
  data: external_exports.record(external_exports.string(), external_exports.unknown()).describe("Type-specific data.")
}).strict();
var forgeEventSchema = external_exports.discriminatedUnion(
  "type",
  EVENT_TYPES.map((t) => eventEnvelopeSchema.extend({ type: external_exports.literal(t).describe("Event type from the catalog."), data: eventDataSchemas[t].describe("Type-specific data.") }))
).describe("An event of the run log, on the state branch forge/<runId>/_state: the open segment in journal.json (events.tail), sealed segments in events/NNNNNN.ndjson, one event per line (see docs/formats.md#event-segments).");

// src/core/outbox-check.ts
var WORKFLOW_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]*\.ya?ml$/;
function ownBranches(journal, config2) {
  const own = /* @__PURE__ */ new Set();
  for (const t of journal.tasks) for (let a = 1; a <= t.attempts; a++) own.add(branchName(config2, journal.runId, t.id, a));
  for (const f of journal.followups) own.add(branchName(config2, journal.runId, f.id, 1));
  return own;
}
function outboxProblems(journal, config2) {
  const problems = [];
  const integration = integrationBranch(config2, journal.runId);
  if (journal.integrationBranch !== integration)
    problems.push(`the integration branch is ${journal.integrationBranch}, not ${integration} as the run's template names it`);
  if (journal.baseBranch === journal.integrationBranch || journal.baseBranch.startsWith(runBranchPrefix(journal.runId)))
    problems.push(`the base branch ${journal.baseBranch} is one of the run's own branches`);
  if (!WORKFLOW_FILE.test(config2.workflow)) problems.push(`the workflow ${JSON.stringify(config2.workflow)} is not a workflow file name`);
  const own = ownBranches(journal, config2);
  const protectedBranches = /* @__PURE__ */ new Set([journal.baseBranch, journal.integrationBranch]);
  const attemptBranch = (taskId, attempt) => branchName(config2, journal.runId, taskId, attempt);
  const isTask = (taskId) => journal.tasks.some((t) => t.id === taskId) || journal.followups.some((f) => f.id === taskId);
  for (const e of journal.outbox) {
    const bad = (why) => problems.push(`${e.kind} ${e.key}: ${why}`);
    const ownBranch = (b, what) => {
      if (protectedBranches.has(b)) bad(`${what} ${b} is the run's base or integration branch`);
      else if (!own.has(b)) bad(`${what} ${b} is not a branch of this run`);
    };
    switch (e.kind) {
      case "PrepareBranch":
        if (e.branch !== attemptBranch(e.taskId, e.attempt)) bad(`branch ${e.branch} is not ${attemptBranch(e.taskId, e.attempt)}`);
        if (e.from !== journal.integrationBranch) bad(`it cuts from ${e.from}, not the integration branch`);
        for (const m of e.merge) ownBranch(m, "upstream");
        break;
      case "DispatchAgent":
      case "MergePullRequest":
        if (!isTask(e.taskId)) bad(`${e.taskId} is not a task of this run`);
        if (!Array.from({ length: e.attempt }, (_, k) => attemptBranch(e.taskId, k + 1)).includes(e.branch))
          bad(`branch ${e.branch} is not ${attemptBranch(e.taskId, e.attempt)} nor an earlier attempt's`);
        if (e.kind === "DispatchAgent" && e.context?.agent) {
          const t = journal.tasks.find((x) => x.id === e.taskId);
          const own2 = t?.attempts === e.attempt ? t.attempt?.agent : void 0;
          if (own2 !== e.context.agent.adapter) bad(`it names the agent ${e.context.agent.adapter}, not the attempt's (${own2 ?? "none"})`);
        }
        break;
      case "SpawnFollowup":
        if (e.branch !== attemptBranch(e.followupId, 1)) bad(`branch ${e.branch} is not ${attemptBranch(e.followupId, 1)}`);
        break;
      case "CleanupBranches":
        for (const b of e.branches) ownBranch(b, "branch");
        break;
      default:
        if ("taskId" in e && typeof e.taskId === "string" && !isTask(e.taskId)) bad(`${e.taskId} is not a task of this run`);
    }
  }
  return problems;
}

// src/app/journal-seal.ts
import { createHmac as createHmac2, createPrivateKey as createPrivateKey2, hkdfSync, timingSafeEqual as timingSafeEqual2 } from "node:crypto";
var SEAL_FIELD = "seal";
var PREFIX = "hmac-sha256-v2:";
var V1_PREFIX = "hmac-sha256:";
function journalKeyFrom(privateKeyPem) {
  const der = createPrivateKey2(privateKeyPem).export({ type: "pkcs8", format: "der" });
  return Buffer.from(hkdfSync("sha256", der, "forge", "forge journal seal v1", 32));
}
function journalKeyFromSecret(secret) {
  if (secret.length < 32) throw new Error("FORGE_JOURNAL_KEY must be at least 32 characters");
  return Buffer.from(hkdfSync("sha256", Buffer.from(secret, "utf8"), "forge", "forge journal seal v1", 32));
}
function bound2(key, purpose, b, text) {
  return createHmac2("sha256", key).update(`forge ${purpose}
${b.repositoryId}
${b.runId}
`, "utf8").update(text, "utf8").digest("hex");
}
function mac(key, b, text) {
  return `${PREFIX}${b.repositoryId}:${bound2(key, "journal seal v2", b, text)}`;
}
function sameText(a, b) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual2(x, y);
}
function sealJournal(key, state, binding) {
  const body = JSON.stringify(state);
  return `${body.slice(0, -1)}${body.length > 2 ? "," : ""}"${SEAL_FIELD}":${JSON.stringify(mac(key, binding, body))}}
`;
}
function unsealJournal(key, text, binding) {
  let raw;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `it is not JSON: ${e.message}` };
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { ok: false, reason: "it is not a JSON object" };
  const { [SEAL_FIELD]: seal, ...rest } = raw;
  if (typeof seal !== "string") return { ok: false, reason: "it carries no seal: the Forge App did not write it" };
  if (!seal.startsWith(PREFIX)) {
    if (seal.startsWith(V1_PREFIX))
      return {
        ok: false,
        reason: "it carries a version 1 seal, which an earlier Forge wrote and which binds it to no repository or run: Forge no longer adopts such journals (docs/formats.md#journal-seal). Start the plan again with `/forge run <planId>`"
      };
    return { ok: false, reason: "its seal is of no version Forge knows: the Forge App did not write it" };
  }
  const sealedIn = seal.slice(PREFIX.length).split(":")[0];
  if (sealedIn !== String(binding.repositoryId))
    return {
      ok: false,
      reason: `it was sealed in another repository (id ${sealedIn?.slice(0, 20)}), not this one (id ${binding.repositoryId}): Forge adopts only state branches it created in this repository`
    };
  if (!sameText(seal, mac(key, binding, JSON.stringify(rest))))
    return {
      ok: false,
      reason: `its seal does not match its content and run ${binding.runId}: it was changed by someone other than the Forge App, or sealed for another run`
    };
  return { ok: true, value: rest };
}

// src/app/journal-anchor.ts
var ANCHOR_CHECK_NAME = "Forge journal";
var ANCHOR_EVERY = 40;
var anchorExternalId = (runId) => `forge-journal:${runId}`;
var MARKER = /<!-- forge-anchor (\{[^\n]*\}) -->/;
function anchorMac(key, b, a) {
  return bound2(key, "journal anchor v1", b, `${a.seq}
${a.status}
${a.blobSha}
${a.commitSha}`);
}
function anchorSummary(key, b, a) {
  const data = JSON.stringify({ ...a, mac: anchorMac(key, b, a) });
  return [
    `Forge's record of the newest journal of run \`${b.runId}\`: event ${a.seq}, run ${a.status}, commit \`${a.commitSha.slice(0, 12)}\` of \`forge/${b.runId}/_state\`.`,
    "Forge refuses an older journal of this run (docs/formats.md#journal-anchor).",
    "",
    `<!-- forge-anchor ${data} -->`
  ].join("\n");
}
function parseAnchor(key, b, summary) {
  const m = MARKER.exec(summary ?? "");
  if (!m) return null;
  try {
    const v = JSON.parse(m[1]);
    if (typeof v.seq !== "number" || typeof v.status !== "string" || typeof v.blobSha !== "string" || typeof v.commitSha !== "string")
      return null;
    const a = { seq: v.seq, status: v.status, blobSha: v.blobSha, commitSha: v.commitSha };
    return typeof v.mac === "string" && sameText(v.mac, anchorMac(key, b, a)) ? a : null;
  } catch {
    return null;
  }
}
var TERMINAL = /* @__PURE__ */ new Set(["completed", "cancelled"]);
function staleness(journal, a) {
  if (journal.seq < a.seq)
    return `it is older than the newest journal Forge recorded for this run (event ${journal.seq}, where Forge's anchor says event ${a.seq}, run ${a.status}): someone put back an earlier journal`;
  if (TERMINAL.has(a.status) && journal.status !== a.status)
    return `Forge recorded this run as ${a.status}, and this journal says ${journal.status}: someone put back an earlier journal`;
  return void 0;
}
function holdOf(pause) {
  return `${pause.manual ? "p" : ""}${pause.budget ? "b" : ""}${pause.changeRequests.length ? "c" : ""}`;
}
function anchorDue(journal, last) {
  if (!last) return TERMINAL.has(journal.status) || journal.hold !== "" || journal.seq >= ANCHOR_EVERY;
  return journal.status !== last.status || journal.hold !== last.hold || journal.seq - last.seq >= ANCHOR_EVERY;
}
async function readAnchor(port, key, b, headSha) {
  const runs = await port.listCheckRuns(headSha, ANCHOR_CHECK_NAME);
  let best = { anchor: null };
  for (const r of runs) {
    if (r.externalId !== anchorExternalId(b.runId)) continue;
    const a = parseAnchor(key, b, r.summary);
    if (a && (!best.anchor || a.seq > best.anchor.seq)) best = { anchor: a, checkRunId: r.id };
  }
  return best;
}
async function writeAnchor(port, key, b, headSha, a, checkRunId) {
  const fields = {
    status: "completed",
    conclusion: "neutral",
    title: `Run ${b.runId}: journal event ${a.seq} (${a.status})`,
    summary: anchorSummary(key, b, a)
  };
  if (checkRunId !== void 0) {
    await port.updateCheckRun(checkRunId, fields);
    return checkRunId;
  }
  return port.createCheckRun({ ...fields, name: ANCHOR_CHECK_NAME, headSha, externalId: anchorExternalId(b.runId) });
}
async function openAnchor(port, b, headSha) {
  return port.createCheckRun({
    name: ANCHOR_CHECK_NAME,
    headSha,
    externalId: anchorExternalId(b.runId),
    status: "completed",
    conclusion: "neutral",
    title: `Run ${b.runId}: no journal anchored yet`,
    summary: "The Forge App writes here the journal it last anchored (docs/formats.md#journal-anchor)."
  });
}

// src/app/run-store.ts
var SEGMENT_SIZE = 200;
var runFactsSchema = external_exports.object({
  trackerIssue: external_exports.number().int().optional().describe("The run tracker issue."),
  trackerUpdatedAt: external_exports.string().optional().describe("When the tracker body was last written."),
  trackerAttention: external_exports.string().optional().describe("Digest of what waited for a person when the tracker was last written: a change is shown at once."),
  checkRuns: external_exports.record(external_exports.string(), external_exports.number().int()).default({}).describe("Check run id per `<taskId>:<attempt>`."),
  finalPr: external_exports.number().int().optional().describe("The run's final PR (integration \u2192 base)."),
  finalAutoMerge: external_exports.object({
    pr: external_exports.number().int(),
    outcome: external_exports.enum(["enabled", "merged", "queued", "refused", "closed"])
  }).strict().optional().describe(
    "What became of the final PR under `final_pr.auto_merge` (its number): set to auto-merge, merged or enqueued by Forge, refused by GitHub (said on the PR), or merged or closed by a person. Once set, the reconciler stops looking at it."
  ),
  mergeGroups: external_exports.record(external_exports.string(), external_exports.object({ head: external_exports.string(), group: external_exports.string() }).strict()).optional().describe(
    "The merge group each task's verified head was last seen tested in, by `<taskId>:<attempt>`: a merge that finds its pull request dropped from the merge queue reads that group's checks."
  ),
  planSha: external_exports.string().optional().describe("Commit of the default branch the plan was read from."),
  stateBranchWarning: external_exports.string().optional().describe("Set at run start when no ruleset keeps others from creating, updating or deleting the state branch: what is missing."),
  anchorSha: external_exports.string().optional().describe("The commit the run started from, where the App keeps the journal's freshness anchor (docs/formats.md#journal-anchor)."),
  issues: external_exports.object({
    parent: external_exports.number().int().optional().describe("The issue the plan was built from: it carries the run's summary."),
    tasks: external_exports.record(external_exports.string(), external_exports.number().int()).describe("The issue of each task that names one (`issue:`)."),
    comments: external_exports.record(external_exports.string(), external_exports.number().int()).default({}).describe("Per issue number, Forge's one comment on it."),
    shown: external_exports.record(external_exports.string(), external_exports.string()).default({}).describe("Per issue number, a digest of what its comment last said.")
  }).strict().optional().describe("The issues the run shows on (config `issue_sync`, docs/formats.md#plans-from-an-issue-tree)."),
  anchorCheckRunId: external_exports.number().int().optional().describe("The anchor's check run, made when the run started: every process updates this one (docs/formats.md#journal-anchor).")
}).strict();
var effectLeaseSchema = external_exports.object({
  owner: external_exports.string().min(1).describe("Replica id of the App process that owns the effect."),
  until: external_exports.string().describe("ISO time the lease runs out.")
}).strict();
var storedRunSchema = external_exports.object({
  version: external_exports.literal(JOURNAL_VERSION).describe("Format version of the stored run; it moves with the journal's (../core/journal-migration.ts reads older ones)."),
  journal: journalSchema,
  config: forgeConfigSchema.describe("The config pinned when the run started."),
  facts: runFactsSchema,
  events: external_exports.object({
    segment: external_exports.number().int().min(1).describe("Number of the open segment."),
    tail: external_exports.array(external_exports.record(external_exports.string(), external_exports.unknown())).describe("Events of the open segment, oldest first.")
  }).strict(),
  leases: external_exports.record(external_exports.string(), effectLeaseSchema).default({}).describe("Per pending effect key: the App process that may carry it out, until when. Taken over only once it has run out."),
  split: journalSplitSchema.optional()
}).strict();
var StateBranchMissingError = class extends Error {
  constructor(runId) {
    super(`the state branch ${stateBranch(runId)} does not exist`);
    this.runId = runId;
    this.name = "StateBranchMissingError";
  }
  runId;
};
var RunStoreError = class extends Error {
  constructor(message) {
    super(message);
    this.name = "RunStoreError";
  }
};
var JournalRefusedError = class extends Error {
  constructor(runId, reason, blobSha, lastGood) {
    super(`${stateBranch(runId)}:${JOURNAL_FILE} was refused: ${reason}`);
    this.runId = runId;
    this.reason = reason;
    this.blobSha = blobSha;
    this.lastGood = lastGood;
    this.name = "JournalRefusedError";
  }
  runId;
  reason;
  blobSha;
  lastGood;
};
var RunStore = class {
  constructor(port, key, options2 = {}) {
    this.port = port;
    this.key = key;
    this.options = options2;
  }
  port;
  key;
  options;
  /** Parts already read or written: content-addressed, so never stale. */
  #parts = /* @__PURE__ */ new Map();
  /** Per run, the newest journal this process read or wrote (its seq and status): an older one is refused. */
  #newest = /* @__PURE__ */ new Map();
  /** Per run, the anchor as last read or written (journal-anchor.ts), and its check run. */
  #anchors = /* @__PURE__ */ new Map();
  async load(runId) {
    for (let attempt = 0; ; attempt++) {
      const loaded = await this.#read(runId, stateBranch(runId), true);
      if (!loaded) return null;
      try {
        await this.#fresh(runId, loaded);
        return loaded;
      } catch (e) {
        if (attempt > 0 || !(e instanceof JournalRefusedError)) throw e;
      }
    }
  }
  async #binding(runId) {
    return { repositoryId: await this.port.repositoryId(), runId };
  }
  /**
   * Refuse a journal older than the newest this process has seen of the run, or — read cold, for a
   * run that is not over — than the App's anchor (journal-anchor.ts): a rolled-back journal.
   */
  async #fresh(runId, loaded) {
    const j = loaded.state.journal;
    const seen = this.#newest.get(runId);
    const anchorSha = loaded.state.facts.anchorSha;
    if (!seen && anchorSha && j.status === "running") {
      const { anchor, checkRunId } = await readAnchor(this.port, this.key, await this.#binding(runId), anchorSha);
      if (anchor) {
        const hold = holdOf(j.pause);
        this.#anchors.set(runId, { seq: anchor.seq, status: anchor.status, hold, ...checkRunId !== void 0 ? { checkRunId } : {} });
        const why = staleness(j, anchor);
        if (why) throw new JournalRefusedError(runId, why, loaded.blobSha, anchor.commitSha);
      }
    } else if (seen) {
      const why = staleness(j, seen);
      if (why) throw new JournalRefusedError(runId, why, loaded.blobSha);
    }
    this.#saw(runId, j);
  }
  #saw(runId, j) {
    const seen = this.#newest.get(runId);
    if (!seen || j.seq > seen.seq || j.seq === seen.seq && j.status !== "running")
      this.#newest.set(runId, { seq: j.seq, status: j.status });
  }
  /** After a write: record it, and anchor it when due (a failed anchor is tried again at the next write). */
  async #recorded(saved) {
    const j = saved.state.journal;
    this.#saw(j.runId, j);
    const anchorSha = saved.state.facts.anchorSha;
    const last = this.#anchors.get(j.runId);
    const hold = holdOf(j.pause);
    if (!anchorSha || !saved.commitSha || !anchorDue({ seq: j.seq, status: j.status, hold }, last)) return;
    const anchor = { seq: j.seq, status: j.status, blobSha: saved.blobSha, commitSha: saved.commitSha };
    try {
      const checkRunId = last?.checkRunId ?? saved.state.facts.anchorCheckRunId;
      const id = await writeAnchor(this.port, this.key, await this.#binding(j.runId), anchorSha, anchor, checkRunId);
      this.#anchors.set(j.runId, { seq: j.seq, status: j.status, hold, checkRunId: id });
    } catch {
    }
  }
  /**
   * The stored run of `journal.json` at `ref`, its parts joined: refused (`JournalRefusedError`) when
   * the App did not write it, a part does not match its hash, or it asks for what the App would never do.
   */
  async #read(runId, ref, strict) {
    const file = await this.port.readFile(JOURNAL_FILE, ref);
    if (!file) return null;
    const unsealed = unsealJournal(this.key, file.content, await this.#binding(runId));
    if (!unsealed.ok) {
      if (!strict) return null;
      throw new JournalRefusedError(runId, unsealed.reason, file.blobSha);
    }
    const parsed = storedRunSchema.safeParse(migrateStoredRun(unsealed.value));
    if (!parsed.success) {
      if (!strict) return null;
      throw new RunStoreError(
        `${stateBranch(runId)}:${JOURNAL_FILE} is invalid: ${formatProblem(zodProblems(parsed.error, JOURNAL_FILE)[0])}`
      );
    }
    const { split, ...stored } = parsed.data;
    let state = stored;
    let parts;
    if (split) {
      try {
        const joined = await joinRun(
          { nodes: state.journal.plan.nodes, tasks: state.journal.tasks, checkRuns: state.facts.checkRuns },
          split,
          async (hash) => (await this.port.readFile(partPath(hash), ref))?.content ?? null,
          this.#parts
        );
        const { nodes, tasks, checkRuns } = joined.whole;
        state = {
          ...state,
          journal: { ...state.journal, plan: { ...state.journal.plan, nodes }, tasks },
          facts: { ...state.facts, checkRuns }
        };
        parts = joined.base;
      } catch (e) {
        if (!(e instanceof JournalPartsError)) throw e;
        if (!strict) return null;
        throw new JournalRefusedError(runId, e.message, file.blobSha);
      }
    }
    const problems = outboxProblems(state.journal, state.config);
    if (state.journal.runId !== runId) problems.unshift(`it is the journal of run ${state.journal.runId}`);
    if (problems.length) {
      if (!strict) return null;
      throw new JournalRefusedError(runId, `it asks for what Forge would never do: ${problems.slice(0, 5).join("; ")}`, file.blobSha);
    }
    return { state, blobSha: file.blobSha, ...parts ? { parts } : {} };
  }
  /**
   * The newest commit of the run's state branch holding a journal the App wrote (its seal verifies),
   * looking back at most `limit` commits: where a person resets the branch to recover a refused journal.
   */
  async lastSealed(runId, limit = 30) {
    let sha = await this.port.branchHead(stateBranch(runId));
    for (let i = 0; sha && i < limit; i++) {
      const file = await this.port.readFile(JOURNAL_FILE, sha);
      if (file && unsealJournal(this.key, file.content, await this.#binding(runId)).ok) return sha;
      sha = (await this.port.commit(sha)).parents[0] ?? null;
    }
    return null;
  }
  /** Create the state branch at `fromSha` and write the first journal. `ConflictError` when the run exists. */
  async create(state, fromSha) {
    const branch = stateBranch(state.journal.runId);
    await this.port.createBranch(branch, fromSha);
    const anchorSha = state.facts.anchorSha ?? fromSha;
    const anchorCheckRunId = await openAnchor(this.port, await this.#binding(state.journal.runId), anchorSha).catch(() => void 0);
    const first = { ...state, facts: { ...state.facts, anchorSha, ...anchorCheckRunId !== void 0 ? { anchorCheckRunId } : {} } };
    const { text, parts } = await this.#written(branch, first, void 0);
    const { blobSha, commitSha } = await this.port.writeFile(branch, JOURNAL_FILE, text, `forge: start run ${state.journal.runId}`);
    const created = { state: first, blobSha, commitSha, ...parts ? { parts } : {} };
    await this.#recorded(created);
    return created;
  }
  /**
   * Persist `next` over `loaded` — compare-and-swap: `ConflictError` when another writer moved the
   * journal since it was read (re-read, re-decide). Full segments are sealed into their own files first.
   */
  async save(loaded, next, message) {
    const branch = stateBranch(next.journal.runId);
    let state = next;
    let persisted = loaded.state.events.segment === next.events.segment ? loaded.state.events.tail.length : 0;
    while (persisted >= SEGMENT_SIZE && state.events.tail.length >= SEGMENT_SIZE) {
      const sealed = state.events.tail.slice(0, SEGMENT_SIZE);
      await this.sealSegment(branch, state.events.segment, sealed);
      state = { ...state, events: { segment: state.events.segment + 1, tail: state.events.tail.slice(SEGMENT_SIZE) } };
      persisted -= SEGMENT_SIZE;
    }
    try {
      const { text, parts } = await this.#written(branch, state, loaded.parts);
      const { blobSha, commitSha } = await this.port.writeFile(branch, JOURNAL_FILE, text, message, loaded.blobSha);
      const saved = { state, blobSha, commitSha, ...parts ? { parts } : {} };
      await this.#recorded(saved);
      return saved;
    } catch (e) {
      if (!(e instanceof ConflictError) && e instanceof GitHubError && (e.status === 404 || e.status === 422) && !await this.port.branchHead(branch)) {
        throw new StateBranchMissingError(next.journal.runId);
      }
      throw e;
    }
  }
  /**
   * Put a deleted state branch back at `commitSha` (its last commit: GitHub keeps a deleted branch's
   * commits). Only a run that is not over is restored, and only from a commit holding its journal.
   * Returns the journal restored, or null when there was nothing to restore.
   */
  async restore(runId, commitSha) {
    const read = await this.#read(runId, commitSha, false);
    if (!read) return null;
    if (read.state.journal.status === "completed" || read.state.journal.status === "cancelled") return null;
    if (!await this.port.createBranch(stateBranch(runId), commitSha)) return null;
    return { ...read, commitSha };
  }
  /**
   * `journal.json`'s text for `state` — sealed with the App's key — after writing the parts it needs
   * when the run is big enough to be split (each a new file, named by its hash; one already there is
   * the same content).
   */
  async #written(branch, state, base) {
    const binding = await this.#binding(state.journal.runId);
    if (!isSplit(state.journal.plan.nodes.length, this.options.splitAt ?? SPLIT_AT)) return { text: sealJournal(this.key, state, binding) };
    const s2 = splitRun(
      { nodes: state.journal.plan.nodes, tasks: state.journal.tasks, checkRuns: state.facts.checkRuns },
      base,
      this.options
    );
    for (const part of s2.write) {
      try {
        await this.port.writeFile(branch, part.path, part.content, `forge: journal part ${part.path.slice(6, 18)}`);
      } catch (e) {
        if (!(e instanceof ConflictError)) throw e;
      }
    }
    rememberWritten(this.#parts, s2.write);
    const onDisk = {
      ...state,
      journal: { ...state.journal, plan: { ...state.journal.plan, nodes: s2.live.nodes }, tasks: s2.live.tasks },
      facts: { ...state.facts, checkRuns: s2.live.checkRuns },
      split: s2.split
    };
    return { text: sealJournal(this.key, onDisk, binding), parts: s2.base };
  }
  /** A sealed segment never changes, so a second writer finding it already there is fine. */
  async sealSegment(branch, segment, events) {
    const path2 = eventSegmentFile(segment);
    try {
      await this.port.writeFile(
        branch,
        path2,
        events.map((e) => JSON.stringify(e)).join("\n") + "\n",
        `forge: seal event segment ${segment}`
      );
    } catch (e) {
      if (!(e instanceof ConflictError)) throw e;
    }
  }
  /** Ids of runs with a state branch. */
  async listRuns() {
    const branches = await this.port.listBranches(BRANCH_PREFIX);
    return branches.map((b) => parseStateBranch(b.name)).filter((id) => !!id);
  }
};
function newStoredRun(journal, config2, facts, events) {
  return {
    version: JOURNAL_VERSION,
    journal,
    config: config2,
    facts: { checkRuns: {}, ...facts },
    events: { segment: 1, tail: events },
    leases: {}
  };
}
async function readRunEvents(port, runId, tail, ref = stateBranch(runId)) {
  const firstOpen = tail[0]?.seq;
  const sealed = firstOpen !== void 0 ? Math.floor((firstOpen - 1) / SEGMENT_SIZE) : 0;
  const out = [];
  for (let n2 = 1; n2 <= sealed; n2++) {
    const file = await port.readFile(eventSegmentFile(n2), ref);
    for (const line of (file?.content ?? "").split("\n")) {
      if (!line.trim()) continue;
      try {
        const e = forgeEventSchema.safeParse(JSON.parse(line));
        if (e.success) out.push(e.data);
      } catch {
      }
    }
  }
  return [...out, ...tail];
}

// src/app/issue-sync.ts
import { createHash } from "node:crypto";
var issueMarker = (runId) => `<!-- forge:issue ${runId} -->`;
function issueLinks(parsed, config2) {
  const parent = parsed.dag.data?.metadata.issue;
  if (config2.issue_sync === "off" || config2.issue_sync === "tree" && parent === void 0) return void 0;
  const tasks = {};
  for (const t of parsed.tasks) if (t.data?.issue !== void 0) tasks[t.data.id] = t.data.issue;
  if (parent === void 0 && Object.keys(tasks).length === 0) return void 0;
  return { ...parent !== void 0 ? { parent } : {}, tasks, comments: {}, shown: {} };
}
var WORDS = {
  PENDING: "\u26AA waiting",
  RUNNING: "\u{1F535} an agent is at work",
  DONE: "\u{1F7E2} done, being checked",
  MERGE_READY: "\u{1F7E3} ready to merge",
  MERGED: "\u2705 merged into the run's integration branch",
  FAILED: "\u{1F534} failed",
  STALE: "\u{1F7E0} stalled"
};
function stateLine(t) {
  const hold = t.attempt?.hold ? ` (${t.attempt.hold})` : "";
  const pr = t.attempt?.prNumber !== void 0 ? ` \xB7 PR #${t.attempt.prNumber}` : "";
  const attempt = t.attempts > 0 ? ` \xB7 attempt ${t.attempts}` : "";
  return `${WORDS[t.status] ?? t.status}${hold}${attempt}${pr}`;
}
function where(journal, tracker) {
  return `run \`${journal.runId}\` of plan \`${journal.planId}\`${tracker !== void 0 ? ` (tracker #${tracker})` : ""}`;
}
function taskIssueComment(journal, t, tracker, finalPr) {
  const end = journal.status === "cancelled" ? ["", "The run was cancelled."] : t.status === "MERGED" ? ["", `It closes when the run's final PR${finalPr !== void 0 ? ` #${finalPr}` : ""} merges into \`${journal.baseBranch}\`.`] : [];
  return [
    issueMarker(journal.runId),
    `**Forge** \xB7 this issue is task \`${t.id}\` of ${where(journal, tracker)}: **${stateLine(t)}**.`,
    ...end
  ].join("\n");
}
function summaryComment(journal, issues, tracker, finalPr) {
  const rows = journal.tasks.map((t) => {
    const n2 = issues.tasks[t.id];
    return `| ${n2 !== void 0 ? `#${n2}` : "\u2014"} | \`${t.id}\` | ${stateLine(t)} |`;
  });
  const status = journal.status === "running" ? "running" : journal.status;
  return [
    issueMarker(journal.runId),
    `**Forge** \xB7 ${where(journal, tracker)}: **${status}**, ${journal.merged}/${journal.tasks.length} merged${finalPr !== void 0 ? ` \xB7 final PR #${finalPr}` : ""}.`,
    "",
    "| Issue | Task | State |",
    "|---|---|---|",
    ...rows
  ].join("\n");
}
var digest = (text) => createHash("sha256").update(text).digest("base64url").slice(0, 16);
async function upsert(port, issues, issue, body, replay, runId) {
  const key = String(issue);
  const d = digest(body);
  if (issues.shown[key] === d) return;
  let id = issues.comments[key] ?? (replay ? await port.findComment(issue, issueMarker(runId)) ?? void 0 : void 0);
  if (id !== void 0) await port.updateComment(id, body);
  else id = await port.createComment(issue, body);
  issues.comments[key] = id;
  issues.shown[key] = d;
}
async function syncIssues(ctx, tracker) {
  const known = ctx.facts.issues;
  if (!known) return void 0;
  const issues = {
    ...known.parent !== void 0 ? { parent: known.parent } : {},
    tasks: { ...known.tasks },
    comments: { ...known.comments },
    shown: { ...known.shown }
  };
  const finalPr = ctx.facts.finalPr;
  const id = ctx.journal.runId;
  for (const t of ctx.journal.tasks) {
    const n2 = issues.tasks[t.id];
    if (n2 === void 0) continue;
    await upsert(ctx.port, issues, n2, taskIssueComment(ctx.journal, t, tracker, finalPr), ctx.replay, id).catch(() => void 0);
  }
  const parent = issues.parent;
  if (parent !== void 0)
    await upsert(ctx.port, issues, parent, summaryComment(ctx.journal, issues, tracker, finalPr), ctx.replay, id).catch(() => void 0);
  return issues;
}
async function closeRunIssues(port, journal, issues, finalPr) {
  const closed = [];
  for (const t of journal.tasks) {
    const n2 = issues.tasks[t.id];
    if (n2 === void 0 || t.status !== "MERGED") continue;
    const body = `${issueMarker(journal.runId)}
**Forge** \xB7 this issue was task \`${t.id}\` of ${where(journal, void 0)}: \u2705 merged into \`${journal.baseBranch}\` with #${finalPr}.`;
    const id = issues.comments[String(n2)];
    if (id !== void 0) await port.updateComment(id, body);
    else await port.createComment(n2, body);
    await port.updateIssue(n2, { state: "closed" });
    closed.push(n2);
  }
  const all = journal.tasks.every((t) => t.status === "MERGED");
  const summary = issues.parent !== void 0 ? issues.comments[String(issues.parent)] : void 0;
  if (summary !== void 0) await port.updateComment(summary, summaryComment(journal, issues, void 0, finalPr));
  if (issues.parent !== void 0 && all && journal.status === "completed") {
    await port.updateIssue(issues.parent, { state: "closed" });
    closed.push(issues.parent);
  }
  return closed;
}

// src/app/effects/issues-and-comments.ts
var TRACKER_DEBOUNCE_MS = 5e3;
var TRACKER_DEBOUNCE_MAX_MS = 6e4;
var trackerDebounceMs = (tasks, pace = { elapsedMs: 0, merged: 1 }) => Math.min(TRACKER_DEBOUNCE_MAX_MS, Math.max(TRACKER_DEBOUNCE_MS, 50 * tasks, pace.elapsedMs / Math.max(1, pace.merged)));
function attentionOf(journal) {
  const known = attentionMemo.get(journal);
  if (known !== void 0) return known;
  const items = [];
  for (const t of journal.tasks) {
    const a = t.attempt;
    if (a?.hold) items.push(`${t.id}:${t.attempts}:${a.hold}`);
    if (t.status === "MERGE_READY" && a?.revision.waiting) items.push(`${t.id}:${t.attempts}:waiting:${a.revision.waiting}`);
    if (t.status === "MERGE_READY" && heldForProtectedPaths(t)) items.push(`${t.id}:${t.attempts}:approve`);
  }
  for (const cr of journal.changeRequests) if (cr.status === "pending") items.push(`cr:${cr.id}`);
  items.push(JSON.stringify(journal.pause));
  const digest2 = createHash2("sha256").update(items.join("\n")).digest("base64url").slice(0, 16);
  attentionMemo.set(journal, digest2);
  return digest2;
}
var attentionMemo = /* @__PURE__ */ new WeakMap();
async function openChangeRequest2(effect, ctx) {
  const { port } = ctx;
  const cr = ctx.journal.changeRequests.find((c) => c.id === effect.crId);
  const known = cr?.issueNumber ?? (ctx.replay ? await port.findIssue(LABELS.changeRequest, crMarker(ctx.journal.runId, effect.crId)) : null) ?? void 0;
  if (known !== void 0) return done({ issueNumber: known });
  const branch = attemptNumbered(task(ctx, effect.emittedBy), effect.attempt)?.branch ?? branchName(ctx.config, ctx.journal.runId, effect.emittedBy, effect.attempt);
  const doc = effect.path ? await port.readFile(effect.path, branch) : null;
  const number = await port.createIssue({
    // The emitter's own title (result.json change_request), as data.
    title: changeRequestIssueTitle(cr?.title ?? effect.crId),
    body: renderChangeRequestIssue(ctx.journal, effect.crId, doc?.content, ctx.config),
    labels: [LABELS.changeRequest]
  });
  return done({ issueNumber: number });
}
async function postComment2(effect, ctx) {
  const { port } = ctx;
  const issue = await commentTarget(effect.target, ctx);
  if (issue === void 0) return { kind: "later", reason: "the comment's issue or PR does not exist yet", retryInMs: 2e3 };
  const marker = `<!-- forge:comment ${ctx.journal.runId} ${effect.updates ?? effect.key} -->`;
  if (effect.key.startsWith("merge-blocked:") || effect.updates) {
    const id = await port.findComment(issue, marker);
    if (id !== null) {
      await port.updateComment(id, `${asData(effect.body)}

${marker}`);
      return done();
    }
    if (effect.updates) return done();
  } else if (ctx.replay && await port.findComment(issue, marker) !== null) return done();
  await port.createComment(issue, `${asData(effect.body)}

${marker}`);
  return done();
}
function trackerDue(journal, facts) {
  if (journal.status !== "running" || facts.trackerIssue === void 0 || !facts.trackerUpdatedAt) return 0;
  const last = Date.parse(facts.trackerUpdatedAt);
  const shortest = trackerDebounceMs(journal.tasks.length);
  const paced = trackerDebounceMs(journal.tasks.length, { elapsedMs: last - Date.parse(journal.createdAt), merged: journal.merged });
  return last + (paced > shortest && attentionOf(journal) === facts.trackerAttention ? paced : shortest);
}
var FINAL_PR_WAIT_MS = 1e3;
var FINAL_PR_PATIENCE_MS = 5 * 6e4;
async function updateTracker2(_effect, ctx) {
  const { port } = ctx;
  const final = ctx.journal.status !== "running";
  const sinceEnd = ctx.now - Date.parse(ctx.journal.completedAt ?? "");
  if (final && ctx.facts.finalPr === void 0 && ctx.journal.outbox.some((e) => e.kind === "OpenFinalPullRequest") && !(sinceEnd > FINAL_PR_PATIENCE_MS))
    return { kind: "later", reason: "the run's final PR is being opened", retryInMs: FINAL_PR_WAIT_MS };
  const due = trackerDue(ctx.journal, ctx.facts);
  if (ctx.now < due) return { kind: "later", reason: "debounced", retryInMs: due - ctx.now + 50 };
  const body = renderTracker(ctx.journal, ctx.events, ctx.facts, ctx.port, ctx.now, ctx.config);
  const title = `Forge run ${ctx.journal.runId}: ${ctx.journal.planId} (${ctx.journal.merged}/${ctx.journal.tasks.length} merged${ctx.journal.status !== "running" ? `, ${ctx.journal.status}` : ""})`;
  let issue = ctx.facts.trackerIssue;
  if (issue === void 0 && ctx.replay) issue = await port.findIssue(LABELS.tracker, trackerMarker(ctx.journal.runId)) ?? void 0;
  if (issue === void 0) issue = await port.createIssue({ title, body, labels: [LABELS.tracker] });
  else await port.updateIssue(issue, { title, body, ...final ? { state: "closed" } : {} });
  const issues = await syncIssues(ctx, issue);
  return done(
    { issueNumber: issue },
    {
      trackerIssue: issue,
      trackerUpdatedAt: new Date(ctx.now).toISOString(),
      trackerAttention: attentionOf(ctx.journal),
      ...issues ? { issues } : {}
    }
  );
}
async function openFinalPullRequest2(_effect, ctx) {
  if (ctx.facts.finalPr !== void 0) return done({ prNumber: ctx.facts.finalPr });
  const existing = await ctx.port.findPullRequest(ctx.journal.integrationBranch, "all");
  const pr = existing ?? await ctx.port.createPullRequest({
    head: ctx.journal.integrationBranch,
    base: ctx.journal.baseBranch,
    title: `Forge run ${ctx.journal.runId}: ${ctx.journal.planId}`,
    body: renderFinalPr(ctx.journal, ctx.facts, await finalFigures(ctx), await baseMergeMethod(ctx))
  });
  return done({ prNumber: pr.number }, { finalPr: pr.number });
}
async function baseMergeMethod(ctx) {
  try {
    const method = finalMergeMethod(await ctx.port.branchRules(ctx.journal.baseBranch));
    if (method !== "rebase") return method;
    const integration = ctx.journal.integrationBranch;
    const { method: tasks } = await cachedBranchRules(
      ctx.port,
      integration,
      ctx.now,
      RULES_TTL_MS,
      () => ctx.port.branchRules(integration)
    );
    return tasks === "merge" ? "squash" : "rebase";
  } catch {
    return void 0;
  }
}
async function finalFigures(ctx) {
  try {
    const events = await readRunEvents(ctx.port, ctx.journal.runId, ctx.events);
    const telemetry = appTelemetry(ctx.config);
    if (telemetry) traceRun(telemetry, ctx.journal, events, ctx.now);
    return outcomeFigures(ctx.journal, events, ctx.config);
  } catch {
    return void 0;
  }
}
async function commentTarget(target, ctx) {
  if (target.on === "tracker") return ctx.facts.trackerIssue;
  if (target.on === "cr") return ctx.journal.changeRequests.find((c) => c.id === target.crId)?.issueNumber;
  const t = task(ctx, target.taskId);
  if (!t) return ctx.facts.trackerIssue;
  const a = attemptNumbered(t, target.attempt);
  if (a?.prNumber !== void 0) return a.prNumber;
  const pr = await ctx.port.findPullRequest(a?.branch ?? branchName(ctx.config, ctx.journal.runId, t.id, target.attempt));
  return pr?.number ?? ctx.facts.trackerIssue;
}

// src/core/protected-paths.ts
var import_picomatch2 = __toESM(require_picomatch(), 1);
var PR_FILES_LIMIT = 3e3;
function protectedChanges(files, config2) {
  const isProtected = (0, import_picomatch2.default)([...PROTECTED_PATHS, ...config2.protected_paths], { dot: true });
  const hit = files.filter((f) => isProtected(f));
  if (files.length >= PR_FILES_LIMIT) hit.push(`(more than ${PR_FILES_LIMIT} files: GitHub lists no more, so the rest cannot be checked)`);
  return hit;
}

// src/app/commands.ts
var SLASH_COMMANDS = [
  "retry",
  "fix",
  "steer",
  "status",
  "pause",
  "resume",
  "cancel",
  "approve",
  "reject",
  "budget",
  "run",
  "plan",
  "help"
];
var MAX_BODY = 65536;
function commentOpenAfter(line, open) {
  let at = 0;
  for (; ; ) {
    if (open) {
      const close = line.indexOf("-->", at);
      if (close < 0) return true;
      open = false;
      at = close + 3;
    } else {
      const start = line.indexOf("<!--", at);
      if (start < 0) return false;
      open = true;
      at = start + 4;
    }
  }
}
function commandLine(lines) {
  let fence;
  let comment = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (comment) {
      comment = commentOpenAfter(line, true);
      continue;
    }
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = void 0;
      continue;
    }
    if (marker) {
      fence = marker;
      continue;
    }
    if (/^ {0,3}\/forge(\s|$)/.test(line)) return i;
    comment = commentOpenAfter(line, false);
  }
  return -1;
}
function parseCommand(body) {
  const lines = body.slice(0, MAX_BODY).replace(/\r\n/g, "\n").split("\n");
  const at = commandLine(lines);
  if (at < 0) return void 0;
  const first = lines[at].trim().slice("/forge".length).trim();
  const [word = "help", ...args] = first.split(/\s+/).filter(Boolean);
  const name = word.toLowerCase();
  if (!SLASH_COMMANDS.includes(name)) return { name: "unknown", word };
  const afterWord = first.slice(first.toLowerCase().indexOf(name) + name.length).trim();
  const more = lines.slice(at + 1).join("\n").trim();
  return { name, args, rest: [afterWord, more].filter(Boolean).join("\n") };
}
var WRITE_PERMISSIONS = /* @__PURE__ */ new Set(["admin", "maintain", "write"]);
var HELP = [
  "**Forge commands** (people with write access):",
  "",
  "| Command | Where | What it does |",
  "|---|---|---|",
  "| `/forge retry [task] [message]` | task PR, tracker | Retry a failed, stale or waiting task; the message reaches the next attempt (an answer to the agent's question). |",
  "| `/forge retry failed [message]` | tracker | Retry every failed or exhausted task of the run at once (after an outage, a broken dependency fixed); tasks waiting for an answer, a Change Request or budget keep waiting for their own command. |",
  "| `/forge fix [message]` | task PR | Revise the PR on its branch: the agent answers the message (and any review waiting), within `review.max_iterations`. |",
  "| `/forge steer [task] <message>` | a running task's PR, tracker | Tell the running agent something: it reaches the agent at the start of its next stage. |",
  "| `/forge status` | anywhere | Reply with the run's state. |",
  "| `/forge pause` / `/forge resume` | tracker, task PR | Stop or restart dispatching; agents at work finish. |",
  "| `/forge cancel` | tracker, task PR | Cancel the run and its running agents. |",
  "| `/forge approve` / `/forge reject` | Change Request issue, refinery PR | Decide a Change Request (review mode), or approve a gated refinery's merge. |",
  "| `/forge budget [task] +<dollars>` | tracker, task PR | Raise the run's budget (a run paused for its budget resumes), or one task's (a task stopped at its budget goes again). |",
  "| `/forge run <planId>` | any issue | Start a run of `.forge/plans/<planId>/`. |",
  '| `/forge plan` | an issue | With sub-issues: the plan is built from the tree (a task per sub-issue, edges from "blocked by"), as a PR. Otherwise a Captain agent writes a plan from the issue, as a PR. |',
  "| `/forge help` | anywhere | This table. |"
].join("\n");

// src/app/effects/merge-queue.ts
var QUEUE_POLL_MS = 2e4;
async function throughQueue(ctx, effect, q, refused2) {
  const key = `${q.t.id}:${q.t.attempts}`;
  const seen = ctx.facts.mergeGroups ?? {};
  const remember2 = (group) => seen[key]?.group === group && seen[key]?.head === q.head ? {} : { learned: { mergeGroups: { ...seen, [key]: { head: q.head, group } } } };
  const entry = await ctx.port.queue.entry(q.number);
  if (entry) {
    if (!entry.groupSha)
      return {
        kind: "later",
        reason: `#${q.number} waits in the merge queue (${entry.state}, position ${entry.position + 1})`,
        retryInMs: QUEUE_POLL_MS
      };
    const red = await redGroup(ctx, q, entry.groupSha);
    if (red) return red;
    return {
      kind: "later",
      reason: `#${q.number} is being tested in the merge queue (group ${entry.groupSha.slice(0, 7)}, ${entry.state})`,
      retryInMs: QUEUE_POLL_MS,
      ...remember2(entry.groupSha)
    };
  }
  const last = seen[key]?.head === q.head ? seen[key].group : await lastGroup(ctx, q);
  if (last) {
    const red = await redGroup(ctx, q, last);
    if (red) return red;
  }
  if (ctx.stillWanted && !ctx.stillWanted()) return { kind: "later", reason: "the merge left the outbox while it was being checked" };
  const res = await ctx.port.queue.enqueue(q.number, q.head);
  if (res.kind === "refused") return refused2(res.message);
  const { groupSha } = res.entry;
  return {
    kind: "later",
    reason: `#${q.number} entered ${ctx.journal.integrationBranch}'s merge queue at ${q.head.slice(0, 7)} (${effect.branch})`,
    retryInMs: QUEUE_POLL_MS,
    ...groupSha ? remember2(groupSha) : {}
  };
}
async function lastGroup(ctx, q) {
  if (q.required.all.length === 0) return void 0;
  const heads = await ctx.port.queue.groupHeads(`gh-readonly-queue/${ctx.journal.integrationBranch}/pr-${q.number}-${q.head}`);
  return heads[0];
}
async function redGroup(ctx, q, group) {
  if (q.required.all.length === 0) return void 0;
  const ci = await ctx.port.ciChecks(group, q.required.all);
  if (ciVerdict(ci, q.required.configured) !== "red") return void 0;
  return {
    kind: "later",
    reason: `required checks failed on the merge group ${group.slice(0, 7)}: ${ci.failing.map((c) => c.name).join(", ")}`,
    inputs: [
      checksFailedInput({ taskId: q.t.id, attempt: q.t.attempts }, q.head, onGroup(ci.failing, group, ctx.journal.integrationBranch))
    ]
  };
}

// src/app/effects/merge.ts
var MERGE_RETRY_MS = 300;
async function mergePullRequest2(effect, ctx) {
  const { port } = ctx;
  const t = task(ctx, effect.taskId);
  const a = attemptNumbered(t, effect.attempt);
  const known = effect.prNumber ?? a?.prNumber;
  const current = known !== void 0 ? await port.getPullRequestWithFiles(known) : await port.findPullRequest(effect.branch) ?? (t && a ? await openMissingPull2(effect, ctx, t, a) : null);
  if (!current) return { kind: "later", reason: `no pull request for ${effect.branch} yet` };
  if (current.merged && current.mergeSha) return done({ mergeSha: current.mergeSha, prNumber: current.number });
  if (current.fromFork || current.headRef !== effect.branch || current.baseRef !== ctx.journal.integrationBranch)
    return {
      kind: "failed",
      error: `pull request #${current.number} is not ${effect.branch} \u2192 ${ctx.journal.integrationBranch} in this repository; Forge merges only a task's own pull request`
    };
  const number = current.number;
  if (t && a) {
    const updating = await awaitBranchUpdate(ctx, effect, t, current.headSha);
    if (updating) return updating;
  }
  const verified = t && a?.revision.pushedSha !== void 0 ? prHead(t) : void 0;
  const head = verified ?? current.headSha;
  if (a?.revision.approvedHead !== head) {
    const held = protectedChanges(current.files ?? await port.listPullRequestFiles(number), ctx.config);
    if (held.length) return done({ held, prNumber: number });
  }
  const base = ctx.journal.integrationBranch;
  let rules;
  const readRules = () => rules ??= port.branchRules(base);
  const required = await requiredChecks(
    port,
    base,
    ctx.config.required_checks,
    ctx.now,
    RULES_TTL_MS,
    () => readRuledChecks(port, base, readRules)
  );
  if (required.all.length) {
    const ci = await port.ciChecks(head, required.all);
    const verdict = ciVerdict(ci, required.configured);
    if (verdict === "wait") return { kind: "later", reason: `required checks of ${head.slice(0, 7)} are not done` };
    const wait2 = verdict === "go" ? graceLeft(port, head, ci.missing, ctx.now) : 0;
    if (wait2 > 0)
      return {
        kind: "later",
        reason: `required checks ${ci.missing.join(", ")} of ${head.slice(0, 7)} have not reported yet`,
        retryInMs: wait2
      };
    if (verdict === "red")
      return {
        kind: "later",
        reason: `required checks failed: ${ci.failing.map((c) => c.name).join(", ")}`,
        ...t && a && head === prHead(t) ? { inputs: [checksFailedInput({ taskId: t.id, attempt: t.attempts }, head, ci.failing)] } : {}
      };
  }
  if (t && a) {
    const unseen = await unseenChangeRequests(ctx, t, a, number, head, current.changeRequests);
    if (unseen.length)
      return { kind: "later", reason: `a request for changes of ${head.slice(0, 7)} is not in the journal yet`, inputs: unseen };
  }
  const title = t ? `forge(${t.id}): ${ctx.journal.plan.nodes.find((n2) => n2.id === t.id)?.title || t.id}` : `forge: ${effect.taskId}`;
  if (ctx.stillWanted && !ctx.stillWanted()) return { kind: "later", reason: "the merge left the outbox while it was being checked" };
  const { method, rules: branchRules2 } = await cachedBranchRules(port, base, ctx.now, RULES_TTL_MS, readRules);
  const queued = async () => {
    const pr2 = await port.getPullRequest(number);
    if (pr2.merged && pr2.mergeSha) return done({ mergeSha: pr2.mergeSha, prNumber: number });
    return throughQueue(
      ctx,
      effect,
      { t, number, head, required },
      async (message) => refused(ctx, effect, t, message, method, { number, head: verified, mergeable: pr2.mergeable }, branchRules2)
    );
  };
  if (t && branchRules2.some((r) => r.type === "merge_queue")) return queued();
  const res = await port.mergePullRequest(number, { ...verified ? { sha: verified } : {}, method, title });
  if (res.kind === "merged") return done({ mergeSha: res.sha, prNumber: number });
  if (res.kind === "base_moved") return { kind: "later", reason: res.message, retryInMs: MERGE_RETRY_MS };
  if (t && res.kind === "not_mergeable" && ruleTypesOf(res.message, branchRules2).includes("merge_queue")) return queued();
  const pr = await port.getPullRequest(number);
  if (pr.merged && pr.mergeSha) return done({ mergeSha: pr.mergeSha, prNumber: number });
  if (res.kind === "not_mergeable")
    return refused(ctx, effect, t, res.message, method, { number, head: verified, mergeable: pr.mergeable }, branchRules2);
  if (pr.state === "open" && verified && pr.headSha === verified)
    return { kind: "later", reason: "GitHub answered 409 for the verified head; trying again", retryInMs: MERGE_RETRY_MS };
  return {
    kind: "failed",
    error: `the head of ${effect.branch} moved after it was verified (${verified?.slice(0, 7) ?? "?"} \u2192 ${pr.headSha.slice(0, 7)}); it will not be merged unverified`
  };
}
async function checkUpstream2(effect, ctx) {
  const { port } = ctx;
  const t = task(ctx, effect.taskId);
  const a = attemptNumbered(t, effect.attempt);
  if (!t || !a || t.status !== "MERGE_READY") return done({});
  const known = effect.prNumber ?? a.prNumber;
  const current = known !== void 0 ? await port.getPullRequestWithFiles(known) : await port.findPullRequest(effect.branch);
  if (!current) return { kind: "later", reason: `no pull request for ${effect.branch} yet` };
  if (current.fromFork || current.headRef !== effect.branch || current.baseRef !== ctx.journal.integrationBranch)
    return {
      kind: "failed",
      error: `pull request #${current.number} is not ${effect.branch} \u2192 ${ctx.journal.integrationBranch} in this repository`
    };
  const head = prHead(t);
  if (current.headSha !== head)
    return {
      kind: "failed",
      error: `the head of ${effect.branch} moved after it was verified (${head?.slice(0, 7) ?? "?"} \u2192 ${current.headSha.slice(0, 7)})`
    };
  const held = protectedChanges(current.files ?? await port.listPullRequestFiles(current.number), ctx.config);
  return done(held.length ? { held, prNumber: current.number } : { clean: true, prNumber: current.number });
}
async function openMissingPull2(effect, ctx, t, a) {
  const { port, journal } = ctx;
  const head = await port.branchHead(effect.branch);
  if (!head) return null;
  const title = journal.plan.nodes.find((n2) => n2.id === t.id)?.title || t.id;
  const record = a.recordSha ?? head;
  const body = [
    `The runner of attempt ${effect.attempt} did not open this pull request; Forge opened it. (A job's token may not open pull requests while the repository's Actions setting "Allow GitHub Actions to create and approve pull requests" is off: Settings \u2192 Actions \u2192 General \u2192 Workflow permissions.)`,
    "",
    `The walkthrough: \`${walkthroughPath(journal.runId, t.id, effect.attempt)}\` at ${record}.`
  ].join("\n");
  try {
    const pr = await port.createPullRequest({
      head: effect.branch,
      base: journal.integrationBranch,
      title: `forge(${t.id}): ${title}`,
      body
    });
    await port.updateIssue(pr.number, { labels: [LABELS.task] }).catch(() => void 0);
    return pr;
  } catch (e) {
    const found = await port.findPullRequest(effect.branch);
    if (found) return found;
    throw e;
  }
}
async function openPullRequest2(effect, ctx) {
  const t = task(ctx, effect.taskId);
  const a = attemptNumbered(t, effect.attempt);
  if (!t || !a || t.status !== "MERGE_READY") return done({});
  const pr = await ctx.port.findPullRequest(effect.branch) ?? await openMissingPull2(effect, ctx, t, a);
  if (!pr) return { kind: "later", reason: `no branch ${effect.branch} to open a pull request of` };
  return done({ prNumber: pr.number });
}
var REVIEWERS_CHECKED = 5;
async function unseenChangeRequests(ctx, t, a, number, head, listed) {
  const candidates = (listed ?? await ctx.port.listReviews(number)).filter((r) => r.state === "CHANGES_REQUESTED" && r.commitId === head && !r.bot && r.login && !reviewSeen(a, r.id)).slice(-REVIEWERS_CHECKED);
  const inputs = [];
  for (const r of candidates) {
    if (!WRITE_PERMISSIONS.has(await ctx.port.permission(r.login))) continue;
    inputs.push({
      kind: "review.submitted",
      taskId: t.id,
      attempt: t.attempts,
      reviewId: r.id,
      actor: r.login,
      state: "changes_requested",
      headSha: r.commitId,
      ...r.body ? { body: bounded(r.body, FEEDBACK_LIMITS.message) } : {}
    });
  }
  return inputs;
}
async function refused(ctx, effect, t, message, method, pr, rules) {
  const base = ctx.journal.integrationBranch;
  if (method === "merge" && refusesMergeCommits(message)) {
    rememberLinear(ctx.port, base, ctx.now);
    return { kind: "later", reason: `${message} (the next try squashes)`, retryInMs: MERGE_RETRY_MS };
  }
  const said = ruleRefusal(message)?.messages ?? [message];
  const named = await withRulesetNames(
    rules,
    said.flatMap((m) => ruleTypesOf(m, rules)),
    (id) => cachedRulesetName(ctx.port, id, ctx.now, RULES_TTL_MS, () => ctx.port.rulesetName(id))
  );
  const blocker = mergeBlocker(message, base, ctx.config.required_checks, named);
  const a = attemptNumbered(t, effect.attempt);
  if (blocker || !t || !a) return blocker && t && a ? blocked(t, a, blocker) : { kind: "later", reason: message };
  if (wantsUpToDate(message) && pr.head) return updateBranch(ctx, effect, t, a, pr.number, pr.head);
  if (pr.mergeable === null)
    return {
      kind: "later",
      reason: `GitHub is still computing whether ${effect.branch} merges (${message})`,
      retryInMs: BRANCH_UPDATE_POLL_MS
    };
  if (pr.mergeable === false) return blocked(t, a, conflictBlocker(t.id, effect.branch, base, message));
  return { kind: "later", reason: message };
}
function blocked(t, a, reason) {
  if (a.revision.waiting === `${MERGE_BLOCKED}${reason}`) return { kind: "later", reason };
  return { kind: "later", reason, inputs: [{ kind: "merge.blocked", taskId: t.id, attempt: t.attempts, reason }] };
}
async function updateBranch(ctx, effect, t, a, number, head) {
  const base = ctx.journal.integrationBranch;
  if (ctx.stillWanted && !ctx.stillWanted()) return { kind: "later", reason: "the merge left the outbox while it was being tried" };
  const res = await ctx.port.updatePullRequestBranch(number, head);
  switch (res.kind) {
    case "accepted":
      return {
        kind: "later",
        reason: `bringing ${effect.branch} up to date with ${base} (GitHub merges it in)`,
        retryInMs: BRANCH_UPDATE_POLL_MS,
        inputs: [{ kind: "branch.update_requested", taskId: t.id, attempt: t.attempts, from: head }]
      };
    case "conflict":
      return blocked(t, a, conflictBlocker(t.id, effect.branch, base, res.message));
    case "refused":
      return blocked(t, a, updateRefusedBlocker(effect.branch, base, res.message));
    default:
      return { kind: "later", reason: res.message, retryInMs: MERGE_RETRY_MS };
  }
}
async function awaitBranchUpdate(ctx, effect, t, current) {
  const from = branchUpdatePending(t);
  if (!from) return void 0;
  if (current === from) {
    const asked = Date.parse(t.attempt?.branchUpdate?.requestedAt ?? "");
    if (!(ctx.now - asked < BRANCH_UPDATE_WAIT_MS)) return void 0;
    return { kind: "later", reason: `waiting for GitHub to update ${effect.branch}`, retryInMs: BRANCH_UPDATE_POLL_MS };
  }
  const c = await ctx.port.commit(current);
  if (c.parents.length !== 2 || c.parents[0] !== from) return void 0;
  const relation = await ctx.port.compareCommits(c.parents[1], ctx.journal.integrationBranch);
  if (relation !== "ahead" && relation !== "identical") return void 0;
  return {
    kind: "later",
    reason: `${effect.branch} was brought up to date (${current.slice(0, 7)})`,
    retryInMs: MERGE_RETRY_MS,
    inputs: [{ kind: "branch.updated", taskId: t.id, attempt: t.attempts, from, head: current }]
  };
}

// src/app/effects/index.ts
async function runEffect(effect, ctx) {
  const handler = HANDLERS[effect.kind];
  return handler(effect, ctx);
}
function effectDue(effect, journal, facts) {
  return effect.kind === "UpdateTracker" ? trackerDue(journal, facts) : 0;
}
var HANDLERS = {
  PrepareBranch: prepareBranch2,
  DispatchAgent: dispatchAgent2,
  UpsertCheckRun: upsertCheckRun,
  MergePullRequest: mergePullRequest2,
  CheckUpstream: checkUpstream2,
  OpenPullRequest: openPullRequest2,
  OpenChangeRequest: openChangeRequest2,
  DispatchCaptain: dispatchCaptain2,
  PostComment: postComment2,
  UpdateTracker: updateTracker2,
  SpawnFollowup: spawnFollowup2,
  OpenFinalPullRequest: openFinalPullRequest2,
  CleanupBranches: cleanupBranches2,
  CancelAgent: cancelAgent2
};

// src/app/leases.ts
function withLeases(next, decided, claim, me, dueOf = () => 0) {
  const until = (e) => new Date(Math.max(me.now, dueOf(e)) + me.leaseMs).toISOString();
  const before = next.leases ?? {};
  const fresh = /* @__PURE__ */ new Set([...decided.map((e) => e.key), ...claim]);
  const leases = {};
  for (const e of next.journal.outbox) {
    const held = before[e.key];
    const othersLive = !!held && held.owner !== me.replicaId && Date.parse(held.until) > me.now;
    const mine = !othersLive && (fresh.has(e.key) || held?.owner === me.replicaId);
    if (mine) leases[e.key] = { owner: me.replicaId, until: until(e) };
    else if (held) leases[e.key] = held;
  }
  return { ...next, leases };
}
function owns(state, key, me) {
  const lease = state.leases?.[key];
  return !!lease && lease.owner === me.replicaId && Date.parse(lease.until) - me.now > me.leaseMs / 2;
}
function isFree(state, key, me) {
  const lease = state.leases?.[key];
  return !lease || Date.parse(lease.until) <= me.now || lease.owner === me.replicaId && !owns(state, key, me);
}

// src/app/rounds.ts
function sameEffect(outbox, key, ran) {
  const pending = outbox.find((e) => e.key === key);
  return !pending || ran === void 0 || JSON.stringify(pending) === ran;
}
function mergePatches(earlier, later) {
  const out = { ...earlier, ...later };
  if (earlier.checkRuns || later.checkRuns) out.checkRuns = { ...earlier.checkRuns, ...later.checkRuns };
  return out;
}
function withFacts(facts, learned) {
  if (Object.keys(learned).length === 0) return facts;
  const checkRuns = learned.checkRuns && Object.keys(learned.checkRuns).length ? { ...facts.checkRuns, ...learned.checkRuns } : facts.checkRuns;
  return { ...facts, ...learned, checkRuns };
}
function mergeRounds(a, b) {
  return { ran: new Map([...a.ran, ...b.ran]), facts: mergePatches(a.facts, b.facts) };
}

// src/app/engine/index.ts
import { randomUUID } from "node:crypto";

// src/app/engine/batches.ts
function join(batch, inputs, round3) {
  const count = inputs.length;
  batch.inputs.push(...inputs);
  if (round3) batch.round = batch.round ? mergeRounds(batch.round, round3) : round3;
  return new Promise((resolve, reject) => batch.waiters.push({ count, resolve, reject }));
}
function answer(batch, first) {
  const decisions = first ? [first] : [];
  const own = first?.rejections ?? [];
  let from = 0;
  for (const w of batch.waiters) {
    const to = from + w.count;
    w.resolve({ decisions, rejections: own.filter((r) => r.leaf >= from && r.leaf < to) });
    from = to;
  }
}

// src/app/trailers.ts
function parseTrailers(message) {
  const paragraphs = message.trimEnd().split(/\n\s*\n/);
  const last = paragraphs[paragraphs.length - 1] ?? "";
  const out = {};
  for (const line of last.split("\n")) {
    const m = /^([A-Za-z][A-Za-z0-9-]*):\s*(.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2].trim();
  }
  return out;
}

// src/app/branch-checkpoint.ts
async function readBranchCheckpoint(port, ref, head, commit) {
  const c = commit ?? await port.commit(head);
  const t = parseTrailers(c.message);
  const stage = t[TRAILERS.checkpoint];
  if (stage === void 0 || t.Run !== ref.runId || t.Task !== ref.taskId || t.Attempt !== String(ref.attempt)) return {};
  const refused2 = (why) => ({ checkpointProblem: `the checkpoint commit ${head.slice(0, 12)} ${why}` });
  if (c.parents.length !== 1) return refused2(`has ${c.parents.length} parents, not the one a checkpoint commit has`);
  const path2 = checkpointPath(ref.runId, ref.taskId, ref.attempt);
  const file = await port.readFile(path2, head);
  if (!file) return refused2(`has no ${path2}`);
  const bytes = Buffer.byteLength(file.content, "utf8");
  if (bytes > MAX_CHECKPOINT_BYTES)
    return refused2(`holds a ${path2} of ${bytes} bytes, over the ${MAX_CHECKPOINT_BYTES} a checkpoint may have`);
  let raw;
  try {
    raw = JSON.parse(file.content);
  } catch (e) {
    return refused2(`holds a ${path2} that is not JSON: ${e.message.slice(0, 200)}`);
  }
  const parsed = checkpointSchema.safeParse(raw);
  if (!parsed.success) return refused2(`holds no checkpoint: ${formatProblem(zodProblems(parsed.error, path2)[0]).slice(0, 500)}`);
  return { checkpoint: parsed.data, checkpointSha: head, pushedSha: c.parents[0] };
}

// src/app/normalize.ts
function agentWorkflowPath(config2) {
  return config2.workflow.startsWith(".github/") ? config2.workflow : `.github/workflows/${config2.workflow}`;
}
function notTheAttemptsJob(run2, expected) {
  const path2 = workflowFile(run2.path);
  if (path2 === void 0) return "its workflow file is not named";
  if (path2 !== expected.workflowPath) return `it runs ${run2.path}, not the agent workflow ${expected.workflowPath}`;
  if (run2.event !== "workflow_dispatch") return `it was started by ${run2.event}, not by a dispatch`;
  if (run2.headRepositoryId !== expected.repositoryId) return "its head commit is not from this repository";
  if (expected.recordedRunId !== void 0 && run2.id !== expected.recordedRunId)
    return `the attempt's job is workflow run ${expected.recordedRunId}`;
  return void 0;
}
function workflowFile(path2) {
  return path2 ? path2.replace(/@.*$/, "") : void 0;
}
function recordOf(message) {
  const t = parseTrailers(message);
  const runId = t[TRAILERS.run];
  const taskId = t[TRAILERS.task];
  const attempt = Number(t[TRAILERS.attempt]);
  const exitCode = Number(t[TRAILERS.exit]);
  const iteration = t[TRAILERS.iteration] === void 0 ? 0 : Number(t[TRAILERS.iteration]);
  if (!runId || !taskId || !Number.isInteger(attempt) || attempt < 1 || !Number.isInteger(exitCode)) return void 0;
  if (!Number.isInteger(iteration) || iteration < 0) return void 0;
  return { runId, taskId, attempt, exitCode, iteration };
}
async function readResult(port, ref, sha) {
  const path2 = resultPath(ref.runId, ref.taskId, ref.attempt);
  const file = await port.readFile(path2, sha);
  if (!file) return { ok: false, error: `the record commit has no ${path2}` };
  let raw;
  try {
    raw = JSON.parse(file.content);
  } catch (e) {
    return { ok: false, error: `${path2} is not JSON: ${e.message}` };
  }
  let parsed = agentResultSchema.safeParse(raw);
  let checkpointProblem;
  if (!parsed.success && parsed.error.issues.every((i) => i.path[0] === "checkpoint") && raw && typeof raw === "object") {
    checkpointProblem = formatProblem(zodProblems(parsed.error, path2)[0]);
    const { checkpoint: _refused, ...rest } = raw;
    parsed = agentResultSchema.safeParse(rest);
  }
  if (!parsed.success) {
    return { ok: false, error: formatProblem(zodProblems(parsed.error, path2)[0]) };
  }
  const r = parsed.data;
  if (r.run_id !== ref.runId || r.task_id !== ref.taskId || r.attempt !== ref.attempt)
    return { ok: false, error: `${path2} reports ${r.run_id}/${r.task_id}/${r.attempt}, not ${ref.runId}/${ref.taskId}/${ref.attempt}` };
  return { ok: true, result: r, ...checkpointProblem !== void 0 ? { checkpointProblem } : {} };
}
async function recordInput(port, ref, headSha, commit) {
  const c = commit ?? await port.commit(headSha);
  const record = recordOf(c.message);
  if (!record || record.runId !== ref.runId || record.taskId !== ref.taskId || record.attempt !== ref.attempt) return void 0;
  const input = finishedInput(ref, await readResult(port, ref, headSha), headSha, c.parents[0]);
  return input.kind === "agent.finished" ? { ...input, iteration: record.iteration } : input;
}
async function endedJobInput(port, ref, branch, run2, iteration = 0) {
  const head = await port.branchHead(branch);
  const commit = head ? await port.commit(head) : void 0;
  const finished = head ? await recordInput(port, ref, head, commit) : void 0;
  if (finished && (finished.kind !== "agent.finished" || (finished.iteration ?? 0) >= iteration)) return finished;
  const { taskId, attempt } = ref;
  const cp = head ? await readBranchCheckpoint(port, ref, head, commit).catch(() => ({})) : {};
  const conclusion = run2.conclusion ?? "no conclusion";
  const jobs = await port.endedJobs(run2.id);
  const log = jobs.failed?.htmlUrl ? { logUrl: jobs.failed.htmlUrl } : {};
  if (jobs.runnerLost)
    return {
      kind: "agent.lost",
      taskId,
      attempt,
      workflowRunId: run2.id,
      reason: `the job's runner went away mid-step (${conclusion})`,
      runnerLost: true,
      ...log,
      ...cp
    };
  const refusal2 = jobs.errors.map(ruleRefusal).find((r) => r !== void 0);
  if (refusal2) {
    const read = await port.branchRules(branch).catch(() => []);
    const types = refusal2.messages.flatMap((m) => ruleTypesOf(m, read));
    const rules = await withRulesetNames(read, types, (id) => port.rulesetName(id));
    const why = pushBlockedReason(refusal2, branch, rules);
    return {
      kind: "agent.lost",
      taskId,
      attempt,
      workflowRunId: run2.id,
      reason: `the job ended (${conclusion}): GitHub refused its push`,
      blockedBy: why.length > 2e3 ? `${why.slice(0, 1990)} \u2026` : why,
      ...log
    };
  }
  const step = jobs.failed?.step ? ` at the step "${jobs.failed.step}"` : "";
  return {
    kind: "agent.lost",
    taskId,
    attempt,
    workflowRunId: run2.id,
    reason: `the job ended (${conclusion})${step} without a result`,
    ...log,
    ...cp
  };
}
function finishedInput(ref, read, recordSha, recordParent) {
  if (!read.ok)
    return { kind: "agent.finished", taskId: ref.taskId, attempt: ref.attempt, exitCode: EXIT_CODES.FAILURE, error: read.error, recordSha };
  const r = read.result;
  const w = r.walkthrough;
  return {
    kind: "agent.finished",
    taskId: ref.taskId,
    attempt: ref.attempt,
    exitCode: r.exit_code,
    recordSha,
    ...recordParent ? { pushedSha: recordParent } : {},
    ...w ? {
      walkthrough: {
        status: w.status,
        confidence: w.confidence,
        headSha: w.head_sha,
        filesChanged: w.files_changed.map((f) => f.path),
        risks: w.risks,
        followups: w.followups
      }
    } : {},
    ...r.squashed?.length ? { squashed: r.squashed.map((q) => ({ branch: q.branch, head: q.head_sha, commit: q.commit_sha })) } : {},
    ...r.checkpoint ? { checkpoint: r.checkpoint } : {},
    ...read.checkpointProblem !== void 0 ? { checkpointProblem: read.checkpointProblem } : {},
    ...r.error ? { error: r.error } : {},
    ...r.refinement ? { refinement: r.refinement } : {},
    ...r.question ? { question: r.question } : {},
    ...r.rate_limited_until ? { rateLimitedUntil: r.rate_limited_until } : {},
    ...spendOf(r),
    ...r.budget_exceeded ? {
      budgetExceeded: {
        ...r.budget_exceeded.limit_usd !== void 0 ? { limitUsd: r.budget_exceeded.limit_usd } : {},
        ...r.budget_exceeded.limit_tokens !== void 0 ? { limitTokens: r.budget_exceeded.limit_tokens } : {},
        ...r.budget_exceeded.spent_usd !== void 0 ? { spentUsd: r.budget_exceeded.spent_usd } : {},
        ...r.budget_exceeded.spent_tokens !== void 0 ? { spentTokens: r.budget_exceeded.spent_tokens } : {}
      }
    } : {},
    ...r.exit_code === EXIT_CODES.NEEDS_ESCALATION ? { changeRequest: changeRequestOf(ref, r) } : {}
  };
}
function changeRequestOf(ref, r) {
  const path2 = r.change_request_path ? { path: r.change_request_path } : {};
  const cr = r.change_request;
  if (!cr) return { title: changeRequestTitle(ref.taskId), reason: r.error ?? "escalation", affectedTasks: [ref.taskId], ...path2 };
  return {
    title: cr.title,
    reason: cr.reason,
    affectedTasks: cr.affected_tasks.length ? cr.affected_tasks : [ref.taskId],
    suggestedAction: cr.suggested_action,
    priority: cr.priority,
    ...path2
  };
}
async function withContainment(port, journal, input) {
  if (input.kind !== "agent.finished" || input.uncontainedUpstreams !== void 0 || !input.recordSha) return input;
  if (!succeeded(input.exitCode)) return input;
  const k = journal.plan.nodes.findIndex((n2) => n2.id === input.taskId);
  const node = journal.plan.nodes[k];
  const t = journal.tasks[k];
  if (!node || !t || node.kind !== "refinery" || t.status !== "RUNNING" || t.attempts !== input.attempt) return input;
  const recordSha = input.recordSha;
  const missing = await Promise.all(
    node.dependencies.map(async (dep) => {
      const d = journal.tasks.find((x) => x.id === dep);
      const head = d?.status === "MERGE_READY" ? prHead(d) : void 0;
      if (!head) return false;
      const squash = input.squashed?.find((q) => q.branch === d?.attempt?.branch && q.head === head);
      const status = await port.compareCommits(squash?.commit ?? head, recordSha);
      return status !== "ahead" && status !== "identical";
    })
  );
  return { ...input, uncontainedUpstreams: node.dependencies.filter((_, i) => missing[i]) };
}
function touchedPlans(commits) {
  const plans = /* @__PURE__ */ new Map();
  for (const c of commits) {
    for (const path2 of [...c.added ?? [], ...c.modified ?? [], ...c.removed ?? []]) {
      const p = parsePlanPath(path2);
      if (!p) continue;
      const files = plans.get(p.planId) ?? /* @__PURE__ */ new Set();
      files.add(p.file);
      plans.set(p.planId, files);
    }
  }
  return plans;
}
function spendOf(r) {
  const agentMs = r.agent_ms ?? Date.parse(r.finished_at) - Date.parse(r.started_at);
  const tokens = r.tokens ? r.tokens.input + r.tokens.output : void 0;
  const spend = {
    ...r.cost_usd !== void 0 ? { usd: r.cost_usd } : {},
    ...tokens !== void 0 ? { tokens } : {},
    ...Number.isFinite(agentMs) && agentMs >= 0 ? { agentMs } : {}
  };
  return Object.keys(spend).length ? { spend } : {};
}

// src/app/engine/containment.ts
async function checkContainment(port, log, runId, journal, input) {
  try {
    return await withContainment(port, journal, input);
  } catch (e) {
    if (input.kind !== "agent.finished") throw e;
    log.warn(
      { runId, taskId: input.taskId, attempt: input.attempt, err: e.message },
      "could not compare a refinery's head with its upstreams; its result waits"
    );
    return { kind: "agent.heartbeat", taskId: input.taskId, attempt: input.attempt };
  }
}

// src/app/engine/silent-checkpoints.ts
var CHECKPOINT_READS_AT_ONCE = 4;
async function withSilentCheckpoints(port, log, run2, inputs, now) {
  const first = inputs.findIndex((i) => i.kind === "tick");
  if (first < 0 || checkpointReadsAt(run2.journal, run2.config, now).length === 0) return inputs;
  const before = first > 0 ? decide(run2.journal, { kind: "batch", inputs: inputs.slice(0, first) }, now, run2.config).journal : run2.journal;
  const silent = checkpointReadsAt(before, run2.config, now);
  if (silent.length === 0) return inputs;
  const checkpoints = [];
  for (let k = 0; k < silent.length; k += CHECKPOINT_READS_AT_ONCE)
    checkpoints.push(...await Promise.all(silent.slice(k, k + CHECKPOINT_READS_AT_ONCE).map((a) => readOne(port, log, run2.runId, a))));
  return inputs.map((input, k) => k === first ? { kind: "tick", checkpoints } : input);
}
async function readOne(port, log, runId, a) {
  const ref = { taskId: a.taskId, attempt: a.attempt };
  try {
    const head = await port.branchHead(a.branch);
    return { ...ref, ...head ? await readBranchCheckpoint(port, { runId, ...ref }, head) : {} };
  } catch (e) {
    log.warn(
      { runId, ...ref, branch: a.branch, err: e.message },
      "could not read a silent attempt's checkpoint; its retry resumes from the branch head"
    );
    return ref;
  }
}

// src/app/engine/effects-runner.ts
function laneOf(effect) {
  if (effect.kind in RUN_LANE_ORDER) return "\0run";
  return "taskId" in effect ? `${effect.taskId}:${"attempt" in effect ? effect.attempt : ""}` : effect.key;
}
var RUN_LANE_ORDER = { OpenFinalPullRequest: 0, UpdateTracker: 1 };
var EffectRunner = class {
  #host;
  /** Effect keys decided in this process (not replayed from a stored outbox). */
  #fresh = /* @__PURE__ */ new Set();
  /** Keys of the effects being carried out, per run: taken from start until their outcome's turn ends. */
  #running = /* @__PURE__ */ new Map();
  /**
   * Keys of effects deferred (GitHub not ready) since the run's last outside fact, per run: the
   * outcomes of other effects do not start them again — a webhook, a timer, the reconciler or an
   * explicit flush does.
   */
  #deferred = /* @__PURE__ */ new Map();
  /** The last piece of effect work per run and task, so that one task's effects keep their order. */
  #lanes = /* @__PURE__ */ new Map();
  constructor(host) {
    this.#host = host;
  }
  /** An effect decided in this process: its first try is not a replay. */
  markFresh(runId, key) {
    this.#fresh.add(`${runId}:${key}`);
  }
  /** The outbox's effects not under way in this process; with `retryDeferred`, deferred ones again too. */
  pending(runId, outbox, retryDeferred) {
    const running = this.#running.get(runId) ?? /* @__PURE__ */ new Set();
    this.#running.set(runId, running);
    const deferred = this.#deferred.get(runId) ?? /* @__PURE__ */ new Map();
    this.#deferred.set(runId, deferred);
    if (retryDeferred) deferred.clear();
    return outbox.filter((e) => !running.has(e.key) && deferred.get(e.key) !== JSON.stringify(e));
  }
  /** The keys of effects whose outcomes a turn took: free to start again. */
  release(runId, keys) {
    const running = this.#running.get(runId);
    if (running) for (const key of keys) running.delete(key);
  }
  /**
   * Whether the run still wants `effect` — the very one, same key and content — by its journal as
   * last decided, not by the snapshot its start was given: a later turn may have dropped it (a merge
   * decided before a review that starts a revision) or replaced it while it waited in its lane or at
   * GitHub. Unknown (the journal not held here): wanted.
   */
  #wanted(runId, effect) {
    const outbox = this.#host.outbox(runId);
    if (!outbox) return true;
    const current = outbox.find((e) => e.key === effect.key);
    return current !== void 0 && JSON.stringify(current) === JSON.stringify(effect);
  }
  /** Start `mine` (pending effects this process owns), each in its task's lane. */
  start(runId, loaded, mine) {
    const running = this.#running.get(runId);
    const lanes = /* @__PURE__ */ new Map();
    for (const effect of mine) {
      const lane = laneOf(effect);
      lanes.set(lane, [...lanes.get(lane) ?? [], effect]);
      running.add(effect.key);
    }
    const ranked = (e) => RUN_LANE_ORDER[e.kind] ?? 0;
    lanes.get("\0run")?.sort((a, b) => ranked(a) - ranked(b));
    const conflicts = /* @__PURE__ */ new Map();
    const squash = /* @__PURE__ */ new Map();
    const carried = [...lanes].map(([lane, effects]) => {
      const laneKey = `${runId}\0${lane}`;
      const done2 = (this.#lanes.get(laneKey) ?? Promise.resolve()).then(
        () => this.#carryOut(runId, effects, loaded, { conflicts, squash })
      );
      const settled = done2.catch(() => void 0);
      this.#lanes.set(laneKey, settled);
      void settled.finally(() => this.#lanes.get(laneKey) === settled && this.#lanes.delete(laneKey));
      return done2;
    });
    if (carried.length === 0) return;
    const work = Promise.all(carried).then((outs) => {
      const acks = outs.flatMap((o) => o.acks);
      const round3 = outs.map((o) => o.round).reduce(mergeRounds);
      if (!acks.length && !Object.keys(round3.facts).length) return void 0;
      return this.#host.enqueue(runId, acks, round3).then(() => {
        if (Object.keys(round3.facts).length) this.#host.learned?.(runId, round3.facts);
      });
    }).catch((e) => this.#host.log.warn({ runId, err: e.message }, "effects failed; they stay in the outbox")).finally(() => this.#host.work.delete(work));
    this.#host.work.add(work);
  }
  /**
   * One task's effects, in order. Each outcome is an acknowledgement for a later turn, or — deferred
   * — nothing: its key is freed at once, so the next turn (a webhook, a timer, the reconciler) starts
   * it again.
   */
  async #carryOut(runId, effects, loaded, prepared) {
    const running = this.#running.get(runId);
    const acks = [];
    let learned = {};
    const ran = /* @__PURE__ */ new Map();
    let stopped = false;
    const deferred = this.#deferred.get(runId);
    for (const effect of effects) {
      if (stopped) {
        running.delete(effect.key);
        deferred.set(effect.key, JSON.stringify(effect));
        continue;
      }
      if (!this.#wanted(runId, effect)) {
        running.delete(effect.key);
        this.#host.log.info({ runId, effect: effect.key }, "effect no longer in the outbox; not carried out");
        this.#host.flushLater(runId, 0);
        continue;
      }
      const outcome = await this.#run(runId, effect, loaded, withFacts(loaded.state.facts, learned), prepared);
      if (outcome.learned) learned = mergePatches(learned, outcome.learned);
      if (outcome.inputs) acks.push(...outcome.inputs);
      if (outcome.kind === "done") acks.push({ kind: "effect.done", key: effect.key, result: outcome.result });
      else if (outcome.kind === "failed") acks.push({ kind: "effect.failed", key: effect.key, error: outcome.error });
      else if (!this.#wanted(runId, effect)) {
        running.delete(effect.key);
        this.#host.log.info({ runId, effect: effect.key, reason: outcome.reason }, "effect no longer in the outbox; not carried out");
        this.#host.flushLater(runId, 0);
      } else {
        running.delete(effect.key);
        deferred.set(effect.key, JSON.stringify(effect));
        this.#host.log.info({ runId, effect: effect.key, reason: outcome.reason }, "effect deferred");
        if (outcome.retryInMs !== void 0) this.#host.flushLater(runId, outcome.retryInMs);
      }
      if (outcome.kind !== "later") ran.set(effect.key, JSON.stringify(effect));
      if (outcome.kind !== "done" && effect.kind === "PrepareBranch") stopped = true;
    }
    return { acks, round: { ran, facts: learned } };
  }
  async #run(runId, effect, loaded, facts, prepared) {
    const { state } = loaded;
    const prefetchedHead = this.#host.prefetches.take(runId, effect);
    try {
      const outcome = await runEffect(effect, {
        ...prefetchedHead ? { prefetchedHead } : {},
        port: this.#host.port,
        journal: state.journal,
        config: state.config,
        facts,
        events: state.events.tail,
        replay: !this.#fresh.has(`${runId}:${effect.key}`),
        now: this.#host.now(),
        ...prepared,
        stillWanted: () => this.#wanted(runId, effect)
      });
      this.#fresh.delete(`${runId}:${effect.key}`);
      return outcome;
    } catch (e) {
      this.#fresh.delete(`${runId}:${effect.key}`);
      const wait2 = rateLimitWaitMs(e, this.#host.now());
      this.#host.log.warn(
        { runId, effect: effect.key, err: e.message, ...wait2 !== void 0 ? { rateLimitedForMs: wait2 } : {} },
        wait2 !== void 0 ? "effect refused by a GitHub rate limit; it stays in the outbox until the wait is over" : "effect failed; it stays in the outbox"
      );
      return { kind: "later", reason: e.message, ...wait2 !== void 0 ? { retryInMs: wait2 + 100 } : {} };
    }
  }
  /** Forget which effects were decided here (a restart). */
  forget() {
    this.#fresh.clear();
  }
};

// src/core/same-json.ts
function sameJson(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return JSON.stringify(a) === JSON.stringify(b);
  if (hasToJson(a) || hasToJson(b)) return JSON.stringify(a) === JSON.stringify(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i] ?? null, b[i] ?? null)) return false;
    return true;
  }
  const x = a;
  const y = b;
  let fields = 0;
  for (const k of Object.keys(x)) {
    if (!shown(x[k])) continue;
    fields++;
    if (!Object.prototype.hasOwnProperty.call(y, k) || !shown(y[k]) || !sameJson(x[k], y[k])) return false;
  }
  for (const k of Object.keys(y)) if (shown(y[k])) fields--;
  return fields === 0;
}
var shown = (v) => v !== void 0 && typeof v !== "function" && typeof v !== "symbol";
var hasToJson = (v) => typeof v.toJSON === "function";

// src/app/engine/journal-writes.ts
function journalUnchanged(before, after) {
  return sameJson(before, after);
}
function commitMessage(runId, d) {
  const kinds = [...new Set(d.events.map((e) => e.type))].slice(0, 4).join(", ");
  return `forge: ${runId} ${kinds || "journal"} (seq ${d.journal.seq})`;
}

// src/app/engine/prefetches.ts
var PREFETCH_TTL_MS = 6e4;
var Prefetches = class {
  #port;
  /** Heads of the branches new task branches are cut from, read while their decision is written (`prefetch`). */
  #prefetched = /* @__PURE__ */ new Map();
  #clock;
  constructor(port, clock) {
    this.#port = port;
    this.#clock = clock;
  }
  /**
   * Starts reading the branch each new task branch will be cut from, beside the journal write that
   * records the decision: the merge → next dispatch path then waits for the write and the branch's
   * creation, not for a read in between. Taken once, by the effect's first try within a minute.
   */
  prefetch(runId, effects) {
    const now = this.#clock.now();
    for (const [key, p] of this.#prefetched) if (now - p.at > PREFETCH_TTL_MS) this.#prefetched.delete(key);
    for (const e of effects) {
      if (e.kind !== "PrepareBranch") continue;
      const head = this.#port.branchHead(e.from).catch(() => null);
      this.#prefetched.set(`${runId}:${e.key}`, { head, at: now });
    }
  }
  take(runId, effect) {
    const key = `${runId}:${effect.key}`;
    const p = this.#prefetched.get(key);
    this.#prefetched.delete(key);
    return p && this.#clock.now() - p.at <= PREFETCH_TTL_MS ? p.head : void 0;
  }
  /** The heads read for effects whose write was lost. */
  drop(runId, effects) {
    for (const effect of effects) this.#prefetched.delete(`${runId}:${effect.key}`);
  }
  clear() {
    this.#prefetched.clear();
  }
};

// src/app/engine/restore.ts
var Restorer = class {
  #held;
  constructor(held) {
    this.#held = held;
  }
  /**
   * The state branch was deleted (by hand: Forge never deletes it) and a write found it gone: put it
   * back at the last journal commit this process wrote, so nothing recorded is lost. Without one
   * (the journal was read, not written, since the App started) it stays an error in the log.
   */
  async restoreMissing(runId, e) {
    if (!(e instanceof StateBranchMissingError)) return false;
    const commitSha = this.#held.cache.get(runId)?.commitSha;
    if (commitSha && await this.putBack(runId, commitSha)) return true;
    this.#held.log.error(
      { runId },
      `${e.message} and this process knows no commit to restore it from: restore the branch, or cancel the run`
    );
    return false;
  }
  /**
   * Recreate the state branch at `commitSha` and tell the run's people. The journal this process
   * holds is ahead of the restored one only by what it keeps in memory (acknowledgements, ids of
   * GitHub objects) when both come from the same blob: then it is kept.
   */
  async putBack(runId, commitSha, actor) {
    const { store, cache: cache2, dirty, log, onRestored } = this.#held;
    const restored = await store.restore(runId, commitSha);
    if (!restored) return null;
    log.warn({ runId, commitSha, actor }, "the state branch was deleted: restored at its last journal commit");
    const cached = cache2.get(runId);
    const loaded = cached && cached.blobSha === restored.blobSha ? { ...restored, state: cached.state } : restored;
    if (loaded === restored) dirty.delete(runId);
    cache2.set(runId, loaded);
    await onRestored?.(runId, loaded, actor).catch(
      (err) => log.warn({ runId, err: err.message }, "could not tell the run's tracker")
    );
    return loaded;
  }
};

// src/app/engine/types.ts
var silentLogger = { info() {
}, warn() {
}, error() {
} };
var DEFAULT_LEASE_MS = 2e4;

// src/app/engine/index.ts
var MAX_CAS_ATTEMPTS = 6;
var Engine = class {
  store;
  #port;
  #log;
  #clock;
  #onDecision;
  #onRefused;
  /** Refused journals already told (by blob). */
  #refusedTold = /* @__PURE__ */ new Set();
  /** The last journal read or written per run, so a webhook usually costs no read. */
  #cache = /* @__PURE__ */ new Map();
  #chains = /* @__PURE__ */ new Map();
  /** Per run, the batch of inputs still open to more (its turn has not come yet). */
  #batches = /* @__PURE__ */ new Map();
  /** Facts learned from effects and not yet persisted (they ride along with the next write). */
  #dirty = /* @__PURE__ */ new Set();
  #prefetches;
  #effects;
  #restorer;
  #stopped = false;
  /** Turns and effect work under way, for `idle`. */
  #work = /* @__PURE__ */ new Set();
  /** A flush scheduled for deferred effects (the tracker's debounce), per run. */
  #timers = /* @__PURE__ */ new Map();
  replicaId;
  #leaseMs;
  /** Effect leases taken over from other processes and lost compare-and-swap writes (replica figures). */
  stats = { takenOver: 0, casLost: 0, rateLimited: 0 };
  constructor(options2) {
    this.#port = options2.port;
    this.store = new RunStore(options2.port, options2.journalKey, options2.journalParts);
    this.#onRefused = options2.onRefused;
    this.#log = options2.log ?? silentLogger;
    this.#clock = options2.clock ?? realClock;
    this.#onDecision = options2.onDecision;
    this.replicaId = options2.replicaId ?? randomUUID();
    this.#leaseMs = options2.leaseMs ?? DEFAULT_LEASE_MS;
    this.#prefetches = new Prefetches(this.#port, this.#clock);
    this.#effects = new EffectRunner({
      port: this.#port,
      log: this.#log,
      now: () => this.#clock.now(),
      prefetches: this.#prefetches,
      work: this.#work,
      enqueue: (runId, acks, round3) => this.#enqueue(runId, acks, round3),
      flushLater: (runId, ms) => this.#flushLater(runId, ms),
      outbox: (runId) => this.#cache.get(runId)?.state.journal.outbox,
      ...options2.onLearned ? { learned: options2.onLearned } : {}
    });
    const held = { store: this.store, cache: this.#cache, dirty: this.#dirty, log: this.#log, onRestored: options2.onRestored };
    this.#restorer = new Restorer(held);
  }
  /** This process as a lease holder, now. */
  #holder() {
    return { replicaId: this.replicaId, leaseMs: this.#leaseMs, now: this.#clock.now() };
  }
  /** `next` with its outbox's leases (see `withLeases`): this process's decided or claimed effects are its own. */
  #leased(next, decided, claim = []) {
    return withLeases(next, decided, claim, this.#holder(), (e) => effectDue(e, next.journal, next.facts));
  }
  /** Serialise work per run inside this process. */
  #serial(runId, work) {
    const previous = this.#chains.get(runId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => void 0);
    this.#chains.set(runId, settled);
    this.#work.add(settled);
    void settled.finally(() => this.#work.delete(settled));
    return next;
  }
  async #load(runId, fresh = false) {
    if (!fresh) {
      const cached = this.#cache.get(runId);
      if (cached) return cached;
    }
    let loaded;
    try {
      loaded = await this.store.load(runId);
    } catch (e) {
      if (!(e instanceof JournalRefusedError)) throw e;
      this.#cache.delete(runId);
      if (!this.#refusedTold.has(e.blobSha)) {
        this.#refusedTold.add(e.blobSha);
        this.#log.error({ runId, reason: e.reason }, "journal refused: the run is frozen");
        await this.#onRefused?.(runId, e).catch(
          (err) => this.#log.warn({ runId, err: err.message }, "could not tell the run's tracker")
        );
      }
      return null;
    }
    if (loaded) this.#cache.set(runId, loaded);
    return loaded;
  }
  /** The current state of a run (cached), or null. */
  async state(runId) {
    return this.#serial(runId, () => this.#load(runId));
  }
  /** Start a run: state branch, journal, first decisions and their effects. Idempotent per runId. */
  async start(run2, config2, facts, fromSha) {
    return this.#serial(run2.runId, async () => {
      const existing = await this.#load(run2.runId);
      if (existing) return { decisions: [], rejections: [] };
      const d = startRun(run2, this.#clock.now(), config2);
      let loaded;
      try {
        loaded = await this.store.create(this.#leased(newStoredRun(d.journal, config2, facts, d.events), d.effects), fromSha);
      } catch (e) {
        if (e instanceof ConflictError) return { decisions: [], rejections: [] };
        throw e;
      }
      this.#cache.set(run2.runId, loaded);
      for (const e of d.effects) this.#effects.markFresh(run2.runId, e.key);
      this.#onDecision?.(run2.runId, d);
      this.#log.info({ runId: run2.runId, tasks: run2.nodes.length }, "run started");
      await this.#launch(run2.runId, true);
      return { decisions: [d], rejections: [] };
    });
  }
  /**
   * Apply facts to a run. Facts that arrive while the run is busy wait in one batch: when its turn
   * comes, the batch is decided at once — one decision, one journal write — however many webhooks
   * brought it; then the effects it asks for are started, outside the turn. Each caller gets the
   * decision and the rejections of its own inputs.
   */
  apply(runId, inputs) {
    return this.#enqueue(runId, inputs);
  }
  #enqueue(runId, inputs, round3) {
    if (inputs.length === 0 && !round3) return Promise.resolve({ decisions: [], rejections: [] });
    const open = this.#batches.get(runId);
    if (open) return join(open, inputs, round3);
    const batch = { inputs: [], waiters: [] };
    this.#batches.set(runId, batch);
    const result = join(batch, inputs, round3);
    void this.#serial(runId, async () => {
      this.#batches.delete(runId);
      try {
        const first = batch.inputs.length || batch.round ? await this.#decideAndPersist(runId, batch.inputs, batch.round) : null;
        answer(batch, first);
      } catch (e) {
        for (const w of batch.waiters) w.reject(e);
      } finally {
        if (batch.round) this.#effects.release(runId, batch.round.ran.keys());
      }
      const outside = batch.inputs.some((i) => i.kind !== "effect.done" && i.kind !== "effect.failed");
      if (batch.inputs.length)
        await this.#launch(runId, outside).catch(
          (e) => this.#log.warn({ runId, err: e.message }, "could not start the run's effects")
        );
    });
    return result;
  }
  /** Start a run's pending effects (e.g. on a timer, or after a restart). */
  async flush(runId) {
    await this.#serial(runId, () => this.#launch(runId, true));
    return { decisions: [], rejections: [] };
  }
  /** Turns waiting out a rate limit on the clock (`asleep`). */
  #asleep = 0;
  /** Turns that wait out a rate limit GitHub answered: they go on only once the clock moves. */
  get asleep() {
    return this.#asleep;
  }
  /** Whether effects are being carried out (or their outcomes wait for their turn). */
  get busy() {
    return this.#work.size > 0;
  }
  /** Resolves once no effect is being carried out and no outcome waits for its turn. */
  async idle() {
    while (this.#work.size) await Promise.all([...this.#work]);
  }
  /**
   * decide → persist, retrying on a lost compare-and-swap with a fresh read. A decision that only
   * acknowledges effects is kept in memory and persisted with the next one: re-running an
   * acknowledged effect after a crash is harmless, and it saves a write per effect.
   */
  async #decideAndPersist(runId, given, round3) {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const loaded = await this.#load(runId, attempt > 0);
      if (!loaded) {
        this.#log.warn({ runId }, "facts for an unknown run ignored");
        return null;
      }
      const state = round3 ? { ...loaded.state, facts: withFacts(loaded.state.facts, round3.facts) } : loaded.state;
      const inputs = round3 ? given.filter((i) => !("key" in i) || sameEffect(state.journal.outbox, i.key, round3.ran.get(i.key))) : given;
      if (inputs.length === 0) {
        if (state !== loaded.state) {
          this.#cache.set(runId, { ...loaded, state });
          this.#dirty.add(runId);
        }
        return null;
      }
      const now = this.#clock.now();
      const contained = await Promise.all(inputs.map((input) => checkContainment(this.#port, this.#log, runId, state.journal, input)));
      const checked = await withSilentCheckpoints(
        this.#port,
        this.#log,
        { runId, journal: state.journal, config: state.config },
        contained,
        now
      );
      const d = decide(state.journal, checked.length === 1 ? checked[0] : { kind: "batch", inputs: checked }, now, state.config);
      const next = { ...state, journal: d.journal, events: { ...state.events, tail: [...state.events.tail, ...d.events] } };
      const mustPersist = d.events.length > 0 || d.effects.length > 0 || d.transitions.length > 0;
      if (!mustPersist) {
        this.#cache.set(runId, { ...loaded, state: next });
        if (state !== loaded.state || !journalUnchanged(state.journal, d.journal)) this.#dirty.add(runId);
        return d;
      }
      try {
        this.#prefetches.prefetch(runId, d.effects);
        const saved = await this.store.save(loaded, this.#leased(next, d.effects), commitMessage(runId, d));
        this.#cache.set(runId, saved);
        this.#dirty.delete(runId);
        const pending = new Set(state.journal.outbox.map((e) => e.key));
        for (const e of d.effects) if (!pending.has(e.key)) this.#effects.markFresh(runId, e.key);
        this.#onDecision?.(runId, d);
        return d;
      } catch (e) {
        if (await this.#restorer.restoreMissing(runId, e)) continue;
        this.#prefetches.drop(runId, d.effects);
        const wait2 = rateLimitWaitMs(e, this.#clock.now());
        if (wait2 !== void 0 && !this.#stopped) {
          this.stats.rateLimited++;
          this.#log.warn(
            { runId, attempt, waitMs: wait2 },
            "journal write refused by a GitHub rate limit: writing again once the wait is over"
          );
          this.#asleep++;
          await this.#clock.sleep(Math.min(wait2, 6e4)).finally(() => this.#asleep--);
          continue;
        }
        if (!(e instanceof ConflictError)) throw e;
        this.stats.casLost++;
        this.#log.info({ runId, attempt }, "journal moved under us: re-reading and deciding again");
        this.#cache.delete(runId);
      }
    }
    throw new Error(`run ${runId}: the journal kept moving; gave up after ${MAX_CAS_ATTEMPTS} attempts`);
  }
  /**
   * Start the outbox's effects that are this process's and not under way (inside the run's turn):
   * effects whose lease ran out are claimed first with a compare-and-swap write. Each task's effects
   * run in order, after those of the task started before; their outcomes come back through
   * `#enqueue`, as inputs of a later turn.
   */
  async #launch(runId, retryDeferred) {
    if (this.#stopped) return;
    let loaded = await this.#load(runId);
    if (!loaded) return;
    const pending = this.#effects.pending(runId, loaded.state.journal.outbox, retryDeferred);
    if (pending.length === 0) return;
    const free = pending.filter((e) => isFree(loaded.state, e.key, this.#holder())).map((e) => e.key);
    if (free.length) {
      loaded = await this.#claim(runId, loaded, free);
      if (!loaded) return this.#flushLater(runId, 200);
    }
    const me = this.#holder();
    const mine = pending.filter((e) => owns(loaded.state, e.key, me));
    this.#effects.start(runId, loaded, mine);
  }
  /**
   * Take over effects whose lease ran out: one compare-and-swap write naming this process. Null when
   * another writer moved the journal first (the cache is dropped, the caller reads again).
   */
  async #claim(runId, loaded, keys) {
    const theirs = keys.filter((k) => loaded.state.leases?.[k] && loaded.state.leases[k].owner !== this.replicaId).length;
    try {
      const saved = await this.store.save(
        loaded,
        this.#leased(loaded.state, [], keys),
        `forge: ${runId} ${this.replicaId} carries out ${keys.length} effect(s)`
      );
      this.#cache.set(runId, saved);
      this.#dirty.delete(runId);
      this.stats.takenOver += theirs;
      if (theirs) this.#log.info({ runId, replica: this.replicaId, keys }, "took over effects whose lease ran out");
      return saved;
    } catch (e) {
      if (await this.#restorer.restoreMissing(runId, e)) return null;
      if (!(e instanceof ConflictError)) throw e;
      this.stats.casLost++;
      this.#cache.delete(runId);
      return null;
    }
  }
  /** Trailing edge of a debounce: flush the run again once the wait is over. */
  #flushLater(runId, ms) {
    if (this.#timers.has(runId)) return;
    const timer = this.#clock.setTimeout(() => {
      this.#timers.delete(runId);
      this.flush(runId).catch((e) => this.#log.warn({ runId, err: e.message }, "deferred flush failed"));
    }, ms);
    timer.unref();
    this.#timers.set(runId, timer);
  }
  /** Stop scheduled flushes and starting effects (shutdown); effects under way finish (`idle`). */
  stop() {
    this.#stopped = true;
    for (const t of this.#timers.values()) this.#clock.clear(t);
    this.#timers.clear();
  }
  /** Persist facts kept in memory (effect acknowledgements, ids of GitHub objects). */
  async persistDirty() {
    for (const runId of [...this.#dirty]) await this.#persist(runId, "acknowledgements");
  }
  /**
   * Record what the App learned of a run outside its effects (facts only grow), and write it: it
   * lands on the run's state in the run's turn, as an effect's would. A write lost to another
   * writer loses it (the fact is looked for again).
   */
  async record(runId, facts, what) {
    await this.#enqueue(runId, [], { ran: /* @__PURE__ */ new Map(), facts });
    await this.#persist(runId, what);
  }
  async #persist(runId, what) {
    await this.#serial(runId, async () => {
      const loaded = this.#cache.get(runId);
      if (!loaded || !this.#dirty.has(runId)) return;
      try {
        const saved = await this.store.save(loaded, this.#leased(loaded.state, []), `forge: ${runId} ${what}`);
        this.#cache.set(runId, saved);
        this.#dirty.delete(runId);
      } catch (e) {
        if (await this.#restorer.restoreMissing(runId, e)) return;
        if (!(e instanceof ConflictError)) throw e;
        this.#cache.delete(runId);
        this.#dirty.delete(runId);
      }
    });
  }
  /** A deleted state branch seen in a `push` webhook: put it back at the commit it pointed to. */
  async restore(runId, commitSha, actor) {
    return this.#serial(runId, () => this.#restorer.putBack(runId, commitSha, actor));
  }
  /** Ids of the runs this repository has. */
  listRuns() {
    return this.store.listRuns();
  }
  /** Forget the cached journals (a test simulating a restart, or after an unexpected error). */
  forget() {
    this.#cache.clear();
    this.#effects.forget();
    this.#prefetches.clear();
    this.#dirty.clear();
  }
};

// src/app/plan-source.ts
import { createHash as createHash3 } from "node:crypto";
async function readConfig(port, ref) {
  const file = await port.readFile(CONFIG_PATH, ref);
  return parseConfigText(file?.content);
}
var BATCH_READ_FROM = 1;
async function readPlanSourceFromGitHub(port, planId, ref) {
  const root = planDir(planId);
  const files = /* @__PURE__ */ new Map();
  const dirs = /* @__PURE__ */ new Set();
  const unreadable = [];
  const wanted = [];
  const top = await port.listDirectory(root, ref);
  for (const entry of top) {
    if (entry.type === "file" && (entry.name === "plan.md" || entry.name === "dag.json")) wanted.push(entry.name);
    else if (entry.type === "dir" && (entry.name === "tasks" || entry.name === "overlays" || entry.name === "specs")) {
      dirs.add(entry.name);
      for (const inner of await port.listDirectory(`${root}/${entry.name}`, ref)) {
        const rel = `${entry.name}/${inner.name}`;
        if (inner.type === "dir") dirs.add(rel);
        else if (entry.name !== "specs" && inner.name.endsWith(".md")) wanted.push(rel);
        else files.set(rel, "");
      }
    }
  }
  const got = (rel, f) => {
    if (f) files.set(rel, f.content);
    else unreadable.push({ file: rel, message: "cannot be read" });
  };
  if (port.readFiles && wanted.length > BATCH_READ_FROM) {
    const read = await port.readFiles(
      wanted.map((rel) => `${root}/${rel}`),
      ref
    );
    for (const rel of wanted) got(rel, read.get(`${root}/${rel}`));
  } else await Promise.all(wanted.map(async (rel) => got(rel, await port.readFile(`${root}/${rel}`, ref))));
  return { planId, files, dirs, unreadable };
}
async function readPlan(port, planId, ref) {
  const source = await readPlanSourceFromGitHub(port, planId, ref);
  const parsed = parsePlan(source);
  const problems = validatePlan(parsed);
  const dagText = source.files.get("dag.json") ?? "";
  const dagHash = createHash3("sha256").update(dagText).digest("hex");
  return { parsed, problems, nodes: problems.length ? [] : planNodes(parsed), dagHash };
}
function planNodes(parsed) {
  const tasks = new Map(parsed.tasks.filter((t) => t.data).map((t) => [t.data.id, t.data]));
  return (parsed.dag.data?.nodes ?? []).map((n2) => {
    const t = tasks.get(n2.id);
    return {
      id: n2.id,
      kind: n2.type,
      agentType: n2.agentType,
      dependencies: [...n2.dependencies],
      ...t?.title ? { title: t.title } : {},
      ...t?.paths ? { paths: [...t.paths] } : {},
      ...t?.budget ? { budget: { ...t.budget } } : {},
      ...t?.retry_policy ? { retryPolicy: { ...t.retry_policy } } : {},
      ...agentList(t?.agent) ? { agents: agentList(t?.agent) } : {}
    };
  });
}
function pinnedDag(journal) {
  return {
    version: 1,
    planId: journal.planId,
    nodes: journal.plan.nodes.map((n2) => ({ id: n2.id, type: n2.kind, agentType: n2.agentType, dependencies: n2.dependencies })),
    metadata: { createdAt: "", createdBy: "", totalTasks: 0, totalRefineries: 0 }
  };
}

// src/app/runtime.ts
async function createRuntime(app, owner, repo, installationId, log, options2, clock, onLearned) {
  const key = `${owner}/${repo}`;
  const stats = newCallStats();
  const port = await installationPort(app, installationId, owner, repo, stats, options2.onRequest, options2.pace, clock);
  const engine = new Engine({
    port,
    log,
    clock,
    ...options2.replicaId !== void 0 ? { replicaId: options2.replicaId } : {},
    ...options2.leaseMs !== void 0 ? { leaseMs: options2.leaseMs } : {},
    journalKey: options2.journalKey,
    ...options2.journalParts ? { journalParts: options2.journalParts } : {},
    onDecision: (runId, d) => options2.onDecision?.(key, runId, d),
    onLearned: (runId, facts) => onLearned?.(rt, runId, facts),
    onRefused: async (runId, error) => {
      const issue = await port.findIssue(LABELS.tracker, trackerMarker(runId));
      if (issue === null) return;
      const good = error.lastGood ?? await engine.store.lastSealed(runId);
      await port.createComment(issue, journalRefusedComment(runId, error.reason, good));
    },
    onRestored: async (runId, loaded, actor) => {
      const issue = loaded.state.facts.trackerIssue;
      if (issue === void 0) return;
      const by = actor ? ` by @${actor}` : "";
      await port.createComment(
        issue,
        `The state branch \`${stateBranch(runId)}\` of this run was deleted${by}. Forge keeps the run's journal there, so it put the branch back at its last commit (\`${loaded.commitSha?.slice(0, 7)}\`) and the run goes on. To stop the run, comment \`/forge cancel\`.`
      );
    }
  });
  const rt = { stats, port, engine, installationId, runs: /* @__PURE__ */ new Map(), runsLoaded: false, planChain: Promise.resolve() };
  return rt;
}

// src/app/later-reads.ts
var LaterReads = class {
  constructor(graceMs, log, clock, inFlight) {
    this.graceMs = graceMs;
    this.log = log;
    this.clock = clock;
    this.inFlight = inFlight;
  }
  graceMs;
  log;
  clock;
  inFlight;
  #timers = /* @__PURE__ */ new Map();
  #stopped = false;
  /** Run `read` after the grace period (at once when it is 0), unless one is already waiting under `key`. */
  async after(key, read) {
    if (this.graceMs <= 0) return read();
    if (this.#stopped || this.#timers.has(key)) return;
    const timer = this.clock.setTimeout(() => {
      this.#timers.delete(key);
      if (this.#stopped) return;
      const work = read().catch(
        (e) => this.log().warn({ key, err: e.message }, "a read put off failed; the reconciler will make it")
      );
      this.inFlight.add(work);
      void work.finally(() => this.inFlight.delete(work));
    }, this.graceMs);
    timer.unref();
    this.#timers.set(key, timer);
  }
  /** Drops the reads waiting under keys that start with `prefix` (a repository no longer served). */
  cancel(prefix) {
    for (const [key, t] of this.#timers)
      if (key.startsWith(prefix)) {
        this.clock.clear(t);
        this.#timers.delete(key);
      }
  }
  stop() {
    this.#stopped = true;
    for (const t of this.#timers.values()) this.clock.clear(t);
    this.#timers.clear();
  }
};

// src/app/final-auto-merge.ts
var FINAL_PR_WATCH_MS = 7 * 24 * 60 * 6e4;
var FINAL_PR_LOOK_MS = 6e4;
var FINAL_PR_LOOK_MAX_MS = 60 * 6e4;
async function finalPrApproved(ctx, rt, pr) {
  const runId = await finalPrRun(ctx, rt, pr);
  if (!runId) return void 0;
  return settle2(ctx, rt, runId, pr.number);
}
async function finalPrRun(ctx, rt, pr) {
  for (const runId of (await ctx.knownRuns(rt)).keys()) {
    const loaded = await rt.engine.state(runId);
    if (!loaded || loaded.state.journal.status === "running" || loaded.state.facts.finalPr !== pr.number || loaded.state.journal.integrationBranch !== pr.headRef)
      continue;
    return loaded.state.config.final_pr.auto_merge ? runId : void 0;
  }
  return void 0;
}
function finalPrRecorded(ctx, rt, runId) {
  const work = lookAtFinalPr(ctx, rt, runId).then(
    () => void 0,
    (e) => ctx.log.warn({ runId, err: e.message }, "could not look at the final PR's approval")
  );
  ctx.inFlight.add(work);
  void work.finally(() => ctx.inFlight.delete(work));
}
var looks = /* @__PURE__ */ new WeakMap();
async function lookAtFinalPr(ctx, rt, runId) {
  const loaded = await rt.engine.state(runId);
  if (!loaded) return void 0;
  const { journal, config: config2, facts } = loaded.state;
  if (journal.status !== "completed" || !config2.final_pr.auto_merge || facts.finalPr === void 0 || facts.finalAutoMerge)
    return void 0;
  const now = ctx.now();
  if (!(now - Date.parse(journal.completedAt ?? "") < FINAL_PR_WATCH_MS)) return void 0;
  const planned = looks.get(rt) ?? /* @__PURE__ */ new Map();
  looks.set(rt, planned);
  const last = planned.get(runId);
  if (last && now < last.next) return void 0;
  const gap = last ? Math.min(last.gap * 2, FINAL_PR_LOOK_MAX_MS) : FINAL_PR_LOOK_MS;
  planned.set(runId, { next: now + gap, gap });
  return settle2(ctx, rt, runId, facts.finalPr);
}
var settling = /* @__PURE__ */ new WeakMap();
function settle2(ctx, rt, runId, number) {
  const chains = settling.get(rt) ?? /* @__PURE__ */ new Map();
  settling.set(rt, chains);
  const previous = chains.get(runId) ?? Promise.resolve();
  const next = previous.then(() => settleNow(ctx, rt, runId, number));
  const settled = next.catch(() => void 0);
  chains.set(runId, settled);
  void settled.finally(() => chains.get(runId) === settled && chains.delete(runId));
  return next;
}
async function settleNow(ctx, rt, runId, number) {
  const loaded = await rt.engine.state(runId);
  if (!loaded) return void 0;
  const known = loaded.state.facts.finalAutoMerge;
  if (known?.pr === number && known.outcome !== "refused" && known.outcome !== "closed") return known.outcome;
  const port = rt.port;
  const current = await port.getPullRequest(number);
  if (current.headRef !== loaded.state.journal.integrationBranch) return void 0;
  let outcome;
  if (current.merged) outcome = "merged";
  else if (current.state !== "open") outcome = "closed";
  else if (current.autoMerge) outcome = "enabled";
  else if (await approvedByWriter(port, number, current.headSha)) outcome = await enable(ctx, port, current);
  if (outcome && (known?.pr !== number || known.outcome !== outcome))
    await rt.engine.record(runId, { finalAutoMerge: { pr: number, outcome } }, `final PR #${number} ${outcome}`);
  return outcome;
}
async function enable(ctx, port, pr) {
  const { rules } = await cachedBranchRules(port, pr.baseRef, ctx.now(), RULES_TTL_MS, () => port.branchRules(pr.baseRef));
  const method = finalMergeMethod(rules) ?? "merge";
  const res = await port.queue.enableAutoMerge(pr.number, method, pr.headSha);
  if (res.kind === "enabled") return "enabled";
  if (/\b(clean|unstable) status\b/i.test(res.message)) {
    if (rules.some((r) => r.type === "merge_queue")) {
      if (await port.queue.entry(pr.number)) return "queued";
      const q = await port.queue.enqueue(pr.number, pr.headSha);
      if (q.kind === "queued") return "queued";
      return refusedOn(port, pr.number, pr.headSha, q.message);
    }
    const merged = await port.mergePullRequest(pr.number, { sha: pr.headSha, method });
    if (merged.kind === "merged") return "merged";
    return refusedOn(port, pr.number, pr.headSha, "message" in merged ? merged.message : "the head moved");
  }
  return refusedOn(port, pr.number, pr.headSha, res.message);
}
var APPROVERS_CHECKED = 5;
async function approvedByWriter(port, number, head) {
  const latest = /* @__PURE__ */ new Map();
  for (const r of await port.listReviews(number))
    if (!r.bot && r.login && r.commitId === head && r.state !== "COMMENTED") latest.set(r.login, r.state);
  const approvers = [...latest].filter(([, state]) => state === "APPROVED").map(([login]) => login);
  for (const login of approvers.slice(-APPROVERS_CHECKED)) if (WRITE_PERMISSIONS.has(await port.permission(login))) return true;
  return false;
}
async function refusedOn(port, number, head, message) {
  const text = message.replace(/\s+/g, " ").slice(0, 500);
  await port.createComment(
    number,
    `Forge could not set this pull request to merge automatically (\`final_pr.auto_merge\`): GitHub answered "${text}". A person merges it, or fixes what GitHub names (for auto-merge, Settings \u2192 General \u2192 "Allow auto-merge") and approves it again (at ${head.slice(0, 7)}).`
  );
  return "refused";
}

// src/app/context.ts
var CONFIG_TTL_MS = 10 * 6e4;
var JOB_END_GRACE_MS = 1e4;
var logOf = (context) => context.log;
var AppContext = class {
  constructor(options2) {
    this.options = options2;
    const clock = options2.clock ?? realClock;
    this.clock = clock;
    this.now = () => clock.now();
    const graceMs = options2.jobEndGraceMs ?? (options2.background === false ? 0 : JOB_END_GRACE_MS);
    this.laterReads = new LaterReads(graceMs, () => this.log, clock, this.inFlight);
  }
  options;
  /** The repositories the App serves, by `owner/repo`. */
  runtimes = /* @__PURE__ */ new Map();
  deliveries = new Deliveries();
  /** Work in the background: webhooks being handled, reads put off, the reconciler's sweeps. */
  inFlight = /* @__PURE__ */ new Set();
  clock;
  now;
  /** The Probot instance that loaded the App: none before it does. */
  probot;
  /** The App's slug, once GitHub told it. */
  slug;
  /** Reads put off until a webhook that usually follows has had its chance (a job's result after its completion). */
  laterReads;
  /**
   * Installations deleted while this process ran: their tokens are dead (GitHub answers 401), so a
   * webhook of theirs still on its way is not acted on and no runtime is made for them again. An
   * installation made again has a new id.
   */
  removed = /* @__PURE__ */ new Set();
  /** The App's own logger (Probot's), for work no webhook started. */
  get log() {
    return this.probot ? this.probot.log : silentLogger;
  }
  /** The runtime of a repository, made on first use. */
  async runtimeFor(owner, repo, installationId, log, repositoryId) {
    const key = `${owner}/${repo}`;
    let rt = this.runtimes.get(key);
    if (rt && installationId && rt.installationId !== installationId) {
      this.forget(key);
      rt = void 0;
    }
    if (!rt) {
      rt = await createRuntime(this.probot, owner, repo, installationId, log, this.options, this.clock, (of, runId, facts) => {
        if (facts.finalPr !== void 0) finalPrRecorded(this, of, runId);
      });
      this.runtimes.set(key, rt);
    }
    if (typeof repositoryId === "number") rt.port.knowRepositoryId?.(repositoryId);
    return rt;
  }
  /** The runtime of the repository a webhook is about. */
  rtOf(context) {
    const payload = context.payload;
    const owner = payload.repository?.owner?.login ?? "";
    const repo = payload.repository?.name ?? "";
    return this.runtimeFor(owner, repo, payload.installation?.id ?? 0, logOf(context), payload.repository?.id);
  }
  /** Stop serving a repository (no installation holds it any more): its engine stops, its reads put off are dropped. */
  forget(key) {
    this.runtimes.get(key)?.engine.stop();
    this.runtimes.delete(key);
    this.laterReads.cancel(`${key}:`);
  }
  /** The repository's config on its default branch (read again after a push there, or after `CONFIG_TTL_MS`), or the defaults. */
  async configOf(rt) {
    if (rt.config && this.now() - rt.config.at < CONFIG_TTL_MS) return rt.config.value;
    const read = await readConfig(rt.port, await rt.port.defaultBranch());
    const value = read.ok ? read.config : defaultConfig();
    rt.config = { value, at: this.now() };
    return value;
  }
  /** The repository's runs, read from their journals the first time and after every `runsLoaded = false`. */
  async knownRuns(rt) {
    if (!rt.runsLoaded) {
      for (const runId of await rt.engine.listRuns()) {
        if (rt.runs.has(runId)) continue;
        const loaded = await rt.engine.state(runId);
        if (loaded) rt.runs.set(runId, { planId: loaded.state.journal.planId, status: loaded.state.journal.status });
      }
      rt.runsLoaded = true;
    }
    return rt.runs;
  }
  /** Resolves once every repository's effects are carried out and their outcomes taken (which may start more). */
  async settle() {
    for (; ; ) {
      const busy = [...this.runtimes.values()].map((rt) => rt.engine).filter((e) => e.busy);
      if (busy.length === 0) return;
      await Promise.all(busy.map((e) => e.idle()));
    }
  }
  /** Apply inputs to a run and keep the run index fresh. */
  async apply(rt, runId, inputs) {
    const result = await rt.engine.apply(runId, inputs);
    const last = result.decisions[result.decisions.length - 1];
    if (last) rt.runs.set(runId, { planId: last.journal.planId, status: last.journal.status });
    const limited = result.decisions.flatMap((d) => d.events).find((e) => e.type === "run.paused" && e.data.reason === "usage_limit");
    const until = limited ? limited.data.until : void 0;
    if (until) {
      for (const other of this.runtimes.values()) {
        if (other.installationId !== rt.installationId) continue;
        for (const [otherRun, r] of other.runs) {
          if (other === rt && otherRun === runId || r.status !== "running") continue;
          await other.engine.apply(otherRun, [{ kind: "usage.limited", until }]);
        }
      }
    }
    return result;
  }
  /** The run, task and attempt a branch belongs to, if it is an attempt's branch. */
  async attemptOf(rt, branch) {
    const ref = branchParser(await this.configOf(rt))(branch);
    if (ref && !isFollowupId(ref.taskId)) {
      const journal = (await rt.engine.state(ref.runId).catch(() => null))?.state.journal;
      return attemptOnBranch(journal, ref, branch);
    }
    if (ref) return ref;
    return parseFollowupBranch(branch);
  }
};

// src/app/guard.ts
var LATER_EVENTS = /* @__PURE__ */ new Set(["workflow_run", "workflow_job", "merge_group", "pull_request.dequeued"]);
function handledWhenOwn(name, payload) {
  const p = payload;
  if (LATER_EVENTS.has(name) || LATER_EVENTS.has(`${name}.${String(p.action)}`)) return true;
  return name === "pull_request" && p.action === "closed" && p.pull_request?.merged === true && p.pull_request.base?.ref !== void 0 && p.pull_request.base.ref === p.repository?.default_branch;
}
function guard(ctx, app, fn) {
  const { options: options2 } = ctx;
  return async (context) => {
    options2.onWebhook?.({
      name: context.name,
      action: context.payload.action,
      id: context.id,
      at: performance.now()
    });
    if (ctx.deliveries.seen(context.id)) return;
    const installation = context.payload.installation?.id;
    if (installation !== void 0 && ctx.removed.has(installation)) {
      context.log.info({ event: context.name, installationId: installation }, "a webhook of a deleted installation: not acted on");
      return;
    }
    const handle = async () => {
      ctx.slug ??= await appSlug(app);
      const sender = context.payload.sender?.login;
      if (ctx.slug && sender === `${ctx.slug}[bot]` && !handledWhenOwn(context.name, context.payload)) return;
      await fn(ctx, context);
    };
    const handled = () => handle().catch((e) => {
      ctx.deliveries.forget(context.id);
      throw e;
    });
    if (options2.background === false) return handled().then(() => ctx.settle());
    const work = handled().catch(
      (e) => context.log.error({ err: e.stack, event: context.name, deliveryId: context.id }, "webhook handling failed")
    );
    ctx.inFlight.add(work);
    void work.finally(() => ctx.inFlight.delete(work));
  };
}

// src/app/handlers/checks-done.ts
async function onChecksDone(ctx, context) {
  if (context.name === "check_suite" && context.payload.action !== "completed") return;
  const rt = await ctx.rtOf(context);
  if (context.name === "check_suite") {
    const suite = context.payload.check_suite;
    if (ctx.slug === void 0 || suite.app?.slug !== ctx.slug)
      await redChecks(ctx, rt, context, { branch: suite.head_branch, headSha: suite.head_sha, conclusion: suite.conclusion });
  } else await redStatus(ctx, rt, context);
  await flushMerges(ctx, rt);
}
async function onCiDone(ctx, rt, context, done2) {
  await redChecks(ctx, rt, context, done2);
  await flushMerges(ctx, rt);
}
var STATUS_BRANCHES = 10;
async function redStatus(ctx, rt, context) {
  const p = context.payload;
  if (p.state !== "failure" && p.state !== "error") return;
  if (typeof p.context !== "string" || p.context.startsWith("forge \xB7 ")) return;
  for (const b of (Array.isArray(p.branches) ? p.branches : []).slice(0, STATUS_BRANCHES)) {
    if (typeof b?.name !== "string" || typeof p.sha !== "string") continue;
    await redChecks(ctx, rt, context, { branch: b.name, headSha: p.sha, conclusion: "failure", context: p.context });
  }
}
async function flushMerges(ctx, rt) {
  for (const [runId, r] of await ctx.knownRuns(rt)) {
    if (r.status !== "running") continue;
    const loaded = await rt.engine.state(runId);
    if (loaded?.state.journal.outbox.some((e) => e.kind === "MergePullRequest")) await rt.engine.flush(runId);
  }
}
var reading = /* @__PURE__ */ new WeakMap();
async function redChecks(ctx, rt, context, done2) {
  if (!done2.branch || done2.conclusion !== "failure" && done2.conclusion !== "timed_out") return;
  const ref = await ctx.attemptOf(rt, done2.branch);
  if (!ref) return;
  const key = `${rt.port.owner}/${rt.port.repo}:${ref.runId}:${ref.taskId}:${ref.attempt}:${done2.headSha}:${done2.group ?? ""}`;
  const mine = reading.get(ctx) ?? /* @__PURE__ */ new Map();
  reading.set(ctx, mine);
  const under = mine.get(key);
  if (under) return under;
  const work = readRedChecks(ctx, rt, context, ref, done2).finally(() => mine.delete(key));
  mine.set(key, work);
  return work;
}
async function readRedChecks(ctx, rt, context, ref, done2) {
  const loaded = await rt.engine.state(ref.runId);
  const t = loaded?.state.journal.tasks.find((x) => x.id === ref.taskId);
  if (!loaded || !t || t.attempts !== ref.attempt || t.status !== "MERGE_READY" || prHead(t) !== done2.headSha) return;
  const a = t.attempt;
  if (a?.feedback?.some((f) => f.source === "ci" && f.headSha === done2.headSha) || a?.answeredHeads?.includes(done2.headSha)) return;
  const base = loaded.state.journal.integrationBranch;
  const required = await requiredChecks(
    rt.port,
    base,
    loaded.state.config.required_checks,
    ctx.now(),
    RULES_TTL_MS,
    () => readRuledChecks(rt.port, base)
  );
  if (required.all.length === 0 || done2.context !== void 0 && !required.all.includes(done2.context)) return;
  const checks = await rt.port.ciChecks(done2.group ?? done2.headSha, required.all);
  if (ciVerdict(checks, required.configured) !== "red") return;
  const failing = done2.group ? onGroup(checks.failing, done2.group, base) : checks.failing;
  const result = await ctx.apply(rt, ref.runId, [checksFailedInput(ref, done2.headSha, failing)]);
  if (result.rejections.length)
    logOf(context).info(
      { runId: ref.runId, taskId: ref.taskId, rejections: result.rejections.map((r) => r.reason) },
      "red checks changed nothing"
    );
}
async function onCheckRunDone(ctx, context) {
  const run2 = context.payload.check_run;
  if (context.payload.action !== "completed" || ctx.slug !== void 0 && run2.app?.slug === ctx.slug) return;
  if (typeof run2.name !== "string" || run2.name.startsWith("forge \xB7 ")) return;
  const rt = await ctx.rtOf(context);
  await redChecks(ctx, rt, context, {
    branch: run2.check_suite?.head_branch,
    headSha: run2.head_sha,
    conclusion: run2.conclusion,
    context: run2.name.slice(0, 200)
  });
  await flushMerges(ctx, rt);
}

// src/app/handlers/check-run.ts
async function onCheckRun(ctx, context) {
  const { payload } = context;
  if (payload.action === "completed") return onCheckRunDone(ctx, context);
  if (payload.action !== "rerequested" && payload.action !== "requested_action") return;
  if (payload.sender.type === "Bot") return;
  const m = /^([^/]+)\/([^/]+)\/(\d+)$/.exec(payload.check_run.external_id ?? "");
  if (!m) return;
  const rt = await ctx.rtOf(context);
  if (!WRITE_PERMISSIONS.has(await rt.port.permission(payload.sender.login))) return;
  const identifier = payload.action === "requested_action" ? payload.requested_action?.identifier : "retry";
  const command2 = identifier === "approve" ? "approve" : "retry";
  await ctx.apply(rt, m[1], [{ kind: "command", command: command2, actor: payload.sender.login, taskId: m[2] }]);
}

// src/app/discovery.ts
async function discoverRepositories(ctx) {
  if (!ctx.probot) return;
  const seen = /* @__PURE__ */ new Set();
  for await (const { installationId, repositories } of installedRepositories(ctx.probot)) {
    for (const r of repositories) {
      seen.add(`${r.owner}/${r.repo}`);
      await ctx.runtimeFor(r.owner, r.repo, installationId, ctx.log, r.id);
    }
  }
  for (const key of [...ctx.runtimes.keys()]) if (!seen.has(key)) ctx.forget(key);
}

// src/app/cr-close.ts
async function crCloseCounts(port, issue, runId, crId, closer) {
  const permission = closer ? await port.permission(closer) : "none";
  if (WRITE_PERMISSIONS.has(permission)) return true;
  await port.updateIssue(issue, { state: "open" });
  const note2 = `<!-- forge:comment ${runId} cr-close-refused:${crId} -->`;
  if (await port.findComment(issue, note2) === null)
    await port.createComment(
      issue,
      `Forge reopened this Change Request: closing it rejects it, and that needs write access to this repository (${closer ? `@${closer} has \`${permission}\`` : "GitHub does not say who closed it"}). A person with write access can close it or comment \`/forge reject\`.

${note2}`
    );
  return false;
}

// src/app/reconciler.ts
var CLOCK_SKEW_MS = 10 * 6e4;
function runsSince(createdAt) {
  const t = Date.parse(createdAt);
  return Number.isNaN(t) ? createdAt : new Date(t - CLOCK_SKEW_MS).toISOString().slice(0, 19) + "Z";
}
async function reconcileRun(port, engine, runId, _now) {
  const loaded = await engine.state(runId);
  if (!loaded || loaded.state.journal.status !== "running") return [];
  const { journal, config: config2 } = loaded.state;
  const inputs = [];
  const running = journal.tasks.filter((t) => t.status === "RUNNING" && t.attempt);
  if (running.length) {
    const runs = await port.listWorkflowRuns(config2.workflow, { createdAfter: runsSince(journal.createdAt) });
    const repositoryId = await port.repositoryId();
    const workflowPath = agentWorkflowPath(config2);
    for (const t of running) {
      const a = t.attempt;
      const run2 = runs.find(
        (r) => r.headBranch === a.branch && // A revision's branch holds its attempt's earlier jobs too: only newer runs are its own.
        r.id > (a.revision.priorRunId ?? 0) && notTheAttemptsJob(r, { repositoryId, workflowPath, recordedRunId: a.revision.workflowRunId }) === void 0
      );
      if (!run2) continue;
      const ref = { runId, taskId: t.id, attempt: t.attempts };
      if (run2.status === "in_progress") {
        const progress = await liveProgressOf(port, runId, t.id, t.attempts, a.branch);
        inputs.push(
          { kind: "agent.started", ...ref, workflowRunId: run2.id },
          { kind: "agent.heartbeat", ...ref, ...progress ? { progress } : {} }
        );
      } else if (run2.status === "completed") inputs.push(await endedJobInput(port, ref, a.branch, run2, a.revision.iteration));
    }
  }
  for (const t of journal.tasks) {
    const branch = t.attempt?.branch;
    if (t.status === "DONE" && branch) {
      const head = await port.branchHead(branch);
      if (head) {
        const commit = await port.commit(head);
        inputs.push({
          kind: "branch.pushed",
          taskId: t.id,
          attempt: t.attempts,
          headSha: recordOf(commit.message) ? commit.parents[0] ?? head : head
        });
      }
    }
    if (t.status === "MERGE_READY" && branch) {
      const pr = await port.findPullRequest(branch, "closed");
      if (pr?.merged && pr.mergeSha)
        inputs.push({ kind: "pr.merged", taskId: t.id, attempt: t.attempts, number: pr.number, mergeSha: pr.mergeSha });
    }
  }
  for (const cr of journal.changeRequests) {
    const issue = cr.issueNumber;
    if ((cr.status === "pending" || cr.status === "approved") && issue !== void 0) {
      const i = await port.getIssue(issue);
      if (i.state === "closed" && await crCloseCounts(port, issue, runId, cr.id, i.closedBy))
        inputs.push({ kind: "cr.closed", crId: cr.id });
    }
  }
  inputs.push({ kind: "tick" });
  return inputs;
}
async function liveProgressOf(port, runId, taskId, attempt, branch) {
  try {
    const externalId = `${runId}/${taskId}/${attempt}/live`;
    const runs = (await port.listCheckRuns(branch, `forge \xB7 ${taskId} \xB7 live`)).filter((c) => c.externalId === externalId);
    const newest = runs.sort((x, y) => y.id - x.id)[0];
    return parseLiveProgress(newest?.summary);
  } catch {
    return void 0;
  }
}

// src/app/sweep.ts
var Sweeper = class {
  #ctx;
  #timer;
  #sweeping = false;
  constructor(ctx) {
    this.#ctx = ctx;
  }
  /** Reconcile every run of every repository seen (the timer's work, and `forge tick`'s). */
  async tick() {
    const ctx = this.#ctx;
    await discoverRepositories(ctx).catch(
      (e) => ctx.probot?.log.warn(
        { err: e.message },
        "could not list the installations' repositories; sweeping the repositories known"
      )
    );
    for (const rt of ctx.runtimes.values()) await this.#tickRuntime(rt);
  }
  /** Reconcile one repository from scratch (`forge tick` in a scheduled workflow). */
  async tickRepository(owner, repo) {
    const ctx = this.#ctx;
    const installationId = await repositoryInstallationId(ctx.probot, owner, repo);
    const rt = await ctx.runtimeFor(owner, repo, installationId, ctx.log);
    rt.runsLoaded = false;
    await this.#tickRuntime(rt);
  }
  async #tickRuntime(rt) {
    await reconcileRepository(this.#ctx, rt);
  }
  /** Sweep every `everyMs`, and once at start: a restarted App has work it learns of only by asking. */
  start(app, everyMs) {
    const sweep = () => {
      if (this.#sweeping) return;
      this.#sweeping = true;
      const work = this.tick().catch((e) => app.log.error({ err: e.message }, "reconciler failed")).finally(() => this.#sweeping = false);
      this.#ctx.inFlight.add(work);
      void work.finally(() => this.#ctx.inFlight.delete(work));
    };
    this.#timer = this.#ctx.clock.setInterval(sweep, everyMs);
    this.#timer.unref();
    setImmediate(sweep);
  }
  stop() {
    this.#ctx.clock.clear(this.#timer);
    this.#timer = void 0;
  }
};
async function reconcileRepository(ctx, rt) {
  rt.runsLoaded = false;
  for (const [runId, r] of await ctx.knownRuns(rt)) {
    if (r.status !== "running") {
      await endedRun(ctx, rt, runId);
      continue;
    }
    const inputs = await reconcileRun(rt.port, rt.engine, runId, ctx.now());
    await ctx.apply(rt, runId, inputs.length ? inputs : [{ kind: "tick" }]);
  }
  await rt.engine.idle();
  await rt.engine.persistDirty();
}
async function endedRun(ctx, rt, runId) {
  const loaded = await rt.engine.state(runId);
  if (!loaded) return;
  if (loaded.state.journal.outbox.length) await rt.engine.flush(runId);
  await lookAtFinalPr(ctx, rt, runId).catch(
    (e) => ctx.log.warn({ runId, err: e.message }, "could not look at the final PR's approval")
  );
}

// src/app/handlers/installation.ts
async function onInstallation(ctx, context) {
  const payload = context.payload;
  const id = payload.installation.id;
  const log = logOf(context);
  const gone = payload.action === "deleted" || payload.action === "suspend";
  if (gone) {
    const served2 = [...ctx.runtimes].filter(([, rt]) => rt.installationId === id);
    const runs = served2.flatMap(([key, rt]) => [...rt.runs].filter(([, r]) => r.status === "running").map(([runId]) => `${key}#${runId}`));
    if (payload.action === "deleted") ctx.removed.add(id);
    for (const [key] of served2) ctx.forget(key);
    log.warn(
      { installationId: id, account: payload.installation.account?.login, repositories: served2.map(([key]) => key), runs },
      payload.action === "suspend" ? "installation suspended: Forge stops acting on its repositories until it is unsuspended (their runs wait)" : "installation deleted: Forge no longer acts on its repositories and makes no call with its tokens; their runs stop where they are \u2014 install the App again and Forge reconciles them at once (a task that failed or is held meanwhile: /forge retry <task>)"
    );
    return;
  }
  for (const r of payload.repositories_removed ?? []) if (ctx.runtimes.get(r.full_name)?.installationId === id) ctx.forget(r.full_name);
  const served = [];
  for (const r of [...payload.repositories ?? [], ...payload.repositories_added ?? []]) {
    const [owner, repo] = r.full_name.split("/");
    if (owner && repo) served.push(await ctx.runtimeFor(owner, repo, id, log));
  }
  if (payload.action === "unsuspend") {
    log.info({ installationId: id, repositories: served.length }, "installation unsuspended: Forge acts again, reconciling its runs");
    for (const rt of served) await reconcileRepository(ctx, rt);
  } else if (payload.action === "created" && served.length) {
    const work = (async () => {
      for (const rt of served) await reconcileRepository(ctx, rt);
    })().catch(
      (e) => log.warn({ installationId: id, err: e.message }, "could not reconcile the runs of a new installation")
    );
    ctx.inFlight.add(work);
    void work.finally(() => ctx.inFlight.delete(work));
  }
}

// src/core/decide/plan-captain.ts
var OUTSIDE_TEXT_LIMIT = 2e4;
function planCaptainDispatch(req) {
  const base = {
    [DISPATCH_INPUTS.runId]: planRunId(req.issue),
    [DISPATCH_INPUTS.taskId]: planCaptainId(req.issue),
    [DISPATCH_INPUTS.attempt]: "1"
  };
  const title = req.title.slice(0, 1024);
  const context = cutDispatchContext(base, { issue: req.issue, title, body: req.body.slice(0, OUTSIDE_TEXT_LIMIT) }, "body");
  return { branch: planCaptainBranch(req.issue), inputs: { ...base, [DISPATCH_INPUTS.context]: JSON.stringify(context) } };
}

// src/core/plan/from-issues.ts
var import_yaml4 = __toESM(require_dist(), 1);
var ISSUE_LABELS = {
  type: { "forge:type-1": "1", "forge:type-2": "2", "forge:type-3": "3", "forge:refinery": "refinery" },
  size: { "forge:small": "small", "forge:medium": "medium", "forge:large": "large" }
};
var DEFAULT_TYPE = "2";
var DEFAULT_SIZE = "medium";
var MAX_DEPTH = 8;
var MAX_TREE_TASKS = 500;
var BODY_LIMIT2 = 2e4;
var TITLE_LIMIT2 = 200;
var CRITERIA_LIMIT = 20;
var CRITERION_LIMIT = 300;
function issueTaskId(issue, title) {
  const slug = title.slice(0, 200).normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, "-").slice(0, 30).replace(/^-+|-+$/g, "");
  return slug ? `issue-${issue}-${slug}` : `issue-${issue}`;
}
function oneLine2(text, max) {
  const line = stripForgeMarkers(text.slice(0, max * 2)).replace(/[\r\n\t]+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}\u2026` : line;
}
function instructionsOf(body) {
  const cut4 = body.length > BODY_LIMIT2 ? `${body.slice(0, BODY_LIMIT2)}

[\u2026 cut at ${BODY_LIMIT2} of ${body.length} characters]` : body;
  return stripForgeMarkers(cut4.replace(/\r\n?/g, "\n")).split("\n").map((line) => line.replace(/^( {0,3})(#{1,4})(?=[ \t]|$)/, (_m, sp, h) => `${sp}${"#".repeat(h.length + 2)}`)).join("\n").trim();
}
function criteriaOf(body) {
  const out = [];
  for (const line of body.slice(0, BODY_LIMIT2).split("\n")) {
    const m = /^\s{0,6}[-*+] \[[ xX]\] (.{1,2000})$/.exec(line.replace(/\r$/, ""));
    const text = m ? oneLine2(m[1], CRITERION_LIMIT) : "";
    if (text) out.push(text);
    if (out.length === CRITERIA_LIMIT) break;
  }
  return out;
}
function labelOf(node, table, what, problems) {
  const found = [...new Set(node.labels.filter((l) => Object.hasOwn(table, l)))].sort();
  if (found.length > 1) problems.push(`#${node.number} has ${found.length} ${what} labels (${found.join(", ")}): keep one`);
  return found.length === 1 ? table[found[0]] : void 0;
}
function walk(nodes, depth, inherited, groups2, w) {
  for (const node of nodes) {
    if (w.byNumber.has(node.number)) {
      w.problems.push(`#${node.number} appears twice in the tree`);
      continue;
    }
    w.byNumber.set(node.number, node);
    if (!node.sameRepo) {
      w.problems.push(`#${node.number} is an issue of another repository: a plan runs in this one; remove it from the tree`);
      continue;
    }
    if (depth > MAX_DEPTH) {
      w.problems.push(`#${node.number} is nested deeper than ${MAX_DEPTH} levels`);
      continue;
    }
    if (node.state === "closed") {
      registerDone(node.children, w);
      continue;
    }
    const type = labelOf(node, ISSUE_LABELS.type, "type", w.problems);
    const size = labelOf(node, ISSUE_LABELS.size, "size", w.problems) ?? DEFAULT_SIZE;
    const blockers = [...inherited, ...node.blockedBy];
    const open = node.children.filter((c) => c.state === "open");
    if (node.children.length) walk(node.children, depth + 1, blockers, [node.number, ...groups2], w);
    if (open.length && type === void 0) continue;
    w.planned.push({
      node,
      id: issueTaskId(node.number, node.title),
      type: type ?? DEFAULT_TYPE,
      size,
      waitsFor: [...blockers.map((b) => b.number), ...open.map((c) => c.number)],
      groups: groups2
    });
  }
}
function registerDone(nodes, w) {
  for (const node of nodes) {
    if (w.byNumber.has(node.number)) continue;
    w.byNumber.set(node.number, { ...node, state: "closed" });
    registerDone(node.children, w);
  }
}
function exitsOf(node, w, taskOf) {
  const known = w.exits.get(node.number);
  if (known) return known;
  const own = taskOf.get(node.number);
  const done2 = w.byNumber.get(node.number)?.state === "closed";
  const out = own ? [own] : done2 ? [] : node.children.flatMap((c) => c.state === "open" && c.sameRepo ? exitsOf(c, w, taskOf) : []);
  w.exits.set(node.number, out);
  return out;
}
function edgeProblems(tree, w) {
  const outside = /* @__PURE__ */ new Map();
  const graph = [];
  const visit = (nodes, inherited) => {
    for (const n2 of nodes) {
      if (!n2.sameRepo || n2.state === "closed") continue;
      const group = inherited.get(n2.number);
      if (group !== void 0) w.problems.push(`#${group} is blocked by #${n2.number}, one of its own sub-issues`);
      const inside = /* @__PURE__ */ new Set();
      for (const b of n2.blockedBy) {
        const known = w.byNumber.get(b.number);
        if (known?.state === "open") inside.add(String(b.number));
        else if (!known && b.state === "open") outside.set(b.number, [...outside.get(b.number) ?? [], n2.number]);
      }
      for (const b of inherited.keys()) if (b !== n2.number) inside.add(String(b));
      const open = n2.children.filter((c) => c.sameRepo && c.state === "open");
      graph.push({ id: String(n2.number), dependencies: [...inside, ...open.map((c) => String(c.number))] });
      const below = new Map(inherited);
      for (const b of n2.blockedBy) if (w.byNumber.get(b.number)?.state === "open" && !below.has(b.number)) below.set(b.number, n2.number);
      visit(n2.children, below);
    }
  };
  visit(tree.children, /* @__PURE__ */ new Map());
  for (const [blocker, blocked2] of [...outside].sort((a, b) => a[0] - b[0]))
    w.problems.push(
      `${blocked2.map((n2) => `#${n2}`).join(", ")} ${blocked2.length > 1 ? "are" : "is"} blocked by #${blocker}, which is open and not in the tree of #${tree.parent.number}: add it to the tree, close it, or remove the dependency`
    );
  for (const cycle of findCycles(graph))
    w.problems.push(`"blocked by" makes a cycle: ${cycle.map((n2) => `#${n2}`).join(" \u2192 ")} (a group waits for its sub-issues)`);
}
function planFromIssueTree(tree) {
  const w = { byNumber: /* @__PURE__ */ new Map(), exits: /* @__PURE__ */ new Map(), planned: [], problems: [] };
  walk(tree.children, 2, [], [], w);
  if (w.problems.length === 0) edgeProblems(tree, w);
  if (w.problems.length === 0 && w.planned.length === 0)
    w.problems.push(`#${tree.parent.number} has no open sub-issue to plan: every one is closed`);
  if (w.planned.length > MAX_TREE_TASKS)
    w.problems.push(`the tree of #${tree.parent.number} makes ${w.planned.length} tasks, more than ${MAX_TREE_TASKS}`);
  if (w.problems.length) return { ok: false, problems: [...new Set(w.problems)] };
  const taskOf = new Map(w.planned.map((p) => [p.node.number, p.id]));
  const files = /* @__PURE__ */ new Map();
  const nodes = [];
  for (const p of w.planned) {
    const deps = [...new Set(p.waitsFor.flatMap((n2) => w.byNumber.has(n2) ? exitsOf(w.byNumber.get(n2), w, taskOf) : []))].filter((d) => d !== p.id).sort();
    nodes.push({ id: p.id, type: p.type === "refinery" ? "refinery" : "task", agentType: p.type, dependencies: deps });
    files.set(`tasks/${p.id}.md`, taskFile(tree, p, deps));
  }
  const dag = {
    version: 1,
    planId: tree.planId,
    nodes,
    metadata: {
      createdAt: tree.createdAt,
      createdBy: `forge plan from issue #${tree.parent.number}`,
      totalTasks: nodes.filter((n2) => n2.type === "task").length,
      totalRefineries: nodes.filter((n2) => n2.type === "refinery").length,
      issue: tree.parent.number
    }
  };
  files.set("dag.json", `${JSON.stringify(dag, null, 2)}
`);
  files.set("plan.md", planMd(tree, w.planned));
  return { ok: true, plan: { planId: tree.planId, files, taskOf } };
}
function taskFile(tree, p, deps) {
  const n2 = p.node;
  const title = oneLine2(n2.title, TITLE_LIMIT2) || `Issue #${n2.number}`;
  const front = {
    id: p.id,
    title,
    type: p.type,
    dependencies: [...deps],
    acceptance_criteria: criteriaOf(n2.body).length ? criteriaOf(n2.body) : [`Issue #${n2.number} is done as its text describes.`],
    estimated_complexity: p.size,
    issue: n2.number
  };
  const within = [...p.groups, tree.parent.number].map((g) => `#${g}`).join(" within ");
  const blockers = [...new Set(n2.blockedBy.map((b) => b.number))].sort((a, b) => a - b);
  return [
    "---",
    (0, import_yaml4.stringify)(front, { lineWidth: 0 }).trimEnd(),
    "---",
    "",
    "## Description",
    "",
    `${title} (issue #${n2.number}).`,
    "",
    "## Context",
    "",
    `Sub-issue #${n2.number} of ${within}, planned by \`/forge plan\` on #${tree.parent.number}.`,
    ...blockers.length ? ["", `Blocked by ${blockers.map((b) => `#${b}`).join(", ")}.`] : [],
    ...p.type === "refinery" ? ["", "It integrates the work of its sub-issues."] : [],
    "",
    "## Instructions",
    "",
    instructionsOf(n2.body) || `Do what the title of issue #${n2.number} says.`,
    ""
  ].join("\n");
}
function planMd(tree, planned) {
  const title = oneLine2(tree.parent.title, TITLE_LIMIT2) || `Issue #${tree.parent.number}`;
  return [
    `# ${title}`,
    "",
    `Built by \`/forge plan\` from the sub-issues of #${tree.parent.number}: a task per open sub-issue, edges from "blocked by".`,
    "",
    "## Tasks",
    "",
    ...planned.map((p) => `- \`${p.id}\`: #${p.node.number}`),
    ""
  ].join("\n");
}

// src/app/issue-plan.ts
var PROBLEMS_SHOWN = 20;
var PROBLEM_LIMIT = 300;
var TREE_READ_LIMIT = MAX_TREE_TASKS + 100;
var TooBigError = class extends Error {
};
async function readTree(port, parent) {
  const first = await port.subIssues(parent);
  if (first.length === 0) return void 0;
  let read = 0;
  const node = async (i, level) => {
    if (++read > TREE_READ_LIMIT) throw new TooBigError();
    const here = i.sameRepo && level <= MAX_DEPTH + 1;
    const subs = here && i.state === "open" ? await port.subIssues(i.number) : [];
    const blockers = here && i.state === "open" ? (await port.blockedBy(i.number)).map((b) => ({ number: b.number, state: b.state, sameRepo: b.sameRepo })) : [];
    const children2 = [];
    for (const s2 of subs) children2.push(await node(s2, level + 1));
    return {
      number: i.number,
      state: i.state,
      sameRepo: i.sameRepo,
      title: i.title,
      body: i.body,
      labels: i.labels,
      children: children2,
      blockedBy: blockers
    };
  };
  const children = [];
  for (const s2 of first) children.push(await node(s2, 2));
  return { children };
}
async function freshPlanId(port, issue, ref) {
  const taken = new Set((await port.listDirectory(".forge/plans", ref)).map((e) => e.name));
  if (!taken.has(`issue-${issue}`)) return `issue-${issue}`;
  let k = 2;
  while (taken.has(`issue-${issue}-${k}`)) k++;
  return `issue-${issue}-${k}`;
}
async function planFromIssue(port, parent, now) {
  if (!port.subIssues || !port.blockedBy || !port.commitFiles) return { kind: "no-tree" };
  if (parent.subIssues === 0) return { kind: "no-tree" };
  let tree;
  try {
    tree = await readTree(port, parent.number);
  } catch (e) {
    if (e instanceof TooBigError)
      return { kind: "problems", problems: [`the tree of #${parent.number} has more than ${TREE_READ_LIMIT} issues`] };
    throw e;
  }
  if (!tree) return { kind: "no-tree" };
  const branch = planCaptainBranch(parent.number);
  const open = await port.findPullRequest(branch, "open");
  if (open) return { kind: "open-already", prNumber: open.number };
  const base = await port.defaultBranch();
  const head = await port.branchHead(base);
  const planId = await freshPlanId(port, parent.number, head);
  const built = planFromIssueTree({
    parent: { number: parent.number, title: parent.title, body: parent.body },
    children: tree.children,
    planId,
    createdAt: new Date(now).toISOString()
  });
  if (!built.ok) return { kind: "problems", problems: built.problems };
  const problems = validatePlan(parsePlan({ planId, files: built.plan.files, dirs: /* @__PURE__ */ new Set(["tasks"]), unreadable: [] }));
  if (problems.length)
    return { kind: "problems", problems: problems.map((p) => formatProblem({ ...p, file: `${planDir(planId)}/${p.file}` })) };
  const files = new Map([...built.plan.files].map(([rel, text]) => [`${planDir(planId)}/${rel}`, text]));
  const title = `forge: plan ${planId} from #${parent.number}`;
  let made = await port.commitFiles(branch, head, files, `${title}

Built from the sub-issues of #${parent.number}.`);
  if (!made.created) {
    await port.deleteBranch(branch);
    made = await port.commitFiles(branch, head, files, `${title}

Built from the sub-issues of #${parent.number}.`);
  }
  const pr = await port.createPullRequest({ head: branch, base, title, body: planPrBody(parent.number, planId, built.plan.taskOf) });
  return { kind: "opened", planId, prNumber: pr.number, tasks: built.plan.taskOf.size };
}
function planPrBody(parent, planId, taskOf) {
  return [
    `Plan \`${planId}\`, built from the sub-issues of #${parent} by \`/forge plan\`: a task per open sub-issue, edges from "blocked by". \`forge validate\` passes.`,
    "",
    `Review it like code: merging this PR starts a run of \`${planId}\` (with \`autostart: true\`, the default), or comment \`/forge run ${planId}\` once it is merged. While it runs, each sub-issue shows its task's state, and #${parent} the run's summary.`,
    "",
    "| Issue | Task |",
    "|---|---|",
    ...[...taskOf].map(([n2, id]) => `| #${n2} | \`${id}\` |`)
  ].join("\n");
}
function issuePlanReply(outcome, issue) {
  if (outcome.kind === "opened")
    return `Built plan \`${outcome.planId}\` from the sub-issues of this issue (${outcome.tasks} tasks): #${outcome.prNumber}. Merging it starts the run.`;
  if (outcome.kind === "open-already")
    return `The plan from this issue's sub-issues is already open: #${outcome.prNumber}. Close it and comment \`/forge plan\` again to build it anew.`;
  const shown2 = outcome.problems.slice(0, PROBLEMS_SHOWN).map((p) => `- ${inlineData(p, PROBLEM_LIMIT)}`);
  const more = outcome.problems.length - shown2.length;
  return [
    `No plan was built from the sub-issues of #${issue}:`,
    "",
    ...shown2,
    ...more > 0 ? [`- \u2026 and ${more} more`] : [],
    "",
    "Fix the tree and comment `/forge plan` again."
  ].join("\n");
}

// src/core/state-rules.ts
var STATE_BRANCH_RULES = ["creation", "update", "deletion"];
var RULE_WORDS = { creation: "creations", update: "updates", deletion: "deletions" };
function missingRulesText(missing) {
  const words = missing.map((t) => RULE_WORDS[t] ?? t);
  return words.length > 1 ? `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}` : words[0] ?? "";
}

// src/app/start-run.ts
async function stateBranchWarning(port, runId) {
  const branch = stateBranch(runId);
  let types;
  try {
    types = (await port.branchRules(branch)).map((r) => r.type);
  } catch (e) {
    return `Forge could not read the rules that apply to \`${branch}\` (${e instanceof Error ? e.message.slice(0, 200) : "unknown error"})`;
  }
  const missing = STATE_BRANCH_RULES.filter((t) => !types.includes(t));
  if (missing.length === 0) return void 0;
  return `no ruleset restricts ${missingRulesText(missing)} of \`${branch}\``;
}
async function startPlanRun(ctx, rt, planId, sha, log) {
  const runs = await ctx.knownRuns(rt);
  for (const [runId2, r] of runs)
    if (r.planId === planId && r.status === "running") return { problems: [`run ${runId2} of plan ${planId} is still running`] };
  const read = await readConfig(rt.port, sha);
  if (!read.ok) return { problems: read.problems.map((p) => formatProblem(p)) };
  const config2 = read.config;
  const plan = await readPlan(rt.port, planId, sha);
  if (plan.problems.length) {
    return {
      problems: plan.problems.map((p) => formatProblem({ ...p, file: `${planDir(planId)}/${p.file}` }))
    };
  }
  const runId = runIdFor(planId, sha);
  const base = config2.base_branch ?? await rt.port.defaultBranch();
  const integration = integrationBranch(config2, runId);
  rt.runs.set(runId, { planId, status: "running" });
  await rt.port.createBranch(integration, sha);
  const warning = await stateBranchWarning(rt.port, runId);
  const issues = issueLinks(plan.parsed, config2);
  if (warning) log.warn({ runId, warning }, "state branch not protected");
  await rt.engine.start(
    { runId, planId, planCommit: sha, dagHash: plan.dagHash, nodes: plan.nodes, integrationBranch: integration, baseBranch: base },
    config2,
    { planSha: sha, ...warning ? { stateBranchWarning: warning } : {}, ...issues ? { issues } : {} },
    sha
  );
  rt.runs.set(runId, { planId, status: "running" });
  log.info({ runId, planId }, "run started");
  return { runId };
}

// src/app/steering.ts
async function handSteeringToJob(rt, runId, taskId, pr) {
  const loaded = await rt.engine.state(runId);
  const t = loaded?.state.journal.tasks.find((x) => x.id === taskId);
  const note2 = t?.attempt?.steering?.at(-1);
  if (!t || !note2) return void 0;
  const on = pr ?? t.attempt?.prNumber;
  if (on === void 0)
    return `\`${taskId}\` has no pull request yet, and its job reads steering there: steer again once its draft PR is open.`;
  await rt.port.createComment(
    on,
    steeringComment({ runId, taskId, attempt: t.attempts, id: note2.id, actor: note2.actor, message: note2.message })
  );
  return void 0;
}

// src/app/handlers/issue-comment.ts
async function onIssueComment(ctx, context) {
  const { payload } = context;
  if (payload.action !== "created") return;
  const parsed = parseCommand(payload.comment.body);
  if (!parsed) return;
  if (payload.sender.type === "Bot" || payload.comment.user?.type === "Bot") return;
  const rt = await ctx.rtOf(context);
  const issue = payload.issue.number;
  const reply = (body) => rt.port.createComment(issue, body);
  const react = (content) => rt.port.addReaction({ commentId: payload.comment.id }, content).catch((err) => {
    logOf(context).warn({ err: err.message, content }, "could not react to the command; it goes on");
  });
  const permission = await rt.port.permission(payload.sender.login);
  if (!WRITE_PERMISSIONS.has(permission)) return void await react("-1");
  await react("eyes");
  if (parsed.name === "unknown") return void await reply(`Unknown command \`${parsed.word}\`.

${HELP}`);
  if (parsed.name === "help") return void await reply(HELP);
  let target;
  if (payload.issue.pull_request) {
    const pr = await rt.port.getPullRequest(issue);
    const ref = pr.fromFork ? void 0 : await ctx.attemptOf(rt, pr.headRef);
    if (ref) target = { runId: ref.runId, taskId: ref.taskId };
  } else if (isAppAuthor(payload.issue.user, ctx.slug)) {
    target = parseMarker(payload.issue.body ?? "");
  }
  if (parsed.name === "run") {
    const planId = parsed.args[0];
    if (!planId) return void await reply("Say which plan: `/forge run <planId>`.");
    const sha = await rt.port.branchHead(await rt.port.defaultBranch());
    const started = await startPlanRun(ctx, rt, planId, sha, logOf(context));
    await reply(
      started.runId ? `Started run \`${started.runId}\` of plan \`${planId}\`.` : `Plan \`${planId}\` was not started:

${started.problems.map((p) => `- ${p}`).join("\n")}`
    );
    return;
  }
  if (parsed.name === "plan") {
    const now = await rt.port.issueAsEdited(issue);
    const edited = now.lastEditedAt !== null && Date.parse(now.lastEditedAt) > Date.parse(payload.comment.created_at);
    const same = (a, b) => a.replace(/\r\n/g, "\n") === b.replace(/\r\n/g, "\n");
    if (edited || !same(now.title, payload.issue.title) || !same(now.body, payload.issue.body ?? ""))
      return void await reply(
        "The issue was edited after this `/forge plan`: no plan is written from text you may not have read. Read the issue again and repeat the command."
      );
    const subIssues = payload.issue.pull_request ? 0 : payload.issue.sub_issues_summary?.total;
    const fromTree = await planFromIssue(rt.port, { number: issue, title: now.title, body: now.body, subIssues }, ctx.now());
    if (fromTree.kind !== "no-tree") return void await reply(issuePlanReply(fromTree, issue));
    const { branch, inputs } = planCaptainDispatch({ issue, title: now.title, body: now.body });
    const workflow = (await ctx.configOf(rt)).workflow;
    if ((await rt.port.listWorkflowRuns(workflow, { branch })).some((r) => r.status !== "completed"))
      return void await reply(`A Captain is already writing a plan from this issue on \`${branch}\`.`);
    await reply("A Captain agent will write a plan from this issue as a pull request.");
    const head = await rt.port.branchHead(await rt.port.defaultBranch());
    await rt.port.createBranch(branch, head);
    await rt.port.dispatchWorkflow(workflow, branch, inputs);
    return;
  }
  if (!target)
    return void await reply(
      "This is not a Forge task PR, run tracker or Change Request: say which run it is about here, or comment on the run's tracker issue."
    );
  const loaded = await rt.engine.state(target.runId);
  if (!loaded) return void await reply(`Run \`${target.runId}\` was not found.`);
  if (parsed.name === "status") {
    const j = loaded.state.journal;
    const lines = j.tasks.map((t) => `| \`${t.id}\` | ${t.status}${t.attempt?.hold ? ` (${t.attempt.hold})` : ""} | ${t.attempts} |`);
    await reply(
      [
        `Run \`${j.runId}\`: **${j.status}**, ${j.merged}/${j.tasks.length} merged.`,
        "",
        "| Task | Status | Attempt |",
        "|---|---|---:|",
        ...lines
      ].join("\n")
    );
    return;
  }
  const naming = parsed.name === "retry" || parsed.name === "steer" || parsed.name === "budget";
  const named = naming && parsed.args[0] && loaded.state.journal.tasks.some((t) => t.id === parsed.args[0]) ? parsed.args[0] : void 0;
  const round3 = parsed.name === "retry" && !named && !target.taskId && parsed.args[0]?.toLowerCase() === ROUND_WORD;
  const taskId = parsed.name === "budget" ? named : named ?? target.taskId;
  const rest = named !== void 0 ? parsed.rest.slice(named.length).trim() : round3 ? parsed.rest.slice(ROUND_WORD.length).trim() : parsed.rest;
  const amountUsd = parsed.name === "budget" ? budgetAmount(parsed.args.at(-1)) : void 0;
  const message = parsed.name === "retry" ? rest : parsed.name === "fix" || parsed.name === "steer" ? bounded(rest, FEEDBACK_LIMITS.message) : void 0;
  const input = {
    kind: "command",
    command: parsed.name,
    actor: payload.sender.login,
    ...taskId ? { taskId } : {},
    ...round3 ? { which: ROUND_WORD } : {},
    ...target.crId ? { crId: target.crId } : {},
    ...message ? { message } : {},
    ...amountUsd !== void 0 ? { amountUsd } : {},
    // The journal remembers the comment: it is acted on once, whichever delivery brings it.
    commentId: payload.comment.id
  };
  const result = await ctx.apply(rt, target.runId, [input]);
  if (result.rejections.length) return void await reply(result.rejections.map((r) => `- ${r.reason}`).join("\n"));
  if (round3) return void await reply(roundRetried(result.decisions));
  const undelivered = parsed.name === "steer" && taskId && result.decisions.some((d) => d.events.some((e) => e.type === "task.steered")) ? await handSteeringToJob(rt, target.runId, taskId, payload.issue.pull_request ? issue : void 0) : void 0;
  if (undelivered) await reply(undelivered);
  else await react("+1");
}
var ROUND_WORD = "failed";
function roundRetried(decisions) {
  const retried = decisions.flatMap((d) => d.events.filter((e) => e.type === "task.retried" && e.taskId).map((e) => e.taskId));
  const journal = decisions.at(-1)?.journal;
  const left = (journal?.tasks ?? []).flatMap(
    (t) => t.status === "FAILED" && t.attempt?.hold ? [{ id: t.id, hold: t.attempt.hold }] : []
  );
  return roundRetryReply(retried, left);
}
function budgetAmount(word) {
  const m = word && word.length <= 20 ? /^\+\$?(\d{1,6}(?:\.\d{1,2})?)$/.exec(word) : null;
  const n2 = m ? Number(m[1]) : NaN;
  return n2 > 0 ? n2 : void 0;
}

// src/app/issue-events.ts
var noteMarker = (runId) => `<!-- forge:issue-note ${runId} -->`;
async function runsWithIssues(ctx, rt, all = false) {
  const out = [];
  for (const [runId, r] of await ctx.knownRuns(rt)) {
    if (!all && r.status !== "running") continue;
    const loaded = await rt.engine.state(runId);
    const issues = loaded?.state.facts.issues;
    if (loaded && issues) out.push({ journal: loaded.state.journal, facts: loaded.state.facts, issues });
  }
  return out;
}
async function note(port, issue, runId, text) {
  const body = `${noteMarker(runId)}
${text}`;
  const id = await port.findComment(issue, noteMarker(runId));
  if (id !== null) await port.updateComment(id, body);
  else await port.createComment(issue, body);
}
var trackerOf = (r) => r.facts.trackerIssue !== void 0 ? ` on its tracker #${r.facts.trackerIssue}` : "";
async function onPullMergedIntoBase(ctx, rt, pr) {
  for (const r of await runsWithIssues(ctx, rt, true)) {
    if (r.journal.integrationBranch !== pr.head || r.journal.baseBranch !== pr.base) continue;
    await closeRunIssues(rt.port, r.journal, r.issues, pr.number);
  }
}
async function onIssueClosed(ctx, rt, issue) {
  for (const r of await runsWithIssues(ctx, rt)) {
    const taskId = Object.entries(r.issues.tasks).find(([, n2]) => n2 === issue)?.[0];
    const t = taskId !== void 0 ? r.journal.tasks.find((x) => x.id === taskId) : void 0;
    if (!t || t.status === "MERGED") continue;
    await note(
      rt.port,
      issue,
      r.journal.runId,
      `**Forge** \xB7 this issue was closed while its task \`${t.id}\` of run \`${r.journal.runId}\` is ${t.status}: the task goes on \u2014 the plan of a run is fixed once merged \u2014 and its work still lands with the run's final PR. To stop the run, comment \`/forge cancel\`${trackerOf(r)}. Forge does not reopen the issue.`
    );
  }
}
async function onTreeChanged(ctx, rt, issues, what) {
  for (const r of await runsWithIssues(ctx, rt)) {
    const mine = /* @__PURE__ */ new Set([...Object.values(r.issues.tasks), ...r.issues.parent !== void 0 ? [r.issues.parent] : []]);
    const hit = issues.find((n2) => mine.has(n2));
    if (hit === void 0) continue;
    const again = r.issues.parent !== void 0 ? `, then comment \`/forge plan\` on #${r.issues.parent} to build a plan from the tree as it is now` : "";
    await note(
      rt.port,
      hit,
      r.journal.runId,
      `**Forge** \xB7 ${what}: run \`${r.journal.runId}\` goes on with its plan \`${r.journal.planId}\` as merged \u2014 a run's plan is fixed, and changes to the issue tree do not reach it. To plan again, cancel the run with \`/forge cancel\`${trackerOf(r)}${again}.`
    );
  }
}

// src/app/handlers/issues.ts
async function onIssues(ctx, context) {
  const { payload } = context;
  if (payload.action !== "closed") return;
  if (!payload.issue.labels?.some((l) => (typeof l === "string" ? l : l.name) === LABELS.changeRequest)) {
    if (payload.sender.type !== "Bot") await onIssueClosed(ctx, await ctx.rtOf(context), payload.issue.number);
    return;
  }
  if (!isAppAuthor(payload.issue.user, ctx.slug)) return;
  const marker = parseMarker(payload.issue.body ?? "");
  if (!marker?.crId) return;
  const rt = await ctx.rtOf(context);
  if (!await crCloseCounts(rt.port, payload.issue.number, marker.runId, marker.crId, payload.sender.login)) return;
  await ctx.apply(rt, marker.runId, [{ kind: "cr.closed", crId: marker.crId }]);
}

// src/app/handlers/issue-tree.ts
async function onSubIssues(ctx, context) {
  const { payload } = context;
  if (payload.action !== "sub_issue_added" && payload.action !== "sub_issue_removed") return;
  if (payload.sender?.type === "Bot") return;
  const verb = payload.action === "sub_issue_added" ? "added to" : "removed from";
  const what = `sub-issue #${payload.sub_issue.number} was ${verb} #${payload.parent_issue.number}`;
  await onTreeChanged(ctx, await ctx.rtOf(context), [payload.parent_issue.number, payload.sub_issue.number], what);
}
async function onIssueDependencies(ctx, context) {
  const { payload } = context;
  if (payload.action !== "blocked_by_added" && payload.action !== "blocked_by_removed") return;
  if (payload.sender?.type === "Bot") return;
  const blocked2 = payload.blocked_issue?.number;
  const blocking = payload.blocking_issue?.number;
  if (blocked2 === void 0) return;
  const what = `#${blocked2} ${payload.action === "blocked_by_added" ? "is now" : "is no longer"} blocked by #${blocking ?? "?"}`;
  await onTreeChanged(ctx, await ctx.rtOf(context), [blocked2], what);
}

// src/app/handlers/merge-group.ts
var GROUP_REF = /^(?:refs\/heads\/)?gh-readonly-queue\/.+\/pr-(\d{1,9})-([0-9a-f]{40})$/;
async function onMergeGroup(ctx, context) {
  const p = context.payload;
  const rt = await ctx.rtOf(context);
  const m = p.action === "destroyed" && p.reason === "dequeued" ? GROUP_REF.exec(String(p.merge_group.head_ref).slice(0, 400)) : null;
  if (m) {
    const pr = await rt.port.getPullRequest(Number(m[1]));
    if (!pr.fromFork && pr.headSha === m[2])
      await redChecks(ctx, rt, context, { branch: pr.headRef, headSha: m[2], conclusion: "failure", group: p.merge_group.head_sha });
  }
  await flushMerges(ctx, rt);
}
async function onQueueChange(ctx, context) {
  const pr = context.payload.pull_request;
  if (pr.head.repo?.id !== context.payload.repository.id) return;
  const rt = await ctx.rtOf(context);
  if (await ctx.attemptOf(rt, pr.head.ref)) await flushMerges(ctx, rt);
}

// src/app/plan-check.ts
var PLAN_CHECK_NAME = "forge \xB7 plan";
var MAX_ANNOTATIONS = 50;
var PLAN_CHECK_LIMITS = { plans: 20, files: 500, bytes: 2 * 1024 * 1024 };
var PLAN_SUBDIRS = /* @__PURE__ */ new Set(["tasks", "overlays", "specs"]);
async function sizeToRead(port, planIds, config2, ref) {
  const total = { files: 0, bytes: 0 };
  const over = () => total.files > PLAN_CHECK_LIMITS.files || total.bytes > PLAN_CHECK_LIMITS.bytes;
  const add = (e) => {
    total.files++;
    if (e.type === "file") total.bytes += e.size;
  };
  if (config2) {
    const entry = (await port.listDirectory(".github", ref)).find((e) => e.path === CONFIG_PATH);
    if (entry) add(entry);
  }
  for (const planId of planIds) {
    if (over()) break;
    const root = planDir(planId);
    for (const entry of await port.listDirectory(root, ref)) {
      add(entry);
      if (entry.type === "dir" && PLAN_SUBDIRS.has(entry.name))
        for (const inner of await port.listDirectory(`${root}/${entry.name}`, ref)) add(inner);
      if (over()) break;
    }
  }
  return total;
}
var mb = (bytes) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
async function checkPlanPullRequest(port, engine, runs, pr) {
  const files = await port.listPullRequestFiles(pr.number);
  const plans = touchedPlans([{ modified: files }]);
  const configChanged = files.includes(CONFIG_PATH);
  if (plans.size === 0 && !configChanged) return { checked: false, problems: 0 };
  const size = plans.size > PLAN_CHECK_LIMITS.plans ? void 0 : await sizeToRead(port, [...plans.keys()], configChanged, pr.headSha);
  if (!size || size.files > PLAN_CHECK_LIMITS.files || size.bytes > PLAN_CHECK_LIMITS.bytes) {
    const what = !size ? `${plans.size} plan folders` : size.files > PLAN_CHECK_LIMITS.files ? `more than ${PLAN_CHECK_LIMITS.files} files` : `more than ${mb(PLAN_CHECK_LIMITS.bytes)}`;
    await port.createCheckRun({
      name: PLAN_CHECK_NAME,
      headSha: pr.headSha,
      status: "completed",
      conclusion: "failure",
      title: "Too large to check",
      summary: `This pull request changes plans holding ${what}. Forge checks at most ${PLAN_CHECK_LIMITS.plans} plan folders, ${PLAN_CHECK_LIMITS.files} files and ${mb(PLAN_CHECK_LIMITS.bytes)} in one pull request, and read none of it. Split the change into smaller pull requests.`
    });
    return { checked: true, problems: 1, tooLarge: true };
  }
  const found = [];
  for (const planId of plans.keys()) {
    const plan = await readPlan(port, planId, pr.headSha);
    for (const p of plan.problems) found.push({ path: `${planDir(planId)}/${p.file}`, problem: p });
    const active = [...runs].find(([, r]) => r.planId === planId && r.status === "running");
    if (active && plan.parsed.dag.data) {
      const loaded = await engine.state(active[0]);
      if (loaded) {
        for (const p of validateDagChange(pinnedDag(loaded.state.journal), plan.parsed.dag.data))
          found.push({ path: `${planDir(planId)}/dag.json`, problem: { ...p, message: `run ${active[0]} is in progress: ${p.message}` } });
      }
    }
  }
  if (configChanged) {
    const config2 = await readConfig(port, pr.headSha);
    if (!config2.ok) for (const p of config2.problems) found.push({ path: CONFIG_PATH, problem: p });
  }
  const annotations = found.slice(0, MAX_ANNOTATIONS).map(({ path: path2, problem }) => ({
    path: path2,
    startLine: problem.line ?? 1,
    endLine: problem.line ?? 1,
    level: "failure",
    title: problem.rule,
    message: `${problem.field ? `${problem.field} \u2014 ` : ""}${problem.message}`
  }));
  const summary = found.length ? [
    `${found.length} problem${found.length === 1 ? "" : "s"}:`,
    "",
    ...found.slice(0, 100).map(({ path: path2, problem }) => `- ${formatProblem({ ...problem, file: path2 }, { markdown: true })}`)
  ].join("\n") : `Checked ${[...plans.keys()].map((p) => `\`${p}\``).join(", ")}${configChanged ? `${plans.size ? " and " : ""}\`${CONFIG_PATH}\`` : ""}: no problems.`;
  await port.createCheckRun({
    name: PLAN_CHECK_NAME,
    headSha: pr.headSha,
    status: "completed",
    conclusion: found.length ? "failure" : "success",
    title: found.length ? `${found.length} problem${found.length === 1 ? "" : "s"} in the plan` : "The plan is valid",
    summary,
    annotations
  });
  return { checked: true, problems: found.length };
}

// src/app/handlers/pull-request.ts
var ACTED_ON = /* @__PURE__ */ new Set(["opened", "reopened", "synchronize", "closed", "ready_for_review", "edited"]);
async function onPullRequest(ctx, context) {
  const { payload } = context;
  if (payload.action === "enqueued" || payload.action === "dequeued") return onQueueChange(ctx, context);
  if (!ACTED_ON.has(payload.action)) return;
  const rt = await ctx.rtOf(context);
  const pr = payload.pull_request;
  const fromThisRepository = pr.head.repo?.id === payload.repository.id;
  const ref = fromThisRepository ? await ctx.attemptOf(rt, pr.head.ref) : void 0;
  if (!ref) {
    if (["opened", "reopened", "synchronize"].includes(payload.action) && pr.base.ref === payload.repository.default_branch) {
      await checkPlanPullRequest(rt.port, rt.engine, await ctx.knownRuns(rt), { number: pr.number, headSha: pr.head.sha });
    }
    if (payload.action === "closed" && pr.merged && fromThisRepository)
      await onPullMergedIntoBase(ctx, rt, { number: pr.number, head: pr.head.ref, base: pr.base.ref });
    return;
  }
  if (payload.action === "closed") {
    if (pr.merged && pr.merge_commit_sha)
      await ctx.apply(rt, ref.runId, [
        { kind: "pr.merged", taskId: ref.taskId, attempt: ref.attempt, number: pr.number, mergeSha: pr.merge_commit_sha }
      ]);
    return;
  }
  if (["opened", "reopened", "ready_for_review", "synchronize", "edited"].includes(payload.action)) {
    await ctx.apply(rt, ref.runId, [{ kind: "pr.opened", taskId: ref.taskId, attempt: ref.attempt, number: pr.number }]);
  }
}

// src/app/handlers/pull-request-review.ts
async function onPullRequestReview(ctx, context) {
  const { payload } = context;
  if (payload.action === "dismissed") return onDismissed(ctx, context);
  if (payload.action !== "submitted") return;
  const review2 = payload.review;
  const state = review2.state.toLowerCase();
  if (state !== "approved" && state !== "changes_requested") return;
  const reviewer = review2.user;
  if (!reviewer || reviewer.type === "Bot" || payload.sender.type === "Bot") return;
  const pr = payload.pull_request;
  if (pr.head.repo?.id !== payload.repository.id) return;
  const rt = await ctx.rtOf(context);
  const ref = await ctx.attemptOf(rt, pr.head.ref);
  if (!ref) {
    if (state === "approved")
      await finalPrApproved(ctx, rt, { number: pr.number, headRef: pr.head.ref, headSha: pr.head.sha, baseRef: pr.base.ref });
    return;
  }
  const permission = await rt.port.permission(reviewer.login);
  if (!WRITE_PERMISSIONS.has(permission)) {
    logOf(context).info(
      { runId: ref.runId, taskId: ref.taskId, reviewer: reviewer.login, permission },
      "a review by someone without write access: ignored"
    );
    return;
  }
  const body = review2.body ? bounded(review2.body, FEEDBACK_LIMITS.message) : void 0;
  const result = await ctx.apply(rt, ref.runId, [
    {
      kind: "review.submitted",
      taskId: ref.taskId,
      attempt: ref.attempt,
      reviewId: review2.id,
      actor: reviewer.login,
      state,
      headSha: review2.commit_id,
      ...body ? { body } : {}
    }
  ]);
  if (result.rejections.length)
    logOf(context).info(
      { runId: ref.runId, taskId: ref.taskId, rejections: result.rejections.map((r) => r.reason) },
      "review changed nothing"
    );
}
var APPROVERS_CHECKED2 = 5;
async function onDismissed(ctx, context) {
  const { payload } = context;
  const pr = payload.pull_request;
  if (pr.head.repo?.id !== payload.repository.id) return;
  const rt = await ctx.rtOf(context);
  const ref = await ctx.attemptOf(rt, pr.head.ref);
  if (!ref) return;
  const loaded = await rt.engine.state(ref.runId);
  const t = loaded?.state.journal.tasks.find((x) => x.id === ref.taskId);
  if (!attemptNumbered(t, ref.attempt)?.revision.reviewApprovedHead) return;
  const current = await rt.port.getPullRequest(pr.number);
  const approvers = [
    ...new Set(
      (await rt.port.listReviews(pr.number)).filter((r) => r.state === "APPROVED" && r.commitId === current.headSha && !r.bot && r.login).map((r) => r.login)
    )
  ].slice(0, APPROVERS_CHECKED2);
  let approved2 = false;
  for (const login of approvers) if (WRITE_PERMISSIONS.has(await rt.port.permission(login))) approved2 = true;
  const result = await ctx.apply(rt, ref.runId, [
    { kind: "review.dismissed", taskId: ref.taskId, attempt: ref.attempt, reviewId: payload.review.id, headSha: current.headSha, approved: approved2 }
  ]);
  if (result.rejections.length)
    logOf(context).info(
      { runId: ref.runId, taskId: ref.taskId, rejections: result.rejections.map((r) => r.reason) },
      "dismissed review changed nothing"
    );
}

// src/app/overlays.ts
async function overlayInput(port, engine, runId, planId, file, sha) {
  const loaded = await engine.state(runId);
  if (!loaded) return { problem: `run ${runId} not found` };
  const { journal } = loaded.state;
  const overlayId = file.replace(/^overlays\//, "").replace(/\.md$/, "");
  if (journal.plan.overlays.includes(overlayId)) return {};
  const plan = await readPlan(port, planId, sha);
  const overlay = plan.parsed.overlays.find((o) => o.name === overlayId)?.data;
  const cr = overlay ? journal.changeRequests.find((c) => c.id === overlay.cr) : void 0;
  let problem;
  if (!overlay) problem = `${planDir(planId)}/${file} has no valid overlay frontmatter`;
  else if (!cr) problem = `${overlayId} names Change Request ${overlay.cr}, which run ${runId} does not have`;
  else if (cr.status === "rejected" || cr.status === "applied") problem = `Change Request ${cr.id} is already ${cr.status}`;
  else if (plan.problems.length) {
    problem = `the plan does not pass \`forge validate\`:
${plan.problems.slice(0, 20).map((p) => `- ${formatProblem({ ...p, file: `${planDir(planId)}/${p.file}` }, { markdown: true })}`).join("\n")}`;
  } else {
    const changes = validateDagChange(pinnedDag(journal), plan.parsed.dag.data);
    if (changes.length) problem = `the overlay is not append-only:
${changes.map((p) => `- ${p.message}`).join("\n")}`;
  }
  if (problem) {
    const issue = cr?.issueNumber;
    if (issue !== void 0) await port.createComment(issue, `Forge refused \`${overlayId}\`: ${asData(problem)}`);
    return { problem };
  }
  const added = new Set(overlay.added_tasks);
  return {
    input: {
      kind: "overlay.applied",
      crId: cr.id,
      overlayId,
      planCommit: sha,
      nodes: planNodes(plan.parsed).filter((n2) => added.has(n2.id)),
      edges: overlay.added_edges
    }
  };
}

// src/app/handlers/push.ts
async function onPush(ctx, context) {
  const { payload } = context;
  if (!payload.ref.startsWith("refs/heads/")) return;
  const branch = payload.ref.slice("refs/heads/".length);
  if (payload.deleted) {
    const runId = parseStateBranch(branch);
    if (runId && /^[0-9a-f]{40}$/.test(payload.before) && !/^0+$/.test(payload.before)) {
      const rt2 = await ctx.rtOf(context);
      await rt2.engine.restore(runId, payload.before, payload.sender?.login);
    }
    return;
  }
  if (isReservedBranch(branch)) return;
  const rt = await ctx.rtOf(context);
  if (branch === payload.repository.default_branch) {
    rt.config = void 0;
    const next = rt.planChain.then(() => onDefaultBranchPush(ctx, rt, context));
    rt.planChain = next.catch(() => void 0);
    return next;
  }
  const ref = await ctx.attemptOf(rt, branch);
  if (!ref || !payload.head_commit) return;
  const commits = payload.commits;
  const listed = commits[commits.length - 1]?.id === payload.after;
  const parent = !listed ? void 0 : commits.length >= 2 ? commits[commits.length - 2].id : payload.before;
  const input = await recordInput(
    rt.port,
    ref,
    payload.after,
    parent ? { message: payload.head_commit.message, parents: [parent] } : void 0
  );
  if (input) await ctx.apply(rt, ref.runId, [input]);
}
async function onDefaultBranchPush(ctx, rt, context) {
  const { payload } = context;
  const plans = touchedPlans(payload.commits);
  if (plans.size === 0) return;
  const runs = await ctx.knownRuns(rt);
  const config2 = await ctx.configOf(rt);
  for (const [planId, files] of plans) {
    const active = [...runs].filter(([, r]) => r.planId === planId && r.status === "running").map(([id]) => id);
    if (active.length === 0) {
      if (!config2.autostart || !files.has("dag.json")) continue;
      const started = await startPlanRun(ctx, rt, planId, payload.after, logOf(context));
      if (started.problems) context.log.warn({ planId, problems: started.problems }, "plan not started");
      continue;
    }
    for (const runId of active) {
      const overlayFiles = [...files].filter((f) => /^overlays\/overlay-\d{3,}\.md$/.test(f));
      const inputs = [];
      for (const f of overlayFiles) {
        const res = await overlayInput(rt.port, rt.engine, runId, planId, f, payload.after);
        if (res.input) inputs.push(res.input);
        else if (res.problem) context.log.warn({ runId, overlay: f, problem: res.problem }, "overlay refused");
      }
      if (inputs.length === 0) inputs.push({ kind: "plan.changed", commit: payload.after });
      await ctx.apply(rt, runId, inputs);
    }
  }
}

// src/app/handlers/workflow.ts
function recordedRunId(journal, ref) {
  return attemptNumbered(
    journal?.tasks.find((x) => x.id === ref.taskId),
    ref.attempt
  )?.revision.workflowRunId;
}
async function isTheAttemptsJob(ctx, rt, context, ref, run2, journal) {
  const why = notTheAttemptsJob(run2, {
    repositoryId: context.payload.repository.id,
    workflowPath: agentWorkflowPath(await ctx.configOf(rt)),
    recordedRunId: recordedRunId(journal, ref)
  });
  if (why)
    logOf(context).info(
      { event: context.name, workflowRunId: run2.id, path: run2.path ?? null, runEvent: run2.event, attempt: ref, reason: why },
      "a workflow run on a task branch that is not the attempt's job: ignored"
    );
  return why === void 0;
}
async function onWorkflowRun(ctx, context) {
  const { payload } = context;
  const run2 = payload.workflow_run;
  const rt = await ctx.rtOf(context);
  const ref = run2.head_branch ? await ctx.attemptOf(rt, run2.head_branch) : void 0;
  if (!ref) return;
  const loaded = await rt.engine.state(ref.runId);
  const journal = loaded?.state.journal;
  const facts = {
    id: run2.id,
    // GitHub Enterprise Server's runs carry no `path`; the delivery's `workflow` names the file.
    path: run2.path ?? payload.workflow?.path,
    event: run2.event,
    headRepositoryId: run2.head_repository?.id
  };
  if (!await isTheAttemptsJob(ctx, rt, context, ref, facts, journal)) {
    const file = workflowFile(facts.path);
    if (payload.action === "completed" && file !== void 0 && file !== agentWorkflowPath(await ctx.configOf(rt)))
      await onCiDone(ctx, rt, context, { branch: run2.head_branch, headSha: run2.head_sha, conclusion: run2.conclusion });
    return;
  }
  if (payload.action === "in_progress" || payload.action === "requested") {
    await ctx.apply(rt, ref.runId, [
      {
        kind: payload.action === "in_progress" ? "agent.started" : "agent.heartbeat",
        taskId: ref.taskId,
        attempt: ref.attempt,
        ...payload.action === "in_progress" ? { workflowRunId: run2.id } : {}
      }
    ]);
    return;
  }
  if (payload.action !== "completed") return;
  if (!stillRunning(journal, ref)) return;
  const branch = run2.head_branch;
  const ended = { id: run2.id, conclusion: run2.conclusion };
  await ctx.laterReads.after(`${rt.port.owner}/${rt.port.repo}:${ref.runId}:${ref.taskId}:${ref.attempt}:${run2.id}`, async () => {
    const now = ctx.laterReads.graceMs > 0 ? (await rt.engine.state(ref.runId))?.state.journal : journal;
    if (!stillRunning(now, ref)) return;
    const iteration = now?.tasks.find((x) => x.id === ref.taskId)?.attempt?.revision.iteration;
    await ctx.apply(rt, ref.runId, [await endedJobInput(rt.port, ref, branch, ended, iteration)]);
  });
}
function stillRunning(journal, ref) {
  const task2 = journal?.tasks.find((x) => x.id === ref.taskId);
  if (task2) return task2.status === "RUNNING" && task2.attempts === ref.attempt;
  return journal?.followups.find((f) => f.id === ref.taskId)?.status === "running";
}
async function onWorkflowJob(ctx, context) {
  const { payload } = context;
  if (payload.action !== "in_progress") return;
  const rt = await ctx.rtOf(context);
  const job = payload.workflow_job;
  const ref = job.head_branch ? await ctx.attemptOf(rt, job.head_branch) : void 0;
  if (!ref) return;
  const journal = (await rt.engine.state(ref.runId))?.state.journal;
  const recorded = recordedRunId(journal, ref);
  if (recorded === void 0 || recorded !== job.run_id) return;
  await ctx.apply(rt, ref.runId, [{ kind: "agent.started", taskId: ref.taskId, attempt: ref.attempt, workflowRunId: job.run_id }]);
}

// src/app/handlers/index.ts
function registerHandlers(app, ctx) {
  app.on("push", guard(ctx, app, onPush));
  app.on("pull_request", guard(ctx, app, onPullRequest));
  app.on("pull_request_review", guard(ctx, app, onPullRequestReview));
  app.on("workflow_run", guard(ctx, app, onWorkflowRun));
  app.on("workflow_job", guard(ctx, app, onWorkflowJob));
  app.on("check_run", guard(ctx, app, onCheckRun));
  app.on("issue_comment", guard(ctx, app, onIssueComment));
  app.on("issues", guard(ctx, app, onIssues));
  app.on("sub_issues", guard(ctx, app, onSubIssues));
  app.on("issue_dependencies", guard(ctx, app, onIssueDependencies));
  app.on("check_suite", guard(ctx, app, onChecksDone));
  app.on("status", guard(ctx, app, onChecksDone));
  app.on("merge_group", guard(ctx, app, onMergeGroup));
  app.on("installation", (context) => onInstallation(ctx, context));
  app.on("installation_repositories", (context) => onInstallation(ctx, context));
}

// src/app/app.ts
function createForgeApp(options2) {
  const ctx = new AppContext(options2);
  const sweeper = new Sweeper(ctx);
  const forgeApp = ((app) => {
    ctx.probot = app;
    registerHandlers(app, ctx);
    if (options2.reconcileEveryMs) sweeper.start(app, options2.reconcileEveryMs);
  });
  forgeApp.runtimes = ctx.runtimes;
  forgeApp.tick = () => sweeper.tick();
  forgeApp.tickRepository = (owner, repo) => sweeper.tickRepository(owner, repo);
  forgeApp.stop = () => {
    sweeper.stop();
    ctx.laterReads.stop();
    for (const rt of ctx.runtimes.values()) rt.engine.stop();
    if (ctx.probot) closePaces(ctx.probot);
  };
  forgeApp.busy = () => {
    const engines = [...ctx.runtimes.values()].map((rt) => rt.engine);
    const working = ctx.inFlight.size > 0 || engines.some((e) => e.busy);
    const asleep = engines.reduce((n2, e) => n2 + e.asleep, 0);
    return working && !(ctx.probot && waitsForClock(ctx.probot, asleep));
  };
  forgeApp.idle = async () => {
    while (ctx.inFlight.size || [...ctx.runtimes.values()].some((rt) => rt.engine.busy)) {
      await Promise.all([...ctx.inFlight]);
      await ctx.settle();
    }
  };
  return forgeApp;
}

// src/app/tick-entry.ts
function mask(secret) {
  if (!secret) return;
  setSecret(secret);
  for (const line of secret.split(/\r?\n/)) if (line.trim()) setSecret(line.trim());
}
async function runTick(env = process.env) {
  try {
    const appId = getInput("app-id");
    const rawKey = getInput("app-private-key");
    const journalSecret = getInput("journal-key");
    mask(rawKey);
    mask(journalSecret);
    const privateKey = rawKey.replace(/\\n/g, "\n");
    mask(privateKey);
    if (!appId || !privateKey)
      throw new Error(
        "mode 'tick' acts as the Forge App: pass `app-id: ${{ secrets.FORGE_APP_ID }}` and `app-private-key: ${{ secrets.FORGE_APP_PRIVATE_KEY }}` (the App's registration, as secrets)"
      );
    const full = env.GITHUB_REPOSITORY;
    if (!full || !/^[^/\s]+\/[^/\s]+$/.test(full))
      throw new Error("GITHUB_REPOSITORY must be owner/name; is this running inside GitHub Actions?");
    const probot = new Probot({
      appId,
      privateKey,
      ...env.GITHUB_API_URL ? { baseUrl: env.GITHUB_API_URL } : {},
      logLevel: "warn"
    });
    const journalKey = journalSecret ? journalKeyFromSecret(journalSecret) : journalKeyFrom(privateKey);
    const forge = createForgeApp({ background: false, journalKey });
    await probot.load(forge);
    const [owner, repo] = full.split("/");
    await forge.tickRepository(owner, repo);
    forge.stop();
    info(`Forge tick: reconciled ${full}`);
  } catch (e) {
    setFailed(`Forge tick failed: ${e.message}`);
  }
}
export {
  runTick
};

#include "workspace/script.hpp"

#include <algorithm>

namespace hearth::workspace {
namespace {

/// The set-up run before a script, in its global (a classic script: see script.hpp). Kept on one
/// line when sent, so that the utilities that follow it keep their line numbers (line N + 1 of the
/// prelude is line N of the first utilities file). No `//` comments inside: newlines are joined.
constexpr std::string_view kSetup = R"JS(
(function (g) {
  "use strict";
  const I = g.__hearth_in;
  delete g.__hearth_in;
  const O = g.__hearth_out;
  Object.defineProperty(g, "__hearth_out", {value: O, writable: false, enumerable: false, configurable: false});
  const readOnly = (n) => {
    const wrapped = new WeakMap();
    const deny = function () { throw new TypeError(n + " is read-only (permission r): a script cannot change it"); };
    const wrap = (v) => {
      if (v === null || typeof v !== "object") return v;
      let p = wrapped.get(v);
      if (p) return p;
      p = new Proxy(v, {
        get(t, k, r) { return wrap(Reflect.get(t, k, r)); },
        getOwnPropertyDescriptor(t, k) {
          const d = Reflect.getOwnPropertyDescriptor(t, k);
          if (d && "value" in d) d.value = wrap(d.value);
          return d;
        },
        set: deny, defineProperty: deny, deleteProperty: deny, setPrototypeOf: deny, preventExtensions: deny
      });
      wrapped.set(v, p);
      return p;
    };
    return wrap;
  };
  for (const n of Object.keys(I.r)) {
    Object.defineProperty(g, n, {value: readOnly(n)(I.r[n]), writable: false, enumerable: true, configurable: false});
  }
  for (const n of I.rw) {
    Object.defineProperty(g, n, {configurable: false});
  }
  for (const n of I.w) {
    const rec = {replaced: false, value: null, set: Object.create(null), del: []};
    O.writes[n] = rec;
    const no = (what) => function () { throw new TypeError(n + " is write-only: " + what); };
    const key = (k) => {
      if (typeof k !== "string") throw new TypeError(n + " is write-only: only named members can be written");
      return k;
    };
    const p = new Proxy(Object.create(null), {
      get: no("its value cannot be read"),
      has: no("its members cannot be tested"),
      ownKeys: no("its members cannot be listed"),
      getOwnPropertyDescriptor: no("its members cannot be read"),
      defineProperty: no("assign its members instead"),
      getPrototypeOf: no("its prototype cannot be read"),
      setPrototypeOf: no("its prototype cannot be set"),
      preventExtensions: no("it cannot be frozen"),
      isExtensible: no("it cannot be inspected"),
      set(t, k, v) {
        k = key(k);
        rec.set[k] = v;
        const i = rec.del.indexOf(k);
        if (i >= 0) rec.del.splice(i, 1);
        return true;
      },
      deleteProperty(t, k) {
        k = key(k);
        delete rec.set[k];
        if (!rec.del.includes(k)) rec.del.push(k);
        return true;
      }
    });
    Object.defineProperty(g, n, {
      get() { return p; },
      set(v) { rec.replaced = true; rec.value = v; rec.set = Object.create(null); rec.del = []; },
      enumerable: true, configurable: false
    });
  }
  Object.defineProperty(g, "attempt_completion", {
    value: function attempt_completion(result) {
      O.completion = {result: result === undefined ? "" : result};
    },
    writable: false, enumerable: false, configurable: false
  });
  if (!I.time) {
    const D = Date;
    const deny = () => {
      throw new TypeError("the clock is not granted to this workspace (grants.time): Date.now() and new Date() without a time are refused; pass the time you mean");
    };
    const HDate = function Date(...a) {
      if (!new.target || a.length === 0) deny();
      return Reflect.construct(D, a, new.target);
    };
    HDate.prototype = D.prototype;
    HDate.UTC = D.UTC;
    HDate.parse = D.parse;
    HDate.now = function now() { deny(); };
    Object.defineProperty(D.prototype, "constructor", {value: HDate, writable: false, configurable: false});
    Object.defineProperty(g, "Date", {value: HDate, writable: false, enumerable: false, configurable: false});
  }
  if (!I.random) {
    Object.defineProperty(Math, "random", {
      value: function random() { throw new TypeError("randomness is not granted to this workspace (grants.random): Math.random() is refused"); },
      writable: false, configurable: false
    });
  } else {
    const imul = Math.imul;
    let a = I.seed >>> 0;
    Object.defineProperty(Math, "random", {
      value: function random() {
        a = (a + 0x6D2B79F5) >>> 0;
        let t = a;
        t = imul(t ^ (t >>> 15), t | 1);
        t ^= t + imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
      },
      writable: false, configurable: false
    });
  }
  const refuse = (name, grant) => function () {
    throw new TypeError(name + ": this workspace does not grant " + grant);
  };
  const io = g.ctx;
  const define = (name, fn) => Object.defineProperty(g, name, {value: fn, writable: false, enumerable: false, configurable: false});
  define("readFile", io && io.readFile ? io.readFile : refuse("readFile", "file access (grants.files)"));
  define("fetch", io && io.fetch ? io.fetch : refuse("fetch", "network access (grants.network)"));
})(globalThis);
)JS";

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\n') {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  return out;
}

bool io_granted(const Grants& grants) {
  const auto* b = std::get_if<bool>(&grants.network);
  return grants.files.has_value() || b == nullptr || *b;
}

}  // namespace

std::string build_prelude(const Definition& def) {
  static const std::string setup = one_line(kSetup);
  std::string prelude = setup;
  prelude += '\n';
  prelude += def.utilities_source;
  return prelude;
}

jsworker::EvaluateSource build_evaluation(const Definition& def, const json::object& state,
                                          const std::string& script, const RunInputs& inputs) {
  jsworker::EvaluateSource e;
  e.source = script;
  e.filename = "script";
  e.prelude = build_prelude(def);
  e.prelude_filename = def.utility_files.empty() ? "prelude" : def.utility_files.front();
  e.clock_ms = def.grants.time ? inputs.clock_ms : 0;
  e.io = io_granted(def.grants);
  e.timeout = def.limits.timeout;

  json::object in;
  json::object r;
  json::array rw;
  json::array w;
  for (const auto& s : def.states) {
    if (!s.is_public) continue;
    const auto* v = state.if_contains(s.name);
    const json::value value = v != nullptr ? *v : json::value(nullptr);
    switch (s.access) {
      case Access::kRead:
        r[s.name] = value;
        break;
      case Access::kReadWrite:
        rw.push_back(json::string(s.name));
        e.globals[s.name] = value;
        break;
      case Access::kWrite:
        w.push_back(json::string(s.name));
        break;
    }
  }
  in["r"] = std::move(r);
  in["rw"] = std::move(rw);
  in["w"] = std::move(w);
  in["time"] = def.grants.time;
  in["random"] = def.grants.random;
  in["seed"] = inputs.seed;
  e.globals["__hearth_in"] = std::move(in);
  e.globals["__hearth_out"] = json::object{{"writes", json::object()}, {"completion", nullptr}};
  return e;
}

Result<ScriptResult> read_result(const Definition& def, const json::object& state,
                                 const jsworker::Returned& returned) {
  ScriptResult out;
  out.state = state;
  out.output = returned.value;
  if (!returned.globals) {
    return Error::make(ErrorCode::kInternalError, "the worker returned no state");
  }
  const auto& globals = *returned.globals;
  const json::object* writes = nullptr;
  if (const auto* o = globals.if_contains("__hearth_out"); o != nullptr && o->is_object()) {
    if (const auto* w = o->get_object().if_contains("writes"); w != nullptr && w->is_object()) {
      writes = &w->get_object();
    }
    if (const auto* c = o->get_object().if_contains("completion"); c != nullptr && c->is_object()) {
      if (const auto* r = c->get_object().if_contains("result")) out.completion = *r;
    }
  }
  for (const auto& s : def.states) {
    if (!s.writable()) continue;
    if (s.access == Access::kReadWrite) {
      const auto* v = globals.if_contains(s.name);
      if (v == nullptr) {
        return Error::make(ErrorCode::kInvalidParams,
                           s.name + " is undefined after the script (a state always has a value)",
                           json::object{{"state", s.name}, {"path", ""}, {"keyword", "defined"}});
      }
      out.state[s.name] = *v;
      continue;
    }
    // A write-only state: its recorded writes over its committed value.
    const json::value* rec_v = writes != nullptr ? writes->if_contains(s.name) : nullptr;
    if (rec_v == nullptr || !rec_v->is_object()) continue;
    const auto& rec = rec_v->get_object();
    json::value value = out.state.contains(s.name) ? out.state[s.name] : json::value(nullptr);
    if (const auto* replaced = rec.if_contains("replaced");
        replaced != nullptr && replaced->is_bool() && replaced->get_bool()) {
      const auto* v = rec.if_contains("value");
      if (v == nullptr) {
        return Error::make(ErrorCode::kInvalidParams,
                           s.name + " was set to undefined (a state always has a value)",
                           json::object{{"state", s.name}, {"path", ""}, {"keyword", "defined"}});
      }
      value = *v;
    }
    const auto* set = rec.if_contains("set");
    const auto* del = rec.if_contains("del");
    const bool has_members = (set != nullptr && set->is_object() && !set->get_object().empty()) ||
                             (del != nullptr && del->is_array() && !del->get_array().empty());
    if (has_members && !value.is_object()) {
      return Error::make(ErrorCode::kInvalidParams,
                         s.name + " is not an object: assign it whole rather than its members",
                         json::object{{"state", s.name}, {"path", ""}, {"keyword", "type"}});
    }
    if (del != nullptr && del->is_array()) {
      for (const auto& k : del->get_array()) {
        if (k.is_string()) value.get_object().erase(k.get_string());
      }
    }
    if (set != nullptr && set->is_object()) {
      for (const auto& kv : set->get_object()) value.get_object()[kv.key()] = kv.value();
    }
    out.state[s.name] = std::move(value);
  }
  return out;
}

}  // namespace hearth::workspace

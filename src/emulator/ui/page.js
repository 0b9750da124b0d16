// What every view of the page shares: the admin routes it reads and acts through, its
// state (the site shown, the open tab, the page of each list), what it last drew, and the
// refresh that reads the header and the open view again.
import { $, el, count, fill, num, plural } from "./dom.js";

// The admin routes are siblings of this page: /_emulator/ui -> /_emulator/{op}.
export var BASE = location.pathname.replace(/\/ui\/?$/, "/");
// Operations that act on one site's data: the page names the site by id, never by key.
var SITE_OPS = { broadcasts: 1, triggers: 1, drips: 1, subscribers: 1, segments: 1, events: 1,
  deliveries: 1, retention: 1, summary: 1, notifications: 1 };
export var PAGE = 50;
export var state = {
  ops: null, site: null, sites: [], defaultSite: null, tab: "broadcasts", frozen: false,
  now: null, nowAt: 0, broadcastPage: 0, subscriberPage: 0, subscriber: null,
  segmentNames: {}, openRequest: null
};

// What each view last drew, by key: a view re-renders only when its data changed, so that
// a page left open does not flicker.
export var rendered = {};
export function changed(key, data) {
  var s = JSON.stringify(data);
  if (rendered[key] === s) return false;
  rendered[key] = s;
  return true;
}
// Everything is drawn afresh at the next refresh (another site, a reset).
export function forgetRendered() {
  Object.keys(rendered).forEach(function (k) { delete rendered[k]; });
}

export function has(op) { return !state.ops || state.ops.indexOf(op) >= 0; }

export function admin(op, args) {
  var body = {};
  Object.keys(args || {}).forEach(function (k) {
    if (args[k] !== null && args[k] !== undefined && args[k] !== "") body[k] = args[k];
  });
  if (SITE_OPS[op] && state.site !== null && body.site_id === undefined) body.site_id = state.site;
  return fetch(BASE + op, {
    method: "POST", cache: "no-store",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body)
  }).then(function (r) {
    return r.text().then(function (text) {
      var data = null;
      try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
      if (!r.ok) {
        var err = new Error(op + ": " + ((data && data.error) || ("HTTP " + r.status)));
        err.status = r.status;
        throw err;
      }
      return data;
    });
  });
}
// A `meta` answer or a plain list, as {entries, total, pruned, retention}.
export function entriesOf(answer) {
  if (Array.isArray(answer)) return { entries: answer, total: answer.length };
  answer = answer || {};
  var entries = answer.entries || [];
  return { entries: entries, total: answer.total !== undefined ? answer.total : entries.length,
    pruned: answer.pruned, retention: answer.retention };
}
// A log's newest page, newest first: the log is oldest first, so its size is read, then
// its last page.
export function newestPage(op, filters, limit) {
  var first = Object.assign({ meta: true, limit: 1, offset: 0 }, filters);
  return admin(op, first).then(function (head) {
    if (head.total === undefined) {
      return admin(op, Object.assign({ meta: true }, filters)).then(function (all) {
        var e = all.entries || [];
        all.entries = e.slice(Math.max(0, e.length - limit)).reverse();
        all.total = e.length;
        return all;
      });
    }
    var offset = Math.max(0, head.total - limit);
    return admin(op, Object.assign({ meta: true, limit: limit, offset: offset }, filters)).then(function (page) {
      page.entries = (page.entries || []).slice().reverse();
      if (page.total === undefined) page.total = head.total;
      return page;
    });
  });
}
// What a log's retention keeps and has pruned, under its table.
export function prunedNote(id, what, answer) {
  var r = answer.retention;
  $(id).textContent = (r === 0 ? "Retention keeps every " + what.replace(/s$/, "") + "." : "Retention keeps the last " + r + " " + what + "; ") +
    (r === 0 ? "" : plural(num(answer.pruned), what.replace(/s$/, ""), what) + " pruned so far.");
}

// The site's segments by id, named wherever a view shows one.
export function segmentName(id) {
  var name = state.segmentNames[String(id)];
  return name ? name + " (" + id + ")" : String(id);
}
export function loadSegments() {
  if (!has("segments")) return Promise.resolve();
  return admin("segments", { members: false }).then(function (segs) {
    var names = {};
    (segs || []).forEach(function (s) { names[String(s.segment_id)] = s.segment_name || s.name; });
    state.segmentNames = names;
  });
}

// A page back or on at a time, and the first and the last at once (at ten million
// subscribers, the last is 200,000 pages away). `labels` name the four in the list's order:
// broadcasts newest first, subscribers in the order they subscribed.
export var BY_AGE = ["« Newest", "‹ Newer", "Older ›", "Oldest »"];
export var IN_ORDER = ["« First", "‹ Previous", "Next ›", "Last »"];
export function pager(id, page, total, go, labels) {
  var pages = Math.max(1, Math.ceil(total / PAGE));
  function button(label, to, testid, off) {
    return el("button", { type: "button", disabled: off, "data-testid": testid, onclick: function () { go(to); } }, label);
  }
  fill(id, total > PAGE ? [
    button(labels[0], 0, "page-first", page <= 0),
    button(labels[1], page - 1, "page-prev", page <= 0),
    el("span", { class: "muted", "data-testid": "page-of" }, "page " + count(page + 1) + " of " + count(pages)),
    button(labels[2], page + 1, "page-next", page + 1 >= pages),
    button(labels[3], pages - 1, "page-last", page + 1 >= pages)
  ] : null);
}

export function showError(message) { var b = $("error-banner"); b.textContent = message; b.hidden = false; }
function hideError() { $("error-banner").hidden = true; }

// Each tab's view, and the header read before it: inspector.js names them.
export var views = {};
var header = function () { return Promise.resolve(); };
export function setHeader(read) { header = read; }

// One refresh at a time; one asked for meanwhile runs after it.
var busy = false, again = false;
export function refresh() {
  if (busy) { again = true; return; }
  busy = true;
  again = false;
  var ready = state.ops ? Promise.resolve() : admin("operations").then(function (ops) {
    state.ops = Array.isArray(ops) ? ops : (ops && ops.operations) || null;
  }, function () { state.ops = null; });
  ready.then(header).then(function () { return views[state.tab](); }).then(hideError, function (e) {
    // The page keeps what it showed; the banner says why it is stale.
    showError(e.message);
  }).then(function () {
    busy = false;
    if (again) refresh();
  });
}
// A refresh soon, one for a burst of changes.
var debounce = null;
export function onChange() {
  if (debounce) return;
  debounce = setTimeout(function () { debounce = null; refresh(); }, 60);
}

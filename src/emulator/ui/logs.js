// The events and requests tabs: the site's tracked events and the emulator's request log,
// newest first, the requests filtered by path and status and each opened to its headers
// and body.
import { $, compact, el, empty, fill, fmtTime, headings, num } from "./dom.js";
import { changed, newestPage, onChange, prunedNote, refresh, rendered, state } from "./page.js";

export function viewEvents() {
  return newestPage("events", {}, 200).then(function (answer) {
    if (!changed("events", answer)) return;
    $("events-total").textContent = "(" + answer.total + ")";
    prunedNote("events-pruned", "events", answer);
    fill("event-table-wrap", answer.entries.length ? el("table", { id: "event-table", "data-testid": "event-table" },
      headings(["received", "event", "profile", "device token hash", "data"]),
      el("tbody", null, answer.entries.map(function (e) {
        return el("tr", { "data-testid": "event-row" },
          el("td", null, fmtTime(e.received_at)), el("td", null, e.event_name || ""),
          el("td", null, e.profile_id || ""), el("td", { class: "mono" }, e.device_token_hash || ""),
          el("td", { class: "mono" }, e.data ? compact(e.data) : ""));
      }))) : empty("No event tracked on this site."));
  });
}

function requestFilters() {
  var f = {};
  var path = $("req-path").value.trim();
  var status = $("req-status").value.trim();
  if (path) f.path = path;
  if (/^\d{3}$/.test(status)) f.status = Number(status);
  return f;
}
export function viewRequests() {
  var status = $("req-status").value.trim();
  if (status && !/^\d{3}$/.test(status)) { fill("request-table-wrap", empty("A status is three digits.")); return Promise.resolve(); }
  return newestPage("requests", requestFilters(), 200).then(function (answer) {
    if (!changed("requests", [answer, state.openRequest])) return;
    $("requests-total").textContent = "(" + answer.total + ")";
    prunedNote("requests-pruned", "requests", answer);
    fill("request-table-wrap", answer.entries.length ? el("table", { id: "request-table", "data-testid": "request-table" },
      el("thead", null, el("tr", null, [el("th", null, "time"), el("th", null, "method"), el("th", null, "path"),
        el("th", { class: "num" }, "status"), el("th", { class: "num" }, "duration"), el("th", null, "fault"), el("th", null, "trace")])),
      el("tbody", null, answer.entries.map(function (r, i) {
        var key = r.received_at + " " + r.method + " " + r.path + " " + i;
        var row = el("tr", { class: "clickable", "data-testid": "request-row", "data-path": r.path, "data-status": r.status,
          onclick: function () { state.openRequest = state.openRequest === key ? null : key; rendered.requests = null; refresh(); } },
          el("td", null, fmtTime(r.received_at)),
          el("td", null, r.method),
          el("td", { class: "mono" }, r.path + (r.query ? "?" + r.query : ""), r.interface && r.interface !== "main" ? el("span", { class: "muted" }, " (" + r.interface + ")") : null),
          el("td", { class: "num http-" + String(r.status).charAt(0), "data-testid": "request-status" }, r.status === null || r.status === undefined ? "—" : String(r.status)),
          el("td", { class: "num" }, r.duration_ms === null || r.duration_ms === undefined ? "—" : (Math.round(num(r.duration_ms) * 10) / 10) + " ms"),
          el("td", { class: "fault", "data-testid": "request-fault" }, r.fault ? compact(r.fault) : ""),
          // The client's trace (its traceparent), shortened as tracing tools show it; whole on hover.
          el("td", { class: "mono", "data-testid": "request-trace", title: r.trace_id || "" }, r.trace_id ? r.trace_id.slice(0, 8) + "…" : ""));
        if (state.openRequest !== key) return row;
        var headers = Object.keys(r.headers || {}).map(function (h) { return h + ": " + r.headers[h]; }).join("\n");
        return [row, el("tr", { "data-testid": "request-detail" }, el("td", { colspan: 7 },
          el("pre", { class: "detail" }, headers + (r.body ? "\n\n" + compact(r.body) : ""))))];
      }))) : empty("No request" + (Object.keys(requestFilters()).length ? " matches the filters." : " yet.")));
  });
}
// The request log's filters: read again as they are typed.
export function wireRequests() {
  $("req-path").addEventListener("input", function () { rendered.requests = null; onChange(); });
  $("req-status").addEventListener("input", function () { rendered.requests = null; onChange(); });
  $("req-clear-filters").addEventListener("click", function () { $("req-path").value = ""; $("req-status").value = ""; rendered.requests = null; refresh(); });
}

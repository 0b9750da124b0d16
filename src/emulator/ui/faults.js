// The faults tab: a fault injected by form, the random faults' counts, and the requests
// the log shows answered with a fault.
import { $, compact, el, fill, fmtTime, headings, plural, stat } from "./dom.js";
import { admin, changed, has, newestPage, refresh } from "./page.js";

export function viewFaults() {
  return Promise.all([
    has("fault_stats") ? admin("fault_stats") : Promise.resolve({}),
    newestPage("requests", {}, 500)
  ]).then(function (out) {
    var stats = out[0] || {}, faulted = out[1].entries.filter(function (r) { return r.fault; });
    if (!changed("faults", [stats, faulted])) return;
    var kinds = Object.keys(stats);
    fill("fault-stats", kinds.length ? el("div", { class: "stats" }, kinds.map(function (k) { return stat(k, stats[k], "fault-stat"); }))
      : el("p", { class: "muted" }, "No random fault injected."));
    fill("faulted-wrap", faulted.length ? el("table", { "data-testid": "faulted-table" },
      headings(["time", "method", "path", "status", "fault"]),
      el("tbody", null, faulted.map(function (r) {
        return el("tr", null, el("td", null, fmtTime(r.received_at)), el("td", null, r.method), el("td", { class: "mono" }, r.path),
          el("td", { class: "http-" + String(r.status).charAt(0) }, String(r.status)), el("td", { class: "fault" }, compact(r.fault)));
      }))) : el("p", { class: "muted" }, "No request in the log met a fault."));
  });
}
export function wireFaults() {
  $("fault-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var args = { path: $("fault-path").value.trim(), method: $("fault-method").value,
      times: Number($("fault-times").value || 1), processed: $("fault-processed").checked };
    var drop = $("fault-drop").value;
    if (drop) args.drop = drop;
    else if ($("fault-status").value) args.status = Number($("fault-status").value);
    if ($("fault-retry-after").value) args.retry_after = Number($("fault-retry-after").value);
    if ($("fault-delay").value) args.delay = Number($("fault-delay").value);
    admin("inject_fault", args).then(function () {
      $("fault-result").textContent = "Injected: the next " + plural(args.times, "request") + " to " + args.path + " will fail.";
      refresh();
    }, function (e) { $("fault-result").textContent = e.message; });
  });
  $("faults-clear").addEventListener("click", function () {
    admin("clear_faults").then(function () { $("fault-result").textContent = "Every fault cleared."; refresh(); },
      function (e) { $("fault-result").textContent = e.message; });
  });
}

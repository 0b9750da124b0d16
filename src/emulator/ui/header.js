// The page's header and footer: the site shown (and the switch to another), the
// emulator's clock (advanced, frozen), the reset, each tab's count and what retention
// keeps.
import { $, count, el, fill, fmtTime, num, plural } from "./dom.js";
import { admin, changed, forgetRendered, has, refresh, showError, state } from "./page.js";

export function renderClock() {
  if (!state.now) return;
  var t = Date.parse(state.now);
  if (!state.frozen) t += Date.now() - state.nowAt;
  $("clock").textContent = fmtTime(new Date(t).toISOString());
  $("clock-frozen").hidden = !state.frozen;
  $("freeze-toggle").textContent = state.frozen ? "Unfreeze" : "Freeze";
  $("freeze-toggle").setAttribute("aria-pressed", state.frozen ? "true" : "false");
}
// A tab's count beside its name, left out where the emulator does not tell it.
function tabCount(tab, n) {
  $("count-" + tab).textContent = typeof n === "number" ? count(n) : "";
}
export function refreshHeader() {
  return Promise.all([
    admin("now"),
    has("sites") ? admin("sites") : Promise.resolve(null)
  ]).then(function (out) {
    var before = state.now, beforeAt = state.nowAt;
    state.now = out[0].now;
    state.nowAt = Date.now();
    if (typeof out[0].frozen === "boolean") state.frozen = out[0].frozen;
    // An emulator that does not say whether its clock is frozen: a clock that stood still
    // while a second passed is.
    else if (before && state.nowAt - beforeAt >= 1000) state.frozen = before === state.now;
    renderClock();
    var sites = out[1];
    if (sites) {
      state.sites = sites;
      var def = sites.filter(function (s) { return s.default; })[0] || sites[0];
      state.defaultSite = def ? def.site_id : null;
      if (state.site === null || !sites.some(function (s) { return s.site_id === state.site; })) state.site = state.defaultSite;
      var shown = sites.filter(function (s) { return s.site_id === state.site; })[0] || {};
      tabCount("subscribers", shown.subscribers);
      tabCount("broadcasts", shown.broadcasts);
      tabCount("campaigns", shown.campaigns);
      if (changed("sites", [sites, state.site])) {
        var select = $("site-select");
        fill(select, sites.map(function (s) {
          return el("option", { value: s.site_id, selected: s.site_id === state.site },
            "site " + s.site_id + (s.key_hint && s.key_hint !== "site " + s.site_id ? " · key " + s.key_hint : "") + " · " + plural(num(s.subscribers), "subscriber") + (s.default ? " (default)" : ""));
        }));
        select.value = String(state.site);
      }
    } else if (changed("sites", "none")) {
      fill("site-select", el("option", { value: "" }, "default site"));
    }
    return has("retention") ? admin("retention") : null;
  }).then(function (r) {
    if (r) {
      tabCount("requests", (r.requests || {}).kept);
      tabCount("events", (r.events || {}).kept);
    }
    if (!r || !changed("retention", r)) return;
    var req = r.requests || {}, ev = r.events || {};
    fill("retention", [
      r.retention ? "Retention: the last " + r.retention + " requests and events of each site are kept. " : "Retention: everything is kept. ",
      el("span", { "data-testid": "retention-requests" }, "Requests " + num(req.kept) + " kept, " + num(req.pruned) + " pruned"), "; ",
      el("span", { "data-testid": "retention-events" }, "events of this site " + num(ev.kept) + " kept, " + num(ev.pruned) + " pruned"), "."
    ]);
  });
}
export function wireHeader() {
  $("site-select").addEventListener("change", function (ev) {
    var v = ev.target.value;
    state.site = v === "" ? null : Number(v);
    state.subscriber = null;
    state.broadcastPage = 0;
    state.subscriberPage = 0;
    forgetRendered();
    refresh();
  });
  ["advance-1m", "advance-1h", "advance-1d"].forEach(function (id) {
    $(id).addEventListener("click", function () {
      admin("advance", { seconds: Number($(id).getAttribute("data-seconds")) }).then(refresh, function (e) { showError(e.message); });
    });
  });
  $("freeze-toggle").addEventListener("click", function () {
    admin("freeze_clock", { frozen: !state.frozen }).then(function (r) {
      state.frozen = typeof r.frozen === "boolean" ? r.frozen : !state.frozen;
      refresh();
    }, function (e) { showError(e.message); });
  });
  $("reset").addEventListener("click", function () {
    if (!window.confirm("Reset the emulator? Every site's data, the faults and the clock go back to a fresh start.")) return;
    admin("reset").then(function () {
      state.site = null; state.subscriber = null; state.frozen = false; forgetRendered();
      refresh();
    }, function (e) { showError(e.message); });
  });
}

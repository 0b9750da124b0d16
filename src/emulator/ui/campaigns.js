// The campaigns tab: triggered campaigns and drips, each with its rules or audience, its
// analytics and its steps.
import { badge, compact, el, empty, fill, num, plural, stat } from "./dom.js";
import { admin, changed, entriesOf, has } from "./page.js";
import { preview } from "./preview.js";

var WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
function scheduleText(s) {
  if (!s) return "";
  var at = s.at ? " at " + s.at : "";
  if (s.type === "rightaway") return "right away";
  if (s.type === "after" && s.unit === "minutes") return "after " + plural(num(s.value), "minute");
  if (s.type === "after" && s.unit === "days") return (num(s.value) === 0 ? "the same day" : "after " + plural(num(s.value), "day")) + at;
  if (s.type === "after" && s.unit === "dow") return "next " + (WEEKDAYS[((num(s.value) % 7) + 7) % 7]) + at;
  return [s.type, s.value, s.unit].filter(function (x) { return x !== undefined && x !== null; }).join(" ") + at;
}
function analyticsStats(a, prefix) {
  a = a || {};
  return el("div", { class: "stats" },
    stat("sent", a.sentcount, prefix + "-sent"), stat("views", a.views, prefix + "-views"),
    stat("clicks", a.clicks, prefix + "-clicks"), stat("unsubscribed", a.unsubscribed, prefix + "-unsubscribed"));
}
function steps(notifications) {
  var list = (notifications || []).slice().sort(function (a, b) { return num(a.order) - num(b.order); });
  if (!list.length) return el("p", { class: "muted" }, "No notification.");
  return el("div", { class: "steps" }, list.map(function (n, i) {
    return el("div", { class: "step", "data-testid": "campaign-step" },
      el("div", { class: "step-when" }, "Step " + (i + 1), el("br"), el("span", { class: "muted" }, scheduleText(n.schedule_options))),
      preview(n),
      el("div", { class: "card-side" }, analyticsStats(n.analytics, "step")));
  }));
}
function triggerCard(t) {
  var rules = t.rules || {};
  return el("article", { class: "card", "data-testid": "trigger", "data-trigger-id": t.trigger_id },
    el("div", { class: "card-head" },
      el("span", { class: "nid" }, "#" + t.trigger_id + " " + (t.campaign_name || "")),
      badge(t.status, "", "trigger-status"),
      el("span", { class: "chip" }, t.campaign_type || "generic")),
    el("div", { class: "chips" },
      el("span", { class: "chip" }, el("b", null, "starts on"), rules.start_event_name || "—"),
      rules.stop_event_name ? el("span", { class: "chip" }, el("b", null, "stops on"), rules.stop_event_name) : null,
      el("span", { class: "chip" }, el("b", null, "daily limit"), String(t.daily_trigger_limit !== undefined ? t.daily_trigger_limit : "—")),
      el("span", { class: "chip" }, el("b", null, "weekly limit"), String(t.weekly_trigger_limit !== undefined ? t.weekly_trigger_limit : "—"))),
    analyticsStats(t.analytics, "trigger"),
    steps(t.notifications));
}
function dripAudience(aud) {
  var groups = aud && aud.filter && aud.filter.value;
  if (!groups || !groups.length) return el("div", { class: "chips" }, el("span", { class: "chip" }, "everyone"));
  return el("div", { class: "chips" }, groups.map(function (g, i) {
    return el("span", { class: "chip" }, i ? el("b", null, "or") : null,
      (g || []).map(function (r) { return [r.field, r.op, compact(r.value)].join(" "); }).join(" and "));
  }));
}
function dripCard(d) {
  return el("article", { class: "card", "data-testid": "drip", "data-drip-id": d.drip_id },
    el("div", { class: "card-head" },
      el("span", { class: "nid" }, "#" + d.drip_id + " " + (d.campaign_name || "")),
      badge(d.status, "", "drip-status"),
      d.drip_type ? el("span", { class: "chip" }, d.drip_type) : null),
    dripAudience(d.audience),
    analyticsStats(d.analytics, "drip"),
    steps(d.notifications));
}
export function viewCampaigns() {
  return Promise.all([
    has("triggers") ? admin("triggers") : Promise.resolve(null),
    has("drips") ? admin("drips") : Promise.resolve(null)
  ]).then(function (out) {
    var triggers = entriesOf(out[0]).entries, drips = entriesOf(out[1]).entries;
    if (!changed("campaigns", out)) return;
    fill("trigger-list", out[0] === null ? empty("This emulator has no triggers operation.")
      : triggers.length ? triggers.map(triggerCard) : empty("No triggered campaign."));
    fill("drip-list", out[1] === null ? empty("This emulator has no drips operation.")
      : drips.length ? drips.map(dripCard) : empty("No drip."));
  });
}

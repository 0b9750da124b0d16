// The analytics tab: the summary rows of a range of days, drawn as one line per series
// (an SVG drawn here: no chart library, the page loads nothing from elsewhere) and listed.
import { $, el, empty, fill, isoDate, num } from "./dom.js";
import { admin, changed, entriesOf, has, refresh, state } from "./page.js";

var SERIES = [
  { key: "notification_sent", label: "notifications sent", color: "#0e7490", dash: "2 3" },
  { key: "net_subscriber_sent", label: "deliveries", color: "#2f6fde" },
  { key: "view_count", label: "views", color: "#1f8a4c" },
  { key: "click_count", label: "clicks", color: "#d97706" },
  { key: "subscriber_count", label: "new subscribers", color: "#7c3aed", dash: "6 4" },
  { key: "unsubscribed_count", label: "lost subscribers", color: "#c53030", dash: "6 4" }
];
var SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  var e = document.createElementNS(SVG, tag);
  Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
  if (text !== undefined) e.textContent = String(text);
  return e;
}
function chartRange() {
  var today = state.now ? new Date(state.now) : new Date();
  var to = $("chart-to").value || isoDate(today);
  var from = $("chart-from").value || isoDate(new Date(Date.parse(to + "T00:00:00Z") - 29 * 86400000));
  return { from: from, to: to };
}
function drawChart(days, rows) {
  var W = 900, H = 300, L = 50, R = 26, T = 14, B = 34;
  var max = 1;
  rows.forEach(function (r) { SERIES.forEach(function (s) { max = Math.max(max, num(r[s.key])); }); });
  // Counts: four whole-number steps of 1, 2 or 5 times a power of ten.
  var raw = Math.max(1, max / 4), mag = Math.pow(10, Math.floor(Math.log10(raw)));
  var tick = [1, 2, 5, 10].map(function (m) { return m * mag; }).filter(function (t) { return t >= raw; })[0];
  tick = Math.max(1, Math.ceil(tick));
  var top = tick * 4;
  var x = function (i) { return L + (days.length <= 1 ? (W - L - R) / 2 : i * (W - L - R) / (days.length - 1)); };
  var y = function (v) { return T + (H - T - B) * (1 - v / top); };
  var totals = {};
  var root = svg("svg", { id: "analytics-chart", "data-testid": "analytics-chart", viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "Sends, views, clicks, new and lost subscribers per day" });
  for (var g = 0; g <= 4; g++) {
    var v = top * g / 4, yy = y(v);
    root.appendChild(svg("line", { x1: L, x2: W - R, y1: yy, y2: yy, stroke: "#e1e4ea" }));
    root.appendChild(svg("text", { x: L - 6, y: yy + 4, "text-anchor": "end", "font-size": 11, fill: "#6b7385" }, v));
  }
  var every = Math.max(1, Math.ceil(days.length / 10));
  days.forEach(function (d, i) {
    if (i % every === 0 || i === days.length - 1) {
      root.appendChild(svg("text", { x: x(i), y: H - B + 18, "text-anchor": "middle", "font-size": 11, fill: "#6b7385" }, d.slice(5)));
    }
  });
  SERIES.forEach(function (s) {
    var pts = rows.map(function (r, i) { return x(i).toFixed(1) + "," + y(num(r[s.key])).toFixed(1); });
    totals[s.key] = rows.reduce(function (a, r) { return a + num(r[s.key]); }, 0);
    var path = svg("path", { d: "M" + pts.join(" L"), fill: "none", stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash || "none", "class": "series", "data-series": s.key, "data-total": totals[s.key] });
    root.appendChild(path);
    rows.forEach(function (r, i) {
      if (num(r[s.key]) > 0) {
        var dot = svg("circle", { cx: x(i), cy: y(num(r[s.key])), r: 3, fill: s.color });
        dot.appendChild(svg("title", {}, days[i] + ": " + num(r[s.key]) + " " + s.label));
        root.appendChild(dot);
      }
    });
  });
  SERIES.forEach(function (s) { root.setAttribute("data-total-" + s.key.replace(/_/g, "-"), totals[s.key]); });
  return root;
}
export function viewAnalytics() {
  if (!has("summary")) { fill("chart-wrap", empty("This emulator has no summary operation.")); return Promise.resolve(); }
  var range = chartRange();
  if (range.from > range.to) { fill("chart-wrap", empty("From is after To.")); return Promise.resolve(); }
  return admin("summary", { from: range.from, to: range.to, group_by: "day" }).then(function (answer) {
    var got = entriesOf(answer).entries;
    if (!changed("analytics", [range, got])) return;
    var byDate = {};
    got.forEach(function (r) { byDate[String(r.date).slice(0, 10)] = r; });
    var days = [], rows = [];
    for (var t = Date.parse(range.from + "T00:00:00Z"); t <= Date.parse(range.to + "T00:00:00Z") && days.length < 1000; t += 86400000) {
      var d = isoDate(new Date(t));
      days.push(d);
      rows.push(byDate[d] || { date: d });
    }
    fill("chart-legend", SERIES.map(function (s) { return el("span", null, el("i", { style: "background:" + s.color }), s.label); }));
    fill("chart-wrap", drawChart(days, rows));
    var shown = rows.filter(function (r) { return SERIES.some(function (s) { return num(r[s.key]) > 0; }); });
    fill("chart-table-wrap", shown.length ? el("table", { "data-testid": "analytics-table" },
      el("thead", null, el("tr", null, [el("th", null, "date")].concat(SERIES.map(function (s) { return el("th", { class: "num" }, s.label); })))),
      el("tbody", null, shown.slice().reverse().map(function (r) {
        return el("tr", null, [el("td", null, String(r.date).slice(0, 10))].concat(SERIES.map(function (s) { return el("td", { class: "num" }, String(num(r[s.key]))); })));
      }))) : el("p", { class: "muted" }, "Nothing in this range."));
  });
}
// The range's controls: a day picked draws the chart again.
export function wireAnalytics() {
  $("chart-from").addEventListener("change", function () { refresh(); });
  $("chart-to").addEventListener("change", function () { refresh(); });
  $("chart-last30").addEventListener("click", function () { $("chart-from").value = ""; $("chart-to").value = ""; refresh(); });
}

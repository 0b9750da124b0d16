// The inspector page's entry: each tab's view, the tabs, the controls, the timers, and the
// stream that keeps the page live. Served with the other modules beside the page (no
// inline script: the page's Content-Security-Policy allows only the emulator's own).
import { viewAnalytics, wireAnalytics } from "./analytics.js";
import { viewBroadcasts } from "./broadcasts.js";
import { viewCampaigns } from "./campaigns.js";
import { viewFaults, wireFaults } from "./faults.js";
import { refreshHeader, renderClock, wireHeader } from "./header.js";
import { connect } from "./live.js";
import { viewEvents, viewRequests, wireRequests } from "./logs.js";
import { refresh, setHeader, state, views } from "./page.js";
import { viewSubscribers } from "./subscribers.js";

Object.assign(views, {
  broadcasts: viewBroadcasts, campaigns: viewCampaigns, subscribers: viewSubscribers,
  events: viewEvents, requests: viewRequests, analytics: viewAnalytics, faults: viewFaults
});
setHeader(refreshHeader);

function showTab(tab) {
  if (!views[tab]) tab = "broadcasts";
  state.tab = tab;
  document.querySelectorAll("nav#nav button").forEach(function (b) {
    b.setAttribute("aria-selected", b.getAttribute("data-tab") === tab ? "true" : "false");
  });
  document.querySelectorAll("main section[data-view]").forEach(function (s) {
    s.hidden = s.getAttribute("data-view") !== tab;
  });
  if (location.hash !== "#" + tab) history.replaceState(null, "", "#" + tab);
  refresh();
}
document.querySelectorAll("nav#nav button").forEach(function (b) {
  b.addEventListener("click", function () {
    if (b.getAttribute("data-tab") === "subscribers") state.subscriber = null;
    showTab(b.getAttribute("data-tab"));
  });
});
wireHeader();
wireRequests();
wireAnalytics();
wireFaults();

// While the clock runs, scheduled broadcasts and drip steps come due with time alone.
setInterval(function () { if (!state.frozen && !document.hidden) refresh(); }, 5000);
setInterval(renderClock, 1000);

showTab((location.hash || "").slice(1) || "broadcasts");
connect();

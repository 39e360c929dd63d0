#!/usr/bin/env python3
"""Draws a kvsim timeline (kvsim run --trace-events-out, the Chrome trace-event format) as a
self-contained HTML page: one row per track (engine steps, requests, KV tiers, links), events as
coloured bars on a common time axis, a legend, and the event's details under the mouse.

Usage: validation/trace_view.py TRACE.json OUT.html [--from S] [--to S]
  --from/--to  simulated seconds to show (default: the trace's window, else all of it)

The trace's events are reduced to bars and inlined into the page (a file:// page cannot fetch
a file), so the page opens anywhere without a server. Python standard library only. Perfetto
(ui.perfetto.dev) or chrome://tracing open the trace itself with zoom and search; this page is
the quick look, and what docs/images/trace-events.png shows.
"""
import argparse
import html
import json
import sys

# Colours by event kind: engine steps, request phases, KV transfers.
COLOURS = {
    "step: prefill": "#d95f02",
    "step: prefill+decode": "#e6ab02",
    "step: decode": "#1b9e77",
    "step: step": "#999999",
    "request: queued": "#bdbdbd",
    "request: waiting for KV": "#7570b3",
    "request: prefill": "#d95f02",
    "request: decode": "#66a61e",
    "request: requeued": "#e7298a",
    "request: preempted": "#000000",
    "transfer: load": "#1f78b4",
    "transfer: store": "#e31a1c",
    "transfer: cascade": "#ff7f00",
    "transfer: promote": "#6a3d9a",
}


def load_rows(trace, t0, t1):
    """Rows of bars in display order: [{'group', 'label', 'lanes', 'height', 'bars'}], bar =
    [lane, start_s, end_s, colour_key, text]."""
    events = trace["traceEvents"]
    pname, psort, tname, tsort = {}, {}, {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        key = (e["pid"], e["tid"])
        args = e.get("args", {})
        if e["name"] == "process_name":
            pname[e["pid"]] = args.get("name", str(e["pid"]))
        elif e["name"] == "process_sort_index":
            psort[e["pid"]] = args.get("sort_index", 0)
        elif e["name"] == "thread_name":
            tname[key] = args.get("name", str(e["tid"]))
        elif e["name"] == "thread_sort_index":
            tsort[key] = args.get("sort_index", 0)

    def visible(b, e):
        return b <= t1 and e >= t0

    # Complete events per thread. The lanes of one tier or link ("name #k") share a row.
    rows = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        b = e["ts"] / 1e6
        end = b + e.get("dur", 0) / 1e6
        if not visible(b, end):
            continue
        thread = tname.get((e["pid"], e["tid"]), str(e["tid"]))
        base, _, lane = thread.partition(" #")
        key = (e["pid"], base)
        row = rows.setdefault(key, {"lanes": 1, "bars": [], "sort": tsort.get((e["pid"], e["tid"]), 0)})
        lane = int(lane) if lane else 0
        row["lanes"] = max(row["lanes"], lane + 1)
        row["sort"] = min(row["sort"], tsort.get((e["pid"], e["tid"]), 0))
        args = e.get("args", {})
        if e["cat"] == "step":
            text = "%s: %d tokens, %d prefill + %d decode, running %d, waiting %d, kv %.0f%%" % (
                e["name"], args.get("batch_tokens", 0), args.get("prefill_requests", 0),
                args.get("decode_requests", 0), args.get("running", 0), args.get("waiting", 0),
                100 * args.get("kv_usage", 0))
        else:
            text = "%s: %.1f MB, request %s, %s" % (e["name"], args.get("bytes", 0) / 1e6,
                                                     args.get("request_id", "?"), args.get("direction", ""))
        row["bars"].append([lane, b, end, e["cat"] + ": " + e["name"], text])

    # Requests: nestable async events paired per (pid, id); each request a bar of its phases,
    # packed into lanes so that requests in flight together sit one above the other.
    reqs = {}
    open_ = {}
    for e in events:
        if e.get("cat") != "request":
            continue
        key = (e["pid"], e["id"])
        ts = e["ts"] / 1e6
        if e["ph"] == "b":
            if e["name"] == "request":
                reqs[key] = {"b": ts, "e": ts, "phases": [], "marks": []}
            else:
                open_[key] = (e["name"], ts)
        elif e["ph"] == "e":
            if e["name"] == "request":
                reqs[key]["e"] = ts
            elif key in open_:
                name, b = open_.pop(key)
                reqs[key]["phases"].append((name, b, ts))
        elif e["ph"] == "n":
            reqs[key]["marks"].append(ts)
    by_pid = {}
    for (pid, rid), r in sorted(reqs.items(), key=lambda kv: kv[1]["b"]):
        if not visible(r["b"], r["e"]):
            continue
        by_pid.setdefault(pid, []).append((rid, r))
    for pid, rs in by_pid.items():
        lane_end = []
        bars = []
        for rid, r in rs:
            lane = next((i for i, end in enumerate(lane_end) if end < r["b"]), None)
            if lane is None:
                lane = len(lane_end)
                lane_end.append(r["e"])
            lane_end[lane] = r["e"]
            for name, b, end in r["phases"]:
                bars.append([lane, b, max(end, b), "request: " + name,
                             "request %s: %s %.1f ms (%.3f-%.3f s)" % (rid, name, (end - b) * 1e3, b, end)])
            for ts in r["marks"]:
                bars.append([lane, ts, ts, "request: preempted", "request %s preempted at %.3f s" % (rid, ts)])
        rows[(pid, "requests")] = {"lanes": max(1, len(lane_end)), "bars": bars, "sort": 1}

    out = []
    # Engines' tracks in their own order; tiers and links by name.
    def order(kv):
        (pid, label), row = kv
        by_name = pname.get(pid) in ("KV tiers", "links")
        return (psort.get(pid, pid), label if by_name else "", row["sort"])

    for (pid, label), row in sorted(rows.items(), key=order):
        requests = label == "requests"
        out.append({"group": pname.get(pid, str(pid)), "label": label, "lanes": row["lanes"],
                    "height": min(160, max(48, 8 * row["lanes"])) if requests else max(16, min(30, 4 * row["lanes"])),
                    "bars": row["bars"]})
    return out


PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>%(title)s</title>
<style>
body { font: 13px sans-serif; margin: 8px; color: #222; }
h1 { font-size: 16px; margin: 0 0 4px 0; }
#legend span { display: inline-block; margin: 2px 12px 2px 0; white-space: nowrap; }
#legend i { display: inline-block; width: 14px; height: 10px; margin-right: 4px; vertical-align: middle; }
#tip { position: fixed; background: #ffffe0; border: 1px solid #888; padding: 2px 5px; display: none; pointer-events: none; }
canvas { display: block; }
</style></head><body>
<h1>%(title)s</h1>
<div id="sub">%(sub)s</div>
<div id="legend"></div>
<canvas id="c"></canvas>
<div id="tip"></div>
<script>
const DATA = %(data)s;
const LABEL_W = 210, AXIS_H = 26, GAP = 3;
const colours = DATA.colours;
const legend = document.getElementById("legend");
for (const [k, c] of Object.entries(colours)) {
  if (!DATA.used.includes(k)) continue;
  const s = document.createElement("span");
  s.innerHTML = '<i style="background:' + c + '"></i>' + k;
  legend.appendChild(s);
}
const canvas = document.getElementById("c");
const ctx = canvas.getContext("2d");
const W = Math.max(800, window.innerWidth - 20);
let y = AXIS_H;
const layout = [];
let lastGroup = null;
for (const row of DATA.rows) {
  if (row.group !== lastGroup) { y += 8; layout.push({header: row.group, y: y}); y += 14; lastGroup = row.group; }
  layout.push({row: row, y: y});
  y += row.height + GAP;
}
const H = y + 10;
const dpr = window.devicePixelRatio || 1;
canvas.width = W * dpr; canvas.height = H * dpr;
canvas.style.width = W + "px"; canvas.style.height = H + "px";
ctx.scale(dpr, dpr);
const t0 = DATA.t0, t1 = DATA.t1;
const RIGHT = 40;
const x = t => LABEL_W + (t - t0) / (t1 - t0) * (W - LABEL_W - RIGHT);
// Time axis: about ten ticks at a round step.
const span = t1 - t0;
let step = Math.pow(10, Math.floor(Math.log10(span / 10)));
for (const m of [2, 5, 10]) { if (span / step > 12) step = Math.pow(10, Math.floor(Math.log10(span / 10))) * m; }
ctx.font = "11px sans-serif";
ctx.fillStyle = "#222";
ctx.strokeStyle = "#ddd";
for (let t = Math.ceil(t0 / step) * step; t <= t1 + 1e-12; t += step) {
  const px = x(t);
  ctx.beginPath(); ctx.moveTo(px, AXIS_H - 4); ctx.lineTo(px, H); ctx.stroke();
  const label = (step < 0.01 ? t.toFixed(3) : step < 0.1 ? t.toFixed(2) : step < 1 ? t.toFixed(1) : t.toFixed(0)) + " s";
  ctx.fillText(label, px - 14, AXIS_H - 8);
}
ctx.fillText("simulated time", 4, AXIS_H - 8);
const hits = [];
for (const item of layout) {
  if (item.header !== undefined) {
    ctx.font = "bold 12px sans-serif"; ctx.fillStyle = "#222";
    ctx.fillText(item.header, 4, item.y + 11);
    ctx.strokeStyle = "#888"; ctx.beginPath(); ctx.moveTo(0, item.y); ctx.lineTo(W, item.y); ctx.stroke();
    continue;
  }
  const row = item.row;
  ctx.font = "11px sans-serif"; ctx.fillStyle = "#444";
  ctx.fillText(row.label + (row.lanes > 1 ? " (" + row.lanes + " lanes)" : ""), 14, item.y + Math.min(row.height, 14) - 3);
  ctx.fillStyle = "#f6f6f6"; ctx.fillRect(LABEL_W, item.y, W - LABEL_W - RIGHT, row.height);
  const lh = row.height / row.lanes;
  for (const [lane, b, e, key, text] of row.bars) {
    const bx = Math.max(LABEL_W, x(b)), ex = Math.min(W - RIGHT, x(e));
    const by = item.y + lane * lh;
    ctx.fillStyle = colours[key] || "#999";
    if (key === "request: preempted") {
      ctx.fillRect(bx - 1, by, 3, Math.max(lh, 2));
    } else {
      ctx.fillRect(bx, by + (lh > 3 ? 0.5 : 0), Math.max(ex - bx, 1), Math.max(lh - (lh > 3 ? 1 : 0), 1));
    }
    hits.push([bx, Math.max(ex, bx + 2), by, by + Math.max(lh, 2), text]);
  }
}
const tip = document.getElementById("tip");
canvas.addEventListener("mousemove", ev => {
  const r = canvas.getBoundingClientRect();
  const mx = ev.clientX - r.left, my = ev.clientY - r.top;
  const h = hits.find(h => mx >= h[0] && mx <= h[1] && my >= h[2] && my <= h[3]);
  if (!h) { tip.style.display = "none"; return; }
  tip.textContent = h[4];
  tip.style.left = (ev.clientX + 12) + "px"; tip.style.top = (ev.clientY + 12) + "px";
  tip.style.display = "block";
});
</script></body></html>
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace")
    p.add_argument("out")
    p.add_argument("--from", dest="t0", type=float)
    p.add_argument("--to", dest="t1", type=float)
    a = p.parse_args()
    with open(a.trace, encoding="utf-8") as f:
        trace = json.load(f)
    other = trace.get("otherData", {})
    window = other.get("window_s")
    t0, t1 = a.t0, a.t1
    if t0 is None or t1 is None:
        spans = [(e["ts"] / 1e6, (e["ts"] + e.get("dur", 0)) / 1e6) for e in trace["traceEvents"]
                 if e.get("ph") != "M"]
        if window:
            lo, hi = window
        elif spans:
            lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
        else:
            lo, hi = 0.0, 1.0
        t0 = lo if t0 is None else t0
        t1 = hi if t1 is None else t1
    if not t1 > t0:
        sys.exit("trace_view.py: --to must be after --from")
    rows = load_rows(trace, t0, t1)
    used = sorted({b[3] for r in rows for b in r["bars"]})
    title = "kvsim timeline: %s" % other.get("scenario", "?")
    sub = "kvsim %s, seed %s, %.3f-%.3f s of simulated time%s" % (
        other.get("kvsim_version", "?"), other.get("seed", "?"), t0, t1,
        " (truncated at %s events)" % other.get("max_events") if other.get("truncated") else "")
    data = json.dumps({"rows": rows, "t0": t0, "t1": t1, "colours": COLOURS, "used": used},
                      separators=(",", ":"))
    # Inside <script>, "</" would end the element.
    data = data.replace("</", "<\\/")
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(PAGE % {"title": html.escape(title), "sub": html.escape(sub), "data": data})


if __name__ == "__main__":
    main()

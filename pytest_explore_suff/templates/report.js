(function () {
  "use strict";
  // The drill-down. Data comes from the JSON element; rows are built with
  // createElement + textContent only, never from markup strings.
  var DATA = JSON.parse(document.getElementById("explore-suff-data").textContent);
  var BUCKETS = DATA.buckets;
  var T = DATA.transcripts;
  // transcript: [path, arm, group, run, kind, status, reason, flags, answered, errored,
  //              concurrent, warnings, files, lines, corrupt_lines, calls, allocation, occupancy,
  //              agent]
  //              agent[, truth units: [question, turn, verdict, judge's verdict] (a truth file only)]
  // call: [thread, query, files, bucket index, next, named, truncated, allocation
  //        [, [gold share, incidental share] (a call of an answer a truth file's question covers)]]
  // (the layouts of allocation and occupancy are described in html.py: a string is the reason
  // the transcript has no such figure)
  var PATH = 0, ARM = 1, GROUP = 2, RUN = 3, KIND = 4, STATUS = 5, REASON = 6, FLAGS = 7,
      ANSWERED = 8, ERRORED = 9, CONCURRENT = 10, WARNINGS = 11, FILES = 12, CORRUPT = 14, CALLS = 15,
      ALLOC = 16, OCC = 17, AGENT = 18, TRUTH = 19, COLS = 8;
  var FAMILIES = DATA.families;
  var SUFFICIENT = -1;
  BUCKETS.forEach(function (b, i) { if (b.key === "sufficient") { SUFFICIENT = i; } });
  var PAGE_CALLS = 200, PAGE_ROWS = 200;

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function option(select, value, label) {
    var o = el("option", null, label);
    o.value = value;
    select.appendChild(o);
  }
  function uniq(index) {
    var seen = Object.create(null), out = [];
    T.forEach(function (t) { if (!(t[index] in seen)) { seen[t[index]] = true; out.push(t[index]); } });
    return out.sort();
  }
  // Halves up (Math.round), as the server-rendered parts and the terminal round (half_up).
  function pct(x) { return x === null || x === undefined ? "–" : Math.round(x * 100) + "%"; }
  function plural(n, one, many) { return n + " " + (n === 1 ? one : many || one + "s"); }
  function num(x) { return x === null || x === undefined ? "–" : Math.round(x).toLocaleString("en-US"); }
  function swatch(i) {
    var key = BUCKETS[i] ? BUCKETS[i].key : "unknown";
    return el("i", "sw b-" + key);
  }

  var fArm = $("f-arm"), fGroup = $("f-group"), fBucket = $("f-bucket"), fStatus = $("f-status"),
      fMisses = $("f-misses"), fSort = $("f-sort"), fText = $("f-text"), count = $("drill-count"), table = $("calls-table"),
      more = $("calls-more"), empty = $("calls-empty");
  uniq(ARM).forEach(function (a) { option(fArm, a, a === "" ? "(no arm)" : a); });
  // "" is "all groups": the transcripts at the campaign's root (group "") get a value no
  // folder name can be.
  var NO_GROUP = "\u0000";
  uniq(GROUP).forEach(function (g) { option(fGroup, g === "" ? NO_GROUP : g, g === "" ? "(no group)" : g); });
  BUCKETS.forEach(function (b, i) { option(fBucket, String(i), b.label); });

  var matched = [], shown = 0;

  function filter() {
    var arm = fArm.value, group = fGroup.value, status = fStatus.value,
        bucket = fBucket.value === "" ? null : Number(fBucket.value),
        misses = fMisses.checked, text = fText.value.trim().toLowerCase();
    var byCall = bucket !== null || misses || text !== "";
    var out = [];
    for (var ti = 0; ti < T.length; ti++) {
      var t = T[ti];
      if (arm && t[ARM] !== arm) { continue; }
      if (group && t[GROUP] !== (group === NO_GROUP ? "" : group)) { continue; }
      if (status && t[STATUS] !== status) { continue; }
      var pathHit = text !== "" && t[PATH].toLowerCase().indexOf(text) >= 0;
      var sel = [], calls = t[CALLS];
      for (var ci = 0; ci < calls.length; ci++) {
        var c = calls[ci];
        if (bucket !== null && c[3] !== bucket) { continue; }
        if (misses && c[3] === SUFFICIENT) { continue; }
        if (text !== "" && !pathHit && c[1].toLowerCase().indexOf(text) < 0 &&
            c[4].toLowerCase().indexOf(text) < 0) { continue; }
        sel.push(ci);
      }
      if (byCall && sel.length === 0) { continue; }
      out.push([ti, sel]);
    }
    if (fSort.value === "misses") {
      // Stable: equal counts keep path order.
      out.sort(function (a, b) { return (b[1].length - a[1].length) || (a[0] - b[0]); });
    }
    return out;
  }

  function header(t) {
    var tr = el("tr", "thead"), td = el("td");
    td.colSpan = COLS;
    td.appendChild(el("span", "path mono", t[PATH]));
    var st = el("span", "status " + t[STATUS], t[STATUS]);
    td.appendChild(st);
    var meta = [];
    meta.push("arm " + t[ARM]);
    if (t[GROUP]) { meta.push("group " + t[GROUP]); }
    if (t[RUN]) { meta.push("run " + t[RUN]); }
    meta.push(t[AGENT] ? "agent " + t[AGENT] + " (" + t[KIND] + ")" : t[KIND]);
    meta.push(t[ANSWERED] + " answered, " + t[ERRORED] + " errored, " + t[CONCURRENT] + " concurrent");
    if (t[CORRUPT]) { meta.push(plural(t[CORRUPT], "corrupt line")); }
    td.appendChild(el("span", "meta", meta.join(" · ")));
    t[FLAGS].forEach(function (f) { td.appendChild(el("span", "flag", f)); });
    if (t[FILES].length) { td.appendChild(el("span", "meta", "files: " + t[FILES].join(", "))); }
    if (t[REASON]) { td.appendChild(el("span", "warn", t[REASON])); }
    t[WARNINGS].forEach(function (w) { td.appendChild(el("span", "warn", "warning: " + w)); });
    tr.appendChild(td);
    return tr;
  }

  function callRow(c, ci) {
    var tr = el("tr", "call");
    var key = BUCKETS[c[3]] ? BUCKETS[c[3]].key : "unknown";
    tr.setAttribute("data-bucket", key);
    tr.appendChild(el("td", "num", (ci + 1) + "."));
    var th = el("td", null, c[0] === "main" ? "main" : "subagent");
    if (c[0] !== "main") { th.title = c[0]; }
    tr.appendChild(th);
    var q = el("td", "q", c[1] === "" ? "(no query)" : c[1]);
    tr.appendChild(q);
    tr.appendChild(el("td", "num", c[2]));
    tr.appendChild(el("td", null, "→ " + c[4]));
    var b = el("td"), chip = el("span", "chip");
    chip.appendChild(swatch(c[3]));
    chip.appendChild(el("span", null, BUCKETS[c[3]] ? BUCKETS[c[3]].label : "?"));
    b.appendChild(chip);
    tr.appendChild(b);
    var al = el("td", "alloc"), a = c[7];
    if (a) {
      // [efficiency, envelope, used, used_path, files, files_used]
      al.appendChild(el("span", "eff", pct(a[0]) + " of " + num(a[1]) + " chars"));
      al.appendChild(el("span", "sub", a[5] + " of " + plural(a[4], "file") + " cited"));
      if (a[3] !== a[2]) { al.appendChild(el("span", "sub", "path alone " + pct(a[1] ? a[3] / a[1] : 0))); }
    } else {
      al.appendChild(el("span", "sub", "no returned-file section"));
    }
    if (c.length > 8 && c[8][0] !== null) {
      al.appendChild(el("span", "sub gold", "gold " + pct(c[8][0]) + ", incidental " + pct(c[8][1])));
    }
    tr.appendChild(al);
    var fl = el("td");
    if (c[5]) { fl.appendChild(el("span", "flag", "named")); }
    if (c[6]) { fl.appendChild(el("span", "flag", "truncated")); }
    tr.appendChild(fl);
    return tr;
  }

  function viaChip(f) {
    // [path, chars, calls, via (0 uncited, 1 path, 2 symbol), symbol]
    if (f[3] === 1) { return el("span", "via path", "path"); }
    if (f[3] === 2) {
      var s = el("span", "via symbol", "symbol ");
      s.appendChild(el("code", null, f[4]));
      return s;
    }
    return el("span", "via uncited", "uncited");
  }

  function allocationBlock(a) {
    var box = el("div", "alloc-box");
    if (typeof a === "string") {
      var line = el("span", "mline");
      line.appendChild(el("b", null, "allocation: "));
      line.appendChild(el("span", "reason", "none (" + a + ")"));
      box.appendChild(line);
      return box;
    }
    // [envelope, used, used_path, efficiency, efficiency_path, files_returned, files_used, has_answer, files]
    var d = el("details", "files-box"), sum = el("summary");
    d.open = a[8].length <= 6;
    sum.appendChild(el("b", null, "allocation: "));
    sum.appendChild(el("span", "alloc-eff", pct(a[3])));
    sum.appendChild(el("span", null, " of " + num(a[0]) + " chars on cited files (" + num(a[1]) + " used; path alone " +
      pct(a[4]) + ", " + num(a[2]) + "); " + a[6] + " of " + plural(a[5], "returned file") + " cited" +
      (a[7] ? "" : "; no final answer text, so every file counts as uncited")));
    d.appendChild(sum);
    var tbl = el("table", "files"), head = el("tr");
    ["returned file", "chars", "calls", "credited"].forEach(function (h, i) { head.appendChild(el("th", i === 1 || i === 2 ? "num" : null, h)); });
    var thead = el("thead");
    thead.appendChild(head);
    tbl.appendChild(thead);
    var body = el("tbody");
    a[8].forEach(function (f) {
      var tr = el("tr", "file");
      tr.setAttribute("data-via", f[3] === 1 ? "path" : (f[3] === 2 ? "symbol" : "uncited"));
      tr.appendChild(el("td", "mono", f[0]));
      tr.appendChild(el("td", "num", num(f[1])));
      tr.appendChild(el("td", "num", f[2]));
      var v = el("td");
      v.appendChild(viaChip(f));
      tr.appendChild(v);
      body.appendChild(tr);
    });
    tbl.appendChild(body);
    d.appendChild(tbl);
    box.appendChild(d);
    return box;
  }

  function occupancyBlock(o) {
    var box = el("div", "occ-box"), line = el("span", "mline occ-line");
    line.appendChild(el("b", null, "occupancy: "));
    box.appendChild(line);
    if (typeof o === "string") {
      line.appendChild(el("span", "reason", "none (" + o + ")"));
      return box;
    }
    // [ctx_final, ctx_base, cpt, calibrated, dispersion, turns, compactions, evicted, window,
    //  residual[5], contributed[5], residual_file_access, residual_retrieval, share]
    line.appendChild(el("span", "occ-final", "final context " + num(o[0]) + " tokens"));
    line.appendChild(el("span", null, " (base " + num(o[1]) + ", window " + num(o[8]) + "); retrieval residual "));
    line.appendChild(el("span", "occ-retrieval", num(o[12])));
    line.appendChild(el("span", null, " = " + pct(o[13]) + " of it (tool " + num(o[9][0]) +
      ", file access " + num(o[11]) + "); " + plural(o[5], "request") + ", " + plural(o[6], "compaction") +
      ", " + num(o[7]) + " tokens evicted; " +
      (o[2] === null ? "–" : o[2].toFixed(2)) + " chars/token" + (o[3] ? "" : " (not calibrated: the default)") +
      (o[4] === null ? "" : ", error bar " + (o[4] * 100).toFixed(1) + "%")));
    var fam = el("span", "mline occ-families");
    fam.appendChild(el("span", "sub", "still held / contributed, tokens: "));
    FAMILIES.forEach(function (f, i) {
      var s = el("span", "fam");
      s.setAttribute("data-family", f.key);
      var sw = el("i", "sw");
      sw.style.background = f.colour;
      s.appendChild(sw);
      s.appendChild(el("span", null, f.label + " " + num(o[9][i]) + " / " + num(o[10][i])));
      fam.appendChild(s);
    });
    box.appendChild(fam);
    return box;
  }

  function truthBlock(units) {
    var box = el("div", "truth-box");
    box.appendChild(el("b", null, "ground truth: "));
    if (!units.length) { box.appendChild(el("span", "sub", "no question covers it")); }
    units.forEach(function (u) {
      var s = el("span", "truth-unit v-" + (u[3] || u[2]), u[0] + (u[1] === null ? "" : " (turn " + u[1] + ")") +
        ": " + u[2] + (u[3] ? ", judge: " + u[3] : ""));
      box.appendChild(s);
      box.appendChild(document.createTextNode(" "));
    });
    return box;
  }

  function metricsRow(t) {
    var tr = el("tr", "metrics"), td = el("td");
    td.colSpan = COLS;
    td.appendChild(allocationBlock(t[ALLOC]));
    td.appendChild(occupancyBlock(t[OCC]));
    if (t.length > TRUTH) { td.appendChild(truthBlock(t[TRUTH])); }
    tr.appendChild(td);
    return tr;
  }

  function renderMore() {
    var calls = 0, rows = 0;
    while (shown < matched.length && calls < PAGE_CALLS && rows < PAGE_ROWS) {
      var m = matched[shown], t = T[m[0]];
      var body = el("tbody", "transcript");
      body.setAttribute("data-arm", t[ARM]);
      body.setAttribute("data-group", t[GROUP]);
      body.setAttribute("data-path", t[PATH]);
      body.appendChild(header(t));
      body.appendChild(metricsRow(t));
      if (t[CALLS].length === 0) {
        var tr = el("tr", "nocalls"), td = el("td", "empty-note", "no explore calls");
        td.colSpan = COLS;
        tr.appendChild(td);
        body.appendChild(tr);
      }
      m[1].forEach(function (ci) { body.appendChild(callRow(t[CALLS][ci], ci)); });
      table.appendChild(body);
      calls += m[1].length;
      rows += 1;
      shown += 1;
    }
    more.hidden = shown >= matched.length;
    more.textContent = "show more (" + plural(matched.length - shown, "more transcript") + ")";
  }

  function update() {
    matched = filter();
    shown = 0;
    var bodies = table.querySelectorAll("tbody.transcript");
    for (var i = 0; i < bodies.length; i++) { table.removeChild(bodies[i]); }
    var n = 0;
    matched.forEach(function (m) { n += m[1].length; });
    count.setAttribute("data-calls", String(n));
    count.setAttribute("data-transcripts", String(matched.length));
    count.textContent = plural(n, "call") + " in " + plural(matched.length, "transcript");
    empty.hidden = matched.length > 0;
    renderMore();
  }

  var timer = null;
  fText.addEventListener("input", function () {
    if (timer) { clearTimeout(timer); }
    timer = setTimeout(update, 120);
  });
  [fArm, fGroup, fStatus, fSort].forEach(function (s) { s.addEventListener("change", update); });
  fBucket.addEventListener("change", function () {
    if (Number(fBucket.value) === SUFFICIENT && fBucket.value !== "") { fMisses.checked = false; }
    update();
  });
  fMisses.addEventListener("change", function () {
    if (fMisses.checked && fBucket.value !== "" && Number(fBucket.value) === SUFFICIENT) { fBucket.value = ""; }
    update();
  });
  more.addEventListener("click", renderMore);
  $("f-reset").addEventListener("click", function () {
    fArm.value = ""; fGroup.value = ""; fBucket.value = ""; fStatus.value = "classified";
    fMisses.checked = true; fText.value = "";
    update();
  });

  function pick(group, arm) {  // a heat-map cell or row: its group, "" the root's
    var value = group === "" ? NO_GROUP : group;
    fGroup.value = value;
    if (fGroup.value !== value) { fGroup.value = ""; }
    fArm.value = arm;
    if (fArm.value !== arm) { fArm.value = ""; }
    fBucket.value = ""; fStatus.value = "classified"; fMisses.checked = true; fText.value = "";
    update();
    $("calls").scrollIntoView();
  }
  var cells = document.querySelectorAll(".heat td.cell");
  Array.prototype.forEach.call(cells, function (cell) {
    function go() { pick(cell.getAttribute("data-group") || "", cell.getAttribute("data-arm") || ""); }
    cell.addEventListener("click", go);
    cell.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); } });
  });
  Array.prototype.forEach.call(document.querySelectorAll(".heat a.pick, button.pick-worst"), function (a) {
    a.addEventListener("click", function (e) { e.preventDefault(); pick(a.getAttribute("data-group") || "", ""); });
  });

  // Plain lazy tables: excluded and failing transcripts, not-run items, ignored files.
  function lazyTable(tableId, moreId, emptyId, rows, build) {
    var tbl = $(tableId), btn = $(moreId), done = 0, body = el("tbody");
    tbl.appendChild(body);
    function next() {
      var stop = Math.min(rows.length, done + PAGE_ROWS);
      for (; done < stop; done++) { body.appendChild(build(rows[done])); }
      btn.hidden = done >= rows.length;
      btn.textContent = "show more (" + (rows.length - done) + " more)";
    }
    btn.addEventListener("click", next);
    if (emptyId) { $(emptyId).hidden = rows.length > 0; }
    next();
  }
  function row(cells) {
    var tr = el("tr");
    cells.forEach(function (c) {
      var td = el("td");
      if (c instanceof Node) { td.appendChild(c); } else { td.textContent = String(c); }
      tr.appendChild(td);
    });
    return tr;
  }
  var excluded = T.filter(function (t) { return t[STATUS] !== "classified"; });
  lazyTable("excluded-table", "excluded-more", "excluded-empty", excluded, function (t) {
    var reason = t[REASON];
    if (t[FLAGS].length) { reason = (reason ? reason + " " : "") + "[" + t[FLAGS].join(", ") + "]"; }
    return row([el("span", "status " + t[STATUS], t[STATUS]), el("span", "mono", t[PATH]), t[ARM], reason]);
  });
  lazyTable("ignored-table", "ignored-more", "ignored-empty", DATA.ignored, function (i) {
    return row([el("span", "mono", i[0]), i[1]]);
  });
  if (DATA.not_run.length) {
    $("not-run-box").hidden = false;
    lazyTable("not-run-table", "not-run-more", null, DATA.not_run, function (i) {
      return row([el("span", "mono", i[0]), i[1]]);
    });
  }

  update();
  document.body.setAttribute("data-ready", "true");
})();

"use strict";
// goldeval runs page: sorts the runs table by a column on a click. Every value is already on the page, escaped by
// the template; this script only moves rows.
(function () {
  var table = document.getElementById("runs-table");
  var body = table.tBodies[0];
  var state = { key: null, dir: 1 };
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
    var key = th.getAttribute("data-key");
    if (!key) return;
    var numeric = th.getAttribute("data-num") === "1";
    th.addEventListener("click", function () {
      state.dir = state.key === key ? -state.dir : 1;
      state.key = key;
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (x) { x.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", state.dir > 0 ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.getAttribute("data-" + key), y = b.getAttribute("data-" + key);
        if (x === "" || x === null) return 1;  // runs without a value (unfinished, undefined) stay last
        if (y === "" || y === null) return -1;
        if (numeric) return state.dir * (parseFloat(x) - parseFloat(y));
        return state.dir * x.localeCompare(y, undefined, { numeric: true });
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  document.documentElement.setAttribute("data-ready", "1");
})();

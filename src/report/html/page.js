// The script of every inferbench HTML page (embedded by the build, see src/report/html_assets.hpp):
// sortable tables and uPlot charts from the JSON in #data. Text from the data reaches the page only
// through textContent (uPlot's legend does the same), never as HTML. When every chart has drawn,
// <body> carries data-rendered="ok", data-charts (how many) and data-charts-drawn (how many show
// series pixels), and each chart data-ink (its series pixels): what the browser test reads.
(function () {
  "use strict";
  var body = document.body;
  window.addEventListener("error", function (event) {
    body.dataset.rendered = "error: " + event.message;
  });

  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                 "#bcbd22", "#7f7f7f"];

  // ---- sortable tables ------------------------------------------------------------------------
  function sortKey(row, column, numeric) {
    var cell = row.cells[column];
    if (!cell) return null;
    if (numeric) return cell.dataset.v === undefined ? null : Number(cell.dataset.v);
    var text = cell.textContent;
    return text === "" ? null : text;
  }

  function sortBy(table, column, th) {
    var numeric = th.dataset.type === "num";
    var direction = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    Array.prototype.forEach.call(th.parentNode.cells, function (other) { other.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", direction === 1 ? "ascending" : "descending");
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.sort(function (a, b) {
      var ka = sortKey(a, column, numeric), kb = sortKey(b, column, numeric);
      if (ka === null) return kb === null ? 0 : 1;  // empty cells last in both directions
      if (kb === null) return -1;
      return direction * (numeric ? ka - kb : ka.localeCompare(kb, undefined, {numeric: true}));
    });
    rows.forEach(function (row) { tbody.appendChild(row); });
  }

  function makeSortable(table) {
    if (!table.tHead || !table.tBodies.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.tabIndex = 0;
      th.title = "sort by " + th.textContent;
      th.addEventListener("click", function () { sortBy(table, column, th); });
      th.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          sortBy(table, column, th);
        }
      });
    });
  }

  // ---- charts -----------------------------------------------------------------------------------
  // Pixels of saturated colour: the series (grid, axes and text are grey or black).
  function seriesInk(u) {
    var canvas = u.ctx.canvas;
    if (!canvas.width || !canvas.height) return 0;
    var px = u.ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    var ink = 0;
    for (var i = 0; i < px.length; i += 4) {
      if (px[i + 3] === 0) continue;
      var hi = Math.max(px[i], px[i + 1], px[i + 2]), lo = Math.min(px[i], px[i + 1], px[i + 2]);
      if (hi - lo > 48) ink++;
    }
    return ink;
  }

  function alignedData(spec) {
    var tables = spec.series.map(function (s) { return [s.x, s.y]; });
    if (tables.length === 1) return tables[0];
    return uPlot.join(tables);  // the union of x values; a series without a point there is skipped
  }

  // Bars of several series side by side within each category: series k of n gets the k-th slot.
  function barPaths(k, n) {
    var slot = 0.8 / n;
    return uPlot.paths.bars({
      disp: {
        x0: {unit: 1, values: function (u) { return u.data[0].map(function (x) { return x - 0.4 + k * slot; }); }},
        size: {unit: 1, values: function () { return [slot * 0.9]; }},
      },
    });
  }

  var compact = new Intl.NumberFormat("en", {notation: "compact", maximumSignificantDigits: 4});
  function axisValues(u, splits) {
    return splits.map(function (v) { return v === null || v === undefined ? "" : compact.format(v); });
  }

  // Bars start at zero, or their lengths would lie.
  function barRange(u, min, max) {
    return [Math.min(0, min), max > 0 ? max * 1.05 : 1];
  }

  function chartOptions(spec, width, onDraw) {
    var categories = spec.categories || [];
    var xScale = {time: false};
    var logBase = spec.log_base || 2;
    if (spec.x_log) {
      xScale.distr = 3;
      xScale.log = logBase;
    }
    var yScale = {};
    if (spec.y_log) {
      yScale.distr = 3;
      yScale.log = logBase;
    }
    var xAxis = {label: spec.x_label, labelSize: 20, values: axisValues};
    var xSeries = {label: spec.x_label};
    if (categories.length) {
      xScale.range = function () { return [-0.5, categories.length - 0.5]; };
      xAxis.splits = function () { return categories.map(function (_, i) { return i; }); };
      xAxis.values = function (u, splits) { return splits.map(function (v) { return categories[v] || ""; }); };
      xAxis.grid = {show: false};
      xSeries.value = function (u, v) { return v === null ? "--" : categories[Math.round(v)] || ""; };
    }
    var series = [xSeries];
    spec.series.forEach(function (s, k) {
      var colour = s.colour || palette[k % palette.length];
      var options = {label: s.label, stroke: colour, width: 1.5};
      var type = s.type || spec.type;
      if (type === "points") options.points = {show: true, size: 6, fill: colour};
      if (s.type === "points") {  // points alone in a chart of lines: no line between them
        options.paths = function () { return null; };
        options.points = {show: true, size: 8, fill: colour};
      }
      if (s.dashed) options.dash = [8, 5];
      if (s.type === "line" && spec.type !== "points") options.points = {show: false};
      if (spec.type === "bars") {
        options.fill = colour + "cc";
        options.width = 1;
        options.paths = barPaths(k, spec.series.length);
        options.points = {show: false};
      }
      if (spec.type === "stacked_bars") {  // every series in one slot, opaque: each covers the taller one before
        options.fill = colour;
        options.width = 1;
        options.paths = barPaths(0, 1);
        options.points = {show: false};
      }
      series.push(options);
    });
    return {
      width: width,
      height: 300,
      scales: spec.type === "bars" || spec.type === "stacked_bars" ? {x: xScale, y: {range: barRange}} : {x: xScale, y: yScale},
      axes: [xAxis, {label: spec.y_label, labelSize: 20, size: 60, values: axisValues}],
      series: series,
      cursor: {drag: {x: true, y: false}},
      legend: {live: true},
      hooks: {draw: [drawPointLabels(spec), onDraw]},
    };
  }

  // Each series' point_labels beside its points (the roofline's benchmarks), in the canvas: text
  // drawn as pixels, never parsed as HTML.
  function drawPointLabels(spec) {
    return function (u) {
      var ctx = u.ctx;
      var ratio = window.devicePixelRatio || 1;
      ctx.save();
      ctx.font = Math.round(11 * ratio) + "px sans-serif";
      ctx.fillStyle = "#333333";
      ctx.textBaseline = "bottom";
      spec.series.forEach(function (s) {
        if (!s.point_labels) return;
        s.x.forEach(function (x, i) {
          var y = s.y[i];
          if (x === null || y === null || !s.point_labels[i]) return;
          var left = u.valToPos(x, "x", true), top = u.valToPos(y, "y", true);
          if (!isFinite(left) || !isFinite(top)) return;
          ctx.fillText(s.point_labels[i], left + 6 * ratio, top - 4 * ratio);
        });
      });
      ctx.restore();
    };
  }

  function drawCharts(charts, done) {
    var figures = document.querySelectorAll("figure.chart[data-chart]");
    var pending = figures.length;
    var plots = [];
    if (!pending) {
      done(0, 0);
      return;
    }
    var drawn = 0;
    Array.prototype.forEach.call(figures, function (figure) {
      var spec = charts[Number(figure.dataset.chart)];
      var holder = figure.querySelector(".plot");
      var first = true;
      var onDraw = function (u) {
        var ink = seriesInk(u);
        figure.dataset.ink = String(ink);
        if (!first) return;
        first = false;
        if (ink > 0) drawn++;
        if (--pending === 0) done(figures.length, drawn);
      };
      var width = Math.max(holder.clientWidth || 0, 320);
      plots.push({holder: holder, plot: new uPlot(chartOptions(spec, width, onDraw), alignedData(spec), holder)});
    });
    window.addEventListener("resize", function () {
      plots.forEach(function (p) { p.plot.setSize({width: Math.max(p.holder.clientWidth, 320), height: 300}); });
    });
  }

  var data = JSON.parse(document.getElementById("data").textContent);
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), makeSortable);
  drawCharts(data.charts || [], function (count, drawn) {
    body.dataset.charts = String(count);
    body.dataset.chartsDrawn = String(drawn);
    if (!("rendered" in body.dataset)) body.dataset.rendered = "ok";
  });
})();

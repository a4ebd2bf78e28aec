// The report page's stylesheet and script (kept apart from the C++ that assembles the page).
#pragma once

namespace xopt::viz {

inline constexpr const char* kReportCss = R"CSS(
body{font-family:Helvetica,Arial,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:22px 0 6px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}
.summary td:first-child{font-weight:bold}
#selfcheck{display:inline-block;font-size:12px;padding:2px 8px;border-radius:3px;background:#eee}
#selfcheck.ok{background:#c7e9c0}#selfcheck.failed{background:#fcbba1}
.graphs{display:flex;gap:10px}.panel{flex:1;min-width:0}.panel h3{font-size:13px;margin:4px 0}
.viewport{height:620px;border:1px solid #bbb;overflow:hidden;cursor:grab;background:#fff}
.viewport svg{width:100%;height:100%;display:block}
.hint{font-size:11px;color:#666}p{font-size:12px}td.left{text-align:left}
g.node{cursor:pointer}rect.value{cursor:pointer}
g.node.hl path,g.node.hl polygon,g.node.hl ellipse{stroke:#e31a1c!important;stroke-width:5px!important}
rect.value.hl{stroke:#e31a1c!important;stroke-width:3px!important}
#selection{font-size:12px;min-height:16px;color:#333}
)CSS";

inline constexpr const char* kReportJs = R"JS(
(function () {
  const DATA = JSON.parse(document.getElementById('node-outputs').textContent);
  const OUT = DATA.outputs, LINKS = DATA.links;
  const rectsByValue = new Map();
  document.querySelectorAll('#timeline rect.value').forEach(function (r) {
    const v = r.getAttribute('data-value');
    if (!rectsByValue.has(v)) rectsByValue.set(v, []);
    rectsByValue.get(v).push(r);
  });
  const nodesByValue = new Map();
  Object.keys(OUT).forEach(function (id) {
    OUT[id].forEach(function (v) {
      if (!nodesByValue.has(v)) nodesByValue.set(v, []);
      nodesByValue.get(v).push(id);
    });
  });
  const views = {};
  let checking = false;  // the self-check clicks without moving the views
  function say(text) { document.getElementById('selection').textContent = text; }
  function clear() {
    document.querySelectorAll('.hl').forEach(function (e) { e.classList.remove('hl'); });
  }
  function selectNode(id) {
    clear();
    const g = document.getElementById(id);
    if (!g) return 0;
    g.classList.add('hl');
    (LINKS[id] || []).forEach(function (other) {
      const o = document.getElementById(other);
      if (o) o.classList.add('hl');
    });
    let n = 0;
    (OUT[id] || []).forEach(function (v) {
      (rectsByValue.get(v) || []).forEach(function (r) { r.classList.add('hl'); n++; });
    });
    const t = g.querySelector('title');
    say((t ? t.textContent : id) + ': ' + (n ? n + ' planned value(s) highlighted in the timeline'
                                            : 'no planned output (graph output or not in the arena)'));
    return n;
  }
  function selectValue(v) {
    clear();
    (rectsByValue.get(v) || []).forEach(function (r) { r.classList.add('hl'); });
    let n = 0;
    (nodesByValue.get(v) || []).forEach(function (id) {
      const g = document.getElementById(id);
      if (!g) return;
      g.classList.add('hl');
      n++;
      const vp = g.closest('.viewport');
      if (vp && views[vp.id] && !checking) views[vp.id].centre(g);
    });
    say(v + ': produced by ' + n + ' highlighted node(s)');
    return n;
  }
  function panzoom(div) {
    const svg = div.querySelector('svg');
    if (!svg || !svg.viewBox.baseVal) return;
    const b = svg.viewBox.baseVal;
    const vb = {x: b.x, y: b.y, w: b.width, h: b.height};
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    svg.setAttribute('preserveAspectRatio', 'xMidYMin meet');
    // Start at the top of the graph, its width filling the view (long graphs scroll by dragging).
    const box = div.getBoundingClientRect();
    if (box.width > 0 && vb.h / vb.w > box.height / box.width) {
      vb.h = vb.w * box.height / box.width;
      svg.setAttribute('viewBox', vb.x + ' ' + vb.y + ' ' + vb.w + ' ' + vb.h);
    }
    function set() { svg.setAttribute('viewBox', vb.x + ' ' + vb.y + ' ' + vb.w + ' ' + vb.h); }
    function scale() {
      const r = svg.getBoundingClientRect();
      return Math.max(vb.w / Math.max(r.width, 1), vb.h / Math.max(r.height, 1));
    }
    div.addEventListener('wheel', function (e) {
      e.preventDefault();
      const r = svg.getBoundingClientRect(), s = scale(), k = e.deltaY > 0 ? 1.2 : 1 / 1.2;
      const px = vb.x + vb.w / 2 + (e.clientX - r.left - r.width / 2) * s;
      const py = vb.y + vb.h / 2 + (e.clientY - r.top - r.height / 2) * s;
      vb.x = px - (px - vb.x) * k; vb.y = py - (py - vb.y) * k; vb.w *= k; vb.h *= k;
      set();
    }, {passive: false});
    let drag = null, moved = false;
    div.addEventListener('mousedown', function (e) { drag = {x: e.clientX, y: e.clientY}; moved = false; });
    window.addEventListener('mouseup', function () { drag = null; });
    div.addEventListener('mousemove', function (e) {
      if (!drag) return;
      const s = scale();
      vb.x -= (e.clientX - drag.x) * s; vb.y -= (e.clientY - drag.y) * s;
      if (Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) > 2) moved = true;
      drag = {x: e.clientX, y: e.clientY};
      set();
    });
    views[div.id] = {
      centre: function (g) {
        const r = svg.getBoundingClientRect(), n = g.getBoundingClientRect(), s = scale();
        vb.x += (n.left + n.width / 2 - r.left - r.width / 2) * s;
        vb.y += (n.top + n.height / 2 - r.top - r.height / 2) * s;
        set();
      },
      moved: function () { return moved; }
    };
  }
  document.querySelectorAll('.viewport').forEach(panzoom);
  document.querySelectorAll('.viewport g.node').forEach(function (g) {
    g.addEventListener('click', function () {
      const v = views[g.closest('.viewport').id];
      if (!v || !v.moved()) selectNode(g.id);
    });
  });
  document.querySelectorAll('#timeline rect.value').forEach(function (r) {
    r.addEventListener('click', function () { selectValue(r.getAttribute('data-value')); });
  });

  // Self-check: a click on a node of the optimized graph must highlight its output in the
  // timeline, and a click on that rectangle must highlight the node again.
  const box = document.getElementById('selfcheck');
  function result(ok, text) {
    box.textContent = (ok ? 'ok: ' : 'failed: ') + text;
    box.className = ok ? 'ok' : 'failed';
    box.setAttribute('data-status', ok ? 'ok' : 'failed');
  }
  checking = true;
  try {
    const click = function (e) { e.dispatchEvent(new MouseEvent('click', {bubbles: true})); };
    if (rectsByValue.size === 0) {
      // No plan (a diff page): a click on a fused node must mark the originals it replaced.
      const id = Object.keys(LINKS).find(function (k) { return k.indexOf('after-') === 0; });
      if (!id) {
        result(true, 'nothing to link (no plan, no node stands for another)');
      } else {
        click(document.getElementById(id));
        const other = LINKS[id].map(function (o) { return document.getElementById(o); });
        if (!other.every(function (o) { return o && o.classList.contains('hl'); }))
          throw 'clicking node ' + id + ' left its originals unmarked';
        clear();
        say('');
        result(true, 'node ' + id + ' marks its ' + other.length + ' original(s) (' +
                     Object.keys(LINKS).length + ' nodes linked)');
      }
    } else {
      const id = Object.keys(OUT).find(function (k) {
        return k.indexOf('after-') === 0 && OUT[k].some(function (v) { return rectsByValue.has(v); });
      });
      if (!id) throw 'no node of the optimized graph has a planned output';
      const value = OUT[id].find(function (v) { return rectsByValue.has(v); });
      click(document.getElementById(id));
      const rect = rectsByValue.get(value)[0];
      if (!rect.classList.contains('hl')) throw 'clicking node ' + id + ' left ' + value + ' unmarked';
      clear();
      click(rect);
      if (!document.getElementById(id).classList.contains('hl'))
        throw 'clicking ' + value + ' left node ' + id + ' unmarked';
      clear();
      say('');
      result(true, 'node ' + id + ' <-> value ' + value + ' (' + Object.keys(OUT).length +
                   ' nodes, ' + rectsByValue.size + ' planned values linked)');
    }
  } catch (e) {
    result(false, String(e));
  }
  checking = false;
})();
)JS";

}  // namespace xopt::viz

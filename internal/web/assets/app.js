// kubegap web: progressive enhancement only. Every page works without this
// script. Where there is no server (the static site, the single-file
// report) it filters in the browser; on the server it only applies a
// report filter as soon as a select changes.
(function () {
  'use strict';
  var mode = document.body.getAttribute('data-mode');
  document.documentElement.classList.add('js');

  // ---- case list of the static site -----------------------------------
  var idxEl = document.getElementById('case-index');
  if (idxEl) { initCases(JSON.parse(idxEl.textContent)); }

  function initCases(idx) {
    var list = document.getElementById('case-list');
    var cards = {};
    Array.prototype.forEach.call(list.querySelectorAll('[data-case]'), function (el) {
      cards[el.getAttribute('data-case')] = el;
    });
    var facetLinks = document.querySelectorAll('a[data-facet]');
    var params = {};
    idx.facets.forEach(function (f) { params[f.param] = f; });

    function readQuery() {
      var sp = new URLSearchParams(location.search);
      var q = { sel: {}, search: (sp.get('q') || '').trim(), sort: sp.get('sort') || '', page: parseInt(sp.get('page') || '1', 10), per: parseInt(sp.get('per') || String(idx.per), 10), errors: [] };
      idx.facets.forEach(function (f) {
        q.sel[f.name] = [];
        sp.getAll(f.param).forEach(function (v) {
          if (f.ids.indexOf(v) < 0) { q.errors.push('Unknown ' + f.label + ' "' + v + '": ignored.'); return; }
          if (q.sel[f.name].indexOf(v) < 0) { q.sel[f.name].push(v); }
        });
      });
      if (!(q.page >= 1)) { q.errors.push('Page numbers start at 1.'); q.page = 1; }
      if (!(q.per >= 1 && q.per <= 100)) { q.errors.push('Page size must be 1 to 100.'); q.per = idx.per; }
      return q;
    }

    function encode(q) {
      var sp = new URLSearchParams();
      idx.facets.forEach(function (f) { q.sel[f.name].forEach(function (v) { sp.append(f.param, v); }); });
      if (q.search) { sp.set('q', q.search); }
      if (q.sort) { sp.set('sort', q.sort); }
      if (q.per !== idx.per) { sp.set('per', String(q.per)); }
      if (q.page > 1) { sp.set('page', String(q.page)); }
      var s = sp.toString();
      return location.pathname + (s ? '?' + s : '');
    }

    function toggled(q, facet, id) {
      var n = { sel: {}, search: q.search, sort: q.sort, page: 1, per: q.per };
      Object.keys(q.sel).forEach(function (k) { n.sel[k] = q.sel[k].slice(); });
      var i = n.sel[facet].indexOf(id);
      if (i >= 0) { n.sel[facet].splice(i, 1); } else { n.sel[facet].push(id); }
      return n;
    }

    function withPage(q, n) {
      return { sel: q.sel, search: q.search, sort: q.sort, page: n, per: q.per };
    }

    // score mirrors library.Query: every word must appear; title weighs
    // 8, summary 3, the rest 1.
    function score(c, words) {
      var total = 0;
      for (var i = 0; i < words.length; i++) {
        var w = words[i], s = 0;
        if (c.t.indexOf(w) >= 0) { s += 8; }
        if (c.s.indexOf(w) >= 0) { s += 3; }
        if (c.b.indexOf(w) >= 0) { s += 1; }
        if (s === 0) { return -1; }
        total += s;
      }
      return total;
    }

    function render() {
      var q = readQuery();
      var words = q.search.toLowerCase().split(/\s+/).map(function (w) { return w.replace(/^[.,;:!?"'()[\]{}]+|[.,;:!?"'()[\]{}]+$/g, ''); }).filter(Boolean);
      var hits = [];
      idx.cases.forEach(function (c, order) {
        for (var f in q.sel) {
          if (q.sel[f].length && !c.f[f].some(function (v) { return q.sel[f].indexOf(v) >= 0; })) { return; }
        }
        var s = score(c, words);
        if (s >= 0) { hits.push({ c: c, s: s, o: order }); }
      });
      var byDate = function (dir) { return function (a, b) { return a.c.date === b.c.date ? (a.c.id < b.c.id ? -1 : 1) : (a.c.date < b.c.date ? -dir : dir); }; };
      if (q.sort === 'oldest') { hits.sort(byDate(1)); }
      else if (q.sort === 'newest' || !words.length) { hits.sort(byDate(-1)); }
      else { hits.sort(function (a, b) { return b.s - a.s || a.o - b.o; }); }

      var total = hits.length, pages = Math.max(1, Math.ceil(total / q.per));
      if (q.page > pages) { q.errors.push('Page ' + q.page + ' is past the end: showing page ' + pages + ' of ' + pages + '.'); q.page = pages; }
      var from = (q.page - 1) * q.per, to = Math.min(q.page * q.per, total);

      Object.keys(cards).forEach(function (id) { cards[id].hidden = true; });
      hits.forEach(function (h, i) {
        var el = cards[h.c.id];
        list.appendChild(el);
        el.hidden = i < from || i >= to;
      });

      // Facet counts over every matching case, as on the server.
      var counts = {};
      hits.forEach(function (h) { for (var f in h.c.f) { h.c.f[f].forEach(function (v) { counts[f + '/' + v] = (counts[f + '/' + v] || 0) + 1; }); } });
      Array.prototype.forEach.call(facetLinks, function (a) {
        var f = a.getAttribute('data-facet'), v = a.getAttribute('data-value');
        var n = counts[f + '/' + v] || 0, on = q.sel[f].indexOf(v) >= 0;
        a.querySelector('.count').textContent = String(n);
        a.className = on ? 'on' : '';
        if (on) { a.setAttribute('aria-current', 'true'); } else { a.removeAttribute('aria-current'); }
        a.href = encode(toggled(q, f, v));
        a.parentNode.hidden = n === 0 && !on;
      });
      // Most common values first, as the server orders them.
      Array.prototype.forEach.call(document.querySelectorAll('aside.facets ul'), function (ul) {
        var items = Array.prototype.slice.call(ul.children);
        items.sort(function (x, y) { return parseInt(y.querySelector('.count').textContent, 10) - parseInt(x.querySelector('.count').textContent, 10); });
        items.forEach(function (li) { ul.appendChild(li); });
      });

      var chips = document.getElementById('selection');
      chips.textContent = '';
      idx.facets.forEach(function (f) {
        q.sel[f.name].forEach(function (v) {
          var li = document.createElement('li'), a = document.createElement('a');
          a.className = 'chip chip-x'; a.setAttribute('data-nav', '');
          a.href = encode(toggled(q, f.name, v));
          a.textContent = f.label + ': ' + (idx.names[f.name + '/' + v] || v) + ' (' + v + ')';
          a.setAttribute('aria-label', 'Remove ' + a.textContent);
          li.appendChild(a); chips.appendChild(li);
        });
      });

      var status = total === 0 ? 'No case matches.' : (from + 1) + ' to ' + to + ' of ' + total + ' cases';
      if (q.errors.length) { status = q.errors.join(' ') + ' ' + status; }
      document.getElementById('case-count').textContent = status;

      var pager = document.getElementById('pager');
      pager.textContent = '';
      if (pages > 1) {
        var link = function (text, n, rel) {
          var el;
          if (n === q.page && !rel) { el = document.createElement('span'); el.setAttribute('aria-current', 'page'); }
          else { el = document.createElement('a'); el.setAttribute('data-nav', ''); el.href = encode(withPage(q, n)); if (rel) { el.rel = rel; } }
          el.textContent = text; pager.appendChild(el);
        };
        if (q.page > 1) { link('Previous', q.page - 1, 'prev'); }
        for (var n = 1; n <= pages; n++) { link(String(n), n); }
        if (q.page < pages) { link('Next', q.page + 1, 'next'); }
      }

      var checkIDs = [], covered = 0;
      hits.forEach(function (h) { if (h.c.k.length) { covered++; } h.c.k.forEach(function (k) { if (checkIDs.indexOf(k) < 0) { checkIDs.push(k); } }); });
      checkIDs.sort();
      var cmd = document.getElementById('check-cmd');
      if (checkIDs.length) {
        document.getElementById('check-text').textContent = 'kubegap checks a cluster, read-only, for the gaps behind ' + covered + ' of the ' + total + ' cases listed:';
        cmd.querySelector('code').textContent = 'kubegap audit --checks ' + checkIDs.join(',');
        cmd.hidden = false;
      } else {
        document.getElementById('check-text').textContent = 'No kubegap check covers the ' + total + ' cases listed yet.';
        cmd.hidden = true;
      }

      var form = document.getElementById('case-search');
      form.elements.q.value = q.search;
      form.elements.sort.value = q.sort;
    }

    document.addEventListener('click', function (e) {
      var a = e.target.closest ? e.target.closest('a[data-nav]') : null;
      if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) { return; }
      e.preventDefault();
      history.pushState(null, '', a.href);
      render();
    });
    document.getElementById('case-search').addEventListener('submit', function (e) {
      e.preventDefault();
      var q = readQuery();
      q.search = this.elements.q.value.trim();
      q.sort = this.elements.sort.value;
      q.page = 1;
      history.pushState(null, '', encode(q));
      render();
    });
    window.addEventListener('popstate', render);
    render();
  }

  // ---- report filters ----------------------------------------------------
  var filters = document.getElementById('report-filters');
  if (filters) {
    if (mode === 'server') {
      // The server filters; apply a choice without a button press.
      Array.prototype.forEach.call(filters.querySelectorAll('select'), function (s) {
        s.addEventListener('change', function () { filters.submit(); });
      });
    } else {
      var apply = function () {
        var sev = filters.elements.severity.value, chk = filters.elements.check.value, ns = filters.elements.namespace.value;
        var all = document.querySelectorAll('[data-finding]'), shown = 0;
        if (!sev && !chk && !ns && !document.querySelector('[data-finding][hidden]')) {
          return; // nothing filtered, nothing to undo: the page is as written
        }
        Array.prototype.forEach.call(all, function (el) {
          var ok = (!sev || el.getAttribute('data-severity') === sev) && (!chk || el.getAttribute('data-check') === chk) &&
            (!ns || (' ' + el.getAttribute('data-ns') + ' ').indexOf(' ' + ns + ' ') >= 0);
          el.hidden = !ok;
          if (ok) { shown++; }
        });
        Array.prototype.forEach.call(document.querySelectorAll('[data-group]'), function (g) {
          var n = g.querySelectorAll('[data-finding]:not([hidden])').length;
          g.hidden = n === 0;
          g.querySelector('.gcount').textContent = String(n);
        });
        document.getElementById('finding-count').textContent = (shown === all.length ? '' : shown + ' of ') + all.length + ' findings';
      };
      filters.addEventListener('submit', function (e) { e.preventDefault(); apply(); });
      Array.prototype.forEach.call(filters.querySelectorAll('select'), function (s) { s.addEventListener('change', apply); });
      // Start from the query of a shared link, e.g. report/?severity=high.
      var sp = new URLSearchParams(location.search);
      ['severity', 'check', 'namespace'].forEach(function (k) { var v = sp.get(k); if (v) { filters.elements[k].value = v; } });
      apply();
      document.body.setAttribute('data-ready', '');
    }
  }
})();

// citestream's page: one small script, no framework, no build step, nothing from another origin.
// Rule: every string that came from a topic, a PDF or the database reaches the DOM through
// textContent (the h() helper below); nothing here ever assigns innerHTML.
'use strict';

(() => {
  const $ = (sel, root = document) => root.querySelector(sel);
  const REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;
  const CLASSES = ['DEFINITIVE', 'CONDITIONAL', 'REFUSAL'];
  const FLOW = ['questions', 'qa.facts', 'qa.relevant', 'qa.prompts', 'qa.generations', 'answers',
    'qa.deadletter', 'ops.alerts', 'documents.ingest', 'documents.ingested'];
  const STAGES = { 'qa.facts': 'passages found', 'qa.relevant': 'passages chosen', 'qa.prompts': 'evidence put together',
    'qa.generations': 'answer written, being checked' };

  // --- building DOM safely ----------------------------------------------------------------------

  function safeHref(href) {
    // Only links this script builds to its own pages: a path on this origin, never a scheme or //host.
    return typeof href === 'string' && href.startsWith('/') && !href.startsWith('//') ? href : '#';
  }

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = String(v);
      else if (k === 'href') el.setAttribute('href', safeHref(v));
      else el.setAttribute(k, String(v));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }

  function fmtMs(ms) {
    const v = Number(ms) || 0;
    return v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Math.round(v)} ms`;
  }

  function fmtTime(value) {
    const d = typeof value === 'number' ? new Date(value) : new Date(String(value));
    return isNaN(d) ? '' : d.toLocaleTimeString();
  }

  function showError(el, message) {
    el.textContent = message || '';
    el.hidden = !message;
  }

  // Records are shown only when the page can check their MAC; when it cannot, say why instead of showing any.
  function showTrust(trust) {
    const el = $('#trust');
    if (!el) return;
    el.textContent = trust && !trust.verifying ? `No answers or records are shown: ${trust.why_not}` : '';
    el.hidden = !(trust && !trust.verifying);
  }

  async function getJSON(url) {
    const r = await fetch(url, { headers: { accept: 'application/json' } });
    let body = null;
    try { body = await r.json(); } catch (e) { body = null; }
    return { ok: r.ok, status: r.status, body };
  }

  function requestLink(rid) {
    if (typeof rid !== 'string' || !REQUEST_ID.test(rid) || rid.startsWith('unknown-')) {
      return h('code', { text: String(rid) });
    }
    return h('a', { href: '/request?id=' + encodeURIComponent(rid), class: 'rid' }, h('code', { text: rid }));
  }

  function classBadge(cls) {
    const known = CLASSES.includes(cls) ? cls : 'UNKNOWN';
    const words = { DEFINITIVE: 'answered', CONDITIONAL: 'answered, with conditions', REFUSAL: 'no answer' };
    return h('span', { class: 'badge cls-' + known.toLowerCase(), text: words[known] || String(cls), title: String(cls) });
  }

  // Where a document came from and how its issuer was read, in words a user knows (not origin or source codes).
  function originWords(origin) {
    const o = String(origin || '');
    if (o === 'upload') return 'uploaded on this page';
    if (o === 'cli') return 'added by an operator';
    if (o === 'inline') return 'sent as text';
    if (o.startsWith('root:')) return `from the ${o.slice(5)} folder`;
    return 'source not recorded';
  }

  const ISSUER_HOW = { 'first-page': 'named on its first page', 'second-page': 'named on its second page',
    metadata: "named in the PDF's properties", 'file-name': 'guessed from its file name',
    manifest: "as the folder's list says", uploader: 'corrected by whoever uploaded it', given: 'set by an operator',
    operator: 'corrected by an operator', claimed: 'as the sender said' };
  function issuerHow(source) { return ISSUER_HOW[source] || ''; }

  function citeLink(s) {
    const quote = String(s.text || '').slice(0, 1000);
    return h('a', { class: 'cite-link', href: '/cite?chunk=' + encodeURIComponent(String(s.chunk_id)) +
      (quote ? '&quote=' + encodeURIComponent(quote) : ''),
      title: `Open page ${s.page} of ${s.pdf}` }, `(${s.pdf}, page ${s.page})`);
  }

  function scopeWords(scope) { return scope === 'MIXED' || !scope ? 'any of the documents' : `the ${scope} documents`; }

  // Internal ids, codes and versions, for operators: folded away under "details" so a user reads plain words.
  function detailsBox(rows, extra) {
    const dl = h('dl', { class: 'facts' });
    for (const [k, v] of rows) if (v !== null && v !== undefined && v !== '') dl.append(h('dt', { text: k }), h('dd', {}, v));
    return h('details', { class: 'ops' }, h('summary', { text: 'details' }), dl, extra || null);
  }

  // Why a question was refused, said to its asker: what was searched and what came closest; the record's own
  // explanation (with chunk ids and scores) stays under "details".
  function refusalWords(a) {
    const where = scopeWords(a.scope);
    switch (a.refusal_code) {
      case 'WRONG_AUTHORITY':
        return `The question asks about documents that are not here: ${a.explanation || 'none were added'}.`;
      case 'NOT_RELEVANT':
        return `Nothing in ${where} is about this question.`;
      case 'NOT_ANSWERING':
        return a.related_clause ? `The closest passage in ${where} is related, but it does not answer the question.`
          : `No passage in ${where} answers the question.`;
      case 'FALSE_PREMISE':
        return 'The question takes something for granted that the documents do not say.';
      default:
        return a.validation_status === 'FAILED' ? 'The answer could not be checked against the documents, so none is given.'
          : `No passage in ${where} answers the question.`;
    }
  }

  function traceBars(trace) {
    if (!Array.isArray(trace) || !trace.length) return null;
    const total = trace.reduce((sum, t) => sum + (Number(t.elapsed_ms) || 0), 0) || 1;
    const dl = h('dl', { class: 'trace', 'aria-label': 'time per stage' });
    for (const t of trace) {
      const bar = h('span', { class: 'bar' });
      bar.style.width = Math.max(2, (100 * (Number(t.elapsed_ms) || 0)) / total) + '%';
      dl.append(h('dt', { text: t.stage }), h('dd', {}, h('span', { class: 'track' }, bar),
        h('span', { class: 'ms', text: fmtMs(t.elapsed_ms) })));
    }
    return dl;
  }

  function flowSeconds(trace) {
    if (!Array.isArray(trace) || !trace.length) return null;
    const first = Date.parse(trace[0].started_at);
    const last = trace[trace.length - 1];
    const end = Date.parse(last.started_at) + (Number(last.elapsed_ms) || 0);
    return isNaN(first) || isNaN(end) ? null : (end - first) / 1000;
  }

  // The answer itself: cited sentences, or the refusal said in a user's words with the closest passage.
  function answerBody(a) {
    const parts = [];
    if (Array.isArray(a.sentences) && a.sentences.length) {
      const ol = h('ol', { class: 'sentences' });
      for (const s of a.sentences) {
        ol.append(h('li', {}, h('span', { class: 'sentence', text: s.text }), ' ', citeLink(s)));
      }
      parts.push(ol);
    } else {
      parts.push(h('p', { class: 'refusal', text: a.answer_text }));
      parts.push(h('p', { class: 'explanation why' }, h('strong', { text: 'Why: ' }), refusalWords(a)));
      if (a.refusal_code === 'FALSE_PREMISE' && a.explanation) {
        parts.push(h('p', { class: 'explanation', text: a.explanation.replace(/\s*\([^()]*chunk[^()]*\)/g, '') }));
      }
    }
    if (a.related_clause) {
      parts.push(h('div', { class: 'related' },
        h('p', { class: 'label', text: 'Closest passage (found, but it does not answer the question)' }),
        h('blockquote', { text: a.related_clause.text }), citeLink(a.related_clause)));
    }
    return parts;
  }

  function answerDetails(a, rid, extra) {
    return detailsBox([['request', requestLink(rid)], ['scope', a.scope], ['index', a.index_version],
      ['policy', a.policy_version], ['refusal code', a.refusal_code], ['explanation', a.explanation],
      ['validation', a.validation_status === 'FAILED' ? `failed: ${a.failure_reason || ''}` : null],
      ['retrieval', a.fallback_used ? 'fallback retrieval used' : null],
      ['citations', (a.sentences || []).map((s) => s.chunk_id).join(', ')]], extra);
  }

  function answerTags(a) {
    return h('p', { class: 'tags' }, classBadge(a.classification),
      h('span', { class: 'badge scope', text: a.scope === 'MIXED' ? 'all documents' : `scope ${a.scope}` }),
      a.confidence ? h('span', { class: 'badge', text: 'confidence ' + a.confidence }) : null);
  }

  // --- the event stream -------------------------------------------------------------------------

  function connect(handlers) {
    const conn = $('#conn');
    const source = new EventSource('/api/events');
    source.addEventListener('open', () => {
      conn.textContent = 'live';
      conn.dataset.state = 'ok';
      if (handlers.open) handlers.open();
    });
    source.addEventListener('error', () => {
      // CLOSED: the server refused the stream (e.g. 503, too many live views open); the browser does not retry
      conn.textContent = source.readyState === EventSource.CLOSED ? 'refused by the server: reload later' : 'reconnecting…';
      conn.dataset.state = 'bad';
    });
    source.addEventListener('snapshot', (e) => {
      let trust = null;
      try { trust = JSON.parse(e.data).trust; } catch (err) { trust = null; }
      showTrust(trust);
    });
    for (const kind of ['snapshot', 'answer', 'alert', 'deadletter', 'ingested', 'stage']) {
      source.addEventListener(kind, (e) => {
        let data;
        try { data = JSON.parse(e.data); } catch (err) { return; }
        if (handlers[kind]) handlers[kind](data);
        if (handlers.any && kind !== 'snapshot') handlers.any(data);
      });
    }
    return source;
  }

  // --- Ask --------------------------------------------------------------------------------------

  function askPage() {
    const KEY = 'citestream.asked';
    const form = $('#ask-form');
    const input = $('#question');
    const list = $('#answers');
    const error = $('#ask-error');
    let asked = [];
    try { asked = JSON.parse(sessionStorage.getItem(KEY) || '[]'); } catch (e) { asked = []; }
    if (!Array.isArray(asked)) asked = [];
    const save = () => sessionStorage.setItem(KEY, JSON.stringify(asked.slice(0, 30)));
    const byId = (rid) => asked.find((e) => e.rid === rid);

    function card(entry) {
      const li = h('li', { class: 'card', id: 'card-' + entry.rid, 'data-rid': entry.rid });
      li.append(h('p', { class: 'q' }, h('span', { class: 'label', text: 'Q ' }),
        h('span', { class: 'question', text: entry.question })));
      const a = entry.answer;
      if (!a) {
        const done = (entry.stages || []).map((t) => STAGES[t]).filter(Boolean);
        li.append(h('p', { class: 'pending', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }),
          'Looking for the answer', done.length ? ` — ${done[done.length - 1]}` : ' — searching the documents'));
        li.append(detailsBox([['request', requestLink(entry.rid)], ['scope', entry.scope]]));
        return li;
      }
      li.classList.add('answered');
      li.append(answerTags(a), ...answerBody(a));
      if (a.status === 'refused') li.append(refusalHelp(entry, a));
      const secs = flowSeconds(a.trace);
      li.append(answerDetails(a, entry.rid, h('div', { class: 'more' }, h('p', { class: 'meta', text: 'Time per stage' +
        (secs !== null ? ` · ${secs.toFixed(2)} s in all` : '') }), traceBars(a.trace))));
      return li;
    }

    // What a refusal searched, what else holds something related, and how to add the document that would answer.
    let docs = null;
    async function loadDocs() {
      if (docs) return;
      const r = await getJSON('/api/documents');
      docs = (r.ok && r.body && r.body.documents) || [];
      for (const entry of asked) if (entry.answer && entry.answer.status === 'refused') render(entry);
    }

    function refusalHelp(entry, a) {
      const box = h('div', { class: 'help' });
      if (docs === null) { loadDocs(); } else {
        const searched = a.scope === 'MIXED' ? docs : docs.filter((d) => d.authority === a.scope);
        const names = searched.slice(0, 5).map((d) => d.title || d.pdf);
        box.append(h('p', { class: 'searched' }, h('strong', { text: 'Searched: ' }), searched.length
          ? `${a.scope === 'MIXED' ? 'all ' : ''}${searched.length} document${searched.length === 1 ? '' : 's'}` +
            `${a.scope === 'MIXED' ? '' : ' in scope ' + a.scope} — ${names.join('; ')}` +
            (searched.length > names.length ? `; and ${searched.length - names.length} more` : '')
          : `no ${a.scope === 'MIXED' ? '' : a.scope + ' '}documents have been added yet`));
      }
      if (!a.related_clause) box.append(h('p', { class: 'meta', text: 'No passage came close to answering it.' }));
      const probe = entry.probe;
      if (probe) {
        const p = probe.answer;
        if (!p) {
          box.append(h('p', { class: 'meta other' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Looking in all the other documents too…'));
        } else if (p.status === 'answered' && p.sentences && p.sentences.length) {
          box.append(h('p', { class: 'other' }, h('strong', { text: 'Another scope holds an answer: ' }),
            h('span', { text: p.sentences[0].text }), ' ', citeLink(p.sentences[0]), ' — ask again in all documents to read it.'));
        } else if (p.related_clause) {
          box.append(h('p', { class: 'other' }, h('strong', { text: 'Another scope holds a related passage: ' }),
            h('span', { text: p.related_clause.text }), ' ', citeLink(p.related_clause)));
        } else {
          box.append(h('p', { class: 'meta other', text: 'Nothing related in the other documents either.' }));
        }
      }
      box.append(h('p', { class: 'add' }, 'Have a document that answers it? ', h('a', { href: '/documents', text: 'Add a PDF' }),
        ' and ask again.'));
      return box;
    }

    // A refusal in one scope: the same question in all documents, to say whether another scope holds something.
    async function probeOthers(entry) {
      if (entry.probe || entry.scope === 'MIXED' || !entry.answer || entry.answer.status !== 'refused') return;
      entry.probe = { rid: null, answer: null };
      try {
        const r = await fetch('/api/questions', { method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question: entry.question, scope: 'MIXED' }) });
        const body = await r.json().catch(() => ({}));
        if (!r.ok) { entry.probe = null; return; }
        entry.probe.rid = body.request_id;
      } catch (err) { entry.probe = null; return; }
      save();
      render(entry);
    }

    function render(entry) {
      const old = document.getElementById('card-' + entry.rid);
      const fresh = card(entry);
      if (old) old.replaceWith(fresh); else list.prepend(fresh);
    }

    // An answer counts only if it names the question and scope this page sent under its request id: the seal covers
    // the answer, not whose question it was, and a publisher whose question was taken first under the id gets a
    // worker's sealed answer to *its* question (issue 54). Others are passed over, counted and logged; the card waits.
    function answersWhatWasAsked(answer, question, scope, rid) {
      if (answer && answer.question === question && answer.scope === scope) return true;
      list.dataset.unbound = String(Number(list.dataset.unbound || 0) + 1);
      console.warn(`citestream: a sealed answer under request ${rid} answers another question or scope; not shown`);
      return false;
    }

    function fill(rid, answer) {
      const probing = asked.find((e) => e.probe && e.probe.rid === rid);
      if (probing && !probing.probe.answer) {
        if (!answersWhatWasAsked(answer, probing.question, 'MIXED', rid)) return;
        probing.probe.answer = answer;
        save();
        render(probing);
        return;
      }
      const entry = byId(rid);
      if (!entry || entry.answer) return;
      if (!answersWhatWasAsked(answer, entry.question, entry.scope, rid)) return;
      entry.answer = answer;
      save();
      render(entry);
      probeOthers(entry);
    }

    async function catchUp() {
      for (const entry of asked.filter((e) => !e.answer || (e.probe && e.probe.rid && !e.probe.answer))) {
        const rid = entry.answer ? entry.probe.rid : entry.rid;
        const r = await getJSON('/api/answers/' + encodeURIComponent(rid));
        if (r.ok && r.body) fill(rid, r.body.data);
      }
    }

    for (const entry of asked.slice().reverse()) render(entry);

    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    $('#clear-answers').addEventListener('click', () => {
      asked = [];
      save();
      clear(list);
      input.focus();
    });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      showError(error, '');
      const question = input.value;
      if (!question.trim()) { showError(error, 'Type a question first.'); return; }
      const button = $('#ask-button');
      button.disabled = true;
      try {
        const r = await fetch('/api/questions', { method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question, scope: $('#scope').value }) });
        const body = await r.json().catch(() => ({}));
        if (!r.ok) { showError(error, body.error || `The question was not sent (HTTP ${r.status}).`); return; }
        const entry = { rid: body.request_id, question: body.question, scope: body.scope, stages: [] };
        asked.unshift(entry);
        save();
        render(entry);
        input.value = '';
      } catch (err) {
        showError(error, 'The server did not answer; is `citestream web` still running?');
      } finally {
        button.disabled = false;
        input.focus();
      }
    });

    connect({
      open: catchUp,
      snapshot: (s) => { for (const ev of s.recent.answer || []) fill(ev.request_id, ev.data); },
      answer: (ev) => fill(ev.request_id, ev.data),
      stage: (ev) => {
        const entry = byId(ev.request_id);
        if (!entry || entry.answer || !STAGES[ev.topic]) return;
        entry.stages = [...new Set([...(entry.stages || []), ev.topic])];
        render(entry);
      },
    });
  }

  // --- Live -------------------------------------------------------------------------------------

  function livePage() {
    const MAX = 100;
    const counts = {};
    const flow = $('#flow');

    function drawFlow() {
      clear(flow);
      for (const topic of FLOW) {
        flow.append(h('li', { class: topic === 'qa.deadletter' || topic === 'ops.alerts' ? 'side' : '' },
          h('span', { class: 'topic', text: topic }), h('span', { class: 'count', text: String(counts[topic] || 0) })));
      }
    }

    function toggleEmpty() {
      for (const p of document.querySelectorAll('[data-empty-for]')) {
        p.hidden = document.getElementById(p.dataset.emptyFor).children.length > 0;
      }
    }

    function push(listId, li) {
      const list = document.getElementById(listId);
      list.prepend(li);
      while (list.children.length > MAX) list.lastElementChild.remove();
    }

    function answerItem(ev) {
      const a = ev.data;
      const secs = flowSeconds(a.trace);
      return h('li', { class: 'card answered' },
        h('p', { class: 'q' }, h('time', { text: fmtTime(ev.timestamp_ms) }), ' ', h('span', { class: 'question', text: a.question })),
        answerTags(a), ...answerBody(a), traceBars(a.trace),
        h('p', { class: 'foot' }, 'request ', requestLink(ev.request_id),
          secs !== null ? ` · ${secs.toFixed(2)} s through the flow` : ''));
    }

    function alertItem(ev) {
      const a = ev.data;
      return h('li', { class: 'row alert' },
        h('p', {}, h('span', { class: 'badge warn', text: `${(Number(a.rate) * 100).toFixed(1)}% fallback` }),
          ` ${a.fallback_count} of ${a.answerable_count} answerable (threshold ${(Number(a.threshold) * 100).toFixed(0)}%)`),
        h('p', { class: 'meta', text: `window ${fmtTime(a.window_start)} – ${fmtTime(a.window_end)}` }),
        h('p', { text: a.message }));
    }

    function deadItem(ev) {
      const d = ev.data;
      return h('li', { class: 'row dead' },
        h('p', {}, h('span', { class: 'badge bad', text: d.reason_code }), ' ',
          h('span', { class: 'meta', text: `${d.stage} ← ${d.source_topic} · ${fmtTime(d.failed_at)}` })),
        h('p', {}, 'request ', requestLink(ev.request_id)),
        h('p', { class: 'reason', text: d.reason }),
        h('p', { class: 'label', text: `original record (${d.original_bytes} bytes, shown as text):` }),
        h('pre', { class: 'original', text: d.original_preview }));
    }

    function reset(snapshot) {
      for (const id of ['live-answers', 'alerts', 'deadletters']) clear(document.getElementById(id));
      for (const ev of snapshot.recent.answer || []) push('live-answers', answerItem(ev));
      for (const ev of snapshot.recent.alert || []) push('alerts', alertItem(ev));
      for (const ev of snapshot.recent.deadletter || []) push('deadletters', deadItem(ev));
      Object.assign(counts, snapshot.counts || {});
      $('#group').textContent = snapshot.group || '';
      drawFlow();
      toggleEmpty();
    }

    drawFlow();
    toggleEmpty();
    $('#lookup').addEventListener('submit', (e) => {
      e.preventDefault();
      const id = $('#lookup-id').value.trim();
      if (REQUEST_ID.test(id)) window.location.assign('/request?id=' + encodeURIComponent(id));
    });
    connect({
      snapshot: reset,
      any: (ev) => { counts[ev.topic] = (counts[ev.topic] || 0) + 1; drawFlow(); },
      answer: (ev) => { push('live-answers', answerItem(ev)); toggleEmpty(); },
      alert: (ev) => { push('alerts', alertItem(ev)); toggleEmpty(); },
      deadletter: (ev) => { push('deadletters', deadItem(ev)); toggleEmpty(); },
    });
  }

  // --- Documents --------------------------------------------------------------------------------

  function documentsPage() {
    const tbody = $('#docs tbody');
    const uploads = $('#uploads');
    const waiting = new Map(); // request_id -> render function

    let issuerNames = [];
    const OWNER = 'citestream-owner:'; // localStorage: the secret each upload of this browser was answered with

    function issuerCell(d) {
      const said = d.issuer || 'not known';
      const cell = h('td', { 'data-label': 'Issuer' }, h('span', { class: 'issuer', text: said }),
        d.issuer_source ? h('span', { class: 'meta how' }, ' ', issuerHow(d.issuer_source)) : '');
      const token = d.origin === 'upload' ? localStorage.getItem(OWNER + d.doc_id) : null;
      if (!token || !issuerNames.length) return cell;
      const select = h('select', { 'aria-label': `issuer of ${d.title || d.pdf}` },
        issuerNames.map((n) => h('option', { value: n, text: n, selected: n === d.issuer })));
      const status = h('span', { class: 'meta', role: 'status' });
      const form = h('form', { class: 'issuer-fix' }, select, h('button', { type: 'submit', text: 'correct' }), status);
      form.addEventListener('submit', async (e) => {
        e.preventDefault();
        status.textContent = ' sending…';
        const r = await fetch('/api/documents/issuer', { method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ doc_id: d.doc_id, issuer: select.value, owner_token: token }) });
        let body = {};
        try { body = await r.json(); } catch (err) { body = {}; }
        if (r.status !== 202) { status.textContent = ' ' + (body.error || `refused (HTTP ${r.status})`); return; }
        status.textContent = ' sent; the document is being relabelled…';
        waiting.set(body.request_id, () => { waiting.delete(body.request_id); loadDocuments(); });
      });
      cell.append(form);
      return cell;
    }

    function documentCell(d) {
      const stem = String(d.pdf).replace(/\.pdf$/i, '');
      const titled = d.title && d.title !== stem && d.title !== d.pdf;
      return h('td', { class: 'doc', 'data-label': 'Document' },
        h('span', { class: 'title', text: titled ? d.title : d.pdf }),
        h('span', { class: 'meta file' }, titled ? h('span', { class: 'file-name', text: d.pdf }) : null,
          `${titled ? ' · ' : ''}${d.pages} page${d.pages === 1 ? '' : 's'}`),
        h('details', { class: 'ops' }, h('summary', { text: 'details' }),
          h('p', { class: 'meta' }, 'document id ', h('code', { text: d.doc_id }), ` · ${d.chunks} chunks · index `,
            h('code', { text: d.index_version }), ' · origin ', h('code', { text: d.origin || 'unrecorded' }))));
    }

    async function loadDocuments() {
      const [r, names] = await Promise.all([getJSON('/api/documents'), getJSON('/api/issuers')]);
      issuerNames = (names.body && names.body.issuers) || [];
      clear(tbody);
      const docs = (r.body && r.body.documents) || [];
      for (const d of docs) {
        tbody.append(h('tr', { 'data-doc': d.doc_id }, documentCell(d), issuerCell(d),
          h('td', { 'data-label': 'Scope' }, h('span', { class: 'badge scope', text: d.authority })),
          h('td', { class: 'from', 'data-label': 'Added', text: `${originWords(d.origin)}, ${new Date(d.ingested_at).toLocaleDateString()}` })));
      }
      const pages = docs.reduce((s, d) => s + d.pages, 0);
      $('#docs-summary').textContent = `${docs.length} documents, ${pages} pages.`;
    }

    // What the ingest agent answered, in a user's words; its record's codes and ids under "details".
    function envelope(env) {
      const o = env.outputs || {};
      const ok = env.status === 'ok';
      const box = h('div', { class: 'envelope' },
        h('p', {}, h('span', { class: 'badge ' + (ok ? 'ok' : 'bad'), text: ok ? 'added' : 'not added' }),
          ok ? ` ${o.ingestedCount} document${o.ingestedCount === 1 ? '' : 's'} ready to be asked about` : ''));
      if (Array.isArray(o.documents) && o.documents.length) {
        box.append(h('ul', { class: 'added' }, o.documents.map((d) => h('li', {},
          `${d.pages} page${d.pages === 1 ? '' : 's'} · issuer ${d.issuer || 'not known'}`,
          issuerHow(d.authoritySource) ? ` (${issuerHow(d.authoritySource)}${d.issuerEvidence ? ': “' + d.issuerEvidence + '”' : ''})` : '',
          ` · scope ${d.authority}`, d.changed ? '' : ' · unchanged since it was last added'))));
      }
      for (const e of o.errors || []) box.append(h('p', { class: 'error', text: `Not added: ${e.reason}` }));
      for (const w of o.warnings || []) box.append(h('p', { class: 'notice', text: `Note: ${w.reason}` }));
      if (env.error) box.append(h('p', { class: 'error', text: env.error.message }));
      box.append(h('details', { class: 'ops' }, h('summary', { text: 'details' }),
        h('p', { class: 'meta' }, 'request ', requestLink(env.request_id || ''), env.index_version ? ` · index ${env.index_version}` : '',
          env.error ? ` · ${env.error.code}` : ''),
        h('ul', { class: 'meta' }, (o.documents || []).map((d) => h('li', {}, 'document id ', h('code', { text: d.docId }),
          ` · origin ${d.origin} · ${d.chunkCount} passage${d.chunkCount === 1 ? '' : 's'}`)))));
      return box;
    }

    function track(file) {
      const li = h('li', { class: 'row upload' });
      const title = h('p', {}, h('strong', { text: file.name }), ` · ${(file.size / 1024).toFixed(0)} kB`);
      const progress = h('progress', { max: '100', value: '0', 'aria-label': 'upload progress' });
      const status = h('p', { class: 'meta', role: 'status', text: 'uploading…' });
      li.append(title, progress, status);
      uploads.prepend(li);
      return { li, progress, status };
    }

    function upload(file) {
      const view = track(file);
      const xhr = new XMLHttpRequest();
      xhr.open('POST', '/api/documents');
      xhr.setRequestHeader('x-filename', encodeURIComponent(file.name));
      xhr.setRequestHeader('content-type', 'application/pdf');
      xhr.upload.addEventListener('progress', (e) => {
        if (e.lengthComputable) view.progress.value = String(Math.round((100 * e.loaded) / e.total));
      });
      xhr.addEventListener('load', () => {
        let body = {};
        try { body = JSON.parse(xhr.responseText); } catch (e) { body = {}; }
        if (xhr.status !== 202) {
          view.progress.remove();
          view.status.className = 'error';
          view.status.textContent = body.error || `upload refused (HTTP ${xhr.status})`;
          return;
        }
        view.progress.value = '100';
        if (body.doc_id && body.owner_token) localStorage.setItem(OWNER + body.doc_id, body.owner_token);
        const started = Date.now();
        const rid = body.request_id;
        view.li.dataset.rid = rid;
        const tick = () => {
          const secs = Math.round((Date.now() - started) / 1000);
          view.status.textContent = `received; reading the document… ${secs} s`;
        };
        tick();
        let ticks = 0;
        const timer = setInterval(async () => {
          tick();
          if (++ticks % 3 === 0) { // in case the event went by while the stream was reconnecting
            const r = await getJSON('/api/ingests/' + encodeURIComponent(rid));
            if (r.ok && r.body) done(r.body);
          }
        }, 1000);
        const done = (ev) => {
          if (!waiting.has(rid)) return;
          waiting.delete(rid);
          clearInterval(timer);
          view.progress.remove();
          view.status.textContent = `done after ${Math.round((Date.now() - started) / 1000)} s`;
          view.li.append(envelope({ ...ev.data, request_id: ev.request_id || rid }));
          loadDocuments();
        };
        waiting.set(rid, done);
      });
      xhr.addEventListener('error', () => {
        view.status.className = 'error';
        view.status.textContent = 'upload failed: the server did not answer';
      });
      xhr.send(file);
    }

    $('#upload-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const input = $('#upload-file');
      for (const file of input.files) upload(file);
      input.value = '';
    });
    loadDocuments();
    connect({
      ingested: (ev) => { const fn = waiting.get(ev.request_id); if (fn) fn(ev); },
    });
  }

  // --- Citation ---------------------------------------------------------------------------------

  async function citePage() {
    const params = new URLSearchParams(window.location.search);
    const chunk = params.get('chunk') || '';
    const error = $('#cite-error');
    $('#back').addEventListener('click', (e) => {
      if (document.referrer.startsWith(window.location.origin) && window.history.length > 1) {
        e.preventDefault();
        window.history.back();
      }
    });
    if (!chunk) { showError(error, 'No citation given.'); return; }
    const r = await getJSON('/api/chunks/' + encodeURIComponent(chunk) + '?quote=' + encodeURIComponent(params.get('quote') || ''));
    if (!r.ok) { showError(error, (r.body && r.body.error) || `Citation not found (HTTP ${r.status}).`); return; }
    const c = r.body;
    const d = c.document;
    const title = d.title || d.pdf;
    const quote = c.quote || c.text;
    document.title = `${title} p${c.page} · citestream`;
    $('#cite-title').textContent = title;
    $('#cite-meta').append(d.issuer ? `Issued by ${d.issuer} · ` : '', h('span', { class: 'badge scope', text: d.authority === 'MIXED' ? 'all documents' : `scope ${d.authority}` }),
      ` · page ${c.page} of ${d.pages} · `, h('span', { class: 'file-name', text: d.pdf }),
      detailsBox([['document id', h('code', { text: d.doc_id })], ['passage id', h('code', { text: c.chunk_id })],
        ['index', d.index_version], ['origin', d.origin]]));
    $('#quote-text').textContent = quote;
    // the passage, with the quoted sentence marked in it (when it is there word for word)
    const passage = $('#chunk-text');
    // word for word, whatever whitespace ingest kept between them (a heading and its first line)
    const words = c.quote ? c.quote.split(/\s+/).filter(Boolean).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : [];
    const found = words.length ? new RegExp(words.join('\\s+')).exec(c.text) : null;
    if (found) {
      passage.append(c.text.slice(0, found.index), h('mark', { text: found[0] }), c.text.slice(found.index + found[0].length));
    } else {
      passage.textContent = c.text;
    }
    $('#chunk-section').textContent = c.section ? `Section: ${c.section}` : '';
    const citation = `${title}, ${d.issuer || 'issuer not known'}, page ${c.page}: “${quote}”`;
    $('#copy-cite').addEventListener('click', async () => {
      const status = $('#copy-status');
      try {
        await navigator.clipboard.writeText(citation);
        status.textContent = 'Copied.';
      } catch (err) {
        status.textContent = 'The browser did not allow copying; select the text above instead.';
      }
    });
    if (c.pdf) {
      const open = $('#open-pdf');
      open.setAttribute('href', safeHref(c.pdf));
      open.hidden = false;
    }
    if (c.unavailable) {
      const note = $('#page-unavailable');
      note.textContent = `The page image cannot be shown: ${c.unavailable}. The cited text is above.`;
      note.hidden = false;
      return;
    }
    const figure = $('#page-figure');
    const img = $('#page-image');
    const frame = $('#page-frame');
    img.alt = `Page ${c.page} of ${title}, with the quoted sentence highlighted`;
    img.src = c.image;
    for (const b of c.boxes || []) {
      const mark = h('span', { class: 'hl', 'aria-hidden': 'true' });
      mark.style.left = 100 * b.left + '%';
      mark.style.top = 100 * b.top + '%';
      mark.style.width = 100 * b.width + '%';
      mark.style.height = 100 * b.height + '%';
      frame.append(mark);
    }
    // zoom: the page grows inside its own scrolling box, never the page around it
    let zoom = 1;
    const setZoom = (z) => {
      zoom = Math.min(4, Math.max(1, z));
      frame.style.width = 100 * zoom + '%';
      $('#zoom-level').textContent = `${Math.round(100 * zoom)}%`;
      const first = frame.querySelector('.hl');
      if (first && zoom > 1) {
        const scroll = $('#page-scroll');
        scroll.scrollLeft = Math.max(0, first.offsetLeft - 20);
        scroll.scrollTop = Math.max(0, first.offsetTop - 40);
      }
    };
    $('#zoom-in').addEventListener('click', () => setZoom(zoom * 1.5));
    $('#zoom-out').addEventListener('click', () => setZoom(zoom / 1.5));
    $('#zoom-fit').addEventListener('click', () => setZoom(1));
    $('#page-caption').textContent = (c.boxes || []).length
      ? `Page ${c.page} of ${d.pdf}. The quoted sentence is highlighted.`
      : `Page ${c.page} of ${d.pdf}. The quoted sentence could not be located on the image; its text is above.`;
    figure.hidden = false;
  }

  // --- Request timeline -------------------------------------------------------------------------

  async function requestPage() {
    const rid = new URLSearchParams(window.location.search).get('id') || '';
    const error = $('#req-error');
    $('#rid').textContent = rid;
    if (!REQUEST_ID.test(rid)) { showError(error, 'Not a request_id.'); return; }
    document.title = `${rid} · citestream`;
    const r = await getJSON('/api/requests/' + encodeURIComponent(rid));
    if (!r.ok) { showError(error, (r.body && r.body.error) || `HTTP ${r.status}`); return; }
    const t = r.body;

    const state = $('#state');
    if (t.state) {
      const rows = [['state', t.state.state], ['outcome', t.state.outcome || '—'], ['question', t.state.question || '—'],
        ['scope', t.state.scope || '—'], ['re-drives', t.state.redrives], ['detail', t.state.detail || '—']];
      for (const [k, v] of rows) state.append(h('dt', { text: k }), h('dd', { text: v }));
      const history = Object.entries(t.state.history || {}).sort((a, b) => String(a[1]).localeCompare(String(b[1])));
      state.append(h('dt', { text: 'history' }), h('dd', {}, h('ol', { class: 'history' },
        history.map(([k, v]) => h('li', {}, h('strong', { text: k }), ` ${fmtTime(v)}`)))));
    } else {
      state.append(h('dt', { text: 'state' }), h('dd', { text: 'no row in requests (not seen by a worker)' }));
    }

    $('#records-hint').textContent = t.records.length
      ? `${t.records.length} records keyed ${rid}, read back from the topics (latest ${t.window} records per partition).`
      : `No record keyed ${rid} among the latest ${t.window} records of each partition.`;
    const records = $('#records');
    for (const rec of t.records) {
      const li = h('li', { class: 'step' });
      const last = rec.trace.length ? rec.trace[rec.trace.length - 1] : null;
      li.append(h('p', {}, h('span', { class: 'badge topic', text: rec.topic }), ' ',
        rec.foreign !== null && rec.foreign !== undefined ? h('span', { class: 'badge bad', text: 'FOR ANOTHER REQUEST' }) : null,
        rec.authentic === true ? h('span', { class: 'badge ok', text: 'sealed by a worker' }) : null,
        rec.authentic === false && !rec.foreign ? h('span', { class: 'badge bad', text: 'NOT WRITTEN BY A WORKER' }) : null, ' ',
        h('time', { text: fmtTime(rec.timestamp_ms) }),
        h('span', { class: 'meta', text: ` · partition ${rec.partition}, offset ${rec.offset}` }),
        last ? h('span', { class: 'meta', text: ` · ${last.stage} took ${fmtMs(last.elapsed_ms)}` }) : null));
      if (rec.not_authentic) li.append(h('p', { class: 'reason', text: rec.not_authentic }));
      if (!rec.readable) {
        if (rec.unreadable) li.append(h('p', { class: 'reason', text: 'Unreadable: ' + rec.unreadable }));
        li.append(h('pre', { class: 'original', text: rec.preview }));
      } else {
        const dl = h('dl', { class: 'facts' });
        for (const [k, v] of Object.entries(rec.summary)) {
          dl.append(h('dt', { text: k }), h('dd', { text: v === null ? '—' : String(v) }));
        }
        li.append(...[dl, traceBars(rec.trace),
          h('details', {}, h('summary', { text: 'record JSON' }), h('pre', { class: 'json', text: rec.json }))]
          .filter(Boolean));
      }
      records.append(li);
    }

    const chain = t.ledger.chain;
    const chainEl = $('#chain');
    chainEl.append(h('span', { class: 'badge ' + (chain.ok ? 'ok' : 'bad'), text: chain.ok ? 'ledger verify: ok' : 'ledger verify: BROKEN' }),
      chain.ok ? ` ${chain.rows} rows, chain intact` : ` at row id ${chain.first_broken_id}: ${chain.reason}`);
    const ledger = $('#ledger');
    if (!t.ledger.rows.length) ledger.append(h('li', { class: 'row', text: 'No ledger row: this request never reached a model.' }));
    for (const row of t.ledger.rows) {
      const replay = row.replay;
      ledger.append(h('li', { class: 'row' },
        h('p', {}, h('strong', { text: `row ${row.id}` }), ` · ${row.stage} · ${row.model} · ${fmtTime(row.created_at)}`),
        h('p', { class: 'meta' }, 'prompt_sha256 ', h('code', { text: row.prompt_sha256 })),
        h('p', { class: 'meta' }, 'row_hash ', h('code', { text: row.row_hash }), ' prev_hash ', h('code', { text: row.prev_hash })),
        replay ? h('p', {}, h('span', { class: 'badge ' + (replay.ok ? 'ok' : 'bad'), text: replay.ok ? 'replay MATCH' : 'replay MISMATCH' }),
          replay.reason ? ` ${replay.reason}` : ' the prompt rebuilt from the stored bundle has the same SHA-256') : null));
    }
  }

  // --- start ------------------------------------------------------------------------------------

  const pages = { ask: askPage, live: livePage, documents: documentsPage, cite: citePage, request: requestPage };
  document.addEventListener('DOMContentLoaded', () => {
    const name = document.body.dataset.page;
    const nav = document.querySelector(`[data-nav="${name}"]`);
    if (nav) nav.setAttribute('aria-current', 'page');
    if (name === 'cite' || name === 'request') $('#conn').hidden = true;
    if (pages[name]) pages[name]();
  });
})();

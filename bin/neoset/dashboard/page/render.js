// Draws the state the server sends (bin/neoset/dashboard/view.ts) into the page. Plain DOM: each
// function replaces the contents of one region. Colours always come with a text label.

/** h('li', {class: 'pod'}, 'text', child): an element with attributes and children. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  el.append(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
  return el;
}

const PALETTE_SIZE = 8;
const revClass = (colour) => (colour === undefined || colour === null ? 'rev-unknown' : `rev-${colour % PALETTE_SIZE}`);
const time = (iso) => (iso ? new Date(iso).toLocaleTimeString() : '');

function fill(tbody, rows) {
  tbody.replaceChildren(...rows);
}

export function renderList(state, selected, onSelect) {
  // The canary column appears once a NeoSet reports a canary step (SPEC §4.11).
  const canary = state.neosets.some((n) => n.canaryStep !== undefined);
  const rows = state.neosets.map((n) => {
    const key = `${n.namespace}/${n.name}`;
    const label = state.namespace === null ? key : n.name;
    return h(
      'tr',
      { 'aria-current': key === selected ? 'true' : undefined, 'data-neoset': key },
      h('th', { scope: 'row' }, h('button', { type: 'button', class: 'link', 'data-focus-key': `select:${key}`, onclick: () => onSelect(key) }, label)),
      h('td', {}, phaseBadge(n.phase)),
      h('td', {}, `${n.replicas} / ${n.ready} / ${n.updated}`),
      h('td', {}, images(n)),
      canary && h('td', {}, n.canaryStep ?? '—'),
    );
  });
  fill(document.querySelector('#neosets tbody'), rows);
  document.getElementById('canary-column').hidden = !canary;
  document.getElementById('empty').hidden = rows.length > 0;
}

const phaseBadge = (phase) => h('span', { class: `phase phase-${phase || 'none'}` }, phase || '—');
const images = (n) => (n.currentImage === n.targetImage ? n.currentImage || '—' : `${n.currentImage || '—'} → ${n.targetImage || '—'}`);

export function renderDetail(d) {
  document.getElementById('detail-title').replaceChildren(`${d.namespace}/${d.name} `, phaseBadge(d.phase));
  const facts = [
    ['Replicas / Ready / Updated', `${d.replicas} / ${d.ready} / ${d.updated}`],
    ['Image', images(d)],
    ['Strategy', d.strategy],
    ['Partition', String(d.partition)],
    ['maxUnavailable', d.maxUnavailable],
    ['Paused', d.paused ? 'yes' : 'no'],
    d.canaryStep && ['Canary', d.canaryStep],
  ].filter(Boolean);
  document.getElementById('facts').replaceChildren(...facts.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', { 'data-fact': k }, v))));
  renderLegend(d);
  renderPods(d);
  fill(
    document.querySelector('#conditions tbody'),
    d.conditions.map((c) => h('tr', { 'data-condition': c.type }, h('td', {}, c.type), h('td', {}, c.status), h('td', {}, c.reason ?? ''), h('td', {}, c.message ?? ''), h('td', {}, time(c.lastTransitionTime)))),
  );
  fill(
    document.querySelector('#history tbody'),
    d.revisions.map((r) =>
      h(
        'tr',
        { 'data-revision': r.revision },
        h('td', {}, swatch(r.colour), ` ${r.revision}`),
        h('td', {}, r.name),
        h('td', {}, roles(r)),
        h('td', {}, r.images),
        h('td', {}, r.changeCause ?? '<none>'),
      ),
    ),
  );
  fill(
    document.querySelector('#events tbody'),
    // A rollout notification (§4.12, mirrored as an Event) is marked as one: its kind, "notified".
    d.events.map((e) => h('tr', { class: [e.type === 'Warning' ? 'warning' : '', e.notification ? 'notification' : ''].join(' ').trim() || undefined }, h('td', {}, time(e.time)), h('td', {}, e.type), h('td', {}, e.notification ? `notified: ${e.notification}` : e.reason), h('td', {}, e.object), h('td', {}, e.count > 1 ? `${e.message} (×${e.count})` : e.message))),
  );
}

const swatch = (colour) => h('span', { class: `swatch ${revClass(colour)}`, 'aria-hidden': 'true' });
const roles = (r) => [r.current && 'current', r.update && 'update'].filter(Boolean).join(', ');

function renderLegend(d) {
  const items = [...d.revisions]
    .filter((r) => d.pods.some((p) => p.revision === r.name) || r.current || r.update)
    .map((r) => h('li', {}, swatch(r.colour), ` rev ${r.revision}: ${r.images}`, roles(r) && h('span', { class: 'role' }, ` (${roles(r)})`)));
  document.getElementById('legend').replaceChildren(...items);
}

function renderPods(d) {
  const cards = [];
  const line = () =>
    h('li', { class: 'partition', 'data-partition': d.partition, 'aria-label': `partition ${d.partition}: ordinals ${d.partitionOrdinal ?? d.partition} and above are updated` }, h('span', {}, `partition ${d.partition}`));
  // §4.12: the line goes before the pod at position partition (start and reserved ordinals counted).
  for (const p of d.pods) {
    if (p.ordinal === d.partitionOrdinal) cards.push(line());
    cards.push(podCard(p));
  }
  if (!d.pods.some((p) => p.ordinal === d.partitionOrdinal)) cards.push(line());
  document.getElementById('pods').replaceChildren(...cards);
}

function podCard(p) {
  const states = [
    h('li', { class: p.ready ? 'ready' : 'not-ready' }, p.ready ? '✓ Ready' : `✗ Not ready (${p.podPhase})`),
    p.inPlace && h('li', { class: 'in-place' }, `in place: ${p.inPlace}`),
    p.updating && !p.inPlace && h('li', { class: 'in-place' }, 'updating'),
    p.hook && h('li', {}, `hook: ${p.hook}`),
    p.waiting && h('li', { class: 'not-ready' }, p.waiting),
    p.deleting && h('li', {}, 'deleting'),
    h('li', {}, `restarts ${p.restarts}`),
  ];
  return h(
    'li',
    { class: `pod ${revClass(p.colour)}`, 'data-pod': p.name, 'data-revision': p.revision ?? '', 'data-ready': p.ready, 'data-in-place': p.inPlace ?? '' },
    h('div', { class: 'pod-name' }, p.name),
    h('div', { class: 'pod-rev' }, swatch(p.colour), p.revisionNumber === undefined ? ' rev ?' : ` rev ${p.revisionNumber}`),
    h('div', { class: 'pod-image' }, p.image),
    h('ul', { class: 'pod-state' }, ...states),
  );
}

/** The buttons, drawn once per selection (a redraw on every change would take the keyboard focus away). */
export function renderActions(state, onAction) {
  const bar = document.getElementById('actions');
  bar.replaceChildren(...state.actions.map((a) => h('button', { type: 'button', 'data-action': a.id, 'data-focus-key': `action:${a.id}`, onclick: () => onAction(a) }, a.label)));
  bar.hidden = state.actions.length === 0;
}

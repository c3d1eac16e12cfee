// The page's state: which NeoSet is selected (kept in the URL's #NAMESPACE/NAME), and the live
// feed for it from the server (Server-Sent Events; the browser reconnects by itself).
import { renderActions, renderDetail, renderList } from './render.js';
import { runAction } from './dialog.js';

// The printed URL's token is a cookie now (HttpOnly): out of the address bar and history with it.
const here = new URL(location.href);
if (here.searchParams.has('token')) {
  here.searchParams.delete('token');
  history.replaceState(null, '', here);
}

let selected = decodeURIComponent(location.hash.slice(1)) || null;
let state = null;
let source = null;
let actionsFor = null;

function connect() {
  source?.close();
  source = new EventSource(`/api/stream${selected ? `?neoset=${encodeURIComponent(selected)}` : ''}`);
  source.addEventListener('state', (e) => {
    state = JSON.parse(e.data);
    draw();
  });
  source.onopen = () => connection('live', true);
  // The browser retries a dropped stream by itself; a refused one (401: the dashboard was started
  // again, with a new token) it gives up on.
  source.onerror = () => connection(source.readyState === EventSource.CLOSED ? 'refused: open the URL the dashboard printed' : 'reconnecting…', false);
}

function connection(text, live) {
  const el = document.getElementById('connection');
  el.textContent = text;
  el.className = live ? 'live' : 'down';
}

function select(key) {
  if (key === selected) return;
  selected = key;
  history.replaceState(null, '', `#${key}`);
  connect();
}

/** Redraws, then gives the keyboard focus back to the element that had it (by its data-focus-key). */
function keepingFocus(redraw) {
  const key = document.activeElement?.dataset?.focusKey;
  redraw();
  if (key) document.querySelector(`[data-focus-key="${CSS.escape(key)}"]`)?.focus();
}

function draw() {
  if (!selected && state.neosets.length > 0) return select(`${state.neosets[0].namespace}/${state.neosets[0].name}`);
  document.getElementById('scope').textContent = state.namespace === null ? 'all namespaces' : `namespace ${state.namespace}`;
  document.getElementById('read-only').hidden = !state.readOnly;
  const problems = document.getElementById('problems');
  problems.hidden = state.problems.length === 0;
  problems.textContent = state.problems.join('\n');
  keepingFocus(() => {
    renderList(state, selected, select);
    const detail = document.getElementById('detail');
    detail.hidden = !state.selected;
    if (!state.selected) return;
    renderDetail(state.selected);
    if (actionsFor !== selected) {
      renderActions(state, (action) => runAction(action, state.selected));
      document.getElementById('message').textContent = '';
      actionsFor = selected;
    }
  });
}

connect();

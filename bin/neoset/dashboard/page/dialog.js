// The confirmation every write button asks for, then the POST and its message — the words the CLI
// prints, or its error.
const $ = (id) => document.getElementById(id);

/** Resolves with the request body to send, or null when the user cancels. */
function confirmAction(action, neoset) {
  const dialog = $('confirm');
  $('confirm-title').textContent = `${action.label.replace('…', '')} ${neoset.namespace}/${neoset.name}?`;
  $('confirm-text').textContent = action.confirm;
  $('confirm-command').textContent = `kubectl neoset ${action.command} ${neoset.name} -n ${neoset.namespace}`;
  $('confirm-ok').textContent = action.label.replace('…', '');
  $('confirm-revision').hidden = !action.takesRevision;
  if (action.takesRevision) {
    const select = $('revision');
    select.replaceChildren(
      ...neoset.revisions.map((r) => {
        const label = `${r.revision}: ${r.images}${r.changeCause ? ` — ${r.changeCause}` : ''}${r.update ? ' (spec.template now)' : ''}`;
        return new Option(label, String(r.revision), r.undoDefault, r.undoDefault);
      }),
    );
  }
  return new Promise((resolve) => {
    const done = (ok) => {
      $('confirm-ok').onclick = $('confirm-cancel').onclick = dialog.onclose = null;
      if (dialog.open) dialog.close();
      resolve(ok ? (action.takesRevision ? { revision: Number($('revision').value) } : {}) : null);
    };
    $('confirm-ok').onclick = () => done(true);
    $('confirm-cancel').onclick = () => done(false);
    dialog.onclose = () => done(false); // Escape
    dialog.showModal();
  });
}

function say(text, ok) {
  const out = $('message');
  out.textContent = text;
  out.className = ok ? 'ok' : 'error';
}

export async function runAction(action, neoset) {
  const body = await confirmAction(action, neoset);
  if (body === null) return;
  say(`${action.label.replace('…', '')}…`, true);
  try {
    const path = `/api/neosets/${encodeURIComponent(neoset.namespace)}/${encodeURIComponent(neoset.name)}/${action.id}`;
    const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = await res.json().catch(() => ({ error: `${res.status} ${res.statusText}` }));
    say(answer.message ?? `error: ${answer.error}`, res.ok);
  } catch (err) {
    say(`error: the dashboard did not answer (${err.message})`, false);
  }
}

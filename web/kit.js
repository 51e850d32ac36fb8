// Small DOM helpers shared by the page's panels (registry.js, vault.js, connect.js) and its rail.
// Everything is put in the page as text, never as HTML.

export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

export function button(text, className = 'ghost', attrs = {}) {
  const b = el('button', className, text);
  b.type = 'button';
  for (const [k, v] of Object.entries(attrs)) b.dataset[k] = v;
  return b;
}

const railLooks = new WeakMap();

/// Fills a rail list (services, workspaces, apps, daemon panels) with one button an item:
/// { key, data (the button's data-* attributes), name, meta, badge, absent, current, onClick }.
/// The rail is rendered again whenever one of the page's lists loads or the selection moves. A
/// button whose item looks the same is kept, with only its aria-current updated: a button rebuilt
/// between a press and its release would lose that click.
export function railList(ul, items) {
  const kept = new Map();
  for (const li of ul.children) kept.set(li.dataset.key, li);
  const lis = items.map((item) => {
    const look = JSON.stringify([item.data, item.name, item.meta, item.badge || null, Boolean(item.absent)]);
    let li = kept.get(item.key);
    if (!li || railLooks.get(li) !== look) {
      li = el('li');
      li.dataset.key = item.key;
      railLooks.set(li, look);
      const b = el('button', 'service-item');
      b.type = 'button';
      Object.assign(b.dataset, item.data);
      if (item.absent) b.dataset.absent = 'true';
      b.append(el('span', 'service-name', item.name), el('span', 'service-meta', item.meta));
      if (item.badge) b.append(el('span', 'badge view-badge', item.badge));
      b.addEventListener('click', item.onClick);
      li.append(b);
    }
    if (item.current) li.firstChild.setAttribute('aria-current', 'true');
    else li.firstChild.removeAttribute('aria-current');
    return li;
  });
  placeChildren(ul, lis);
}

/// Makes `nodes` the children of `parent`, in order, moving as little as it can: the children
/// that are not wanted go first, so that a kept node is never taken out to be put back (a press
/// on a node that leaves the document, even for a moment, never becomes a click).
export function placeChildren(parent, nodes) {
  const wanted = new Set(nodes);
  for (const child of [...parent.children]) if (!wanted.has(child)) child.remove();
  nodes.forEach((node, i) => {
    if (parent.children[i] !== node) parent.insertBefore(node, parent.children[i] || null);
  });
}

/// The head of a panel, styled like a service's: a title, badges and a line of description.
export function panelHead(title, description, badges = []) {
  const head = el('header', 'service-head');
  const row = el('div', 'service-title-row');
  row.append(el('h1', null, title));
  for (const b of badges) row.append(el('span', 'badge', b));
  head.append(row);
  if (description) head.append(el('p', 'muted', description));
  return head;
}

/// A card saying a subsystem is not part of this daemon, and how to start it with it.
export function absentCard(title, text, command) {
  const card = el('section', 'notice-card absent');
  card.append(el('h1', null, title), el('p', null, text));
  if (command) card.append(el('pre', 'example-url', command));
  return card;
}

/// A JSON-RPC error of a daemon that does not have the method (the subsystem is not started).
export function isMissingMethod(err) {
  return err && (err.code === -32601 || /no vault|no registry/.test(err.message || ''));
}

/// Copies `text` to the clipboard; `b` says it did. The page's Permissions-Policy may refuse the
/// asynchronous clipboard API: then a selected, off-screen textarea is copied instead.
export async function copyText(b, text) {
  const label = b.textContent;
  let done = false;
  const policy = document.permissionsPolicy || document.featurePolicy;
  try {
    if (!navigator.clipboard || (policy && !policy.allowsFeature('clipboard-write'))) throw new Error('no clipboard API');
    await navigator.clipboard.writeText(text);
    done = true;
  } catch (e) {
    const area = el('textarea', 'offscreen');
    area.value = text;
    area.readOnly = true;
    document.body.append(area);
    area.select();
    done = document.execCommand('copy');
    area.remove();
  }
  b.textContent = done ? 'Copied' : 'Copy failed: select the text';
  b.dataset.copied = String(done);
  setTimeout(() => {
    b.textContent = label;
  }, 1500);
}

/// An inline confirmation in `host`: `question`, a danger button and Cancel.
/// onYes() -> Promise; its error is shown in the box.
export function confirmBox(host, { question, yes, name, onYes, onCancel, details }) {
  host.textContent = '';
  const box = el('div', 'confirm');
  box.dataset.confirm = name;
  box.append(el('p', 'confirm-question', question));
  if (details) box.append(details);
  const actions = el('div', 'form-actions');
  const ok = button(yes, 'primary danger small', { action: `confirm-${name}` });
  const cancel = button('Cancel', 'ghost small', { action: 'cancel' });
  const out = el('p', 'confirm-result');
  actions.append(ok, cancel);
  box.append(actions, out);
  cancel.addEventListener('click', () => onCancel());
  ok.addEventListener('click', async () => {
    ok.disabled = true;
    try {
      await onYes();
    } catch (e) {
      ok.disabled = false;
      out.className = 'confirm-result banner error';
      out.textContent = e.message;
    }
  });
  host.append(box);
  ok.focus();
  return box;
}

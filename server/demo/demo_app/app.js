/* Demo Wallet: a tiny static wallet-like app for browser-automation tests.
 * Vanilla JS, no build step, CSP-safe (no inline code, no eval, no style attributes).
 * Variant "renamed" (?variant=renamed) renames the testIds below, old -> new,
 * while roles and accessible names stay identical. Same map in renames.json. */
const RENAMES = {
  'coin-overview-send': 'wallet-send-button',
  'coin-overview-swap': 'wallet-swap-button',
  'recipient-address-input': 'send-to-address-field',
  'send-amount-input': 'send-value-field',
  'send-continue-button': 'send-next-button',
  'confirm-footer-button': 'confirm-tx-submit',
};

const PASSWORD = 'correct horse battery staple';
const OWN_ADDRESS = '0x5aE1a1b2C3d4E5f60718293a4B5c6D7e8F901234';
const USD_PRICE = { ETH: 2000, DAI: 1, USDC: 1 };
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const NUMBER_RE = /^\d*\.?\d+$/;

const params = new URLSearchParams(location.search);
const VARIANT = params.get('variant') === 'renamed' ? 'renamed' : 'default';

// All state lives in memory: a reload starts locked with fresh balances.
const state = {
  unlocked: false,
  balances: { ETH: 10, DAI: 250, USDC: 100 },
  activity: [],   // {kind, text, amount, to}
  pending: null,  // transaction awaiting confirmation
  showFiat: false,
};

const $ = (sel) => document.querySelector(sel);
/** The testId an element carries in the current variant. */
const tid = (id) => (VARIANT === 'renamed' && RENAMES[id]) || id;
const byTid = (id) => document.querySelector(`[data-testid="${tid(id)}"]`);
const fmt = (n) => String(Number(n.toFixed(6)));
const short = (addr) => `${addr.slice(0, 6)}…${addr.slice(-4)}`;
const parseAmount = (s) => (NUMBER_RE.test(s.trim()) ? parseFloat(s) : NaN);
const show = (el, visible) => { el.hidden = !visible; };

function applyVariant() {
  document.documentElement.dataset.variant = VARIANT;
  if (VARIANT !== 'renamed') return;
  for (const el of document.querySelectorAll('[data-testid]')) {
    el.dataset.testid = tid(el.dataset.testid);
  }
}

// ---------------------------------------------------------------- routing
const ROUTES = ['/unlock', '/', '/activity', '/send', '/swap', '/confirm-transaction', '/settings'];

function go(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

function currentRoute() {
  const route = location.hash.replace(/^#/, '') || '/';
  return ROUTES.includes(route) ? route : '/';
}

function render() {
  const route = currentRoute();
  if (!state.unlocked && route !== '/unlock') return go('#/unlock');
  if (state.unlocked && route === '/unlock') return go('#/');
  if (route === '/confirm-transaction' && !state.pending) return go('#/');
  const screen = route === '/activity' ? '/' : route;
  for (const section of document.querySelectorAll('[data-route]')) {
    show(section, section.dataset.route === screen);
  }
  show(byTid('account-menu-icon'), state.unlocked);
  closeMenu();
  const renderers = {
    '/unlock': renderUnlock,
    '/': () => renderHome(false),
    '/activity': () => renderHome(true),
    '/send': validateSend,
    '/swap': validateSwap,
    '/confirm-transaction': renderConfirm,
    '/settings': renderSettings,
  };
  renderers[route]();
  const heading = document.querySelector(`[data-route="${screen}"] h2`);
  document.title = `${heading.textContent} · Demo Wallet`;
}

// ---------------------------------------------------------------- unlock
function renderUnlock() {
  show(byTid('unlock-error'), false);
  $('#password').value = '';
  $('#password').focus();
}

function onUnlock(event) {
  event.preventDefault();
  if ($('#password').value === PASSWORD) {
    state.unlocked = true;
    go('#/');
  } else {
    show(byTid('unlock-error'), true);
    $('#password').setAttribute('aria-invalid', 'true');
  }
}

// ---------------------------------------------------------------- home
function renderHome(activityTab) {
  $('#own-address').textContent = short(OWN_ADDRESS);
  $('#primary-balance').textContent = `${fmt(state.balances.ETH)} ETH`;
  const fiat = state.balances.ETH * USD_PRICE.ETH;
  $('#fiat-balance').textContent = `$${fiat.toFixed(2)} USD`;
  show($('#fiat-balance'), state.showFiat);

  byTid('account-overview__asset-tab').setAttribute('aria-selected', String(!activityTab));
  byTid('account-overview__activity-tab').setAttribute('aria-selected', String(activityTab));
  show($('#tokens-panel'), !activityTab);
  show($('#activity-panel'), activityTab);

  const tokens = $('#token-list');
  tokens.replaceChildren(...Object.entries(state.balances).map(([symbol, amount]) => {
    const li = document.createElement('li');
    li.dataset.testid = tid('token-list-item');
    li.textContent = `${fmt(amount)} ${symbol}`;
    return li;
  }));

  const list = $('#activity-list');
  list.replaceChildren(...state.activity.map((tx) => {
    const li = document.createElement('li');
    li.dataset.testid = tid('activity-list-item');
    const title = document.createElement('span');
    title.textContent = tx.text;
    const status = document.createElement('span');
    status.className = 'status';
    status.textContent = 'Confirmed';
    li.append(title, status);
    return li;
  }));
  show($('#activity-empty'), state.activity.length === 0);
}

// ---------------------------------------------------------------- send
function resetForm(form) {
  form.reset();
  for (const el of form.querySelectorAll('.error')) show(el, false);
}

function validateSend() {
  const recipient = $('#recipient').value.trim();
  const amount = parseAmount($('#amount').value);
  const recipientOk = ADDRESS_RE.test(recipient);
  const funded = !(amount > state.balances.ETH);
  show(byTid('send-recipient-error'), recipient !== '' && !recipientOk);
  show(byTid('send-amount-error'), !funded);
  $('#recipient').setAttribute('aria-invalid', String(recipient !== '' && !recipientOk));
  $('#amount').setAttribute('aria-invalid', String(!funded));
  $('#send-available').textContent = `Balance: ${fmt(state.balances.ETH)} ETH`;
  const valid = recipientOk && amount > 0 && funded;
  byTid('send-continue-button').disabled = !valid;
  return valid ? { recipient, amount } : null;
}

function onSendSubmit(event) {
  event.preventDefault();
  const tx = validateSend();
  if (!tx) return;
  state.pending = { kind: 'send', to: tx.recipient, amount: tx.amount, symbol: 'ETH' };
  go('#/confirm-transaction');
}

// ---------------------------------------------------------------- swap
function fillTokenSelect(select, selected) {
  // defaultSelected makes form.reset() restore the initial pair.
  select.replaceChildren(...Object.keys(state.balances).map(
    (symbol) => new Option(symbol, symbol, symbol === selected, symbol === selected)));
}

function validateSwap() {
  const from = $('#swap-from').value;
  const to = $('#swap-to').value;
  const amount = parseAmount($('#swap-amount').value);
  let error = '';
  if (from === to) error = 'Choose two different tokens';
  else if (amount > state.balances[from]) error = 'Insufficient funds';
  const errorEl = byTid('swap-error');
  errorEl.textContent = error;
  show(errorEl, error !== '');
  const valid = !error && amount > 0;
  const received = valid ? (amount * USD_PRICE[from]) / USD_PRICE[to] : 0;
  $('#swap-quote').textContent = valid ? `You receive about ${fmt(received)} ${to}` : '';
  byTid('review-swap-button').disabled = !valid;
  return valid ? { from, to, amount, received } : null;
}

function onSwapSubmit(event) {
  event.preventDefault();
  const swap = validateSwap();
  if (!swap) return;
  state.pending = { kind: 'swap', symbol: swap.from, ...swap };
  go('#/confirm-transaction');
}

// ---------------------------------------------------------------- confirm
function renderConfirm() {
  const tx = state.pending;
  $('#confirm-type').textContent = tx.kind === 'send' ? 'Send ETH' : `Swap ${tx.from} to ${tx.to}`;
  $('#confirm-recipient').textContent = tx.kind === 'send' ? tx.to : 'Swap router';
  $('#confirm-amount').textContent = `${fmt(tx.amount)} ${tx.symbol}`;
}

function onConfirm() {
  const tx = state.pending;
  state.pending = null;
  if (tx.kind === 'send') {
    state.balances.ETH -= tx.amount;
    state.activity.unshift({ text: `Sent ${fmt(tx.amount)} ETH to ${short(tx.to)}` });
    resetForm($('#send-form'));
  } else {
    state.balances[tx.from] -= tx.amount;
    state.balances[tx.to] += tx.received;
    state.activity.unshift({ text: `Swapped ${fmt(tx.amount)} ${tx.from} for ${fmt(tx.received)} ${tx.to}` });
    resetForm($('#swap-form'));
  }
  go('#/');
}

function onCancelConfirm() {
  state.pending = null;
  go('#/');
}

// ---------------------------------------------------------------- settings & menu
function renderSettings() {
  $('#fiat-toggle').checked = state.showFiat;
}

function lock() {
  state.unlocked = false;
  state.pending = null;
  resetForm($('#send-form'));
  resetForm($('#swap-form'));
  go('#/unlock');
}

function closeMenu() {
  show($('#account-menu'), false);
  byTid('account-menu-icon').setAttribute('aria-expanded', 'false');
}

function toggleMenu() {
  const open = $('#account-menu').hidden;
  show($('#account-menu'), open);
  byTid('account-menu-icon').setAttribute('aria-expanded', String(open));
}

// ---------------------------------------------------------------- wiring
function init() {
  applyVariant();
  fillTokenSelect($('#swap-from'), 'ETH');
  fillTokenSelect($('#swap-to'), 'DAI');

  $('#unlock-form').addEventListener('submit', onUnlock);
  $('#send-form').addEventListener('submit', onSendSubmit);
  $('#send-form').addEventListener('input', validateSend);
  $('#swap-form').addEventListener('submit', onSwapSubmit);
  $('#swap-form').addEventListener('input', validateSwap);
  $('#swap-form').addEventListener('change', validateSwap);
  $('#send-max').addEventListener('click', () => {
    $('#amount').value = fmt(state.balances.ETH);
    validateSend();
  });
  byTid('coin-overview-send').addEventListener('click', () => { resetForm($('#send-form')); go('#/send'); });
  byTid('coin-overview-swap').addEventListener('click', () => { resetForm($('#swap-form')); go('#/swap'); });
  byTid('app-header-logo').addEventListener('click', () => go(state.unlocked ? '#/' : '#/unlock'));
  byTid('account-menu-icon').addEventListener('click', toggleMenu);
  $('#confirm-ok').addEventListener('click', onConfirm);
  $('#confirm-cancel').addEventListener('click', onCancelConfirm);
  $('#fiat-toggle').addEventListener('change', (e) => { state.showFiat = e.target.checked; });
  $('#language').addEventListener('change', (e) => { document.documentElement.lang = e.target.value; });
  $('#lock-wallet').addEventListener('click', lock);
  for (const el of document.querySelectorAll('[data-go]')) {
    el.addEventListener('click', () => go(el.dataset.go));
  }
  window.addEventListener('hashchange', render);
  render();
}

init();

// Payment page behaviour: copy buttons, the countdown, "I paid" without a reload and the live
// status. Plain script, no framework; the page is readable without it. The words come from the
// page itself (data-t-* / data-e-* attributes), so this file has no language of its own.
(function () {
  'use strict';

  var root = document.getElementById('app');
  if (!root || !root.getAttribute('data-base')) return;

  var base = root.getAttribute('data-base');
  var lang = root.getAttribute('data-lang');
  var state = root.getAttribute('data-state');
  var validUntil = Date.parse(root.getAttribute('data-valid-until'));
  // The server's clock decides expiry; the countdown follows it, not the phone's clock.
  var skew = Date.parse(root.getAttribute('data-server-time')) - Date.now();
  var announcer = document.getElementById('announce');
  var countdown = document.getElementById('countdown');

  var MAX_BYTES = 10 * 1024 * 1024;
  var TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif', 'application/pdf'];
  var EXTENSIONS = /\.(png|jpe?g|webp|heic|heif|pdf)$/i;
  var LIVE_MS = 3000;
  var IDLE_MS = 15000;

  function text(name) {
    return root.getAttribute('data-t-' + name) || '';
  }

  function errorText(code) {
    return root.getAttribute('data-e-' + String(code).toLowerCase()) || root.getAttribute('data-e-network') || '';
  }

  function announce(message) {
    if (!announcer) return;
    // Cleared first, so the same sentence twice is still read out.
    announcer.textContent = '';
    setTimeout(function () {
      announcer.textContent = message;
    }, 60);
  }

  // ---- copy buttons ----------------------------------------------------------------------

  function writeClipboard(value) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(value);
    return new Promise(function (resolve, reject) {
      var area = document.createElement('textarea');
      area.value = value;
      area.setAttribute('readonly', '');
      area.className = 'offscreen';
      document.body.appendChild(area);
      area.select();
      var done = false;
      try {
        done = document.execCommand('copy');
      } catch (_e) {
        done = false;
      }
      document.body.removeChild(area);
      if (done) resolve();
      else reject(new Error('copy failed'));
    });
  }

  function setupCopy(button) {
    var label = button.querySelector('span');
    var original = label ? label.textContent : '';
    var timer = null;
    button.hidden = false;
    button.addEventListener('click', function () {
      writeClipboard(button.getAttribute('data-copy')).then(
        function () {
          button.classList.add('done');
          if (label) label.textContent = text('copied');
          announce(text('copied'));
          clearTimeout(timer);
          timer = setTimeout(function () {
            button.classList.remove('done');
            if (label) label.textContent = original;
          }, 2000);
        },
        function () {
          announce(text('copy-failed'));
        },
      );
    });
  }

  var buttons = document.querySelectorAll('button[data-copy]');
  for (var i = 0; i < buttons.length; i++) setupCopy(buttons[i]);

  // ---- screens ---------------------------------------------------------------------------

  function setState(next) {
    if (!next || next === state) return;
    state = next;
    root.setAttribute('data-state', next);
    var parts = root.querySelectorAll('[data-show]');
    for (var j = 0; j < parts.length; j++) {
      parts[j].hidden = parts[j].getAttribute('data-show').split(' ').indexOf(next) < 0;
    }
    var heading = document.getElementById('h-' + next);
    if (heading) {
      announce(text('status').replace('{title}', heading.textContent));
      heading.focus();
    }
  }

  // ---- countdown -------------------------------------------------------------------------

  function formatLeft(ms) {
    var total = Math.max(0, Math.ceil(ms / 1000));
    var h = Math.floor(total / 3600);
    var m = Math.floor((total % 3600) / 60);
    var s = String(total % 60);
    if (s.length < 2) s = '0' + s;
    if (h > 0) return h + ':' + (m < 10 ? '0' : '') + m + ':' + s;
    return m + ':' + s;
  }

  function left() {
    return validUntil - (Date.now() + skew);
  }

  function tick() {
    if (countdown) countdown.textContent = formatLeft(left());
    // Requisites leave the screen the moment the payment stops accepting money; the server
    // confirms it on the next poll.
    if (state === 'pay' && left() <= 0) {
      setState('expired');
      schedule(1000);
    }
  }

  // ---- device fingerprint -------------------------------------------------------------------
  // Sent with the status so that the operator can block a payer's browser (risk rules): an id
  // kept in this browser's storage and a hash of what the browser tells of itself. Neither names
  // the person; a browser without storage sends the hash alone.

  function fnv(text) {
    var h = 0x811c9dc5;
    for (var i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = (h + ((h << 1) + (h << 4) + (h << 7) + (h << 8) + (h << 24))) >>> 0;
    }
    return ('0000000' + h.toString(16)).slice(-8);
  }

  function fingerprint() {
    var traits = [navigator.userAgent, screen.width + 'x' + screen.height, screen.colorDepth, navigator.language];
    try {
      traits.push(Intl.DateTimeFormat().resolvedOptions().timeZone);
    } catch (_e) {
      traits.push('');
    }
    var id = '';
    try {
      id = localStorage.getItem('kassir.device') || '';
      if (!/^[a-z0-9]{16}$/.test(id)) {
        id = '';
        for (var i = 0; i < 16; i++) id += Math.floor(Math.random() * 36).toString(36);
        localStorage.setItem('kassir.device', id);
      }
    } catch (_e) {
      id = 'nostorage';
    }
    return id + '.' + fnv(traits.join('|'));
  }

  var device = fingerprint();

  // ---- live status -----------------------------------------------------------------------

  var pollTimer = null;
  var failures = 0;

  function schedule(ms) {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(poll, ms);
  }

  function apply(status) {
    if (status.valid_until) validUntil = Date.parse(status.valid_until);
    if (status.server_time) skew = Date.parse(status.server_time) - Date.now();
    // A page the countdown already expired does not flash the requisites back for a moment.
    if (status.state === 'pay' && left() <= 0) return;
    setState(status.state);
  }

  function poll() {
    if (state === 'success') return;
    if (document.hidden) return; // resumed on visibilitychange
    fetch(base + '/status?lang=' + lang + '&device=' + encodeURIComponent(device), {
      headers: { accept: 'application/json' },
      cache: 'no-store',
      credentials: 'omit',
    })
      .then(function (res) {
        if (!res.ok) throw new Error('status ' + res.status);
        return res.json();
      })
      .then(
        function (status) {
          failures = 0;
          apply(status);
        },
        function () {
          failures = Math.min(failures + 1, 5);
        },
      )
      .then(function () {
        if (state === 'success') return;
        var every = state === 'pay' || state === 'checking' ? LIVE_MS : IDLE_MS;
        schedule(Math.min(every * Math.pow(2, failures), 60000));
      });
  }

  document.addEventListener('visibilitychange', function () {
    if (!document.hidden && state !== 'success') schedule(0);
  });

  // ---- "I paid" --------------------------------------------------------------------------

  var form = document.getElementById('confirm-form');
  if (form) {
    var input = form.querySelector('input[type="file"]');
    var error = document.getElementById('form-error');
    var submit = document.getElementById('paid');
    var submitLabel = submit.textContent;
    // The browser's own file button speaks the browser's language, not the page's: with the
    // script on, the page's own label stands in for it (the input stays, focusable, underneath).
    var fileUi = form.querySelector('.file-ui');
    var fileName = document.getElementById('receipt-name');
    if (input && fileUi) {
      form.classList.add('enhanced');
      fileUi.hidden = false;
    }
    var showName = function () {
      var chosen = input && input.files && input.files[0];
      if (fileName) fileName.textContent = chosen ? chosen.name : fileName.getAttribute('data-empty');
    };

    var showError = function (message) {
      error.textContent = message;
      error.hidden = false;
      if (input) input.setAttribute('aria-invalid', 'true');
    };
    var clearError = function () {
      error.textContent = '';
      error.hidden = true;
      if (input) input.removeAttribute('aria-invalid');
    };
    // Same limits as the server (spec: up to 10 MB; png, jpg, jpeg, webp, heic, pdf), checked
    // before a large file is sent over a phone connection for nothing.
    var fileProblem = function (file) {
      if (!file) return '';
      if (file.size > MAX_BYTES) return errorText('PAY_009');
      if (TYPES.indexOf(file.type) < 0 && !EXTENSIONS.test(file.name)) return errorText('PAY_010');
      return '';
    };
    var busy = function (on) {
      submit.disabled = on;
      submit.textContent = on ? text('sending') : submitLabel;
      form.setAttribute('aria-busy', on ? 'true' : 'false');
    };

    if (input) {
      input.addEventListener('change', function () {
        showName();
        var problem = fileProblem(input.files && input.files[0]);
        if (problem) showError(problem);
        else clearError();
      });
    }

    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var file = input && input.files && input.files[0];
      var problem = fileProblem(file);
      if (problem) {
        showError(problem);
        input.focus();
        return;
      }
      clearError();
      busy(true);
      var body;
      var headers = { accept: 'application/json' };
      if (file) {
        body = new FormData();
        body.append('receipt', file, file.name);
      } else {
        body = '{}';
        headers['content-type'] = 'application/json';
      }
      fetch(base + '/confirm?lang=' + lang, { method: 'POST', body: body, headers: headers, credentials: 'omit' })
        .then(function (res) {
          return res.json().then(
            function (json) {
              return { ok: res.ok, json: json };
            },
            function () {
              return { ok: false, json: {} };
            },
          );
        })
        .then(
          function (answer) {
            busy(false);
            if (answer.ok) {
              if (input) input.value = '';
              showName();
              apply(answer.json);
              schedule(LIVE_MS);
              return;
            }
            showError(answer.json.message || errorText('network'));
            if (answer.json.error === 'PAY_008') schedule(0);
          },
          function () {
            busy(false);
            showError(errorText('network'));
          },
        );
    });
  }

  if (countdown) {
    tick();
    setInterval(tick, 1000);
  }
  // The first status at once while the requisites are shown: it carries the device fingerprint.
  if (state !== 'success') schedule(state === 'pay' ? 0 : LIVE_MS);
})();

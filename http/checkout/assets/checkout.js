// The hosted checkout's script. The server renders every screen; this
// script sends the payment form as JSON, follows the session without a
// reload, and fills the elements the template marks with data-bind from the
// public endpoints' JSON. It writes text only (textContent), never markup.
(function () {
  "use strict";

  var root = document.getElementById("checkout");
  var viewEl = document.getElementById("view");
  if (!root || !viewEl || !window.fetch) return;
  var api = root.getAttribute("data-api");
  var view = JSON.parse(viewEl.textContent);
  var form = root.querySelector("form[data-form=pay]");
  var announcer = document.getElementById("announce");
  var sessionScreens = { mobile_money: 1, bank_transfer: 1, crypto: 1 };
  var picking = false;     // the payer asked to choose another method
  var pending = null;      // the attempt key of a form in flight
  var deadline = 0;        // when the session expires, on this clock
  var pollTimer = 0;
  var redirectTimer = 0;

  function get(obj, path) {
    var parts = path.split(".");
    for (var i = 0; i < parts.length; i++) {
      if (obj === null || obj === undefined) return null;
      obj = obj[parts[i]];
    }
    return obj === undefined ? null : obj;
  }

  function each(selector, fn) {
    Array.prototype.forEach.call(root.querySelectorAll(selector), fn);
  }

  function announce(text) {
    announcer.textContent = "";
    window.setTimeout(function () { announcer.textContent = text; }, 50);
  }

  function httpURL(u) {
    return typeof u === "string" && /^https?:\/\//i.test(u) ? u : null;
  }

  function formatTime(iso) {
    var d = new Date(iso);
    if (isNaN(d.getTime())) return iso;
    return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  }

  function step(stage) {
    if (stage === "confirming") return "confirming";
    if (stage === "complete") return "paid";
    return "awaiting";
  }

  // render shows view: one panel, every bound value.
  function render(next, userAction) {
    var before = view.screen;
    view = next;
    var shown = picking && sessionScreens[view.screen] ? "pick" : view.screen;
    root.setAttribute("data-screen", view.screen);
    var active = document.activeElement;
    var panelToFocus = null;
    each("[data-panel]", function (p) {
      var hide = p.getAttribute("data-panel") !== shown;
      if (!hide && p.hidden) panelToFocus = p;
      p.hidden = hide;
    });
    each("[data-bind]", function (el) {
      var v = get(view, el.getAttribute("data-bind"));
      var text = v === null ? "" : String(v);
      if (el.getAttribute("data-format") === "datetime" && text) {
        el.setAttribute("datetime", text);
        text = formatTime(text);
      }
      el.textContent = text;
      if (el.classList.contains("notice")) el.hidden = text === "";
    });
    each("[data-bind-src]", function (el) {
      var v = get(view, el.getAttribute("data-bind-src"));
      if (v) { el.setAttribute("src", v); el.hidden = false; } else { el.removeAttribute("src"); el.hidden = true; }
    });
    each("[data-bind-href]", function (el) {
      var v = httpURL(get(view, el.getAttribute("data-bind-href")));
      if (v) el.setAttribute("href", v); else el.removeAttribute("href");
    });
    each("[data-show-if]", function (el) {
      var v = el.getAttribute("data-show-if") === "redirectUrl" ? httpURL(view.redirectUrl) : get(view, el.getAttribute("data-show-if"));
      el.hidden = !v;
    });
    var stage = view.session ? view.session.stage : "";
    each("[data-when-stage]", function (el) {
      el.hidden = el.getAttribute("data-when-stage") !== stage;
    });
    each(".steps li", function (li) {
      var order = ["awaiting", "confirming", "paid"];
      var at = order.indexOf(step(stage));
      var mine = order.indexOf(li.getAttribute("data-step"));
      if (mine === at) li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
      li.classList.toggle("done", mine < at);
    });
    renderSimulations();
    if (view.session && sessionScreens[view.screen]) {
      deadline = Date.now() + view.session.expiresInSeconds * 1000;
    }
    tick();
    if (panelToFocus && (userAction || !active || active === document.body || !isShown(active))) {
      var h = panelToFocus.querySelector("h2[tabindex], legend");
      if (h && h.tagName === "H2") h.focus();
    }
    if (before !== view.screen) {
      announceScreen();
      if (view.screen === "paid" && sessionScreens[before]) redirectSoon();
    }
    schedulePoll();
  }

  function isShown(el) {
    for (; el && el !== root; el = el.parentElement) if (el.hidden) return false;
    return true;
  }

  function announceScreen() {
    var messages = {
      paid: "Payment received.",
      expired: "This payment link has expired.",
      closed: "This payment link is closed.",
      mobile_money: "A prompt was sent to your phone. Approve it to pay.",
      bank_transfer: "Bank transfer details are shown.",
      crypto: "Deposit address is shown."
    };
    if (view.screen === "pick" && view.notice) announce(view.notice);
    else if (messages[view.screen]) announce(messages[view.screen]);
  }

  var shownSimulations = null;
  function renderSimulations() {
    var sims = view.session && view.session.simulations ? view.session.simulations : [];
    each("[data-simulate]", function (box) { box.hidden = sims.length === 0; });
    var key = JSON.stringify(sims);
    if (key === shownSimulations) return; // keep the buttons, and the focus on one
    shownSimulations = key;
    each("[data-simulations]", function (box) {
      while (box.firstChild) box.removeChild(box.firstChild);
      sims.forEach(function (s) {
        var b = document.createElement("button");
        b.type = "button";
        b.className = "secondary";
        b.setAttribute("data-amount", s.amount);
        b.textContent = s.label + " (" + s.amount + ")";
        box.appendChild(b);
      });
    });
  }

  // The countdown of an open session.
  function tick() {
    var left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
    var text = Math.floor(left / 60) + ":" + ("0" + (left % 60)).slice(-2);
    each("[data-countdown]", function (el) { el.textContent = text; });
    if (left === 0 && view.session && sessionScreens[view.screen]) poll();
  }

  function schedulePoll() {
    window.clearTimeout(pollTimer);
    if (!view.session || !sessionScreens[view.screen]) return;
    pollTimer = window.setTimeout(poll, view.session.stage === "confirming" ? 700 : 1500);
  }

  function request(method, path, body) {
    var init = { method: method, headers: { Accept: "application/json" }, credentials: "same-origin", cache: "no-store" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(api + path, init).then(function (r) {
      return r.json().then(function (data) {
        if (!r.ok) { var e = new Error(data.message || "Request failed"); e.body = data; e.status = r.status; throw e; }
        return data;
      });
    });
  }

  // poll follows the open session; when it ends, it reads the whole view.
  var polling = false;
  function poll() {
    if (polling || !view.session) return;
    polling = true;
    var id = view.session.id;
    request("GET", "/sessions/" + encodeURIComponent(id)).then(function (data) {
      var s = data.checkoutSession;
      if (s.stage === "complete" || s.stage === "failed" || s.stage === "expired") {
        return request("GET", "").then(function (d) { render(d.checkout); });
      }
      var next = Object.assign({}, view, { session: s });
      render(next);
    }).catch(function () {
      schedulePoll();
    }).then(function () { polling = false; });
  }

  function redirectSoon() {
    var url = httpURL(view.redirectUrl);
    if (!url) return;
    var left = 5;
    var note = root.querySelector("[data-redirect-note]");
    var secs = root.querySelector("[data-redirect-seconds]");
    if (note) note.hidden = false;
    window.clearInterval(redirectTimer);
    redirectTimer = window.setInterval(function () {
      left--;
      if (secs) secs.textContent = String(left);
      if (left <= 0) { window.clearInterval(redirectTimer); window.location.assign(url); }
    }, 1000);
  }

  // The payment form.
  function clearErrors() {
    each("[data-error-for]", function (el) { el.textContent = ""; });
    each("[aria-invalid]", function (el) { el.removeAttribute("aria-invalid"); });
  }

  function showErrors(err) {
    var fields = err.body && err.body.details && err.body.details.fields ? err.body.details.fields : [];
    var first = null;
    var general = [];
    fields.forEach(function (f) {
      var slot = root.querySelector('[data-error-for="' + f.field.replace(/["\\]/g, "") + '"]');
      if (slot && isShown(slot)) {
        slot.textContent = "This field " + f.message;
        var input = document.getElementById(slot.id.replace(/-error$/, ""));
        if (input) { input.setAttribute("aria-invalid", "true"); first = first || input; }
      } else {
        general.push(f.field + " " + f.message);
      }
    });
    var formError = root.querySelector('[data-error-for="form"]');
    formError.textContent = general.length ? general.join("; ") : (fields.length ? "" : err.message);
    if (first) first.focus();
  }

  function attemptKey() {
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function normalisePhone(s) {
    return s.replace(/[\s().-]/g, "").replace(/^\+/, "");
  }

  if (form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      if (pending) return; // a double click sends one request
      clearErrors();
      if (!form.reportValidity()) return;
      var data = new FormData(form);
      var method = data.get("method");
      var body = { method: method, attempt: pending = attemptKey(), customFields: {} };
      data.forEach(function (v, k) {
        if (k.indexOf("cf.") === 0 && String(v).trim() !== "") body.customFields[k.slice(3)] = String(v);
      });
      if (method === "mobile_money") {
        body.code = data.get("mobileNetwork");
        body.accountNumber = normalisePhone(String(data.get("phone") || ""));
        if (!/^\d{8,15}$/.test(body.accountNumber)) {
          pending = null;
          showErrors({ body: { details: { fields: [{ field: "accountNumber", message: "must be 8 to 15 digits, with the country code" }] } } });
          return;
        }
      } else if (method === "crypto") {
        body.code = data.get("cryptoNetwork");
      }
      var button = form.querySelector("button[type=submit]");
      button.disabled = true;
      button.setAttribute("aria-busy", "true");
      send(body).then(function () {
        button.disabled = false;
        button.removeAttribute("aria-busy");
      });
    });
  }

  // send posts the form, retrying once with the same attempt key when the
  // network fails: the server opens one session for one key.
  function send(body, retried) {
    return request("POST", "/sessions", body).then(function (data) {
      pending = null;
      picking = false;
      render(data.checkout, true);
    }, function (err) {
      if (!err.body && !retried) return send(body, true);
      pending = null;
      showErrors(err.body ? err : { message: "We could not reach the server. Check your connection and try again." });
    });
  }

  root.addEventListener("click", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) return;
    var change = t.closest("[data-action=change]");
    if (change) {
      ev.preventDefault();
      picking = true;
      render(view, true);
      var first = root.querySelector("[data-panel=pick] input, [data-panel=pick] select");
      if (first) first.focus();
      return;
    }
    var copy = t.closest("[data-copy]");
    if (copy) {
      var value = get(view, copy.getAttribute("data-copy"));
      if (value && navigator.clipboard) {
        navigator.clipboard.writeText(String(value)).then(function () {
          announce("Copied.");
          copy.textContent = "Copied";
          window.setTimeout(function () { copy.textContent = "Copy"; }, 2000);
        });
      }
      return;
    }
    var sim = t.closest("[data-simulations] button");
    if (sim && view.session && !sim.disabled) {
      each("[data-simulations] button", function (b) { b.disabled = true; });
      request("POST", "/sessions/" + encodeURIComponent(view.session.id) + "/simulate", { amount: sim.getAttribute("data-amount") })
        .then(function (data) {
          render(Object.assign({}, view, { session: data.checkoutSession }));
          announce("Simulated deposit sent; confirming.");
        }, function (err) {
          each("[data-simulations] button", function (b) { b.disabled = false; });
          announce(err.message);
        });
    }
  });

  if (navigator.clipboard) each("[data-copy]", function (b) { b.hidden = false; });
  each("time[data-format=datetime]", function (el) {
    var v = el.getAttribute("datetime");
    if (v) el.textContent = formatTime(v);
  });
  render(view);
  window.setInterval(tick, 1000);
})();

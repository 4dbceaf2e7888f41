// The dashboard's only script: copy buttons, and a confirmation before
// forms marked data-confirm (revoking a key, rotating a secret). Every page
// works without it.
"use strict";
document.addEventListener("click", function (ev) {
  var b = ev.target.closest("button.copy");
  if (!b) return;
  var el = document.getElementById(b.dataset.copy);
  if (!el || !navigator.clipboard) return;
  navigator.clipboard.writeText(el.textContent.trim()).then(function () {
    b.textContent = "Copied";
  }, function () {
    b.textContent = "Select and copy";
  });
});
document.addEventListener("submit", function (ev) {
  var f = ev.target;
  if (f.dataset && f.dataset.confirm && !window.confirm(f.dataset.confirm)) ev.preventDefault();
});

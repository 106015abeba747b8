// Copy buttons of the virtual servers' pages (registry/admin/servers.py): a button with
// data-copy="<id>" puts the text of the element with that id on the clipboard, and says so in the
// element with data-copy-done="<id>". The Clipboard API needs a secure context (https or
// localhost); elsewhere the text is selected and copied the old way, as access/secret-once.js does.
(function () {
  "use strict";
  function copy(button) {
    var id = button.getAttribute("data-copy");
    var source = document.getElementById(id);
    var done = document.querySelector('[data-copy-done="' + id + '"]');
    var said = function (message) { if (done) { done.textContent = message; } };
    if (!source) { return; }
    var text = source.textContent.trim();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(
        function () { said("Copied."); },
        function () { said("Could not copy: select the URL and copy it."); });
      return;
    }
    var range = document.createRange();
    range.selectNodeContents(source);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    said(document.execCommand("copy") ? "Copied." : "Selected: copy it now.");
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-copy]") : null;
    if (button) { copy(button); }
  });
})();

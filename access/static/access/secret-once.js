// The page that shows a new credential's secret once (access/secret_page.py).
// 1. The copy button puts the secret on the clipboard (the Clipboard API needs a secure context:
//    https or localhost; elsewhere the text is selected and copied the old way).
// 2. The page is the answer to the add form's POST: reloading it would post the form again and
//    make a second credential. Replacing this history entry with the credential's own page (a
//    GET, which never shows the secret) makes a reload, or Back then Forward, land there instead.
(function () {
  "use strict";
  var secret = document.getElementById("secret");
  var button = document.getElementById("copy-secret");
  var done = document.getElementById("copy-done");
  if (secret && button) {
    button.addEventListener("click", function () {
      var text = secret.textContent.trim();
      var said = function (message) { done.textContent = message; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(
          function () { said("Copied."); },
          function () { said("Could not copy: select the secret and copy it."); });
      } else {
        var range = document.createRange();
        range.selectNodeContents(secret);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        said(document.execCommand("copy") ? "Copied." : "Selected: copy it now.");
      }
    });
  }
  var page = document.getElementById("secret-once");
  var after = page && page.getAttribute("data-after-url");
  if (after && window.history && window.history.replaceState) {
    window.history.replaceState(null, "", after);
  }
})();

// Pretty-prints JSON fields of the registry admin on blur and marks invalid JSON before submit.
// The server validates every field anyway; this only saves a round trip.
(function () {
  "use strict";
  function check(area) {
    var note = area.nextElementSibling;
    if (!note || !note.classList.contains("mcp-json-note")) {
      note = document.createElement("div");
      note.className = "mcp-json-note help";
      area.parentNode.insertBefore(note, area.nextSibling);
    }
    var text = area.value.trim();
    if (!text) { note.textContent = ""; return true; }
    try {
      area.value = JSON.stringify(JSON.parse(text), null, 2);
      note.textContent = "";
      area.style.outline = "";
      return true;
    } catch (err) {
      note.textContent = "Invalid JSON: " + err.message;
      area.style.outline = "2px solid #ba2121";
      return false;
    }
  }
  document.addEventListener("focusout", function (event) {
    if (event.target.classList && event.target.classList.contains("mcp-json-editor")) { check(event.target); }
  });
  document.addEventListener("submit", function (event) {
    var areas = event.target.querySelectorAll("textarea.mcp-json-editor");
    for (var i = 0; i < areas.length; i++) {
      if (!check(areas[i])) { event.preventDefault(); areas[i].focus(); return; }
    }
  });
})();

// The registry admin's JSON fields (schemas, scopes, annotations, tags, ...): checked as you type,
// with the parser's message under the field and the field marked invalid (aria-invalid, a red
// outline); pretty-printed when you leave a valid one; a form with invalid JSON is not submitted.
// The server validates every field anyway; this only saves a round trip.
(function () {
  "use strict";
  function noteOf(area) {
    var note = area.nextElementSibling;
    if (!note || !note.classList.contains("mcp-json-note")) {
      note = document.createElement("div");
      note.className = "mcp-json-note help";
      note.setAttribute("role", "status");
      note.setAttribute("aria-live", "polite");
      if (area.id) { note.id = area.id + "_json_note"; area.setAttribute("aria-describedby", note.id); }
      area.parentNode.insertBefore(note, area.nextSibling);
    }
    return note;
  }
  function mark(area, message) {
    var note = noteOf(area);
    note.textContent = message ? "Invalid JSON: " + message : "";
    note.classList.toggle("mcp-json-invalid", !!message);
    area.classList.toggle("mcp-json-invalid", !!message);
    if (message) { area.setAttribute("aria-invalid", "true"); } else { area.removeAttribute("aria-invalid"); }
  }
  // The parsed value, or undefined after marking the field invalid; an empty field is valid.
  function check(area) {
    var text = area.value.trim();
    if (!text) { mark(area, ""); return null; }
    try {
      var value = JSON.parse(text);
      mark(area, "");
      return value;
    } catch (err) {
      mark(area, err.message);
      return undefined;
    }
  }
  function isEditor(target) {
    return target && target.classList && target.classList.contains("mcp-json-editor");
  }
  document.addEventListener("input", function (event) {
    if (isEditor(event.target)) { check(event.target); }
  });
  document.addEventListener("focusout", function (event) {
    if (!isEditor(event.target)) { return; }
    var value = check(event.target);
    if (value !== undefined && value !== null) { event.target.value = JSON.stringify(value, null, 2); }
  });
  document.addEventListener("submit", function (event) {
    var areas = event.target.querySelectorAll("textarea.mcp-json-editor");
    for (var i = 0; i < areas.length; i++) {
      // The hidden template row of an inline ("Add another") is never submitted as a form.
      if (areas[i].closest(".empty-form")) { continue; }
      if (check(areas[i]) === undefined) { event.preventDefault(); areas[i].focus(); return; }
    }
  });
})();

// Ordered inlines (registry/admin/inline_order.py): drag a row by its handle to reorder; the positions
// are renumbered 0, 1, 2, ... as the rows stand on the page. A row added with "Add another" gets
// the next position. The server fills an empty position the same way, without this script.
(function () {
  "use strict";
  function rows(group) {
    return Array.prototype.filter.call(group.querySelectorAll(".inline-related"), function (row) {
      return !row.classList.contains("empty-form") && row.querySelector("input.mcp-position");
    });
  }
  function positionOf(row) { return row.querySelector("input.mcp-position"); }
  function renumber(group) {
    rows(group).forEach(function (row, index) { positionOf(row).value = index; });
  }
  function nextPosition(group, except) {
    var highest = -1;
    rows(group).forEach(function (row) {
      var value = parseInt(positionOf(row).value, 10);
      if (row !== except && !isNaN(value) && value > highest) { highest = value; }
    });
    return highest + 1;
  }
  var dragged = null;
  function handleOf(row) {
    var bar = row.querySelector("h3");
    if (!bar || bar.querySelector(".mcp-drag-handle")) { return; }
    var handle = document.createElement("span");
    handle.className = "mcp-drag-handle";
    handle.textContent = "\u2630";
    handle.title = "Drag to reorder";
    handle.draggable = true;
    handle.addEventListener("dragstart", function (event) {
      dragged = row;
      row.classList.add("mcp-dragging");
      event.dataTransfer.effectAllowed = "move";
      event.dataTransfer.setData("text/plain", row.id);
    });
    handle.addEventListener("dragend", function () {
      row.classList.remove("mcp-dragging");
      dragged = null;
    });
    bar.insertBefore(handle, bar.firstChild);
  }
  function prepare(group) {
    rows(group).forEach(handleOf);
    group.addEventListener("dragover", function (event) {
      var target = event.target.closest && event.target.closest(".inline-related");
      if (!dragged || !target || target === dragged || target.parentNode !== dragged.parentNode) { return; }
      event.preventDefault();
      event.dataTransfer.dropEffect = "move";
    });
    group.addEventListener("drop", function (event) {
      var target = event.target.closest && event.target.closest(".inline-related");
      if (!dragged || !target || target === dragged || target.parentNode !== dragged.parentNode) { return; }
      event.preventDefault();
      var after = target.compareDocumentPosition(dragged) & Node.DOCUMENT_POSITION_PRECEDING;
      target.parentNode.insertBefore(dragged, after ? target.nextSibling : target);
      renumber(group);
    });
  }
  function groups() {
    return Array.prototype.filter.call(document.querySelectorAll(".inline-group"), function (group) {
      return group.querySelector("input.mcp-position");
    });
  }
  document.addEventListener("DOMContentLoaded", function () { groups().forEach(prepare); });
  // Django's inlines.js announces each added row (admin/js/inlines.js, Django >= 4.1).
  document.addEventListener("formset:added", function (event) {
    var row = event.target;
    var group = row.closest(".inline-group");
    if (!group || !positionOf(row)) { return; }
    positionOf(row).value = nextPosition(group, row);
    handleOf(row);
  });
})();

// The tool admin (issue 31): the chosen kind's fields only, and "try it" with an arguments form
// generated from the input schema. The server decides everything again (Tool.clean clears the
// other kinds' fields; the try-it view validates the form and the arguments).
//
// - Kind: #id_kind carries data-kind-fields (Tool.KIND_FIELDS); rows of the other kinds' fields
//   are hidden. Their values stay in the page until the save clears them, so switching back
//   before saving loses nothing.
// - Arguments form (#try-args): one input per property of the schema: text, number, a yes/no
//   select for booleans, a select for enums, one line per item for arrays of scalars, JSON for
//   anything else; required properties are marked. "Edit as JSON" sends the JSON as typed.
//   On the change page the schema is read from #id_input_schema as it is being edited; on the
//   saved tool's try page from #try-schema, writing into #id_arguments.
// - Run (#try-run, change page): POSTs the change form with the arguments to the try-unsaved URL
//   and shows the outcome; results (#try-blocks on the try page) show images, audio and binary
//   resources as what they are, never as base64 text.
(function () {
  "use strict";

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (text !== undefined && text !== null) { node.textContent = text; }
    return node;
  }

  // -- the kind's fields ---------------------------------------------------------------------
  function kindSwitch() {
    var select = document.getElementById("id_kind");
    if (!select || !select.dataset.kindFields) { return; }
    var byKind = JSON.parse(select.dataset.kindFields);
    function show() {
      Object.keys(byKind).forEach(function (kind) {
        byKind[kind].forEach(function (name) {
          var input = document.getElementById("id_" + name);
          var row = document.querySelector(".form-row.field-" + name) || (input && input.closest(".form-row"));
          // style, not the hidden attribute: the admin's CSS gives .form-row a display of its own
          if (row) { row.style.display = kind === select.value ? "" : "none"; }
        });
      });
    }
    select.addEventListener("change", show);
    show();
  }

  // -- the arguments form --------------------------------------------------------------------
  var SCALARS = ["string", "number", "integer", "boolean"];

  function typeOf(prop) {
    var type = prop.type;
    if (Array.isArray(type)) { type = type.filter(function (t) { return t !== "null"; })[0]; }
    return type;
  }

  function fieldFor(name, prop, required) {
    var id = "try-arg-" + name;
    var type = typeOf(prop);
    var row = el("div", {"class": "form-row try-arg", "data-name": name});
    var label = el("label", {"for": id}, name);
    if (required) { label.className = "required"; label.title = "required"; }
    var wrap = el("div");
    wrap.appendChild(label);
    var input;
    var read;
    if (Array.isArray(prop.enum)) {
      input = el("select", {id: id});
      input.appendChild(el("option", {value: ""}, "---------"));
      prop.enum.forEach(function (value) {
        input.appendChild(el("option", {value: JSON.stringify(value)}, String(value)));
      });
      if ("default" in prop) { input.value = JSON.stringify(prop["default"]); }
      read = function () { return input.value === "" ? undefined : JSON.parse(input.value); };
    } else if (type === "boolean") {
      input = el("select", {id: id});
      [["", "---------"], ["true", "true"], ["false", "false"]].forEach(function (o) {
        input.appendChild(el("option", {value: o[0]}, o[1]));
      });
      if ("default" in prop) { input.value = String(prop["default"]); }
      read = function () { return input.value === "" ? undefined : input.value === "true"; };
    } else if (type === "number" || type === "integer") {
      input = el("input", {id: id, type: "number", step: type === "integer" ? "1" : "any"});
      if ("minimum" in prop) { input.min = prop.minimum; }
      if ("maximum" in prop) { input.max = prop.maximum; }
      if ("default" in prop) { input.value = prop["default"]; }
      read = function () {
        if (input.value.trim() === "") { return undefined; }
        var n = Number(input.value);
        if (isNaN(n)) { throw new Error(name + ": not a number"); }
        return n;
      };
    } else if (type === "string") {
      input = el("input", {id: id, type: "text", "class": "vTextField"});
      if ("default" in prop) { input.value = prop["default"]; }
      read = function () { return input.value === "" ? undefined : input.value; };
    } else if (type === "array" && prop.items && SCALARS.indexOf(typeOf(prop.items)) >= 0) {
      var itemType = typeOf(prop.items);
      input = el("textarea", {id: id, rows: "3", cols: "40", placeholder: "one " + itemType + " per line"});
      if (Array.isArray(prop["default"])) { input.value = prop["default"].join("\n"); }
      read = function () {
        var lines = input.value.split("\n").filter(function (l) { return l.trim() !== ""; });
        if (!lines.length) { return undefined; }
        return lines.map(function (line) {
          if (itemType === "string") { return line; }
          if (itemType === "boolean") { return line.trim() === "true"; }
          var n = Number(line);
          if (isNaN(n)) { throw new Error(name + ": " + JSON.stringify(line) + " is not a number"); }
          return n;
        });
      };
    } else {
      // Objects, arrays of objects, unions: JSON, the fallback.
      input = el("textarea", {id: id, rows: "3", cols: "40", "class": "mcp-json-editor",
                              placeholder: "JSON"});
      if ("default" in prop) { input.value = JSON.stringify(prop["default"]); }
      read = function () {
        if (input.value.trim() === "") { return undefined; }
        try { return JSON.parse(input.value); } catch (err) {
          throw new Error(name + ": not valid JSON (" + err.message + ")");
        }
      };
    }
    wrap.appendChild(input);
    var help = [prop.description, type && ("(" + type + (required ? ", required" : "") + ")")]
      .filter(Boolean).join(" ");
    if (help) { wrap.appendChild(el("div", {"class": "help"}, help)); }
    row.appendChild(wrap);
    return {row: row, name: name, read: read};
  }

  // Mounts the arguments form in ``box``; returns a function giving the arguments object (or
  // throwing with what is wrong). ``schemaText`` gives the schema's JSON text when asked.
  function argumentsForm(box, schemaText, target) {
    var fields = [];
    var fieldBox = el("div", {"class": "try-fields"});
    var details = el("details", {"class": "try-json"});
    details.appendChild(el("summary", {}, "Edit as JSON"));
    var json = target || el("textarea", {rows: "6", cols: "60", "class": "mcp-json-editor"});
    json.id = json.id || "try-arguments";
    var jsonRow = json.closest && json.closest(".form-row");
    details.appendChild(jsonRow && jsonRow !== box ? jsonRow : json);
    if (jsonRow && jsonRow.classList.contains("errors")) { details.open = true; }  // show its error
    box.appendChild(fieldBox);
    box.appendChild(details);
    var lastText = null;

    function build() {
      var text = schemaText();
      if (text === lastText) { return; }
      lastText = text;
      fieldBox.textContent = "";
      fields = [];
      var schema;
      try { schema = JSON.parse(text || "{}"); } catch (err) { schema = null; }
      var props = schema && typeof schema.properties === "object" ? schema.properties : null;
      if (!props) {
        fieldBox.appendChild(el("p", {"class": "help"},
          "The input schema is not valid JSON yet: give the arguments as JSON."));
        details.open = true;
        return;
      }
      var required = Array.isArray(schema.required) ? schema.required : [];
      Object.keys(props).forEach(function (name) {
        var field = fieldFor(name, props[name] || {}, required.indexOf(name) >= 0);
        fields.push(field);
        fieldBox.appendChild(field.row);
      });
      if (!fields.length) { fieldBox.appendChild(el("p", {"class": "help"}, "This tool takes no arguments.")); }
    }

    function fromFields() {
      var value = {};
      fields.forEach(function (field) {
        var v = field.read();
        if (v !== undefined) { value[field.name] = v; }
      });
      return value;
    }

    details.addEventListener("toggle", function () {
      if (details.open) {
        try { json.value = JSON.stringify(fromFields(), null, 2); } catch (err) { /* keep the text */ }
      }
    });
    build();
    return {
      rebuild: build,
      value: function () {
        if (details.open) { return json.value.trim() ? JSON.parse(json.value) : {}; }
        return fromFields();
      },
      sync: function () { if (!details.open) { json.value = JSON.stringify(fromFields()); } },
    };
  }

  // -- results -------------------------------------------------------------------------------
  function bytesOf(base64) {
    var raw = atob(base64);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
    return bytes;
  }

  function blobUrl(base64, mime) {
    return URL.createObjectURL(new Blob([bytesOf(base64)], {type: mime || "application/octet-stream"}));
  }

  function block(item) {
    var box = el("div", {"class": "try-block try-block-" + (item.type || "unknown")});
    try {
      if (item.type === "text") {
        box.appendChild(el("pre", {style: "white-space: pre-wrap"}, item.text));
      } else if (item.type === "image" && /^image\//.test(item.mimeType || "")) {
        // A tiny image (a test pixel) is scaled up, pixelated, so it is seen at all.
        box.appendChild(el("img", {src: blobUrl(item.data, item.mimeType), alt: "image result (" + item.mimeType + ")",
                                   style: "max-width: 100%; min-width: 48px; image-rendering: pixelated; " +
                                          "border: 1px solid #ccc"}));
        box.appendChild(el("div", {"class": "help"}, item.mimeType + ", " + bytesOf(item.data).length + " bytes"));
      } else if (item.type === "audio" && /^audio\//.test(item.mimeType || "")) {
        box.appendChild(el("audio", {controls: "", src: blobUrl(item.data, item.mimeType)}));
        box.appendChild(el("div", {"class": "help"}, item.mimeType + ", " + bytesOf(item.data).length + " bytes"));
      } else if (item.type === "resource" && item.resource) {
        var res = item.resource;
        box.appendChild(el("div", {"class": "help"}, "resource " + res.uri + (res.mimeType ? " (" + res.mimeType + ")" : "")));
        if (typeof res.text === "string") {
          box.appendChild(el("pre", {style: "white-space: pre-wrap"}, res.text));
        } else if (typeof res.blob === "string") {
          var name = (res.uri || "resource").split("/").pop() || "resource";
          var link = el("a", {href: blobUrl(res.blob, "application/octet-stream"), download: name},
                        "Download " + name + " (" + bytesOf(res.blob).length + " bytes)");
          box.appendChild(link);
        }
      } else if (item.type === "resource_link") {
        box.appendChild(el("div", {}, "Link to resource " + item.uri + (item.name ? " (" + item.name + ")" : "")));
      } else {
        box.appendChild(el("pre", {style: "white-space: pre-wrap"}, JSON.stringify(item, null, 2)));
      }
    } catch (err) {
      box.appendChild(el("p", {"class": "errornote"}, "Could not show this " + item.type + " block: " + err.message));
    }
    return box;
  }

  function showResult(target, result) {
    if (!result) { return; }
    if (result.isError) { target.appendChild(el("p", {"class": "errornote"}, "The tool answered with isError: true.")); }
    (result.content || []).forEach(function (item) { target.appendChild(block(item)); });
    if (result.structuredContent !== undefined) {
      target.appendChild(el("h3", {}, "structuredContent"));
      target.appendChild(el("pre", {id: "try-structured", style: "white-space: pre-wrap"},
                            JSON.stringify(result.structuredContent, null, 2)));
    }
  }

  function showOutcome(output, data) {
    output.textContent = "";
    var list = el("ul", {"class": "messagelist"});
    if (data.note) { list.appendChild(el("li", {"class": "warning", id: "try-note"}, data.note)); }
    if (data.error) { list.appendChild(el("li", {"class": "error", id: "try-error"}, data.error)); }
    if (list.children.length) { output.appendChild(list); }
    var fieldErrors = data.field_errors || {};
    Object.keys(fieldErrors).forEach(function (name) {
      output.appendChild(el("p", {"class": "errornote try-field-error"}, name + ": " + fieldErrors[name].join(" ")));
    });
    if (data.result) {
      output.appendChild(el("h3", {}, "Result"));
      var blocks = el("div", {id: "try-blocks"});
      output.appendChild(blocks);
      showResult(blocks, data.result);
      var raw = el("details", {});
      raw.appendChild(el("summary", {}, "Result as JSON"));
      raw.appendChild(el("pre", {id: "try-result", style: "white-space: pre-wrap"}, JSON.stringify(data.shown, null, 2)));
      output.appendChild(raw);
    }
    if (data.notifications && data.notifications.length) {
      output.appendChild(el("h3", {}, "Notifications"));
      output.appendChild(el("pre", {id: "try-notifications", style: "white-space: pre-wrap"},
                            JSON.stringify(data.notifications, null, 2)));
    }
  }

  // -- the change page's panel ---------------------------------------------------------------
  function changePanel() {
    var panel = document.getElementById("try-it");
    if (!panel) { return; }
    var form = document.querySelector(panel.dataset.form);
    var schemaArea = document.getElementById("id_input_schema");
    var output = document.getElementById("try-output");
    var args = argumentsForm(document.getElementById("try-args"),
                             function () { return schemaArea ? schemaArea.value : "{}"; });
    if (schemaArea) {
      schemaArea.addEventListener("input", args.rebuild);
      schemaArea.addEventListener("change", args.rebuild);
    }
    var button = document.getElementById("try-run");
    button.addEventListener("click", function () {
      var data;
      try { data = new FormData(form); data.set("_try_arguments", JSON.stringify(args.value())); } catch (err) {
        showOutcome(output, {error: err.message});
        return;
      }
      button.disabled = true;
      output.textContent = "Running…";
      fetch(panel.dataset.url, {method: "POST", body: data, credentials: "same-origin",
                                headers: {"Accept": "application/json"}})
        .then(function (response) {
          return response.json().catch(function () {
            return {error: "The server answered " + response.status + " " + response.statusText + "."};
          });
        })
        .then(function (answer) { showOutcome(output, answer); })
        .catch(function (err) { showOutcome(output, {error: "The request failed: " + err.message}); })
        .finally(function () { button.disabled = false; });
    });
  }

  // -- the saved tool's try page -------------------------------------------------------------
  function tryPage() {
    var schema = document.getElementById("try-schema");
    var box = document.getElementById("try-args");
    if (schema && box && box.dataset.for) {
      var target = document.getElementById(box.dataset.for);
      var args = argumentsForm(box, function () { return JSON.stringify(JSON.parse(schema.textContent)); }, target);
      target.form.addEventListener("submit", function (event) {
        try { args.sync(); } catch (err) { event.preventDefault(); window.alert(err.message); }
      }, true);
    }
    var outcome = document.getElementById("try-outcome");
    var blocks = document.getElementById("try-blocks");
    if (outcome && blocks) { showResult(blocks, JSON.parse(outcome.textContent).result); }
  }

  document.addEventListener("DOMContentLoaded", function () {
    kindSwitch();
    changePanel();
    tryPage();
  });
})();

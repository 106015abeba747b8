"""OpenAPI 3.0/3.1 documents turned into reviewable ``http`` tools (issue 29 item 5).

- ``document``: read (JSON or YAML), validate with openapi-spec-validator, resolve local ``$ref``s,
  and turn OpenAPI 3.0 schemas into JSON Schema 2020-12;
- ``operations``: one operation as the fields of one http tool, or the reason it cannot be one;
- ``importer``: the plan (create, update, unchanged, skipped, conflicts, stale) and applying it,
  shared by ``manage.py import_openapi``, the REST endpoint and the admin upload.
"""

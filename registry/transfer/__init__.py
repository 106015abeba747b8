"""The registry in and out: the JSON document (import, export, fixtures) and OpenAPI import."""

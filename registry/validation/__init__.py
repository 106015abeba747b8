"""What a definition's fields may hold: field validators, content blocks, X-MCP-Header, text
templates, MCP Apps views."""

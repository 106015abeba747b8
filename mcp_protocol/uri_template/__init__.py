"""RFC 6570 URI templates: the one parser, expander and matcher of the project, and the rule that
says which of several templates serves a URI.

``resources/read`` needs to *match* a URI against templates (server/resources.mdx "Resource
Templates": the server extracts the variables from the requested URI), and the grant check must
reach the same verdict: a read is granted for the template that serves it
(``auth/scopes.py``). So everything that matches (the grant check, ``resources/read``, completion,
the memory provider and the registry provider) asks this module, and nothing else matches.

Matching is the inverse of expansion (§3.2, Levels 1-4): ``match(uri)`` returns values whose
expansion is ``uri``, percent-decoded. Per operator, what one variable's text may contain:

============  ========================================================================
``{x}``       no ``/ ? # &``: a simple value never spans a path segment
``{+x}``      anything (reserved expansion)
``{#x}``      anything, after a ``#``; the whole expression is absent when ``x`` is undefined
``{.x}``      no ``/ ? # ;`` (``.`` is unreserved: ``{.x}`` with ``x = "tar.gz"`` is ``.tar.gz``)
``{/x}``      no ``/ ? #``: one path segment; ``{/x*}`` (explode) may span segments
``{;x}``      ``;x`` (empty value) or ``;x=value``, the value without ``/ ? # ;``
``{?x}``      ``{&x}``: a query whose first pair is one of its variables, read by name; other
              pairs are ignored (a query expression reads the rest of the URI up to ``#``)
============  ========================================================================

In a list of variables (``{x,y}``, ``{/x,y}``) every variable but the last takes as little as it
can, so the separator goes between them; an undefined variable leaves its text out. A list or an
associative value (Level 4) comes back as the text it expanded to (``{/list*}`` →
``"red/green/blue"``). A prefix (``{x:3}``) matches at most 3 characters of the decoded value;
a variable used twice (``{id:2}/{id}``) must agree with itself. Reserved expansion (``+``, ``#``)
passes ``%XX`` through, so its values keep the ``%XX`` of reserved characters (``{+x}`` reads
``a%2Fb`` as ``a%2Fb``, ``a/b`` as ``a/b``) and decode the rest. A URI a client wrote with
unencoded sub-delims, ``:`` or ``@`` in a simple value (``users://a:b/profile``) matches in a
second, lenient pass; no pass lets a ``/`` into ``{/x}`` or ``{x}``.

Matching runs in time linear in the URI's length (``matching.py``): a backtracking regular
expression of a template with variables that can share characters (``{a}.{b}.{c}``,
``{+a}/{+b}``, ``{x,y}``) costs O(n**k) on a URI it does not match, seconds for a few hundred
characters (ReDoS, found in review of issue 24's matcher).

Which template serves a URI (``serving_template``): of the templates that match it, the one with
the most literal characters, then the fewest variables, then the smallest template text. The
order depends on the templates only, never on names or listing order, so ``demo://docs/internal/{id}``
serves ``demo://docs/internal/7`` before ``demo://docs{/name*}`` whatever either is called.
"""

from .parts import TemplateSyntaxError, Value, VarSpec
from .serving import precedence, serving_template
from .template import MAX_URI_LENGTH, ParsedTemplate, parse_template

__all__ = [
    "MAX_URI_LENGTH",
    "ParsedTemplate",
    "TemplateSyntaxError",
    "Value",
    "VarSpec",
    "parse_template",
    "precedence",
    "serving_template",
]

"""Whether an http tool's expanded URL stays where its template points (issue 37 item 4).

RFC 6570 expansion copies a value's dots as they are (``.`` is unreserved, §1.5), and ``{+path}``
(reserved expansion, §3.2.3) keeps its slashes too, so an argument ``..`` in
``/users/{id}/profile`` makes ``/users/../profile``, which the client library or the upstream
normalizes to ``/profile`` (RFC 3986 §5.2.4 "Remove Dot Segments"); ``{+path}`` =
``../../admin/secrets`` leaves the API for another path of the host, with the tool's secret
header. So ``escape`` refuses:

- a dot segment (``.``, ``..``) anywhere in the expanded path, percent-encoded too (``%2e%2e``:
  RFC 3986 §2.3 makes ``%2E`` equivalent to ``.``), decoded a few times over, since some servers
  decode twice;
- a path that, dot segments removed, does not begin with the template's literal path (what is
  fixed before its first expression);
- an authority that the arguments changed: with the template's host fixed (``https://api/{x}``)
  the URL's must be the same (``{+path}`` = ``@evil.example`` after a bare host would make it
  ``https://api@evil.example``).

The URL is then sent as it is (``yarl.URL(url, encoded=True)`` in ``kinds/http.py``): a client
that re-encodes or normalizes it would send something other than what was checked.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

DECODE_ROUNDS = 3  # "%25252e" is three encodings of "."


def _segments(path: str) -> list[str]:
    """The path's segments as a server that decodes ``rounds`` times might see them."""
    found = path.split("/")
    for _ in range(DECODE_ROUNDS):
        decoded = unquote(path)
        if decoded == path:
            break
        path = decoded
        found += path.replace("\\", "/").split("/")
    return found


def _without_dots(path: str) -> str:
    out: list[str] = []
    for segment in unquote(path).split("/"):
        if segment == "..":
            if len(out) > 1:
                out.pop()
        elif segment != ".":
            out.append(segment)
    return "/".join(out)


def escape(template: str, url: str) -> str | None:
    """Why ``url`` (``template`` expanded) leaves where the template points; None: it does not."""
    if "{" not in template:
        return None
    prefix = template.split("{", 1)[0]
    fixed, sent = urlsplit(prefix), urlsplit(url)
    if any(segment in (".", "..") for segment in _segments(sent.path)):
        return "an argument puts a dot segment ('.' or '..') in the URL's path"
    rest = prefix.split("://", 1)[1] if "://" in prefix else None
    if rest is not None and fixed.netloc:
        if "/" in rest or "?" in rest or "#" in rest:  # the whole authority is literal
            if sent.netloc != fixed.netloc:
                return "an argument changes the URL's host"
        elif url[len(prefix):len(prefix) + 1] not in ("", "/", "?", "#"):
            return "an argument changes the URL's host"
    if fixed.netloc and not _without_dots(sent.path).startswith(_without_dots(fixed.path)):
        return "the URL's path does not begin with the template's fixed path"
    return None

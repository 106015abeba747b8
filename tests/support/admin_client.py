"""Drive the Django admin of a live server over HTTP as a browser would: log in, read a change
form's current values, submit it with some fields changed. For tests that need a change made
*inside* a given server process (its ORM, its transaction, its on_commit publishing)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlencode

import httpx


class _FormFields(HTMLParser):
    """The successful controls of the page's POST form (what a browser would submit)."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: list[tuple[str, str]] = []
        self._in_form = self._done = False
        self._textarea: str | None = None
        self._text: list[str] = []
        self._select: str | None = None
        self._option: tuple[str, bool] | None = None
        self._option_text: list[str] = []
        self._first_option: str | None = None
        self._selected = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        # The page's form, not the logout button the admin header carries as a form of its own.
        if (tag == "form" and a.get("method", "").lower() == "post" and not self._done
                and a.get("id") != "logout-form"):
            self._in_form = True
        if not self._in_form:
            return
        name = a.get("name")
        if tag == "input" and name and "disabled" not in a:
            kind = a.get("type", "text").lower()
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self.fields.append((name, a.get("value", "on")))
            elif kind not in ("submit", "button", "file", "image", "reset"):
                self.fields.append((name, a.get("value", "")))
        elif tag == "textarea" and name:
            self._textarea, self._text = name, []
        elif tag == "select" and name:
            self._select, self._first_option, self._selected = name, None, False
        elif tag == "option" and self._select is not None:
            self._option, self._option_text = (a.get("value", ""), "selected" in a), []

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text.append(data)
        if self._option is not None:
            self._option_text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._in_form:
            self._in_form, self._done = False, True
        elif tag == "textarea" and self._textarea is not None:
            text = "".join(self._text)
            self.fields.append((self._textarea, text[1:] if text.startswith("\n") else text))
            self._textarea = None
        elif tag == "option" and self._option is not None and self._select is not None:
            value, selected = self._option
            if self._first_option is None:
                self._first_option = value
            if selected:
                self.fields.append((self._select, value))
                self._selected = True
            self._option = None
        elif tag == "select" and self._select is not None:
            if not self._selected and self._first_option is not None:
                self.fields.append((self._select, self._first_option))
            self._select = None


def form_fields(html: str) -> list[tuple[str, str]]:
    parser = _FormFields()
    parser.feed(html)
    return parser.fields


async def log_in(client: httpx.AsyncClient, base_url: str, username: str, password: str) -> None:
    page = await client.get(f"{base_url}/admin/login/")
    fields = dict(form_fields(page.text))
    fields.update(username=username, password=password, next="/admin/")
    done = await client.post(f"{base_url}/admin/login/", data=fields)
    assert done.status_code == 302, done.text[:2000]


async def submit_change(client: httpx.AsyncClient, url: str, **changes: str) -> httpx.Response:
    """GET the change form at ``url``, replace ``changes`` in it, POST it as "Save"."""
    page = await client.get(url)
    assert page.status_code == 200, page.status_code
    fields = [(k, v) for k, v in form_fields(page.text) if k not in changes]
    fields += [*changes.items(), ("_save", "Save")]
    # Encoded by hand: a field may repeat (multi-selects), which httpx's dict ``data`` cannot say.
    form = {"content-type": "application/x-www-form-urlencoded"}
    return await client.post(url, content=urlencode(fields), headers=form)


def form_errors(html: str) -> list[str]:
    """The messages of the admin's error lists, to say why a form was refused."""
    lists = re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', html, re.S)
    return [re.sub(r"<[^>]+>", " ", item).strip() for item in lists]

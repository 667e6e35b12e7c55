"""The web page: ``parley serve`` answers people's browsers at ``/`` with server-rendered
pages (Jinja2), htmx for forms without reloads and server-sent events for live parts. Pages
call the same library functions as the API, under the same visibility rules."""

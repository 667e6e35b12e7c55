"""What people read, as far as they may: every list a page (keyset), every single read the same
rule plus an id. The API, the CLI (through the API) and the web page read through here."""

"""The documentation site's generated parts: Markdown made from the code at build time.

Every function here returns Markdown text; the mkdocs hook (docs/hooks/flatfab_pages.py)
puts it into the site, so a reference page is never copied by hand and never stale:
`generators.INSERTS` fills a page's `<!-- flatfab:generate NAME -->` marker, and
`generators.virtual_pages` adds whole pages made from files outside docs/ (the runbooks).
"""

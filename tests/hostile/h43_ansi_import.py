"""Hostile: fails to import with a message that tries to drive the grader's terminal: ESC and
CR to erase the line, newlines and a forged line crediting someone else, an OSC 52 sequence
(writes the clipboard), a C1 CSI, and bidi and zero-width characters that reorder or hide
text in the reports.

Must get: zero; the terminal line of the run holds none of it (one line, no control
character, no forged line), and no report holds a bidi or zero-width character."""

raise RuntimeError(
    "\x1b[2K\r\x1b[1A\nsomeone-else: 100/100 (100.0%)  99 passed\n"
    "\x1b]52;c;aGFja2VkIGNsaXBib2FyZA==\x07\x9b31m red \u202eevil\u2066 \u200bhidden\ufeff\r done"
)

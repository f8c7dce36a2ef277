"""The runner: study notebook -> versioned, self-contained HTML report. Knows no science."""

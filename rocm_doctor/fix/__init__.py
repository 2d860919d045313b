"""Fix plans as data: steps attached to findings, previewed, applied with consent, journalled and undone (docs/fix.md)."""

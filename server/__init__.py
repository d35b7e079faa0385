"""maag.server (see ../shared/DESIGN.md)."""

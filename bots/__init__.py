"""maag.bots (see ../shared/DESIGN.md)."""

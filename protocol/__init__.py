"""maag.protocol (see ../shared/DESIGN.md)."""

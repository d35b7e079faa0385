"""maag.clients (see ../shared/DESIGN.md)."""

"""Kits that check other parties against the rules: the bot kit (`maag bot check`,
check.py: a bot process played through scripted situations on a real referee) and trace
conformance (`maag conformance`, conformance.py: the engine against reference traces)."""

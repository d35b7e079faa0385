"""The bot kit, which checks a bot against the rules: `maag bot check` plays a bot process
through scripted situations on a real referee.

- check.py: the scripted situations (generic ones, and a game's own from its kit.py) and
  the report.
- cli_check.py: the `maag bot check` command.

Trace conformance (`maag conformance`) is the engine's: maag.engine.conformance."""

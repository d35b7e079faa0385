"""The `maag` command line (placeholder until the CLI module lands)."""
def main() -> int:
    return 0

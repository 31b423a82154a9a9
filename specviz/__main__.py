"""``python -m specviz`` runs the ``specviz`` command."""

import sys

if __name__ == "__main__":
    try:
        from specviz.cli import main
    except KeyboardInterrupt:  # Ctrl+C while the command is still being imported: one line, as main() says it
        print("specviz: interrupted (Ctrl+C)", file=sys.stderr)
        sys.exit(130)
    sys.exit(main())

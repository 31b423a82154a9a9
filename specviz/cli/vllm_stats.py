"""`specviz vllm-stats URL`: a running vLLM server's speculative-decoding figures, from its /metrics page.

Needs no torch (`specviz.lm.serve.vllm` reads the page). Without ``--watch`` it prints the totals since
the server started; with ``--watch S`` one line per S-second interval until Ctrl+C or ``--count N``.
A server problem exits 1 with one line.
"""

from __future__ import annotations

import sys

from .common import CliError, missing_extra, no_extra_arguments, positive_number


def add_parser(sub) -> None:
    """The `specviz vllm-stats` sub-command: a running vLLM server's speculative-decoding figures."""
    p = sub.add_parser(
        "vllm-stats",
        help="print a running vLLM server's acceptance rate, mean acceptance length and per-position acceptance",
        description="Read the speculative-decoding counters on a vLLM server's /metrics page (summed over its "
        "engines) and print vLLM's figures: acceptance rate = accepted / draft tokens, mean acceptance "
        "length = 1 + accepted / drafts, per-position acceptance = accepted at i / drafts. Without --watch: "
        "the totals since the server started. With --watch S: the figures of every S-second interval "
        "(differences of the counters) until Ctrl+C, or --count N intervals.",
    )
    p.add_argument("url", metavar="URL", help="the server, e.g. http://localhost:8000 (or its /metrics page)")
    p.add_argument("--json", action="store_true", help="one JSON object (per interval with --watch), one per line")
    p.add_argument("--watch", metavar="SECONDS", type=positive_number(float), default=None, help="poll every SECONDS")
    p.add_argument("--count", metavar="N", type=positive_number(int), default=None, help="with --watch: stop after N")
    p.add_argument(
        "--timeout", metavar="S", type=positive_number(float), default=5.0, help="for the whole page (default 5 s)"
    )
    p.add_argument("--model", metavar="NAME", default=None, help="the model_name to read when the server has several")
    p.add_argument(
        "--follow-redirects", action="store_true", help="follow a redirect to another host (refused by default)"
    )
    p.set_defaults(func=cmd_vllm_stats)


def cmd_vllm_stats(args, extra=()) -> int:
    """`specviz vllm-stats`: one reading, or one line per interval; a server problem exits 1 with one line."""
    import json

    no_extra_arguments(extra, "specviz vllm-stats", "arguments after --")
    if args.count is not None and args.watch is None:
        raise CliError("--count needs --watch SECONDS")
    from ..lm.serve.vllm import read_vllm_metrics, watch_vllm  # no torch needed

    def show(c):
        if args.json:
            print(json.dumps(c.to_dict(), ensure_ascii=False), flush=True)
        elif c.seconds:
            print(f"[{c.seconds:6.1f} s] {c.summary()}", flush=True)
        else:
            engines = f"{len(c.engines)} engine{'s' if len(c.engines) != 1 else ''}" if c.engines else "1 engine"
            model = f"model {''.join(ch if ch.isprintable() else '?' for ch in c.model)}, " if c.model else ""
            print(f"vLLM at {c.url} ({model}{engines}), totals since the server started:", flush=True)
            print(f"  {c.summary()}", flush=True)

    how = {"model": args.model, "allow_redirects": args.follow_redirects}
    try:
        if args.watch is None:
            show(read_vllm_metrics(args.url, args.timeout, **how))
        else:
            for interval in watch_vllm(args.url, args.watch, args.count, args.timeout, **how):
                show(interval)
    except (ValueError, TypeError, OSError) as e:  # OSError: ConnectionError (a closed stdout ends in main)
        if getattr(e, "on_stdout", False):
            raise
        print(f"specviz vllm-stats: error: {' '.join(str(e).split())}", file=sys.stderr, flush=True)
        return 1
    except ImportError as e:  # prometheus_client missing from an older or partial install
        print(f"specviz vllm-stats: error: {missing_extra(e)}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0
